"""Tournaments on duplicate deals: every deal is played once for each seating of agents.

With N agents and P players, a *lineup* is an ordered choice of P agents for the seats
(N!/(N-P)! lineups); every deal is played under every lineup, so the cards' luck cancels
out. Work is split into units (a chunk of deals × one lineup), each with its own seeds:
the same configuration gives the same figures whatever the number of workers or the order
units finish in. With an output folder, finished units are appended to ``units.jsonl`` as
they complete, so an interrupted tournament resumes where it stopped.
"""
from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from itertools import permutations
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from gostop_env.core import Rules
from gostop_env.core.deck import shuffled_decks

from .decisions import DecisionRecorder
from .match import play_hands
from .registry import make_agent

RECORD_FIELDS = ("deal", "lineup", "payments", "result", "winner", "gos", "scores")


@dataclass(frozen=True)
class TournamentConfig:
    """What to play: agents by name, seats, rules, deals, seed; how: chunk size, workers."""

    agents: tuple[str, ...]
    players: int = 2
    preset: str = "seed"
    deals: int = 1000
    seed: int = 0
    chunk: int = 500
    workers: int = 1
    keep_replays: int = 0  # the hands with the largest payments to keep, per unit
    decisions: bool = False  # record every go/stop decision (agents.decisions)

    def __post_init__(self) -> None:
        if len(self.agents) < 2:
            raise ValueError("a tournament needs at least two agents")
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agent names must differ: {list(self.agents)}")
        if len(self.agents) < self.players:
            raise ValueError(f"{self.players} players need at least {self.players} agents")
        if self.deals < 1 or self.chunk < 1 or self.workers < 1:
            raise ValueError("deals, chunk and workers must be at least 1")
        rules = Rules.preset(self.preset, players=self.players)
        for name in self.agents:
            make_agent(name, rules)  # raises on a bad name

    @property
    def rules(self) -> Rules:
        return Rules.preset(self.preset, players=self.players)

    def lineups(self) -> list[tuple[int, ...]]:
        """Agent index per seat, for every seating."""
        return list(permutations(range(len(self.agents)), self.players))

    def units(self) -> list[tuple[int, int]]:
        """(chunk, lineup) work units."""
        chunks = math.ceil(self.deals / self.chunk)
        return [(k, li) for k in range(chunks) for li in range(len(self.lineups()))]

    def key(self) -> str:
        """Identifies the tournament's results (for resuming)."""
        fields = {k: v for k, v in asdict(self).items() if k != "workers" and not (k == "decisions" and not v)}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def play_unit(config: TournamentConfig, chunk: int, lineup: int) -> dict[str, Any]:
    """Play one chunk of deals under one lineup; return its game records."""
    rules = config.rules
    first = chunk * config.chunk
    count = min(config.chunk, config.deals - first)
    decks = shuffled_decks(rules, np.random.default_rng([config.seed, chunk]), count)
    seats = config.lineups()[lineup]
    policies = [make_agent(config.agents[a], rules) for a in seats]
    history: list[np.ndarray] = []
    recorder = DecisionRecorder() if config.decisions else None
    batch = play_hands(rules, policies, decks, np.random.default_rng([config.seed, chunk, lineup, 1]), history,
                       before_step=recorder)
    records = {
        "deal": list(range(first, first + count)), "lineup": [lineup] * count,
        "payments": batch.payments.tolist(), "result": batch.result.tolist(), "winner": batch.winner.tolist(),
        "gos": batch.gos.tolist(), "scores": batch.scores.tolist(),
    }
    unit = {"chunk": chunk, "lineup": lineup, "records": records}
    if recorder is not None:
        unit["decisions"] = _decision_rows(recorder.table(batch), config, first, seats)
    if config.keep_replays:
        unit["replays"] = _largest_hands(config, decks, batch.payments, np.array(history), first)
    return unit


def _decision_rows(table: dict[str, np.ndarray], config: TournamentConfig, first: int,
                   seats: tuple[int, ...]) -> dict[str, list]:
    """Decision columns with the deal number and the deciding agent's name in place of the game index."""
    rows = {"deal": (table.pop("game") + first).tolist(),
            "agent": [config.agents[seats[s]] for s in table["seat"]]}
    return rows | {name: column.tolist() for name, column in table.items()}


def _largest_hands(config: TournamentConfig, decks: np.ndarray, payments: np.ndarray,
                   history: np.ndarray, first: int) -> list[dict[str, Any]]:
    biggest = np.argsort(-np.abs(payments).max(axis=1), kind="stable")[: config.keep_replays]
    rules = config.rules.to_dict()
    return [{"deal": first + int(g), "rules": rules, "deck": decks[g].tolist(),
             "actions": [int(a) for a in history[:, g] if a >= 0], "carry": 0,
             "payments": payments[g].tolist()} for g in biggest]


@dataclass
class TournamentResults:
    """All game records of a tournament, and the figures computed from them."""

    config: TournamentConfig
    units: list[dict[str, Any]] = field(default_factory=list)

    def records(self) -> dict[str, np.ndarray]:
        """Every game, ordered by (chunk, lineup): deal, lineup, payments (n, P), ..."""
        ordered = sorted(self.units, key=lambda u: (u["chunk"], u["lineup"]))
        return {name: np.concatenate([np.asarray(u["records"][name]) for u in ordered]) for name in RECORD_FIELDS}

    def decisions(self) -> dict[str, list]:
        """Every recorded go/stop decision (tournaments with ``decisions=True``), by unit order."""
        ordered = [u["decisions"] for u in sorted(self.units, key=lambda u: (u["chunk"], u["lineup"]))
                   if "decisions" in u]
        return {name: [v for part in ordered for v in part[name]] for name in (ordered[0] if ordered else {})}

    def replays(self) -> list[dict[str, Any]]:
        hands = [r for u in self.units for r in u.get("replays", [])]
        return sorted(hands, key=lambda r: (-max(abs(p) for p in r["payments"]), r["deal"]))


def run_tournament(config: TournamentConfig, output: str | Path | None = None,
                   progress: Callable[[Iterable], Iterable] | None = None, backend: str = "local") -> TournamentResults:
    """Play every unit not yet done (resuming from ``output/units.jsonl``), in parallel when
    ``config.workers > 1``; return the results. ``progress`` wraps the stream of finished units
    (e.g. ``tqdm``). ``backend="ray"`` runs the units as Ray tasks (``pip install ".[ray]"``;
    connects to a running cluster, or starts a local one): same units, same seeds, same
    figures as the local runner."""
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    results = TournamentResults(config)
    log = None
    if output is not None:
        Path(output).mkdir(parents=True, exist_ok=True)
        log = Path(output) / "units.jsonl"
        results.units = _load_done(log, config)
    done = {(u["chunk"], u["lineup"]) for u in results.units}
    todo = [unit for unit in config.units() if unit not in done]
    stream = _play_on_ray(config, todo) if backend == "ray" else _play_all(config, todo)
    for unit in (progress(stream, total=len(todo)) if progress else stream):
        results.units.append(unit)
        if log is not None:
            with log.open("a") as f:
                f.write(json.dumps({"key": config.key(), **unit}) + "\n")
    return results


def _play_all(config: TournamentConfig, todo: list[tuple[int, int]]) -> Iterable[dict[str, Any]]:
    if config.workers == 1:
        for chunk, lineup in todo:
            yield play_unit(config, chunk, lineup)
        return
    with ProcessPoolExecutor(config.workers) as pool:
        futures = [pool.submit(play_unit, config, chunk, lineup) for chunk, lineup in todo]
        for future in futures:
            yield future.result()


def _play_on_ray(config: TournamentConfig, todo: list[tuple[int, int]]) -> Iterable[dict[str, Any]]:
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=config.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(play_unit)
    pending = [remote.remote(config, chunk, lineup) for chunk, lineup in todo]
    for ref in pending:
        yield ray.get(ref)


def _load_done(log: Path, config: TournamentConfig) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    units = []
    for line in log.read_text().splitlines():
        try:
            unit = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by an interruption
        if unit.pop("key", None) != config.key():
            raise ValueError(f"{log} holds results of another tournament configuration; use another folder")
        units.append(unit)
    return units

