"""Matches as episodes in every environment: options, rewards, the match sections, the
ecosystems' own checks, and engines held equal."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from gostop_env import pettingzoo_env
from gostop_env.encodings import encoding_shape, section_slices
from gostop_env.gym_env import GoStopEnv
from gostop_env.match_episodes import match_rewards
from gostop_env.vec_env import GoStopVecEnv

MAKERS = {
    "aec": lambda **kw: pettingzoo_env.env(**kw),
    "gym": lambda **kw: GoStopEnv(**kw),
    "vec": lambda **kw: GoStopVecEnv(4, **kw),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
@pytest.mark.parametrize(
    "options,error,message",
    [
        (dict(match_hands=0), ValueError, "hands must be 1"),
        (dict(match_hands=-3), ValueError, "hands must be 1"),
        (dict(match_hands=2.5), TypeError, "whole number"),
        (dict(match_hands="8"), TypeError, "whole number"),
        (dict(match_hands=True), TypeError, "whole number"),
        (dict(match_hands=8, match_bankroll=0), ValueError, "bankroll must be 1"),
        (dict(match_hands=8, match_bankroll=1.5), TypeError, "whole number"),
        (dict(match_hands=8, match_bankroll=2), ValueError, "cannot cover one hand's smallest payment"),
        (dict(match_bankroll=50), ValueError, "match_bankroll needs match_hands"),
        (dict(reward="match_win"), ValueError, "paid when a match ends"),
        (dict(match_hands=4, reward="elo"), ValueError, "reward must be one of"),
    ],
)
def test_bad_match_options_are_clear_errors(make, options, error, message):
    with pytest.raises(error, match=message):
        make(**options)


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_the_default_is_still_one_hand_without_the_match_sections(make):
    env = make()
    space = (
        env.observation_space("player_0")["observation"] if hasattr(env, "possible_agents") else env.observation_space
    )
    assert space.shape[-1] == encoding_shape("vector")[0]
    assert make(match_hands=8).encoding == "vector+match"


def test_match_win_is_zero_sum_with_a_win_worth_one():
    standing = np.array([[5, -5, 0], [3, 3, -6], [0, 0, 0]])
    rewards = match_rewards(standing, "match_win")
    assert np.allclose(rewards, [[1, -0.5, -0.5], [0.25, 0.25, -0.5], [0, 0, 0]])
    assert np.allclose(match_rewards(np.array([[7, -7], [0, 0]]), "match_win"), [[1, -1], [0, 0]])


@pytest.mark.parametrize(
    "options", [dict(match_hands=3), dict(match_hands=3, players=3, reward="match_win", backend="numpy")]
)
def test_the_aec_match_passes_pettingzoos_tests(options):
    api_test(pettingzoo_env.env(**options), num_cycles=300)
    seed_test(lambda: pettingzoo_env.env(**options), num_cycles=150)


def test_the_gymnasium_match_passes_the_env_checker():
    check_env(GoStopEnv(match_hands=3, reward="match_win"), skip_render_check=True)
    check_env(gymnasium.make("GoStop-v0", match_hands=2).unwrapped, skip_render_check=True)


def play_aec_matches(matches: int, **options) -> list[tuple[dict[str, float], dict, list[tuple]]]:
    """Random play of ``matches`` AEC matches: per match, each agent's summed reward, the
    last info, and for each hand its first mover: (agent, its info, its observation)."""
    env = pettingzoo_env.env(**options)
    rng, out = np.random.default_rng(0), []
    for m in range(matches):
        env.reset(seed=m)
        total, last, firsts, played = dict.fromkeys(env.possible_agents, 0.0), None, [], -1
        for agent in env.agent_iter():
            observation, reward, terminated, _, info = env.last()
            total[agent] += reward
            if terminated:
                last = info
                env.step(None)
                continue
            if info["match_hands"] != played:
                played = info["match_hands"]
                firsts.append((agent, dict(info), observation["observation"]))
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        out.append((total, last, firsts))
    return out


@pytest.mark.parametrize("players", (2, 3))
def test_aec_rewards_add_up_to_the_match_and_the_winner_leads(players):
    at, leads = section_slices("vector+match"), 0
    for total, last, firsts in play_aec_matches(20, match_hands=4, players=players):
        assert last["match_hands"] == 4 and last["match_standing"].sum() == 0
        assert list(total.values()) == last["match_standing"].tolist()  # chips, hand by hand
        for (before, _, _), (agent, info, _) in zip(firsts, firsts[1:]):
            paid = info["payments"]  # the hand that just ended, by player
            leader = f"player_{int(paid.argmax())}" if paid.max() > 0 else before
            assert agent == leader and info["seat"] == 0
            leads += paid.max() > 0
        for agent, info, observation in firsts:
            played, mine = info["match_hands"], info["match_standing"][int(agent[-1])]
            assert observation[at["match_hands_played"]][0] == played / 8
            assert observation[at["match_hands_left"]][0] == (3 - played) / 8
            assert observation[at["match_chips_won"]][0] == np.float32(min(max(mine, 0) / 20, 10))
            assert observation[at["match_chips_lost"]][0] == np.float32(min(max(-mine, 0) / 20, 10))
    assert leads > 20


@pytest.mark.parametrize("players", (2, 3))
def test_aec_match_rewards_are_paid_at_the_end(players):
    for total, last, _ in play_aec_matches(10, match_hands=3, players=players, reward="match_win"):
        expected = match_rewards(last["match_standing"][None], "match_win")[0]
        assert np.allclose(list(total.values()), expected) and abs(sum(total.values())) < 1e-9


def test_aec_match_is_the_same_on_every_engine():
    reference = play_aec_matches(6, match_hands=3, backend="reference")
    numpy = play_aec_matches(6, match_hands=3, backend="numpy")
    for (total_a, last_a, firsts_a), (total_b, last_b, firsts_b) in zip(reference, numpy):
        assert total_a == total_b and (last_a["match_standing"] == last_b["match_standing"]).all()
        assert all(np.array_equal(a[2], b[2]) for a, b in zip(firsts_a, firsts_b))


def test_a_bankroll_ends_the_match_when_a_player_is_broke():
    ended_early = 0
    for _, last, _ in play_aec_matches(20, match_hands=30, match_bankroll=10):
        standing = last["match_standing"]
        assert last["match_hands"] == 30 or (standing + 10 <= 0).any()
        ended_early += last["match_hands"] < 30
    assert ended_early > 0


@pytest.mark.parametrize("reward", ["chips", "match_chips"])
def test_gym_match_rewards_add_up_to_the_learners_chips(reward):
    env = GoStopEnv(match_hands=4, reward=reward, players=3, opponents=None)
    rng, moved = np.random.default_rng(2), 0
    for episode in range(15):
        _, info = env.reset(seed=episode)
        total, done, seats = sum(info["skipped_hands"]), False, {info["seat"]}
        while not done:
            _, reward_now, done, _, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
            total += reward_now
            seats.add(info["seat"])
            assert reward == "chips" or done or reward_now == 0
        assert info["match_hands"] == 4 and total == info["match_standing"][info["player"]]
        moved += len(seats) > 1
    assert moved > 0  # the learner's seat follows the lead


@pytest.mark.parametrize("reward", ["chips", "match_win"])
def test_vector_env_match_rewards(reward):
    env = GoStopVecEnv(32, seed=5, match_hands=3, reward=reward, learner_seat=1)
    observations = env.reset()
    assert observations.shape == (32, *encoding_shape("vector+match"))
    rng = np.random.default_rng(3)
    totals, ended = np.zeros(32), 0
    for _ in range(400):
        masks = env.action_masks()
        observations, rewards, done, infos = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        totals += rewards
        for i in np.flatnonzero(done):
            info, ended = infos[i], ended + 1
            standing = np.array(info["match_standing"])
            assert info["player"] == 1 and info["match_hands"] == 3
            expected = standing[1] if reward == "chips" else match_rewards(standing[None], reward)[0, 1]
            assert totals[i] + sum(info.get("skipped_hands", [])) == pytest.approx(expected)
            totals[i] = 0
        if reward != "chips":
            assert (rewards[~done] == 0).all()
    assert ended > 50


def test_aec_event_lines_name_the_players_in_a_match():
    env = pettingzoo_env.env(match_hands=3)
    env.reset(seed=1)
    rng, lines = np.random.default_rng(0), []
    for _ in env.agent_iter():
        observation, _, terminated, _, info = env.last()
        if terminated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        paid = [line for line in env.unwrapped.event_lines() if line.startswith("payments")]
        if paid:
            payments = env.infos[env.possible_agents[0]]["payments"] if env.agents else None
            lines.append((paid[0], payments))
    assert len(lines) == 3
    for line, payments in lines:
        if payments is not None:
            assert (
                f"player_0 (seat {'0' if line.index('player_0') < line.index('player_1') else '1'}) {payments[0]:+d}"
                in line
            )


def test_the_gymnasium_vector_env_reports_each_match_that_ends():
    env = gymnasium.make_vec("GoStop-v0", num_envs=16, match_hands=2, reward="match_chips")
    _, info = env.reset(seed=4)
    rng, totals, ended = np.random.default_rng(4), np.zeros(16), 0
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in info["action_mask"]])
        _, rewards, terminated, _, info = env.step(actions)
        totals += rewards
        for i in np.flatnonzero(terminated):
            final = info["final_info"]
            assert final["_match_standing"][i] and final["match_hands"][i] == 2
            assert totals[i] == final["match_standing"][i][final["player"][i]]
            totals[i], ended = 0, ended + 1
    assert ended > 10
