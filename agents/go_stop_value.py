"""The value of going and of stopping at a go/stop decision, with confidence intervals.

At a go/stop decision, :func:`go_stop_values` estimates, for the seat that decides, the
expected chips of saying go and of saying stop when every seat then plays the given
policies. The estimate is seen from the deciding seat: each of ``samples`` rollouts starts
from a determinization (the cards that seat cannot see dealt anew,
:func:`gostop_env.determinize.determinize`), says go (or stop) and plays the hand out in
batch. The mean over samples comes with a 95% normal interval, ``1.96 s / sqrt(n)``, which
shrinks as samples grow; go and stop are paired on the same samples, so the advantage of
going has its own, tighter interval.

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


@dataclass(frozen=True)
class GoStopValues:
    """Per decision (one row per game): mean chips of going and of stopping for the deciding
    seat, the advantage of going (go - stop) and the 95% interval half-widths."""

    go: np.ndarray
    stop: np.ndarray
    advantage: np.ndarray
    go_half: np.ndarray
    stop_half: np.ndarray
    advantage_half: np.ndarray
    samples: int

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
    )


def _rollout_chips(
    batch: GameBatch, first: int, seat_policies: Sequence[Policy], deciders: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    batch.step(np.full(len(batch), first, np.int64))
    play_out(batch, seat_policies, rng)
    return batch.payments[np.arange(len(batch)), deciders].astype(np.float64)


def _half_width(values: np.ndarray) -> np.ndarray:
    return Z95 * values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
