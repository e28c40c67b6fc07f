"""Determinization: samples agree with the viewer's information and are uniform."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import check_invariants, hide_differently

from gostop_env.core import GameBatch, Rules, random_legal_actions
from gostop_env.core.cards import cards_of
from gostop_env.determinize import determinize, unseen_cards
from gostop_env.encodings import encode


def mid_game(rules, games, steps, seed):
    rng = np.random.default_rng(seed)
    batch = GameBatch.from_seed(rules, rng, games)
    for _ in range(steps):
        batch.step(random_legal_actions(batch.legal_bits, rng))
    return batch


@pytest.mark.parametrize("preset,players", [("seed", 2), ("korean", 3)])
def test_samples_never_contradict_the_view(preset, players):
    rules = Rules.preset(preset, players=players, jokers=1)
    for steps in (0, 5, 12):
        batch = mid_game(rules, 40, steps, steps)
        viewers = batch.seat.astype(np.int64)
        samples = determinize(batch, viewers, 6, np.random.default_rng(1))
        check_invariants(samples, rules)
        seen = np.repeat(encode(batch, viewers), 6, axis=0)
        assert (encode(samples, np.repeat(viewers, 6)) == seen).all()
        assert (samples.legal_action_mask() == np.repeat(batch.legal_action_mask(), 6, axis=0))[
            np.repeat(~batch.done, 6)
        ].all()
        assert (np.bitwise_count(samples.hands) == np.repeat(np.bitwise_count(batch.hands), 6, axis=0)).all()


def test_samples_depend_only_on_what_the_viewer_knows():
    batch = mid_game(Rules(players=3), 30, 6, 2)
    viewers = batch.seat.astype(np.int64)
    changed = hide_differently(batch, viewers, np.random.default_rng(5))
    a = determinize(batch, viewers, 4, np.random.default_rng(9))
    b = determinize(changed, viewers, 4, np.random.default_rng(9))
    assert (a.hands == b.hands).all()
    assert all(a.snapshot(i)["stock"] == b.snapshot(i)["stock"] for i in range(len(a)))


def test_hidden_cards_are_dealt_uniformly():
    batch = mid_game(Rules(), 1, 4, 3)
    viewer = int(batch.seat[0])
    unseen = cards_of(unseen_cards(batch, np.array([viewer]))[0])
    n = 6000
    samples = determinize(batch, [viewer], n, np.random.default_rng(4))
    opponent = 1 - viewer
    in_hand = np.array([[(int(h) >> c) & 1 for c in unseen] for h in samples.hands[:, opponent]])
    size = int(np.bitwise_count(batch.hands[0, opponent]))
    expected = n * size / len(unseen)
    assert np.all(np.abs(in_hand.sum(axis=0) - expected) < 5 * np.sqrt(expected))
    top = samples.stock[np.arange(n), samples.stock_pos]
    counts = np.array([(top == c).sum() for c in unseen])
    assert np.all(np.abs(counts - n / len(unseen)) < 5 * np.sqrt(n / len(unseen)))


def test_bad_arguments():
    batch = mid_game(Rules(), 2, 0, 0)
    with pytest.raises(ValueError, match="one viewer seat per game"):
        determinize(batch, [0], 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="samples must be >= 1"):
        determinize(batch, [0, 0], 0, np.random.default_rng(0))
