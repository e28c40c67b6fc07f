"""Where a step of the vectorised core spends its time, printed as a markdown table.

Runs the loop of ``core_throughput.py`` (random legal play, finished games dealt again
from shuffled decks drawn in bulk)
for a fixed number of steps and times every method of ``GameBatch`` by CPU time,
inclusive of what it calls: microseconds per step and calls per step. At a large batch
nearly every rule branch runs at every step on a few games, so the calls column explains
much of the time. Timing adds about a microsecond per call; compare rows, not runs.
Usage: ``python benchmarks/core_profile.py [--batch 4096] [--players 2] [--steps 500]``.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
from core_throughput import _DeckPool

from gostop_env.core import GameBatch, Rules, random_legal_actions
from gostop_env.core.numpy_engine import NumpyEngine

SPENT: Counter = Counter()
CALLS: Counter = Counter()


def timed(name: str, method: Callable) -> Callable:
    """``method`` adding its CPU time and one call to ``name``'s row."""

    @functools.wraps(method)
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            SPENT[name] += time.process_time() - start
            CALLS[name] += 1

    return run


def instrument() -> None:
    """Time every method of GameBatch and of the NumPy engine it runs on (but the one-line slot
    helper) and the action choice."""
    for kind in (GameBatch, NumpyEngine):
        for name, member in list(vars(kind).items()):
            if callable(member) and name not in ("_slot", "__init__", "__len__") and not name.startswith("from_"):
                setattr(kind, name, timed(name, member))
    global random_legal_actions
    random_legal_actions = timed("random_legal_actions", random_legal_actions)


def play(rules: Rules, batch_size: int, steps: int, seed: int = 0) -> float:
    """Random play for ``steps`` steps; returns the loop's CPU seconds."""
    rng = np.random.default_rng(seed)
    batch = GameBatch.from_seed(rules, rng, batch_size, backend="numpy")  # the NumPy core's stages
    decks = _DeckPool(rules, rng, batch_size)
    decks.take = timed("dealing decks (shuffles)", decks.take)
    start = time.process_time()
    for _ in range(steps):
        batch.step(random_legal_actions(batch.legal_bits, rng, "numpy"))
        done = np.flatnonzero(batch.done)
        if done.size:
            batch.reset_games(done, decks.take(done.size))
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    instrument()
    total = play(Rules(players=args.players), args.batch, args.steps)
    print(
        f"batch {args.batch}, {args.players} players, {args.steps} steps: "
        f"{total / args.steps * 1e6:,.0f} us of CPU per step, timing included\n"
    )
    print("| method (inclusive) | us/step | calls/step |\n|---|---|---|")
    for name, spent in SPENT.most_common():
        print(f"| {name} | {spent / args.steps * 1e6:,.0f} | {CALLS[name] / args.steps:.2f} |")


if __name__ == "__main__":
    main()
