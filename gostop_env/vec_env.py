"""A batched stable-baselines3 ``VecEnv`` over the core: B hands stepped together.

:class:`GoStopVecEnv` is :class:`gostop_env.learner_games.LearnerGames` (one learning seat
per game, the other seats played by opponent policies in batch, an :class:`OpponentPool`
for league self-play, every game seeded on its own: see that module) behind SB3's
``VecEnv`` interface. Finished hands are dealt again at once (SB3's auto-reset: the last
observation is in ``info["terminal_observation"]``); ``env_method("action_masks")``
returns the legal-action masks MaskablePPO needs. This is the fast path for training.

Requires stable-baselines3 (``pip install "gostop[rl]"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvObs, VecEnvStepReturn

from .core.actions import integer_actions
from .learner_games import REWARDS, LearnerGames, OpponentPool

__all__ = ["REWARDS", "GoStopVecEnv", "OpponentPool"]


class GoStopVecEnv(LearnerGames, VecEnv):
    """``num_envs`` Go-Stop hands, each with one learner seat, as one SB3 vector env (its
    arguments: :class:`~gostop_env.learner_games.LearnerGames`)."""

    def __init__(self, num_envs: int, *args: Any, **kwargs: Any):
        LearnerGames.__init__(self, num_envs, *args, **kwargs)
        VecEnv.__init__(self, num_envs, self.single_observation_space, self.single_action_space)
        self._actions = np.zeros(num_envs, np.int64)

    def reset(self) -> VecEnvObs:
        return self.start()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = integer_actions(actions)  # a TypeError here, where SB3 hands them over

    def step_wait(self) -> VecEnvStepReturn:
        return self.play(self._actions)

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
