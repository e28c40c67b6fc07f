"""Tournaments on duplicate deals: every deal is played once for each seating of agents.

With N agents and P players, a *lineup* is an ordered choice of P agents for the seats
(N!/(N-P)! lineups); every deal is played under every lineup, so the cards' luck cancels
out. Work is split into units (a chunk of deals × one lineup), each with its own seeds:
the same configuration gives the same figures whatever the number of workers or the order
units finish in. With an output folder, finished units are appended to ``units.jsonl`` as
they complete, so an interrupted tournament resumes where it stopped.

The log is checked when it is read back: every line must carry this configuration's key
(which covers the agents' names and, for ``model:`` agents, a hash of their files, so a
retrained model is never served from old results) and a complete unit of it (the right
deals, lineup, shapes, zero-sum payments). A unit logged twice with the same records
counts once; twice with different records, or any line that does not belong, is an
error. One run at a time may use a folder (a lock file; a second run is refused).

With ``match_hands`` (and optionally ``bankroll``) a tournament plays matches instead of
hands (:mod:`gostop_env.core.match`): "deals" are then matches, match ``m`` is dealt from
the seed and ``m`` alone, so every lineup plays the same matches, and a record is a match's
standing and its number of hands (``MATCH_RECORD_FIELDS``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from itertools import permutations
from pathlib import Path
from typing import Any

import numpy as np

from gostop_env.core import GameBatch, Result, Rules, batch_class
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.match import MatchFormat
from gostop_env.files import folder_lock, writable_folder

from .decisions import DecisionRecorder
from .match import play_hands, play_matches
from .registry import make_agent

RECORD_FIELDS = ("deal", "lineup", "payments", "result", "winner", "gos", "scores")
MATCH_RECORD_FIELDS = ("deal", "lineup", "standing", "hands")
"""A match's record: its number, lineup, each player's chips (by seat of the lineup: the
player) and the hands it lasted."""
LOG_FILE, LOCK_FILE = "units.jsonl", "units.lock"


class TournamentLogError(ValueError):
    """A tournament folder whose log does not belong to the configuration, or is in use."""


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
    decisions: bool = False  # record every go/stop decision (gostop.agents.decisions)
    backend: str | None = None  # the core's engine (numpy, numba, numba-parallel; None: the default)
    match_hands: int | None = None  # play matches of this many hands instead of hands
    bankroll: int | None = None  # with match_hands: a match ends once a player's bankroll is lost

    def __post_init__(self) -> None:
        if len(self.agents) < 2:
            raise ValueError("a tournament needs at least two agents")
        if len({name.strip() for name in self.agents}) != len(self.agents):  # " greedy" is greedy
            raise ValueError(f"agent names must differ (spaces aside): {list(self.agents)}")
        if len(self.agents) < self.players:
            raise ValueError(f"{self.players} players need at least {self.players} agents")
        for name in ("players", "deals", "seed", "chunk", "workers", "keep_replays"):
            value = getattr(self, name)
            if type(value) is not int:
                raise ValueError(f"{name} must be an integer, got {value!r}")
        if self.deals < 1 or self.chunk < 1 or self.workers < 1:
            raise ValueError("deals, chunk and workers must be at least 1")
        if self.seed < 0 or self.keep_replays < 0:
            raise ValueError(f"seed and keep_replays must be >= 0, got {self.seed} and {self.keep_replays}")
        rules = Rules.preset(self.preset, players=self.players)
        self._check_match(rules)
        batch_class(self.backend)  # raises on an unknown or missing backend
        for name in self.agents:
            make_agent(name, rules)  # raises on a bad name

    def _check_match(self, rules: Rules) -> None:
        if self.match_hands is None:
            if self.bankroll is not None:
                raise ValueError("bankroll needs match_hands, the most hands a match may last")
            return
        try:
            MatchFormat(self.match_hands, self.bankroll).check(rules)
        except TypeError as error:
            raise ValueError(str(error)) from None
        if self.keep_replays or self.decisions:
            raise ValueError("replays and decisions are kept for tournaments of single hands, not of matches")

    @property
    def rules(self) -> Rules:
        return Rules.preset(self.preset, players=self.players)

    @property
    def match_format(self) -> MatchFormat | None:
        """The matches played (None: single hands)."""
        return None if self.match_hands is None else MatchFormat(self.match_hands, self.bankroll)

    @property
    def record_fields(self) -> tuple[str, ...]:
        """The fields of a record: a hand's, or a match's."""
        return RECORD_FIELDS if self.match_hands is None else MATCH_RECORD_FIELDS

    def lineups(self) -> list[tuple[int, ...]]:
        """Agent index per seat, for every seating."""
        return list(permutations(range(len(self.agents)), self.players))

    def units(self) -> list[tuple[int, int]]:
        """(chunk, lineup) work units."""
        chunks = math.ceil(self.deals / self.chunk)
        return [(k, li) for k in range(chunks) for li in range(len(self.lineups()))]

    def key(self) -> str:
        """Identifies the tournament's results (for resuming): every field that decides play,
        and the fingerprint of each ``model:`` agent's files (read from disk on each call)."""
        from .learned import model_fingerprint

        fields: dict[str, Any] = {
            k: v  # workers and the engine do not change results (the engines are held equal)
            for k, v in asdict(self).items()
            if k not in ("workers", "backend")
            and not (k == "decisions" and not v)
            and not (k in ("match_hands", "bankroll") and v is None)  # keys of hand tournaments stay
        }
        models = {
            name: model_fingerprint(name.strip().partition(":")[2], rules=self.rules)
            for name in self.agents
            if name.strip().partition(":")[0] == "model"
        }
        if models:
            fields["models"] = models
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]

    def deals_in(self, chunk: int) -> range:
        """The deal numbers of work unit ``chunk``."""
        return range(chunk * self.chunk, min((chunk + 1) * self.chunk, self.deals))


def play_unit(config: TournamentConfig, chunk: int, lineup: int) -> dict[str, Any]:
    """Play one chunk of deals (or matches) under one lineup; return its game records."""
    if config.match_hands is not None:
        return _play_match_unit(config, chunk, lineup)
    rules = config.rules
    first, count = config.deals_in(chunk).start, len(config.deals_in(chunk))
    decks = shuffled_decks(rules, np.random.default_rng([config.seed, chunk]), count)
    seats = config.lineups()[lineup]
    policies = [make_agent(config.agents[a], rules) for a in seats]
    history: list[np.ndarray] = []
    recorder = DecisionRecorder() if config.decisions else None
    rng = np.random.default_rng([config.seed, chunk, lineup, 1])
    batch = play_hands(rules, policies, decks, rng, history, before_step=recorder, backend=config.backend)
    unit = {"chunk": chunk, "lineup": lineup, "records": records_of(batch, first, lineup)}
    if recorder is not None:
        unit["decisions"] = _decision_rows(recorder.table(batch), config, first, seats)
    if config.keep_replays:
        unit["replays"] = _largest_hands(config, decks, batch.payments, np.array(history), first)
    return unit


def _play_match_unit(config: TournamentConfig, chunk: int, lineup: int) -> dict[str, Any]:
    """Play one chunk of matches under one lineup (agent ``lineup[p]`` as player p)."""
    rules, fmt = config.rules, config.match_format
    assert fmt is not None
    deals = config.deals_in(chunk)
    policies = [make_agent(config.agents[a], rules) for a in config.lineups()[lineup]]
    rng = np.random.default_rng([config.seed, chunk, lineup, 1])
    played = play_matches(rules, fmt, policies, config.seed, len(deals), rng, config.backend, first=deals.start)
    records = {
        "deal": list(deals),
        "lineup": [lineup] * len(deals),
        "standing": played.standing.tolist(),
        "hands": played.played.tolist(),
    }
    return {"chunk": chunk, "lineup": lineup, "records": records}


def records_of(batch: GameBatch, first_deal: int, lineup: int) -> dict[str, list[Any]]:
    """The game records (``RECORD_FIELDS``) of a finished batch: deal ``first_deal + i``
    played under ``lineup``."""
    return {
        "deal": list(range(first_deal, first_deal + len(batch))),
        "lineup": [lineup] * len(batch),
        "payments": batch.payments.tolist(),
        "result": batch.result.tolist(),
        "winner": batch.winner.tolist(),
        "gos": batch.gos.tolist(),
        "scores": batch.scores.tolist(),
    }


def _decision_rows(
    table: dict[str, np.ndarray], config: TournamentConfig, first: int, seats: tuple[int, ...]
) -> dict[str, list]:
    """Decision columns with the deal number and the deciding agent's name in place of the game index."""
    rows = {"deal": (table.pop("game") + first).tolist(), "agent": [config.agents[seats[s]] for s in table["seat"]]}
    return rows | {name: column.tolist() for name, column in table.items()}


def _largest_hands(
    config: TournamentConfig, decks: np.ndarray, payments: np.ndarray, history: np.ndarray, first: int
) -> list[dict[str, Any]]:
    biggest = np.argsort(-np.abs(payments).max(axis=1), kind="stable")[: config.keep_replays]
    rules = config.rules.to_dict()
    return [
        {
            "deal": first + int(g),
            "rules": rules,
            "deck": decks[g].tolist(),
            "actions": [int(a) for a in history[:, g] if a >= 0],
            "carry": 0,
            "payments": payments[g].tolist(),
        }
        for g in biggest
    ]


@dataclass
class TournamentResults:
    """All game records of a tournament, and the figures computed from them."""

    config: TournamentConfig
    units: list[dict[str, Any]] = field(default_factory=list)

    def records(self) -> dict[str, np.ndarray]:
        """Every game, ordered by (chunk, lineup): deal, lineup, payments (n, P), ..."""
        ordered = sorted(self.units, key=lambda u: (u["chunk"], u["lineup"]))
        fields = self.config.record_fields
        return {name: np.concatenate([np.asarray(u["records"][name]) for u in ordered]) for name in fields}

    def decisions(self) -> dict[str, list]:
        """Every recorded go/stop decision (tournaments with ``decisions=True``), by unit order."""
        ordered = [
            u["decisions"] for u in sorted(self.units, key=lambda u: (u["chunk"], u["lineup"])) if "decisions" in u
        ]
        return {name: [v for part in ordered for v in part[name]] for name in (ordered[0] if ordered else {})}

    def replays(self) -> list[dict[str, Any]]:
        hands = [r for u in self.units for r in u.get("replays", [])]
        return sorted(hands, key=lambda r: (-max(abs(p) for p in r["payments"]), r["deal"]))


def run_tournament(
    config: TournamentConfig,
    output: str | Path | None = None,
    progress: Callable[[Iterable], Iterable] | None = None,
    runner: str = "local",
) -> TournamentResults:
    """Play every unit not yet done (resuming from ``output/units.jsonl``), in parallel when
    ``config.workers > 1``; return the results. ``progress`` wraps the stream of finished units
    (e.g. ``tqdm``). ``runner="ray"`` runs the units as Ray tasks (``pip install ".[ray]"``;
    connects to a running cluster, or starts a local one): same units, same seeds, same
    figures as the local runner. A folder another run is using is refused
    (:class:`TournamentLogError`), as is a log that does not belong to ``config``."""
    if runner not in ("local", "ray"):
        raise ValueError(f"runner must be 'local' or 'ray', got {runner!r}")
    if output is None:
        return _run(config, TournamentResults(config), None, "", progress, runner)
    folder = writable_folder(output)
    with folder_lock(folder, LOCK_FILE, "tournament run", TournamentLogError):
        log, key = folder / LOG_FILE, config.key()
        return _run(config, TournamentResults(config, _load_done(log, config, key)), log, key, progress, runner)


def _run(
    config: TournamentConfig,
    results: TournamentResults,
    log: Path | None,
    key: str,
    progress: Callable[[Iterable], Iterable] | None,
    runner: str,
) -> TournamentResults:
    done = {(u["chunk"], u["lineup"]) for u in results.units}
    todo = [unit for unit in config.units() if unit not in done]
    if runner == "ray":
        _require_ray()
    stream = _play_on_ray(config, todo) if runner == "ray" else _play_all(config, todo)
    for unit in progress(stream, total=len(todo)) if progress else stream:
        results.units.append(unit)
        if log is not None:
            with log.open("a") as f:
                f.write(json.dumps({"key": key, **unit}) + "\n")
    return results


def _require_ray() -> None:
    try:
        import ray  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError("the ray runner needs Ray: pip install 'gostop[ray]'") from None


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


def _load_done(log: Path, config: TournamentConfig, key: str) -> list[dict[str, Any]]:
    """The units logged so far, each checked against ``config`` and counted once. A last
    line cut short by an interruption is dropped (and cut from the file, so that the next
    unit starts on a line of its own)."""
    if not log.exists():
        return []
    data = log.read_bytes()
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines[-1]:  # no newline at the end: an interrupted write; cut it after the last complete line
        with log.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
    units: dict[tuple[int, int], dict[str, Any]] = {}
    for number, line in enumerate(lines[:-1], start=1):
        unit = _parse_unit(line, f"{log}, line {number}")
        if unit.pop("key", None) != key:
            raise TournamentLogError(
                f"{log}, line {number}: results of another tournament configuration (or of "
                "models whose files have changed since); use another folder"
            )
        _check_unit(unit, config, f"{log}, line {number}")
        place = (unit["chunk"], unit["lineup"])
        if place in units and units[place] != unit:
            raise TournamentLogError(
                f"{log}, line {number}: unit (chunk {place[0]}, lineup {place[1]}) is logged "
                "twice with different results; the folder was written by two runs at once "
                "or edited: start again in a new folder"
            )
        units[place] = unit
    return list(units.values())


def _parse_unit(line: str, where: str) -> dict[str, Any]:
    try:
        unit = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        raise TournamentLogError(f"{where}: not a JSON line; the log is damaged: start again in a new folder") from None
    if not isinstance(unit, dict):
        raise TournamentLogError(f"{where}: expected a unit (a JSON object), got {type(unit).__name__}")
    return unit


def _check_unit(unit: dict[str, Any], config: TournamentConfig, where: str) -> None:
    """Raise :class:`TournamentLogError` unless ``unit`` is a complete unit of ``config``."""
    allowed = (
        {"chunk", "lineup", "records"}
        | ({"decisions"} if config.decisions else set())
        | ({"replays"} if config.keep_replays else set())
    )
    if not set(unit) <= allowed:
        raise TournamentLogError(f"{where}: unexpected entries {sorted(set(unit) - allowed)} in a unit")
    chunk, lineup = unit.get("chunk"), unit.get("lineup")
    chunks, lineups = math.ceil(config.deals / config.chunk), len(config.lineups())
    if not (type(chunk) is int and 0 <= chunk < chunks and type(lineup) is int and 0 <= lineup < lineups):
        raise TournamentLogError(f"{where}: no unit (chunk {chunk!r}, lineup {lineup!r}) in this tournament")
    fields = config.record_fields
    records = unit.get("records")
    if not isinstance(records, dict) or set(records) != set(fields):
        raise TournamentLogError(f"{where}: a unit's records must have exactly the fields {list(fields)}")
    deals, players = config.deals_in(chunk), config.players
    try:
        arrays = {name: np.asarray(records[name]) for name in fields}
    except ValueError:
        raise TournamentLogError(f"{where}: ragged records") from None
    if config.match_hands is not None:
        _check_match_records(arrays, config, deals, lineup, where)
        return
    shapes = {
        "deal": (len(deals),),
        "lineup": (len(deals),),
        "payments": (len(deals), players),
        "result": (len(deals),),
        "winner": (len(deals),),
        "gos": (len(deals), players),
        "scores": (len(deals), players),
    }
    for name, shape in shapes.items():
        if arrays[name].shape != shape or arrays[name].dtype.kind not in "iu":
            raise TournamentLogError(f"{where}: records[{name!r}] must be integers of shape {shape}")
    results = [int(r) for r in Result if r != Result.ONGOING]
    if (
        (arrays["deal"] != np.arange(deals.start, deals.stop)).any()
        or (arrays["lineup"] != lineup).any()
        or arrays["payments"].sum(axis=1).any()
        or (~np.isin(arrays["result"], results)).any()
        or ((arrays["winner"] < -1) | (arrays["winner"] >= players)).any()
    ):
        raise TournamentLogError(
            f"{where}: records that this unit cannot have produced (deal numbers, lineup, "
            "payments that do not add up to zero, results or winners out of range)"
        )
    stopped, won = arrays["result"] == int(Result.STOP), arrays["winner"] >= 0
    if (
        (stopped & ~won).any()
        or (won & ~stopped & ~np.isin(arrays["result"], (int(Result.CHONGTONG), int(Result.THREE_PPUKS)))).any()
        or (arrays["gos"] < 0).any()
        or (arrays["gos"] > MAX_GOS).any()
        or (arrays["scores"] < 0).any()
        or (arrays["scores"] > MAX_SCORE).any()
    ):
        raise TournamentLogError(
            f"{where}: records that no hand can end with "
            "(a stop without a winner, a winner of a nagari, or gos or scores out of range)"
        )
    if "replays" in unit:
        _check_replays(unit["replays"], config, arrays, where)
    if "decisions" in unit:
        _check_decisions(unit["decisions"], config, deals, where)


MAX_GOS, MAX_SCORE = 20, 500  # far above any hand's: a gos or score past them is forged


def _check_match_records(
    arrays: dict[str, np.ndarray], config: TournamentConfig, deals: range, lineup: int, where: str
) -> None:
    """TournamentLogError unless ``arrays`` are match records this unit can have produced:
    its matches and lineup, standings that add up to zero, and a match shorter than its
    hands only where a player lost the bankroll."""
    n, players = len(deals), config.players
    shapes = {"deal": (n,), "lineup": (n,), "standing": (n, players), "hands": (n,)}
    for name, shape in shapes.items():
        if arrays[name].shape != shape or arrays[name].dtype.kind not in "iu":
            raise TournamentLogError(f"{where}: records[{name!r}] must be integers of shape {shape}")
    hands, full = arrays["hands"], config.match_hands
    broke = (
        (arrays["standing"] + config.bankroll <= 0).any(axis=1) if config.bankroll is not None else np.zeros(n, bool)
    )
    if (
        (arrays["deal"] != np.arange(deals.start, deals.stop)).any()
        or (arrays["lineup"] != lineup).any()
        or arrays["standing"].sum(axis=1).any()
        or (hands < 1).any()
        or (hands > full).any()
        or ((hands < full) & ~broke).any()
    ):
        raise TournamentLogError(
            f"{where}: match records that this unit cannot have produced (match numbers, lineup, "
            "standings that do not add up to zero, or a number of hands out of range)"
        )


def _check_replays(hands: Any, config: TournamentConfig, arrays: dict[str, np.ndarray], where: str) -> None:
    """TournamentLogError unless ``hands`` are at most ``keep_replays`` of this unit's hands,
    each a replay of the tournament's rules that replays under the engine to the payments the
    unit's records hold for its deal."""
    from gostop_env.replay import Replay

    if not isinstance(hands, list) or len(hands) > config.keep_replays:
        raise TournamentLogError(f"{where}: 'replays' must be a list of at most {config.keep_replays} hands")
    rules = config.rules.to_dict()
    for k, hand in enumerate(hands):
        if not isinstance(hand, dict) or set(hand) != {"deal", "rules", "deck", "actions", "carry", "payments"}:
            raise TournamentLogError(f"{where}: replays[{k}] is not a kept hand")
        deal = hand["deal"]
        rows = np.flatnonzero(arrays["deal"] == deal) if type(deal) is int else np.zeros(0, np.int64)
        if rows.size != 1 or hand["rules"] != rules:
            raise TournamentLogError(f"{where}: replays[{k}] is not a hand of this unit (deal {deal!r})")
        try:
            replay = Replay.from_dict({key: value for key, value in hand.items() if key != "deal"}, "a kept hand")
            for _ in replay.play():  # must replay under the engine to its recorded payments
                pass
        except (TypeError, ValueError) as error:
            raise TournamentLogError(f"{where}: replays[{k}] does not replay: {error}") from None
        if list(replay.payments) != arrays["payments"][rows[0]].tolist():
            raise TournamentLogError(f"{where}: replays[{k}] pays otherwise than the unit's records")


def _check_decisions(columns: Any, config: TournamentConfig, deals: range, where: str) -> None:
    """TournamentLogError unless ``columns`` are a decision table of this unit: its columns,
    of one length, integers but for the agent names, deals of the unit, agents of the lineup."""
    from .decisions import FEATURES, OUTCOMES

    names = {"deal", "agent", "seat", *FEATURES, *OUTCOMES}
    if not isinstance(columns, dict) or set(columns) != names:
        raise TournamentLogError(f"{where}: 'decisions' must have exactly the columns {sorted(names)}")
    lengths = {len(v) if isinstance(v, list) else -1 for v in columns.values()}
    if len(lengths) != 1 or -1 in lengths:
        raise TournamentLogError(f"{where}: 'decisions' columns must be lists of one length")
    numbers = [v for name, column in columns.items() if name != "agent" for v in column]
    if not all(type(v) is int for v in numbers):
        raise TournamentLogError(f"{where}: 'decisions' columns hold integers (agent names aside)")
    if not all(d in deals for d in columns["deal"]) or not all(a in config.agents for a in columns["agent"]):
        raise TournamentLogError(f"{where}: 'decisions' name deals or agents that are not this unit's")
    if not all(0 <= s < config.players for s in columns["seat"]) or not all(w in (0, 1) for w in columns["went"]):
        raise TournamentLogError(f"{where}: 'decisions' hold seats or choices out of range")
