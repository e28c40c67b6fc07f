"""Throughput of the environments, printed as a markdown table.

1. PettingZoo AEC ``env()`` (with its default wrappers), one game, random legal moves:
   decisions/s, beside PettingZoo's own ``leduc_holdem_v4`` ``env()`` measured the same way
   in the same run (needs ``pip install ".[bench]"``; the row is skipped without it).
2. The batched SB3 vector env, random learner and random opponents: learner steps/s at
   B = 256 and 1024.
3. MaskablePPO end to end on the vector env (B = 256, one torch thread): env steps/s.

Usage: ``python benchmarks/env_throughput.py [--seconds 5]``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pettingzoo  # noqa: E402

import gostop_env  # noqa: E402, F401 (registers gostop_v0)
from gostop_env.vec_env import GoStopVecEnv  # noqa: E402


def aec_decisions_per_second(make, seconds: float) -> float:
    env, rng = make(), np.random.default_rng(0)
    decisions, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def vec_steps_per_second(num_envs: int, seconds: float) -> float:
    env, rng = GoStopVecEnv(num_envs, seed=0), np.random.default_rng(0)
    env.reset()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        masks = env.action_masks()
        env.step((rng.random(masks.shape) + masks).argmax(axis=1))
        steps += num_envs
    return steps / (time.perf_counter() - start)


def ppo_steps_per_second(seconds: float) -> float:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = GoStopVecEnv(256, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=2048, n_epochs=4, seed=0)
    model.learn(256 * 32)  # warm-up: one rollout and update
    steps = max(256 * 32, int(seconds * 8000) // (256 * 32) * 256 * 32)
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print("| what | setting | rate | unit |\n|---|---|---|---|")
    ours = aec_decisions_per_second(lambda: pettingzoo.make("aec", "gostop_v0"), args.seconds)
    print(f"| gostop_v0 AEC env() | 2 players, one game | {ours:,.0f} | decisions/s |", flush=True)
    try:
        from pettingzoo.classic.rlcard_envs import leduc_holdem  # noqa: F401 (fails without rlcard)

        leduc = aec_decisions_per_second(lambda: pettingzoo.make("aec", "classic/leduc_holdem_v4"), args.seconds)
        print(f"| leduc_holdem_v4 AEC env() | same loop | {leduc:,.0f} | decisions/s ({ours / leduc:.1f}x leduc) |")
    except ImportError as error:
        print(f"| leduc_holdem_v4 AEC env() | skipped: {error} | - | - |")
    for num_envs in (256, 1024):
        rate = vec_steps_per_second(num_envs, args.seconds)
        print(f"| GoStopVecEnv, random opponents | B = {num_envs} | {rate:,.0f} | learner steps/s |", flush=True)
    ppo = ppo_steps_per_second(args.seconds)
    print(f"| MaskablePPO on GoStopVecEnv | B = 256, 1 torch thread | {ppo:,.0f} | env steps/s |")


if __name__ == "__main__":
    main()
