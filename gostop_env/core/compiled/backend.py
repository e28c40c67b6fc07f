"""The compiled backend classes: :class:`CompiledGameBatch` (``backend="numba"``, one thread)
and :class:`ParallelGameBatch` (``"numba-parallel"``), :class:`~gostop_env.core.batch.GameBatch`
with its steps, deals, legal words and random picks run by the kernels. Constructing from
positions, ``select``, ``concatenate`` and the masks are the NumPy core's.
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np

from ..backends import register_backend
from ..batch import GameBatch
from ..events import BatchEvents
from ..numpy_engine import dealt_columns
from ..numpy_engine import match_tables as numpy_match_tables
from ..state import STATE_FIELDS, fit_array
from .arrays import KERNEL_FIELDS, DealArrays, EventArrays, KernelState, MatchTables, kernel_view
from .deal import shuffle_decks
from .loops import PARALLEL, SERIAL, run_kernel
from .numba_kit import U
from .picker import KERNEL_DRAWS_FROM, drawn_actions, random_actions
from .rules import rule_options
from .threads import PARALLEL_FROM, even_bounds, list_done


@functools.cache
def _deal_columns(players: int) -> tuple[np.ndarray, np.ndarray]:
    """``_dealt_columns`` as the deal kernel's int64 arrays."""
    columns, starts = dealt_columns(players)
    return columns.astype(np.int64), starts.astype(np.int64)


@functools.cache
def match_tables(choice_rule: str) -> Any:
    """§5's match tables of the NumPy core as one kernel argument."""
    tables = numpy_match_tables(choice_rule)
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

    def kernel_state(self) -> Any:
        """The state arrays as one kernel argument (:data:`~.arrays.KernelState`), for the
        batch's own kernels and for those built on :mod:`~gostop_env.core.compiled.kernels`.
        Each was made an array of the one type the kernels run on when it was set
        (:func:`~gostop_env.core.state.fit_array`); it is made one again here where a caller
        has since made it read-only in place."""
        if self._kernel_state is None:
            for name in KERNEL_FIELDS:
                array = getattr(self, name)
                if fit_array(array, STATE_FIELDS[name].dtype) is not array:
                    setattr(self, name, array)
            views = (kernel_view(getattr(self, name), STATE_FIELDS[name].shape) for name in KERNEL_FIELDS)
            self._kernel_state = KernelState._make((*views, self.rules.players))
        return self._kernel_state

    def rule_arguments(self) -> tuple[Any, Any]:
        """(rule options, §5's match tables) of the batch's rules as kernel arguments: found
        once for the batch's rules (looking them up by the rules cost 1.2 us a step)."""
        if self._rule_arrays is None:
            self._rule_arrays = rule_options(self.rules), match_tables(self.rules.choice_rule)
        return self._rule_arrays

    def played_in_place(self, legal: np.ndarray) -> None:
        """Take the state a caller's kernel left after stepping games in place, with
        ``legal``, the legal words it kept up to date (a copy of :attr:`legal_bits` it
        wrote): what those steps did is not kept, so the batch's last events are emptied."""
        self._legal, self._legal_shared = fit_array(legal, U), False
        self._new_events()

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
            run_kernel(self.loops()["_legal_of_all"], self.kernel_state(), legal, self._thread_ranges()[0])
            self._legal, self._legal_shared = legal, False
        return self._legal

    def _play_legal(self, actions: np.ndarray) -> int:
        """One kernel checks the actions (each thread its range of games) and, if every one is
        legal, plays them, writing new events and new legal words (a caller may hold the
        old)."""
        bounds, elapsed = self._thread_ranges()
        before, after, found = self._legal_words(), np.empty((len(self), 2), U), np.empty(len(elapsed), np.int64)
        events = BatchEvents.unwritten(len(self), self.rules.players)
        options, tables = self.rule_arguments()
        run_kernel(
            self.loops()["_step_games"],
            self.kernel_state(),
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
        options, tables = self.rule_arguments()
        run_kernel(
            self.loops()["_deal_games"],
            self.kernel_state(),
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
        return done[: list_done(self.kernel_state().phase, done)].copy()

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
