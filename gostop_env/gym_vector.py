"""A Gymnasium ``VectorEnv`` over the batched core: ``gymnasium.make_vec("GoStop-v0", num_envs=B)``.

:class:`GoStopVectorEnv` is :class:`gostop_env.learner_games.LearnerGames` (one learning
seat per game, the other seats played by opponent policies in batch, every game seeded on
its own) behind Gymnasium's vector API, registered as ``GoStop-v0``'s
``vector_entry_point`` (as Gymnasium's own CartPole registers its vectorised version), so
``make_vec`` steps every game in one batch instead of wrapping B single envs.

Autoreset: ``AutoresetMode.SAME_STEP``. A hand that ends is reported in the step that ends
it (``terminated``, the reward) and a new hand is dealt in that same step, so the returned
observation is already the new hand's first decision; the finished hand's last observation
is ``info["final_obs"][i]`` and its payments and seat ``info["final_info"]`` (each with
Gymnasium's ``_key`` masks). ``info["action_mask"]`` holds every game's legal actions for
the observation returned, at every step, reset included (also :meth:`action_masks`): it is
never all false. Hands are never truncated. With ``learner_decides="go_stop"``, hands that
ended without a learner decision are listed (their rewards) in ``info["skipped_hands"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .learner_games import LearnerGames
from .render import check_render_mode


class GoStopVectorEnv(LearnerGames, VectorEnv):
    """``num_envs`` Go-Stop hands, each with one learner seat, as one Gymnasium vector env
    (its arguments: :class:`~gostop_env.learner_games.LearnerGames`, and ``render_mode``,
    which a vector env does not use: any mode but None warns)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *args: Any, render_mode: str | None = None, **kwargs: Any):
        LearnerGames.__init__(self, num_envs, *args, **kwargs)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """New hands in every game; with ``seed``, game i deals from ``seed + i`` (one integer:
        the games' seeds follow from it)."""
        if seed is not None:
            if not isinstance(seed, int | np.integer):
                raise TypeError(f"seed must be one integer (game i deals from seed + i), got {seed!r}")
            self.seed(int(seed))
        observations = self.start()
        return observations, {"action_mask": self.action_masks(), "seat": self.learner.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One legal action per game (an illegal one: ``PolicyActionError``, a ValueError
        naming it; not an integer: ``TypeError``); see the module docstring for what comes back."""
        observations, rewards, done, infos = self.play(actions)
        info: dict[str, Any] = {"action_mask": self.action_masks(), "seat": self.learner.copy()}
        if done.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = infos[i]["terminal_observation"]
            payments = np.zeros((self.num_envs, self.rules.players), np.int64)
            seats = np.full(self.num_envs, -1, np.int64)
            for i in np.flatnonzero(done):
                payments[i], seats[i] = infos[i]["payments"], infos[i]["seat"]
            final_info = {"payments": payments, "_payments": done.copy(), "seat": seats, "_seat": done.copy()}
            if self.ledger is not None:  # a match ended: whose it was, its standing and length
                final_info.update(self._match_final_info(done, infos))
            info.update(final_obs=final_obs, _final_obs=done.copy(), final_info=final_info, _final_info=done.copy())
        skipped = np.array(["skipped_hands" in i for i in infos])
        if skipped.any():  # hands dealt and ended without a learner decision (learner_decides="go_stop")
            info["skipped_hands"] = np.array([i.get("skipped_hands") for i in infos], dtype=object)
            info["_skipped_hands"] = skipped
        return observations, rewards.astype(np.float64), done, np.zeros(self.num_envs, bool), info

    def _match_final_info(self, done: np.ndarray, infos: list[dict[str, Any]]) -> dict[str, np.ndarray]:
        """``player``, ``match_standing`` ``(num_envs, P)`` and ``match_hands`` of the matches
        that ended (with their ``_key`` masks)."""
        player = np.full(self.num_envs, -1, np.int64)
        standing = np.zeros((self.num_envs, self.rules.players), np.int64)
        hands = np.zeros(self.num_envs, np.int64)
        for i in np.flatnonzero(done):
            player[i], standing[i], hands[i] = infos[i]["player"], infos[i]["match_standing"], infos[i]["match_hands"]
        values = {"player": player, "match_standing": standing, "match_hands": hands}
        return {**values, **{f"_{key}": done.copy() for key in values}}

    def close_extras(self, **kwargs: Any) -> None:
        self.batch = None
