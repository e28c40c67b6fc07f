"""The vectorised core: a batch of B hands as a few typed arrays, stepped together.

Every set of cards (hands, capture piles, layout) is a ``uint64`` bitboard with bit
``card id`` set, so matching, scoring and masks are a handful of integer operations on
``(B,)`` or ``(B, P)`` arrays. The stock is a ``(B, S)`` int8 array of card ids read
from ``stock_pos`` on. Each game has a ``phase`` (:class:`~gostop_env.core.actions.Phase`)
and a ``seat`` to move.

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
import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, get_type_hints

import numpy as np

from . import actions as A
from . import cards as C
from .actions import IllegalActionError, Phase, integer_actions
from .bitboard import (
    ALL,
    BIT_OF,
    MONTH_BITS,
    NIBBLE_LOW,
    NONE,
    ONE,
    U64,
    Array,
    bit,
    flat,
    highest_bit,
    lowest_bit,
    months_of_flags,
    nibble_counts,
)
from .deck import (
    DEAL_PACKETS,
    DEALT,
    check_seed,
    decks_from_seeds,
    fisher_yates,
    fresh_decks,
    shuffled_decks,
    validate_deck,
)
from .events import NUM_EVENTS, BatchEvents, Event
from .indices import game_index, game_indices
from .outcomes import Outcome, Result
from .position import Position
from .rules import MAX_CARRY, Rules, check_carry
from .scoring import BIT32, pile_scores, read_piles

GO_STOP_WORD1 = U64((1 << (A.GO - 64)) | (1 << (A.STOP - 64)))
H_PLACED, H_PAIRED, H_CHOSE, H_STACKED, H_BOMBED = (  # plain ints: faster in array expressions
    int(o) for o in (Outcome.PLACED, Outcome.PAIRED, Outcome.CHOSE, Outcome.STACKED, Outcome.BOMBED)
)

# Stages of a turn inside a step.
DECIDE, RESOLVE_H, FLIP, END_TURN, NEXT_TURN, STOP = (np.int8(stage) for stage in range(6))
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
def _dealt_columns(players: int) -> tuple[np.ndarray, np.ndarray]:
    """The dealt deck positions grouped by where they go (seat 0, 1, ..., then the layout),
    and where each group starts: one ``reduceat`` deals every hand and the layout."""
    groups = [
        [i for s, a, b in DEAL_PACKETS[players] if s == seat for i in range(a, b)] for seat in [*range(players), -1]
    ]
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
    return np.array(sum(groups, []), np.intp), starts


@functools.cache
def _match_tables(choice_rule: str) -> dict[str, np.ndarray]:
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


def fit_array(array: Any, dtype: Any) -> np.ndarray:
    """``array`` (itself where it is one already; else a copy) as an array of ``dtype`` that
    is C-contiguous, writeable and aligned: how every state array is kept (the NumPy core
    writes through flat views, and the compiled kernels are typed by these flags too).
    (The flags are read here first: ``np.require`` alone costs five times as much where the
    array is already fit, as it mostly is.)"""
    if type(array) is np.ndarray and array.dtype == dtype:
        flags = array.flags
        if flags.c_contiguous and flags.writeable and flags.aligned:
            return array
    return np.require(np.asarray(array), dtype, ("C_CONTIGUOUS", "WRITEABLE", "ALIGNED"))


GAME, SEAT, MONTH, STOCK = "game", "seat", "month", "stock"
"""Shapes of state arrays after the batch axis: (), (players,), (12,), (stock width,)."""
BOARD = "board"
"""The values of a bitboard state array: sets of the deck's cards."""


@dataclass(frozen=True)
class State:
    """How one state array of :class:`GameBatch` is declared: its dtype, its shape after the
    batch axis (``GAME``, ``SEAT``, ``MONTH`` or ``STOCK``), its value before a deal, what
    it means, and which values it may hold (``values``, a key of :data:`VALUE_RANGES`, or
    ``BOARD`` for bitboards of the deck's cards). Every field so declared is allocated, reset
    by a deal, selected, concatenated and cloned together (:data:`STATE_FIELDS`), and an array
    set from outside is checked against its declaration first (:meth:`GameBatch.__setattr__`)."""

    dtype: type
    shape: str
    initial: int
    meaning: str
    values: str = "count"


class GameBatch:
    """B hands of Go-Stop under one :class:`Rules`, stepped together.

    Create with :meth:`from_seed`, :meth:`from_seeds` or :meth:`from_decks`; call
    :meth:`step` with one action per game: a legal action id, or ``NO_ACTION`` (-1) to leave
    a game untouched (the only action a finished game takes).
    State arrays are public attributes with a leading batch axis, declared below with
    their dtype, shape and meaning; treat them as read-only. Those from ``taken`` on hold a
    turn in progress (a pending choice), and ``_stage`` is scratch within a step.
    """

    # ---- the state: one declaration per array --------------------------------------------
    hands: Annotated[Array, State(U64, SEAT, 0, "each seat's hand (bitboard)", BOARD)]
    piles: Annotated[Array, State(U64, SEAT, 0, "each seat's capture pile (bitboard)", BOARD)]
    revealed: Annotated[
        Array, State(U64, SEAT, 0, "shaken cards shown to all (a subset of a hand at the shake)", BOARD)
    ]
    layout: Annotated[Array, State(U64, GAME, 0, "the layout (bitboard)", BOARD)]
    stock: Annotated[Array, State(np.int8, STOCK, -1, "stock card ids, top first, -1 past the end", "card")]
    stock_pos: Annotated[Array, State(np.int16, GAME, 0, "index in ``stock`` of the next card to flip", "position")]
    stock_len: Annotated[Array, State(np.int16, GAME, 0, "cards the stock was dealt", "position")]
    shakes: Annotated[Array, State(np.int8, SEAT, 0, "shakes said (§9's 2^shakes)")]
    bombs: Annotated[Array, State(np.int8, SEAT, 0, "bombs played")]
    pass_tokens: Annotated[Array, State(np.int8, SEAT, 0, "pass (flip-only) turns left, two per bomb")]
    gos: Annotated[Array, State(np.int8, SEAT, 0, "gos said")]
    go_scores: Annotated[Array, State(np.int16, SEAT, 0, "score when the seat last said go")]
    last_go_clock: Annotated[Array, State(np.int16, SEAT, -1, "``clock`` of the seat's last go (-1: none)", "clock")]
    turns: Annotated[Array, State(np.int16, SEAT, 0, "own turns begun (§14.7)")]
    scores: Annotated[Array, State(np.int16, SEAT, 0, "§7 score of each pile")]
    payments: Annotated[Array, State(np.int64, SEAT, 0, "chips each seat received (+) or paid (-) this hand", "chips")]
    clock: Annotated[Array, State(np.int16, GAME, 0, "turns taken by anyone")]
    seat: Annotated[Array, State(np.int8, GAME, 0, "the seat to move", "seat")]
    phase: Annotated[Array, State(np.int8, GAME, Phase.PLAY, "the decision awaited (:class:`Phase`)", "phase")]
    result: Annotated[Array, State(np.int8, GAME, Result.ONGOING, "how the hand ended (:class:`Result`)", "result")]
    winner: Annotated[Array, State(np.int8, GAME, -1, "the seat that stopped, or -1", "seat_or_none")]
    carry: Annotated[Array, State(np.int16, GAME, 0, "consecutive nagari hands before this one", "carry")]
    stack_owner: Annotated[
        Array, State(np.int8, MONTH, -1, "seat whose ppuk made the month's stack (-1: none)", "seat_or_none")
    ]
    stack_turn: Annotated[Array, State(np.int16, MONTH, 0, "that seat's turn number when it did")]
    candidates: Annotated[Array, State(U64, GAME, 0, "the two layout cards of a pending choice (bitboard)", BOARD)]
    taken: Annotated[Array, State(U64, GAME, 0, "cards taken this turn, to the pile at its end", BOARD)]
    steals: Annotated[Array, State(np.int8, GAME, 0, "junk steals owed at the end of this turn")]
    h: Annotated[Array, State(np.int8, GAME, -1, "the card from hand being resolved (-1: none)", "card")]
    h_did: Annotated[Array, State(np.int8, GAME, Outcome.NONE, "what ``h`` did (:class:`Outcome`)", "outcome")]
    h_partner: Annotated[Array, State(np.int8, GAME, -1, "the layout card ``h`` paired with (-1: none)", "card")]
    f: Annotated[Array, State(np.int8, GAME, -1, "the card flipped this turn (-1: none)", "card")]
    _stage: Annotated[
        Array, State(np.int8, GAME, DECIDE, "scratch: where a game is in its turn during a step", "stage")
    ]

    rules: Rules
    deal_events: BatchEvents  # what the deal did (jokers on the layout, chongtong)
    _events: BatchEvents  # what the current step did
    _tables: dict[str, Array]  # §5's match tables for the rules' choice rule
    _legal: Array | None  # legal-action words, computed when first read after a change
    backend: str = "numpy"  # which engine steps it: see batch_class
    rng: np.random.Generator | None = None  # deals fresh decks in reset_games (set by from_seed, or by you)

    def __setattr__(self, name: str, value: Any) -> None:
        """A state array set from outside must keep its shape and hold integers its
        declaration allows (ValueError or TypeError naming the array, and nothing changes): the
        compiled kernels index with them and trust them. It is kept as its declared dtype,
        C-contiguous and writeable (:func:`fit_array`: a copy where the array given is not).
        The core writes per-seat arrays through flat views (``flat``), and reshaping a strided
        array would give a copy that silently drops those writes."""
        field = STATE_FIELDS.get(name)
        if field is not None:
            value = self._checked_state(name, field, value)
        object.__setattr__(self, name, value)

    def _checked_state(self, name: str, field: State, value: Any) -> np.ndarray:
        """``value`` as state array ``name``, once its shape and values are checked."""
        axes = 1 if field.shape == GAME else 2
        if np.ndim(value) != axes:
            raise ValueError(f"state array {name} needs {axes} axes, got shape {np.shape(value)}")
        current = self.__dict__.get(name)
        if current is not None and np.shape(value) != current.shape:
            raise ValueError(f"state array {name} must keep its shape {current.shape}, got {np.shape(value)}")
        raw = np.asarray(value)
        if raw.dtype.kind not in "iu":
            raise TypeError(f"state array {name} holds integers, got {raw.dtype}")
        width = self.stock.shape[1] if "stock" in self.__dict__ else raw.shape[-1]
        check_values(name, field, raw, self.rules.players, width)
        return fit_array(raw, field.dtype)

    def _store(self, name: str, value: np.ndarray) -> None:
        """Set state array ``name`` of a batch being built from the core's own arrays, which
        hold valid states (no checks: :meth:`select` builds many small batches)."""
        object.__setattr__(self, name, fit_array(value, STATE_FIELDS[name].dtype))

    def __init__(self, rules: Rules, decks: np.ndarray, carry: np.ndarray | int = 0):
        """Deal ``decks`` (``(B, deck_size)``, assumed valid: use :meth:`from_decks` to check)."""
        decks = np.asarray(decks, np.int8)
        self._allocate(rules, len(decks), decks.shape[1] - DEALT[rules.players])
        self.deal_events = self._deal_into(np.arange(len(decks)), decks, carry)

    def _allocate(self, rules: Rules, batch: int, stock_width: int) -> None:
        """Arrays for ``batch`` games, every field at its initial value."""
        self.rules = rules
        self._tables = _match_tables(rules.choice_rule)
        sizes = {GAME: (), SEAT: (rules.players,), MONTH: (12,), STOCK: (stock_width,)}
        for name, field in STATE_FIELDS.items():
            self._store(name, np.full((batch, *sizes[field.shape]), field.initial, field.dtype))
        self._legal = None
        self._new_events()

    def _deal_into(self, index: np.ndarray, decks: np.ndarray, carry: np.ndarray | int) -> BatchEvents:
        """Reset games ``index`` to the start of the hands dealt by ``decks`` (§2, §3);
        returns their deal events."""
        carry = check_carry(carry)
        if carry.shape not in ((), (index.size,)):
            raise ValueError(f"carry must be one integer or one per game ({index.size}), got shape {carry.shape}")
        events = self._deal_cards(index, decks, carry)
        self._legal_changed()
        return events

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
        columns, starts = _dealt_columns(players)
        dealt = np.bitwise_or.reduceat(BIT_OF[decks[:, columns].astype(np.intp) + 1], starts, axis=1)
        self.hands[index] = dealt[:, :players]
        self.layout[index] = dealt[:, players]
        self._deal(index)
        return self._events.rows(index)

    @staticmethod
    def pick_actions(legal_bits: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """What :func:`random_legal_actions` picks with uniform ``draws`` in [0, 1), one per
        game: the legal action of rank ``int(draws[i] * count)``."""
        low, high = legal_bits[:, 0], legal_bits[:, 1]
        n_low = np.bitwise_count(low)
        total = n_low + np.bitwise_count(high)
        pick = (draws * total).astype(np.uint8)
        in_high = pick >= n_low
        word = np.where(in_high, high, low)
        action = _select_bit(word, pick - n_low * in_high) + U64(64) * in_high
        return np.where(total > 0, action.astype(np.int64), A.NO_ACTION)

    @classmethod
    def draw_actions(cls, legal_bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """:func:`random_legal_actions` on this backend: :meth:`pick_actions` with one draw
        per game, ``rng.random(len(legal_bits))``."""
        return cls.pick_actions(legal_bits, rng.random(len(legal_bits)))

    def _legal_changed(self) -> None:
        """Forget the legal words after a deal: they are found again when next read."""
        self._legal = None

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_decks(
        cls, rules: Rules, decks: Sequence[Sequence[int]], carry: np.ndarray | int = 0, backend: str | None = None
    ) -> GameBatch:
        """Deal explicit deck orders, each checked (ValueError naming the game and the fault).

        ``backend`` (here and in every constructor): ``"numpy"``, ``"numba"`` or
        ``"numba-parallel"`` (see :func:`batch_class`); ``None`` takes :func:`default_backend`."""
        checked = []
        for i, deck in enumerate(decks):
            try:
                checked.append(validate_deck(rules, deck))
            except ValueError as error:
                raise ValueError(f"game {i}: {error}") from None
        if not checked:
            raise ValueError("no deck orders given: a batch needs at least one game")
        return batch_class(backend)(rules, np.stack(checked), carry)

    @classmethod
    def from_seed(
        cls,
        rules: Rules,
        seed: int | np.random.Generator,
        batch_size: int,
        carry: np.ndarray | int = 0,
        backend: str | None = None,
    ) -> GameBatch:
        """``batch_size`` hands shuffled from one seed or generator."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))
        batch = batch_class(backend)(rules, shuffled_decks(rules, rng, batch_size), carry)
        batch.rng = rng  # reset_games without decks deals on from the same stream
        return batch

    @classmethod
    def from_seeds(
        cls, rules: Rules, seeds: Sequence[int], carry: np.ndarray | int = 0, backend: str | None = None
    ) -> GameBatch:
        """One hand per seed; hand i is the reference engine's ``from_seed(rules, seeds[i])``."""
        return batch_class(backend)(rules, decks_from_seeds(rules, seeds), carry)

    @classmethod
    def from_positions(cls, rules: Rules, positions: Sequence[Position], backend: str | None = None) -> GameBatch:
        """Start one game from each explicit :class:`Position` (each checked)."""
        filled = [p.filled(rules) for p in positions]
        if not filled:
            raise ValueError("no positions given: a batch needs at least one game")
        width = max([len(p.stock) for p in filled] + [rules.deck_size - DEALT[rules.players]])
        kind = batch_class(backend)
        new = kind.__new__(kind)
        new._allocate(rules, len(filled), width)
        for i, p in enumerate(filled):
            new._load(i, p)
        all_games = np.arange(len(filled))
        new._update_scores(all_games)
        new.deal_events = new._events
        go_stop = np.array([p.go_stop for p in filled])
        new.phase[go_stop] = Phase.GO_STOP
        flip_only = ~go_stop & (new.hands[all_games, new.seat] == 0)
        new._stage[flip_only] = FLIP
        new._run_stages()
        new._legal = None
        return new

    def _load(self, i: int, p: Position) -> None:
        self.stock[i, : len(p.stock)] = p.stock
        self.stock_len[i] = len(p.stock)
        self.carry[i] = p.carry
        self.hands[i] = [C.bits(h) for h in p.hands]
        self.piles[i] = [C.bits(x) for x in p.piles]
        self.revealed[i] = [C.bits(r) for r in p.revealed]
        self.layout[i] = C.bits(p.layout)
        for name in ("shakes", "bombs", "pass_tokens", "gos", "go_scores", "turns"):
            getattr(self, name)[i] = getattr(p, name)
        self.last_go_clock[i] = p.last_go
        self.clock[i] = max(p.last_go) + 1
        for month, (owner, turn) in p.stacks.items():
            self.stack_owner[i, month], self.stack_turn[i, month] = owner, turn
        self.seat[i] = p.seat

    # ---- §3 before the first turn ------------------------------------------------------
    def _deal(self, index: np.ndarray) -> None:
        self._replace_layout_jokers(index)
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

    def _chongtong(self, idx: np.ndarray, holders: np.ndarray) -> None:
        players = self.rules.players
        n_holders = holders.sum(axis=1)
        pay = 5 * (holders * players - n_holders[:, None])  # each holder: +5 per opponent, -5 per other holder
        self.payments[idx] = pay
        self._events.counts[idx, :, Event.CHONGTONG] += holders.astype(np.int8)
        self.winner[idx] = np.where(n_holders == 1, holders.argmax(axis=1), -1)
        self._end_hand(idx, Result.CHONGTONG)

    # ---- reading the batch -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.phase)

    @property
    def done(self) -> np.ndarray:
        return self.phase == int(Phase.DONE)  # a plain int: comparing with an IntEnum is slower

    def done_games(self) -> np.ndarray:
        """The indices of the games whose hand is over, in order: ``np.flatnonzero(self.done)``,
        for dealing them again (:meth:`reset_games`)."""
        return np.flatnonzero(self.done)

    @property
    def next_carry(self) -> np.ndarray:
        """Carry for each game's next hand: +1 after a nagari (at most ``MAX_CARRY``), else 0."""
        return np.where(self.result == Result.NAGARI, np.minimum(self.carry + 1, MAX_CARRY), 0).astype(np.int16)

    @property
    def legal_bits(self) -> np.ndarray:
        """Legal actions as ``(B, 2)`` uint64 words: action a is bit ``a % 64`` of word ``a // 64``.

        Found when first read after a step or a deal (a batch that deals finished games
        again right after a step computes them once)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def legal_action_mask(self) -> np.ndarray:
        """``(B, 125)`` bool mask of the legal actions (§11); all False for finished games."""
        as_bytes = self.legal_bits.view(np.uint8).reshape(len(self), 16)
        return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, : A.NUM_ACTIONS].astype(bool)

    def legal_actions(self, i: int) -> list[int]:
        """Legal action ids of game ``i``, ascending."""
        words = [int(w) for w in self.legal_bits[game_index(i, len(self))]]
        return [a for a in range(A.NUM_ACTIONS) if words[a >> 6] >> (a & 63) & 1]

    def snapshot(self, i: int) -> dict[str, Any]:
        """Game ``i``'s state as plain Python values, in the reference engine's format."""
        i = game_index(i, len(self))
        players = range(self.rules.players)
        pos, length = int(self.stock_pos[i]), int(self.stock_len[i])
        stacks = {
            m: (int(self.stack_owner[i, m]), int(self.stack_turn[i, m]))
            for m in range(12)
            if self.stack_owner[i, m] >= 0
        }
        return dict(
            seat=int(self.seat[i]),
            phase=int(self.phase[i]),
            legal=self.legal_actions(i),
            hands=[C.cards_of(self.hands[i, p]) for p in players],
            layout=C.cards_of(self.layout[i]),
            taken=C.cards_of(self.taken[i]),
            piles=[C.cards_of(self.piles[i, p]) for p in players],
            stock=[int(c) for c in self.stock[i, pos:length]],
            revealed=[C.cards_of(self.revealed[i, p] & self.hands[i, p]) for p in players],
            scores=self.scores[i].tolist(),
            gos=self.gos[i].tolist(),
            go_scores=self.go_scores[i].tolist(),
            shakes=self.shakes[i].tolist(),
            bombs=self.bombs[i].tolist(),
            pass_tokens=self.pass_tokens[i].tolist(),
            turns=self.turns[i].tolist(),
            stacks=stacks,
            result=int(self.result[i]),
            winner=int(self.winner[i]),
            payments=self.payments[i].tolist(),
            next_carry=int(self.next_carry[i]),
        )

    def replace_hidden(self, hands: Array, stock: Array) -> None:
        """Deal hidden cards anew, in place (determinization, :mod:`gostop_env.determinize`):
        ``hands`` ``(B, P)`` bitboards and ``stock`` ``(B, S)`` card ids replace the current
        ones. The stock's flipped part (before ``stock_pos``) must not change, and every card
        must still lie in exactly one place (ValueError otherwise)."""
        given = {"hands": np.asarray(hands), "stock": np.asarray(stock)}
        if given["hands"].shape != self.hands.shape or given["stock"].shape != self.stock.shape:
            raise ValueError(f"hands and stock must keep their shapes {self.hands.shape} and {self.stock.shape}")
        for name, raw in given.items():
            if raw.size and raw.dtype.kind not in "iu":
                raise TypeError(f"{name} holds integers, got {raw.dtype}")
            check_values(name, STATE_FIELDS[name], raw, self.rules.players, self.stock.shape[1])
        hands, stock = given["hands"].astype(U64), given["stock"].astype(np.int8)
        flipped = np.arange(stock.shape[1]) < self.stock_pos[:, None]
        if (stock[flipped] != self.stock[flipped]).any():
            raise ValueError("the stock's flipped cards cannot change")
        unplayed = np.where(~flipped & (np.arange(stock.shape[1]) < self.stock_len[:, None]), stock, -1)
        places = np.concatenate(
            [
                hands,
                self.piles,
                self.layout[:, None],
                self.taken[:, None],
                np.bitwise_or.reduce(bit(unplayed), axis=1)[:, None],
            ],
            axis=1,
        )
        everything = U64((1 << self.rules.deck_size) - 1)
        if (
            (np.bitwise_or.reduce(places, axis=1) != everything)
            | (np.bitwise_count(places).sum(axis=1) != self.rules.deck_size)
        ).any():
            raise ValueError("every card must lie in exactly one place")
        self.hands, self.stock, self._legal = hands, stock, None

    # ---- batches of states -------------------------------------------------------------
    def clone(self) -> GameBatch:
        """An independent copy (for search and analysis)."""
        return self.select(np.arange(len(self)))

    def select(self, index: np.ndarray | Sequence[int] | slice) -> GameBatch:
        """A new batch of the chosen games, copied: an array of game indices (a game may come
        more than once), a boolean mask of every game, or a slice."""
        if not isinstance(index, slice):
            mask = np.asarray(index)
            if mask.dtype == bool and mask.shape != (len(self),):
                raise ValueError(f"a boolean mask of games needs {len(self)} entries, got shape {mask.shape}")
            index = np.flatnonzero(mask) if mask.dtype == bool else game_indices(mask, len(self))
        new = object.__new__(type(self))
        new.rules, new._tables = self.rules, self._tables
        for name in STATE_FIELDS:
            new._store(name, np.array(getattr(self, name)[index]))
        new._legal = None
        new._new_events()
        new.deal_events = new._events
        return new

    @staticmethod
    def concatenate(batches: Sequence[GameBatch]) -> GameBatch:
        """One batch of all games of ``batches`` (same rules), in order."""
        if not batches:
            raise ValueError("concatenate needs at least one batch")
        rules = batches[0].rules
        if any(b.rules != rules for b in batches):
            raise ValueError("cannot concatenate batches played under different rules")
        width = max(b.stock.shape[1] for b in batches)
        new = batches[0].select(slice(None))
        for name, field in STATE_FIELDS.items():
            parts = [getattr(b, name) for b in batches]
            if field.shape == STOCK:  # the widest stock; the others padded with -1
                parts = [np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=-1) for p in parts]
            new._store(name, np.concatenate(parts))
        new._new_events()
        new.deal_events = new._events
        return new

    def reset_games(
        self, index: np.ndarray | Sequence[int], decks: np.ndarray | None = None, carry: np.ndarray | int = 0
    ) -> BatchEvents:
        """Deal new hands from ``decks`` into the games at ``index`` (each game once), in place
        (auto-reset); returns the deal events of those games, in the order of ``index``. Card
        ids must be the rules' (ValueError naming the row otherwise); that each deck is an
        order of the cards and not a void deal is not checked here:
        :func:`~gostop_env.core.deck.validate_deck` checks hand-made decks fully.

        Without ``decks``, fresh ones are dealt from the batch's own generator ``rng`` (which
        :meth:`from_seed` sets; assign one to any batch), shuffled inside the compiled
        kernels on the compiled backends: the same decks on every backend
        (:func:`~gostop_env.core.deck.fresh_decks`)."""
        index = game_indices(index, len(self), unique=True)
        if decks is None:
            if self.rng is None:
                raise ValueError("this batch has no generator to deal from: give decks, or set batch.rng")
            decks = fresh_decks(self.rules, self.rng, index.size, self._shuffle)
        else:
            decks = check_decks(self.rules, decks, index.size)
        return self._deal_into(index, decks, carry)

    @staticmethod
    def _shuffle(draws: np.ndarray) -> np.ndarray:
        """Deck orders from uniform draws (:func:`~gostop_env.core.deck.fisher_yates`)."""
        return fisher_yates(draws)

    # ---- taking a step -----------------------------------------------------------------
    def step(self, actions: np.ndarray | Sequence[int]) -> BatchEvents:
        """Apply one action per game; return each game's events until its next decision.
        Actions must be integers (Python or NumPy; TypeError otherwise, never rounded) and
        legal, or ``NO_ACTION`` (:class:`IllegalActionError` names the first game at fault)."""
        actions = integer_actions(actions)
        if actions.shape != (len(self),):
            raise ValueError(f"expected {len(self)} actions (one per game), got {actions.shape[0]}")
        i = self._play_legal(actions)
        if i >= 0:
            raise IllegalActionError(int(actions[i]), Phase(self.phase[i]), self.legal_actions(i), game=i)
        return self._events

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
        steal_jjok = jjok & ~exception
        self.steals[idx] += steal_jjok.astype(np.int8) + ttadak
        outcome = ppuk + 2 * steal_jjok + 3 * ttadak  # at most one of them
        self._count(idx, seat, _OWN_MONTH_EVENT[outcome], outcome > 0)

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
        self._check_go_stop(idx, slot, last_turn)

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
        self.payments[idx] = pay
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


BACKENDS = ("numpy", "numba", "numba-parallel")
"""The engines that can step a :class:`GameBatch`: the NumPy core, and the compiled backend
(:mod:`~gostop_env.core.compiled`, needs numba) on one thread or on numba's threads."""
BACKEND_VARIABLE = "GOSTOP_BACKEND"
"""Environment variable naming the backend for a whole program (when a constructor gets none)."""


@functools.cache
def _numba_importable() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def available_backends() -> tuple[str, ...]:
    """The backends this installation can run (the compiled ones need ``pip install "gostop[fast]"``)."""
    return BACKENDS if _numba_importable() else BACKENDS[:1]


def default_backend() -> str:
    """``$GOSTOP_BACKEND`` when set, else the fastest backend installed (``"numba"`` when numba
    imports, else ``"numpy"``)."""
    return os.environ.get(BACKEND_VARIABLE) or ("numba" if _numba_importable() else "numpy")


def batch_class(backend: str | None = None) -> type[GameBatch]:
    """The :class:`GameBatch` class that runs ``backend`` (``None``: :func:`default_backend`).

    ValueError for an unknown name; ImportError, saying what to install, for a compiled
    backend without numba."""
    name = default_backend() if backend is None else backend
    if name not in BACKENDS:
        source = f"${BACKEND_VARIABLE}" if backend is None else "backend"
        raise ValueError(f"{source} must be one of {', '.join(BACKENDS)}; got {name!r}")
    if name not in _REGISTERED:
        if not _numba_importable():
            raise ImportError(f'backend {name!r} needs numba: pip install "gostop[fast]" (or use backend="numpy")')
        importlib.import_module(COMPILED_MODULE)  # registers the compiled backends; imports numba only now
    return _REGISTERED[name]


COMPILED_MODULE = "gostop_env.core.compiled"
"""The module that defines the compiled backends and registers them when imported."""
_REGISTERED: dict[str, type[GameBatch]] = {"numpy": GameBatch}


def register_backend(name: str, kind: type[GameBatch]) -> None:
    """Make ``kind`` the class of backend ``name`` (called by the module that defines it)."""
    _REGISTERED[name] = kind


STATE_FIELDS: dict[str, State] = {
    name: hint.__metadata__[0]
    for name, hint in get_type_hints(GameBatch, include_extras=True).items()
    if isinstance(getattr(hint, "__metadata__", (None,))[0], State)
}
"""Every state array of :class:`GameBatch`, as declared in its class body."""

DECK_BITS = U64((1 << C.NUM_CARDS) - 1)
VALUE_RANGES: dict[str, Any] = {
    "count": lambda players, width: (0, None),
    "chips": lambda players, width: (None, None),
    "card": lambda players, width: (-1, C.NUM_CARDS - 1),
    "position": lambda players, width: (0, width),
    "clock": lambda players, width: (-1, None),
    "seat": lambda players, width: (0, players - 1),
    "seat_or_none": lambda players, width: (-1, players - 1),
    "phase": lambda players, width: (0, len(Phase) - 1),
    "result": lambda players, width: (0, len(Result) - 1),
    "outcome": lambda players, width: (0, len(Outcome) - 1),
    "stage": lambda players, width: (0, int(STOP)),
    "carry": lambda players, width: (0, MAX_CARRY),
}
"""Lowest and highest value (None: unbounded) a state array of each ``values`` kind may
hold, given the players and the stock's width."""


def check_decks(rules: Rules, decks: Any, games: int) -> np.ndarray:
    """``decks`` as ``(games, deck_size)`` int8 of card ids of the rules' deck (ValueError
    naming the first row with another id; TypeError for non-integers). That each row is an
    order of the deck is not checked here (it costs as much as a deal of the compiled core):
    :func:`~gostop_env.core.deck.validate_deck` checks that."""
    raw = np.asarray(decks)
    expected = (games, rules.deck_size)
    if raw.shape != expected:
        raise ValueError(f"{games} games to reset need decks of shape {expected}, got {raw.shape}")
    if raw.size == 0:
        return raw.astype(np.int8)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"deck card ids are integers, got {raw.dtype}")
    if raw.min() < 0 or raw.max() >= rules.deck_size:
        row = int(np.flatnonzero(((raw < 0) | (raw >= rules.deck_size)).any(axis=1))[0])
        raise ValueError(f"deck {row} holds card ids outside 0..{rules.deck_size - 1}: {raw[row].tolist()}")
    return raw.astype(np.int8, copy=False)


def check_values(name: str, field: State, values: np.ndarray, players: int, width: int) -> None:
    """ValueError naming ``name`` and the first game at fault unless every entry of
    ``values`` is one its declaration allows (bitboards: cards of the deck only)."""
    if values.size == 0:
        return
    if field.values == BOARD:
        bad = (values.astype(U64) & ~DECK_BITS) != 0 if values.dtype.kind == "u" else values < 0
        if bad.any():
            game = int(np.argwhere(bad)[0][0])
            raise ValueError(f"state array {name}: game {game} holds a bit that is no card (0..{C.NUM_CARDS - 1})")
        return
    low, high = VALUE_RANGES[field.values](players, width)
    limits = np.iinfo(field.dtype)  # and never a value its dtype would wrap
    low = limits.min if low is None else max(low, limits.min)
    high = limits.max if high is None else min(high, limits.max)
    bad = (values < low) | (values > high)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        span = f"{low} .. {high}".replace("None", "")
        raise ValueError(f"state array {name}: game {at[0]} holds {int(values[at])}, outside {span}")


def random_legal_actions(legal_bits: np.ndarray, rng: np.random.Generator, backend: str | None = None) -> np.ndarray:
    """One uniformly random legal action per game from ``GameBatch.legal_bits``
    (``NO_ACTION`` where none is legal), without building the boolean mask. Every backend
    (``None``: :func:`default_backend`) picks the same actions from the same generator, and
    leaves the generator as ``rng.random(len(legal_bits))`` leaves it."""
    return batch_class(backend).draw_actions(legal_bits, rng)


def _select_bit(word: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Index (``uint64``) of the ``rank``-th (from 0) set bit of each word, by binary
    search on popcounts: each round keeps the lower half of the remaining window or
    skips past it."""
    position = np.zeros(len(word), U64)
    rank = rank.astype(np.uint8)
    for width in (32, 16, 8, 4, 2, 1):
        below = np.bitwise_count((word >> position) & U64((1 << width) - 1))
        up = rank >= below
        rank -= below * up
        position += U64(width) * up
    return position
