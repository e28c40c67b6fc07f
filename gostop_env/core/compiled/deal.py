"""Dealing in the kernels: a game reset to its declared initial state, its cards dealt and
what the deal decides done (§3), over a range of games with cache prefetch in large
batches; and the Fisher-Yates shuffle of fresh decks from uniform draws.
"""

from __future__ import annotations

from typing import Any

from ..state import GAME, MONTH, SEAT, STOCK
from .arrays import INITIAL, event_row_lengths, generated_inline, move_event_row, per_field
from .intrinsics import _prefetch, bit
from .numba_kit import U0, U1, U2, U, inline, jit
from .rules import NUM_MONTHS, at, deal, legal_words


@inline
def fill_seats(s: Any, a: Any, i: int, value: int) -> None:
    """Game ``i``'s entries of a flat per-seat state array (2 or 3 seats) set to ``value``:
    stores, not a loop (LLVM turns a loop of stores into a call to ``memset``, which costs
    more than the stores)."""
    k = at(s, i, 0)
    a[k] = value
    a[k + U1] = value
    if s.players > 2:
        a[k + U2] = value


@inline
def fill_months(a: Any, i: int, value: int) -> None:
    """Game ``i``'s row of a per-month state array set to ``value`` (a loop of known length,
    unrolled)."""
    for month in range(NUM_MONTHS):
        a[i, month] = value


reset_game = generated_inline(
    "reset_game",
    "s, i",
    per_field(
        {
            SEAT: "fill_seats(s, s.{name}, i, INITIAL.{name})",
            GAME: "s.{name}[i] = INITIAL.{name}",
            MONTH: "fill_months(s.{name}, i, INITIAL.{name})",
        },
        skip=("stock",),  # a deal overwrites it
    ),
    {"fill_seats": fill_seats, "fill_months": fill_months, "INITIAL": INITIAL},
)
"""``reset_game(s, i)``: every state array of game ``i`` but the stock (which a deal
overwrites) back to its declared initial value (:data:`INITIAL`), one statement per array,
written from :data:`~gostop_env.core.state.STATE_FIELDS`: a loop over tuples of the arrays
and their initial rows cost 150 ns a game, this a third of it less."""

prefetch_deal = generated_inline(
    "prefetch_deal",
    "s, ev, legal, i",
    """    _prefetch(legal, i)
    counts, captured, stolen, payments = event_row_lengths(U(s.players))
    _prefetch(ev.counts, i * counts)
    _prefetch(ev.captured, i * captured)
    _prefetch(ev.stolen, i * stolen)
    _prefetch(ev.payments, i * payments)
    k = at(s, i, 0)
"""
    + per_field(
        {
            SEAT: "_prefetch(s.{name}, k)",
            GAME: "_prefetch(s.{name}, i)",
            MONTH: "_prefetch(s.{name}, i)",
            STOCK: "_prefetch(s.{name}, i)",
        }
    ),
    {"_prefetch": _prefetch, "event_row_lengths": event_row_lengths, "at": at, "U": U},
)
"""``prefetch_deal(s, ev, legal, i)``: ask for the cache lines of game ``i``'s rows in every
array its deal writes: each state array (written from
:data:`~gostop_env.core.state.STATE_FIELDS`), its legal words and its rows of the flat
scratch events ``ev``. The games a deal deals lie scattered over the batch, so in a large
batch each of those rows is a line out of cache, and asking ahead lets them arrive
together."""


@inline
def deal_game(s: Any, ev: Any, t: Any, d: Any, k: int, options: Any, legal: Any) -> None:
    """Deal ``d.decks[k]`` into game ``d.index[k]`` (``d``: :data:`DealArrays`): every field
    back to its declared initial value, the dealt cards, the stock, then what the deal
    decides, and the game's legal words."""
    # Unsigned indices (see step_range); a signed column index made LLVM gather the columns.
    i, deck = U(d.index[k]), d.decks[k]
    reset_game(s, i)
    s.carry[i] = d.carry[k]
    players, dealt, size = s.players, U(d.columns.size), U(deck.size)
    s.stock_len[i] = size - dealt
    for j in range(U(s.stock.shape[1])):
        s.stock[i, j] = deck[dealt + j] if dealt + j < size else -1
    for p in range(players + 1):
        board, end = U0, U(d.starts[p + 1]) if p < players else dealt
        for c in range(U(d.starts[p]), end):
            board |= bit(int(deck[U(d.columns[c])]))
        if p < players:
            s.hands[at(s, i, p)] = board
        else:
            s.layout[i] = board
    deal(s, ev, t, i, options)
    legal_words(s, i, legal)


PREFETCH_AHEAD = 4
"""How many dealt games ahead ``deal_range`` asks for a game's cache lines."""

PREFETCH_FROM = 16384
"""The fewest games in a batch for which ``deal_range`` asks for cache lines ahead: in a
smaller batch the dealt games' rows are mostly in cache already, and asking costs more than
it saves."""


@jit
def deal_range(s: Any, ev: Any, t: Any, d: Any, options: Any, legal: Any, dealt: Any, start: int, stop: int) -> None:
    """Deal games [start, stop) of ``d``, each game's events moved out of the scratch ``ev``
    into the dealt games' events ``dealt`` (both flat) at once, while they are still in
    cache. In a large batch, the rows of the game dealt ``PREFETCH_AHEAD`` games later are
    asked for before each deal (:func:`prefetch_deal`)."""
    far = s.phase.size >= PREFETCH_FROM
    for k in range(start, stop):
        if far and k + PREFETCH_AHEAD < stop:
            prefetch_deal(s, ev, legal, U(d.index[k + PREFETCH_AHEAD]))
        deal_game(s, ev, t, d, k, options, legal)
        move_event_row(s, ev, U(d.index[k]), dealt, U(k))


@jit
def shuffle_decks(draws: Any, decks: Any) -> None:
    """Fisher-Yates shuffles of ``0..d-1`` into the rows of ``decks`` from the uniform
    ``draws``, game by game: position i swaps with ``int(draws[g, i] * (i + 1))``, i from
    ``d - 1`` down, as :func:`~gostop_env.core.deck.fisher_yates` does with NumPy."""
    count, size = draws.shape
    for g in range(count):
        for i in range(size):
            decks[g, i] = i
        for i in range(size - 1, 0, -1):
            j = int(draws[g, i] * (i + 1))
            decks[g, i], decks[g, j] = decks[g, j], decks[g, i]
