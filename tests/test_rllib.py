"""Scale-out training on RLlib: the renamed env and a few-iteration local self-play run.

CI installs the ``rllib`` extra, so these run there; without it they are skipped.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from gostop.train.rllib import RLlibKeys, make_env, train_rllib  # noqa: E402
from gostop_env.pettingzoo_env import raw_env  # noqa: E402


def test_renamed_env_keeps_observation_and_mask():
    plain, renamed = raw_env(), RLlibKeys(raw_env())
    plain.reset(seed=4)
    renamed.reset(seed=4)
    agent = plain.agent_selection
    before, after = plain.observe(agent), renamed.observe(agent)
    assert np.array_equal(before["observation"], after["observations"])
    assert after["action_mask"].dtype == np.float32 and np.array_equal(before["action_mask"], after["action_mask"])
    assert renamed.observation_space(agent).contains(after)


def test_multi_agent_env_asks_only_the_mover_and_pays_everyone_at_the_end():
    env = make_env({"players": 2, "reward_scale": 1.0})
    obs, _ = env.reset(seed=2)
    rng, totals = np.random.default_rng(0), {}
    while True:
        ((agent, seen),) = obs.items()
        obs, rewards, terminated, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(seen["action_mask"])))})
        for a, r in rewards.items():
            totals[a] = totals.get(a, 0.0) + r
        if terminated["__all__"]:
            break
    assert len(totals) == 2 and sum(totals.values()) == 0


def test_few_iteration_self_play_run(tmp_path):
    logs = []
    out = train_rllib(
        tmp_path / "rllib",
        2,
        log=logs.append,
        eval_deals=30,
        train_batch_size=400,
        minibatch_size=100,
        epochs=1,
        hidden=(32, 32),
    )
    lines = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert [line["iteration"] for line in lines] == [1, 2] and lines[-1]["env_steps"] >= 800
    for line in lines:  # measured against greedy after every iteration
        assert line["ci_low"] <= line["chips_vs_greedy"] <= line["ci_high"]
    assert all("chips_vs_greedy" in text for text in logs)
    assert (out / "checkpoint").is_dir() and any((out / "checkpoint").iterdir())


def test_rllib_policy_plays_only_legal_moves_in_the_toolkits_matches():
    from gostop.agents.compare import compare
    from gostop.agents.greedy import Greedy
    from gostop.train.rllib import RLlibPolicy, ppo_config

    module = ppo_config(hidden=(16,)).get_multi_rl_module_spec(env=make_env({})).build()["shared"]
    result = compare(RLlibPolicy(module), Greedy(), 20, seed=1)  # an illegal move would raise
    assert result.deals == 20 and result.ci95[0] <= result.chips_per_hand <= result.ci95[1]
