"""One hand on a batched backend, read and stepped as a :class:`~gostop_env.core.ReferenceGame`
is: how the PettingZoo AEC env plays on ``backend="numpy"``, ``"numba"`` or
``"numba-parallel"`` (a batch of one game; the reference engine, the env's default, is the
cheaper one for a single hand). Only what the env reads is here."""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import Events, GameBatch, Rules, batch_class
from .core.deck import shuffled_decks
from .core.match import MatchView
from .encodings import encode

REFERENCE = "reference"
"""The AEC env's own engine name for the one-hand reference engine."""


class BatchGame:
    """A batch of one game (``batch``) with the reference engine's interface: ``seat``,
    ``phase``, ``done``, ``payments``, ``result``, ``winner``, ``next_carry``, ``deal_events``,
    ``legal_actions()``, ``step(action)``, ``scores()``, ``snapshot()``, and its own
    :meth:`observe`."""

    def __init__(self, batch: GameBatch, deck: np.ndarray):
        self.batch, self.rules, self.deck = batch, batch.rules, deck
        self.deal_events = batch.deal_events.game(0)

    @classmethod
    def from_deck(cls, rules: Rules, deck: Any, carry: int, backend: str) -> BatchGame:
        """Deal a given deck order (checked: ValueError saying why)."""
        batch = GameBatch.from_decks(rules, [deck], carry, backend)
        return cls(batch, np.asarray(deck, np.int8))

    @classmethod
    def from_shuffle(cls, rules: Rules, rng: np.random.Generator, carry: int, backend: str) -> BatchGame:
        """Deal a deck ``rng`` shuffles, drawn as the reference engine's ``from_shuffle``
        draws it (the same seed deals the same hand on every engine)."""
        deck = shuffled_decks(rules, rng, 1)[0]
        return cls(batch_class(backend)(rules, deck[None], carry), deck)

    @property
    def seat(self) -> int:
        return int(self.batch.seat[0])

    @property
    def phase(self) -> int:
        return int(self.batch.phase[0])

    @property
    def done(self) -> bool:
        return bool(self.batch.done[0])

    @property
    def payments(self) -> list[int]:
        return [int(p) for p in self.batch.payments[0]]

    @property
    def result(self) -> int:
        return int(self.batch.result[0])

    @property
    def winner(self) -> int:
        return int(self.batch.winner[0])

    @property
    def next_carry(self) -> int:
        return int(self.batch.next_carry[0])

    def legal_actions(self) -> list[int]:
        return self.batch.legal_actions(0)

    def step(self, action: int) -> Events:
        return self.batch.step(np.array([action], np.int64)).game(0)

    def scores(self) -> list[int]:
        return [int(s) for s in self.batch.scores[0]]

    def snapshot(self) -> dict[str, Any]:
        return self.batch.snapshot(0)

    def observe(self, seat: int, encoding: str, match: MatchView | None = None) -> np.ndarray:
        """The observation of ``seat``: :func:`~gostop_env.encodings.encode` of the batch
        (``match``: where its match stands, for ``+match`` encodings)."""
        return encode(self.batch, np.array([seat]), encoding, match)[0]
