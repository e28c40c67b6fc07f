"""Scale-out training on Ray RLlib: masked PPO self-play on the PettingZoo env.

For users who outgrow one machine: RLlib spreads the rollouts over ``env_runners``
(processes, or the nodes of a Ray cluster) while one learner updates the policy. Every
seat plays the same policy (self-play); illegal actions are masked by RLlib's
``ActionMaskingTorchRLModule``, which reads observations as ``{"observations",
"action_mask"}``, so :class:`RLlibKeys` renames the PettingZoo env's keys.

Self-play returns sum to zero, so each iteration is measured instead by the policy's
chips per hand against ``greedy`` over duplicate deals (:class:`RLlibPolicy` plays the
module in the toolkit's batched matches; the same deals every iteration). Ray's and
RLlib's own start-up notices and deprecation warnings are kept out of the output.

Requires the ``rllib`` extra (``pip install "gostop[rllib]"``; RLlib pins its own
gymnasium release). Run: ``gostop train-rllib --iterations 10 --env-runners 1``.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from pettingzoo.utils import BaseWrapper

from gostop_env.core import Rules
from gostop_env.pettingzoo_env import raw_env

ENV_NAME = "gostop_rllib"
MODULE = "shared"
EVAL_OPPONENT = "greedy"
QUIET_LOGGERS = ("ray", "ray.rllib", "ray.tune", "ray.train")


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
    envs_per_runner: int = 8,
    seed: int = 0,
    train_batch_size: int = 4000,
    minibatch_size: int = 500,
    epochs: int = 4,
    learning_rate: float = 3e-4,
    hidden: tuple[int, ...] = (256, 256),
) -> Any:
    """RLlib ``PPOConfig`` for masked self-play (every seat mapped to one shared module),
    ``envs_per_runner`` games stepped together in each rollout process (or in the driver)."""
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
        .env_runners(
            num_env_runners=env_runners,
            num_envs_per_env_runner=envs_per_runner,  # one forward pass per step for all of them
            # RLlib 2.x numpy'izes every finished episode again at each step of a sample
            # (quadratic in episodes: 2/3 of an iteration here); PPO learns from the lists as well.
            episodes_to_numpy=False,
        )
        .fault_tolerance(restart_failed_env_runners=False)  # a failed runner is an error, not a silent restart
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=epochs,
            lr=learning_rate,
        )
        .debugging(seed=seed)
    )


def train_rllib(
    out: str | Path,
    iterations: int,
    log: Callable[[str], None] = print,
    eval_deals: int = 200,
    **config: Any,
) -> Path:
    """Run ``iterations`` PPO iterations (``config``: :func:`ppo_config` options), each
    measured against greedy over ``eval_deals`` duplicate deals (0: not measured); save a
    checkpoint and ``progress.jsonl`` (one line of figures per iteration) in ``out``."""
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    if eval_deals < 0:
        raise ValueError(f"eval_deals must be at least 0, got {eval_deals}")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    _start_ray_quietly(config.get("env_runners", 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        algorithm = ppo_config(**config).build_algo()
    rules = Rules.preset(config.get("preset", "seed"), players=config.get("players", 2))
    with (out / "progress.jsonl").open("w") as progress:
        for iteration in range(1, iterations + 1):
            figures = _figures(algorithm.train())
            if eval_deals:
                figures.update(evaluate_module(algorithm.get_module(MODULE), rules, eval_deals, config.get("seed", 0)))
            progress.write(json.dumps({"iteration": iteration, **figures}) + "\n")
            log(f"iteration {iteration}: " + ", ".join(_shown(k, v) for k, v in figures.items()))
    algorithm.save_to_path(str(out / "checkpoint"))
    algorithm.stop()
    return out


def _start_ray_quietly(env_runners: int) -> None:
    """A local Ray instance (unless one is running) that keeps its notices to itself."""
    import ray

    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    if not ray.is_initialized():
        ray.init(
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            num_cpus=max(1, env_runners) + 1,
            runtime_env={"env_vars": {"PYTHONWARNINGS": "ignore::DeprecationWarning"}},
        )


class RLlibPolicy:
    """An RLlib action-masking module as a batched policy of this toolkit (its most likely
    legal action), so tournaments and :func:`gostop.agents.compare.compare` can play it."""

    encoding = "vector"

    def __init__(self, module: Any, name: str = "rllib"):
        self.module, self.name = module, name

    def __call__(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        import torch

        masks = np.asarray(masks, bool)
        batch = {
            "obs": {
                "observations": torch.as_tensor(np.asarray(observations, np.float32)),
                "action_mask": torch.as_tensor(masks, dtype=torch.float32),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"].cpu().numpy()
        return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)


def evaluate_module(module: Any, rules: Rules, deals: int, seed: int) -> dict[str, float]:
    """The module's chips per hand against greedy (95% interval) over ``deals`` duplicate
    deals, drawn from ``seed`` (the same deals at every call)."""
    from gostop.agents.compare import compare
    from gostop.agents.registry import make_agent

    result = compare(RLlibPolicy(module), make_agent(EVAL_OPPONENT, rules), deals, seed=seed + 1_000_003, rules=rules)
    low, high = result.ci95
    return {f"chips_vs_{EVAL_OPPONENT}": result.chips_per_hand, "ci_low": low, "ci_high": high}


def _shown(key: str, value: float) -> str:
    return f"{key} {value:+.2f}" if key.startswith(("chips", "ci_")) else f"{key} {value:.4g}"


def _figures(result: dict[str, Any]) -> dict[str, float]:
    """The few numbers worth a line per iteration, from RLlib's nested result dict."""
    runners, learner = result.get("env_runners", {}), result.get("learners", {}).get(MODULE, {})
    picked = {
        "env_steps": runners.get("num_env_steps_sampled_lifetime"),
        "episode_length": runners.get("episode_len_mean"),
        "policy_loss": learner.get("policy_loss"),
        "entropy": learner.get("entropy"),
        "vf_loss": learner.get("vf_loss"),
        "seconds": result.get("time_this_iter_s"),
    }
    return {k: float(v) for k, v in picked.items() if isinstance(v, (int, float, np.floating, np.integer))}
