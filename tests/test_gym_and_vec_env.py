"""The Gymnasium single-agent env, the batched SB3 and Gymnasium vector envs, and MaskablePPO."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import gostop_env  # noqa: F401  (registers GoStop-v0)
from gostop_env.core import GameBatch, IllegalActionError, Rules
from gostop_env.encodings import encode
from gostop_env.gym_env import GoStopEnv
from gostop_env.gym_vector import GoStopVectorEnv
from gostop_env.policy import MASKS, PolicyActionError, RandomPolicy, observe
from gostop_env.vec_env import GoStopVecEnv


@pytest.mark.parametrize(
    "kwargs", [dict(), dict(players=3, preset="korean", learner_seat=1), dict(encoding="tokens", rules=dict(jokers=2))]
)
def test_gymnasium_check_env(kwargs):
    check_env(gymnasium.make("GoStop-v0", **kwargs).unwrapped, skip_render_check=False)


def test_gym_env_plays_whole_hands_with_zero_sum_payments():
    env = gymnasium.make("GoStop-v0", players=3, learner_seat="random")
    rng = np.random.default_rng(0)
    seats = set()
    for hand in range(60):
        observation, info = env.reset(seed=hand)
        seats.add(info["seat"])
        terminated = False
        while not terminated:
            action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            observation, reward, terminated, truncated, info = env.step(action)
        assert sum(info["payments"]) == 0 and reward == info["payments"][info["seat"]]
    assert seats == {0, 1, 2}


def test_gym_env_illegal_action_is_penalized_or_raises():
    env = gymnasium.make("GoStop-v0", learner_seat=0, illegal_reward=-2.0)
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert reward == -2.0 and terminated and info["illegal_action"] == illegal
    with pytest.raises(RuntimeError, match="finished hand"):
        env.step(0)
    strict = gymnasium.make("GoStop-v0", learner_seat=0, illegal_action="raise")
    strict.reset(seed=1)
    with pytest.raises(IllegalActionError):
        strict.step(illegal)


def test_vec_env_matches_the_core_for_its_seeds_and_actions():
    rules = Rules(players=2)
    env = GoStopVecEnv(8, learner_seat=0, seed=11, nagari_carry=False)
    observations = env.reset()
    core = GameBatch.from_seeds(rules, [11 + i for i in range(8)])  # game i deals from seed 11 + i
    assert not core.done.any()
    policy, rng = RandomPolicy(), np.random.default_rng(2)
    opponent_rng = np.random.default_rng([11, 8])
    # replay: the vec env's opponent (seat 1) draws from its own generator, in the same order
    for _ in range(40):
        if core.done.any():
            break
        assert (observations == encode(core, np.zeros(8, int))).all()
        masks = env.action_masks()
        assert (masks == core.legal_action_mask()).all()
        actions = policy(observations, masks, rng)
        core.step(actions)
        while (~core.done & (core.seat != 0)).any():
            waiting = np.flatnonzero(~core.done & (core.seat != 0))
            replies = np.full(8, -1)
            replies[waiting] = policy(None, core.legal_action_mask()[waiting], opponent_rng)
            core.step(replies)
        observations, rewards, dones, infos = env.step(actions)
        assert (rewards == np.where(core.done, core.payments[:, 0], 0)).all()


def test_vec_env_seeds_are_per_game_and_reproducible():
    first = GoStopVecEnv(4, seed=3, learner_seat=0).reset()
    assert (GoStopVecEnv(4, seed=3, learner_seat=0).reset() == first).all()
    shifted = GoStopVecEnv(2, seed=4, learner_seat=0).reset()  # its game 0 is game 1 of seed 3
    assert (shifted[0] == first[1]).all() and not (first[0] == first[1]).all()


@pytest.mark.parametrize("make", ["gym", "vec"])
def test_maskable_ppo_smoke_run(make):
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = gymnasium.make("GoStop-v0") if make == "gym" else GoStopVecEnv(16, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=256, n_epochs=1, seed=0)
    model.learn(2048)
    assert model.num_timesteps >= 2048


def test_masked_policy_never_takes_an_illegal_action():
    from sb3_contrib import MaskablePPO

    env = GoStopVecEnv(50, players=3, seed=5)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, seed=0)
    observations = env.reset()
    for _ in range(200):  # 10,000 masked learner steps
        masks = env.action_masks()
        actions, _ = model.predict(observations, action_masks=masks)
        assert masks[np.arange(50), actions].all()
        observations, *_ = env.step(actions)


def test_sb3_make_vec_env_works_and_unsupported_render_modes_warn_like_gymnasium():
    pytest.importorskip("stable_baselines3")
    import warnings

    import gymnasium
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 asks for rgb_array, which is supported
        vec = make_vec_env("GoStop-v0", n_envs=2, seed=0)
    assert vec.reset().shape == (2, 571)
    env = gymnasium.make("GoStop-v0", render_mode="rgb_array")
    env.reset(seed=1)
    assert env.render().shape == (640, 960, 3)
    with pytest.warns(UserWarning, match="depth_array"):
        unsupported = GoStopEnv(render_mode="depth_array")
    with pytest.warns(UserWarning, match="gives nothing"):
        assert unsupported.render() is None
    with pytest.raises(TypeError):
        GoStopEnv(render_mode=3)


def test_nothing_is_encoded_for_opponents_that_read_only_masks(monkeypatch):
    """RandomPolicy reads only the masks: it gets an (n, 0) array and no encoding runs for it."""
    batch = GameBatch.from_seed(Rules(), 0, 4)
    assert RandomPolicy.encoding == MASKS
    assert observe(RandomPolicy(), batch, np.array([1, 3]), np.array([0, 0])).shape == (2, 0)
    calls = []
    monkeypatch.setattr("gostop_env.policy.encode", lambda *a: calls.append(a))
    env = GoStopEnv(opponents=RandomPolicy(), learner_seat=1)
    env.reset(seed=3)  # seat 0, the random opponent, moves first
    assert calls == []


# ---- the Gymnasium vector env (make_vec) ----------------------------------------------------
def test_make_vec_steps_the_batched_core_with_a_valid_mask_at_every_step():
    env = gymnasium.make_vec("GoStop-v0", num_envs=6, players=3)
    assert isinstance(env, GoStopVectorEnv) and env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    observations, info = env.reset(seed=3)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(300):
        masks = info["action_mask"]
        assert masks.shape == (6, 125) and masks.any(axis=1).all()  # never all false, resets included
        assert env.observation_space.contains(observations)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
        observations, rewards, terminated, truncated, info = env.step(actions)
        assert not truncated.any() and (rewards[~terminated] == 0).all()
        for i in np.flatnonzero(terminated):
            payments, seat = info["final_info"]["payments"][i], info["final_info"]["seat"][i]
            assert payments.sum() == 0 and rewards[i] == payments[seat]
            assert info["final_obs"][i].shape == (571,) and info["_final_obs"][i]
        ended += terminated.sum()
    assert ended > 50


def test_vector_env_games_match_the_sb3_vector_env_and_seed_per_game():
    """Both vector envs run the same engine: the same seed deals the same hands, and game i
    of seed s is game 0 of seed s + i."""
    gym_env = GoStopVectorEnv(4, learner_seat=0)
    observations, _ = gym_env.reset(seed=3)
    assert (observations == GoStopVecEnv(4, seed=3, learner_seat=0).reset()).all()
    assert (GoStopVectorEnv(1, learner_seat=0).reset(seed=4)[0][0] == observations[1]).all()
    with pytest.raises(TypeError, match="one integer"):
        gym_env.reset(seed=[1, 2, 3, 4])
    with pytest.raises(PolicyActionError, match="the learner chose illegal action"):
        gym_env.step(np.flatnonzero(~gym_env.action_masks()[0])[:1].repeat(4))
    with pytest.warns(UserWarning, match="rgb_array"):
        GoStopVectorEnv(2, render_mode="rgb_array")
