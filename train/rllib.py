"""Scale-out training on Ray RLlib: masked PPO self-play on the PettingZoo env.

For users who outgrow one machine: RLlib spreads the rollouts over ``env_runners``
(processes, or the nodes of a Ray cluster) while one learner updates the policy. Every
seat plays the same policy (self-play); illegal actions are masked by RLlib's
``ActionMaskingTorchRLModule``, which reads observations as ``{"observations",
"action_mask"}``, so :class:`RLlibKeys` renames the PettingZoo env's keys.

Requires the ``rllib`` extra (``pip install "gostop[rllib]"``; RLlib pins its own
gymnasium release). Run: ``gostop train-rllib --iterations 50 --env-runners 8``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from pettingzoo.utils import BaseWrapper

from gostop_env.pettingzoo_env import raw_env

ENV_NAME = "gostop_rllib"
MODULE = "shared"


class RLlibKeys(BaseWrapper):
    """The AEC env with observations keyed as RLlib's masking module expects (float masks)."""

    def __init__(self, env: Any):
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        self._space = gymnasium.spaces.Dict(
            {
                "observations": inner["observation"],
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, inner["action_mask"].shape, np.float32),
            }
        )

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seen = super().observe(agent)
        return {"observations": seen["observation"], "action_mask": seen["action_mask"].astype(np.float32)}


def make_env(env_config: dict[str, Any]) -> Any:
    """An RLlib multi-agent env over the Go-Stop AEC env (``env_config``: raw_env's options)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibKeys(raw_env(**env_config)))


def ppo_config(
    players: int = 2,
    preset: str = "seed",
    env_runners: int = 0,
    seed: int = 0,
    train_batch_size: int = 4000,
    minibatch_size: int = 500,
    epochs: int = 4,
    learning_rate: float = 3e-4,
    hidden: tuple[int, ...] = (256, 256),
) -> Any:
    """RLlib ``PPOConfig`` for masked self-play (every seat mapped to one shared module)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": []}
    )
    return (
        PPOConfig()
        .environment(
            ENV_NAME, env_config={"players": players, "preset": preset, "reward_scale": 0.1}, disable_env_checking=True
        )  # its check plays unmasked random actions
        .multi_agent(policies={MODULE}, policy_mapping_fn=lambda agent_id, episode, **kwargs: MODULE)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE: module}))
        .env_runners(num_env_runners=env_runners)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=epochs,
            lr=learning_rate,
        )
        .debugging(seed=seed)
    )


def train_rllib(out: str | Path, iterations: int, log: Callable[[str], None] = print, **config: Any) -> Path:
    """Run ``iterations`` PPO iterations (``config``: :func:`ppo_config` options); save a
    checkpoint and ``progress.jsonl`` (one line of figures per iteration) in ``out``."""
    import ray

    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, num_cpus=max(1, config.get("env_runners", 0)) + 1)
    algorithm = ppo_config(**config).build_algo()
    with (out / "progress.jsonl").open("w") as progress:
        for iteration in range(1, iterations + 1):
            figures = _figures(algorithm.train())
            progress.write(json.dumps({"iteration": iteration, **figures}) + "\n")
            log(f"iteration {iteration}: " + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()))
    algorithm.save_to_path(str(out / "checkpoint"))
    algorithm.stop()
    return out


def _figures(result: dict[str, Any]) -> dict[str, float]:
    """The few numbers worth a line per iteration, from RLlib's nested result dict."""
    runners, learner = result.get("env_runners", {}), result.get("learners", {}).get(MODULE, {})
    picked = {
        "env_steps": runners.get("num_env_steps_sampled_lifetime"),
        "episode_length": runners.get("episode_len_mean"),
        "policy_loss": learner.get("policy_loss"),
        "entropy": learner.get("entropy"),
        "vf_loss": learner.get("vf_loss"),
    }
    return {k: float(v) for k, v in picked.items() if isinstance(v, (int, float, np.floating, np.integer))}
