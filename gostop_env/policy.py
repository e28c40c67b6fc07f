"""The one policy interface used everywhere (vector env, AEC loops, tournaments).

A policy is any callable ``policy(observations, masks, rng) -> actions`` that takes a
batch of observations (in the encoding named by its ``encoding`` attribute), a batch of
``(n, 125)`` boolean legal-action masks and a ``numpy.random.Generator``, and returns
``(n,)`` int64 action ids, each legal under its mask.

Search agents name the encoding ``"state"``: they receive a :class:`GameView` (the games
and the seat they play) and must read it only through what that seat may know, e.g. by
:func:`gostop_env.determinize.determinize`; tests check that hidden cards never change
their choices. A policy that reads only the masks names ``"masks"`` and receives an
``(n, 0)`` array, so nothing is encoded for it. Runners build observations for any policy
with :func:`observe`.

A policy may also declare a fast path, ``batch_actions(batch, games)``: its actions in those
games of a batch (for the seat to move in each), or None where it has none for that batch;
:mod:`gostop_env.seats` takes it when present (the compiled greedy players declare one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .core import GameBatch
from .core.actions import integer_actions
from .core.match import MatchView
from .encodings import encode

STATE = "state"
MASKS = "masks"
"""The encoding of a policy that reads only the legal-action masks: it is given ``(n, 0)``."""


@dataclass
class GameView:
    """What a ``"state"`` policy receives: a batch of games and, per game, the seat it plays,
    and where the games are hands of matches, where each match stands (else ``None``)."""

    batch: GameBatch
    viewers: np.ndarray
    match: MatchView | None = None

    def __len__(self) -> int:
        return len(self.batch)

    def select(self, rows: np.ndarray) -> GameView:
        """The view of games ``rows`` only."""
        return GameView(
            self.batch.select(rows), self.viewers[rows], None if self.match is None else self.match.select(rows)
        )


def observe(
    policy: Policy, batch: GameBatch, games: np.ndarray, seats: np.ndarray, match: MatchView | None = None
) -> np.ndarray | GameView:
    """The observations ``policy`` wants of ``games`` of ``batch``, seen by ``seats``
    (``match``: where each game of the batch stands in its match, for ``"state"`` policies
    and ``+match`` encodings; None: lone hands)."""
    if policy.encoding == MASKS:
        return np.zeros((len(games), 0), np.float32)
    sub = batch.select(games)
    where = None if match is None else match.select(games)
    if policy.encoding == STATE:
        return GameView(sub, np.asarray(seats, np.int64), where)
    return encode(sub, seats, policy.encoding, where)


@runtime_checkable
class Policy(Protocol):
    """Batched policy: observations and masks in, one legal action per row out."""

    encoding: str

    def __call__(
        self, observations: np.ndarray | GameView, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray: ...


class RandomPolicy:
    """Uniformly random legal actions (seeded through the ``rng`` it is given)."""

    encoding = MASKS

    def __call__(self, observations: np.ndarray | GameView, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        masks = np.asarray(masks, bool)
        if not masks.any(axis=1).all():
            raise ValueError("a row of the mask has no legal action")
        keys = rng.random(masks.shape) + masks  # legal actions score in [1, 2), others in [0, 1)
        return keys.argmax(axis=1).astype(np.int64)


class PolicyActionError(ValueError):
    """A policy returned an illegal action, or the wrong number of them: a fault of the
    policy, not of whoever runs it."""


def check_actions(actions: np.ndarray, masks: np.ndarray, who: str = "policy") -> np.ndarray:
    """Return ``actions`` as int64, or raise :class:`PolicyActionError` (a ValueError) naming
    the first illegal one (TypeError when they are not integers)."""
    actions = integer_actions(actions)
    if actions.shape != (len(masks),):
        raise PolicyActionError(f"{who} returned {actions.shape[0]} actions for {len(masks)} observations")
    inside = (actions >= 0) & (actions < masks.shape[1])
    legal = inside & masks[np.arange(len(masks)), np.where(inside, actions, 0)]
    if not legal.all():
        row = int(np.flatnonzero(~legal)[0])
        raise PolicyActionError(
            f"{who} chose illegal action {int(actions[row])} in row {row}; legal: {np.flatnonzero(masks[row]).tolist()}"
        )
    return actions


def decide(
    policy: Policy,
    batch: GameBatch,
    games: np.ndarray,
    masks: np.ndarray,
    rng: np.random.Generator,
    who: str,
    match: MatchView | None = None,
) -> np.ndarray:
    """``policy``'s actions for ``games`` of ``batch``, each seen by the seat to move there
    (``masks``: the whole batch's legal-action masks; ``match``: where each game of the batch
    stands in its match); checked, so an illegal choice is a :class:`PolicyActionError`
    naming ``who``."""
    seen = observe(policy, batch, games, batch.seat[games], match)
    return check_actions(policy(seen, masks[games], rng), masks[games], who)


def opponent_policies(opponents: Policy | Sequence[Policy] | None, players: int) -> list[Policy]:
    """Policy k plays the seat k + 1 places after the learner in turn order."""
    if opponents is None:
        return [RandomPolicy()] * (players - 1)
    if isinstance(opponents, (str, bytes)):
        raise TypeError(
            f"opponents are policies, not names: build one from a name with gostop.agents.make_agent({opponents!r})"
        )
    if callable(opponents):
        return [opponents] * (players - 1)
    opponents = list(opponents)
    if not all(callable(p) and isinstance(getattr(p, "encoding", None), str) for p in opponents):
        raise TypeError("every opponent must be a policy: a callable with an 'encoding' attribute")
    if len(opponents) != players - 1:
        raise ValueError(f"give one opponent policy or {players - 1} (one per other seat), got {len(opponents)}")
    return opponents
