"""Training throughput: learner steps per second of both trainers, as markdown tables.

Each MaskablePPO row runs :func:`gostop.train.ppo.train` (the loop ``gostop train`` runs: league
vector env, MaskablePPO, no evaluations or snapshots) for a fixed number of timesteps on one
torch thread, and reports env steps/s of the whole loop. Each batched-trainer row runs
:func:`gostop.train.batched.train_batched` the same way (the ``scratch`` config's recipe, that
recipe with one epoch a round, which learns no faster per minute, and that trainer with
MaskablePPO's own settings). It also times behaviour cloning (demonstrations recorded per
second, and decisions fitted per second per epoch), and splits a round of the shipped recipe
into its rollout and its update (microseconds per learner step). The last line compares the
batched trainer's shipped recipe (the faster of float32 and bfloat16, which pays where the CPU
has bfloat16 instructions) with MaskablePPO on the same network, [256, 256], against greedy
players, measured in this run.

Usage: ``python benchmarks/train_throughput.py [--timesteps 65536] [--hands 2000] [--rounds 6]``
(``GOSTOP_TORCH_THREADS=2 OMP_NUM_THREADS=2`` before it: every row on two torch threads).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from gostop.agents.registry import make_agent  # noqa: E402
from gostop.train.batched import BatchedRun, train_batched  # noqa: E402
from gostop.train.bc import clone, collect  # noqa: E402
from gostop.train.config import TrainConfig  # noqa: E402
from gostop.train.ppo import _make_env, _make_pool, _new_model, train  # noqa: E402

CASES = [  # (label, net_arch, envs, opponent)
    ("random opponent", "[64, 64]", 256, "random"),
    ("greedy opponent", "[64, 64]", 256, "greedy"),
    ("greedy opponent", "[256, 256]", 256, "greedy"),
    ("greedy opponent", "[256, 256]", 64, "greedy"),
]


def ppo_steps_per_second(net_arch: str, envs: int, opponent: str, timesteps: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        config = TrainConfig.load(
            "smoke",
            [
                f'out="{folder}/run"',
                f"ppo.net_arch={net_arch}",
                f"ppo.envs={envs}",
                "ppo.n_steps=64",
                "ppo.batch_size=2048",
                "ppo.epochs=4",
                f"ppo.timesteps={timesteps}",
                f"opponents.pool={{{opponent}=1.0}}",
                "opponents.snapshot_every=0",
                "eval.every=0",
                "eval.deals=2",
                f"checkpoint_every={10 * timesteps}",
            ],
        )
        config = TrainConfig.from_dict({**config.to_dict(), "bc": None})
        start = time.perf_counter()
        train(config, progress=False, log=lambda _: None)
        return timesteps / (time.perf_counter() - start)


BATCHED_CASES = [  # (label, overrides of the scratch config)
    ("scratch recipe in float32: 1,024 hands a round, self-play, 2 epochs", ["ppo.precision='float32'"]),
    ("scratch recipe as shipped, in bfloat16 (ppo.precision)", []),
    ("the same with 1 epoch a round (each sample used once)", ["ppo.epochs=1"]),
    (
        "MaskablePPO's settings: greedy opponents, 4 epochs, minibatch 2048",
        ["opponents.self_play=0.0", "opponents.pool={greedy=1.0}", "ppo.epochs=4", "ppo.batch_size=2048"],
    ),
]


def batched_steps_per_second(overrides: list[str], timesteps: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        config = TrainConfig.load(
            "scratch",
            [
                f'out="{folder}/run"',
                f"ppo.timesteps={timesteps}",
                "opponents.snapshot_every=0",
                "eval.every=0",
                "eval.deals=2",
                f"checkpoint_every={10 * timesteps}",
                *overrides,
            ],
        )
        start = time.perf_counter()
        train_batched(config, progress=False, log=lambda _: None)
        return timesteps / (time.perf_counter() - start)


def round_parts(rounds: int = 6) -> tuple[float, float]:
    """Microseconds per learner step of the ``scratch`` recipe's rollout and of its update,
    over ``rounds`` rounds after a first one (imports and compilation) left out."""
    with tempfile.TemporaryDirectory() as folder:
        config = TrainConfig.load("scratch", [f'out="{folder}/run"', "opponents.snapshot_every=0", "eval.every=0"])
        run = BatchedRun(config, Path(folder) / "run", False, lambda _: None)
        steps, rollout, learning = 0, 0.0, 0.0
        for round_ in range(rounds + 1):
            start = time.perf_counter()
            samples, _ = run.play_round()
            played = time.perf_counter()
            run.learn(samples)
            if round_:
                steps += len(samples)
                rollout += played - start
                learning += time.perf_counter() - played
    return rollout / steps * 1e6, learning / steps * 1e6


def cloning_rates(hands: int) -> tuple[float, float]:
    config = TrainConfig.load("smoke", ["ppo.net_arch=[256, 256]"])
    start = time.perf_counter()
    demos = collect(make_agent("greedy", config.rules), config.rules, hands, seed=0)
    recorded = len(demos) / (time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as folder:
        model = _new_model(config, _make_env(config, _make_pool(config, {"snapshots": []}), 0), Path(folder))
        start = time.perf_counter()
        clone(model.policy, demos, epochs=1, batch_size=512, learning_rate=1e-3, seed=0)
        fitted = len(demos) / (time.perf_counter() - start)
    return recorded, fitted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=65_536)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=6, help="rounds timed part by part")
    args = parser.parse_args()
    print("| loop | opponent | net | envs | env steps/s |\n|---|---|---|---|---|")
    rates = {}
    for label, net_arch, envs, opponent in CASES:
        rate = rates[label, net_arch, envs] = ppo_steps_per_second(net_arch, envs, opponent, args.timesteps)
        print(f"| MaskablePPO (n_steps 64, 4 epochs) | {label} | {net_arch} | {envs} | {rate:,.0f} |", flush=True)
    print("\n| batched trainer, [256, 256] | learner steps/s |\n|---|---|")
    batched = [batched_steps_per_second(overrides, 4 * args.timesteps) for _, overrides in BATCHED_CASES]
    for (label, _), rate in zip(BATCHED_CASES, batched):
        print(f"| {label} | {rate:,.0f} |", flush=True)
    rollout, learning = round_parts(args.rounds)
    print(
        f"\n| a round of the shipped recipe | µs per learner step |\n|---|---|\n| rollout (core, league, encoding,"
        f" forward) | {rollout:.1f} |\n| update (2 epochs of forward and backward) | {learning:.1f} |"
    )
    recorded, fitted = cloning_rates(args.hands)
    print(
        f"\n| behaviour cloning | rate |\n|---|---|\n| greedy demonstrations recorded | {recorded:,.0f} decisions/s |"
        f"\n| fitting [256, 256], batch 512 | {fitted:,.0f} decisions/s per epoch |"
    )
    import torch

    print(f"\n(numpy {np.__version__}, torch threads: {torch.get_num_threads()}, from $GOSTOP_TORCH_THREADS)")
    baseline = rates["greedy opponent", "[256, 256]", 256]
    best = max(batched[:2])
    print(f"fast trainer: {best:,.0f} steps/s, {best / baseline:.1f}x MaskablePPO")


if __name__ == "__main__":
    main()
