""":class:`~agents.greedy.Greedy` compiled: its decisions, and whole hands played out, as
numba kernels on a compiled batch's state arrays.

Search and go/stop estimates spend nearly all their time in rollouts: hands played to
their end by ``greedy`` at every seat. Played through the Python policy, each step of a
rollout encodes observations, decodes them again and scores every legal card with NumPy
calls; here one kernel call takes each game from where it stands to its end, deciding for
every seat as :class:`Greedy` does (the same values, compared in the same order, so the
same action: ``tests/test_compiled_greedy.py`` holds the two equal decision by decision)
and stepping with the compiled backend's own ``step_game``.

A seat's greedy is compiled when it is exactly :class:`Greedy` with the always-stop or a
threshold go/stop rule; :func:`compiled_seats` says whether every seat of a lineup is.
:func:`agents.match.play_out` takes this path by itself for a compiled batch whose every
seat is compiled, and the plain policy loop otherwise. Greedy reads only what its seat
can see (its pile, the layout, the unseen cards, the public counters), as the policy does.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from gostop_env.core import actions as A
from gostop_env.core import cards as C
from gostop_env.core.batch import GameBatch
from gostop_env.core.compiled.kernels import (
    BOMB_HIGH_SHIFT,
    BOMB_SHIFT,
    CHOOSE_SHIFT,
    DONE,
    GO_STOP,
    PLAY,
    R_TARGET,
    SHAKE_SHIFT,
    U0,
    U1,
    WITHOUT_RUNTIME,
    CompiledGameBatch,
    EventArrays,
    U,
    at,
    bit,
    chunk,
    compile_loop,
    flat_events,
    inline,
    jit,
    lowest_bit,
    popcount,
    read_pile,
    step_game,
)
from gostop_env.core.events import BatchEvents
from gostop_env.policy import Policy

from .go_stop import AlwaysStop, Threshold
from .greedy_values import BOMB_BONUS, CARD_VALUE, EXPOSURE, MONTH_CARDS_BY_VALUE, PASS_VALUE, POINT_VALUE, STEAL_VALUE
from .greedy_values import MONTH_MASKS as MONTH_MASK

MONTH_BITS = np.array(C.MONTH_BITS, U)
VALUE_RANK = np.array(
    [MONTH_CARDS_BY_VALUE[c].index(c) if c < C.NUM_MONTH_CARDS else -1 for c in range(C.NUM_CARDS)], np.int64
)
"""Each card's place in its month's cards ordered least valuable first (Greedy's tie order)."""
MONTHS = U((1 << C.NUM_MONTHS) - 1)
SHAKES, CHOICES = MONTHS << SHAKE_SHIFT, U((1 << C.NUM_MONTH_CARDS) - 1)
NUM_MONTH_CARDS = C.NUM_MONTH_CARDS
CARDS = U((1 << C.NUM_CARDS) - 1)

# ---- one seat's greedy as a row of int64 parameters -------------------------------------------
(P_GOES, P_HAS_K, P_K, P_HAS_GOS, P_GOS, P_HAS_STOCK, P_STOCK, P_HAS_MARGIN, P_MARGIN) = range(9)
P_DUAL, P_OPPONENTS, P_BONUS_STEAL = range(9, 12)
PARAMETERS = 12


def seat_parameters(policy: Policy) -> np.ndarray | None:
    """``policy`` as a row of kernel parameters, or None when it is not a compiled greedy:
    a class that declares ``kernel_compiled`` itself (:class:`Greedy`, not its subclasses)
    with :class:`AlwaysStop` or :class:`Threshold`."""
    if not type(policy).__dict__.get("kernel_compiled") or type(policy.go_stop) not in (AlwaysStop, Threshold):
        return None
    row = np.zeros(PARAMETERS, np.int64)
    rule = policy.go_stop
    if isinstance(rule, Threshold):
        row[P_GOES] = 1
        limits = (rule.score_below, rule.max_gos, rule.min_stock, rule.opponent_margin)
        for at, limit in zip((P_HAS_K, P_HAS_GOS, P_HAS_STOCK, P_HAS_MARGIN), limits, strict=True):
            row[at], row[at + 1] = limit is not None, limit or 0
    row[P_DUAL] = policy.rules.september_dual
    row[P_OPPONENTS] = policy.rules.players - 1
    row[P_BONUS_STEAL] = policy.rules.bonus_steal
    return row


def compiled_seats(batch: GameBatch, seat_policies: Sequence[Policy]) -> np.ndarray | None:
    """``(players, PARAMETERS)`` kernel parameters when ``batch`` runs compiled and every seat
    plays a compiled greedy; None otherwise."""
    if not isinstance(batch, CompiledGameBatch):
        return None
    rows = [seat_parameters(policy) for policy in seat_policies]
    if any(row is None for row in rows):
        return None
    return np.stack(rows)  # type: ignore[arg-type]


# ---- Greedy's decision, for the seat to move in game i -------------------------------------------------
@jit
def index_of(board: Any) -> int:
    """The id of a bitboard's lowest card (an int64: numba's popcount gives unsigned)."""
    return np.int64(popcount(lowest_bit(board) - U1))


@jit
def board_value(board: Any) -> float:
    """Sum of the card values of a bitboard."""
    total = 0.0
    while board:
        total += CARD_VALUE[index_of(board)]
        board &= board - U1
    return total


@jit
def gain(pile: Any, taken: Any, base: int, dual: bool) -> float:
    """Score points added (each worth POINT_VALUE) plus the card worth of what is taken."""
    return POINT_VALUE * (read_pile(pile | taken, dual)[0] - base) + board_value(taken)


@jit
def taken_by_play(card: int, layout: Any) -> tuple[Any, int]:
    """(cards the played card takes now, how many of its month lie on the layout)."""
    same = layout & MONTH_MASK[card]
    count = popcount(same)
    if count == 0:
        return U0, 0
    taken = same
    if count != 3:  # the most valuable one (the last in the month's value order)
        best, rest = -1, same
        while rest:
            other = index_of(rest)
            if best < 0 or VALUE_RANK[other] > VALUE_RANK[best]:
                best = other
            rest &= rest - U1
        taken = bit(best)
    return taken | bit(card), count


@jit
def play_value(card: int, pile: Any, layout: Any, unseen: Any, base: int, row: Any) -> float:
    """Greedy's value of playing ``card`` (see ``Greedy._play_values``)."""
    if card >= NUM_MONTH_CARDS:  # a bonus card: to the pile at once, maybe a steal (§15)
        return gain(pile, bit(card), base, row[P_DUAL] != 0) + STEAL_VALUE * row[P_OPPONENTS] * row[P_BONUS_STEAL]
    taken, count = taken_by_play(card, layout)
    value = gain(pile, taken, base, row[P_DUAL] != 0)
    if count == 3:
        value += STEAL_VALUE * row[P_OPPONENTS]
    if count == 1:
        value -= popcount(unseen & MONTH_MASK[card]) / max(popcount(unseen), 1) * value
    if count == 0:
        value -= EXPOSURE * CARD_VALUE[card]
    return value


@inline
def unseen_by(s: Any, i: int, seat: int, deck: Any) -> Any:
    """The cards ``seat`` cannot see in game i (as the ``unseen`` section)."""
    seen = s.hands[at(s, i, seat)] | s.layout[i] | s.taken[i]
    for p in range(s.players):
        seen |= s.piles[at(s, i, p)] | (s.revealed[at(s, i, p)] & s.hands[at(s, i, p)])
    return deck & ~seen


@inline
def play(s: Any, i: int, seat: int, low: Any, high: Any, deck: Any, row: Any) -> int:
    """A play-phase decision: the first legal shake, else the best valued card, bomb or pass."""
    shakes = low & SHAKES
    if shakes:
        return index_of(shakes)  # a shake's action id is its bit in the low word
    pile, layout = s.piles[at(s, i, seat)], s.layout[i]
    unseen = unseen_by(s, i, seat, deck)
    base = read_pile(pile, row[P_DUAL] != 0)[0]
    best, best_value = -1, -np.inf
    cards = low & CARDS
    while cards:
        card = index_of(cards)
        value = play_value(card, pile, layout, unseen, base, row)
        if value > best_value:
            best, best_value = card, value
        cards &= cards - U1
    bombs = (low >> BOMB_SHIFT) | ((high << BOMB_HIGH_SHIFT) & MONTHS)  # months 0, 1 low; the rest high
    while bombs:
        month = index_of(bombs)
        value = gain(pile, MONTH_BITS[month], base, row[P_DUAL] != 0) + BOMB_BONUS
        if value > best_value:
            best, best_value = A.BOMB + month, value
        bombs &= bombs - U1
    if (high >> U(A.PASS - 64)) & U1 and best_value < PASS_VALUE:
        best = A.PASS
    return best


@jit
def choose(high: Any) -> int:
    """A choice between layout cards: the most valuable (the lowest id among equals)."""
    candidates = (high >> CHOOSE_SHIFT) & CHOICES
    best, best_value = -1, -np.inf
    while candidates:
        card = index_of(candidates)
        if CARD_VALUE[card] > best_value:
            best, best_value = card, CARD_VALUE[card]
        candidates &= candidates - U1
    return A.CHOOSE + best


@inline
def goes(s: Any, i: int, seat: int, row: Any, options: Any) -> bool:
    """The seat's go/stop rule: always stop, or go while each threshold holds."""
    if row[P_GOES] == 0:
        return False
    if row[P_HAS_K] and s.scores[at(s, i, seat)] >= row[P_K]:
        return False
    if row[P_HAS_GOS] and s.gos[at(s, i, seat)] >= row[P_GOS]:
        return False
    if row[P_HAS_STOCK] and s.stock_len[i] - s.stock_pos[i] < row[P_STOCK]:
        return False
    if row[P_HAS_MARGIN]:
        leader = 0  # an absent opponent's score reads 0 in the observation
        for p in range(s.players):
            if p != seat:
                leader = max(leader, int(s.scores[at(s, i, p)]))
        if leader >= options[R_TARGET] - row[P_MARGIN]:
            return False
    return True


@inline
def greedy_action(s: Any, legal: Any, i: int, params: Any, deck: Any, options: Any) -> int:
    """Greedy's action in game i, for the seat to move (``params[seat]``: its row)."""
    seat = int(s.seat[i])
    row, low, high = params[seat], legal[i, 0], legal[i, 1]
    if s.phase[i] == PLAY:
        return play(s, i, seat, low, high, deck, row)
    if s.phase[i] == GO_STOP:
        return A.GO if goes(s, i, seat, row, options) else A.STOP
    return choose(high)


# ---- whole hands ---------------------------------------------------------------------------------
@jit
def play_out_range(
    s: Any, ev: Any, t: Any, options: Any, legal: Any, params: Any, deck: Any, start: int, stop: int
) -> None:
    """Games [start, stop) played to their end, greedy deciding for every seat (game
    indices unsigned, as in the core's ``step_range``)."""
    for i in range(U(start), U(stop)):
        while s.phase[i] != DONE:
            step_game(s, ev, t, i, greedy_action(s, legal, i, params, deck, options), options, legal)


def _play_out_games(s: Any, ev: Any, t: Any, options: Any, legal: Any, params: Any, deck: Any, chunks: int) -> None:
    ev = flat_events(ev)
    for c in numba.prange(chunks):
        start, stop = chunk(c, chunks, legal.shape[0])
        play_out_range(s, ev, t, options, legal, params, deck, start, stop)


@functools.cache
def _play_out_loop(parallel: bool) -> Any:
    """The batch loop on one thread or on numba's threads."""
    return compile_loop(_play_out_games, parallel)


def play_out_greedy(batch: CompiledGameBatch, params: np.ndarray) -> None:
    """Play every game of ``batch`` to its end in place, seat s deciding as the greedy of
    ``params[s]`` (:func:`compiled_seats`); what each step did (its events) is not kept."""
    options, tables = batch.rule_arguments()
    legal = batch.legal_bits.copy()
    scratch = BatchEvents.empty(len(batch), batch.rules.players)  # what the steps write, dropped
    events = EventArrays(scratch.counts, scratch.captured, scratch.stolen, scratch.payments)
    deck = U((1 << batch.rules.deck_size) - 1)
    loop = _play_out_loop(batch.chunks() > 1)
    loop(batch.kernel_state(), events, tables, options, legal, np.ascontiguousarray(params), deck, batch.chunks())
    batch.played_in_place(legal)


def greedy_actions(batch: CompiledGameBatch, params: np.ndarray) -> np.ndarray:
    """The action the greedy of ``params[seat]`` takes in each game (-1 where it is over)."""
    actions = np.empty(len(batch), np.int64)
    _greedy_actions(
        batch.kernel_state(),
        batch.legal_bits,
        np.ascontiguousarray(params),
        U((1 << batch.rules.deck_size) - 1),
        batch.rule_arguments()[0],
        actions,
    )
    return actions


@numba.njit(cache=True, nogil=True, **WITHOUT_RUNTIME)
def _greedy_actions(s: Any, legal: Any, params: Any, deck: Any, options: Any, actions: Any) -> None:
    for i in range(actions.size):
        actions[i] = greedy_action(s, legal, i, params, deck, options) if s.phase[i] != DONE else A.NO_ACTION
