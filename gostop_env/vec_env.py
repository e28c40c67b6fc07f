"""A batched stable-baselines3 ``VecEnv`` over the core: B hands stepped together.

Each of the ``num_envs`` games has one learning seat (fixed, or drawn each hand with
``learner_seat="random"``); the other seats are played inside ``step_wait`` by opponent
policies (:mod:`gostop_env.policy`), in batch. Finished hands are dealt again at once
(SB3's auto-reset: the last observation is in ``info["terminal_observation"]``). Every
game draws its decks from its own generator, seeded by :meth:`seed` (game i gets
``seed + i``), so a game's hands do not depend on the others. ``env_method("action_masks")``
returns the legal-action masks MaskablePPO needs. This is the fast path for training.

Requires stable-baselines3 (``pip install "gostop[rl]"``).
"""
from __future__ import annotations

from typing import Any, Sequence

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvObs, VecEnvStepReturn

from .core import NUM_ACTIONS, GameBatch, Rules
from .core.deck import shuffled_decks
from .encodings import OBSERVATION_HIGH, encode, encoding_shape
from .policy import Policy, check_actions, observe, opponent_policies


class GoStopVecEnv(VecEnv):
    """``num_envs`` Go-Stop hands, each with one learner seat, as one SB3 vector env."""

    def __init__(self, num_envs: int, players: int = 2, preset: str = "seed",
                 rules: dict[str, Any] | None = None, encoding: str = "vector",
                 learner_seat: int | str = "random", opponents: Policy | Sequence[Policy] | None = None,
                 nagari_carry: bool = True, reward_scale: float = 1.0, seed: int | None = None):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.rules = Rules.preset(preset, players=players, **(rules or {}))
        if learner_seat != "random" and learner_seat not in range(players):
            raise ValueError(f"learner_seat must be 0..{players - 1} or 'random', got {learner_seat!r}")
        self.encoding, self.learner_seat = encoding, learner_seat
        self.opponents = opponent_policies(opponents, players)
        self.nagari_carry, self.reward_scale = nagari_carry, float(reward_scale)
        space = gymnasium.spaces.Box(0.0, OBSERVATION_HIGH, encoding_shape(encoding), np.float32)
        self.render_mode = None
        super().__init__(num_envs, space, gymnasium.spaces.Discrete(NUM_ACTIONS))
        self.seed(seed)
        self.batch: GameBatch | None = None
        self._actions = np.zeros(num_envs, np.int64)

    # ---- VecEnv interface --------------------------------------------------------------
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed every game's generator (game i: ``seed + i``), and the opponents'; applied now."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self._game_rngs = [np.random.default_rng(seed + i) for i in range(self.num_envs)]
        self._opponent_rng = np.random.default_rng([seed, self.num_envs])
        return [seed + i for i in range(self.num_envs)]

    def reset(self) -> VecEnvObs:
        everything = np.arange(self.num_envs)
        self.learner = np.zeros(self.num_envs, np.int64)
        self._carry = np.zeros(self.num_envs, np.int64)
        self.batch = GameBatch.from_seed(self.rules, 0, self.num_envs)  # placeholders, dealt anew below
        self._skipped: list[list[float]] = [[] for _ in range(self.num_envs)]
        self._start_hands(everything)
        return self._observations()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        masks = self.batch.legal_action_mask()
        actions = check_actions(self._actions, masks, "the learner")
        self.batch.step(actions)
        self._play_opponents()
        done = self.batch.done.copy()
        rows = np.arange(self.num_envs)
        rewards = np.where(done, self.batch.payments[rows, self.learner], 0).astype(np.float32) * self.reward_scale
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        finished = np.flatnonzero(done)
        if finished.size:
            terminal = encode(self.batch, self.learner, self.encoding)
            for i in finished:
                infos[i] = {"terminal_observation": terminal[i], "payments": self.batch.payments[i].tolist(),
                            "seat": int(self.learner[i])}
            self._carry[finished] = self.batch.next_carry[finished] if self.nagari_carry else 0
            self._start_hands(finished)
            for i in finished:
                if self._skipped[i]:
                    infos[i]["skipped_hands"], self._skipped[i] = self._skipped[i], []
        return self._observations(), rewards, done, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, 125)`` bool masks of the learners' decisions."""
        return self.batch.legal_action_mask()

    def close(self) -> None:
        self.batch = None

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"GoStopVecEnv games have no method {method_name!r} (only 'action_masks')")
        return list(self.action_masks()[self._indices(indices)])

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> np.ndarray:
        return np.arange(self.num_envs)[slice(None) if indices is None else indices].reshape(-1)

    # ---- dealing and opponents ------------------------------------------------------------
    def _decks(self, games: np.ndarray) -> np.ndarray:
        return np.stack([shuffled_decks(self.rules, self._game_rngs[i], 1)[0] for i in games])

    def _start_hands(self, games: np.ndarray) -> None:
        """Deal hands into ``games`` and play opponents up to the learner's first decision;
        hands that end before it are recorded as skipped and dealt again."""
        while games.size:
            if self.learner_seat == "random":
                self.learner[games] = [self._game_rngs[i].integers(self.rules.players) for i in games]
            else:
                self.learner[games] = self.learner_seat
            carry = self._carry[games] if self.nagari_carry else 0
            self.batch.reset_games(games, self._decks(games), carry)
            self._play_opponents()
            over = games[self.batch.done[games]]
            for i in over:
                self._skipped[i].append(float(self.batch.payments[i, self.learner[i]]) * self.reward_scale)
            self._carry[over] = self.batch.next_carry[over] if self.nagari_carry else 0
            games = over

    def _play_opponents(self) -> None:
        """Step the opponents' decisions, in batch, until every game awaits its learner or is over."""
        players = self.rules.players
        while True:
            waiting = ~self.batch.done & (self.batch.seat != self.learner)
            if not waiting.any():
                return
            actions = np.full(self.num_envs, -1, np.int64)
            relative = (self.batch.seat.astype(np.int64) - self.learner) % players
            masks = self.batch.legal_action_mask()
            for k, policy in enumerate(self.opponents, start=1):
                games = np.flatnonzero(waiting & (relative == k))
                if games.size:
                    seen = observe(policy, self.batch, games, self.batch.seat[games])
                    chosen = policy(seen, masks[games], self._opponent_rng)
                    actions[games] = check_actions(chosen, masks[games], f"opponent {k}")
            self.batch.step(actions)

    def _observations(self) -> np.ndarray:
        return encode(self.batch, self.learner, self.encoding)
