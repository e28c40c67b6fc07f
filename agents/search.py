"""Determinized Monte-Carlo search on the batched core.

At a decision, :class:`SearchAgent` samples ``samples`` full states consistent with its
view (:func:`gostop_env.determinize.determinize`), plays each candidate action in each
sample and rolls the hand out to its end with a default policy (``rollout``; greedy with
a go/stop threshold rule by default, ``DEFAULT_ROLLOUT_RULE``) at every seat, all in one
batch. Every candidate of a decision is played on the same samples, and a
deterministic rollout policy (``greedy``, the default) then plays them out the same way, so
the values of two actions are paired (common random numbers): their difference carries far
less noise than either value.

How it chooses:

- ``confidence=z`` (2 by default): the ``prior`` policy's move (by default the rollout
  policy's) unless another candidate beats it by a paired mean difference at least ``z``
  standard errors above zero. A hand's chips vary by tens while actions differ by one or
  two, so an argmax over means mostly picks noise; the prior is kept until the evidence
  says otherwise.
- ``confidence=None``: the action with the best mean chips, whatever the noise.
- ``halving=True`` (the default): after each round of samples the worse half of the
  candidates is dropped (sequential halving; the prior is always kept), so later rounds
  spend their rollouts on the actions still in contention.
- ``rounds`` rounds (8 by default) of ``samples`` samples (64). With ``seconds`` (about that
  long a decision, per game of a batched call), each round's first pass times it and the
  round is played again as often as its share of the time left allows, shared by the
  candidates each round will have: every round, the first included, gets about the same
  multiple of ``samples``. Wider rounds are what pays: an early round decides which actions
  the later ones keep.

With a ``leaf`` value (a trained network's critic, :class:`~gostop.agents.learned.ValueEstimate`)
a rollout stops once ``depth`` moves have been played and the searching seat is to move
again: the critic's chips for that seat there stand for the rest of the hand (a hand that
ended sooner counts its payments).

With ``match_values`` (such as :class:`~gostop.agents.match_stop.MatchWinTable`) and games that are
hands of matches (``GameView.match``), every rollout is valued by the chance of winning the
match from there instead of its chips: the ``stop=match`` rule.

With ``at="gostop"`` it searches only go/stop decisions and plays the others with the
prior: with ``confidence=None, halving=False, rounds=1`` that is the expected-value go/stop
rule for any card-play policy (``greedy:stop=ev``), and ``go_margin`` makes it go only
when going beats stopping by that many chips.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gostop_env.core import GameBatch, Phase, Rules
from gostop_env.core import actions as A
from gostop_env.core.match import MatchView
from gostop_env.determinize import determinize
from gostop_env.policy import STATE, GameView, Policy, check_actions, observe
from gostop_env.seats import controlled_actions, policy_actions

from .go_stop import Threshold
from .greedy import Greedy
from .match import play_out

DEFAULT_ROLLOUT_RULE = {"min_stock": 2, "opponent_margin": 3}
"""The go/stop rule of the default rollout policy, greedy with a threshold rule: go while two
or more cards are left in the stock and no opponent is within 3 points of the target
(``greedy:stop=threshold:stock=2:margin=3``). Rollouts in which players go value card play
far better than always-stop ones (+5.8 against +2.9 chips/hand, see docs/agents.md)."""
MIN_VARIANCE = 1.0
"""Floor of a paired difference's variance, in chips squared (see ``ActionStats.z_scores``)."""


@dataclass
class ActionStats:
    """Per game and action: rollouts, summed chips, and the summed difference (and squared
    difference) from the prior action's chips on the same samples."""

    count: np.ndarray
    chips: np.ndarray
    gain: np.ndarray
    gain_squares: np.ndarray

    @classmethod
    def empty(cls, games: int) -> ActionStats:
        return cls(*(np.zeros((games, A.NUM_ACTIONS)) for _ in range(4)))

    def means(self) -> np.ndarray:
        return self.chips / np.maximum(self.count, 1)

    def z_scores(self, charges: np.ndarray) -> np.ndarray:
        """Paired z of each action's mean gain over the prior less ``charges``: the mean over
        its standard error, the variance floored at one chip squared (chips are whole, so a
        few samples that happen to agree do not make an infinite z)."""
        n = np.maximum(self.count, 1)
        mean = self.gain / n - charges
        variance = (self.gain_squares - n * (self.gain / n) ** 2) / np.maximum(n - 1, 1)
        return mean / np.sqrt(np.maximum(variance, MIN_VARIANCE) / n)


class SearchAgent:
    """Determinized Monte-Carlo search (see the module docstring)."""

    encoding = STATE
    name = "search"

    def __init__(
        self,
        samples: int = 64,
        rollout: Policy | None = None,
        at: str = "all",
        seconds: float | None = None,
        go_margin: float = 0.0,
        rules: Rules | None = None,
        confidence: float | None = 2.0,
        halving: bool = True,
        rounds: int = 8,
        prior: Policy | None = None,
        leaf: LeafValue | None = None,
        depth: int = 4,
        match_values: MatchValues | None = None,
    ):
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        if rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {rounds}")
        if depth < 1:
            raise ValueError(f"depth must be >= 1 moves, got {depth}")
        if at not in ("all", "gostop"):
            raise ValueError(f"at must be 'all' or 'gostop', got {at!r}")
        if confidence is not None and not confidence >= 0:
            raise ValueError(f"confidence must be a z-score >= 0, got {confidence}")
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds must be > 0, got {seconds}")
        self.samples, self.at, self.seconds, self.go_margin = samples, at, seconds, float(go_margin)
        self.confidence, self.halving, self.rounds = confidence, halving, rounds
        self.rollout = rollout or Greedy(go_stop=Threshold(**DEFAULT_ROLLOUT_RULE), rules=rules)
        self.prior = prior or self.rollout
        self.leaf, self.depth, self.match_values = leaf, depth, match_values

    def __call__(self, view: GameView, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.decide_and_value(view, masks, rng)[0]

    def decide_and_value(
        self, view: GameView, masks: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Its moves, and ``(B, NUM_ACTIONS)`` float32: the mean chips its rollouts gave each
        action it tried (NaN elsewhere: illegal moves, and decisions it did not search)."""
        masks = np.asarray(masks, bool)
        searched = np.ones(len(view), bool) if self.at == "all" else view.batch.phase == Phase.GO_STOP
        searched &= masks.sum(axis=1) > 1
        plain = np.flatnonzero(~searched) if self.confidence is None else np.arange(len(view))
        actions = np.full(len(view), -1, np.int64)
        values = np.full(masks.shape, np.nan, np.float32)
        if plain.size:  # the prior's own moves: unsearched decisions, and what search must beat
            actions[plain] = self._prior_actions(view, plain, masks, rng)
        rows = np.flatnonzero(searched)
        if rows.size:
            priors = actions[rows] if self.confidence is not None else None
            sub = view.select(rows)
            match = sub.match if self.match_values is not None else None
            actions[rows], values[rows] = self._search(sub.batch, sub.viewers, masks[rows], priors, rng, match)
        return actions, values

    def _prior_actions(
        self, view: GameView, games: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The prior's moves in ``games`` of the view: by its own fast path where it declares
        one for the view's batch (the compiled greedy's kernel), else from its observations."""
        if np.array_equal(view.viewers[games], view.batch.seat[games]):  # each game's seat to move decides
            return policy_actions(self.prior, view.batch, games, masks, rng, "the prior")
        seen = observe(self.prior, view.batch, games, view.viewers[games])
        return check_actions(self.prior(seen, masks[games], rng), masks[games], "the prior")

    def _search(
        self,
        batch: GameBatch,
        viewers: np.ndarray,
        masks: np.ndarray,
        priors: np.ndarray | None,
        rng: np.random.Generator,
        match: MatchView | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The searched moves, and the mean chips of each action tried (NaN where none)."""
        stats, candidates = ActionStats.empty(len(batch)), masks.copy()
        anchors = priors if priors is not None else masks.argmax(axis=1)  # the differences' reference
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds * len(batch)
        for round_ in range(self.rounds):
            start = time.perf_counter()
            self._round(batch, viewers, candidates, anchors, stats, rng, match)
            if deadline is not None:  # as many more passes as this round's share of the time left
                once = time.perf_counter() - start
                share = (deadline - start) * self._share(candidates, self.rounds - round_)
                for _ in range(int((share - once) / max(once, 1e-9))):
                    self._round(batch, viewers, candidates, anchors, stats, rng, match)
            if self.halving:
                candidates = _better_half(candidates, self._values(stats), anchors)
        values = np.where(candidates, self._values(stats), -np.inf)
        best = values.argmax(axis=1)
        tried = np.where(stats.count > 0, stats.means(), np.nan).astype(np.float32)
        if priors is None:
            return best, tried
        margins = np.zeros(masks.shape)
        margins[:, A.GO] = self.go_margin
        rows = np.arange(len(batch))
        z = stats.z_scores(margins - margins[rows, priors][:, None])[rows, best]
        return np.where(z >= self.confidence, best, priors), tried

    def _share(self, candidates: np.ndarray, rounds_left: int) -> float:
        """This round's share of the rollouts of the ``rounds_left`` rounds to play, halving's
        candidates per round being known in advance (rollouts cost alike)."""
        counts = candidates.sum(axis=1)
        pairs = []
        for _ in range(rounds_left):
            pairs.append(int(counts.sum()))
            if self.halving:
                counts = np.minimum(counts, _kept(counts))
        return pairs[0] / max(sum(pairs), 1)

    def _values(self, stats: ActionStats) -> np.ndarray:
        """Mean chips per action, going charged ``go_margin``."""
        values = stats.means()
        values[:, A.GO] -= self.go_margin
        return values

    def _round(
        self,
        batch: GameBatch,
        viewers: np.ndarray,
        candidates: np.ndarray,
        anchors: np.ndarray,
        stats: ActionStats,
        rng: np.random.Generator,
        match: MatchView | None = None,
    ) -> None:
        """``samples`` more rollouts of every (game, candidate action), on shared samples;
        within a match, each valued by the chance of winning the match from there."""
        game, action = np.nonzero(candidates)  # one row per (game, candidate)
        chips = rollout_chips(batch, viewers, game, action, self.samples, self.rollout, rng, self.leaf, self.depth)
        if match is not None and self.match_values is not None:
            chips = self.match_values.value(match.hands_left[game, None], match.lead[game, None], chips)
        anchor_chips = np.zeros((len(batch), self.samples))
        anchor_chips[game[action == anchors[game]]] = chips[action == anchors[game]]
        gain = chips - anchor_chips[game]
        stats.count[game, action] += self.samples
        stats.chips[game, action] += chips.sum(axis=1)
        stats.gain[game, action] += gain.sum(axis=1)
        stats.gain_squares[game, action] += (gain**2).sum(axis=1)


def rollout_chips(
    batch: GameBatch,
    viewers: np.ndarray,
    game: np.ndarray,
    action: np.ndarray,
    samples: int,
    rollout: Policy,
    rng: np.random.Generator,
    leaf: LeafValue | None = None,
    depth: int = 4,
) -> np.ndarray:
    """``(pairs, samples)`` chips for ``viewers[game]`` of playing ``action`` in ``game`` and
    rolling out with ``rollout`` at every seat: each game is determinized ``samples`` times
    once, and every pair of that game is played on the same samples (common random numbers).
    With a ``leaf`` value, rollouts stop after ``depth`` moves where the viewer is to move
    and that value stands for the rest."""
    states = determinize(batch, viewers, samples, rng)
    trials = states.select((game[:, None] * samples + np.arange(samples)).reshape(-1))
    trials.step(np.repeat(action, samples))
    seats = np.repeat(viewers[game], samples)
    if leaf is None:
        play_out(trials, [rollout] * batch.rules.players, rng)
        return trials.payments[np.arange(len(trials)), seats].reshape(-1, samples).astype(np.float64)
    at_leaf = play_to_leaf(trials, rollout, seats, depth, rng)
    chips = trials.payments[np.arange(len(trials)), seats].astype(np.float64)
    if at_leaf.any():
        chips[at_leaf] = leaf(trials.select(np.flatnonzero(at_leaf)), seats[at_leaf])
    return chips.reshape(-1, samples)


def play_to_leaf(
    trials: GameBatch, rollout: Policy, seats: np.ndarray, depth: int, rng: np.random.Generator
) -> np.ndarray:
    """Play ``rollout`` at every seat of each game until it ends or, after ``depth`` moves,
    ``seats[i]`` is to move; which games stopped unfinished (their leaves)."""
    played = 0
    while True:
        at_leaf = ~trials.done & (played >= depth) & (trials.seat == seats)
        playing = ~trials.done & ~at_leaf
        if not playing.any():
            return at_leaf
        actions = np.full(len(trials), A.NO_ACTION, np.int64)
        controlled_actions(trials, actions, np.where(playing, 0, -1), [rollout], trials.legal_action_mask(), rng)
        trials.step(actions)
        played += 1


class MatchValues(Protocol):
    """What a hand paying ``chips`` is worth to a player ``lead`` chips ahead in a match with
    ``hands_left`` hands after this one (:class:`~gostop.agents.match_stop.MatchWinTable`)."""

    def value(self, hands_left: np.ndarray, lead: np.ndarray, chips: np.ndarray) -> np.ndarray: ...


class LeafValue(Protocol):
    """Chips that seat ``viewers[i]`` of each game expects by the end of the hand."""

    def __call__(self, batch: GameBatch, viewers: np.ndarray) -> np.ndarray: ...


def _kept(counts: np.ndarray) -> np.ndarray:
    """How many of ``counts`` candidates halving keeps: the better half, at least two."""
    return np.maximum((counts + 1) // 2, 2)


def _better_half(candidates: np.ndarray, values: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """Each game's better half of its candidates by value (at least two), and its anchor."""
    counts = candidates.sum(axis=1)
    keep = _kept(counts)
    order = np.argsort(-np.where(candidates, values, -np.inf), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(A.NUM_ACTIONS)[None, :].repeat(len(order), 0), axis=1)
    kept = candidates & (ranks < keep[:, None])
    kept[np.arange(len(anchors)), anchors] |= candidates[np.arange(len(anchors)), anchors]
    return kept
