"""What runs on the core, per backend, printed as a markdown table: hands between greedy
agents, search decisions, go/stop value samples and behaviour-cloning records per second.

Each workload is the same on every backend (same seeds, so the same games: the backends
agree on every state) and is run once to load the kernels, then timed ``--repeats`` times;
the table gives the median. The backend is chosen as a program would choose it,
``$GOSTOP_BACKEND``, so every batch the agents make (``play_hands``, ``select``,
``determinize``, ``collect``) runs on it.

- greedy hands: ``play_hands`` with ``greedy`` in both seats, 1,024 deals at once;
- search decisions: ``search:n=16:rounds=1:halving=0:z=none`` (16 determinizations per
  legal action, greedy rollouts: the ``search`` of before paired search) at seat 0 against
  ``greedy``, 32 deals at once; decisions made by the search seat;
- default search decisions: the same with ``search`` as it comes (8 rounds of 64 samples,
  halving, ``z=2``), 2 deals at once (its rollouts are many: on NumPy they take minutes);
- go/stop samples: ``go_stop_values`` with 32 samples at 64 go/stop decisions (each sample
  a go rollout and a stop rollout), ``greedy`` in both seats;
- cloning records: ``train.bc.collect`` with the ``greedy`` teacher, 512 hands.

A first table says how long each backend's greedy agent took to be ready: greedy hands with
2 and 3 players, timed after the core's own kernels are loaded (untimed), which on the
compiled backend loads the greedy kernels from numba's cache, or compiles them where it is
empty (``NUMBA_CACHE_DIR=$(mktemp -d)``: their first compile).

Usage: ``python benchmarks/agents_throughput.py [--repeats 3] [--backends numpy,numba] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from gostop.agents.decisions import DecisionRecorder
from gostop.agents.go_stop_value import go_stop_values
from gostop.agents.match import play_hands
from gostop.agents.registry import make_agent
from gostop.train.bc import collect
from gostop_env.core import GameBatch, Rules, available_backends
from gostop_env.core.backends import BACKEND_VARIABLE
from gostop_env.core.deck import shuffled_decks

RULES = Rules()
SIZES = {"greedy": 1024, "search": 32, "default search": 2, "decisions": 64, "cloning": 512}
"""Deals (or decisions, or hands) per workload; ``--quick`` divides them by 16."""


def greedy_hands() -> float:
    decks = shuffled_decks(RULES, np.random.default_rng(1), SIZES["greedy"])
    greedy = make_agent("greedy", RULES)
    start = time.perf_counter()
    play_hands(RULES, [greedy, greedy], decks, np.random.default_rng(2))
    return len(decks) / (time.perf_counter() - start)


def search_decisions(name: str = "search:n=16:rounds=1:halving=0:z=none", size: str = "search") -> float:
    decks = shuffled_decks(RULES, np.random.default_rng(3), SIZES[size])
    made = [0]

    def count(batch: GameBatch, actions: np.ndarray) -> None:
        made[0] += int(np.count_nonzero((actions >= 0) & (batch.seat == 0)))

    seats = [make_agent(name, RULES), make_agent("greedy", RULES)]
    start = time.perf_counter()
    play_hands(RULES, seats, decks, np.random.default_rng(4), before_step=count)
    return made[0] / (time.perf_counter() - start)


def go_stop_samples() -> float:
    greedy = make_agent("greedy", RULES)
    recorder = DecisionRecorder(keep_states=True)
    decks = shuffled_decks(RULES, np.random.default_rng(5), 1024)
    play_hands(RULES, [greedy, greedy], decks, np.random.default_rng(6), before_step=recorder)
    states = recorder.states().select(np.arange(SIZES["decisions"]))
    start = time.perf_counter()
    go_stop_values(states, [greedy, greedy], 32, np.random.default_rng(7))
    return len(states) * 32 / (time.perf_counter() - start)


def cloning_records() -> float:
    start = time.perf_counter()
    demos = collect(make_agent("greedy", RULES), RULES, hands=SIZES["cloning"], seed=8)
    return len(demos.actions) / (time.perf_counter() - start)


def greedy_ready() -> float:
    """Seconds to the first greedy hands with 2 and 3 players, the core's kernels loaded
    first (untimed): the greedy agent's own kernels loaded, or compiled."""
    for players in (2, 3):
        GameBatch.from_seed(Rules(players=players), 0, 2).step(np.full(2, -1))
    start = time.perf_counter()
    for players in (2, 3):
        rules = Rules(players=players)
        greedy = make_agent("greedy", rules)
        decks = shuffled_decks(rules, np.random.default_rng(9), 8)
        play_hands(rules, [greedy] * players, decks, np.random.default_rng(10))
    return time.perf_counter() - start


WORKLOADS: dict[str, Callable[[], float]] = {
    "greedy hands/s": greedy_hands,
    "search decisions/s": search_decisions,
    "default search decisions/s": lambda: search_decisions("search", "default search"),
    "go/stop samples/s": go_stop_samples,
    "cloning records/s": cloning_records,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per cell (default 3)")
    parser.add_argument("--backends", default=",".join(available_backends()[:2]))
    parser.add_argument("--quick", action="store_true", help="workloads 16 times smaller (a check that it runs)")
    args = parser.parse_args()
    if args.quick:
        SIZES.update({key: max(size // 16, 2) for key, size in SIZES.items()})
    backends = args.backends.split(",")
    print("| backend | greedy agent ready in, s |\n|---|---|")
    for backend in backends:
        os.environ[BACKEND_VARIABLE] = backend
        print(f"| {backend} | {greedy_ready():.2f} |", flush=True)
    print(f"\n| workload | {' | '.join(backends)} |")
    print(f"|---|{'---|' * len(backends)}")
    for name, workload in WORKLOADS.items():
        cells = []
        for backend in backends:
            os.environ[BACKEND_VARIABLE] = backend
            workload()  # kernels loaded, caches warm
            cells.append(statistics.median(workload() for _ in range(args.repeats)))
        print(f"| {name} | {' | '.join(f'{c:,.0f}' for c in cells)} |", flush=True)


if __name__ == "__main__":
    main()
