"""The shipped model ``model:ppo``: loadable by name, plays legal moves, beats greedy, playable."""

from __future__ import annotations

import io
import json

import pytest

pytest.importorskip("sb3_contrib")

from gostop.agents.learned import SHIPPED_MODELS, read_meta  # noqa: E402
from gostop.agents.metrics import agent_figures  # noqa: E402
from gostop.agents.tournament import TournamentConfig, run_tournament  # noqa: E402
from gostop.train.cli import main  # noqa: E402


def test_shipped_model_records_how_it_was_made():
    meta = read_meta(SHIPPED_MODELS / "ppo")
    assert meta["players"] == 2 and meta["decides"] == "all" and meta["encoding"] == "vector"
    assert meta["trained"]["command"] == "gostop train ship" and meta["trained"]["timesteps"] >= 1_000_000
    card = (SHIPPED_MODELS / "ppo" / "README.md").read_text()
    assert "gostop tournament model:ppo greedy --deals 20000" in card


def test_shipped_model_beats_greedy_on_a_few_hundred_deals():
    """The full check is 20,000 deals (README); 400 already put it clear of zero."""
    config = TournamentConfig(("model:ppo", "greedy"), deals=400, seed=11)
    figures = {f.agent: f for f in agent_figures(run_tournament(config))}
    assert figures["model:ppo"].chips_ci[0] > 0
    assert figures["model:ppo"].go_rate > 0.2  # it goes; greedy always stops


def test_play_against_the_shipped_model(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("go\n" + "1\n" * 300))
    assert main(["play", "--opponent", "model:ppo", "--seed", "3"]) == 0
    assert "Hand over" in capsys.readouterr().out


def test_a_shipped_model_refuses_rules_it_was_not_trained_for():
    from gostop.agents.learned import ModelError
    from gostop.agents.registry import make_agent
    from gostop_env.core import Rules

    make_agent("model:ppo", Rules.preset("seed", target=7))  # the same rules, spelled out
    with pytest.raises(ModelError, match="trained for 2 players, not 3"):
        make_agent("model:ppo", Rules.preset("seed", players=3))
    with pytest.raises(ModelError, match=r"'seed' preset; these rules differ: go_multiplier 'doubling_from_3'"):
        make_agent("model:ppo", Rules.preset("korean"))
    with pytest.raises(ModelError, match=r"jokers 1 \(trained: 0\)"):
        make_agent("model:ppo", Rules(jokers=1))


def test_unknown_shipped_model_lists_what_exists():
    from gostop.agents.registry import make_agent

    with pytest.raises(ValueError, match=r"shipped model: \['ppo'\]"):
        make_agent("model:nope")
    assert json.loads((SHIPPED_MODELS / "ppo" / "model.json").read_text())["format"] == "gostop-model/2"
