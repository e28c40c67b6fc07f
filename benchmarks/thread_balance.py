"""What the threads' balanced ranges of games save, printed as a markdown table.

``numba-parallel`` splits a batch into one range of consecutive games per thread, and each
step moves the bounds between the ranges toward equal times (``rebalance`` in
``gostop_env/core/compiled/threads.py``): on a shared machine one core can run slower than the other
for seconds at a time, and with even ranges every step then waits on the slow one. This
runs the loop of ``core_throughput.py`` (random legal play, finished games dealt again from
a pool of shuffled decks) on ``numba-parallel`` in one process, in blocks of
``BLOCK`` steps that alternate between even ranges (the bounds set back to an even split
before each step) and the balanced ones, so that both see the same stretch of the machine.
The first ``SETTLE`` steps of each block are not timed (the balanced bounds move halfway to
their target at each step). Per batch size and player count, it prints the step's
nanoseconds per decision with each (median over blocks), the median of the ratios of
neighbouring blocks, and, from the ticks each thread's range took in the even blocks'
steps, how uneven the threads were (median and 90th percentile of the slowest range's
time over the fastest's). Steps only: the action picker and the deal are left out.
Usage: ``python benchmarks/thread_balance.py [--seconds 6] [--batches 8192,65536] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from core_throughput import _DeckPool

from gostop_env.core import GameBatch, Rules, random_legal_actions
from gostop_env.core.backends import available_backends

BLOCK = 20  # steps per block of one kind of ranges
SETTLE = 10  # steps at the start of each block left untimed


def compare(rules: Rules, batch_size: int, seconds: float, seed: int) -> dict[str, list[float]]:
    """Random play for about ``seconds``, alternating blocks of even and balanced ranges;
    returns each timed block's step ns/decision (``even``, ``balanced``) and the slowest over
    the fastest range's ticks of each timed even step (``uneven``)."""
    from gostop_env.core.compiled.threads import even_bounds  # needs numba, which main checks first

    rng = np.random.default_rng(seed)
    batch = GameBatch.from_seed(rules, rng, batch_size, backend="numba-parallel")
    decks = _DeckPool(rules, rng, batch_size)
    bounds, elapsed = batch._thread_ranges()
    even = even_bounds(batch_size, len(elapsed))
    result: dict[str, list[float]] = {"even": [], "balanced": [], "uneven": []}
    start, block = time.perf_counter(), 0
    while time.perf_counter() - start < seconds or len(result["balanced"]) < 1:
        kind = "even" if block % 2 == 0 else "balanced"
        spent = decisions = 0
        for step in range(BLOCK):
            actions = random_legal_actions(batch.legal_bits, rng, batch.backend)
            if kind == "even":
                bounds[:] = even
            began = time.perf_counter_ns()
            batch.step(actions)
            if step >= SETTLE:
                spent += time.perf_counter_ns() - began
                decisions += int(np.count_nonzero(actions >= 0))
                if kind == "even" and elapsed.min() > 0:
                    result["uneven"].append(elapsed.max() / elapsed.min())
            done = batch.done_games()
            if done.size:
                batch.reset_games(done, decks.take(done.size))
        result[kind].append(spent / max(decisions, 1))
        block += 1
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="time per row (default 6)")
    parser.add_argument("--batches", default="8192,65536")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if "numba-parallel" not in available_backends():
        raise SystemExit('needs the compiled backend: pip install -e ".[fast]"')
    import numba

    print(f"numba threads: {numba.get_num_threads()}\n")
    print(
        "| players | batch | even, ns/decision | balanced, ns/decision | balanced / even, time, block by block "
        "| slowest range / fastest, even: median | 90th percentile |"
    )
    print("|---|---|---|---|---|---|---|")
    for players in (2, 3):
        rules = Rules(players=players)
        compare(rules, 4096, 0.0, args.seed)  # kernels loaded before any clock starts
        for batch_size in (int(b) for b in args.batches.split(",")):
            r = compare(rules, batch_size, args.seconds, args.seed)
            ratios = [b / e for e, b in zip(r["even"], r["balanced"])]
            uneven = sorted(r["uneven"]) or [float("nan")]
            print(
                f"| {players} | {batch_size} | {statistics.median(r['even']):.1f} | "
                f"{statistics.median(r['balanced']):.1f} | {statistics.median(ratios):.2f}x "
                f"({min(ratios):.2f} .. {max(ratios):.2f}) | {statistics.median(uneven):.2f} | "
                f"{uneven[int(0.9 * (len(uneven) - 1))]:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
