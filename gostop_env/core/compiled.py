"""The compiled backend: :class:`GameBatch`'s turn logic as numba kernels, one game at a time.

The state arrays are those of :class:`~gostop_env.core.batch.GameBatch`, declared there once;
this module only replaces how a step walks through them. Where the NumPy core runs each
stage of a turn on the index array of the games in it, a kernel here takes one game at a
time through its whole turn (the same stages, in the same order) as scalar code, and loops
over the batch, on one thread or spread over numba's threads (``numba-parallel``). Each game
touches only its own rows, so neither the order of games nor the thread that runs one can
change a result: the three engines (reference, NumPy, compiled) are held equal on every
field, mask, event and payment by ``tests/test_differential.py``.

A kernel sees each per-seat array (state and events) flat, as a view: game ``i``'s entry for
seat ``p`` is at ``i * players + p`` (:func:`at`), one product shared by every such array,
where a two-axis array would be indexed by its own second axis length (loaded, multiplied
and checked for a negative index at each access).

Kernels compile on first use and are cached on disk (``cache=True``), so a later program
loads them in well under a second. Importing this module needs numba (``pip install
"gostop[fast]"``); :func:`gostop_env.core.batch.available_backends` says whether it is there.
Steps, deals, legal actions and the random action picker are compiled; constructing from
positions, ``select``, ``concatenate`` and the masks are the NumPy core's.
"""

from __future__ import annotations

import functools
import platform
import types
from collections import namedtuple
from typing import Any

import numba
import numba.core.cgutils
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir as llvm_ir

from . import actions as A
from . import bitboard, pcg64
from . import cards as C
from .actions import Phase
from .batch import SEAT, STATE_FIELDS, GameBatch, _dealt_columns, _match_tables, fit_array, register_backend
from .bitboard import NIBBLE_LOW
from .events import BatchEvents, Event
from .numba_kit import U0, U1, WITHOUT_RUNTIME, U, inline, intrinsic, jit
from .outcomes import Outcome, Result
from .rules import Rules
from .scoring import BIT32, BRIGHT_POINTS, GODORI_POINTS, RIBBON_SET_POINTS, THRESHOLDS

KERNEL_FIELDS: tuple[str, ...] = tuple(name for name in STATE_FIELDS if not name.startswith("_"))
Arrays = namedtuple("Arrays", KERNEL_FIELDS)  # type: ignore[misc]
"""The public state arrays of a batch, by name."""
KernelState = namedtuple("KernelState", (*KERNEL_FIELDS, "players"))  # type: ignore[misc]
"""The state as a kernel takes it, one argument: the state arrays, the per-seat ones flat
(views; game ``i``'s entry for seat ``p`` at ``at(s, i, p)``), and the number of players."""
EventArrays = namedtuple("EventArrays", ["counts", "captured", "stolen", "payments"])
DealArrays = namedtuple("DealArrays", ["index", "decks", "carry", "columns", "starts"])
"""The games a deal deals, ``index``, their ``decks`` and ``carry``; ``columns``, the deck
positions of seat 0's cards, seat 1's, ..., the layout's, each group from ``starts``."""
INITIAL: Any = Arrays(*(int(STATE_FIELDS[name].initial) for name in KERNEL_FIELDS))
"""Each state array's declared initial value (:data:`STATE_FIELDS`), by name: constants in
the kernels."""
MatchTables = namedtuple("MatchTables", ["pick", "place", "keep", "candidates", "choose", "did", "partner", "stack"])

# ---- rule options as one int64 array; its entries by name ---------------------------------
(
    R_TARGET,
    R_GO_ONCE_OVER_3,
    R_GO_BAK,
    R_BOMB_BONUS,
    R_JA_PPUK_PREVIOUS,
    R_PI_BAK_THRESHOLD,
    R_PI_BAK_ZERO_EXEMPT,
    R_NAGARI_COMPOUNDING,
    R_SEPTEMBER_DUAL,
    R_SWEEP_ON_LAST_TURN,
    R_LAST_CARD_EXCEPTIONS,
    R_STEAL_LOWEST,
) = range(12)


@functools.cache
def rule_options(rules: Rules) -> np.ndarray:
    """``rules`` as the int64 array the kernels read (entries ``R_*``)."""
    return np.array(
        [
            rules.target_score,
            rules.go_multiplier == "once_over_3",
            rules.go_bak,
            rules.bomb_bonus,
            rules.ja_ppuk == "previous_turn",
            rules.pi_bak_threshold,
            rules.pi_bak_zero_exempt,
            rules.nagari_compounding,
            rules.september_dual,
            rules.sweep_on_last_turn,
            rules.last_card_exceptions,
            rules.steal_choice == "lowest",
        ],
        np.int64,
    )


# ---- constants, typed for numba (uint64 mixed with int64 would become float64) -------------
U2, U15, U63 = U(2), U(15), U(63)
JOKER_BITS, BRIGHTS, ANIMALS, RIBBONS = U(C.JOKER_BITS), U(C.BRIGHTS), U(C.ANIMALS), U(C.RIBBONS)
PLAIN_JUNK, VALUE2_JUNK, VALUE3_JUNK = U(C.PLAIN_JUNK), U(C.VALUE2_JUNK), U(C.VALUE3_JUNK)
RAIN_SHIFT = U(C.RAIN_BRIGHT)
GODORI = U(C.bits(C.GODORI_BIRDS))
RED_POEM, BLUE, PLAIN_RED = (U(C.bits(g)) for g in C.RIBBON_GROUPS.values())
ANIMAL_MIN, RIBBON_MIN, JUNK_MIN = THRESHOLDS["animals"], THRESHOLDS["ribbons"], THRESHOLDS["junk"]
BRIGHT_POINT_TABLE = BRIGHT_POINTS.astype(np.int64)
NUM_MONTH_CARDS, NUM_MONTHS = C.NUM_MONTH_CARDS, C.NUM_MONTHS
NUM_EVENTS = U(len(Event))
CHOOSE_SHIFT, SHAKE_SHIFT, BOMB_SHIFT, BOMB_HIGH_SHIFT = U(A.CHOOSE - 64), U(A.SHAKE), U(A.BOMB), U(64 - A.BOMB)
GO_STOP_WORD = U((1 << (A.GO - 64)) | (1 << (A.STOP - 64)))
PASS_WORD = U(1 << (A.PASS - 64))
PLAY, CHOOSE_HAND, CHOOSE_FLIP, GO_STOP, DONE = (int(p) for p in Phase)
PLACED, PAIRED, CHOSE, BOMBED = (int(o) for o in (Outcome.PLACED, Outcome.PAIRED, Outcome.CHOSE, Outcome.BOMBED))
STOPPED, NAGARI, CHONGTONG = int(Result.STOP), int(Result.NAGARI), int(Result.CHONGTONG)
E_PPUK, E_JA_PPUK, E_JJOK, E_TTADAK, E_SWEEP, E_STACK_CAPTURE = (int(e) for e in list(Event)[:6])
E_BOMB, E_SHAKE, E_JOKER, E_GO, E_STOP, E_CHONGTONG, E_NAGARI = (int(e) for e in list(Event)[6:])
# Stages of a turn, as in the NumPy core.
DECIDE, RESOLVE_H, FLIP, END_TURN, NEXT_TURN, STOP = range(6)


# ---- bit helpers: LLVM's bit-counting intrinsics (one instruction where the CPU has it) ---------
UINT64_OF_UINT64 = numba.types.uint64(numba.types.uint64)


def _bit_count(name: str) -> Any:
    """Code for ``llvm.<name>.i64`` (``cttz`` and ``ctlz`` with is-zero-poison False: 0 gives 64)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64, i1 = llvm_ir.IntType(64), llvm_ir.IntType(1)
        if name == "ctpop":
            return builder.call(builder.module.declare_intrinsic("llvm.ctpop", [i64]), [args[0]])
        function = builder.module.declare_intrinsic(f"llvm.{name}", [i64, i1])
        return builder.call(function, [args[0], llvm_ir.Constant(i1, 0)])

    return codegen


@intrinsic
def _ctpop(typingctx: Any, x: Any) -> Any:
    """Set bits of a uint64."""
    return UINT64_OF_UINT64, _bit_count("ctpop")


@intrinsic
def _cttz(typingctx: Any, x: Any) -> Any:
    """Trailing zeros of a uint64 (64 for 0)."""
    return UINT64_OF_UINT64, _bit_count("cttz")


@intrinsic
def _ctlz(typingctx: Any, x: Any) -> Any:
    """Leading zeros of a uint64 (64 for 0)."""
    return UINT64_OF_UINT64, _bit_count("ctlz")


def _host_has_pdep() -> bool:
    try:
        return "+bmi2" in llvm_binding.get_host_cpu_features().flatten().split(",")
    except RuntimeError:  # llvmlite cannot read this host's features: take the portable loop
        return False


HAS_PDEP = _host_has_pdep()
"""Whether this CPU has BMI2's ``pdep`` (x86-64 since Haswell / Zen): the rank-select of
``random_actions`` uses it where present, and a loop over set bits elsewhere."""


@intrinsic
def _pdep(typingctx: Any, x: Any, mask: Any) -> Any:
    """x86 BMI2 ``pdep``: the low bits of ``x`` deposited at the set bits of ``mask``."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        word = llvm_ir.IntType(64)
        cgutils: Any = numba.core.cgutils
        function = cgutils.get_or_insert_function(
            builder.module, llvm_ir.FunctionType(word, [word, word]), "llvm.x86.bmi.pdep.64"
        )
        return builder.call(function, args)

    return numba.types.uint64(numba.types.uint64, numba.types.uint64), codegen


HAS_TICKS = platform.machine().lower() in ("x86_64", "amd64")
"""Whether the kernels can read a tick counter (x86-64's ``rdtsc``, through LLVM's
``readcyclecounter``): elsewhere that counter may be closed to programs, and
:func:`ticks` gives 0, which leaves the threads' ranges of games even."""


@intrinsic
def _cycle_counter(typingctx: Any) -> Any:
    """LLVM's ``readcyclecounter``: a tick count that runs at a fixed rate, wall time."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        word = llvm_ir.IntType(64)
        function = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=llvm_ir.FunctionType(word, []))
        return builder.call(function, [])

    return numba.types.int64(), codegen


@intrinsic
def _prefetch(typingctx: Any, array: Any, index: Any) -> Any:
    """LLVM's ``prefetch`` for writing, of the cache line of ``array``'s row ``index`` (its
    first entry): the line is on its way while the code before its first use runs."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        cgutils: Any = numba.core.cgutils
        array_struct = context.make_array(array_type)(context, builder, args[0])
        zero = llvm_ir.Constant(args[1].type, 0)
        row = [args[1]] + [zero] * (array_type.ndim - 1)
        pointer = cgutils.get_item_pointer(context, builder, array_type, array_struct, row, wraparound=False)
        byte_pointer, i32 = llvm_ir.IntType(8).as_pointer(), llvm_ir.IntType(32)
        signature_ir = llvm_ir.FunctionType(llvm_ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, signature_ir, "llvm.prefetch.p0i8")
        # for writing (1), kept in every cache level (3), data (1)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return numba.types.none(array, index), codegen


@jit
def ticks() -> int:
    """Ticks of the CPU's time-stamp counter (0 where :data:`HAS_TICKS` is False)."""
    return _cycle_counter() if HAS_TICKS else 0


@jit
def bit(card: int) -> Any:
    """The bitboard of one card; card -1 gives 0."""
    return U1 << U(card) if card >= 0 else U0


@jit
def popcount(x: Any) -> int:
    return int(_ctpop(U(x)))


@jit
def bit_index(x: Any) -> int:
    """The index of the lowest set bit of ``x`` (64 for 0)."""
    return int(_cttz(U(x)))


@jit
def highest_bit(x: Any) -> Any:
    """The highest set bit of ``x`` as a board (0 for 0)."""
    return U1 << (U63 - _ctlz(U(x))) if x else U0


@jit
def select_bit_by_pdep(word: Any, rank: int) -> int:
    """The index of the ``rank``-th (from 0) set bit of ``word`` (fewer set bits: 64), by
    BMI2's ``pdep``: one instruction, no branch (needs ``HAS_PDEP``)."""
    return bit_index(_pdep(U1 << U(rank), U(word)))


@jit
def select_bit_by_loop(word: Any, rank: int) -> int:
    """:func:`select_bit_by_pdep` on any CPU: drop the lowest set bit ``rank`` times."""
    for _ in range(rank):
        word &= word - U1
    return bit_index(word)


select_bit = select_bit_by_pdep if HAS_PDEP else select_bit_by_loop
"""The rank-select of ``random_actions``: ``pdep`` where the CPU has it (random play's
varying loop counts cost more in mispredicted branches than the rest of the pick)."""


# bitboard's own helpers, compiled: their uint64 expressions work on scalars as on arrays
lowest_bit, nibble_counts, months_of_flags = (
    jit(f) for f in (bitboard.lowest_bit, bitboard.nibble_counts, bitboard.months_of_flags)
)


# ---- §7 scoring ----------------------------------------------------------------------------------
@jit
def _read(pile: Any, september_as_junk: bool) -> tuple[int, int, int, int, int]:
    """(score, brights, bright points, animals, junk value) of one pile read one way."""
    animals_mask, value2 = ANIMALS, VALUE2_JUNK
    if september_as_junk:
        animals_mask, value2 = ANIMALS & ~BIT32, VALUE2_JUNK | BIT32
    brights = popcount(pile & BRIGHTS)
    animals = popcount(pile & animals_mask)
    ribbons = popcount(pile & RIBBONS)
    junk = popcount(pile & PLAIN_JUNK) + 2 * popcount(pile & value2) + 3 * popcount(pile & VALUE3_JUNK)
    bright_points = BRIGHT_POINT_TABLE[2 * brights + int((pile >> RAIN_SHIFT) & U1)]
    score = bright_points + max(animals - ANIMAL_MIN, 0) + max(ribbons - RIBBON_MIN, 0) + max(junk - JUNK_MIN, 0)
    if pile & GODORI == GODORI:
        score += GODORI_POINTS
    for group in (RED_POEM, BLUE, PLAIN_RED):
        if pile & group == group:
            score += RIBBON_SET_POINTS
    return score, brights, bright_points, animals, junk


@jit
def read_pile(pile: Any, september_dual: bool) -> tuple[int, int, int, int, int, bool]:
    """§7 of one pile, as ``scoring.read_piles``: (score, brights, bright points, animals,
    junk value, card 32 read as junk)."""
    score, brights, bright_points, animals, junk = _read(pile, False)
    if september_dual and pile & BIT32:
        alt = _read(pile, True)
        if alt[0] > score:
            return alt[0], alt[1], alt[2], alt[3], alt[4], True
    return score, brights, bright_points, animals, junk, False


@inline
def rescore(s: Any, i: int, seat: int, options: Any) -> None:
    s.scores[at(s, i, seat)] = read_pile(s.piles[at(s, i, seat)], options[R_SEPTEMBER_DUAL] != 0)[0]


@jit
def at(s: Any, i: Any, seat: Any) -> Any:
    """Where game ``i``'s entry for ``seat`` is in a flat per-seat array of the kernel state
    ``s`` (or of the events; unsigned, so that numba adds no wraparound for a negative
    index). Compiled once and inlined by LLVM (the same machine code as numba's inlining,
    which made the first compile longer)."""
    return U(i) * U(s.players) + U(seat)


# ---- small steps shared by the stages --------------------------------------------------------
@inline
def count(s: Any, ev: Any, i: int, seat: int, event: int) -> None:
    ev.counts[at(s, i, seat) * NUM_EVENTS + U(event)] += 1


@jit
def next_seat(seat: int, offset: int, players: int) -> int:
    """The seat ``offset`` places after ``seat`` (``0 <= offset < players``): no division,
    which cost more than the rest of the turn's seat bookkeeping."""
    after = seat + offset
    return after - players if after >= players else after


@inline
def joker_to_pile(s: Any, ev: Any, i: int, seat: int, jokers: Any, options: Any) -> None:
    """Jokers reach ``seat``'s pile mid-turn: counted, and the score moves at once."""
    s.piles[at(s, i, seat)] |= jokers
    ev.captured[at(s, i, seat)] |= jokers
    count(s, ev, i, seat, E_JOKER)
    rescore(s, i, seat, options)


@inline
def draw(s: Any, ev: Any, i: int, options: Any) -> int:
    """The top stock card, jokers on the way to the mover's pile; -1 when the stock is empty."""
    while s.stock_pos[i] < s.stock_len[i]:
        top = int(s.stock[i, s.stock_pos[i]])
        s.stock_pos[i] += 1
        if top < NUM_MONTH_CARDS:
            return top
        joker_to_pile(s, ev, i, int(s.seat[i]), bit(top), options)
    return -1


@inline
def end_hand(s: Any, ev: Any, i: int, result: int) -> None:
    s.result[i] = result
    s.phase[i] = DONE
    for p in range(s.players):
        ev.payments[at(s, i, p)] = s.payments[at(s, i, p)]


@inline
def begin_turn(s: Any, i: int, seat: int) -> int:
    s.seat[i] = seat
    s.turns[at(s, i, seat)] += 1
    s.clock[i] += 1
    s.taken[i] = U0
    s.steals[i] = 0
    s.h[i] = -1
    s.h_did[i] = 0
    s.h_partner[i] = -1
    s.phase[i] = PLAY
    return FLIP if s.hands[at(s, i, seat)] == U0 else DECIDE  # an empty hand only flips (§14.2)


# ---- decisions ---------------------------------------------------------------------------------
@inline
def decide(s: Any, ev: Any, i: int, action: int, options: Any) -> int:
    """Apply a legal decision; returns the stage the turn goes on from."""
    phase, seat = s.phase[i], int(s.seat[i])
    if phase == CHOOSE_HAND:
        take_pair(s, i, int(s.h[i]), action - A.CHOOSE)
        s.h_did[i] = CHOSE
        s.h_partner[i] = action - A.CHOOSE
        s.phase[i] = PLAY
        return FLIP
    if phase == CHOOSE_FLIP:
        take_pair(s, i, int(s.f[i]), action - A.CHOOSE)
        return END_TURN
    if phase == GO_STOP:
        if action != A.GO:
            return STOP
        s.gos[at(s, i, seat)] += 1
        s.go_scores[at(s, i, seat)] = s.scores[at(s, i, seat)]
        s.last_go_clock[at(s, i, seat)] = s.clock[i]
        count(s, ev, i, seat, E_GO)
        return NEXT_TURN
    if action < A.SHAKE:
        return play_card(s, ev, i, seat, action, options)
    if action < A.BOMB:
        s.revealed[at(s, i, seat)] |= s.hands[at(s, i, seat)] & (U15 << U(4 * (action - A.SHAKE)))
        s.shakes[at(s, i, seat)] += 1
        count(s, ev, i, seat, E_SHAKE)
        return DECIDE
    if action < A.PASS:
        return bomb(s, ev, i, seat, action - A.BOMB, options)
    s.pass_tokens[at(s, i, seat)] -= 1
    return FLIP


@inline
def play_card(s: Any, ev: Any, i: int, seat: int, card: int, options: Any) -> int:
    s.hands[at(s, i, seat)] &= ~bit(card)
    s.h[i] = card
    if card < NUM_MONTH_CARDS:
        return RESOLVE_H
    joker_to_pile(s, ev, i, seat, bit(card), options)  # §14.4: the next stock card stands in
    sub = draw(s, ev, i, options)
    s.h[i] = sub
    return RESOLVE_H if sub >= 0 else END_TURN


@inline
def bomb(s: Any, ev: Any, i: int, seat: int, month: int, options: Any) -> int:
    month_bits = U15 << U(4 * month)
    s.hands[at(s, i, seat)] &= ~month_bits
    s.layout[i] &= ~month_bits
    s.taken[i] |= month_bits
    s.pass_tokens[at(s, i, seat)] += 2
    s.bombs[at(s, i, seat)] += 1
    s.h_did[i] = BOMBED
    count(s, ev, i, seat, E_BOMB)
    if options[R_BOMB_BONUS]:
        s.steals[i] += 1
    return FLIP


@inline
def take_pair(s: Any, i: int, card: int, target: int) -> None:
    t = bit(target)
    s.layout[i] &= ~t
    s.taken[i] |= bit(card) | t
    s.candidates[i] = U0


# ---- §5 matching -----------------------------------------------------------------------------------
@inline
def match(s: Any, ev: Any, t: Any, i: int, card: int, choice_phase: int, options: Any) -> tuple[int, bool]:
    """§5's first table for ``card`` against the layout; returns (table key, choice asked)."""
    layout = s.layout[i]
    month = card // 4
    key = 16 * month + int((layout >> U(4 * month)) & U15)
    card_bit, pick = bit(card), t.pick[key]
    s.layout[i] = (layout & ~pick) | (card_bit & t.place[key])
    s.taken[i] |= pick | (card_bit & t.keep[key])  # a card facing a choice is taken whatever is chosen
    if t.stack[key]:
        stack_capture(s, ev, i, month, options)
    s.candidates[i] = layout & t.candidates[key]
    choose = t.choose[key]
    s.phase[i] = choice_phase if choose else PLAY
    return key, choose


@inline
def stack_capture(s: Any, ev: Any, i: int, month: int, options: Any) -> None:
    """§6.4: a stack of three taken; a ja-ppuk (own earlier ppuk) steals twice."""
    seat = int(s.seat[i])
    ja = s.stack_owner[i, month] == seat
    if options[R_JA_PPUK_PREVIOUS]:
        ja = ja and s.stack_turn[i, month] == s.turns[at(s, i, seat)] - 1
    s.stack_owner[i, month] = -1
    s.steals[i] += 2 if ja else 1
    count(s, ev, i, seat, E_STACK_CAPTURE)
    if ja:
        count(s, ev, i, seat, E_JA_PPUK)


@inline
def resolve_h(s: Any, ev: Any, t: Any, i: int, options: Any) -> int:
    key, waiting = match(s, ev, t, i, int(s.h[i]), CHOOSE_HAND, options)
    s.h_did[i] = t.did[key]
    s.h_partner[i] = t.partner[key]
    return DECIDE if waiting else FLIP


@inline
def flip(s: Any, ev: Any, t: Any, i: int, options: Any) -> int:
    """Flip and resolve the top stock card (§5); skipped when the stock is empty."""
    f = draw(s, ev, i, options)
    s.f[i] = f
    if f < 0:
        return END_TURN
    h = int(s.h[i])
    if h >= 0 and f // 4 == h // 4:
        flip_onto_own_month(s, ev, i, f, h, options)
        return END_TURN
    return DECIDE if match(s, ev, t, i, f, CHOOSE_FLIP, options)[1] else END_TURN


@inline
def flip_onto_own_month(s: Any, ev: Any, i: int, f: int, h: int, options: Any) -> None:
    """§5's second table: jjok, ppuk, ttadak (and the korean last-card exceptions)."""
    seat, did = int(s.seat[i]), s.h_did[i]
    exception = s.stock_pos[i] == s.stock_len[i] and options[R_LAST_CARD_EXCEPTIONS] != 0
    jjok, ttadak = did == PLACED, did == CHOSE
    ppuk = did == PAIRED and not exception
    month = f // 4
    layout = s.layout[i]
    other = layout & (U15 << U(4 * month)) if jjok or ttadak else U0  # the placed card, or the one left
    stack = bit(h) | bit(int(s.h_partner[i])) | bit(f) if ppuk else U0
    s.layout[i] = (layout & ~other) | stack
    s.taken[i] = (s.taken[i] | (U0 if ppuk else bit(f) | other)) & ~stack
    if ppuk:
        s.stack_owner[i, month] = seat
        s.stack_turn[i, month] = s.turns[at(s, i, seat)]
        count(s, ev, i, seat, E_PPUK)
    elif jjok and not exception:
        s.steals[i] += 1
        count(s, ev, i, seat, E_JJOK)
    elif ttadak:
        s.steals[i] += 1
        count(s, ev, i, seat, E_TTADAK)


# ---- §6 end of the turn ----------------------------------------------------------------------------
@inline
def end_turn(s: Any, ev: Any, i: int, options: Any) -> int:
    seat, taken = int(s.seat[i]), s.taken[i]
    s.piles[at(s, i, seat)] |= taken
    ev.captured[at(s, i, seat)] |= taken
    s.taken[i] = U0
    last_turn = cards_out(s, i)
    sweep = s.layout[i] == U0 and taken != U0
    if not options[R_SWEEP_ON_LAST_TURN]:
        sweep = sweep and not last_turn
    if sweep:
        count(s, ev, i, seat, E_SWEEP)
    steals = int(s.steals[i]) + sweep
    if steals:
        steal(s, ev, i, seat, steals, options)
    rescore(s, i, seat, options)
    return check_go_stop(s, ev, i, seat, last_turn, options)


@inline
def cards_out(s: Any, i: int) -> bool:
    if s.stock_pos[i] < s.stock_len[i]:
        return False
    for p in range(s.players):  # noqa: SIM110 (a plain loop: generators need numba's runtime)
        if s.hands[at(s, i, p)] != U0:
            return False
    return True


@inline
def steal(s: Any, ev: Any, i: int, taker: int, steals: int, options: Any) -> None:
    """Each opponent gives ``steals`` junk cards, one at a time (§6); givers are rescored."""
    players = s.players
    for offset in range(1, players):
        giver = next_seat(taker, offset, players)
        for _ in range(steals):
            card = junk_to_give(s.piles[at(s, i, giver)], options)
            s.piles[at(s, i, giver)] &= ~card
            s.piles[at(s, i, taker)] |= card
            ev.stolen[at(s, i, taker) * U(s.players) + U(giver)] |= card
        rescore(s, i, giver, options)


@jit
def junk_to_give(pile: Any, options: Any) -> Any:
    """The junk card a giver hands over, as a bitboard (0 when it has none; §6)."""
    value2 = VALUE2_JUNK
    if options[R_SEPTEMBER_DUAL] and read_pile(pile, True)[5]:
        value2 |= BIT32
    plain, two, three = pile & PLAIN_JUNK, pile & value2, pile & VALUE3_JUNK
    if options[R_STEAL_LOWEST]:
        return lowest_bit(plain if plain else two if two else three)
    return highest_bit(three if three else two if two else plain)


# ---- §8 go or stop, §9 payment ---------------------------------------------------------------------
@inline
def check_go_stop(s: Any, ev: Any, i: int, seat: int, last_turn: bool, options: Any) -> int:
    """After a turn: go/stop decision, the last turn's automatic stop, nagari, or next turn."""
    score = s.scores[at(s, i, seat)]
    qualifies = score >= options[R_TARGET] and (s.gos[at(s, i, seat)] == 0 or score > s.go_scores[at(s, i, seat)])
    s.phase[i] = GO_STOP if qualifies and not last_turn else PLAY
    if qualifies:
        return STOP if last_turn else DECIDE
    if last_turn:
        count(s, ev, i, seat, E_NAGARI)
        end_hand(s, ev, i, NAGARI)
        return DECIDE
    return NEXT_TURN


@inline
def next_turn(s: Any, i: int) -> int:
    """Play passes to the next seat that can move (§14.2)."""
    players, seat = s.players, int(s.seat[i])
    stock_left = s.stock_pos[i] < s.stock_len[i]
    for offset in range(1, players):
        candidate = next_seat(seat, offset, players)
        if stock_left or s.hands[at(s, i, candidate)] != U0:
            return begin_turn(s, i, candidate)
    return begin_turn(s, i, -1)  # unreachable: the last turn ended the hand


@inline
def stop(s: Any, ev: Any, i: int, options: Any) -> int:
    """The seat to move stops and is paid (§9)."""
    seat, players = int(s.seat[i]), s.players
    count(s, ev, i, seat, E_STOP)
    s.winner[i] = seat
    shares = s.payments[at(s, i, 0) : at(s, i, players)]  # what each seat owes, then the payments
    owed(s, i, seat, options, shares)
    if options[R_GO_BAK]:
        go_bak(s, i, seat, shares)
    shares[seat] = 0
    total = shares.sum()
    for p in range(players):
        shares[p] = -shares[p]
    shares[seat] = total
    end_hand(s, ev, i, STOPPED)
    return DECIDE


@inline
def owed(s: Any, i: int, seat: int, options: Any, shares: Any) -> None:
    """What each seat owes the winner ``seat`` before go-bak, into ``shares`` (the winner's own
    entry is junk)."""
    players, dual = s.players, options[R_SEPTEMBER_DUAL] != 0
    score, _, bright_points, animals, junk, _ = read_pile(s.piles[at(s, i, seat)], dual)
    gos = int(s.gos[at(s, i, seat)])
    doublings = int(s.shakes[at(s, i, seat)]) + int(animals >= 7)
    if options[R_BOMB_BONUS]:
        doublings += s.bombs[at(s, i, seat)]
    doublings += int(gos > 3) if options[R_GO_ONCE_OVER_3] else max(gos - 2, 0)
    carry = int(s.carry[i])
    doublings += carry if options[R_NAGARI_COMPOUNDING] else int(carry > 0)
    chips = (score + gos) << doublings
    for p in range(players):
        _, brights, _, _, their_junk, _ = read_pile(s.piles[at(s, i, p)], dual)
        bright_bak = bright_points > 0 and brights == 0
        pi_bak = junk >= 10 and their_junk <= options[R_PI_BAK_THRESHOLD]
        if options[R_PI_BAK_ZERO_EXEMPT]:
            pi_bak = pi_bak and their_junk > 0
        shares[p] = chips << (int(bright_bak) + int(pi_bak))


@inline
def go_bak(s: Any, i: int, seat: int, shares: Any) -> None:
    """korean go-bak (§12, §14.10), in place: as the reference engine's ``_apply_go_bak``."""
    players = s.players
    payer, latest, total = -1, -1, 0
    for p in range(players):
        if p == seat:
            continue
        total += shares[p]
        if s.gos[at(s, i, p)] > 0:
            if players == 2:
                shares[p] *= 2
            elif s.last_go_clock[at(s, i, p)] > latest:
                payer, latest = p, s.last_go_clock[at(s, i, p)]
    if players > 2 and payer >= 0:
        for p in range(players):
            shares[p] = total if p == payer else 0


# ---- a whole turn, a deal, the legal actions -----------------------------------------------------------
@inline
def run_stages(s: Any, ev: Any, t: Any, i: int, stage: int, options: Any) -> None:
    """Take game ``i`` through the stages of its turn until it awaits a decision."""
    while stage != DECIDE:
        if stage == RESOLVE_H:
            stage = resolve_h(s, ev, t, i, options)
        elif stage == FLIP:
            stage = flip(s, ev, t, i, options)
        elif stage == END_TURN:
            stage = end_turn(s, ev, i, options)
        elif stage == NEXT_TURN:
            stage = next_turn(s, i)
        else:
            stage = stop(s, ev, i, options)


@inline
def deal(s: Any, ev: Any, t: Any, i: int, options: Any) -> None:
    """§3 before the first turn of a freshly dealt game: layout jokers, chongtong, seat 0."""
    while s.layout[i] & JOKER_BITS:
        joker = lowest_bit(s.layout[i] & JOKER_BITS)
        s.layout[i] &= ~joker
        joker_to_pile(s, ev, i, 0, joker, options)
        s.layout[i] |= bit(int(s.stock[i, s.stock_pos[i]]))
        s.stock_pos[i] += 1
    players, holders = s.players, 0
    for p in range(players):
        holds = ((nibble_counts(s.hands[at(s, i, p)]) >> U2) & NIBBLE_LOW) != U0
        holders += holds
        if holds:
            count(s, ev, i, p, E_CHONGTONG)
            s.winner[i] = p
    if holders == 0:
        run_stages(s, ev, t, i, begin_turn(s, i, 0), options)
        return
    for p in range(players):  # each holder: +5 per opponent, -5 per other holder
        held = ev.counts[at(s, i, p) * NUM_EVENTS + U(E_CHONGTONG)] != 0
        s.payments[at(s, i, p)] = 5 * ((players if held else 0) - holders)
    if holders > 1:
        s.winner[i] = -1
    end_hand(s, ev, i, CHONGTONG)


@inline
def legal_words(s: Any, i: int, out: Any) -> None:
    """Game ``i``'s legal actions as two uint64 words (action a: bit a % 64 of word a // 64)."""
    phase, seat = s.phase[i], int(s.seat[i])
    hand = s.hands[at(s, i, seat)] if phase == PLAY else U0
    high = s.candidates[i] << CHOOSE_SHIFT
    if phase == GO_STOP:
        high |= GO_STOP_WORD
    elif phase == PLAY and s.pass_tokens[at(s, i, seat)] > 0:
        high |= PASS_WORD
    low = hand
    counts = nibble_counts(hand & ~s.revealed[at(s, i, seat)])
    threes = counts & (counts >> U1) & ~(counts >> U2) & NIBBLE_LOW
    if threes:
        layout_counts = nibble_counts(s.layout[i])
        singles = layout_counts & ~(layout_counts >> U1) & ~(layout_counts >> U2) & NIBBLE_LOW
        bombs = months_of_flags(threes & singles)
        low |= (months_of_flags(threes) << SHAKE_SHIFT) | (bombs << BOMB_SHIFT)  # bombs of months 0, 1
        high |= bombs >> BOMB_HIGH_SHIFT
    out[i, 0], out[i, 1] = low, high


@jit
def is_legal(legal: Any, i: int, action: int) -> bool:
    return (legal[i, action >> 6] >> U(action & 63)) & U1 == U1


# ---- one game's step, deal and legal words, and the same over a range of games ---------------
@inline
def step_game(s: Any, ev: Any, t: Any, i: int, action: int, options: Any, legal: Any) -> None:
    """One game's decision and the rest of its turn, then its legal words."""
    run_stages(s, ev, t, i, decide(s, ev, i, action, options), options)
    legal_words(s, i, legal)


@inline
def clear_row(a: Any, i: Any, row: Any) -> None:
    """Row ``i`` of the flat ``a``, rows of ``row`` entries, set to zero."""
    for j in range(row):
        a[i * row + j] = 0


@inline
def event_row_lengths(players: Any) -> tuple[Any, Any, Any, Any]:
    """How many entries one game has in each flat events array (counts, captured, stolen,
    payments), with ``players`` seats."""
    return players * NUM_EVENTS, players, players * players, players


@inline
def clear_event_rows(ev: Any, i: Any, players: Any) -> None:
    """Game ``i``'s rows of the flat events ``ev`` of ``players`` seats set to zero."""
    counts, captured, stolen, payments = event_row_lengths(players)
    clear_row(ev.counts, i, counts)
    clear_row(ev.captured, i, captured)
    clear_row(ev.stolen, i, stolen)
    clear_row(ev.payments, i, payments)


@inline
def clear_game_events(ev: Any, i: Any, players: int) -> None:
    """:func:`clear_event_rows` for 2 and for 3 players apart, so that each row's length is
    a constant when compiled: a few stores (a length read at run time made each row a call
    to ``memset``)."""
    if players == 2:
        clear_event_rows(ev, i, U2)
    else:
        clear_event_rows(ev, i, U(3))


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


@inline
def reset_game(s: Any, i: int) -> None:
    """Every state array of game ``i`` but the stock (which a deal overwrites) back to its
    declared initial value (:data:`INITIAL`), one statement per array: a loop over tuples of
    the arrays and their initial rows cost 150 ns a game, this a third of it less (a test
    checks that every state array is named here)."""
    fill_seats(s, s.hands, i, INITIAL.hands)
    fill_seats(s, s.piles, i, INITIAL.piles)
    fill_seats(s, s.revealed, i, INITIAL.revealed)
    s.layout[i] = INITIAL.layout
    s.stock_pos[i] = INITIAL.stock_pos
    s.stock_len[i] = INITIAL.stock_len
    fill_seats(s, s.shakes, i, INITIAL.shakes)
    fill_seats(s, s.bombs, i, INITIAL.bombs)
    fill_seats(s, s.pass_tokens, i, INITIAL.pass_tokens)
    fill_seats(s, s.gos, i, INITIAL.gos)
    fill_seats(s, s.go_scores, i, INITIAL.go_scores)
    fill_seats(s, s.last_go_clock, i, INITIAL.last_go_clock)
    fill_seats(s, s.turns, i, INITIAL.turns)
    fill_seats(s, s.scores, i, INITIAL.scores)
    fill_seats(s, s.payments, i, INITIAL.payments)
    s.clock[i] = INITIAL.clock
    s.seat[i] = INITIAL.seat
    s.phase[i] = INITIAL.phase
    s.result[i] = INITIAL.result
    s.winner[i] = INITIAL.winner
    s.carry[i] = INITIAL.carry
    fill_months(s.stack_owner, i, INITIAL.stack_owner)
    fill_months(s.stack_turn, i, INITIAL.stack_turn)
    s.candidates[i] = INITIAL.candidates
    s.taken[i] = INITIAL.taken
    s.steals[i] = INITIAL.steals
    s.h[i] = INITIAL.h
    s.h_did[i] = INITIAL.h_did
    s.h_partner[i] = INITIAL.h_partner
    s.f[i] = INITIAL.f


@inline
def prefetch_deal(s: Any, ev: Any, legal: Any, i: Any) -> None:
    """Ask for the cache lines of game ``i``'s rows in every array its deal writes: each state
    array (:func:`reset_game`'s, and the stock), its legal words and its rows of the flat
    scratch events ``ev``. The games a deal deals lie scattered over the batch, so in a
    large batch each of those rows is a line out of cache, and asking ahead lets them
    arrive together."""
    _prefetch(legal, i)
    counts, captured, stolen, payments = event_row_lengths(U(s.players))
    _prefetch(ev.counts, i * counts)
    _prefetch(ev.captured, i * captured)
    _prefetch(ev.stolen, i * stolen)
    _prefetch(ev.payments, i * payments)
    k = at(s, i, 0)
    _prefetch(s.hands, k)
    _prefetch(s.piles, k)
    _prefetch(s.revealed, k)
    _prefetch(s.layout, i)
    _prefetch(s.stock_pos, i)
    _prefetch(s.stock_len, i)
    _prefetch(s.shakes, k)
    _prefetch(s.bombs, k)
    _prefetch(s.pass_tokens, k)
    _prefetch(s.gos, k)
    _prefetch(s.go_scores, k)
    _prefetch(s.last_go_clock, k)
    _prefetch(s.turns, k)
    _prefetch(s.scores, k)
    _prefetch(s.payments, k)
    _prefetch(s.clock, i)
    _prefetch(s.seat, i)
    _prefetch(s.phase, i)
    _prefetch(s.result, i)
    _prefetch(s.winner, i)
    _prefetch(s.carry, i)
    _prefetch(s.stack_owner, i)
    _prefetch(s.stack_turn, i)
    _prefetch(s.candidates, i)
    _prefetch(s.taken, i)
    _prefetch(s.steals, i)
    _prefetch(s.h, i)
    _prefetch(s.h_did, i)
    _prefetch(s.h_partner, i)
    _prefetch(s.f, i)
    _prefetch(s.stock, i)


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


@jit
def first_illegal(actions: Any, legal: Any, phase: Any, start: int, stop: int) -> int:
    """The first game of [start, stop) whose action is neither ``NO_ACTION`` nor legal (-1:
    none)."""
    for i in range(start, stop):
        a = actions[i]
        if a == A.NO_ACTION:
            continue
        if a < 0 or a >= A.NUM_ACTIONS or phase[i] == DONE or not is_legal(legal, i, a):
            return i
    return -1


@jit
def step_range(s: Any, ev: Any, t: Any, actions: Any, options: Any, legal: Any, start: int, stop: int) -> None:
    """Step games [start, stop): each game's rows of the events ``ev`` (new, unwritten
    arrays) zeroed just before its step, which finds them in cache (zeroing the whole batch
    first was a pass of its own); its legal words go to ``legal[1]``, copied from
    ``legal[0]`` where it takes no action. (The zeroing and the copy are the step's, not
    passes of NumPy over the whole batch before it: spread over the threads with the step.)
    Game indices are unsigned: numba wraps a negative signed index around on every array
    access, and leaving that out made a step a fifth faster."""
    before, after = legal
    for i in range(U(start), U(stop)):
        clear_game_events(ev, i, s.players)
        if actions[i] >= 0:
            step_game(s, ev, t, i, int(actions[i]), options, after)
        else:
            after[i, 0], after[i, 1] = before[i, 0], before[i, 1]


@inline
def move_row(source: Any, i: Any, out: Any, k: Any, row: Any) -> None:
    """Row ``i`` of the flat ``source`` (rows of ``row`` entries) into row ``k`` of the flat
    ``out``, zeroed in ``source`` (unsigned indices, as in ``step_range``)."""
    for j in range(row):
        out[k * row + j] = source[i * row + j]
        source[i * row + j] = 0


@inline
def move_event_row(s: Any, source: Any, i: Any, out: Any, k: Any) -> None:
    """``move_row`` for each of the flat events ``source`` into the same array of ``out``
    (rows of ``s.players`` games' events)."""
    counts, captured, stolen, payments = event_row_lengths(U(s.players))
    move_row(source.counts, i, out.counts, k, counts)
    move_row(source.captured, i, out.captured, k, captured)
    move_row(source.stolen, i, out.stolen, k, stolen)
    move_row(source.payments, i, out.payments, k, payments)


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


@jit
def list_done(phase: Any, done: Any) -> int:
    """The games that are over, in order, into ``done`` (as long as the batch); how many. Without
    a branch a game: each game is written where the next game over goes, and moves that on
    only if it is over (a branch would be mispredicted at each game over: in random play at
    batch 65536, 61 us against 39). The loop stops at the last game over, so it
    writes nothing past the games over."""
    last = phase.size - 1
    while last >= 0 and phase[last] != DONE:
        last -= 1
    entry = U0
    for i in range(U(last + 1)):
        done[entry] = i
        entry += U(phase[i] == DONE)
    return int(entry)


@jit
def legal_range(s: Any, legal: Any, start: int, stop: int) -> None:
    for i in range(U(start), U(stop)):  # unsigned: see step_range
        legal_words(s, i, legal)


@inline
def flat_events(ev: Any) -> Any:
    """The events ``ev`` (:data:`EventArrays` of a batch's arrays) as the kernels index them:
    each array flat, a view (made in the kernel: four reshapes in Python cost 3 us a step)."""
    return EventArrays(
        ev.counts.reshape(ev.counts.size),
        ev.captured.reshape(ev.captured.size),
        ev.stolen.reshape(ev.stolen.size),
        ev.payments.reshape(ev.payments.size),
    )


# ---- the batch loops: ranges of games, one per thread ---------------------------------------------
# A batch splits its games into consecutive ranges, range c being games [bounds[c],
# bounds[c + 1]), one range per thread (``CompiledGameBatch._thread_ranges``). The
# step moves the bounds after each call so that the threads finish together (``rebalance``).
# (Each thread's range is a call: numba's parallel loops lose writes made in their own body
# through arrays held in a tuple, but keep those made by a function they call.)
@jit
def chunk(c: int, chunks: int, n: int) -> tuple[int, int]:
    """Games [start, stop) of chunk ``c`` of ``chunks`` even chunks over ``n`` games."""
    return c * n // chunks, (c + 1) * n // chunks


@jit
def share(c: int, bounds: Any, n: int) -> tuple[int, int]:
    """Items [start, stop) of ``n`` that go to range ``c`` of ``bounds``: the range's
    share of the batch (for a list of some of the games, such as those dealt again)."""
    games = bounds[bounds.size - 1]
    if games == 0:
        return chunk(c, bounds.size - 1, n)
    return n * bounds[c] // games, n * bounds[c + 1] // games


def even_bounds(games: int, ranges: int) -> np.ndarray:
    """The bounds of ``ranges`` even ranges of ``games`` games (range c: games [bounds[c],
    bounds[c + 1])), where a batch's threads start."""
    return np.arange(ranges + 1, dtype=np.int64) * games // ranges


MIN_SHARE = 4
"""``rebalance`` leaves each range at least 1 / MIN_SHARE of an even share of the games, so
that a thread held up once still gets games to be timed on."""


@jit
def rebalance(bounds: Any, elapsed: Any) -> None:
    """Move each inner bound halfway toward where the ranges' rates in the call just made
    (games per tick of ``elapsed``) would have had every thread finish at once. One core of
    a shared machine can run slower than the other for seconds at a time, and even ranges
    then wait on the slow one. The bounds stay where a time is missing (no tick counter) or
    a range is empty."""
    chunks, games = bounds.size - 1, bounds[bounds.size - 1]
    least = max(1, games // (MIN_SHARE * chunks))
    if chunks < 2 or games < least * chunks:
        return
    total = 0.0
    for c in range(chunks):
        if elapsed[c] <= 0 or bounds[c + 1] <= bounds[c]:
            return
        total += (bounds[c + 1] - bounds[c]) / elapsed[c]
    old, rate_below = bounds[0], 0.0
    for c in range(chunks - 1):
        rate_below += (bounds[c + 1] - old) / elapsed[c]
        old = bounds[c + 1]
        target = int(games * rate_below / total)
        moved = (old + target) // 2
        bounds[c + 1] = min(max(moved, bounds[c] + least), games - least * (chunks - 1 - c))


def _step_games(
    s: Any, ev: Any, t: Any, actions: Any, options: Any, before: Any, after: Any, found: Any, bounds: Any, elapsed: Any
) -> None:
    """Each range's first game whose action is neither ``NO_ACTION`` nor legal into
    ``found`` (-1: none); then, only if there is none, the step of every game (one call
    where a check and a step would be two, each with its pass over the batch), each
    range's time into ``elapsed`` and the bounds rebalanced."""
    chunks = bounds.size - 1
    for c in numba.prange(chunks):
        found[c] = first_illegal(actions, before, s.phase, bounds[c], bounds[c + 1])
    legal = True
    for c in range(chunks):
        legal &= found[c] < 0
    if legal:
        ev = flat_events(ev)
        for c in numba.prange(chunks):
            began = ticks()
            step_range(s, ev, t, actions, options, (before, after), bounds[c], bounds[c + 1])
            elapsed[c] = ticks() - began
        rebalance(bounds, elapsed)


def _deal_games(s: Any, ev: Any, t: Any, d: Any, options: Any, legal: Any, dealt: Any, bounds: Any) -> None:
    """Deal ``d.decks[k]`` into game ``d.index[k]``, its events through the scratch ``ev``
    (every game's, all zero between deals) into row ``k`` of ``dealt`` (see ``deal_range``);
    each range's share of the dealt games on its thread."""
    ev, dealt = flat_events(ev), flat_events(dealt)
    for c in numba.prange(bounds.size - 1):
        start, stop = share(c, bounds, d.index.size)
        deal_range(s, ev, t, d, options, legal, dealt, start, stop)


@jit
def pick(low: Any, high: Any, draw: float) -> int:
    """The legal action of rank ``int(draw * count)`` among those of the legal words (low,
    high): ``random_legal_actions``' pick (``NO_ACTION`` where none is legal)."""
    in_low = popcount(low)
    total = in_low + popcount(high)
    if total == 0:
        return A.NO_ACTION
    rank = int(draw * total)
    in_high = rank >= in_low
    return 64 * in_high + select_bit(high if in_high else low, rank - in_low * in_high)


@jit
def pick_range(legal: Any, generator: Any, actions: Any, start: int, stop: int) -> None:
    """Games [start, stop) of ``_drawn_actions``, game ``i`` by the generator's ``i``-th
    draw: from its state jumped ahead to draw ``start``."""
    increment_high, increment_low = generator[2], generator[3]  # read once: stores to actions could alias them
    high, low = pcg64.jump(generator[0], generator[1], increment_high, increment_low, start)
    for i in range(start, stop):
        high, low, draw = pcg64.next_double(high, low, increment_high, increment_low)
        actions[i] = pick(legal[i, 0], legal[i, 1], draw)


def _random_actions(legal: Any, draws: Any, actions: Any) -> None:
    """``random_legal_actions`` compiled, from NumPy's ``draws``."""
    for i in numba.prange(actions.size):
        actions[i] = pick(legal[i, 0], legal[i, 1], draws[i])


def _drawn_actions(legal: Any, generator: Any, actions: Any, chunks: int) -> None:
    """``random_legal_actions`` compiled, drawing its own numbers from a PCG64's state
    (``generator``: see :func:`~gostop_env.core.pcg64.state_words`), game ``i`` the ``i``-th
    draw, as ``Generator.random`` would make them; each of ``chunks`` even ranges of games
    on its thread. The state after every game's draw is written back into ``generator``."""
    for c in numba.prange(chunks):
        start, stop = chunk(c, chunks, actions.size)
        pick_range(legal, generator, actions, start, stop)
    generator[0], generator[1] = pcg64.jump(generator[0], generator[1], generator[2], generator[3], actions.size)


def _legal_of_all(s: Any, legal: Any, bounds: Any) -> None:
    for c in numba.prange(bounds.size - 1):
        legal_range(s, legal, bounds[c], bounds[c + 1])


def _loops(parallel: bool) -> dict[str, Any]:
    """The batch loops compiled for one thread (their chunks run in turn), or spread over
    numba's threads. The parallel copies get names of their own, so the two never share an
    entry of numba's disk cache."""
    loops = {}
    for f in (_step_games, _deal_games, _legal_of_all, _random_actions, _drawn_actions):
        if parallel:
            f = types.FunctionType(f.__code__, f.__globals__, f"{f.__name__}_parallel")
            f.__qualname__ = f.__name__
        loops[f.__name__.removesuffix("_parallel")] = numba.njit(
            cache=True, nogil=True, parallel=parallel, **WITHOUT_RUNTIME
        )(f)
    return loops


SERIAL, PARALLEL = _loops(parallel=False), _loops(parallel=True)
"""The batch loops, on one thread and on numba's threads (compiled when first called)."""
PARALLEL_FROM = 2048
"""The fewest games ``numba-parallel`` spreads over numba's threads; a smaller batch runs on
one thread. On 2 cores the threads ran random play at 0.60x one thread's speed
at batch 1, 0.63x at 64, 0.77x at 256, about 1x at 1024 and 1.4x at 4096 (``python
benchmarks/core_throughput.py --seconds 1 --repeats 2 --batches 1,64,256 --backends
numba,numba-parallel``, and the docs' table)."""


KERNEL_DRAWS_FROM = 16384
"""The fewest games for which ``numba-parallel``'s picker draws its numbers on the threads
(:func:`drawn_actions`); below, it takes NumPy's draws, since reading and setting the
generator's state costs a few microseconds (``python benchmarks/loop_parts.py --batches
2048,4096,8192,65536`` times both: the kernel's draws win clearly only at 65536)."""


def random_actions(legal_bits: np.ndarray, draws: np.ndarray, loops: dict[str, Any] = SERIAL) -> np.ndarray:
    """One legal action per game picked by ``draws`` (uniform in [0, 1)), as
    :func:`~gostop_env.core.batch.random_legal_actions` picks them (with ``loops``: ``SERIAL``
    or ``PARALLEL``)."""
    actions = np.empty(len(legal_bits), np.int64)
    loops["_random_actions"](np.ascontiguousarray(legal_bits), draws, actions)
    return actions


def drawn_actions(legal_bits: np.ndarray, rng: np.random.Generator, loops: dict[str, Any], chunks: int) -> np.ndarray:
    """:func:`random_actions` with ``rng.random(len(legal_bits))``'s draws, made inside the
    kernel where ``rng`` runs on NumPy's PCG64 (``numpy.random.default_rng``; other bit
    generators draw through NumPy): each of ``chunks`` even ranges of games draws its own,
    on its thread where ``loops`` is ``PARALLEL``. The same actions either way, and ``rng``
    is left as ``rng.random`` leaves it. (NumPy fills the draws on one thread while the other
    waits: see :data:`KERNEL_DRAWS_FROM`.)"""
    bit_generator = rng.bit_generator
    if type(bit_generator) is not np.random.PCG64:
        return random_actions(legal_bits, rng.random(len(legal_bits)), loops)
    actions = np.empty(len(legal_bits), np.int64)
    with bit_generator.lock:
        words, state = pcg64.state_words(bit_generator)
        loops["_drawn_actions"](np.ascontiguousarray(legal_bits), words, actions, chunks)
        pcg64.set_state(bit_generator, state, words[0], words[1])
    return actions


def kernel_view(array: np.ndarray, shape: str) -> np.ndarray:
    """A state array as the kernels index it: a per-seat array flat (a view: the arrays are
    C-contiguous by then), the others as they are."""
    return array.reshape(-1) if shape == SEAT else array


ENTRY_POINTS: dict[Any, Any] = {}
"""Each batch kernel's compiled entry point, found on its first call (:func:`run_kernel`)."""


def run_kernel(kernel: Any, *args: Any) -> None:
    """Run a batch kernel: on its first call through numba's dispatcher (which compiles or
    loads it for the arguments' types), after that straight through the compiled entry
    point for those types. The dispatcher types every argument on every call, and typing
    some fifty arrays cost ten times the call itself (11 us of a step of one game: as
    much as the rest of the step). Sound because a batch passes the same types on every
    call of a kernel: its state arrays as :meth:`CompiledGameBatch._state` makes them, and
    arrays it makes itself or passes through :func:`~gostop_env.core.batch.fit_array` (``tests/test_backends.py``
    checks the calls of batches made every way, from read-only, strided and other-typed
    inputs too, against the types the entry point was compiled for)."""
    entry = ENTRY_POINTS.get(kernel)
    if entry is not None:
        entry(*args)
        return
    kernel(*args)
    try:
        entry = kernel.overloads[tuple(kernel.typeof_pyval(a) for a in args)].entry_point
    except (AttributeError, KeyError):  # a numba without these: the dispatcher on every call
        entry = kernel
    ENTRY_POINTS[kernel] = entry


@functools.cache
def _deal_columns(players: int) -> tuple[np.ndarray, np.ndarray]:
    """``_dealt_columns`` as the deal kernel's int64 arrays."""
    columns, starts = _dealt_columns(players)
    return columns.astype(np.int64), starts.astype(np.int64)


@functools.cache
def match_tables(choice_rule: str) -> Any:
    """§5's match tables of the NumPy core as one kernel argument."""
    tables = _match_tables(choice_rule)
    return MatchTables(*(tables[name] for name in MatchTables._fields))


class CompiledGameBatch(GameBatch):
    """A :class:`GameBatch` whose steps, deals and legal actions run as compiled kernels on
    one thread (``backend="numba"``); everything else is the NumPy core's."""

    backend = "numba"

    @staticmethod
    def pick_actions(legal_bits: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return random_actions(legal_bits, draws, SERIAL)

    def loops(self) -> dict[str, Any]:
        """The batch loops this batch runs (``SERIAL`` or ``PARALLEL``)."""
        return SERIAL

    def chunks(self) -> int:
        """How many ranges of games the loops split the batch into: one per thread."""
        return 1

    _kernel_state: Any = None  # the state arrays as a kernel argument, dropped when an array is replaced
    _ranges: tuple[np.ndarray, np.ndarray] | None = None  # (bounds, elapsed) of the threads' ranges
    _rule_arrays: tuple[Any, Any] | None = None  # the rules as kernel arguments, dropped with the rules
    _scratch: Any = None  # the deal kernel's events (_deal_scratch)
    _legal_shared = False  # whether legal_bits has given _legal to a caller, who may hold it

    def __setattr__(self, name: str, value: Any) -> None:
        if name in STATE_FIELDS:
            object.__setattr__(self, "_kernel_state", None)
            super().__setattr__(name, value)  # the state array made fit
            return
        if name == "rules":
            object.__setattr__(self, "_rule_arrays", None)
        object.__setattr__(self, name, value)

    def _state(self) -> Any:
        """The state arrays as one kernel argument. Each was made an array of the one type the
        kernels run on when it was set (:func:`~gostop_env.core.batch.fit_array`); it is made
        one again here where a caller has since made it read-only in place."""
        if self._kernel_state is None:
            for name in KERNEL_FIELDS:
                array = getattr(self, name)
                if fit_array(array, STATE_FIELDS[name].dtype) is not array:
                    setattr(self, name, array)
            views = (kernel_view(getattr(self, name), STATE_FIELDS[name].shape) for name in KERNEL_FIELDS)
            self._kernel_state = KernelState._make((*views, self.rules.players))
        return self._kernel_state

    def _rules_arguments(self) -> tuple[Any, Any]:
        """(rule options, §5's match tables) of the batch's rules as kernel arguments: found
        once for the batch's rules (looking them up by the rules cost 1.2 us a step)."""
        if self._rule_arrays is None:
            self._rule_arrays = rule_options(self.rules), match_tables(self.rules.choice_rule)
        return self._rule_arrays

    def _thread_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """(bounds, elapsed): the games split into one range of consecutive games per
        thread, range c being games [bounds[c], bounds[c + 1]), and the ticks each range's
        last step took. Even at first, and again whenever the number of threads or games
        changes; each step then moves the bounds toward equal times (``rebalance``). Which
        thread steps a game cannot change its result."""
        chunks = self.chunks()
        if self._ranges is None or len(self._ranges[1]) != chunks or self._ranges[0][chunks] != len(self):
            self._ranges = even_bounds(len(self), chunks), np.zeros(chunks, np.int64)
        return self._ranges

    def _deal_scratch(self) -> Any:
        """Events of every game, all zero between deals, as :data:`EventArrays`: the deal
        kernel writes the dealt games' rows, which it moves out and zeroes again (a new
        buffer of the whole batch for each deal would cost more than dealing a few hundred
        games). Kept from the first deal on."""
        if self._scratch is None:
            self._scratch = EventArrays(*BatchEvents.empty(len(self), self.rules.players).arrays())
        return self._scratch

    @property
    def legal_bits(self) -> np.ndarray:
        self._legal_shared = True
        return self._legal_words()

    def _legal_words(self) -> np.ndarray:
        """``legal_bits`` for the batch's own use: not counted as held by a caller."""
        if self._legal is None:
            legal = np.empty((len(self), 2), U)
            run_kernel(self.loops()["_legal_of_all"], self._state(), legal, self._thread_ranges()[0])
            self._legal, self._legal_shared = legal, False
        return self._legal

    def _play_legal(self, actions: np.ndarray) -> int:
        """One kernel checks the actions (each thread its range of games) and, if every one is
        legal, plays them, writing new events and new legal words (a caller may hold the
        old)."""
        bounds, elapsed = self._thread_ranges()
        before, after, found = self._legal_words(), np.empty((len(self), 2), U), np.empty(len(elapsed), np.int64)
        events = BatchEvents.unwritten(len(self), self.rules.players)
        options, tables = self._rules_arguments()
        run_kernel(
            self.loops()["_step_games"],
            self._state(),
            EventArrays(*events.arrays()),
            tables,
            fit_array(actions, np.int64),
            options,
            before,
            after,
            found,
            bounds,
            elapsed,
        )
        illegal = next((int(game) for game in found if game >= 0), -1)
        if illegal < 0:
            self._events, self._legal, self._legal_shared = events, after, False
        return illegal

    def _deal_cards(self, index: np.ndarray, decks: np.ndarray, carry: np.ndarray) -> BatchEvents:
        if self._legal is None:
            legal = np.zeros((len(self), 2), U)
        else:  # the dealt games' rows are rewritten; in a copy where a caller holds the words
            legal = self._legal.copy() if self._legal_shared else self._legal
        columns, starts = _deal_columns(self.rules.players)
        deal = DealArrays(
            fit_array(index, np.int64),
            fit_array(decks, np.int8),
            np.full(index.shape, carry, np.int64) if carry.ndim == 0 else fit_array(carry, np.int64),
            columns,
            starts,
        )
        dealt = BatchEvents.unwritten(index.size, self.rules.players)
        options, tables = self._rules_arguments()
        run_kernel(
            self.loops()["_deal_games"],
            self._state(),
            self._deal_scratch(),
            tables,
            deal,
            options,
            legal,
            EventArrays(*dealt.arrays()),
            self._thread_ranges()[0],
        )
        if self._legal is not None:
            self._legal = legal  # the dealt games' rows rewritten
        return dealt

    @staticmethod
    def _shuffle(draws: np.ndarray) -> np.ndarray:
        """Deck orders from uniform draws, shuffled by a kernel (:func:`shuffle_decks`)."""
        decks = np.empty(draws.shape, np.int8)
        shuffle_decks(np.ascontiguousarray(draws, np.float64), decks)
        return decks

    def done_games(self) -> np.ndarray:
        """The games that are over, listed by a kernel (:func:`list_done`), on one thread also
        for ``numba-parallel`` (spread over two, the list took longer): in random play about
        half of ``np.flatnonzero``'s time (``python benchmarks/loop_parts.py``)."""
        done = np.empty(len(self), np.int64)
        return done[: list_done(self._state().phase, done)].copy()

    def _legal_changed(self) -> None:
        """Nothing to forget: ``_deal_cards`` rewrote the dealt games' legal words."""


class ParallelGameBatch(CompiledGameBatch):
    """:class:`CompiledGameBatch` with its batch loops spread over numba's threads
    (``backend="numba-parallel"``; how many: ``numba.set_num_threads`` or
    ``NUMBA_NUM_THREADS``). Each game is still stepped by one thread, start to end: the batch
    is split into one range of consecutive games per thread, whose bounds each step moves
    toward the threads' speeds (:meth:`_thread_ranges`, :func:`rebalance`). A batch of fewer
    than ``parallel_from`` games runs the loops on one thread, where starting and joining the
    threads costs more than they save."""

    backend = "numba-parallel"
    parallel_from = PARALLEL_FROM
    kernel_draws_from = KERNEL_DRAWS_FROM

    @classmethod
    def loops_for(cls, games: int) -> dict[str, Any]:
        """The batch loops for ``games`` games: on numba's threads from ``parallel_from`` on."""
        return PARALLEL if games >= cls.parallel_from else SERIAL

    @staticmethod
    def pick_actions(legal_bits: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return random_actions(legal_bits, draws, ParallelGameBatch.loops_for(len(legal_bits)))

    @classmethod
    def draw_actions(cls, legal_bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """From ``kernel_draws_from`` games on, the draws made on the threads, each its
        range's (:func:`drawn_actions`); below, NumPy's, picked from on the threads (from
        ``parallel_from`` games) or on one."""
        if len(legal_bits) < cls.kernel_draws_from:
            return super().draw_actions(legal_bits, rng)
        return drawn_actions(legal_bits, rng, PARALLEL, int(numba.get_num_threads()))

    def loops(self) -> dict[str, Any]:
        return self.loops_for(len(self))

    def chunks(self) -> int:
        return int(numba.get_num_threads()) if self.loops() is PARALLEL else 1


register_backend("numba", CompiledGameBatch)
register_backend("numba-parallel", ParallelGameBatch)
