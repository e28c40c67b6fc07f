"""Determinized Monte-Carlo search on the batched core.

At a decision, :class:`SearchAgent` samples ``samples`` full states consistent with its
view (:func:`gostop_env.determinize.determinize`), plays each legal action in each sample
and rolls the hand out to its end with a default policy for every seat, all in one batch;
it picks the action with the best mean chips for itself. With ``at="gostop"`` it searches
only go/stop decisions and plays the others with the default policy: that is the
expected-value go/stop rule for any card-play policy, and ``go_margin`` makes it go only
when going beats stopping by that many chips. ``seconds`` adds sample rounds until that
time is spent (at least one round).
"""

from __future__ import annotations

import time

import numpy as np

from gostop_env.core import GameBatch, Phase, Rules
from gostop_env.core import actions as A
from gostop_env.determinize import determinize
from gostop_env.policy import STATE, GameView, Policy, check_actions, observe

from .greedy import Greedy


class SearchAgent:
    """Determinized Monte-Carlo search (see the module docstring)."""

    encoding = STATE
    name = "search"

    def __init__(
        self,
        samples: int = 16,
        rollout: Policy | None = None,
        at: str = "all",
        seconds: float | None = None,
        go_margin: float = 0.0,
        rules: Rules | None = None,
    ):
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        if at not in ("all", "gostop"):
            raise ValueError(f"at must be 'all' or 'gostop', got {at!r}")
        self.samples, self.at, self.seconds, self.go_margin = samples, at, seconds, float(go_margin)
        self.rollout = rollout or Greedy(rules=rules)

    def __call__(self, view: GameView, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        masks = np.asarray(masks, bool)
        searched = np.ones(len(view), bool) if self.at == "all" else view.batch.phase == Phase.GO_STOP
        searched &= masks.sum(axis=1) > 1
        actions = np.full(len(view), -1, np.int64)
        plain = np.flatnonzero(~searched)
        if plain.size:
            seen = observe(self.rollout, view.batch, plain, view.viewers[plain])
            actions[plain] = self.rollout(seen, masks[plain], rng)
        rows = np.flatnonzero(searched)
        if rows.size:
            actions[rows] = self._search(view.batch.select(rows), view.viewers[rows], masks[rows], rng)
        return actions

    def _search(self, batch: GameBatch, viewers: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        totals, rounds = np.zeros(masks.shape), 0
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        while rounds == 0 or (deadline is not None and time.perf_counter() < deadline):
            totals += self._round(batch, viewers, masks, rng)
            rounds += 1
        means = totals / (rounds * self.samples)
        means[:, A.GO] -= self.go_margin
        return np.where(masks, means, -np.inf).argmax(axis=1)

    def _round(self, batch: GameBatch, viewers: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Summed chips over ``samples`` rollouts of every (game, legal action)."""
        n, k = len(batch), self.samples
        samples = determinize(batch, viewers, k, rng)
        game, action = np.nonzero(masks)  # one row per (game, legal action)
        sample_index = (game[:, None] * k + np.arange(k)).reshape(-1)
        trials = samples.select(sample_index)
        trials.step(np.repeat(action, k))
        _roll_out(trials, self.rollout, rng)
        chips = trials.payments[np.arange(len(trials)), np.repeat(viewers[game], k)]
        totals = np.zeros((n, A.NUM_ACTIONS))
        totals[game, action] = chips.reshape(-1, k).sum(axis=1)
        return totals


def _roll_out(batch: GameBatch, policy: Policy, rng: np.random.Generator) -> None:
    """Play every game of ``batch`` to its end with ``policy`` at every seat."""
    while not batch.done.all():
        live = np.flatnonzero(~batch.done)
        seats = batch.seat[live].astype(np.int64)
        masks = batch.legal_action_mask()[live]
        seen = observe(policy, batch, live, seats)
        actions = np.full(len(batch), -1, np.int64)
        actions[live] = check_actions(policy(seen, masks, rng), masks, "rollout policy")
        batch.step(actions)
