"""The value of going and of stopping at a go/stop decision, with confidence intervals.

At a go/stop decision, :func:`go_stop_values` estimates, for the seat that decides, the
expected chips of saying go and of saying stop when every seat then plays the given
policies. The estimate is seen from the deciding seat: each of ``samples`` rollouts starts
from a determinization (the cards that seat cannot see dealt anew,
:func:`gostop_env.determinize.determinize`), says go (or stop) and plays the hand out in
batch. The mean over samples comes with a 95% normal interval, ``1.96 s / sqrt(n)``, which
shrinks as samples grow; go and stop are paired on the same samples, so the advantage of
going has its own, tighter interval.

Means hide the spread: a go worth +3 on average can still lose one time in three. The
values keep every sample's chips (``go_samples``, ``stop_samples``), so each choice's payment
distribution can be read per decision: :meth:`GoStopValues.quantiles`,
:meth:`GoStopValues.loss_probability` and :meth:`GoStopValues.histogram`.

With ``perfect_information=True`` the rollouts start from the true state instead: the
value a player who could see every card would get from the same policies. Its decision
value, ``max(go, stop)`` per game, is an upper reference for what any go/stop rule on
those policies can earn there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gostop_env.core import GameBatch, Phase
from gostop_env.core import actions as A
from gostop_env.determinize import determinize
from gostop_env.policy import Policy

from .match import play_out

Z95 = 1.959964


CHOICES = ("go", "stop")


@dataclass(frozen=True)
class GoStopValues:
    """Per decision (one row per game): mean chips of going and of stopping for the deciding
    seat, the advantage of going (go - stop), the 95% interval half-widths, and the chips of
    every sample (``(n, samples)``: go and stop paired on the same samples)."""

    go: np.ndarray
    stop: np.ndarray
    advantage: np.ndarray
    go_half: np.ndarray
    stop_half: np.ndarray
    advantage_half: np.ndarray
    samples: int
    go_samples: np.ndarray
    stop_samples: np.ndarray

    def chips(self, choice: str) -> np.ndarray:
        """``(n, samples)`` chips of saying ``choice`` ("go" or "stop")."""
        if choice not in CHOICES:
            raise ValueError(f"choice must be one of {CHOICES}, got {choice!r}")
        return self.go_samples if choice == "go" else self.stop_samples

    def quantiles(self, choice: str, levels: Sequence[float] = (0.1, 0.5, 0.9)) -> np.ndarray:
        """``(n, len(levels))`` quantiles of the chips of ``choice`` at each decision."""
        if not all(0 <= q <= 1 for q in levels):
            raise ValueError(f"quantile levels must lie in [0, 1], got {list(levels)}")
        return np.quantile(self.chips(choice), levels, axis=1).T

    def loss_probability(self, choice: str) -> np.ndarray:
        """``(n,)`` share of samples in which ``choice`` ends the hand paying chips."""
        return (self.chips(choice) < 0).mean(axis=1)

    def histogram(self, choice: str, edges: Sequence[float]) -> np.ndarray:
        """``(n, len(edges) - 1)`` share of samples of ``choice`` in each bin
        ``[edges[i], edges[i + 1])`` (the last bin closed), per decision."""
        edges = np.asarray(edges, np.float64)
        if edges.ndim != 1 or len(edges) < 2 or not (np.diff(edges) > 0).all():
            raise ValueError("edges must be two or more increasing numbers")
        counts = np.stack([np.histogram(row, edges)[0] for row in self.chips(choice)])
        return counts / self.samples

    def go_ci(self) -> np.ndarray:
        """``(n, 2)`` 95% intervals of the value of going."""
        return np.stack([self.go - self.go_half, self.go + self.go_half], axis=1)

    def advantage_ci(self) -> np.ndarray:
        return np.stack([self.advantage - self.advantage_half, self.advantage + self.advantage_half], axis=1)

    def decision_value(self) -> np.ndarray:
        """The better of the two means: with perfect information, a bound for any rule."""
        return np.maximum(self.go, self.stop)


def go_stop_values(
    batch: GameBatch,
    seat_policies: Sequence[Policy],
    samples: int,
    rng: np.random.Generator,
    perfect_information: bool = False,
) -> GoStopValues:
    """Estimate go and stop values at every game of ``batch`` (all at a go/stop decision)."""
    if not (batch.phase == Phase.GO_STOP).all():
        raise ValueError("every game must be at a go/stop decision (phase GO_STOP)")
    if samples < 2:
        raise ValueError(f"samples must be at least 2 (for an interval), got {samples}")
    deciders = batch.seat.astype(np.int64)
    if perfect_information:
        starts = batch.select(np.repeat(np.arange(len(batch)), samples))
    else:
        starts = determinize(batch, deciders, samples, rng)
    seats = np.repeat(deciders, samples)
    go = _rollout_chips(starts.clone(), A.GO, seat_policies, seats, rng).reshape(len(batch), samples)
    stop = _rollout_chips(starts, A.STOP, seat_policies, seats, rng).reshape(len(batch), samples)
    advantage = go - stop
    return GoStopValues(
        go.mean(axis=1),
        stop.mean(axis=1),
        advantage.mean(axis=1),
        _half_width(go),
        _half_width(stop),
        _half_width(advantage),
        samples,
        go,
        stop,
    )


def _rollout_chips(
    batch: GameBatch, first: int, seat_policies: Sequence[Policy], deciders: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    batch.step(np.full(len(batch), first, np.int64))
    play_out(batch, seat_policies, rng)
    return batch.payments[np.arange(len(batch)), deciders].astype(np.float64)


def _half_width(values: np.ndarray) -> np.ndarray:
    return Z95 * values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
