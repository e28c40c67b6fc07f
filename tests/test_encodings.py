"""Observation encodings: layout, content, and no hidden information (the leak test)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import hide_differently

from gostop_env.core import GameBatch, Rules, random_legal_actions
from gostop_env.core.cards import bits
from gostop_env.core.match import MatchView
from gostop_env.encodings import (
    CARD_LOCATIONS,
    ENCODINGS,
    encode,
    encoding_shape,
    encoding_size,
    encoding_table,
    section_slices,
)


def mid_game(rules: Rules, games: int, steps: int, seed: int) -> GameBatch:
    rng = np.random.default_rng(seed)
    batch = GameBatch.from_seed(rules, rng, games)
    for _ in range(steps):
        batch.step(random_legal_actions(batch.legal_bits, rng))
    return batch


@pytest.mark.parametrize("name", sorted(ENCODINGS))
@pytest.mark.parametrize("players", (2, 3))
def test_shapes_follow_the_sections(name, players):
    batch = mid_game(Rules(players=players), 8, 3, 0)
    obs = encode(batch, batch.seat, name)
    assert obs.shape == (8, *encoding_shape(name)) and obs.dtype == np.float32
    assert np.isfinite(obs).all() and obs.min() >= 0 and obs.max() <= 10
    if not name.startswith("tokens"):
        assert obs.shape[1] == encoding_size(name)
        assert f"| {encoding_size(name) - ENCODINGS[name][-1].size} |" in encoding_table(name)


@pytest.mark.parametrize("players", (2, 3))
def test_every_card_has_exactly_one_location(players):
    batch = mid_game(Rules(players=players, jokers=2), 64, 9, 1)
    for viewer in range(players):
        obs = encode(batch, np.full(64, viewer), "vector")
        locations = obs[:, : len(CARD_LOCATIONS) * 50].reshape(64, len(CARD_LOCATIONS), 50)
        assert (locations.sum(axis=1) == 1).all()


def test_own_hand_and_layout_are_where_the_core_says():
    batch = mid_game(Rules(), 16, 4, 2)
    obs = encode(batch, batch.seat, "vector")
    for i in range(16):
        seat = batch.seat[i]
        assert bits(np.flatnonzero(obs[i, :50])) == int(batch.hands[i, seat])
        assert bits(np.flatnonzero(obs[i, 50:100])) == int(batch.layout[i])


@pytest.mark.parametrize("preset,players", [("seed", 2), ("korean", 3), ("seed", 3), ("matgo", 2)])
def test_hidden_cards_never_change_vector_tokens_or_mask(preset, players):
    rules = Rules.preset(preset, players=players, jokers=1 if preset != "matgo" else 2)
    rng = np.random.default_rng(3)
    for steps in (0, 3, 8, 15):
        batch = mid_game(rules, 64, steps, steps)
        for viewer in [batch.seat.astype(np.int64)] + [np.full(64, s) for s in range(players)]:
            changed = hide_differently(batch, viewer, rng)
            for name in (n for n in ENCODINGS if not n.startswith("oracle")):
                assert (encode(batch, viewer, name) == encode(changed, viewer, name)).all()
            moving = viewer == batch.seat
            assert (batch.legal_action_mask()[moving] == changed.legal_action_mask()[moving]).all()
            oracle_same = (encode(batch, viewer, "oracle") == encode(changed, viewer, "oracle")).all(axis=1)
            assert not oracle_same[~batch.done].all()  # the oracle does see the hidden cards


@pytest.mark.parametrize("players", (2, 3))
def test_the_match_sections_say_where_the_match_stands(players):
    batch = mid_game(Rules(players=players), 3, 2, 0)
    standing = np.array([[30, -30, 0], [-250, 250, 0], [0, 0, 0]])[:, :players]
    match = MatchView(np.array([2, 7, 0]), np.array([5, 0, 0]), standing, np.zeros(3, np.int64), 100)
    at = section_slices("vector+match")
    viewer = np.array([1, 0, 0]) % players
    obs = encode(batch, viewer, "vector+match", match)
    assert obs[:, : encoding_size("vector")].tolist() == encode(batch, viewer, "vector").tolist()
    assert obs[:, at["match_hands_played"]].ravel().tolist() == [2 / 8, 7 / 8, 0]
    assert obs[:, at["match_hands_left"]].ravel().tolist() == [5 / 8, 0, 0]
    assert obs[0, at["match_chips_lost"]][0] == 1.5 and obs[0, at["match_chips_won"]][players - 1] == 1.5
    assert obs[1, at["match_chips_won"]][1] == 10  # 250 / 20, capped at the observation's bound
    assert (obs[:, at["match_bankroll"]] == 5).all()
    assert obs[0, at["match_leader"]].tolist()[(0 - 1) % players] == 1 and obs[1, at["match_leader"]][0] == 1
    lone = encode(batch, viewer, "vector+match")  # no match given: lone hands
    assert (lone[:, at["match_hands_played"].start : at["match_leader"].start] == 0).all()
    assert (lone[:, at["match_leader"]] == obs[:, at["match_leader"]]).all()


@pytest.mark.parametrize("players", (2, 3))
def test_the_matgo_sections_count_ppuks_and_turns(players):
    rules = Rules.preset("matgo") if players == 2 else Rules(players=3, jokers=2, bonus_steal=True)
    batch = mid_game(rules, 4, 3, 1)
    batch.ppuks[:] = np.array([2, 1, 0][:players])
    at, viewer = section_slices("vector+matgo"), np.full(4, players - 1)
    obs = encode(batch, viewer, "vector+matgo")
    assert obs[:, : encoding_size("vector")].tolist() == encode(batch, viewer, "vector").tolist()
    ppuks = obs[:, at["ppuks"]] * 3  # viewer, then the seats after it
    assert ppuks[:, 0].tolist() == [[2, 1, 0][players - 1]] * 4 and ppuks[:, 1].tolist() == [2] * 4
    turns = obs[:, at["turns_begun"]] * 10
    assert np.allclose(turns[:, :players], batch.turns[:, [(players - 1 + k) % players for k in range(players)]])
    assert (obs[:, at["first_turn"]][:, :players] == (turns[:, :players] <= 1.01)).all()
    assert (obs[:, at["first_turn"]][:, players:] == 0).all()


def test_bad_viewer_or_encoding_is_rejected():
    batch = mid_game(Rules(), 2, 0, 0)
    with pytest.raises(ValueError, match="unknown encoding 'pixels'"):
        encode(batch, [0, 0], "pixels")
    with pytest.raises(ValueError, match="viewer seats must be 0..1"):
        encode(batch, [0, 2])
    with pytest.raises(ValueError, match="one viewer seat per game"):
        encode(batch, [0])


def test_the_docs_encoding_tables_are_generated_from_the_code():
    from pathlib import Path

    from gostop_env.encodings import encodings_markdown

    page = (Path(__file__).parents[1] / "docs" / "environments.md").read_text()
    between = page.split("<!-- encodings:start -->")[1].split("<!-- encodings:end -->")[0]
    assert between.strip() == encodings_markdown().strip()


@pytest.mark.parametrize("preset,players,jokers", [("seed", 2, 0), ("korean", 3, 2), ("seed", 3, 1), ("matgo", 2, 2)])
def test_single_game_encoder_equals_the_batched_one(preset, players, jokers):
    from gostop_env.core import ReferenceGame
    from gostop_env.core.deck import shuffled_decks
    from gostop_env.encodings import encode_game

    rules = Rules.preset(preset, players=players, jokers=jokers)
    rng = np.random.default_rng(0)
    decks = shuffled_decks(rules, rng, 40)
    batch, games = GameBatch(rules, decks), [ReferenceGame(rules, d) for d in decks]
    standing = rng.integers(-300, 300, (40, players))
    match = MatchView(rng.integers(0, 9, 40), rng.integers(0, 9, 40), standing, np.zeros(40, np.int64), 50)
    while not batch.done.all():
        for name in ENCODINGS:
            for viewer in range(players):
                batched = encode(batch, np.full(40, viewer), name, match)
                assert all(
                    np.array_equal(batched[i], encode_game(g, viewer, name, match=match.select(np.array([i]))))
                    for i, g in enumerate(games)
                )
        actions = random_legal_actions(batch.legal_bits, rng)
        batch.step(actions)
        for i in np.flatnonzero(actions >= 0):
            games[i].step(int(actions[i]))


@pytest.mark.parametrize("name", ["vector", "tokens", "oracle"])
def test_single_game_observations_are_arrays_of_their_own(name):
    """Each ``encode_game`` call returns a fresh, writable float32 array of the encoding's
    shape: writing into one changes neither the game nor the next observation."""
    from gostop_env.core import ReferenceGame
    from gostop_env.encodings import encode_game

    game = ReferenceGame.from_seed(Rules(), 3)
    first = encode_game(game, 0, name)
    assert first.dtype == np.float32 and first.shape == encoding_shape(name) and first.flags.writeable
    expected = first.copy()
    first[...] = 7.0
    again = encode_game(game, 0, name)
    assert np.array_equal(again, expected) and not np.shares_memory(first, again)
