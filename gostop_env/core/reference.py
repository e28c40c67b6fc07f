"""The reference engine: one game of the rule book (docs/rules.md) in plain Python, to be read beside it.

It is the executable rule book. Each method names the section it follows; it favours
clarity over speed. The vectorised core (:mod:`gostop_env.core.batch`) must agree with it
on every state field, mask, event and payment (``tests/test_differential.py``).

Readings chosen where the rule book leaves room (docs/rules.md §14 lists these too):

- "The turn took at least one card" (sweep, §6) counts month cards only: a turn that
  only sent a joker to the pile does not sweep an already empty layout.
- The hand's "last turn" (``korean`` sweep exception, §12) is the turn after which every
  hand and the stock are empty.
- A ``korean`` would-be jjok or ppuk on the last stock card (§12) records no JJOK or
  PPUK event, since it is neither.
- Several steals from one opponent are taken one card at a time, each time the
  lowest junk card that opponent then holds (under ``september_dual`` the giver's
  reading of card 32 is taken afresh before each card).
- A seat with an empty hand and a non-empty stock flips without a decision even when
  it holds pass tokens (§4: "no play decision").
- When the cards run out, only the seat that moved last may stop (§8: the check is at
  the end of one's own turn); a higher score elsewhere does not prevent a nagari.
- ``korean`` go-bak with 3 players: "said go last" is the latest go in the hand.
- Bombs are counted in ``bombs`` under every preset; they raise the payment only with
  ``bomb_bonus``.
- The NAGARI event is counted for the seat whose turn ended the hand; CHONGTONG for
  each holder, and a chongtong with several holders has no winner (``winner == -1``).
- The nagari carry is bounded (:data:`~gostop_env.core.rules.MAX_CARRY`, 24): a hand
  starts with a carry of 0..24, and a nagari at 24 leaves it at 24 (under compounding
  the multiplier stops at 2^24). The rule book sets no bound; this one keeps every
  payment exact in the batch core's int64 arrays, and no real run of nagari reaches it.
- The go/stop target is at most :data:`~gostop_env.core.rules.MAX_TARGET` (100), far
  above any score a hand can reach.
- Engine bookkeeping, not a rule: while a choice is pending, the card that is waiting
  (the played or flipped card) is already listed in ``taken``, since it is taken
  whichever card is chosen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import actions as A
from .actions import IllegalActionError, Phase, integer_action
from .cards import (
    JUNK_VALUE,
    KIND,
    MONTH,
    NUM_MONTH_CARDS,
)
from .deck import deal_slices, decks_from_seeds, four_of_a_month, replace_layout_jokers, shuffled_decks, validate_deck
from .events import Event, Events
from .outcomes import Outcome, Result
from .position import Position
from .rules import MAX_CARRY, THREE_PPUKS, Rules, check_carry
from .scoring import PileReading, junk_value, read_pile

MONTHS = tuple(int(m) for m in MONTH)


def month_of(card: int) -> int:
    return MONTHS[card]


def is_joker(card: int) -> bool:
    return card >= NUM_MONTH_CARDS


class ReferenceGame:
    """One hand of Go-Stop. Create with a deck order (or :meth:`from_seed`), then call
    :meth:`step` with legal action ids until :attr:`done`.

    ``carry`` is the number of consecutive nagari hands right before this one (§14.11).
    The attributes (``hands``, ``piles``, ...) are for reading: only :meth:`step` changes a
    hand, since the engine remembers what it derives from them (each pile's reading).
    """

    def __init__(self, rules: Rules, deck: Sequence[int] | np.ndarray, carry: int = 0):
        self._deal_order(rules, validate_deck(rules, deck), int(check_carry(carry, scalar=True)))

    @classmethod
    def from_shuffle(cls, rules: Rules, rng: np.random.Generator, carry: int = 0) -> ReferenceGame:
        """A hand dealt from a deck that ``rng`` shuffles (``shuffled_decks``: every card
        once, void deals drawn again), so not checked a second time as a given deck is."""
        game = cls.__new__(cls)
        game._deal_order(rules, shuffled_decks(rules, rng, 1)[0], int(check_carry(carry, scalar=True)))
        return game

    def _deal_order(self, rules: Rules, order: np.ndarray, carry: int) -> None:
        """Deal the deck ``order`` (already checked, or made whole by a shuffle) and play the
        deal itself (§2, §3)."""
        hands, layout, stock = deal_slices(rules, order)
        self._setup(rules, hands, stock, carry)
        self.deck: np.ndarray | None = order  # the deck order dealt (None: from a position)
        self._deal(layout, stock)
        self.deal_events = self._events

    def _setup(self, rules: Rules, hands: list[list[int]], stock: list[int], carry: int) -> None:
        players = rules.players
        self.rules = rules
        self.carry = int(carry)
        self.hands: list[set[int]] = [set(h) for h in hands]
        self.layout: set[int] = set()
        self.stock: list[int] = list(stock)  # top card first
        self.piles: list[set[int]] = [set() for _ in range(players)]
        self._readings: list[PileReading | None] = [None] * players  # reading(seat) until its pile changes
        self.revealed: list[set[int]] = [set() for _ in range(players)]
        self.shakes = [0] * players
        self.bombs = [0] * players
        self.pass_tokens = [0] * players
        self.gos = [0] * players
        self.go_scores = [0] * players
        self.last_go_clock = [-1] * players
        self.turns = [0] * players  # own turn counter (§14.7)
        self.ppuks = [0] * players  # ppuks made this hand (§15)
        self.clock = 0  # turns taken by anyone
        self.stack_owner: dict[int, tuple[int, int]] = {}  # month -> (seat, its turn number)
        self.seat = 0
        self.phase = Phase.PLAY
        self.candidates: set[int] = set()
        self.taken: set[int] = set()  # taken this turn (with a card awaiting its choice); to the pile at its end
        self.result = Result.ONGOING
        self.winner = -1
        self.payments = [0] * players
        self._events = Events(players)
        self._legal: list[int] | None = None  # legal_actions() of the current state, once found

    @classmethod
    def from_position(cls, rules: Rules, position: Position) -> ReferenceGame:
        """Start from an explicit :class:`Position` (checked; ValueError if impossible)."""
        pos = position.filled(rules)
        game = cls.__new__(cls)
        game._setup(rules, pos.hands, pos.stock, pos.carry)
        game.deck = None
        game.layout = set(pos.layout)
        game.piles = [set(x) for x in pos.piles]
        game.revealed = [set(r) for r in pos.revealed]
        game.shakes, game.bombs, game.pass_tokens = pos.shakes, pos.bombs, pos.pass_tokens
        game.gos, game.go_scores, game.turns, game.ppuks = pos.gos, pos.go_scores, pos.turns, pos.ppuks
        game.last_go_clock = pos.last_go
        game.clock = max(pos.last_go) + 1
        game.stack_owner = dict(pos.stacks)
        game.deal_events = game._events
        game._start_turn(pos.seat)
        if pos.go_stop:
            game.phase = Phase.GO_STOP
        elif not game.hands[pos.seat]:
            game._flip()
        return game

    @classmethod
    def from_seed(cls, rules: Rules, seed: int, carry: int = 0) -> ReferenceGame:
        """The hand dealt by ``seed`` (the same deck as the core's ``from_seeds([seed])``)."""
        game = cls.__new__(cls)  # the deck a seed shuffles is whole: not checked again
        game._deal_order(rules, decks_from_seeds(rules, [seed])[0], int(check_carry(carry, scalar=True)))
        return game

    # ---- §3 before the first turn -------------------------------------------------
    def _deal(self, layout: list[int], stock: list[int]) -> None:
        layout, self.stock, jokers = replace_layout_jokers(layout, stock)
        self.layout = set(layout)
        for joker in jokers:
            self._joker_to_pile(0, joker)
        if self.rules.layout_four != "redeal" and four_of_a_month(layout) is not None:
            self._layout_four()
            return
        holders = [p for p in range(self.rules.players) if self._has_chongtong(p)]
        if holders:
            self._chongtong(holders)
        else:
            self._begin_turn(0)

    def _layout_four(self) -> None:
        """§15: four cards of one month on the layout end the hand at the deal: the dealer is
        paid as for a chongtong (``dealer_wins``), or the hand is a nagari."""
        if self.rules.layout_four == "nagari":
            self._events.add(0, Event.NAGARI)
            self._end_hand(Result.NAGARI)
            return
        self._chongtong([0])

    def _has_chongtong(self, seat: int) -> bool:
        return four_of_a_month(self.hands[seat]) is not None

    def _chongtong(self, holders: list[int]) -> None:
        """§3.3: each opponent pays each holder ``chongtong_chips``, flat."""
        for holder in holders:
            self._events.add(holder, Event.CHONGTONG)
            self._paid_by_each_opponent(holder, self.rules.chongtong_chips)
        self.winner = holders[0] if len(holders) == 1 else -1
        self._end_hand(Result.CHONGTONG)

    # ---- reading the game ----------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.phase == Phase.DONE

    @property
    def next_carry(self) -> int:
        """The carry for the next hand: +1 after a nagari (at most ``MAX_CARRY``), else 0."""
        return min(self.carry + 1, MAX_CARRY) if self.result == Result.NAGARI else 0

    def snapshot(self) -> dict[str, Any]:
        """Every state field as plain Python values (compared across engines)."""
        players = range(self.rules.players)
        return dict(
            seat=self.seat,
            phase=int(self.phase),
            legal=self.legal_actions(),
            hands=[sorted(h) for h in self.hands],
            layout=sorted(self.layout),
            taken=sorted(self.taken),
            piles=[sorted(p) for p in self.piles],
            stock=list(self.stock),
            revealed=[sorted(self.revealed[p] & self.hands[p]) for p in players],
            scores=self.scores(),
            gos=list(self.gos),
            go_scores=list(self.go_scores),
            shakes=list(self.shakes),
            bombs=list(self.bombs),
            pass_tokens=list(self.pass_tokens),
            turns=list(self.turns),
            ppuks=list(self.ppuks),
            stacks=dict(sorted(self.stack_owner.items())),
            result=self.result,
            winner=self.winner,
            payments=list(self.payments),
            next_carry=self.next_carry,
        )

    def reading(self, seat: int) -> PileReading:
        """The score reading of ``seat``'s pile, remembered until the pile changes."""
        reading = self._readings[seat]
        if reading is None:
            reading = self._readings[seat] = read_pile(self.piles[seat], self.rules)
        return reading

    def scores(self) -> list[int]:
        return [self.reading(p).score for p in range(self.rules.players)]

    def legal_actions(self) -> list[int]:
        """The legal action ids of the current decision (§11), ascending."""
        if self._legal is None:
            self._legal = self._find_legal_actions()
        return list(self._legal)

    def _find_legal_actions(self) -> list[int]:
        if self.phase == Phase.PLAY:
            return self._play_actions()
        if self.phase in (Phase.CHOOSE_HAND, Phase.CHOOSE_FLIP):
            return sorted(A.choose_action(c) for c in self.candidates)
        if self.phase == Phase.GO_STOP:
            return [A.GO, A.STOP]
        return []

    def legal_action_mask(self) -> np.ndarray:
        mask = np.zeros(A.NUM_ACTIONS, bool)
        mask[self.legal_actions()] = True
        return mask

    def _play_actions(self) -> list[int]:
        hand = self.hands[self.seat]
        legal = [A.PLAY + c for c in hand]
        for month in self._shakeable_months():
            legal.append(A.shake_action(month))
            if self._layout_of_month(month):
                legal.append(A.bomb_action(month))
        if self.pass_tokens[self.seat] > 0:
            legal.append(A.PASS)
        return sorted(legal)

    def _shakeable_months(self) -> list[int]:
        """Months with three unshaken cards in the current hand (§4, §14.3)."""
        seat = self.seat
        months = [MONTHS[c] for c in self.hands[seat] - self.revealed[seat] if not is_joker(c)]
        return sorted({m for m in months if months.count(m) == 3})

    def _layout_of_month(self, month: int) -> set[int]:
        return {c for c in self.layout if MONTHS[c] == month}

    def _opponents(self, seat: int) -> list[int]:
        """The other seats in turn order after ``seat`` (§14.6)."""
        p = self.rules.players
        return [(seat + k) % p for k in range(1, p)]

    # ---- taking a step -------------------------------------------------------------
    def step(self, action: int) -> Events:
        """Apply one action of the seat to move; return what happened until the next decision.
        ``action`` must be an integer (TypeError otherwise) and legal (:class:`IllegalActionError`)."""
        action = integer_action(action)
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(action, self.phase, legal)
        self._events = Events(self.rules.players)
        self._legal = None
        if self.phase == Phase.PLAY:
            self._play_phase_action(action)
        elif self.phase == Phase.CHOOSE_HAND:
            assert self.h is not None  # a choice for the card from hand is pending
            self._take_pair(self.h, action - A.CHOOSE, Outcome.CHOSE)
            self._flip()
        elif self.phase == Phase.CHOOSE_FLIP:
            assert self.f is not None  # a choice for the flipped card is pending
            self._take_pair(self.f, action - A.CHOOSE, None)
            self._end_turn()
        else:
            self._go() if action == A.GO else self._stop()
        return self._events

    def _play_phase_action(self, action: int) -> None:
        if action < A.SHAKE:
            self._play_card(action)
        elif action < A.BOMB:
            self._shake(action - A.SHAKE)
        elif action < A.PASS:
            self._bomb(action - A.BOMB)
        else:
            self.pass_tokens[self.seat] -= 1
            self._flip()

    # ---- §4 a turn -------------------------------------------------------------------
    def _begin_turn(self, seat: int) -> None:
        self.turns[seat] += 1
        self.clock += 1
        self._start_turn(seat)
        if not self.hands[seat]:  # flip-only turn, no play decision
            self._flip()

    def _start_turn(self, seat: int) -> None:
        self.seat = seat
        self.phase = Phase.PLAY
        self.taken = set()
        self.steals = 0
        self.h: int | None = None
        self.h_did: Outcome | None = None
        self.h_partner: int | None = None
        self.f: int | None = None

    def _shake(self, month: int) -> None:
        seat = self.seat
        self.revealed[seat] |= {c for c in self.hands[seat] if month_of(c) == month}
        self.shakes[seat] += 1
        self._events.add(seat, Event.SHAKE)

    def _bomb(self, month: int) -> None:
        seat = self.seat
        three = {c for c in self.hands[seat] if month_of(c) == month}
        fourth = self._layout_of_month(month)
        self.hands[seat] -= three
        self.layout -= fourth
        self.taken |= three | fourth
        self.pass_tokens[seat] += 2
        self.h_did = Outcome.BOMBED
        self.bombs[seat] += 1
        self._events.add(seat, Event.BOMB)
        if self.rules.bomb_bonus:  # korean: also a shake and one steal (§14.9)
            self.steals += 1
        self._flip()

    def _play_card(self, card: int) -> None:
        seat = self.seat
        self.hands[seat].remove(card)
        if is_joker(card):  # §4, §14.4: the next non-joker stock card stands in for it
            self._joker_to_pile(seat, card)
            self.steals += self.rules.bonus_steal  # §15
            stand_in = self._draw()
            if stand_in is None:
                self._end_turn()
                return
            card = stand_in
        self.h = card
        if self._match(card, played=True):
            self._flip()

    def _draw(self) -> int | None:
        """Top stock card, sending jokers on the way to the pile; None when the stock is empty."""
        while self.stock:
            card = self.stock.pop(0)
            if not is_joker(card):
                return card
            self._joker_to_pile(self.seat, card)
            self.steals += self.rules.bonus_steal  # §15
        return None

    def _joker_to_pile(self, seat: int, joker: int) -> None:
        self.piles[seat].add(joker)
        self._readings[seat] = None
        self._events.captured[seat].add(joker)
        self._events.add(seat, Event.JOKER)

    # ---- §5 matching -------------------------------------------------------------------
    def _match(self, card: int, played: bool) -> bool:
        """§5's first table for the played card (``played``) or, applied to its own month,
        the flipped card; False when a choice is awaited. What the played card did is
        remembered in ``h_did`` for the flip."""
        on_layout = self._layout_of_month(month_of(card))
        if len(on_layout) == 2:
            return self._pick_from_two(card, on_layout, Phase.CHOOSE_HAND if played else Phase.CHOOSE_FLIP)
        if len(on_layout) == 1:
            self._take_pair(card, on_layout.pop(), Outcome.PAIRED if played else None)
            return True
        if on_layout:
            self._stack_capture(card, on_layout)
        else:
            self.layout.add(card)
        if played:
            self.h_did = Outcome.STACKED if on_layout else Outcome.PLACED
        return True

    def _pick_from_two(self, card: int, two: set[int], phase: Phase) -> bool:
        """Two layout cards match ``card``: ask, or take the lower id when they are alike."""
        if self._needs_choice(two):  # the card will be taken whatever is chosen
            self.taken.add(card)
            self.candidates = set(two)
            self.phase = phase
            return False
        self._take_pair(card, min(two), Outcome.CHOSE if phase == Phase.CHOOSE_HAND else None)
        return True

    def _needs_choice(self, two: set[int]) -> bool:
        """§5 [gap] and §14.13: a choice only when the two differ in kind or junk value."""
        if self.rules.choice_rule == "always":
            return True
        a, b = sorted(two)
        return bool(KIND[a] != KIND[b] or JUNK_VALUE[a] != JUNK_VALUE[b])

    def _take_pair(self, card: int, target: int, did: Outcome | None) -> None:
        self.layout.remove(target)
        self.taken |= {card, target}
        self.candidates = set()
        if did is not None:  # the played card: remember it for the flip
            self.h_did, self.h_partner = did, target

    def _stack_capture(self, card: int, stack: set[int]) -> None:
        """§6.4: the fourth card takes a stack of three; a ja-ppuk steals twice."""
        seat, month = self.seat, month_of(card)
        self.layout -= stack
        self.taken |= stack | {card}
        self._events.add(seat, Event.STACK_CAPTURE)
        owner = self.stack_owner.pop(month, None)
        if owner is not None and self._is_ja_ppuk(*owner):
            self._events.add(seat, Event.JA_PPUK)
            self.steals += 2
        else:
            self.steals += 1

    def _is_ja_ppuk(self, owner: int, made_on_turn: int) -> bool:
        if owner != self.seat:
            return False
        if self.rules.ja_ppuk == "any_turn":
            return True
        return made_on_turn == self.turns[self.seat] - 1

    def _flip(self) -> None:
        """Flip the top stock card and resolve it (§5); skipped when the stock is empty."""
        f = self._draw()
        if f is None:
            self._end_turn()
            return
        self.f = f
        last_card = not self.stock
        if self.h is not None and month_of(f) == month_of(self.h):
            self._flip_onto_own_month(f, last_card)
        elif not self._match(f, played=False):
            return
        self._end_turn()

    def _flip_onto_own_month(self, f: int, last_card: bool) -> None:
        """§5 second table: the flipped card is of the played card's month."""
        seat, h, partner, exception = self.seat, self.h, self.h_partner, last_card and self.rules.last_card_exceptions
        assert h is not None  # the flip of a turn whose played card was resolved
        if self.h_did == Outcome.PLACED:  # jjok
            self._take_pair(f, h, None)
            if not exception:
                self._events.add(seat, Event.JJOK)
                self.steals += 1
        elif self.h_did == Outcome.PAIRED and exception:  # korean: takes all three, no steal
            self.taken.add(f)
        elif self.h_did == Outcome.PAIRED:  # ppuk
            assert partner is not None  # paired: it took one card
            self.taken -= {h, partner}
            self.layout |= {h, partner, f}
            self.stack_owner[month_of(f)] = (seat, self.turns[seat])
            self._events.add(seat, Event.PPUK)
            self._ppuk_payment(seat)
        else:  # Outcome.CHOSE: ttadak, the flipped card takes the other one
            (other,) = self._layout_of_month(month_of(f))
            self._take_pair(f, other, None)
            self._events.add(seat, Event.TTADAK)
            self.steals += 1
            if self.turns[seat] == 1:  # §15: a first-turn ttadak
                self._paid_by_each_opponent(seat, self.rules.first_ttadak_chips)

    def _ppuk_payment(self, seat: int) -> None:
        """§15: a ppuk is counted; one on the player's first turn is paid for at once, and
        under ``consecutive_ppuk`` so are ppuks that carry on a streak from the first turn
        (the n-th turn's pays n times ``first_ppuk_chips``, up to ``Rules.paid_ppuk_streak``)."""
        self.ppuks[seat] += 1
        turn = self.turns[seat]
        if self.ppuks[seat] == turn <= self.rules.paid_ppuk_streak:
            self._paid_by_each_opponent(seat, turn * self.rules.first_ppuk_chips)

    def _paid_by_each_opponent(self, seat: int, chips: int) -> None:
        """A flat payment of ``chips`` from each opponent to ``seat``, at once."""
        for other in self._opponents(seat):
            self.payments[seat] += chips
            self.payments[other] -= chips

    # ---- §6 end of the turn: captures, sweep, steals ------------------------------------
    def _end_turn(self) -> None:
        seat, taken = self.seat, self.taken
        self.piles[seat] |= taken
        self._readings[seat] = None
        self._events.captured[seat] |= taken
        self.taken = set()
        last_turn = self._cards_are_out()
        if not self.layout and taken and (self.rules.sweep_on_last_turn or not last_turn):
            self._events.add(seat, Event.SWEEP)
            self.steals += 1
        for giver in self._opponents(seat):
            for _ in range(self.steals):
                self._steal_one(seat, giver)
        if self.rules.three_ppuk_chips and self.ppuks[seat] >= THREE_PPUKS:
            self._three_ppuks(seat)
            return
        self._check_go_stop(last_turn)

    def _three_ppuks(self, seat: int) -> None:
        """§15: a third ppuk wins the hand at the end of its turn; each opponent pays
        ``three_ppuk_chips``, flat (as a chongtong: no multiplier, and the carry ends)."""
        self._paid_by_each_opponent(seat, self.rules.three_ppuk_chips)
        self.winner = seat
        self._end_hand(Result.THREE_PPUKS)

    def _steal_one(self, taker: int, giver: int) -> None:
        """The giver hands over its lowest-value junk card, lowest id among equals (§6);
        with ``steal_choice="highest"``, its highest-value one, highest id among equals."""
        september_junk = self.reading(giver).september_as_junk
        junk = [c for c in self.piles[giver] if junk_value(c, september_junk) > 0]
        if not junk:
            return
        pick = min if self.rules.steal_choice == "lowest" else max
        card = pick(junk, key=lambda c: (junk_value(c, september_junk), c))
        self.piles[giver].remove(card)
        self.piles[taker].add(card)
        self._readings[giver] = self._readings[taker] = None
        self._events.stolen[taker][giver].add(card)

    def _cards_are_out(self) -> bool:
        return not self.stock and not any(self.hands)

    # ---- §8 go or stop --------------------------------------------------------------------
    def _check_go_stop(self, last_turn: bool) -> None:
        seat = self.seat
        score = self.reading(seat).score
        qualifies = score >= self.rules.target_score and (self.gos[seat] == 0 or score > self.go_scores[seat])
        if qualifies and last_turn:
            self._stop()
        elif qualifies:
            self.phase = Phase.GO_STOP
        elif last_turn:
            self._events.add(seat, Event.NAGARI)
            self._end_hand(Result.NAGARI)
        else:
            self._next_turn()

    def _next_turn(self) -> None:
        """Play passes on; a seat with no cards while the stock is empty is skipped (§14.2)."""
        for seat in self._opponents(self.seat):
            if self.hands[seat] or self.stock:
                self._begin_turn(seat)
                return
        raise AssertionError("no seat can move although the cards are not out")

    def _go(self) -> None:
        seat = self.seat
        self.gos[seat] += 1
        self.go_scores[seat] = self.reading(seat).score
        self.last_go_clock[seat] = self.clock
        self._events.add(seat, Event.GO)
        self._next_turn()

    def _stop(self) -> None:
        seat = self.seat
        self._events.add(seat, Event.STOP)
        self.winner = seat
        shares = {loser: self._share(seat, loser) for loser in self._opponents(seat)}
        for payer, amount in self._apply_go_bak(shares).items():
            self.payments[payer] -= amount
            self.payments[seat] += amount
        self._end_hand(Result.STOP)

    # ---- §9 payment -----------------------------------------------------------------------
    def _share(self, winner: int, loser: int) -> int:
        """What ``loser`` owes ``winner`` before go-bak (§9): the product of :meth:`share_factors`."""
        return math.prod(factor for _, factor in self.share_factors(winner, loser))

    def share_factors(self, winner: int, loser: int) -> list[tuple[str, int]]:
        """What ``loser`` owes ``winner`` before go-bak (§9), as named factors: the base
        (score plus gos), then each multiplier (1 where it does not apply). Shown by the web
        table at the end of a hand."""
        rules, won, lost = self.rules, self.reading(winner), self.reading(loser)
        gos = self.gos[winner]
        pi_bak = won.junk_value >= 10 and lost.junk_value <= rules.pi_bak_threshold
        if rules.pi_bak_zero_exempt and lost.junk_value == 0:
            pi_bak = False
        return [
            ("score + gos", won.score + gos),
            ("go multiplier", self._go_factor(gos)),
            ("shakes and bombs", 2 ** (self.shakes[winner] + (self.bombs[winner] if rules.bomb_bonus else 0))),
            ("nagari carry", self._nagari_factor()),
            ("meong-bak (7 animals)", 2 if won.animals >= 7 else 1),
            ("gwang-bak (no brights)", 2 if won.bright_points > 0 and lost.brights == 0 else 1),
            ("pi-bak (few junk)", 2 if pi_bak else 1),
        ]

    def _go_factor(self, gos: int) -> int:
        if self.rules.go_multiplier == "once_over_3":
            return 2 if gos > 3 else 1
        return 2 ** max(gos - 2, 0)

    def _nagari_factor(self) -> int:
        if self.carry == 0:
            return 1
        return 2**self.carry if self.rules.nagari_compounding else 2

    def _apply_go_bak(self, shares: dict[int, int]) -> dict[int, int]:
        """korean go-bak (§12, §14.10): a loser who said go pays double (2 players) or
        pays every loser's share (3 players; the latest go among losers)."""
        goers = [p for p in shares if self.gos[p] > 0]
        if not self.rules.go_bak or not goers:
            return shares
        if len(shares) == 1:
            return {p: 2 * amount for p, amount in shares.items()}
        payer = max(goers, key=lambda p: self.last_go_clock[p])
        return {p: (sum(shares.values()) if p == payer else 0) for p in shares}

    def _end_hand(self, result: Result) -> None:
        self.result = result
        self.phase = Phase.DONE
        self._events.payments = list(self.payments)
