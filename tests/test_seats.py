"""The one module that plays other seats: declared fast paths, checked answers, one-game loops."""

from __future__ import annotations

import numpy as np
import pytest

from gostop_env.core import GameBatch, Rules
from gostop_env.policy import PolicyActionError, RandomPolicy
from gostop_env.seats import controlled_actions, play_opponents, policy_actions


class Declared(RandomPolicy):
    """A policy that declares a fast path, counting its uses."""

    def __init__(self, answer=None):
        self.answer, self.used = answer, 0

    def batch_actions(self, batch, games):
        self.used += 1
        return None if self.answer is None else np.full(len(games), self.answer)


def test_a_declared_fast_path_is_taken_and_its_answer_checked():
    batch = GameBatch.from_seed(Rules(), 0, 8)
    masks = batch.legal_action_mask()
    games = np.arange(8)
    falls_back = Declared()
    actions = policy_actions(falls_back, batch, games, masks, np.random.default_rng(0), "fallback")
    assert falls_back.used == 1 and masks[games, actions].all()  # None: asked the usual way
    with pytest.raises(PolicyActionError, match="liar chose illegal action 124"):
        policy_actions(Declared(answer=124), batch, games, masks, np.random.default_rng(0), "liar")


def test_each_controller_decides_only_its_games():
    batch = GameBatch.from_seed(Rules(), 1, 6)
    masks, actions = batch.legal_action_mask(), np.full(6, -1, np.int64)
    first, second = Declared(), Declared()
    controller = np.array([0, 1, -1, 0, 1, -1])
    controlled_actions(batch, actions, controller, [first, second], masks, np.random.default_rng(0))
    assert (actions[[2, 5]] == -1).all() and (actions[[0, 1, 3, 4]] >= 0).all()
    assert first.used == second.used == 1


@pytest.mark.parametrize("players", [2, 3])
def test_opponents_play_until_my_seat_is_to_move(players):
    rules = Rules.preset("seed", players=players)
    for seed in range(5):
        batch = GameBatch.from_seed(rules, seed, 1)
        play_opponents(batch, players - 1, [RandomPolicy()] * (players - 1), np.random.default_rng(seed))
        assert batch.done[0] or int(batch.seat[0]) == players - 1
