"""The shipped models (``model:ppo``, ``model:expert``, ``model:expert_ppo``, ``model:expert60k_ppo``,
``model:expert256_ppo``, ``model:expert3``, ``model:scratch``, the fine-tuned networks of the other
rule sets (``matgo`` included), and the go/stop network trained on matches): each loads by name,
records how it was made, refuses other rules, beats greedy, decides the same whatever the hidden
cards; ``model:ppo`` is playable."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from conftest import hide_differently  # noqa: E402

from gostop.agents.learned import SHIPPED_MODELS, read_meta  # noqa: E402
from gostop.agents.metrics import agent_figures  # noqa: E402
from gostop.agents.tournament import TournamentConfig, run_tournament  # noqa: E402
from gostop.train.cli import main  # noqa: E402
from gostop_env.core import GameBatch, Rules, random_legal_actions  # noqa: E402
from gostop_env.encodings import encode  # noqa: E402

SHIPPED = {  # name: (players, preset, the command that made it)
    "ppo": (2, "seed", "gostop train ship"),
    "expert": (2, "seed", "gostop train expert"),
    "expert_ppo": (2, "seed", "gostop train expert_ppo"),
    "expert60k_ppo": (2, "seed", "gostop train expert60k_ppo"),
    "expert256_ppo": (2, "seed", "gostop train expert256_ppo"),
    "expert3": (3, "korean", "gostop train expert3"),
    "scratch": (2, "seed", "gostop train scratch"),
    "expert3_ppo": (3, "korean", "gostop train expert3_ppo"),
    "seed3_ppo": (3, "seed", "gostop train seed3_ppo"),
    "korean2_ppo": (2, "korean", "gostop train korean2_ppo"),
    "matgo2_ppo": (2, "matgo", "gostop train matgo2_ppo"),
    "go_stop_match": (2, "seed", "gostop train go_stop_match"),
}
READS = {"go_stop_match": ("go_stop", "vector+match")}
"""What a shipped model decides and reads, where not every decision from the vector encoding."""
FINE_TUNED = {
    "expert3_ppo": "expert3",
    "seed3_ppo": "expert3",
    "korean2_ppo": "expert_ppo",
    "matgo2_ppo": "korean2_ppo",
}  # name: the model its training started from


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_records_how_it_was_made(name):
    players, preset, command = SHIPPED[name]
    meta = read_meta(SHIPPED_MODELS / name)
    reads = READS.get(name, ("all", "vector"))
    assert (meta["players"], meta["preset"], meta["decides"], meta["encoding"]) == (players, preset, *reads)
    assert meta["trained"]["command"] == command
    card = (SHIPPED_MODELS / name / "README.md").read_text()
    assert command in card and f"model:{name}" in card
    assert sorted(p.name for p in (SHIPPED_MODELS).iterdir()) == sorted(SHIPPED)


def test_ppo_was_fine_tuned_and_the_experts_cloned():
    assert read_meta(SHIPPED_MODELS / "ppo")["trained"]["timesteps"] >= 1_000_000
    for name in ("expert", "expert3"):
        config = read_meta(SHIPPED_MODELS / name)["trained"]["config"]
        assert config["ppo"]["timesteps"] == 0 and config["bc"]["teacher"] == "search"
    scratch = read_meta(SHIPPED_MODELS / "scratch")["trained"]  # no teacher: no cloning, no starting model
    assert scratch["config"]["bc"] is None and scratch["config"]["ppo"]["init"] is None
    assert scratch["config"]["trainer"] == "batched" and scratch["timesteps"] >= 50_000_000
    fine_tuned = read_meta(SHIPPED_MODELS / "expert_ppo")["trained"]
    assert fine_tuned["timesteps"] >= 5_000_000 and fine_tuned["config"]["ppo"]["init"] == "expert"
    cloned_then_tuned = read_meta(SHIPPED_MODELS / "expert60k_ppo")["trained"]  # one run: cloning, then PPO
    assert cloned_then_tuned["config"]["bc"]["teacher"] == "search" and cloned_then_tuned["config"]["bc"]["parts"] == 2
    assert cloned_then_tuned["timesteps"] >= 5_000_000 and cloned_then_tuned["config"]["ppo"]["init"] is None
    stronger_teacher = read_meta(SHIPPED_MODELS / "expert256_ppo")["trained"]  # the same, from search:n=256
    assert stronger_teacher["config"]["bc"]["teacher"] == "search:n=256" and stronger_teacher["timesteps"] >= 5_000_000
    assert stronger_teacher["config"]["ppo"]["init"] is None
    for name, start in FINE_TUNED.items():
        trained = read_meta(SHIPPED_MODELS / name)["trained"]
        assert trained["config"]["ppo"]["init"] == start and trained["config"]["trainer"] == "batched"
        assert trained["timesteps"] >= trained["config"]["ppo"]["timesteps"]


def test_model_best_names_a_shipped_network_of_its_own_rules():
    from gostop.agents.learned import BEST_MODELS

    for (players, preset), name in BEST_MODELS.items():
        assert name in SHIPPED and SHIPPED[name][:2] == (players, preset)


@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_model_decides_the_same_whatever_the_hidden_cards(name):
    from gostop.agents.registry import make_agent

    players, preset, _ = SHIPPED[name]
    rules = Rules.preset(preset, players=players)
    agent, batch, rng = make_agent(f"model:{name}", rules), GameBatch.from_seed(rules, 5, 48), np.random.default_rng(2)
    for _ in range(10):
        live, viewers = ~batch.done, batch.seat.astype(np.int64)
        changed = hide_differently(batch, viewers, rng)
        seen, hidden = encode(batch, viewers, agent.encoding), encode(changed, viewers, agent.encoding)
        before = agent(seen[live], batch.legal_action_mask()[live], np.random.default_rng(0))
        after = agent(hidden[live], changed.legal_action_mask()[live], np.random.default_rng(0))
        assert (before == after).all()
        batch.step(random_legal_actions(batch.legal_bits, rng))


@pytest.mark.parametrize(
    ("name", "deals"),
    [
        ("ppo", 400),
        ("expert", 400),
        ("expert_ppo", 400),
        ("expert60k_ppo", 400),
        ("expert256_ppo", 400),
        ("expert3", 200),
        ("scratch", 400),
        ("expert3_ppo", 200),
        ("seed3_ppo", 200),
        ("korean2_ppo", 400),
        ("matgo2_ppo", 400),
        ("go_stop_match", 400),
    ],
)
def test_shipped_model_beats_greedy_on_a_few_hundred_deals(name, deals):
    """The full checks are in the model cards (20,000 and 5,000 deals); a few hundred
    already put each clear of zero."""
    players, preset, _ = SHIPPED[name]
    field = ("greedy",) if players == 2 else ("greedy", "greedy:stop=threshold:stock=2:margin=3")
    config = TournamentConfig((f"model:{name}", *field), players=players, preset=preset, deals=deals, seed=11)
    figures = {f.agent: f for f in agent_figures(run_tournament(config))}
    assert figures[f"model:{name}"].chips_ci[0] > 0
    assert figures[f"model:{name}"].go_rate > 0.1  # it goes; greedy always stops


def test_play_against_the_shipped_model(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("go\n" + "1\n" * 300))
    assert main(["play", "--opponent", "model:ppo", "--seed", "3"]) == 0
    assert "Hand over" in capsys.readouterr().out


@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_model_refuses_rules_it_was_not_trained_for(name):
    from gostop.agents.learned import ModelError
    from gostop.agents.registry import make_agent
    from gostop_env.core import Rules

    players, preset, _ = SHIPPED[name]
    make_agent(f"model:{name}", Rules.preset(preset, players, target=7 if players == 2 else 3))  # spelled out
    other_players = 5 - players
    other_count = preset if preset != "matgo" else "korean"  # matgo is 2-player only
    with pytest.raises(ModelError, match=f"trained for {players} players, not {other_players}"):
        make_agent(f"model:{name}", Rules.preset(other_count, players=other_players))
    other_preset = "korean" if preset == "seed" else "seed"
    with pytest.raises(ModelError, match=rf"'{preset}' preset; these rules differ: (jokers 0 .*)?go_multiplier"):
        make_agent(f"model:{name}", Rules.preset(other_preset, players=players))
    trained_jokers = Rules.preset(preset, players).jokers
    with pytest.raises(ModelError, match=rf"jokers 1 \(trained: {trained_jokers}\)"):
        make_agent(f"model:{name}", Rules.preset(preset, players, jokers=1))


def test_unknown_shipped_model_lists_what_exists():
    from gostop.agents.registry import make_agent

    listed = ", ".join(repr(name) for name in sorted(SHIPPED))
    with pytest.raises(ValueError, match=re.escape(f"shipped model: [{listed}]")):
        make_agent("model:nope")
    assert json.loads((SHIPPED_MODELS / "ppo" / "model.json").read_text())["format"] == "gostop-model/2"
