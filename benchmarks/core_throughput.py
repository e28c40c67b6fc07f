"""Throughput of the rules engines under random legal play, printed as a markdown table.

The core on each backend installed (``numpy``; ``numba`` and ``numba-parallel`` with the
``fast`` extra) at batch
1, 64, 1024, 4096, 16384 and 65536 (finished games are dealt again in place, so the batch stays full;
dealing is timed, shuffling is not: decks come from a pool made first) and the reference
engine, with 2 and 3 players, ``seed`` preset. Decisions are actions taken by the seat to
move; random legal actions come from ``random_legal_actions`` on the core's legal-action
bitmask, on the batch's own backend (the reference engine picks from ``legal_actions()``).
Compiled kernels are loaded (or compiled) before any timing; the
first table says how long that took. Peak memory is tracemalloc's peak over a separate
short run of the same loop (tracing slows NumPy too much to time with it on).
A fresh-deals table times a user's loop of random play that deals finished games with
``reset_games(done)`` and no decks (fresh decks from the batch's own generator, shuffled in
the kernels on the compiled backend), one thread, at batch ``--fresh-batch``, the backends in
rounds, and gives each against NumPy round by round.
A last table runs the same core loop in two processes at once (one batch each, own seeds)
and sums their rates: what a 2-core machine gives with both cores busy (``numba-parallel``
spreads one process's batch over numba's threads instead).
Each row is run ``--repeats`` times, the core's rows in rounds (every backend and batch once
per round, so that each row's runs spread over the same stretch of time): the table gives
the median and the range, since a shared machine's speed varies from run to run. A second
table gives each backend at its best batch as a multiple of the backend before it (numba
against numpy, numba-parallel against numba): the compiled backend's targets, read from one
run, as the multiple of the two medians and, beside it, the median of the multiples of each
round. A third table times the same multiples more closely: one batch per backend, each at
its best batch, the backends taking turns in short slices (``--slice-seconds``) for
``--slices`` rounds, so that the two slices of a multiple run within a second of each other
(a row's runs in the first table come tens of seconds apart); it gives the median multiple
over the rounds, the quartiles and the range.
Usage: ``python benchmarks/core_throughput.py [--seconds 3] [--repeats 3] [--batches 1,64,1024,4096,16384,65536]
[--backends numpy,numba,numba-parallel] [--slices 12] [--slice-seconds 0.5]``.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from gostop_env.core import GameBatch, Phase, ReferenceGame, Rules, random_legal_actions
from gostop_env.core.backends import available_backends
from gostop_env.core.batch import batch_class
from gostop_env.core.deck import shuffled_decks


def peak_mib(run, *args) -> float:
    """tracemalloc's peak while ``run(*args)`` runs."""
    tracemalloc.start()
    run(*args)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def run_core(
    rules: Rules, batch_size: int, seconds: float, seed: int = 0, backend: str = "numpy"
) -> tuple[float, float]:
    """Random play on the core for about ``seconds``; returns (hands/s, decisions/s)."""
    return CoreLoop(rules, batch_size, seed, backend).run(seconds)


class CoreLoop:
    """Random play on one batch of the core that goes on from call to call: the slices table
    takes turns between backends, each playing on where it stopped."""

    def __init__(self, rules: Rules, batch_size: int, seed: int = 0, backend: str = "numpy"):
        self.rng = np.random.default_rng(seed)
        self.batch = GameBatch.from_seed(rules, self.rng, batch_size, backend=backend)
        self.decks = _DeckPool(rules, self.rng, batch_size)
        self.over = int(np.count_nonzero(self.batch.done))  # games over before the next step

    def run(self, seconds: float) -> tuple[float, float]:
        """Play on for about ``seconds`` (in blocks of 20 steps); returns (hands/s, decisions/s)."""
        hands = decisions = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for _ in range(20):
                step_decisions, step_hands = self.step()
                decisions += step_decisions
                hands += step_hands
        return hands / elapsed, decisions / elapsed

    def step(self) -> tuple[int, int]:
        """One step of random legal play, finished games dealt again; returns (decisions, hands finished).
        Every game not over has a legal action, so the decisions are the games not over
        before the step: after a deal, those dealt that are over at once (chongtong); that
        count costs a look at the dealt games, where counting the actions taken was a pass
        over the batch."""
        batch = self.batch
        actions = random_legal_actions(batch.legal_bits, self.rng, batch.backend)
        decisions = len(batch) - self.over
        batch.step(actions)
        done = batch.done_games()
        if done.size:
            batch.reset_games(done, self.decks.take(done.size))
        self.over = int(np.count_nonzero(batch.phase[done] == int(Phase.DONE)))
        return decisions, done.size

    def capacities(self, steps: int) -> list[float]:
        """Play ``steps`` more steps, untimed, and for each, what the threads could do together
        in units of the fastest: the sum over threads of the fastest one's time per game over
        its own, from the ticks each thread's range of games took (2.0 where two cores run
        alike, 1.5 where one takes twice as long). Empty for a batch on one thread, or where
        the kernels cannot read the CPU's counter."""
        if not hasattr(self.batch, "_thread_ranges") or self.batch.chunks() < 2:
            return []
        bounds, elapsed = self.batch._thread_ranges()
        found = []
        for _ in range(steps):
            timed = bounds.copy()  # the step moves the bounds after it times the ranges
            self.step()
            per_game = elapsed / np.maximum(np.diff(timed), 1)
            if per_game.min() > 0:
                found.append(float(np.sum(per_game.min() / per_game)))
        return found


class _DeckPool:
    """Shuffled decks dealt in turn from a pool made before the clock starts (eight batches'
    worth, then from the top again), so that the table times the engine, not the shuffle."""

    def __init__(self, rules: Rules, rng: np.random.Generator, size: int):
        self.decks, self.next = shuffled_decks(rules, rng, 8 * max(size, 64)), 0

    def take(self, count: int) -> np.ndarray:
        if self.next + count > len(self.decks):
            self.next = 0
        self.next += count
        return self.decks[self.next - count : self.next]


def run_reference(rules: Rules, seconds: float, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    hands = decisions = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        game = ReferenceGame(rules, shuffled_decks(rules, rng, 1)[0])
        while not game.done:
            legal = game.legal_actions()
            game.step(legal[int(rng.integers(len(legal)))])
            decisions += 1
        hands += 1
    return hands / elapsed, decisions / elapsed


def run_fresh(rules: Rules, batch_size: int, seconds: float, backend: str) -> tuple[float, float]:
    """(hands/s, decisions/s) of random play dealing finished games afresh from the batch's
    own generator (``reset_games(done)``, no decks), the shuffle timed."""
    batch = GameBatch.from_seed(rules, 0, batch_size, backend=backend)
    rng = np.random.default_rng(1)
    hands = decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = random_legal_actions(batch.legal_bits, rng, backend)
        decisions += int(np.count_nonzero(actions >= 0))
        batch.step(actions)
        done = batch.done_games()
        if done.size:
            batch.reset_games(done)
            hands += done.size
    elapsed = time.perf_counter() - start
    return hands / elapsed, decisions / elapsed


def print_fresh_deals(batch_size: int, seconds: float, repeats: int, backends: list[str]) -> None:
    """The fresh-deals table (module docstring)."""
    print("\n| loop | backend | players | batch | decisions/s | range | against numpy, round by round |")
    print("|---|---|---|---|---|---|---|")
    for players in (2, 3):
        rules = Rules(players=players)
        runs = {b: functools.partial(run_fresh, rules, batch_size, seconds, b) for b in backends}
        rates = interleaved(runs, repeats)
        for backend, found in rates.items():
            _, decisions, spread = summary(found)
            against = "-"
            if backend != "numpy" and "numpy" in rates:
                ratios = [d / n for (_, d), (_, n) in zip(found, rates["numpy"])]
                against = f"{statistics.median(ratios):.2f}x ({min(ratios):.2f} .. {max(ratios):.2f})"
            print(f"| fresh deals | {backend} | {players} | {batch_size} | {decisions:,.0f} | {spread} | {against} |")


def _core_decisions(args: tuple[int, float, int, str]) -> float:
    batch_size, seconds, seed, backend = args
    run_core(Rules(), 1, 0.01, seed, backend)  # kernels loaded before the clock starts
    return run_core(Rules(), batch_size, seconds, seed, backend)[1]


def two_processes(batch_size: int, seconds: float, backend: str) -> float:
    """Summed decisions/s of two processes each running a 2-player core batch."""
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        return sum(pool.map(_core_decisions, [(batch_size, seconds, s, backend) for s in (1, 2)]))


def warm_up(backend: str) -> float:
    """Seconds to load (or first compile) ``backend``'s kernels: one short game loop, of a
    batch large enough for a backend that runs smaller batches on one thread
    (``parallel_from``) to load its threaded kernels too, before any clock starts."""
    games = max(2, getattr(batch_class(backend), "parallel_from", 0))
    start = time.perf_counter()
    run_core(Rules(), games, 0.01, backend=backend)
    run_core(Rules(players=3), games, 0.01, backend=backend)
    return time.perf_counter() - start


Rates = list[tuple[float, float]]  # (hands/s, decisions/s) of each run


def repeated(run, repeats: int) -> tuple[float, float, str]:
    """Median hands/s, median decisions/s and the decisions/s range of ``repeats`` runs."""
    return summary([run() for _ in range(repeats)])


def summary(rates: Rates) -> tuple[float, float, str]:
    """Median hands/s, median decisions/s and the decisions/s range of (hands/s, decisions/s) runs."""
    decisions = [d for _, d in rates]
    spread = f"{min(decisions):,.0f} .. {max(decisions):,.0f}"
    return statistics.median(h for h, _ in rates), statistics.median(decisions), spread


def interleaved(runs: dict[Any, Callable[[], tuple[float, float]]], repeats: int) -> dict[Any, Rates]:
    """``repeats`` rounds of every run in turn: each row's runs spread over the same stretch of
    time, so that a machine whose speed drifts (a shared VM) does not bias one row's median
    against another's."""
    rates: dict[Any, Rates] = {key: [] for key in runs}
    for _ in range(repeats):
        for key, run in runs.items():
            rates[key].append(run())
    return rates


Best = dict[tuple[int, str], tuple[float, int]]  # (players, backend): (median decisions/s, batch)
Rounds = dict[tuple[int, str, int], list[float]]  # (players, backend, batch): decisions/s of each round


def print_best_batches(best: Best, rounds: Rounds, backends: list[str]) -> None:
    """Each backend at its best batch (of those run), as a multiple of the one before it in
    ``backends``: the compiled backend against NumPy, its two threads against its one. The
    multiple is that of the two medians; the last column takes the same multiple in each
    round (whose runs came seconds apart, where a row's median may come from another stretch
    of the run than the other row's) and gives their median and range: a machine whose
    speed drifts moves it less."""
    print("\n| players | backend | best batch | decisions/s | against | against, round by round |")
    print("|---|---|---|---|---|---|")
    for players in (2, 3):
        for before, backend in zip([None, *backends], backends):
            rate, batch = best[players, backend]
            against = by_round = "-"
            if before:
                before_rate, before_batch = best[players, before]
                against = f"{rate / before_rate:.2f}x {before}"
                ratios = [
                    a / b
                    for a, b in zip(rounds[players, backend, batch], rounds[players, before, before_batch], strict=True)
                ]
                by_round = f"{statistics.median(ratios):.2f}x ({min(ratios):.2f} .. {max(ratios):.2f})"
            print(f"| {players} | {backend} | {batch} | {rate:,.0f} | {against} | {by_round} |", flush=True)


SETTLE_SLICES = 4  # untimed slices each loop of the slices table plays first
CAPACITY_STEPS = 3  # untimed steps after each slice on threads, for the threads' capacity


def slices(
    loops: dict[str, CoreLoop], rounds: int, seconds: float
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Decisions/s of each loop in ``rounds`` rounds of slices of about ``seconds``, the loops
    taking turns within a round (in reverse order every other round, so that a steady drift in
    the machine's speed falls on each alike), and each loop's capacities of its threads
    (:meth:`CoreLoop.capacities`; none on one thread) in ``CAPACITY_STEPS`` untimed steps
    after each of its slices. Each loop first plays ``SETTLE_SLICES`` slices untimed, so that
    its games, all dealt at once, spread over the stages of a hand."""
    for loop in loops.values():
        loop.run(SETTLE_SLICES * seconds)
    rates: dict[str, list[float]] = {key: [] for key in loops}
    capacities: dict[str, list[float]] = {key: [] for key in loops}
    for turn in range(rounds):
        for key in list(loops)[:: 1 if turn % 2 == 0 else -1]:
            rates[key].append(loops[key].run(seconds)[1])
            capacities[key] += loops[key].capacities(CAPACITY_STEPS)
    return rates, capacities


def print_slices(rules: Rules, best: Best, backends: list[str], rounds: int, seconds: float) -> None:
    """Each backend at its best batch against the one before it, from slices taken in turn
    (:func:`slices`): the multiple of each round's two slices, which ran within a second of
    each other, as the median, the quartiles and the range over the rounds; on a row on
    threads, what the cores could give together in the same stretch (median and range of
    the capacities): the most that its threads could multiply one thread's speed by, where
    that thread ran on the fastest core."""
    players = rules.players
    loops = {backend: CoreLoop(rules, best[players, backend][1], backend=backend) for backend in backends}
    rates, capacities = slices(loops, rounds, seconds)
    for before, backend in zip([None, *backends], backends):
        against = "-"
        if before:
            ratios = np.divide(rates[backend], rates[before])
            low, q1, median, q3, high = np.percentile(ratios, [0, 25, 50, 75, 100])
            against = f"{median:.2f}x {before} ({q1:.2f} .. {q3:.2f}; {low:.2f} .. {high:.2f})"
        found, cores = capacities[backend], "-"
        if found:
            cores = f"{statistics.median(found):.2f} ({min(found):.2f} .. {max(found):.2f})"
        rate, batch = statistics.median(rates[backend]), best[players, backend][1]
        print(f"| {players} | {backend} | {batch} | {rate:,.0f} | {against} | {cores} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per run (default 3)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (default 3)")
    parser.add_argument("--batches", default="1,64,1024,4096,16384,65536")
    parser.add_argument("--backends", default=",".join(available_backends()), help="default: every one installed")
    parser.add_argument("--slices", type=int, default=12, help="rounds of the slices table (default 12; 0: none)")
    parser.add_argument("--slice-seconds", type=float, default=0.5, help="time per slice (default 0.5)")
    parser.add_argument("--fresh-batch", type=int, default=4096, help="batch of the fresh-deals table (default 4096)")
    args = parser.parse_args()
    backends = args.backends.split(",")
    print("| backend | kernels ready in, s |\n|---|---|")
    for backend in backends:
        print(f"| {backend} | {warm_up(backend):.2f} |", flush=True)
    print("\n| engine | backend | players | batch | hands/s | decisions/s | decisions/s, range | peak MiB |")
    print("|---|---|---|---|---|---|---|---|")
    best: Best = {}
    rounds: Rounds = {}
    batches = [int(b) for b in args.batches.split(",")]
    for players in (2, 3):
        rules = Rules(players=players)
        runs = {
            (backend, size): functools.partial(run_core, rules, size, args.seconds, backend=backend)
            for backend in backends
            for size in batches
        }
        for (backend, size), rates in interleaved(runs, args.repeats).items():
            hands, decisions, spread = summary(rates)
            best[players, backend] = max(best.get((players, backend), (0.0, 0)), (decisions, size))
            rounds[players, backend, size] = [d for _, d in rates]
            peak = peak_mib(run_core, rules, size, 0.0, 0, backend)
            print(
                f"| core | {backend} | {players} | {size} | {hands:,.0f} | {decisions:,.0f} | {spread} | {peak:.1f} |",
                flush=True,
            )
        hands, decisions, spread = repeated(lambda r=rules: run_reference(r, args.seconds), args.repeats)
        peak = peak_mib(run_reference, rules, 0.0)
        print(
            f"| reference | - | {players} | 1 | {hands:,.0f} | {decisions:,.0f} | {spread} | {peak:.1f} |", flush=True
        )
    print_best_batches(best, rounds, backends)
    if args.slices > 0:
        print("\n| players | backend | best batch | decisions/s, median slice", end=" ")
        print("| against, slice by slice: median (quartiles; range) | threads' capacity, in fastest cores |")
        print("|---|---|---|---|---|---|")
        for players in (2, 3):
            print_slices(Rules(players=players), best, backends, args.slices, args.slice_seconds)
    print_fresh_deals(args.fresh_batch, args.seconds, args.repeats, [b for b in backends if b != "numba-parallel"])
    print("\n| core, 2 players | backend | batch per process | decisions/s, both processes | range |")
    print("|---|---|---|---|---|")
    for backend in (b for b in backends if b != "numba-parallel"):
        for batch_size in (2048, 4096):
            _, rate, spread = repeated(
                lambda b=batch_size, k=backend: (0.0, two_processes(b, args.seconds, k)), args.repeats
            )
            print(f"| 2 processes | {backend} | {batch_size} | {rate:,.0f} | {spread} |", flush=True)


if __name__ == "__main__":
    main()
