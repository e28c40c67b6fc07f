"""The PettingZoo AEC environment: PettingZoo's own checks, a fuzz, agreement with the core."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import BACKENDS, stacked_deck
from pettingzoo.test import api_test, render_test, seed_test

from gostop_env import gostop_v0
from gostop_env.core import Event, GameBatch, IllegalActionError, Rules
from gostop_env.encodings import encode

CONFIGS = [dict(players=p, preset=s) for s in ("seed", "korean") for p in (2, 3)] + [dict(players=2, preset="matgo")]


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_pettingzoo_api_seed_and_render_tests(kwargs):
    api_test(gostop_v0.env(**kwargs), num_cycles=200)
    seed_test(lambda: gostop_v0.env(**kwargs), num_cycles=100)
    render_test(lambda render_mode=None: gostop_v0.env(render_mode=render_mode, **kwargs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_engine_passes_the_api_and_seed_tests(backend):
    kwargs = dict(players=3, preset="korean", backend=backend)
    api_test(gostop_v0.env(**kwargs), num_cycles=100)
    seed_test(lambda: gostop_v0.env(**kwargs), num_cycles=50)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kwargs", [CONFIGS[1], CONFIGS[2]])
def test_every_engine_plays_the_reference_engines_hands(backend, kwargs):
    """From the same seeds, with the same actions, an env on a batched engine gives the
    reference engine's observations, masks, rewards and infos at every step, nagari carry
    and reset decks included."""
    envs = [
        gostop_v0.env(**kwargs, rules=dict(jokers=2)),
        gostop_v0.env(**kwargs, rules=dict(jokers=2), backend=backend),
    ]
    rng = np.random.default_rng(3)
    for hand in range(40):
        for env in envs:
            env.reset(seed=7 if hand == 0 else None, options={"carry": 1} if hand == 5 else None)
        for agent in envs[0].agent_iter(max_iter=400):
            turns = [env.last() for env in envs]
            assert agent == envs[1].agent_selection
            (obs, reward, terminated, truncated, info), other = turns
            assert (obs["observation"] == other[0]["observation"]).all()
            assert (obs["action_mask"] == other[0]["action_mask"]).all()
            assert reward == other[1] and terminated == other[2]
            assert info.keys() == other[4].keys()
            assert all(np.array_equal(info[key], other[4][key]) for key in info)
            legal = np.flatnonzero(obs["action_mask"])
            action = None if terminated or truncated else int(rng.choice(legal))
            for env in envs:
                env.step(action)
        assert not envs[1].agents
    assert envs[1].unwrapped.game.batch.backend == backend


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="backend must be one of"):
        gostop_v0.env(backend="jax")


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_fuzz_many_seeds_with_core_invariants(kwargs):
    env = gostop_v0.env(**kwargs, rules=dict(jokers=2))
    rng = np.random.default_rng(0)
    for hand in range(500):
        env.reset(seed=hand)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter(max_iter=400):
            observation, reward, terminated, truncated, info = env.last()
            totals[agent] += reward
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                assert legal.size and (info["action_mask"] == observation["action_mask"]).all()
                action = int(rng.choice(legal))
            env.step(action)
            check_game(env.unwrapped.game)
        assert not env.agents, "the hand did not end"
        assert sum(totals.values()) == 0


def check_game(game) -> None:
    """Every card in exactly one place; payments zero-sum."""
    places = [*game.hands, game.layout, game.taken, *game.piles, set(game.stock)]
    assert sum(len(p) for p in places) == game.rules.deck_size == len(set().union(*places))
    assert sum(game.payments) == 0


def test_env_agrees_with_the_core_step_by_step():
    rules = Rules.preset("korean", players=3)
    env = gostop_v0.env(players=3, preset="korean", nagari_carry=False)
    env.reset(seed=5)
    core = GameBatch.from_decks(rules, [env.unwrapped.deck])
    rng = np.random.default_rng(1)
    for agent in env.agent_iter(max_iter=300):
        observation, reward, terminated, truncated, info = env.last()
        seat = env.possible_agents.index(agent)
        assert (observation["observation"] == encode(core, [seat])[0]).all()
        if terminated:
            assert reward == core.payments[0, seat]
            env.step(None)
            continue
        assert seat == core.seat[0]
        assert (observation["action_mask"] == core.legal_action_mask()[0]).all()
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(action)
        core.step([action])


@pytest.mark.parametrize("action", ["unmasked", 125, -1, 10**6])  # a legal id not legal now, or out of range
def test_illegal_actions_raise_or_end_the_hand(action):
    env = gostop_v0.env()
    env.reset(seed=0)
    if action == "unmasked":
        action = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="legal actions:"):
        env.step(action)
    env = gostop_v0.env(illegal_action="penalize", illegal_reward=-3.0)
    env.reset(seed=0)
    offender = env.agent_selection
    env.step(action)
    assert env.rewards[offender] == -3.0 and all(env.terminations.values())


def test_reset_options_and_reward_scale():
    rules = Rules()
    deck = stacked_deck(rules, hands={0: [0]}, layout=[1])
    env = gostop_v0.env(reward_scale=0.5)
    env.reset(options={"deck": deck, "carry": 2})
    assert env.unwrapped.game.carry == 2 and 0 in env.unwrapped.game.hands[0]
    with pytest.raises(ValueError, match="chongtong"):
        env.reset(options={"deck": stacked_deck(rules, hands={1: [0, 1, 2, 3]})})


def test_chongtong_deals_are_reported_and_dealt_again():
    env = gostop_v0.env()
    found = False
    for seed in range(400):
        env.reset(seed=seed)
        info = env.infos["player_0"]
        if info["chongtong_hands"]:
            found = True
            paid = info["chongtong_payments"]
            assert paid.sum() == 0 and paid.max() == 5 * info["chongtong_hands"]
            assert not any(env.terminations.values())
    assert found


def test_registered_with_pettingzoo_and_gymnasium():
    import gymnasium
    import pettingzoo

    env = pettingzoo.make("aec", "gostop_v0", players=3)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert gymnasium.make("GoStop-v0").unwrapped.rules.players == 2


def test_render_ansi_shows_only_the_viewers_hand():
    env = gostop_v0.env(render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert "(you)" in text and "hand: 10 cards" in text and "layout:" in text


def _info_schema(info):
    return {k: (np.shape(v), np.asarray(v).dtype) for k, v in info.items()}


@pytest.mark.parametrize("players", [2, 3])
def test_info_has_one_schema_for_the_whole_hand(players):
    env = gostop_v0.env(players=players, illegal_action="penalize")
    rng = np.random.default_rng(5)
    for hand in range(30):
        env.reset(seed=hand)
        schema = _info_schema(env.infos["player_0"])
        assert schema["event_counts"][0] == (players, len(Event)) and schema["stolen"][0] == (players, players)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, info = env.last()
            assert _info_schema(info) == schema
            if terminated or truncated:
                final = info
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            illegal = hand == 29 and agent == "player_1"
            env.step(int(np.setdiff1d(np.arange(125), legal)[0]) if illegal else int(rng.choice(legal)))
        assert final["payments"].sum() == 0
        assert final["illegal_by"] == 1 if final["result"] == 0 else final["illegal_by"] == -1


def test_event_lines_describe_the_last_step():
    env = gostop_v0.env()
    env.reset(seed=1)
    lines = []
    while not any(env.terminations.values()):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        lines += env.event_lines()
    assert any("takes" in line for line in lines) and any("payments" in line or "nagari" in line for line in lines)


def test_tianshou_collects_episodes_when_installed():
    pytest.importorskip("tianshou", reason="Tianshou is not installed (an optional client)")
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make():
        return PettingZooEnv(gostop_v0.env(players=3))

    env = make()
    policy = MultiAgentPolicy(
        {a: MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space).policy for a in env.agents}
    )
    collector = Collector(policy, DummyVectorEnv([make, make]), VectorReplayBuffer(4000, 2))
    result = collector.collect(n_episode=8, reset_before_collect=True)
    assert result.n_collected_episodes >= 8


def test_env_makes_pettingzoos_order_checks_itself(caplog):
    """env() has no wrapper: the order wrapper's errors come from the env itself."""
    env = gostop_v0.env()
    assert env.unwrapped is env
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), env.render, env.agent_iter):
        with pytest.raises(AssertionError, match="reset"):
            call()
    with pytest.raises(AttributeError):
        env.agent_selection  # noqa: B018 (an attribute read is the check)
    env.reset(seed=3)
    iterator = iter(env.agent_iter())
    next(iterator)
    with pytest.raises(AssertionError, match="step"):
        next(iterator)  # a loop over agent_iter that never steps
    while env.agents:
        agent = env.agent_selection
        done = env.terminations[agent] or env.truncations[agent]
        env.step(None if done else int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    env.step(None)  # PettingZoo's logged warning, and nothing else
    assert "step() called after all agents are terminated" in caplog.text
