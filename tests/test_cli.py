"""The gostop command line."""

from __future__ import annotations

import pytest

from gostop.train.cli import main


def test_simulate_prints_a_summary(capsys):
    assert main(["simulate", "--hands", "300", "--batch", "128", "--players", "3", "--preset", "korean"]) == 0
    out = capsys.readouterr().out
    assert "300 random hands, 3 players" in out and "| stop |" in out and "decisions/s" in out


def test_deal_prints_a_hand_move_by_move(capsys):
    assert main(["deal", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seat 0 hand:" in out and "result:" in out


def test_compare_two_agents(capsys):
    assert main(["compare", "greedy", "random", "--deals", "200"]) == 0
    assert "greedy: 200 duplicate deals:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [["simulate", "--players", "4"], ["compare", "alpha", "random"], ["simulate", "--hands", "0"], ["frobnicate"]],
)
def test_bad_input_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and "error" in capsys.readouterr().err
