"""What a caller can do with a batch: clone, select, concatenate, reset, positions, masks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import position

from gostop_env.core import GameBatch, IllegalActionError, Phase, ReferenceGame, Rules, random_legal_actions
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.position import Position


def play(batch: GameBatch, rng: np.random.Generator, steps: int) -> list[np.ndarray]:
    taken = []
    for _ in range(steps):
        actions = random_legal_actions(batch.legal_bits, rng)
        batch.step(actions)
        taken.append(actions)
    return taken


def test_clone_is_independent_and_replays_identically():
    rules = Rules.preset("korean", players=3)
    batch = GameBatch.from_seed(rules, 1, 32)
    play(batch, np.random.default_rng(2), 5)
    copy = batch.clone()
    actions = play(batch, np.random.default_rng(3), 10)
    for a in actions:
        copy.step(a)
    assert all(copy.snapshot(i) == batch.snapshot(i) for i in range(32))
    before = batch.snapshot(0)
    copy.step(random_legal_actions(copy.legal_bits, np.random.default_rng(4)))
    assert batch.snapshot(0) == before


def test_select_and_concatenate_keep_each_game():
    rules = Rules()
    batch = GameBatch.from_seed(rules, 5, 10)
    play(batch, np.random.default_rng(0), 4)
    evens, odds = batch.select(np.arange(0, 10, 2)), batch.select(np.arange(1, 10, 2))
    joined = GameBatch.concatenate([evens, odds])
    order = list(range(0, 10, 2)) + list(range(1, 10, 2))
    assert [joined.snapshot(k) for k in range(10)] == [batch.snapshot(i) for i in order]
    assert (joined.legal_action_mask() == batch.legal_action_mask()[order]).all()
    with pytest.raises(ValueError, match="different rules"):
        GameBatch.concatenate([evens, GameBatch.from_seed(Rules(players=3), 0, 2)])


def test_reset_games_deals_fresh_hands_in_place():
    rules = Rules(jokers=2)
    rng = np.random.default_rng(8)
    batch = GameBatch.from_seed(rules, rng, 6)
    play(batch, rng, 6)
    decks = shuffled_decks(rules, rng, 2)
    events = batch.reset_games([1, 4], decks, carry=[0, 2])
    for row, game in enumerate((1, 4)):
        ref = ReferenceGame(rules, decks[row], carry=[0, 2][row])
        assert batch.snapshot(game) == ref.snapshot()
        assert events.game(row).as_tuple() == ref.deal_events.as_tuple()
    with pytest.raises(ValueError, match="decks of shape"):
        batch.reset_games([0], decks)


def test_from_seeds_matches_the_reference_engine_per_seed():
    rules = Rules.preset("seed", players=3, jokers=1)
    batch = GameBatch.from_seeds(rules, [3, 4, 5])
    for i, seed in enumerate((3, 4, 5)):
        assert batch.snapshot(i) == ReferenceGame.from_seed(rules, seed).snapshot()


def test_mask_words_and_legal_lists_agree():
    batch = GameBatch.from_seed(Rules(), 0, 64)
    play(batch, np.random.default_rng(1), 7)
    mask = batch.legal_action_mask()
    assert mask.shape == (64, 125)
    assert all(list(np.flatnonzero(mask[i])) == batch.legal_actions(i) for i in range(64))


def test_random_legal_actions_are_legal_and_uniform():
    batch = GameBatch.from_seed(Rules(), 0, 1)
    rng = np.random.default_rng(0)
    words = np.repeat(batch.legal_bits, 20000, axis=0)
    picks = random_legal_actions(words, rng)
    legal = batch.legal_actions(0)
    counts = np.bincount(picks, minlength=125)
    assert set(np.flatnonzero(counts)) == set(legal)
    expected = 20000 / len(legal)
    assert np.all(np.abs(counts[legal] - expected) < 5 * np.sqrt(expected))


def test_wrong_number_of_actions_and_out_of_range_ids_are_rejected():
    batch = GameBatch.from_seed(Rules(), 0, 2)
    with pytest.raises(ValueError, match="expected 2 actions"):
        batch.step([0])
    with pytest.raises(IllegalActionError, match="illegal action 200 \\(no such action\\)"):
        batch.step([200, 200])


@pytest.mark.parametrize(
    "change,message",
    [
        (dict(stock=[]), "leaves out card"),
        (dict(layout=[0, 1, 2, 3]), "places card|four cards of one month"),
        (dict(seat=5), "seat must be"),
        (dict(revealed=[[9], []]), "revealed\\[0\\] lists cards not in that hand"),
    ],
)
def test_impossible_positions_are_rejected(change, message):
    rules = Rules()
    base = position(rules, {0: [0], 1: [20]}, layout=[4], stock=[8])
    values = {k: getattr(base, k) for k in ("hands", "layout", "stock", "piles")}
    with pytest.raises(ValueError, match=message):
        GameBatch.from_positions(rules, [Position(**(values | change))])


def test_position_with_an_empty_hand_starts_with_the_flip():
    rules = Rules()
    pos = position(rules, {0: [], 1: [20]}, layout=[4], stock=[5, 8])
    batch, ref = GameBatch.from_positions(rules, [pos]), ReferenceGame.from_position(rules, pos)
    assert batch.snapshot(0) == ref.snapshot()
    assert ref.seat == 1 and ref.piles[0] == {4, 5} and ref.phase == Phase.PLAY


def test_no_action_leaves_a_live_game_waiting():
    rules = Rules(players=3)
    batch = GameBatch.from_seed(rules, 4, 6)
    before = [batch.snapshot(i) for i in range(6)]
    actions = random_legal_actions(batch.legal_bits, np.random.default_rng(0))
    actions[[1, 4]] = -1
    events = batch.step(actions)
    assert batch.snapshot(1) == before[1] and batch.snapshot(4) == before[4]
    assert not events.counts[[1, 4]].any() and not events.captured[[1, 4]].any()
    assert all(batch.snapshot(i) != before[i] for i in (0, 2, 3, 5))
