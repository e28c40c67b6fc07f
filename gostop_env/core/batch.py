"""The batched core's public face: :class:`GameBatch`, B hands of Go-Stop stepped together.

Every set of cards (hands, capture piles, layout) is a ``uint64`` bitboard with bit
``card id`` set, so matching, scoring and masks are a handful of integer operations on
``(B,)`` or ``(B, P)`` arrays. The stock is a ``(B, S)`` int8 array of card ids read
from ``stock_pos`` on. Each game has a ``phase`` (:class:`~gostop_env.core.actions.Phase`)
and a ``seat`` to move.

The parts: the state arrays are declared in :mod:`.state`; :mod:`.numpy_engine` steps them
with NumPy, and the compiled backend (:mod:`.compiled`) with numba kernels; :mod:`.backends`
says which backends there are and picks one. This module builds batches (from seeds, decks
or positions), reads them (masks, snapshots), copies and joins them, deals fresh hands and
takes steps, the same on every backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from . import actions as A
from . import cards as C
from .actions import IllegalActionError, Phase, integer_actions
from .backends import register_backend, registered_class
from .bitboard import U64, Array, bit
from .deck import DEALT, check_seed, decks_from_seeds, fresh_decks, shuffled_decks, validate_deck
from .events import BatchEvents
from .indices import game_index, game_indices
from .numpy_engine import NumpyEngine, match_tables
from .outcomes import Result
from .position import Position
from .rules import MAX_CARRY, Rules, check_carry
from .state import FLIP, GAME, MONTH, SEAT, STATE_FIELDS, STOCK, State, check_decks, check_values, fit_array


class GameBatch(NumpyEngine):
    """B hands of Go-Stop under one :class:`Rules`, stepped together.

    Create with :meth:`from_seed`, :meth:`from_seeds` or :meth:`from_decks`; call
    :meth:`step` with one action per game: a legal action id, or ``NO_ACTION`` (-1) to leave
    a game untouched (the only action a finished game takes).
    State arrays are public attributes with a leading batch axis, declared with their
    dtype, shape and meaning in :class:`~gostop_env.core.state.GameState`; treat them as
    read-only. This class steps them with the NumPy engine
    (:class:`~gostop_env.core.numpy_engine.NumpyEngine`); the compiled backends subclass it.
    """

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
        self._tables = match_tables(rules.choice_rule)
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
        for name in ("shakes", "bombs", "pass_tokens", "gos", "go_scores", "turns", "ppuks"):
            getattr(self, name)[i] = getattr(p, name)
        self.last_go_clock[i] = p.last_go
        self.clock[i] = max(p.last_go) + 1
        for month, (owner, turn) in p.stacks.items():
            self.stack_owner[i, month], self.stack_turn[i, month] = owner, turn
        self.seat[i] = p.seat

    # ---- reading the batch -----------------------------------------------------------------

    def done_games(self) -> np.ndarray:
        """The indices of the games whose hand is over, in order: ``np.flatnonzero(self.done)``,
        for dealing them again (:meth:`reset_games`)."""
        return np.flatnonzero(self.done)

    @property
    def next_carry(self) -> np.ndarray:
        """Carry for each game's next hand: +1 after a nagari (at most ``MAX_CARRY``), else 0."""
        return np.where(self.result == Result.NAGARI, np.minimum(self.carry + 1, MAX_CARRY), 0).astype(np.int16)

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
            ppuks=self.ppuks[i].tolist(),
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


def batch_class(backend: str | None = None) -> type[GameBatch]:
    """The :class:`GameBatch` class that runs ``backend`` (``None``:
    :func:`~gostop_env.core.backends.default_backend`). ValueError for an unknown name;
    ImportError, saying what to install, for a compiled backend without numba."""
    return cast("type[GameBatch]", registered_class(backend))


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


register_backend("numpy", GameBatch)
