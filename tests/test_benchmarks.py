"""The core benchmarks run and print their tables (tiny settings: this checks they work,
not how fast anything is; timing targets live in the benchmarks themselves)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import gostop_env
from gostop_env.core import Rules
from gostop_env.core.backends import available_backends

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def run_script(name: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args], capture_output=True, text=True, timeout=300, check=True
    )
    return done.stdout


def load_benchmark(name: str) -> ModuleType:
    """A benchmark script imported as a module (its ``main`` not run), to test its parts;
    the benchmarks' folder goes on the path, as when a script runs (some import another)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_core_rows_are_run_in_rounds():
    """Every backend and batch once per round: a drifting machine's speed falls on all rows."""
    throughput = load_benchmark("core_throughput")
    calls: list[str] = []

    def run(key: str) -> tuple[float, float]:
        calls.append(key)
        return 1.0, float(len(calls))

    rates = throughput.interleaved({key: lambda k=key: run(k) for key in ("numpy", "numba")}, 3)
    assert calls == ["numpy", "numba"] * 3
    assert rates == {"numpy": [(1.0, 1.0), (1.0, 3.0), (1.0, 5.0)], "numba": [(1.0, 2.0), (1.0, 4.0), (1.0, 6.0)]}
    assert throughput.summary(rates["numba"]) == (1.0, 4.0, "2 .. 6")


@pytest.mark.parametrize("backend", available_backends())
def test_core_loop_counts_the_actions_taken(backend: str, monkeypatch: pytest.MonkeyPatch):
    """The loop's decisions (the games not over before a step) are the actions taken, step
    after step, with chongtong dealt often (3 players, jokers), and its hands the games
    that ended."""
    throughput = load_benchmark("core_throughput")
    taken: list[int] = []
    pick = throughput.random_legal_actions

    def counted(*args: object) -> np.ndarray:
        actions = pick(*args)
        taken.append(int(np.count_nonzero(actions >= 0)))
        return actions

    monkeypatch.setattr(throughput, "random_legal_actions", counted)
    loop = throughput.CoreLoop(Rules.preset("korean", players=3, jokers=2), 300, seed=3, backend=backend)
    steps = [loop.step() for _ in range(400)]
    assert [decisions for decisions, _ in steps] == taken
    assert sum(hands for _, hands in steps) > 300 and min(taken) < 300  # games ended, some at the deal


def test_slices_take_turns_after_settling():
    """The slices table: every loop plays untimed first, then the loops take turns, in
    reverse order every other round, and each slice's rate, and the capacities found right
    after it, go to its own loop."""
    throughput = load_benchmark("core_throughput")
    calls: list[tuple[str, float]] = []

    class Loop:
        def __init__(self, key: str):
            self.key = key

        def run(self, seconds: float) -> tuple[float, float]:
            calls.append((self.key, seconds))
            return 0.0, float(len(calls))

        def capacities(self, steps: int) -> list[float]:
            assert steps == throughput.CAPACITY_STEPS
            return [len(calls) + 0.5] if self.key == "numba-parallel" else []

    rates, capacities = throughput.slices({key: Loop(key) for key in ("numpy", "numba", "numba-parallel")}, 3, 0.5)
    settle = throughput.SETTLE_SLICES * 0.5
    assert calls[:3] == [("numpy", settle), ("numba", settle), ("numba-parallel", settle)]
    order = ["numpy", "numba", "numba-parallel"]
    assert calls[3:] == [(key, 0.5) for key in order + order[::-1] + order]
    assert rates == {"numpy": [4.0, 9.0, 10.0], "numba": [5.0, 8.0, 11.0], "numba-parallel": [6.0, 7.0, 12.0]}
    assert capacities == {"numpy": [], "numba": [], "numba-parallel": [6.5, 7.5, 12.5]}  # after each of its slices


@pytest.mark.skipif("numba-parallel" not in available_backends(), reason='needs numba: pip install "gostop[fast]"')
def test_capacities_come_from_the_ranges_each_step_timed(monkeypatch: pytest.MonkeyPatch):
    """A loop on two threads gives, per step, the sum over threads of the fastest one's ticks
    per game over each one's, from the bounds the step ran on (it moves them after timing);
    a loop on one thread gives none."""
    compiled = pytest.importorskip("gostop_env.core.compiled.backend")
    throughput = load_benchmark("core_throughput")
    monkeypatch.setattr(compiled.ParallelGameBatch, "chunks", lambda self: 2)
    loop = throughput.CoreLoop(Rules(), 64, backend="numba-parallel")
    bounds, elapsed = loop.batch._thread_ranges()
    timed: list[tuple[np.ndarray, np.ndarray]] = []
    real_step = loop.batch.step

    def step(actions: np.ndarray) -> object:
        ran_on = bounds.copy()
        events = real_step(actions)
        elapsed[:] = (ran_on[1] - ran_on[0], 3 * (ran_on[2] - ran_on[1]))  # the second thread 3 times slower
        timed.append((ran_on, elapsed.copy()))
        bounds[1] = 10 + len(timed)  # as rebalance would move them
        return events

    monkeypatch.setattr(loop.batch, "step", step)
    assert loop.capacities(3) == pytest.approx([1 + 1 / 3] * 3)
    assert [int(ran_on[1]) for ran_on, _ in timed] == [32, 11, 12]
    assert throughput.CoreLoop(Rules(), 64, backend="numba").capacities(3) == []


def test_warm_up_loads_the_threaded_kernels(monkeypatch: pytest.MonkeyPatch):
    """The warm-up runs a batch that numba-parallel spreads over its threads: with a smaller
    one, the threaded kernels would load (or compile) inside the first timed run. (The
    suite's fixture sets ``parallel_from`` to 0; the warm-up must follow the real one.)"""
    compiled = pytest.importorskip("gostop_env.core.compiled.backend")
    throughput = load_benchmark("core_throughput")
    batches: list[int] = []

    def run_core(
        rules: object, batch_size: int, seconds: float, seed: int = 0, backend: str = ""
    ) -> tuple[float, float]:
        batches.append(batch_size)
        return 1.0, 1.0

    throughput.run_core = run_core
    monkeypatch.setattr(compiled.ParallelGameBatch, "parallel_from", compiled.PARALLEL_FROM)
    throughput.warm_up("numba-parallel")
    assert batches and min(batches) >= compiled.PARALLEL_FROM


def test_core_throughput_prints_every_row():
    backends = ",".join(available_backends()[:2])  # numpy, and numba where installed
    out = run_script(
        "core_throughput.py",
        *("--seconds", "0.05", "--repeats", "2", "--batches", "1,8", "--backends", backends),
        *("--slices", "2", "--slice-seconds", "0.02", "--fresh-batch", "64"),
    )
    rows = [line for line in out.splitlines() if line.startswith("| core |") or line.startswith("| reference |")]
    n = len(available_backends()[:2])
    assert len(rows) == 2 * (2 * n + 1)  # batches 1 and 8 per backend plus the reference engine, 2 and 3 players
    assert all(int(row.split("|")[6].replace(",", "")) > 0 for row in rows)  # decisions/s
    assert out.count("| 2 processes |") == 2 * n
    tables = {table.splitlines()[0]: table.splitlines()[2:] for table in out.strip().split("\n\n")}
    best, by_slice = ([row.split("|") for row in rows] for head, rows in tables.items() if "| best batch |" in head)
    assert [row[2].strip() for row in best] == list(available_backends()[:2]) * 2  # each backend's best batch
    assert all(row[3].strip() in ("1", "8") for row in best)
    against = [row[5].strip() for row in best]  # "-" for numpy, then "<ratio>x numpy" for the compiled backend
    assert all(a == "-" if k % n == 0 else a.endswith("x numpy") for k, a in enumerate(against))
    by_round = [row[6].strip() for row in best]  # the same, round by round: "<median>x (<min> .. <max>)"
    assert all(a == "-" for a in by_round[::n])
    for a in (a for k, a in enumerate(by_round) if k % n):
        median, low, high = map(float, re.fullmatch(r"(\S+)x \((\S+) \.\. (\S+)\)", a).groups())
        assert 0 < low <= median <= high
    # the slices table: the same backends and best batches; the multiples slice by slice,
    # "<median>x numpy (<first quartile> .. <third>; <min> .. <max>)"
    assert [row[1:4] for row in by_slice] == [row[1:4] for row in best]
    assert all(int(row[4].replace(",", "")) > 0 for row in by_slice)
    assert all(row[5].strip() == "-" for row in by_slice[::n])
    for row in (row for k, row in enumerate(by_slice) if k % n):
        found = re.fullmatch(r"(\S+)x numpy \((\S+) \.\. (\S+); (\S+) \.\. (\S+)\)", row[5].strip())
        median, q1, q3, low, high = map(float, found.groups())
        assert 0 < low <= q1 <= median <= q3 <= high
    assert all(row[6].strip() == "-" for row in by_slice)  # the threads' capacity: no row here runs on threads
    fresh = [row.split("|") for row in out.splitlines() if row.startswith("| fresh deals |")]
    assert [row[2].strip() for row in fresh] == list(available_backends()[:2]) * 2  # 2 and 3 players
    assert all(int(row[5].replace(",", "")) > 0 for row in fresh)
    assert all(row[7].strip() == "-" if k % n == 0 else row[7].strip().endswith(")") for k, row in enumerate(fresh))


@pytest.mark.skipif("numba-parallel" not in available_backends(), reason='needs numba: pip install "gostop[fast]"')
def test_thread_balance_prints_a_row_per_player_count_and_batch():
    out = run_script("thread_balance.py", "--seconds", "0.1", "--batches", "2048,4096")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith(("| 2 |", "| 3 |"))]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [(p, b) for p in "23" for b in ("2048", "4096")]
    for row in rows:
        even, balanced, uneven, percentile = (float(row[k]) for k in (2, 3, 5, 6))
        assert even > 0 and balanced > 0 and 1 <= uneven <= percentile
        median, low, high = map(float, re.fullmatch(r"(\S+)x \((\S+) \.\. (\S+)\)", row[4].strip()).groups())
        assert 0 < low <= median <= high


def test_thread_balance_sets_the_even_blocks_back_to_even_ranges(monkeypatch: pytest.MonkeyPatch):
    """Every step of an even block starts from even bounds, and a balanced block's steps
    from the bounds the step before left, here after every step uneven as if a thread had
    been slow."""
    compiled = pytest.importorskip("gostop_env.core.compiled.backend")
    balance = load_benchmark("thread_balance")
    monkeypatch.setattr(compiled.ParallelGameBatch, "chunks", lambda self: 3)
    seen: list[list[int]] = []
    step = compiled.CompiledGameBatch.step

    def uneven_step(self, actions):
        bounds = self._thread_ranges()[0]
        seen.append(bounds.tolist())
        bounds[:] = [0, 1, 2, 48]
        return step(self, actions)

    monkeypatch.setattr(compiled.CompiledGameBatch, "step", uneven_step)
    result = balance.compare(Rules(), 48, 0.0, 0)
    even = [0, 16, 32, 48]
    assert len(seen) == 2 * balance.BLOCK
    assert all(bounds == even for bounds in seen[: balance.BLOCK])
    assert all(bounds != even for bounds in seen[balance.BLOCK :])
    assert len(result["even"]) == len(result["balanced"]) == 1 and min(result["even"] + result["balanced"]) > 0


@pytest.mark.skipif("numba-parallel" not in available_backends(), reason='needs numba: pip install "gostop[fast]"')
def test_loop_parts_prints_each_way_per_batch():
    """Each way of picking and of listing the finished games, per batch, in microseconds
    (the script checks that the ways agree at every step)."""
    out = run_script("loop_parts.py", "--seconds", "0.2", "--batches", "2048,4096")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith(("| 2048 |", "| 4096 |"))]
    assert [row[0].strip() for row in rows] == ["2048", "4096"]
    for row in rows:
        assert len(row) == 6 and all(float(cell.strip().removesuffix(" us")) > 0 for cell in row[1:])


@pytest.mark.skipif("numba-parallel" not in available_backends(), reason='needs numba: pip install "gostop[fast]"')
def test_loop_parts_times_each_way_in_turn_and_refuses_disagreement():
    """Step k starts with way k (modulo their number), each way's time goes to its own name,
    and ways that disagree stop the benchmark."""
    parts = load_benchmark("loop_parts")
    order: list[int] = []
    ways = [lambda k=k: order.append(k) or np.arange(3) for k in range(3)]
    spent = dict.fromkeys("abc", 0)
    assert parts._timed_in_turn(4, ways, ("a", "b", "c"), spent).tolist() == [0, 1, 2]
    assert order == [1, 2, 0] and all(spent[name] > 0 for name in "abc")
    with pytest.raises(AssertionError, match="disagree"):
        parts._timed_in_turn(0, [lambda: np.arange(3), lambda: np.arange(4)], ("a", "b"), spent)


def test_agents_throughput_prints_every_workload_per_backend():
    backends = available_backends()[:2]
    out = run_script("agents_throughput.py", "--quick", "--repeats", "1", "--backends", ",".join(backends))
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1] for line in out.splitlines() if "/s |" in line}
    assert set(rows) == {
        "greedy hands/s",
        "search decisions/s",
        "default search decisions/s",
        "go/stop samples/s",
        "cloning records/s",
    }
    assert all(len(cells) == len(backends) and float(c.replace(",", "")) > 0 for cells in rows.values() for c in cells)
    ready = [line.split("|")[1:3] for line in out.splitlines() if line.startswith(tuple(f"| {b} |" for b in backends))]
    assert [name.strip() for name, _ in ready] == list(backends)  # the greedy agent's first hands, each backend
    assert all(float(seconds) > 0 for _, seconds in ready)


def test_core_profile_lists_the_step_and_its_stages():
    out = run_script("core_profile.py", "--batch", "32", "--steps", "30")
    names = {line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")}
    assert {"step", "_run_stages", "_end_turn", "_flip", "random_legal_actions"} <= names


def test_search_latency_prints_a_row_per_agent():
    out = run_script("search_latency.py", "--hands", "1", "search:n=2:rounds=1", "greedy")
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| `")]
    assert [row[1].strip() for row in rows] == ["`search:n=2:rounds=1`", "`greedy`"]
    assert all(int(row[2]) > 0 and float(row[4]) >= float(row[3]) > 0 for row in rows)


def test_env_benchmark_runs_the_aec_envs_in_rounds():
    """Each AEC env once per round, every rate a real measurement of its own env."""
    throughput = load_benchmark("env_throughput")
    made: list[str] = []

    def maker(name: str):
        def make():
            made.append(name)
            return gostop_env.env(players=2 if name == "two" else 3)

        return make

    rates = throughput.aec_rounds({"two": maker("two"), "three": maker("three")}, 0.05, 2)
    assert made == ["two", "three", "two", "three"]
    assert [len(r) for r in rates.values()] == [2, 2] and all(r > 0 for v in rates.values() for r in v)


def test_train_throughput_ends_with_the_fast_trainers_multiple():
    pytest.importorskip("sb3_contrib")
    out = run_script("train_throughput.py", "--timesteps", "1024", "--hands", "40", "--rounds", "1")
    last = out.strip().splitlines()[-1]
    words = last.split()
    assert last.startswith("fast trainer: ") and words[3] == "steps/s," and words[5] == "MaskablePPO", last
    assert float(words[2].replace(",", "")) > 0 and float(words[4].rstrip("x")) > 0
    assert "| scratch recipe" in out and "| MaskablePPO (n_steps 64, 4 epochs) |" in out
    parts = [line for line in out.splitlines() if line.startswith(("| rollout", "| update"))]
    assert len(parts) == 2 and all(float(line.split("|")[2]) > 0 for line in parts), parts
