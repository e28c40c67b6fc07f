"""The parts of the core's random-play loop around the step, each done the ways the compiled
backend could do it, timed in turn in one process, printed as a markdown table.

The loop of ``core_throughput.py`` on ``numba-parallel`` (batches of 2048 games or more run
on numba's threads), 2 players, ``seed`` preset. At each step it picks the random actions
three ways and lists the finished games two ways, each way in turn first, checks that all
agree, and plays on:

- *NumPy draws, one-thread pick*: ``rng.random`` then the compiled picker on one thread
  (what ``numba`` does);
- *NumPy draws, threaded pick*: ``rng.random`` then the picker on numba's threads;
- *drawn on the threads*: each thread draws its own games' numbers inside the picker
  (``gostop_env.core.compiled.pcg64``; what ``numba-parallel`` does);
- *flatnonzero*: ``np.flatnonzero(batch.done)``; *done_games*: the compiled backend's
  ``batch.done_games()``.

Each generator starts from the same seed, so every way draws the same numbers.
Usage: ``python benchmarks/loop_parts.py [--seconds 4] [--batches 4096,16384,65536] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from core_throughput import CoreLoop

from gostop_env.core import Rules
from gostop_env.core.compiled.loops import PARALLEL, SERIAL
from gostop_env.core.compiled.picker import drawn_actions, random_actions

PICKS = ("NumPy draws, one-thread pick", "NumPy draws, threaded pick", "drawn on the threads")
LISTS = ("flatnonzero", "done_games")


def measure(batch_size: int, seconds: float, seed: int) -> dict[str, float]:
    """Mean microseconds a step of each way, over about ``seconds`` of random play."""
    loop = CoreLoop(Rules(), batch_size, seed, "numba-parallel")
    loop.run(0.5)
    batch, rngs = loop.batch, [np.random.default_rng(seed) for _ in PICKS]
    threads = batch.chunks()
    picks: list[Callable[[np.ndarray], np.ndarray]] = [
        lambda bits: random_actions(bits, rngs[0].random(len(bits)), SERIAL),
        lambda bits: random_actions(bits, rngs[1].random(len(bits)), PARALLEL),
        lambda bits: drawn_actions(bits, rngs[2], PARALLEL, threads),
    ]
    lists: list[Callable[[], np.ndarray]] = [lambda: np.flatnonzero(batch.done), batch.done_games]
    spent = dict.fromkeys(PICKS + LISTS, 0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = _timed_in_turn(steps, picks, PICKS, spent, batch.legal_bits)
        batch.step(actions)
        done = _timed_in_turn(steps, lists, LISTS, spent)
        if done.size:
            batch.reset_games(done, loop.decks.take(done.size))
        steps += 1
    return {name: total / steps / 1e3 for name, total in spent.items()}


def _timed_in_turn(
    step: int, ways: list[Callable[..., np.ndarray]], names: tuple[str, ...], spent: dict, *args: np.ndarray
) -> np.ndarray:
    """Run every way on ``args``, starting from way ``step`` modulo their number; add each
    one's nanoseconds to ``spent``; check that all gave the same and return it."""
    results: list[np.ndarray] = [np.empty(0)] * len(ways)
    for k in range(len(ways)):
        way = (step + k) % len(ways)
        began = time.perf_counter_ns()
        results[way] = ways[way](*args)
        spent[names[way]] += time.perf_counter_ns() - began
    if any(not np.array_equal(result, results[0]) for result in results[1:]):
        raise AssertionError("the ways disagree")
    return results[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--batches", default="4096,16384,65536")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| batch | " + " | ".join(PICKS + LISTS) + " |")
    print("|---" * (1 + len(PICKS + LISTS)) + "|")
    for batch_size in (int(b) for b in args.batches.split(",")):
        times = measure(batch_size, args.seconds, args.seed)
        print(f"| {batch_size} | " + " | ".join(f"{times[name]:.1f} us" for name in PICKS + LISTS) + " |")


if __name__ == "__main__":
    main()
