"""Throughput of the environments, printed as a markdown table.

1. PettingZoo AEC ``env()``, one game, random legal moves: decisions/s, beside PettingZoo's
   own ``leduc_holdem_v4`` ``env()`` measured the same way in the same run (needs
   ``pip install ".[bench]"``; the row is skipped without it). The two run in turn for
   ``--rounds`` rounds, so that a shared machine whose speed drifts slows both alike: the
   table gives each one's median and the range of the per-round ratios.
2. The batched SB3 vector env, random learner and random opponents: learner steps/s at
   B = 256 and 1024.
3. MaskablePPO end to end on the vector env (B = 256, one torch thread): env steps/s.

Usage: ``python benchmarks/env_throughput.py [--seconds 5] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

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


def aec_rounds(makers: dict[str, Callable[[], Any]], seconds: float, rounds: int) -> dict[str, list[float]]:
    """Decisions/s of each AEC env, ``rounds`` times in turn (every env once per round)."""
    rates: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(rounds):
        for name, make in makers.items():
            rates[name].append(aec_decisions_per_second(make, seconds))
    return rates


def print_aec_rows(seconds: float, rounds: int) -> None:
    """The AEC rows: gostop_v0's ``env()``, and leduc_holdem_v4's in the same rounds when installed."""
    makers = {"gostop_v0": lambda: pettingzoo.make("aec", "gostop_v0")}
    try:
        from pettingzoo.classic.rlcard_envs import leduc_holdem  # noqa: F401 (fails without rlcard)

        makers["leduc_holdem_v4"] = lambda: pettingzoo.make("aec", "classic/leduc_holdem_v4")
        skipped = None
    except ImportError as error:
        skipped = error
    rates = aec_rounds(makers, seconds, rounds)
    ours = rates["gostop_v0"]
    median = statistics.median(ours)
    print(f"| gostop_v0 AEC env() | 2 players, one game, median of {rounds} | {median:,.0f} | decisions/s |")
    if skipped is not None:
        print(f"| leduc_holdem_v4 AEC env() | skipped: {skipped} | - | - |")
        return
    leduc = rates["leduc_holdem_v4"]
    ratios = sorted(a / b for a, b in zip(ours, leduc))
    print(
        f"| leduc_holdem_v4 AEC env() | same loop, same rounds | {statistics.median(leduc):,.0f} | decisions/s "
        f"(gostop_v0 {statistics.median(ratios):.2f}x, rounds {ratios[0]:.2f} .. {ratios[-1]:.2f}x) |",
        flush=True,
    )


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
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of each measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the AEC rows (each env once a round)")
    args = parser.parse_args()
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be > 0 and --rounds >= 1")
    print("| what | setting | rate | unit |\n|---|---|---|---|")
    print_aec_rows(args.seconds, args.rounds)
    for num_envs in (256, 1024):
        rate = vec_steps_per_second(num_envs, args.seconds)
        print(f"| GoStopVecEnv, random opponents | B = {num_envs} | {rate:,.0f} | learner steps/s |", flush=True)
    ppo = ppo_steps_per_second(args.seconds)
    print(f"| MaskablePPO on GoStopVecEnv | B = 256, 1 torch thread | {ppo:,.0f} | env steps/s |")


if __name__ == "__main__":
    main()
