"""Seconds a search agent takes per decision when it plays one game at a time (no batching
across games: what a player at the table waits), printed as a markdown table.

Each agent plays ``--hands`` whole 2-player hands at every seat against itself, one decision
at a time; deal i comes from seed i, the agent's random choices from seed i too. The time of
every decision is kept; the table gives the mean and the largest.

Usage: ``python benchmarks/search_latency.py [--hands 20] [--preset seed] [AGENT ...]``
(default agent: ``search``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gostop.agents.registry import make_agent
from gostop_env.core import GameBatch, Rules
from gostop_env.policy import Policy, observe


def decision_times(agent: Policy, rules: Rules, hands: int) -> list[float]:
    """Seconds of each decision of ``hands`` hands played one at a time."""
    times = []
    for seed in range(hands):
        batch = GameBatch.from_seed(rules, seed, 1)
        rng = np.random.default_rng(seed)
        while not batch.done.all():
            seats = batch.seat.astype(np.int64)
            start = time.perf_counter()
            seen = observe(agent, batch, np.arange(1), seats)
            action = agent(seen, batch.legal_action_mask(), rng)
            times.append(time.perf_counter() - start)
            batch.step(action)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="*", default=["search"])
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--preset", default="seed")
    args = parser.parse_args()
    rules = Rules.preset(args.preset)
    print("| agent | decisions | mean s | max s |")
    print("|---|---|---|---|")
    for name in args.agents:
        agent = make_agent(name, rules)
        decision_times(agent, rules, 1)  # kernels loaded
        times = decision_times(agent, rules, args.hands)
        print(f"| `{name}` | {len(times)} | {np.mean(times):.4f} | {max(times):.4f} |", flush=True)


if __name__ == "__main__":
    main()
