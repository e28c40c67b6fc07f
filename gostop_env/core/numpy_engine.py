"""The NumPy engine of the batched core: the rules as array operations on every game at once.

A step applies one action per game. Inside a step each game walks through the stages of
a turn (resolve the played card, flip, end the turn, begin the next) until it reaches its
next decision; every stage runs on the index array of the games that are in it, so the
work done is proportional to what actually happens. The rules are those of
:mod:`gostop_env.core.reference`, which this module must match exactly.

Speed: at a batch of thousands nearly every branch of the rules (a choice, a stack, a
steal, a bomb, a flip-only turn...) is taken by some game at every step, so a step's cost is
the number of NumPy calls it makes (~1-4 us each at 4096 games) far more than the number
of games. Hence table lookups instead of chains of ``np.where``, flat indexing instead of
2-D fancy indexing, one rescoring per turn, and rare branches on index subsets only where
they need more than a few calls. ``benchmarks/core_throughput.py`` measures the speed and
``benchmarks/core_profile.py`` shows where a step's time goes.
"""

from __future__ import annotations

import functools

import numpy as np

from . import actions as A
from . import cards as C
from .actions import Phase
from .bitboard import (
    ALL,
    BIT_OF,
    MONTH_BITS,
    NIBBLE_LOW,
    NONE,
    ONE,
    U64,
    bit,
    flat,
    highest_bit,
    lowest_bit,
    months_of_flags,
    nibble_counts,
)
from .deck import DEAL_PACKETS, DEALT, fisher_yates
from .events import NUM_EVENTS, BatchEvents, Event
from .outcomes import Outcome, Result
from .rules import THREE_PPUKS
from .scoring import BIT32, pile_scores, read_piles
from .state import DECIDE, END_TURN, FLIP, NEXT_TURN, RESOLVE_H, STATE_FIELDS, STOP, GameState

GO_STOP_WORD1 = U64((1 << (A.GO - 64)) | (1 << (A.STOP - 64)))


H_PLACED, H_PAIRED, H_CHOSE, H_STACKED, H_BOMBED = (  # plain ints: faster in array expressions
    int(o) for o in (Outcome.PLACED, Outcome.PAIRED, Outcome.CHOSE, Outcome.STACKED, Outcome.BOMBED)
)


#: After a turn, by 2 * (go/stop allowed) + (last turn): next turn; nagari; ask go or stop;
#: stop (the last turn's automatic stop, §8).
_AFTER_TURN_STAGE = np.array([NEXT_TURN, DECIDE, DECIDE, STOP], np.int8)


_AFTER_TURN_PHASE = np.array([Phase.PLAY, Phase.PLAY, Phase.GO_STOP, Phase.PLAY], np.int8)


#: [choice phase][choice asked]: a game's phase after a card is matched (PLAY, or the choice).
_PHASE_IF_CHOICE = {int(ph): np.array([Phase.PLAY, ph], np.int8) for ph in (Phase.CHOOSE_HAND, Phase.CHOOSE_FLIP)}


#: The event of a flip onto the played card's month, by outcome (0: none, counted as nothing).
_OWN_MONTH_EVENT = np.array([Event.PPUK, Event.PPUK, Event.JJOK, Event.TTADAK], np.int64)


#: Legal-action parts by phase: the hand's cards (PLAY only), the pass action (PLAY only,
#: with a token), and word 1's fixed bits (go and stop). Choices come from ``candidates``,
#: which is non-zero only while a choice is asked.
_PLAY_MASK = np.array([ALL if ph == Phase.PLAY else NONE for ph in Phase], U64)


_PASS_WORD = np.array([U64(1 << (A.PASS - 64)) if ph == Phase.PLAY else NONE for ph in Phase], U64)


_HIGH_WORD = np.array([GO_STOP_WORD1 if ph == Phase.GO_STOP else NONE for ph in Phase], U64)


def _decision_kinds() -> np.ndarray:
    """_DECISION_KIND[phase, action + 1]: which handler of ``_dispatch`` takes it (0: none)."""
    table = np.zeros((len(Phase), A.NUM_ACTIONS + 1), np.int8)
    play = table[Phase.PLAY]
    play[1 + A.PLAY : 1 + A.SHAKE], play[1 + A.SHAKE : 1 + A.BOMB] = 1, 2
    play[1 + A.BOMB : 1 + A.PASS], play[1 + A.PASS] = 3, 4
    table[Phase.CHOOSE_HAND, 1:], table[Phase.CHOOSE_FLIP, 1:], table[Phase.GO_STOP, 1:] = 5, 6, 7
    return table


_DECISION_KIND = _decision_kinds().reshape(-1)  # flat: [phase * (NUM_ACTIONS + 1) + action + 1]


MONTH_OF = C.MONTH.astype(np.int64)


_SHIFT_OF = np.array([4 * max(int(C.MONTH[c]), 0) for c in range(C.NUM_CARDS)], U64)


_KEY_BASE = np.array([16 * max(int(C.MONTH[c]), 0) for c in range(C.NUM_CARDS)], np.int64)


@functools.cache
def dealt_columns(players: int) -> tuple[np.ndarray, np.ndarray]:
    """The dealt deck positions grouped by where they go (seat 0, 1, ..., then the layout),
    and where each group starts: one ``reduceat`` deals every hand and the layout."""
    groups = [
        [i for s, a, b in DEAL_PACKETS[players] if s == seat for i in range(a, b)] for seat in [*range(players), -1]
    ]
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
    return np.array(sum(groups, []), np.intp), starts


@functools.cache
def match_tables(choice_rule: str) -> dict[str, np.ndarray]:
    """§5's first table for a card against the layout's cards of its month, precomputed
    for every key ``16 * month + nibble`` (nibble: which of the month's cards lie there).

    ``pick``: the layout cards the card takes (none when a choice is needed);
    ``place``: all-ones when the card is placed; ``keep``: all-ones when the card goes to
    the turn's captures (it takes, or a choice is asked); ``choose``: a choice between two
    is asked (§5 [gap], §14.13); ``candidates``: the month's four bits when a choice is
    asked, else 0; ``did``: the h_did code;
    ``partner``: the card it pairs with, or -1; ``stack``: a stack of three is taken (§6.4).
    """
    size = 12 * 16
    t = dict(
        pick=np.zeros(size, U64),
        place=np.zeros(size, U64),
        keep=np.zeros(size, U64),
        candidates=np.zeros(size, U64),
        choose=np.zeros(size, bool),
        did=np.zeros(size, np.int8),
        partner=np.full(size, -1, np.int8),
        stack=np.zeros(size, bool),
    )
    for month in range(12):
        for nibble in range(16):
            key, on = 16 * month + nibble, [4 * month + s for s in range(4) if nibble >> s & 1]
            t["stack"][key] = len(on) == 3
            t["did"][key] = (H_PLACED, H_PAIRED, H_CHOSE, H_STACKED, H_STACKED)[len(on)]
            differ = len(on) == 2 and (C.KIND[on[0]] != C.KIND[on[1]] or C.JUNK_VALUE[on[0]] != C.JUNK_VALUE[on[1]])
            t["choose"][key] = len(on) == 2 and (differ or choice_rule == "always")
            taken = on[:1] if len(on) in (1, 2) else on
            if len(on) == 0 or t["choose"][key]:
                taken = []
            t["pick"][key] = C.bits(taken)
            t["keep"][key] = ALL if taken or t["choose"][key] else NONE
            t["candidates"][key] = 0xF << (4 * month) if t["choose"][key] else 0
            t["place"][key] = ALL if not on else NONE
            t["partner"][key] = on[0] if len(on) in (1, 2) and taken else -1
    return t


class NumpyEngine(GameState):
    """The NumPy engine: how a step, a deal and the legal actions change a
    :class:`~gostop_env.core.state.GameState`, each stage of a turn run on the index array of
    the games in it. :class:`~gostop_env.core.batch.GameBatch` is its public face; the compiled
    backend overrides the step, the deal and the legal words, and keeps the rest."""

    @property
    def legal_bits(self) -> np.ndarray:
        """Legal actions as ``(B, 2)`` uint64 words: action a is bit ``a % 64`` of word ``a // 64``.

        Found when first read after a step or a deal (a batch that deals finished games
        again right after a step computes them once)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _deal_cards(self, index: np.ndarray, decks: np.ndarray, carry: np.ndarray) -> BatchEvents:
        """Every field of games ``index`` to its initial value, the cards of ``decks`` dealt, and
        what the deal decides (§3) done; returns the deal events of those games."""
        self._new_events()
        for name, field in STATE_FIELDS.items():
            if name != "stock":  # overwritten below
                getattr(self, name)[index] = field.initial
        self.carry[index] = carry
        players = self.rules.players
        self.stock[index] = decks[:, DEALT[players] :]
        self.stock_len[index] = decks.shape[1] - DEALT[players]
        columns, starts = dealt_columns(players)
        dealt = np.bitwise_or.reduceat(BIT_OF[decks[:, columns].astype(np.intp) + 1], starts, axis=1)
        self.hands[index] = dealt[:, :players]
        self.layout[index] = dealt[:, players]
        self._deal(index)
        return self._events.rows(index)

    def _legal_changed(self) -> None:
        """Forget the legal words after a deal: they are found again when next read."""
        self._legal = None

    @staticmethod
    def _shuffle(draws: np.ndarray) -> np.ndarray:
        """Deck orders from uniform draws (:func:`~gostop_env.core.deck.fisher_yates`)."""
        return fisher_yates(draws)

    # ---- §3 before the first turn ------------------------------------------------------
    def _deal(self, index: np.ndarray) -> None:
        self._replace_layout_jokers(index)
        if self.rules.layout_four != "redeal":
            four = ((nibble_counts(self.layout[index]) >> U64(2)) & NIBBLE_LOW) != 0
            if four.any():
                self._layout_four(index[four])
                index = index[~four]
        holders = ((nibble_counts(self.hands[index]) >> U64(2)) & NIBBLE_LOW) != 0
        chongtong = holders.any(axis=1)
        if chongtong.any():
            self._chongtong(index[chongtong], holders[chongtong])
        rest = index[~chongtong]
        self._begin_turn(rest, np.zeros(rest.size, np.int8))

    def _replace_layout_jokers(self, index: np.ndarray) -> None:
        jokers = U64(C.JOKER_BITS)
        while True:
            idx = index[(self.layout[index] & jokers) != 0]
            if not idx.size:
                return
            joker = lowest_bit(self.layout[idx] & jokers)
            self.layout[idx] &= ~joker
            self._joker_to_pile(idx, np.zeros(idx.size, np.int8), joker)
            top = self.stock[idx, self.stock_pos[idx]]
            self.stock_pos[idx] += 1
            self.layout[idx] |= bit(top)

    def _layout_four(self, idx: np.ndarray) -> None:
        """§15: four of a month on the layout end the hand at the deal (see the reference
        engine's ``_layout_four``)."""
        if self.rules.layout_four == "nagari":
            self._count(idx, np.zeros(idx.size, np.int8), Event.NAGARI)
            self._end_hand(idx, Result.NAGARI)
            return
        dealer = np.zeros((idx.size, self.rules.players), bool)
        dealer[:, 0] = True
        self._chongtong(idx, dealer)

    def _chongtong(self, idx: np.ndarray, holders: np.ndarray) -> None:
        players = self.rules.players
        n_holders = holders.sum(axis=1)
        pay = self.rules.chongtong_chips * (
            holders * players - n_holders[:, None]
        )  # each holder: + per opponent, - per other holder
        self.payments[idx] = pay
        self._events.counts[idx, :, Event.CHONGTONG] += holders.astype(np.int8)
        self.winner[idx] = np.where(n_holders == 1, holders.argmax(axis=1), -1)
        self._end_hand(idx, Result.CHONGTONG)

    def _play_legal(self, actions: np.ndarray) -> int:
        """Play ``actions`` if each is legal or ``NO_ACTION``; else change nothing. Returns the
        first game whose action is neither (-1: none, and the actions played)."""
        i = self._first_illegal(actions)
        if i < 0:
            self._play(actions)
        return i

    def _first_illegal(self, actions: np.ndarray) -> int:
        """The first game whose action is neither ``NO_ACTION`` nor legal (-1: none)."""
        in_range = (actions >= 0) & (actions < A.NUM_ACTIONS)
        safe = np.where(in_range, actions, 0)
        word = flat(self.legal_bits)[2 * np.arange(len(self)) + (safe >> 6)]
        legal = in_range & (((word >> (safe & 63).astype(U64)) & ONE) == ONE)
        bad = np.flatnonzero(~((actions == A.NO_ACTION) | (legal & ~self.done)))
        return int(bad[0]) if bad.size else -1

    def _play(self, actions: np.ndarray) -> None:
        """Apply checked actions: each decision, then every game to its next decision; the
        step's events in new arrays."""
        self._new_events()
        self._dispatch(actions)
        self._run_stages()
        self._legal = None

    def _dispatch(self, actions: np.ndarray) -> None:
        """Run each decision's handler on the games that took it."""
        handlers = (  # by decision kind - 1
            self._play_card,
            self._shake,
            self._bomb,
            self._pass,
            self._choose_hand,
            self._choose_flip,
            self._go_or_stop,
        )
        kind = _DECISION_KIND[self.phase.astype(np.intp) * (A.NUM_ACTIONS + 1) + actions + 1]
        for code in np.flatnonzero(np.bincount(kind, minlength=len(handlers))[1:]) + 1:
            idx = np.flatnonzero(kind == code)
            handlers[code - 1](idx, actions[idx])

    def _run_stages(self) -> None:
        """Move every game through the stages of its turn until it awaits a decision.

        Each pass runs the stages in turn order, so a game usually finishes its turn in one
        pass; a flip-only turn begun at the end of a pass (§14.2) takes another."""
        handlers = (
            (RESOLVE_H, self._resolve_h),
            (FLIP, self._flip),
            (END_TURN, self._end_turn),
            (NEXT_TURN, self._next_turn),
            (STOP, self._stop),
        )
        while (self._stage != DECIDE).any():
            for stage, handler in handlers:
                idx = np.flatnonzero(self._stage == stage)
                if idx.size:
                    handler(idx)

    # ---- decisions -------------------------------------------------------------------------
    def _play_card(self, idx: np.ndarray, card: np.ndarray) -> None:
        seat = self.seat[idx]
        flat(self.hands)[self._slot(idx, seat)] &= ~bit(card)
        self.h[idx] = card
        self._stage[idx] = RESOLVE_H
        joker = card >= C.NUM_MONTH_CARDS
        if joker.any():  # §14.4: the joker goes to the pile, the next stock card stands in
            j = idx[joker]
            self._joker_to_pile(j, seat[joker], bit(card[joker]))
            self.steals[j] += self.rules.bonus_steal  # §15
            sub = self._draw(j)
            self.h[j] = sub
            self._stage[j] = np.where(sub >= 0, RESOLVE_H, END_TURN)

    def _shake(self, idx: np.ndarray, action: np.ndarray) -> None:
        seat = self.seat[idx]
        month = (action - A.SHAKE).astype(U64)
        slot = self._slot(idx, seat)
        flat(self.revealed)[slot] |= flat(self.hands)[slot] & (U64(0xF) << (U64(4) * month))
        flat(self.shakes)[slot] += 1
        self._count(idx, seat, Event.SHAKE)

    def _bomb(self, idx: np.ndarray, action: np.ndarray) -> None:
        seat = self.seat[idx]
        month_bits = U64(0xF) << (U64(4) * (action - A.BOMB).astype(U64))
        slot = self._slot(idx, seat)
        flat(self.hands)[slot] &= ~month_bits
        self.layout[idx] &= ~month_bits
        self.taken[idx] |= month_bits
        flat(self.pass_tokens)[slot] += 2
        flat(self.bombs)[slot] += 1
        self.h_did[idx] = H_BOMBED
        self._count(idx, seat, Event.BOMB)
        if self.rules.bomb_bonus:
            self.steals[idx] += 1
        self._stage[idx] = FLIP

    def _pass(self, idx: np.ndarray, _action: np.ndarray) -> None:
        flat(self.pass_tokens)[self._slot(idx, self.seat[idx])] -= 1
        self._stage[idx] = FLIP

    def _choose_hand(self, idx: np.ndarray, action: np.ndarray) -> None:
        self._take_pair(idx, self.h[idx], (action - A.CHOOSE).astype(np.int8))
        self.h_did[idx] = H_CHOSE
        self.h_partner[idx] = action - A.CHOOSE
        self.phase[idx] = Phase.PLAY
        self._stage[idx] = FLIP

    def _choose_flip(self, idx: np.ndarray, action: np.ndarray) -> None:
        self._take_pair(idx, self.f[idx], (action - A.CHOOSE).astype(np.int8))
        self._stage[idx] = END_TURN

    def _go_or_stop(self, idx: np.ndarray, action: np.ndarray) -> None:
        go = action == A.GO
        if go.any():
            g = idx[go]
            seat = self.seat[g]
            slot = self._slot(g, seat)
            flat(self.gos)[slot] += 1
            flat(self.go_scores)[slot] = flat(self.scores)[slot]
            flat(self.last_go_clock)[slot] = self.clock[g]
            self._count(g, seat, Event.GO)
            self._stage[g] = NEXT_TURN
        if (~go).any():
            self._stage[idx[~go]] = STOP

    # ---- §5 matching -----------------------------------------------------------------------
    def _resolve_h(self, idx: np.ndarray) -> None:
        key, waiting = self._match(idx, self.h[idx], Phase.CHOOSE_HAND)
        self.h_did[idx] = self._tables["did"][key]
        self.h_partner[idx] = self._tables["partner"][key]
        self._stage[idx] = np.where(waiting, DECIDE, FLIP)

    def _match(self, idx: np.ndarray, card: np.ndarray, choice_phase: Phase) -> tuple[np.ndarray, np.ndarray]:
        """§5's first table for ``card`` against the layout.

        Returns (the table key: see ``_match_tables``, awaiting a choice)."""
        t, card = self._tables, card.astype(np.intp)
        layout = self.layout[idx]
        key = _KEY_BASE[card] + ((layout >> _SHIFT_OF[card]) & U64(0xF)).astype(np.intp)
        card_bit, pick = BIT_OF[card + 1], t["pick"][key]
        self.layout[idx] = (layout & ~pick) | (card_bit & t["place"][key])
        self.taken[idx] |= pick | (card_bit & t["keep"][key])  # a card facing a choice is taken whatever is chosen
        stack = np.flatnonzero(t["stack"][key])
        if stack.size:
            self._stack_capture(idx[stack], MONTH_OF[card[stack]])
        choose = t["choose"][key]
        self.candidates[idx] = layout & t["candidates"][key]  # zero unless a choice is asked
        self.phase[idx] = _PHASE_IF_CHOICE[int(choice_phase)][choose.view(np.int8)]
        return key, choose

    def _take_pair(self, idx: np.ndarray, card: np.ndarray, target: np.ndarray) -> None:
        t = bit(target)
        self.layout[idx] &= ~t
        self.taken[idx] |= bit(card) | t
        self.candidates[idx] = 0

    def _stack_capture(self, idx: np.ndarray, month: np.ndarray) -> None:
        """§6.4: a stack of three taken; a ja-ppuk (own earlier ppuk) steals twice."""
        seat = self.seat[idx]
        month_slot = idx * 12 + month
        ja = flat(self.stack_owner)[month_slot] == seat
        if self.rules.ja_ppuk == "previous_turn":
            ja &= flat(self.stack_turn)[month_slot] == flat(self.turns)[self._slot(idx, seat)] - 1
        flat(self.stack_owner)[month_slot] = -1
        self.steals[idx] += 1 + ja.astype(np.int8)
        self._count(idx, seat, Event.STACK_CAPTURE)
        self._count(idx, seat, Event.JA_PPUK, ja)

    def _draw(self, idx: np.ndarray) -> np.ndarray:
        """Top stock card of each game, jokers on the way to the pile; -1 when the stock is empty."""
        if self.rules.jokers == 0:  # no joker can be on the way
            pos = self.stock_pos[idx]
            has = pos < self.stock_len[idx]
            card = np.where(has, flat(self.stock)[idx * self.stock.shape[1] + pos * has], -1).astype(np.int8)
            self.stock_pos[idx] = pos + has
            return card
        card = np.full(idx.size, -1, np.int8)
        todo = np.arange(idx.size)
        while todo.size:
            g = idx[todo]
            has = self.stock_pos[g] < self.stock_len[g]
            todo, g = todo[has], g[has]
            top = self.stock[g, self.stock_pos[g]]
            self.stock_pos[g] += 1
            joker = top >= C.NUM_MONTH_CARDS
            card[todo[~joker]] = top[~joker]
            if joker.any():
                self._joker_to_pile(g[joker], self.seat[g[joker]], bit(top[joker]))
                self.steals[g[joker]] += self.rules.bonus_steal  # §15
            todo = todo[joker]
        return card

    def _flip(self, idx: np.ndarray) -> None:
        """Flip and resolve the top stock card (§5); skipped when the stock is empty."""
        f = self._draw(idx)
        self.f[idx] = f
        self._stage[idx] = END_TURN
        has = f >= 0
        idx, f = idx[has], f[has]
        h = self.h[idx]
        same = (h >= 0) & (MONTH_OF[f] == MONTH_OF[np.maximum(h, 0)])
        if same.any():
            last = self.stock_pos[idx[same]] == self.stock_len[idx[same]]
            self._flip_onto_own_month(idx[same], f[same], last)
        other = ~same
        if other.any():
            _, waiting = self._match(idx[other], f[other], Phase.CHOOSE_FLIP)
            self._stage[idx[other][waiting]] = DECIDE

    def _flip_onto_own_month(self, idx: np.ndarray, f: np.ndarray, last: np.ndarray) -> None:
        """§5's second table: jjok, ppuk, ttadak (and the korean last-card exceptions)."""
        seat, h, did = self.seat[idx], self.h[idx], self.h_did[idx]
        exception = last & self.rules.last_card_exceptions
        jjok, ttadak = did == H_PLACED, did == H_CHOSE
        ppuk = (did == H_PAIRED) & ~exception
        month = MONTH_OF[f]
        layout = self.layout[idx]
        # jjok takes the card placed by the play, ttadak the one the choice left
        other = layout & MONTH_BITS[month] & np.where(jjok | ttadak, ALL, NONE)
        stack = np.where(ppuk, bit(h) | bit(self.h_partner[idx]) | bit(f), NONE)
        self.layout[idx] = (layout & ~other) | stack
        self.taken[idx] = (self.taken[idx] | np.where(ppuk, NONE, bit(f) | other)) & ~stack
        if ppuk.any():
            p = idx[ppuk]
            month_slot = p * 12 + month[ppuk]
            flat(self.stack_owner)[month_slot] = seat[ppuk]
            flat(self.stack_turn)[month_slot] = flat(self.turns)[self._slot(p, seat[ppuk])]
            self._ppuk_payments(p, seat[ppuk])
        steal_jjok = jjok & ~exception
        self.steals[idx] += steal_jjok.astype(np.int8) + ttadak
        outcome = ppuk + 2 * steal_jjok + 3 * ttadak  # at most one of them
        self._count(idx, seat, _OWN_MONTH_EVENT[outcome], outcome > 0)
        if self.rules.first_ttadak_chips:  # §15: a first-turn ttadak
            first = ttadak & (flat(self.turns)[self._slot(idx, seat)] == 1)
            self._paid_by_each_opponent(idx[first], seat[first], np.int64(self.rules.first_ttadak_chips))

    def _ppuk_payments(self, idx: np.ndarray, seat: np.ndarray) -> None:
        """§15: ppuks counted, and paid for on a streak from the first turn (see the
        reference engine's ``_ppuk_payment``)."""
        slot = self._slot(idx, seat)
        flat(self.ppuks)[slot] += 1
        chips = self.rules.first_ppuk_chips
        if not chips:
            return
        turn = flat(self.turns)[slot].astype(np.int64)
        paid = (flat(self.ppuks)[slot] == turn) & (turn <= self.rules.paid_ppuk_streak)
        self._paid_by_each_opponent(idx[paid], seat[paid], turn[paid] * chips)

    def _paid_by_each_opponent(self, idx: np.ndarray, seat: np.ndarray, chips: np.ndarray) -> None:
        """Flat payments of ``chips`` (one, or one per game) from each opponent to ``seat``, at once."""
        players = self.rules.players
        pay = np.broadcast_to(np.asarray(chips, np.int64), idx.shape)
        won = (np.arange(players)[None, :] == seat[:, None]).astype(np.int64)
        self.payments[idx] += pay[:, None] * (won * players - 1)

    # ---- §6 end of the turn ----------------------------------------------------------------
    def _end_turn(self, idx: np.ndarray) -> None:
        seat = self.seat[idx]
        slot = self._slot(idx, seat)
        taken = self.taken[idx]
        flat(self.piles)[slot] |= taken
        flat(self._events.captured)[slot] |= taken
        self.taken[idx] = 0
        last_turn = self._cards_out(idx)
        sweep = (self.layout[idx] == 0) & (taken != 0)
        if not self.rules.sweep_on_last_turn:
            sweep &= ~last_turn
        steals = self.steals[idx] + sweep
        self._count(idx, seat, Event.SWEEP, sweep)
        thieves, changed = np.flatnonzero(steals), slot
        if thieves.size:  # the givers' piles changed too
            changed = np.concatenate([slot, self._steal(idx[thieves], seat[thieves], steals[thieves])])
        flat(self.scores)[changed] = pile_scores(flat(self.piles)[changed], self.rules)
        if self.rules.three_ppuk_chips:
            won = flat(self.ppuks)[slot] >= THREE_PPUKS
            if won.any():
                self._three_ppuks(idx[won], seat[won])
                idx, slot, last_turn = idx[~won], slot[~won], last_turn[~won]
        self._check_go_stop(idx, slot, last_turn)

    def _three_ppuks(self, idx: np.ndarray, seat: np.ndarray) -> None:
        """§15: a third ppuk wins the hand at the end of its turn, paid flat."""
        self._paid_by_each_opponent(idx, seat, np.int64(self.rules.three_ppuk_chips))
        self.winner[idx] = seat
        self._end_hand(idx, Result.THREE_PPUKS)

    def _cards_out(self, idx: np.ndarray) -> np.ndarray:
        out = self.stock_pos[idx] == self.stock_len[idx]
        empty = np.flatnonzero(out)
        out[empty] = np.bitwise_or.reduce(self.hands[idx[empty]], axis=1) == 0
        return out

    def _steal(self, idx: np.ndarray, taker: np.ndarray, steals: np.ndarray) -> np.ndarray:
        """Each opponent gives ``steals`` junk cards, one at a time (§6; see ``_junk_to_give``).
        Returns the givers' slots (their scores are left to the caller)."""
        players = self.rules.players
        piles, stolen = flat(self.piles), flat(self._events.stolen)
        to_slot, givers = self._slot(idx, taker), []
        for offset in range(1, players):
            giver = (taker + offset) % players
            from_slot = self._slot(idx, giver)
            givers.append(from_slot)
            for round_ in range(int(steals.max())):
                card = self._junk_to_give(piles[from_slot])
                if round_:
                    card &= np.where(steals > round_, ALL, NONE)
                piles[from_slot] &= ~card
                piles[to_slot] |= card
                stolen[to_slot * players + giver] |= card
        return np.concatenate(givers)

    def _junk_to_give(self, piles: np.ndarray) -> np.ndarray:
        """The junk card each giver hands over, as a bitboard (0 when it has none; §6)."""
        value2 = U64(C.VALUE2_JUNK)
        if self.rules.september_dual:
            as_junk = read_piles(piles, self.rules)["september_as_junk"]
            value2 = np.where(as_junk, value2 | BIT32, value2)
        plain, two, three = piles & U64(C.PLAIN_JUNK), piles & value2, piles & U64(C.VALUE3_JUNK)
        if self.rules.steal_choice == "lowest":
            return lowest_bit(np.where(plain != 0, plain, np.where(two != 0, two, three)))
        return highest_bit(np.where(three != 0, three, np.where(two != 0, two, plain)))

    def _update_scores(self, idx: np.ndarray, seat: np.ndarray | None = None) -> None:
        """Rescore the piles of ``seat`` (per game), or of every seat, in games ``idx``."""
        if seat is None:
            self.scores[idx] = pile_scores(self.piles[idx], self.rules)
        else:
            slot = self._slot(idx, seat)
            flat(self.scores)[slot] = pile_scores(flat(self.piles)[slot], self.rules)

    # ---- §8 go or stop ---------------------------------------------------------------------
    def _check_go_stop(self, idx: np.ndarray, slot: np.ndarray, last_turn: np.ndarray) -> None:
        """After a turn: go/stop decision, the last turn's automatic stop, nagari, or next turn."""
        score = flat(self.scores)[slot]
        gos = flat(self.gos)[slot]
        qualifies = (score >= self.rules.target_score) & ((gos == 0) | (score > flat(self.go_scores)[slot]))
        outcome = 2 * qualifies + last_turn
        self._stage[idx] = _AFTER_TURN_STAGE[outcome]
        self.phase[idx] = _AFTER_TURN_PHASE[outcome]
        nagari = np.flatnonzero(outcome == 1)
        if nagari.size:
            n = idx[nagari]
            self._count(n, self.seat[n], Event.NAGARI)
            self._end_hand(n, Result.NAGARI)

    def _next_turn(self, idx: np.ndarray) -> None:
        """Play passes to the next seat that can move (§14.2)."""
        players = self.rules.players
        seat = self.seat[idx].astype(np.int64)
        stock_left = self.stock_pos[idx] < self.stock_len[idx]
        chosen = np.full(idx.size, -1, np.int64)
        for offset in range(players - 1, 0, -1):  # the nearest seat wins: write it last
            cand = (seat + offset) % players
            can = stock_left | (flat(self.hands)[self._slot(idx, cand)] != 0)
            chosen = np.where(can, cand, chosen)
        self._begin_turn(idx, chosen.astype(np.int8))

    def _begin_turn(self, idx: np.ndarray, seat: np.ndarray) -> None:
        self.seat[idx] = seat
        slot = self._slot(idx, seat)
        flat(self.turns)[slot] += 1
        self.clock[idx] += 1
        self.taken[idx] = 0
        self.steals[idx] = 0
        self.h[idx] = -1
        self.h_did[idx] = 0
        self.h_partner[idx] = -1
        empty = flat(self.hands)[slot] == 0
        self.phase[idx] = int(Phase.PLAY)
        self._stage[idx] = np.where(empty, FLIP, DECIDE)  # an empty hand only flips (§14.2)

    def _stop(self, idx: np.ndarray) -> None:
        """The seat to move stops and is paid (§9)."""
        seat = self.seat[idx]
        self._count(idx, seat, Event.STOP)
        self.winner[idx] = seat
        won_at = np.arange(idx.size) * self.rules.players + seat  # the winner's entry of (n, P) arrays
        shares = self._shares(idx, seat, won_at)
        if self.rules.go_bak:
            shares = self._go_bak(idx, shares)
        flat(shares)[won_at] = 0
        pay = -shares
        flat(pay)[won_at] = shares.sum(axis=1)
        self.payments[idx] += pay  # on top of any paid during the hand (§15)
        self._stage[idx] = DECIDE
        self._end_hand(idx, Result.STOP)

    def _shares(self, idx: np.ndarray, seat: np.ndarray, won_at: np.ndarray) -> np.ndarray:
        """What each seat owes the winner ``seat`` before go-bak, ``(n, P)`` (the winner's own
        entry, at flat position ``won_at``, is junk)."""
        rules, slot = self.rules, self._slot(idx, seat)
        read = read_piles(self.piles[idx], rules)
        won = {k: flat(read[k])[won_at] for k in ("score", "animals", "bright_points", "junk")}
        gos = flat(self.gos)[slot].astype(np.int64)
        # every §9 multiplier is 1, 2 or a power of 2: they add up as one left shift
        doublings = flat(self.shakes)[slot] + (won["animals"] >= 7).astype(np.int64)
        if rules.bomb_bonus:
            doublings += flat(self.bombs)[slot]
        doublings += (gos > 3) if rules.go_multiplier == "once_over_3" else np.maximum(gos - 2, 0)
        carry = self.carry[idx]
        doublings += carry if rules.nagari_compounding else (carry > 0)
        chips = (won["score"] + gos) << doublings
        bright_bak = (won["bright_points"] > 0)[:, None] & (read["brights"] == 0)
        pi_bak = (won["junk"] >= 10)[:, None] & (read["junk"] <= rules.pi_bak_threshold)
        if rules.pi_bak_zero_exempt:
            pi_bak &= read["junk"] > 0
        return chips[:, None] << (bright_bak.astype(np.int64) + pi_bak)

    def _go_bak(self, idx: np.ndarray, shares: np.ndarray) -> np.ndarray:
        """korean go-bak (§12, §14.10): see the reference engine's ``_apply_go_bak``."""
        players, seat, rows = self.rules.players, self.seat[idx], np.arange(idx.size)
        is_loser = np.arange(players)[None, :] != seat[:, None]
        goers = is_loser & (self.gos[idx] > 0)
        if players == 2:
            return shares * np.where(goers, 2, 1)
        clocks = np.where(goers, self.last_go_clock[idx], -1)
        payer = clocks.argmax(axis=1)
        total = np.where(is_loser, shares, 0).sum(axis=1)
        moved = np.zeros_like(shares)
        moved[rows, payer] = total
        return np.where(goers.any(axis=1)[:, None], moved, shares)

    def _end_hand(self, idx: np.ndarray, result: int) -> None:
        self.result[idx] = result
        self.phase[idx] = int(Phase.DONE)
        self._stage[idx] = DECIDE
        self._events.payments[idx] = self.payments[idx]

    # ---- helpers -----------------------------------------------------------------------------
    def _joker_to_pile(self, idx: np.ndarray, seat: np.ndarray, jokers: np.ndarray) -> None:
        """Jokers (bitboards) reach ``seat``'s pile mid-turn: counted, and the score moves at once."""
        slot = self._slot(idx, seat)
        flat(self.piles)[slot] |= jokers
        flat(self._events.captured)[slot] |= jokers
        self._count(idx, seat, Event.JOKER)
        self._update_scores(idx, seat)

    def _count(
        self, idx: np.ndarray, seat: np.ndarray, event: Event | np.ndarray, when: np.ndarray | None = None
    ) -> None:
        """Count ``event`` (one, or one per game) for ``seat`` in games ``idx`` (where ``when`` is True)."""
        at = self._slot(idx, seat) * NUM_EVENTS + (event if isinstance(event, np.ndarray) else int(event))
        flat(self._events.counts)[at] += 1 if when is None else when

    def _new_events(self) -> None:
        """Start recording a step's events."""
        self._events = BatchEvents.empty(len(self), self.rules.players)

    def _slot(self, idx: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """Flat index of (game, seat) in the ``(B, P)`` arrays."""
        return idx * self.rules.players + seat

    # ---- §11 legal actions -----------------------------------------------------------------
    def _compute_legal(self) -> np.ndarray:
        """Legal-action words of every game, ``(B, 2)`` uint64, found for all games at once;
        each part is masked by the phase it belongs to."""
        phase = self.phase
        slot = self._slot(np.arange(len(self)), self.seat)
        hand = flat(self.hands)[slot] & _PLAY_MASK[phase]
        legal = np.empty((len(self), 2), U64)
        legal[:, 0] = hand
        legal[:, 1] = (
            (self.candidates << U64(A.CHOOSE - 64))
            | _HIGH_WORD[phase]
            | np.where(flat(self.pass_tokens)[slot] > 0, _PASS_WORD[phase], NONE)
        )
        counts = nibble_counts(hand & ~flat(self.revealed)[slot])
        threes = counts & (counts >> ONE) & ~(counts >> U64(2)) & NIBBLE_LOW
        rare = np.flatnonzero(threes)
        if rare.size:
            legal[rare] |= self._shake_bomb_words(rare, threes[rare])
        return legal

    def _shake_bomb_words(self, idx: np.ndarray, threes: np.ndarray) -> np.ndarray:
        """Shake and bomb action bits for games holding three unshaken cards of a month."""
        layout_counts = nibble_counts(self.layout[idx])
        singles = layout_counts & ~(layout_counts >> ONE) & ~(layout_counts >> U64(2)) & NIBBLE_LOW
        shakes, bombs = months_of_flags(threes), months_of_flags(threes & singles)
        words = np.zeros((idx.size, 2), U64)
        words[:, 0] = (shakes << U64(A.SHAKE)) | (bombs << U64(A.BOMB))  # bombs of months 0, 1
        words[:, 1] = bombs >> U64(64 - A.BOMB)
        return words
