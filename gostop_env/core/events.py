"""What happened in one step: event counts per seat, captured and stolen cards, payments.

Both engines report a step with the same fields. The vectorised core keeps them as arrays
with a leading batch axis (:class:`BatchEvents`); ``BatchEvents.game(i)`` and the
reference engine give one game's :class:`Events`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from .cards import cards_of
from .indices import game_index, game_indices


class Event(IntEnum):
    """Countable events; each is counted for the seat it happened to."""

    PPUK = 0  # the seat's play and flip left a stack of three (§5)
    JA_PPUK = 1  # the seat captured a stack of its own ppuk (§6): counted with STACK_CAPTURE
    JJOK = 2
    TTADAK = 3
    SWEEP = 4
    STACK_CAPTURE = 5
    BOMB = 6
    SHAKE = 7
    JOKER = 8  # a joker went to the seat's pile (from hand, stock or the deal's layout)
    GO = 9
    STOP = 10
    CHONGTONG = 11  # counted for each holder
    NAGARI = 12  # counted for the seat whose turn ended the hand


NUM_EVENTS = len(Event)


@dataclass
class Events:
    """One game's step: ``counts[seat][event]``, ``captured[seat]`` (cards that went to the
    seat's pile, stolen cards excluded), ``stolen[taker][giver]`` (junk given), and
    ``payments[seat]`` (chips; non-zero only on the step that ended the hand)."""

    players: int
    counts: list[list[int]] = field(default_factory=list)
    captured: list[set[int]] = field(default_factory=list)
    stolen: list[list[set[int]]] = field(default_factory=list)
    payments: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        p = self.players
        self.counts = self.counts or [[0] * NUM_EVENTS for _ in range(p)]
        self.captured = self.captured or [set() for _ in range(p)]
        self.stolen = self.stolen or [[set() for _ in range(p)] for _ in range(p)]
        self.payments = self.payments or [0] * p

    def add(self, seat: int, event: Event, times: int = 1) -> None:
        self.counts[seat][event] += times

    def count(self, event: Event, seat: int | None = None) -> int:
        """How many times ``event`` happened (to ``seat``, or to anyone)."""
        seats = range(self.players) if seat is None else [seat]
        return sum(self.counts[s][event] for s in seats)

    def as_tuple(self) -> tuple[Any, ...]:
        """A comparable plain form (used by the differential tests)."""
        return (
            tuple(tuple(c) for c in self.counts),
            tuple(tuple(sorted(c)) for c in self.captured),
            tuple(tuple(tuple(sorted(s)) for s in row) for row in self.stolen),
            tuple(self.payments),
        )


@dataclass
class BatchEvents:
    """A batch's step: the fields of :class:`Events` as arrays with a leading batch axis."""

    counts: np.ndarray  # (B, P, NUM_EVENTS) int8
    captured: np.ndarray  # (B, P) uint64 bitboards
    stolen: np.ndarray  # (B, P taker, P giver) uint64 bitboards
    payments: np.ndarray  # (B, P) int64

    @classmethod
    def empty(cls, batch: int, players: int) -> BatchEvents:
        return cls._allocated(np.zeros, batch, players)

    @classmethod
    def unwritten(cls, batch: int, players: int) -> BatchEvents:
        """Arrays of the shapes of :meth:`empty`, their values left unset: for a writer that
        sets every entry (the compiled step and deal)."""
        return cls._allocated(np.empty, batch, players)

    @classmethod
    def _allocated(cls, allocate: Callable[..., np.ndarray], batch: int, players: int) -> BatchEvents:
        """The four arrays of ``batch`` games, each from ``allocate(shape, dtype)``."""
        return cls(
            allocate((batch, players, NUM_EVENTS), np.int8),
            allocate((batch, players), np.uint64),
            allocate((batch, players, players), np.uint64),
            allocate((batch, players), np.int64),
        )

    def rows(self, index: np.ndarray) -> BatchEvents:
        """The events of games ``index`` as a smaller batch."""
        index = game_indices(index, len(self.payments))
        return BatchEvents(*(np.take(array, index, axis=0) for array in self.arrays()))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The four arrays, in field order."""
        return self.counts, self.captured, self.stolen, self.payments

    def game(self, i: int) -> Events:
        """Game ``i``'s events as an :class:`Events`."""
        i = game_index(i, len(self.payments))
        p = self.captured.shape[1]
        return Events(
            p,
            [[int(v) for v in row] for row in self.counts[i]],
            [set(cards_of(b)) for b in self.captured[i]],
            [[set(cards_of(b)) for b in row] for row in self.stolen[i]],
            [int(v) for v in self.payments[i]],
        )
