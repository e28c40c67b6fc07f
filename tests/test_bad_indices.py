"""Game indices and state arrays from outside are checked before any engine uses them.

The compiled kernels trust the indices and values they are given: an index past the batch
wrote outside its arrays (SIGSEGV, "free(): invalid next size"). Every public API that
takes game indices or state arrays refuses bad ones with a clear error and changes nothing.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gostop_env.core import GameBatch, Rules, random_legal_actions
from gostop_env.core.backends import available_backends
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.state import STATE_FIELDS

BACKENDS = available_backends()
RULES = Rules.preset("seed", players=2)
GAMES = 4
BAD_INDICES = [
    ([4], IndexError, "out of range"),
    ([99], IndexError, "out of range"),
    ([-1], IndexError, "out of range"),
    ([0, 0], ValueError, "more than once"),
    ([True, False], TypeError, "not booleans"),
    ([1.0], TypeError, "integers"),
    (np.array([2**63], np.uint64), IndexError, "out of range"),
]


def _batch(backend: str) -> GameBatch:
    batch = GameBatch.from_seed(RULES, 3, GAMES, backend=backend)
    rng = np.random.default_rng(0)
    for _ in range(3):
        batch.step(random_legal_actions(batch.legal_bits, rng))
    return batch


def _state(batch: GameBatch) -> dict[str, np.ndarray]:
    return {name: getattr(batch, name).copy() for name in STATE_FIELDS}


def _unchanged(batch: GameBatch, before: dict[str, np.ndarray]) -> None:
    for name, array in before.items():
        assert np.array_equal(getattr(batch, name), array), name


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index, error, message", BAD_INDICES)
def test_reset_games_refuses_bad_indices_and_changes_nothing(backend, index, error, message):
    batch = _batch(backend)
    before = _state(batch)
    decks = shuffled_decks(RULES, np.random.default_rng(1), len(index))
    with pytest.raises(error, match=message):
        batch.reset_games(index, decks)
    _unchanged(batch, before)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index, error, message", [i for i in BAD_INDICES if i[1] is IndexError or i[0] == [1.0]])
def test_select_refuses_bad_indices(backend, index, error, message):
    batch = _batch(backend)
    with pytest.raises(error, match=message):
        batch.select(index)


@pytest.mark.parametrize("backend", BACKENDS)
def test_select_takes_repeats_masks_and_slices(backend):
    batch = _batch(backend)
    assert len(batch.select([1, 1, 2])) == 3
    assert len(batch.select(np.array([True, False, True, False]))) == 2
    assert len(batch.select(slice(1, 3))) == 2
    with pytest.raises(ValueError, match="needs 4 entries"):
        batch.select(np.array([True, False]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("i, error", [(4, IndexError), (-1, IndexError), (True, TypeError), (1.0, TypeError)])
def test_single_game_apis_refuse_bad_indices(backend, i, error):
    batch = _batch(backend)
    events = batch.step(random_legal_actions(batch.legal_bits, np.random.default_rng(2)))
    for call in (batch.legal_actions, batch.snapshot, events.game):
        with pytest.raises(error):
            call(i)
    with pytest.raises(error if error is IndexError else TypeError):
        events.rows([i])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "deck_fault, message",
    [
        (lambda d: np.where(d == 7, 99, d), "outside 0..47"),
        (lambda d: np.where(d == 7, -1, d), "outside 0..47"),
        (lambda d: np.where(d == 7, 2**40, d), "outside 0..47"),  # would wrap as int8
        (lambda d: d.astype(float), "integers"),
    ],
)
def test_reset_games_refuses_decks_of_unknown_cards(backend, deck_fault, message):
    batch = _batch(backend)
    before = _state(batch)
    decks = deck_fault(shuffled_decks(RULES, np.random.default_rng(1), 2).astype(np.int64))
    with pytest.raises((ValueError, TypeError), match=message):
        batch.reset_games([0, 1], decks)
    _unchanged(batch, before)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "name, value, message",
    [
        ("seat", lambda b: np.full(GAMES, 7), "outside"),
        ("seat", lambda b: np.full(GAMES, 300), "outside"),  # would wrap to 44 as int8
        ("phase", lambda b: np.full(GAMES, 9), "outside"),
        ("stock", lambda b: np.where(b.stock == b.stock[0, 0], 120, b.stock), "outside"),
        ("stock_pos", lambda b: np.full(GAMES, 500), "outside"),
        ("hands", lambda b: b.hands | np.uint64(1 << 60), "no card"),
        ("h", lambda b: np.full(GAMES, 77), "outside"),
        ("shakes", lambda b: np.full((GAMES, 2), 200), "outside"),  # would wrap to -56 as int8
        ("stack_owner", lambda b: np.full((GAMES, 12), 5), "outside"),
        ("seat", lambda b: np.zeros(GAMES + 1, np.int64), "keep its shape"),
        ("hands", lambda b: np.zeros((GAMES, 3), np.uint64), "keep its shape"),
        ("seat", lambda b: np.zeros(GAMES, float), "integers"),
    ],
)
def test_state_setters_refuse_values_the_kernels_cannot_index_with(backend, name, value, message):
    batch = _batch(backend)
    before = _state(batch)
    with pytest.raises((ValueError, TypeError), match=message):
        setattr(batch, name, value(batch))
    _unchanged(batch, before)
    batch.step(random_legal_actions(batch.legal_bits, np.random.default_rng(0)))  # still playable


@pytest.mark.parametrize("backend", BACKENDS)
def test_replace_hidden_refuses_cards_that_do_not_exist(backend):
    batch = _batch(backend)
    before = _state(batch)
    stock = batch.stock.copy()
    stock[:, -1] = 100
    with pytest.raises(ValueError, match="outside"):
        batch.replace_hidden(batch.hands, stock)
    with pytest.raises(ValueError, match="no card"):
        batch.replace_hidden(batch.hands | np.uint64(1 << 55), batch.stock)
    _unchanged(batch, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_decks_with_repeated_cards_play_out_without_harm(backend):
    """reset_games checks card ids, not that a deck holds each card once (validate_deck does):
    a deck with repeats makes a nonsense hand, never a write outside the arrays."""
    rng = np.random.default_rng(5)
    batch = GameBatch.from_seed(RULES, 0, 64, backend=backend)
    decks = rng.integers(0, RULES.deck_size, size=(64, RULES.deck_size))
    batch.reset_games(np.arange(64), decks)
    for _ in range(200):
        if batch.done.all():
            break
        batch.step(random_legal_actions(batch.legal_bits, rng))
    batch.reset_games(np.arange(64), shuffled_decks(RULES, rng, 64))  # and deals good hands after
    assert not batch.done.all()


# ---- fuzzing the public batch API under the compiled backend ------------------------------------
INDEX = st.one_of(
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=True),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
)
CALLS = st.sampled_from(["reset_games", "select", "legal_actions", "snapshot", "step", "set_seat", "replace_hidden"])


@pytest.mark.parametrize("backend", BACKENDS)
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(CALLS, st.lists(INDEX, max_size=5)), min_size=1, max_size=8))
def test_random_calls_never_crash_and_leave_a_consistent_batch(backend, calls):
    batch = _batch(backend)
    rng = np.random.default_rng(0)
    for call, values in calls:
        with contextlib.suppress(ValueError, TypeError, IndexError, OverflowError):
            _call(batch, call, values, rng)
    batch.step(random_legal_actions(batch.legal_bits, rng))  # the batch still plays
    assert ((batch.seat >= 0) & (batch.seat < RULES.players)).all()


def _call(batch: GameBatch, call: str, values: list, rng: np.random.Generator) -> None:
    if call == "reset_games":
        batch.reset_games(values, shuffled_decks(RULES, rng, len(values)))
    elif call == "select":
        batch.select(values)
    elif call in ("legal_actions", "snapshot"):
        getattr(batch, call)(values[0] if values else None)
    elif call == "step":
        batch.step((values + [0] * GAMES)[:GAMES])
    elif call == "set_seat":
        batch.seat = np.array((values + [0] * GAMES)[:GAMES])
    else:
        stock = batch.stock.copy()
        stock[0, : len(values)] = np.array(values, dtype=object)[: stock.shape[1]] if values else stock[0, :0]
        batch.replace_hidden(batch.hands, stock)
