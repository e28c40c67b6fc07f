"""Batches of hands with one learning seat each, the other seats played in batch: the
engine under both vector envs (:class:`gostop_env.vec_env.GoStopVecEnv` for
stable-baselines3, :class:`gostop_env.gym_vector.GoStopVectorEnv` for Gymnasium).

Each of the ``num_envs`` games has one learning seat (fixed, or drawn each hand with
``learner_seat="random"``); the other seats are played by opponent policies
(:mod:`gostop_env.policy`), in batch, until every game awaits its learner; an
:class:`OpponentPool` draws each opponent seat's policy anew for every hand (league
self-play). With ``learner_decides="go_stop"`` the learner is asked only at its go/stop
decisions and ``learner_autoplay`` plays its other decisions (training a go/stop policy on
top of a fixed card player); hands where it never decides are dealt again. Finished hands
are dealt again at once, in the same step (the finished hand's last observation goes with
its report). Every game draws its decks from its own generator, seeded by :meth:`seed`
(game i gets ``seed + i``), so a game's hands do not depend on the others. Needs Gymnasium
(for the spaces), not stable-baselines3.

With ``match_hands`` each game plays matches (:mod:`gostop_env.match_episodes`): an episode
is a match, the learner is one player throughout (its seat moves as the lead does), the
opponents are drawn once a match, and the observation has the match sections. A hand that
ends without a learner decision still counts: its reward is added to the learner's next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from .core import NUM_ACTIONS, GameBatch, Phase, Rules, batch_class
from .core.actions import integer_actions
from .core.deck import check_seed, shuffled_decks
from .core.match import MatchLedger, MatchView
from .encodings import OBSERVATION_HIGH, encode, encoding_shape, with_match
from .env_options import finite_number, flag
from .match_episodes import REWARDS, check_reward, hand_rewards, match_format, settle_hands
from .policy import Policy, check_actions, opponent_policies
from .seats import controlled_actions

__all__ = ["REWARDS", "LearnerGames", "OpponentPool"]


class OpponentPool:
    """Policies to draw opponents from, one per opponent seat per hand, by ``weights``.

    The pool may change during training (:meth:`add`, :meth:`set_weights`); new hands use it.
    """

    def __init__(self, policies: Sequence[Policy], weights: Sequence[float] | None = None):
        self.policies: list[Policy] = []
        self.weights = np.zeros(0)
        for policy, weight in zip(policies, weights if weights is not None else [1.0] * len(policies)):
            self.add(policy, weight)
        if not self.policies:
            raise ValueError("an opponent pool needs at least one policy")

    def add(self, policy: Policy, weight: float = 1.0) -> int:
        """Add a policy with a sampling weight; return its index."""
        if not callable(policy) or not hasattr(policy, "encoding"):
            raise TypeError(f"{policy!r} is not a policy (a callable with an 'encoding' attribute)")
        if weight < 0:
            raise ValueError(f"weights must be >= 0, got {weight}")
        self.policies.append(policy)
        self.weights = np.append(self.weights, float(weight))
        return len(self.policies) - 1

    def set_weights(self, weights: Sequence[float]) -> None:
        values = np.asarray(weights, float)
        if values.shape != (len(self.policies),) or (values < 0).any() or values.sum() <= 0:
            raise ValueError(f"need {len(self.policies)} non-negative weights with a positive sum, got {values}")
        self.weights = values

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` pool indices drawn by weight."""
        return rng.choice(len(self.policies), size=size, p=self.weights / self.weights.sum())


class LearnerGames:
    """``num_envs`` Go-Stop hands, each with one learner seat (see the module docstring)."""

    single_observation_space: gymnasium.Space[Any]  # one game's (the vector envs batch them)
    single_action_space: gymnasium.Space[Any]
    render_mode: str | None = None

    def __init__(
        self,
        num_envs: int,
        players: int = 2,
        preset: str = "seed",
        rules: dict[str, Any] | None = None,
        encoding: str = "vector",
        learner_seat: int | str = "random",
        opponents: Policy | Sequence[Policy] | OpponentPool | None = None,
        nagari_carry: bool = True,
        reward_scale: float = 1.0,
        seed: int | None = None,
        reward: str = "chips",
        learner_decides: str = "all",
        learner_autoplay: Policy | None = None,
        backend: str | None = None,
        match_hands: int | None = None,
        match_bankroll: int | None = None,
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.rules = Rules.preset(preset, players=players, **(rules or {}))
        self.backend = batch_class(backend).backend  # ValueError for an unknown engine
        if learner_seat != "random" and learner_seat not in range(players):
            raise ValueError(f"learner_seat must be 0..{players - 1} or 'random', got {learner_seat!r}")
        self.format = match_format(self.rules, match_hands, match_bankroll)
        check_reward(reward, self.format)
        if self.format is not None:
            encoding = with_match(encoding)
        if learner_decides not in ("all", "go_stop"):
            raise ValueError(f"learner_decides must be 'all' or 'go_stop', got {learner_decides!r}")
        if (learner_decides == "go_stop") != (learner_autoplay is not None):
            raise ValueError("learner_autoplay (the learner's card player) goes with learner_decides='go_stop'")
        self.encoding, self.learner_seat, self.reward = encoding, learner_seat, reward
        self.learner_decides, self.learner_autoplay = learner_decides, learner_autoplay
        self.pool = opponents if isinstance(opponents, OpponentPool) else None
        self.opponents = (
            opponents.policies if isinstance(opponents, OpponentPool) else opponent_policies(opponents, players)
        )
        self.nagari_carry = flag("nagari_carry", nagari_carry)
        self.reward_scale = finite_number("reward_scale", reward_scale)
        self.num_envs = num_envs
        self.single_observation_space = gymnasium.spaces.Box(
            0.0, OBSERVATION_HIGH, encoding_shape(encoding), np.float32
        )
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.seed(seed)
        self.batch: GameBatch | None = None
        self.ledger: MatchLedger | None = None

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed every game's generator (game i: ``seed + i``), and the opponents'; applied now."""
        seed = int(np.random.SeedSequence().generate_state(1)[0]) if seed is None else check_seed(seed)
        self._game_rngs = [np.random.default_rng(seed + i) for i in range(self.num_envs)]
        self._opponent_rng = np.random.default_rng([seed, self.num_envs])
        self._pool_rng = np.random.default_rng([seed, self.num_envs, 1])
        return [seed + i for i in range(self.num_envs)]

    def start(self) -> np.ndarray:
        """Deal every game anew and play on to each learner's first decision; the observations."""
        everything = np.arange(self.num_envs)
        self.learner = np.zeros(self.num_envs, np.int64)
        self.learner_player = np.zeros(self.num_envs, np.int64)  # in a match; else the same as learner
        self._pending = np.zeros(self.num_envs, np.float64)  # match rewards not yet paid to the learner
        if self.format is not None:
            self.ledger = MatchLedger(self.format, self.rules.players, self.num_envs)
        self._opponent_of = np.tile(np.arange(self.rules.players - 1), (self.num_envs, 1))
        self._carry = np.zeros(self.num_envs, np.int64)
        self.batch = GameBatch.from_seed(
            self.rules, 0, self.num_envs, backend=self.backend
        )  # placeholders, dealt anew below
        self._skipped: list[list[float]] = [[] for _ in range(self.num_envs)]
        self._decided = np.zeros(self.num_envs, bool)  # has the learner moved in this episode yet?
        self._new_episode(everything)
        self._deal(everything)
        self._advance(
            np.zeros(self.num_envs, bool), np.zeros(self.num_envs, np.float32), [{} for _ in range(self.num_envs)]
        )
        return self._observations()

    def play(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """The learners' ``actions`` (one legal action per game), then every other decision up
        to each learner's next: (observations, rewards, done, one info dict per game)."""
        if self.batch is None:
            raise RuntimeError("start the games first (reset)")
        actions = integer_actions(actions)  # TypeError for floats: never rounded
        if actions.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions (one per env), got {actions.size}")
        masks = self.batch.legal_action_mask()
        self.batch.step(check_actions(actions, masks, "the learner"))
        self._decided[:] = True
        done = np.zeros(self.num_envs, bool)
        rewards = np.zeros(self.num_envs, np.float32)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._advance(done, rewards, infos)
        paid = self._decided & ~done  # hands of a match that ended since the learner's last move
        rewards[paid] += self._pending[paid]
        self._pending[paid] = 0
        return self._observations(), rewards, done, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, 125)`` bool masks of the learners' decisions."""
        if self.batch is None:
            raise RuntimeError("start the games first (reset)")
        return self.batch.legal_action_mask()

    # ---- dealing and opponents ------------------------------------------------------------
    def _decks(self, games: np.ndarray) -> np.ndarray:
        return np.stack([shuffled_decks(self.rules, self._game_rngs[i], 1)[0] for i in games])

    def _new_episode(self, games: np.ndarray) -> None:
        """New episodes in ``games`` (a hand, or a match): the learner's player and the
        opponents from the pool; a match starts level and without a carry."""
        if self.learner_seat == "random":
            self.learner_player[games] = [self._game_rngs[i].integers(self.rules.players) for i in games]
        else:
            self.learner_player[games] = self.learner_seat
        if self.pool is not None:
            self._opponent_of[games] = self.pool.draw(self._pool_rng, games.size * (self.rules.players - 1)).reshape(
                games.size, -1
            )
        self._decided[games] = False
        if self.ledger is not None:
            self.ledger.restart(games)
            self._carry[games] = 0

    def _deal(self, games: np.ndarray) -> None:
        """New hands in ``games``, decks from each game's generator, the learner at its player's seat."""
        if self.ledger is None:
            self.learner[games] = self.learner_player[games]
        else:
            self.learner[games] = self.ledger.seat_of(self.learner_player)[games]
        self.batch.reset_games(games, self._decks(games), self._carry[games] if self.nagari_carry else 0)

    def _advance(self, done: np.ndarray, rewards: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Play every other decision, all games in one batch, until each game awaits its learner.
        A hand that ends is reported (``done``, reward, info) when the learner moved in it, else
        kept as a skipped hand for the next report; either way a new hand is dealt at once."""
        while True:
            finished = self.batch.done_games()
            if finished.size:
                if self.ledger is None:
                    self._report(finished, done, rewards, infos)
                    self._new_episode(finished)
                else:
                    self._settle(finished, done, rewards, infos)
                self._deal(finished)  # a deal can end at once (chongtong): look again
            elif not self._play_others():
                return

    def _report(self, finished: np.ndarray, done: np.ndarray, rewards: np.ndarray, infos: list[dict[str, Any]]) -> None:
        learners = self.learner[finished]
        outcome = hand_rewards(self.batch.payments[finished], self.reward)[np.arange(finished.size), learners]
        outcome = outcome.astype(np.float32) * self.reward_scale
        reported = self._decided[finished]
        for i, chips in zip(finished[~reported], outcome[~reported]):
            self._skipped[i].append(float(chips))
        games = finished[reported]
        done[games], rewards[games] = True, outcome[reported]
        terminal = encode(self.batch.select(games), self.learner[games], self.encoding) if games.size else None
        for k, i in enumerate(games):
            infos[i] = {
                "terminal_observation": terminal[k],
                "payments": self.batch.payments[i].tolist(),
                "seat": int(self.learner[i]),
            }
            if self._skipped[i]:
                infos[i]["skipped_hands"], self._skipped[i] = self._skipped[i], []
        self._carry[finished] = self.batch.next_carry[finished] if self.nagari_carry else 0

    def _settle(self, finished: np.ndarray, done: np.ndarray, rewards: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Enter the hands of matches that ended; report and restart the matches that are over."""
        assert self.ledger is not None
        paid = settle_hands(
            self.ledger, finished, self.batch.payments[finished], self.batch.winner[finished], self.reward
        )
        self._pending[finished] += paid[np.arange(finished.size), self.learner_player[finished]] * self.reward_scale
        self._carry[finished] = self.batch.next_carry[finished] if self.nagari_carry else 0
        over = finished[self.ledger.over[finished]]
        if not over.size:
            return
        reported = over[self._decided[over]]
        for i in over[~self._decided[over]]:
            self._skipped[i].append(float(self._pending[i]))
        done[reported], rewards[reported] = True, self._pending[reported]
        terminal = (
            encode(
                self.batch.select(reported), self.learner[reported], self.encoding, self._match_view().select(reported)
            )
            if reported.size
            else None
        )
        for k, i in enumerate(reported):
            infos[i] = {
                "terminal_observation": terminal[k],
                "payments": self.batch.payments[i].tolist(),
                "seat": int(self.learner[i]),
                "player": int(self.learner_player[i]),
                "match_standing": self.ledger.standing[i].tolist(),
                "match_hands": int(self.ledger.played[i]),
            }
            if self._skipped[i]:
                infos[i]["skipped_hands"], self._skipped[i] = self._skipped[i], []
        self._pending[over] = 0
        self._new_episode(over)

    def _match_view(self) -> MatchView | None:
        """Where each game's match stands (None: lone hands)."""
        return None if self.ledger is None else self.ledger.view(self.batch.seat.astype(np.int64))

    def _play_others(self) -> bool:
        """One batched step of every decision not the learner's (opponents', and the learner's
        autoplayed ones); False when there was none."""
        learner_to_move = self.batch.seat == self.learner
        autoplay = learner_to_move & (self.batch.phase != Phase.GO_STOP) & (self.learner_autoplay is not None)
        waiting = ~self.batch.done & (~learner_to_move | autoplay)
        if not waiting.any():
            return False
        actions = np.full(self.num_envs, -1, np.int64)
        relative = (self.batch.seat.astype(np.int64) - self.learner) % self.rules.players
        opponent = self._opponent_of[np.arange(self.num_envs), np.maximum(relative - 1, 0)]
        masks = self.batch.legal_action_mask()
        match = self._match_view()
        for k in range(1, self.rules.players):  # opponent k's games, one call per policy
            controller = np.where(waiting & (relative == k), opponent, -1)
            names = [f"opponent {k}"] * len(self.opponents)
            controlled_actions(
                self.batch, actions, controller, self.opponents, masks, self._opponent_rng, names, None, match
            )
        if self.learner_autoplay is not None:
            controller = np.where(waiting & autoplay, 0, -1)
            policies = [self.learner_autoplay]
            controlled_actions(
                self.batch, actions, controller, policies, masks, self._opponent_rng, ["learner_autoplay"], None, match
            )
        self.batch.step(actions)
        return True

    def _observations(self) -> np.ndarray:
        return encode(self.batch, self.learner, self.encoding, self._match_view())
