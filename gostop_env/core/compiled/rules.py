"""The rules as scalar code, one game at a time: the same stages of a turn as the NumPy
engine (:mod:`gostop_env.core.numpy_engine`), in the same order, on the same state arrays,
and the legal-action words. The rules' options reach the kernels as one int64 array
(:func:`rule_options`, entries ``R_*``). The three engines (reference, NumPy, compiled) are
held equal on every field, mask, event and payment by ``tests/test_differential.py``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import actions as A
from .. import cards as C
from ..actions import Phase
from ..bitboard import NIBBLE_LOW
from ..events import Event
from ..outcomes import Outcome, Result
from ..rules import LAYOUT_FOUR_MODES, THREE_PPUKS, Rules
from ..scoring import BIT32, BRIGHT_POINTS, GODORI_POINTS, RIBBON_SET_POINTS, THRESHOLDS
from ..state import STAGES
from .arrays import NUM_EVENTS
from .intrinsics import bit, highest_bit, lowest_bit, months_of_flags, nibble_counts, popcount
from .numba_kit import U0, U1, U2, U15, U, inline, jit

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
    R_BONUS_STEAL,
    R_FIRST_PPUK_CHIPS,
    R_PPUK_STREAK,
    R_THREE_PPUK_CHIPS,
    R_FIRST_TTADAK_CHIPS,
    R_CHONGTONG_CHIPS,
    R_LAYOUT_FOUR,
) = range(19)

LAYOUT_FOUR_CODES = {mode: code for code, mode in enumerate(LAYOUT_FOUR_MODES)}
REDEAL, LAYOUT_NAGARI = LAYOUT_FOUR_CODES["redeal"], LAYOUT_FOUR_CODES["nagari"]


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
            rules.bonus_steal,
            rules.first_ppuk_chips,
            rules.paid_ppuk_streak,
            rules.three_ppuk_chips,
            rules.first_ttadak_chips,
            rules.chongtong_chips,
            LAYOUT_FOUR_CODES[rules.layout_four],
        ],
        np.int64,
    )


# ---- constants, typed for numba (uint64 mixed with int64 would become float64) -------------

JOKER_BITS, BRIGHTS, ANIMALS, RIBBONS = U(C.JOKER_BITS), U(C.BRIGHTS), U(C.ANIMALS), U(C.RIBBONS)

PLAIN_JUNK, VALUE2_JUNK, VALUE3_JUNK = U(C.PLAIN_JUNK), U(C.VALUE2_JUNK), U(C.VALUE3_JUNK)

RAIN_SHIFT = U(C.RAIN_BRIGHT)

GODORI = U(C.bits(C.GODORI_BIRDS))

RED_POEM, BLUE, PLAIN_RED = (U(C.bits(g)) for g in C.RIBBON_GROUPS.values())

ANIMAL_MIN, RIBBON_MIN, JUNK_MIN = THRESHOLDS["animals"], THRESHOLDS["ribbons"], THRESHOLDS["junk"]

BRIGHT_POINT_TABLE = BRIGHT_POINTS.astype(np.int64)

NUM_MONTH_CARDS, NUM_MONTHS = C.NUM_MONTH_CARDS, C.NUM_MONTHS


CHOOSE_SHIFT, SHAKE_SHIFT, BOMB_SHIFT, BOMB_HIGH_SHIFT = U(A.CHOOSE - 64), U(A.SHAKE), U(A.BOMB), U(64 - A.BOMB)

GO_STOP_WORD = U((1 << (A.GO - 64)) | (1 << (A.STOP - 64)))

PASS_WORD = U(1 << (A.PASS - 64))

PLAY, CHOOSE_HAND, CHOOSE_FLIP, GO_STOP, DONE = (int(p) for p in Phase)

PLACED, PAIRED, CHOSE, BOMBED = (int(o) for o in (Outcome.PLACED, Outcome.PAIRED, Outcome.CHOSE, Outcome.BOMBED))

STOPPED, NAGARI, CHONGTONG, WON_BY_PPUKS = (
    int(r) for r in (Result.STOP, Result.NAGARI, Result.CHONGTONG, Result.THREE_PPUKS)
)

E_PPUK, E_JA_PPUK, E_JJOK, E_TTADAK, E_SWEEP, E_STACK_CAPTURE = (int(e) for e in list(Event)[:6])

E_BOMB, E_SHAKE, E_JOKER, E_GO, E_STOP, E_CHONGTONG, E_NAGARI = (int(e) for e in list(Event)[6:])

# Stages of a turn, as in the NumPy core.
DECIDE, RESOLVE_H, FLIP, END_TURN, NEXT_TURN, STOP = (int(stage) for stage in STAGES)


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
        s.steals[i] += options[R_BONUS_STEAL]  # §15
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
    s.steals[i] += options[R_BONUS_STEAL]  # §15
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
        ppuk_payment(s, i, seat, options)
    elif jjok and not exception:
        s.steals[i] += 1
        count(s, ev, i, seat, E_JJOK)
    elif ttadak:
        s.steals[i] += 1
        count(s, ev, i, seat, E_TTADAK)
        if s.turns[at(s, i, seat)] == 1:  # §15: a first-turn ttadak
            paid_by_each_opponent(s, i, seat, options[R_FIRST_TTADAK_CHIPS])


@inline
def ppuk_payment(s: Any, i: int, seat: int, options: Any) -> None:
    """§15: a ppuk counted, and paid for on a streak from the first turn (the reference
    engine's ``_ppuk_payment``; ``R_PPUK_STREAK`` is the longest streak paid)."""
    s.ppuks[at(s, i, seat)] += 1
    turn = int(s.turns[at(s, i, seat)])
    if s.ppuks[at(s, i, seat)] == turn and turn <= options[R_PPUK_STREAK]:
        paid_by_each_opponent(s, i, seat, turn * options[R_FIRST_PPUK_CHIPS])


@inline
def paid_by_each_opponent(s: Any, i: int, seat: int, chips: int) -> None:
    """A flat payment of ``chips`` from each opponent to ``seat``, at once."""
    for p in range(s.players):
        s.payments[at(s, i, p)] += chips * (s.players - 1) if p == seat else -chips


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
    if options[R_THREE_PPUK_CHIPS] and s.ppuks[at(s, i, seat)] >= THREE_PPUKS:
        paid_by_each_opponent(s, i, seat, options[R_THREE_PPUK_CHIPS])  # §15: won at once, flat
        s.winner[i] = seat
        end_hand(s, ev, i, WON_BY_PPUKS)
        return DECIDE
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
    # what each seat owes, worked out in the game's row of the step's payments, which
    # end_hand overwrites: the stop's payments add to those made during the hand (§15)
    shares = ev.payments[at(s, i, 0) : at(s, i, players)]
    owed(s, i, seat, options, shares)
    if options[R_GO_BAK]:
        go_bak(s, i, seat, shares)
    shares[seat] = 0
    total = shares.sum()
    for p in range(players):
        s.payments[at(s, i, p)] += total if p == seat else -shares[p]
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
    """§3 before the first turn of a freshly dealt game: layout jokers, a layout of four of
    a month (§15), chongtong, seat 0."""
    while s.layout[i] & JOKER_BITS:
        joker = lowest_bit(s.layout[i] & JOKER_BITS)
        s.layout[i] &= ~joker
        joker_to_pile(s, ev, i, 0, joker, options)
        s.layout[i] |= bit(int(s.stock[i, s.stock_pos[i]]))
        s.stock_pos[i] += 1
    if options[R_LAYOUT_FOUR] != REDEAL and (nibble_counts(s.layout[i]) >> U2) & NIBBLE_LOW:
        if options[R_LAYOUT_FOUR] == LAYOUT_NAGARI:
            count(s, ev, i, 0, E_NAGARI)
            end_hand(s, ev, i, NAGARI)
            return
        count(s, ev, i, 0, E_CHONGTONG)
        s.winner[i] = 0
        paid_by_each_opponent(s, i, 0, options[R_CHONGTONG_CHIPS])
        end_hand(s, ev, i, CHONGTONG)
        return
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
    for p in range(players):  # each holder: + per opponent, - per other holder
        held = ev.counts[at(s, i, p) * NUM_EVENTS + U(E_CHONGTONG)] != 0
        s.payments[at(s, i, p)] = options[R_CHONGTONG_CHIPS] * ((players if held else 0) - holders)
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
