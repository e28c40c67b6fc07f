"""Rounds of batched hands with the learner in some seats: the rollout engine of the batched
trainer (:mod:`gostop.train.batched`).

A round deals one hand to each of ``games`` games of the batched core and plays every hand to
its end. In each game one seat, drawn at random, is the learner's; each other seat is the
learner again (self-play, with weight ``self_play``) or an opponent drawn from the league by
its weight. At every step one network forward decides for every seat the learner holds in
the whole batch, and each opponent policy decides for its seats in one call. The learner's
decisions come back as :class:`Samples` grouped by *episode* (one game and seat), each
with the chips (or win/loss) that seat finished the hand with. Every hand is complete, so
returns need no bootstrapping and a round leaves nothing in flight but the nagari carry:
checkpoints between rounds resume exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gostop_env.core import GameBatch, Rules
from gostop_env.core.deck import shuffled_decks
from gostop_env.encodings import encode
from gostop_env.learner_games import OpponentPool
from gostop_env.policy import Policy, check_actions
from gostop_env.seats import controlled_actions

LEARNER = -1
"""The controller of a seat the learner plays (opponents are indices into the league)."""
REWARDS = ("chips", "win")

Learner = Callable[[np.ndarray, np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""``learner(observations, masks, rng) -> (actions, log_probs, values)``, one row per decision."""


@dataclass
class Samples:
    """The learner's decisions of one round, in the order they were taken."""

    observations: np.ndarray  # (n, *shape) float32: what the learner saw
    masks: np.ndarray  # (n, 125) bool: its legal actions
    actions: np.ndarray  # (n,) int64: what it chose
    log_probs: np.ndarray  # (n,) float32: log-probability of that choice when it was made
    values: np.ndarray  # (n,) float32: the value network's estimate then
    episodes: np.ndarray  # (n,) int64: game * players + seat
    rewards: np.ndarray  # (games * players,) float32: each episode's final reward

    def __len__(self) -> int:
        return len(self.actions)


@dataclass
class RoundFigures:
    """What a round says about the learner: its mean reward against the league's agents
    in chips (``None`` where it met none) and how many decisions it took."""

    decisions: int
    hands: int
    chips_vs_league: float | None


class League(OpponentPool):
    """The opponents a seat can be given: an :class:`~gostop_env.learner_games.OpponentPool`
    of named policies (and snapshots) with weights, and beside it the learner itself with
    weight ``self_play``."""

    def __init__(self, policies: Sequence[Policy], weights: Sequence[float], self_play: float = 0.0):
        if len(policies) != len(weights):
            raise ValueError(f"{len(policies)} policies but {len(weights)} weights")
        super().__init__(policies, weights)
        if not (np.isfinite(self_play) and self_play >= 0) or self_play + self.weights.sum() <= 0:
            raise ValueError(f"league weights must be finite, >= 0 and with a positive sum, got {self_play}")
        self.self_play = float(self_play)

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` controllers: ``LEARNER`` or an index into ``policies``."""
        weights = np.array([self.self_play, *self.weights])
        return rng.choice(len(weights), size=size, p=weights / weights.sum()) - 1


class SeatedGames:
    """``games`` hands played together, round after round (see the module docstring)."""

    def __init__(
        self,
        rules: Rules,
        games: int,
        league: League,
        encoding: str = "vector",
        reward: str = "chips",
        reward_scale: float = 1.0,
        nagari_carry: bool = True,
        backend: str | None = None,
    ):
        if games < 1:
            raise ValueError(f"games must be at least 1, got {games}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        self.rules, self.games, self.league, self.encoding = rules, games, league, encoding
        self.reward, self.reward_scale, self.nagari_carry = reward, float(reward_scale), nagari_carry
        self.batch = GameBatch.from_seed(rules, 0, games, backend=backend)  # dealt anew each round
        self.carry = np.zeros(games, np.int64)

    def play_round(self, learner: Learner, rng: np.random.Generator) -> tuple[Samples, RoundFigures]:
        """Deal a hand to every game and play them all out; the learner's samples."""
        players, everything = self.rules.players, np.arange(self.games)
        controllers = self._seat_controllers(rng)
        self.batch.reset_games(everything, shuffled_decks(self.rules, rng, self.games), self.carry)
        parts: list[tuple[np.ndarray, ...]] = []
        while not self.batch.done.all():
            parts.append(self._step(controllers, learner, rng))
        rewards = self._rewards()
        if self.nagari_carry:
            self.carry = self.batch.next_carry.astype(np.int64)
        samples = _samples(parts, rewards, self.encoding)
        episodes = controllers.reshape(-1) == LEARNER
        against = (controllers != LEARNER).any(axis=1).repeat(players) & episodes
        chips = self.batch.payments.reshape(-1)
        figures = RoundFigures(len(samples), self.games, float(chips[against].mean()) if against.any() else None)
        return samples, figures

    def _seat_controllers(self, rng: np.random.Generator) -> np.ndarray:
        """(games, players): one learner seat per game, the other seats drawn from the league."""
        controllers = self.league.draw(rng, self.games * self.rules.players).reshape(self.games, -1)
        controllers[np.arange(self.games), rng.integers(self.rules.players, size=self.games)] = LEARNER
        return controllers

    def _step(self, controllers: np.ndarray, learner: Learner, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """One decision in every unfinished game; the learner's part as sample columns."""
        batch = self.batch
        seat = batch.seat.astype(np.int64)
        mover = np.where(batch.done, -2, controllers[np.arange(self.games), seat])
        masks = batch.legal_action_mask()
        observations = encode(batch, seat, self.encoding)
        actions = np.full(self.games, -1, np.int64)
        encoded = (self.encoding, observations)  # encoded once, for the learner and the league alike
        controlled_actions(batch, actions, mover, self.league.policies, masks, rng, encoded=encoded)
        rows = np.flatnonzero(mover == LEARNER)
        chosen, log_probs, values = learner(observations[rows], masks[rows], rng)
        actions[rows] = check_actions(chosen, masks[rows], "the learner")
        batch.step(actions)
        return observations[rows], masks[rows], chosen, log_probs, values, rows * self.rules.players + seat[rows]

    def _rewards(self) -> np.ndarray:
        """Each (game, seat)'s final reward, flat: chips (scaled) or +1 / -1 / 0."""
        chips = self.batch.payments.astype(np.float32).reshape(-1)
        return (chips * self.reward_scale if self.reward == "chips" else np.sign(chips)).astype(np.float32)


def _samples(parts: list[tuple[np.ndarray, ...]], rewards: np.ndarray, encoding: str) -> Samples:
    columns = [np.concatenate(column) for column in zip(*parts)]
    observations, masks, actions, log_probs, values, episodes = columns
    return Samples(
        observations.astype(np.float32, copy=False),
        masks.astype(bool, copy=False),
        actions.astype(np.int64, copy=False),
        log_probs.astype(np.float32, copy=False),
        values.astype(np.float32, copy=False),
        episodes.astype(np.int64, copy=False),
        rewards,
    )


def advantages(samples: Samples, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE advantages and value targets of complete episodes (discount 1, reward at the end):
    ``(advantages, returns)`` in the samples' order."""
    order = np.argsort(samples.episodes, kind="stable")  # each episode's decisions in time order
    episodes, values = samples.episodes[order], samples.values[order]
    last = np.append(episodes[1:] != episodes[:-1], True)
    next_values = np.where(last, 0.0, np.append(values[1:], 0.0))
    deltas = np.where(last, samples.rewards[episodes], 0.0) + next_values - values
    ends = np.flatnonzero(last)
    from_end = np.repeat(ends, np.diff(np.append(-1, ends))) - np.arange(len(order))
    sorted_advantages = np.zeros(len(order), np.float64)
    for k in range(int(from_end.max(initial=-1)) + 1):
        at = np.flatnonzero(from_end == k)
        following = sorted_advantages[at + 1] if k else 0.0
        sorted_advantages[at] = deltas[at] + lam * following
    result = np.empty(len(order), np.float32)
    result[order] = sorted_advantages
    return result, result + samples.values
