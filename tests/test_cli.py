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


def test_compare_with_three_players_seats_the_first_agent_against_two_of_the_second(capsys):
    assert main(["compare", "greedy", "random", "--players", "3", "--deals", "60"]) == 0
    out = capsys.readouterr().out
    assert "greedy against two random (3 players, seed rules), 180 hands" in out


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


def test_errors_name_the_command_without_the_usage_line(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "alpha", "random"])
    err = capsys.readouterr().err
    assert err.startswith("gostop compare: error: unknown agent 'alpha'") and "usage:" not in err


def test_an_agents_illegal_move_is_the_agents_fault(monkeypatch, capsys):
    from gostop.agents.greedy import Greedy

    monkeypatch.setattr(Greedy, "__call__", lambda self, obs, masks, rng: masks.argmin(axis=1))
    monkeypatch.setattr(Greedy, "batch_actions", lambda self, batch, games: None)  # no kernel: __call__ decides
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "greedy", "random", "--deals", "2"])
    assert exit_info.value.code == 1 and "a fault of that agent" in capsys.readouterr().err


def test_help_shows_every_default(capsys):
    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    out = capsys.readouterr().out
    for option in ("--players", "--preset", "--deals", "--seed", "--chunk", "--workers", "--out", "--replays"):
        line = next(line for line in out.splitlines() if line.strip().startswith(option))
        assert "default" in line or "default" in out[out.index(line) :].split("\n  --")[0], option
    assert "``" not in out


def test_tournament_prints_a_compact_leaderboard_unless_wide(tmp_path, capsys):
    args = ["tournament", "greedy", "random", "--deals", "20", "--out", str(tmp_path)]
    assert main(args) == 0
    compact = capsys.readouterr().out
    assert "| agent | chips/hand |" in compact and "CVaR" not in compact
    assert main([*args, "--wide"]) == 0
    assert "CVaR-5%" in capsys.readouterr().out and "CVaR-5%" in (tmp_path / "leaderboard.md").read_text()


def test_replay_prints_the_effective_rules(tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 300))
    assert main(["play", "--seed", "2", "--save", str(tmp_path / "hand.json")]) == 0
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "hand.json")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("rules: players 2, target 7,") and "None" not in first
