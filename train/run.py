"""The run folder both trainers keep (``gostop train``), and the schedule they keep it by.

A run folder holds ``config.json`` (the configuration it runs under), ``state.json``
(timesteps done, the latest checkpoint, the league's snapshots: what a resume reads),
``eval.jsonl`` (one line per evaluation and opponent), ``snapshots/`` and ``model/`` (model
folders), ``tb/`` (TensorBoard) and the lock a live run holds. Each trainer adds its own
checkpoints: :mod:`gostop.train.ppo` (MaskablePPO) and :mod:`gostop.train.batched`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gostop.agents.registry import load_model
from gostop_env.files import folder_lock, read_json_object, writable_folder, write_json_atomic
from gostop_env.policy import Policy

from .config import TrainConfig

Log = Callable[[str], None]


def check_trainer(config: TrainConfig, trainer: str) -> None:
    """ValueError, before any work, when ``config`` names another trainer than ``trainer``."""
    if config.trainer != trainer:
        raise ValueError(
            f"this config names trainer = {config.trainer!r}, not {trainer!r}: run it with "
            "gostop.train.launch.train (or gostop train), which picks the trainer"
        )


THREADS_VARIABLE = "GOSTOP_TORCH_THREADS"


def set_torch_threads() -> int:
    """Give torch the threads ``$GOSTOP_TORCH_THREADS`` asks for (1 when unset: the small
    networks here train fastest on one) and return that number; ValueError, before any work,
    on anything but a whole number from 1."""
    import torch

    text = os.environ.get(THREADS_VARIABLE, "1")
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a whole number of threads, 1 or more; got {text!r}")
    torch.set_num_threads(threads)
    return threads


LOCK_FILE = "run.lock"


def run_lock(out: Path) -> Any:
    """The lock a training run holds on its folder (a second run or resume on it is refused)."""
    writable_folder(out)
    return folder_lock(out, LOCK_FILE, "training run")


def start_run(config: TrainConfig, out: Path, resume: bool) -> dict[str, Any]:
    """A run's state: a new folder started (its config written), or, to ``resume``, the saved
    state of a run started with the same configuration (only ``ppo.timesteps`` and the
    engine may change); a run stopped before its first checkpoint resumes from the start,
    with the demonstrations it had collected (:mod:`gostop.train.demo_files`). ValueError,
    before any work, on a folder that does not fit."""
    saved = out / "state.json"
    fresh = {"timesteps": 0, "checkpoint": None, "snapshots": []}
    if not resume:
        if saved.exists():
            raise ValueError(f"{out} already holds a run: resume it (--resume) or choose another out folder")
        writable_folder(out)
        write_json_atomic(out / "config.json", config.to_dict())
        return fresh
    if not (out / "config.json").exists():
        raise ValueError(f"nothing to resume in {out} (no config.json)")
    _check_same_config(config, out)
    return read_state(saved) if saved.exists() else fresh


def _check_same_config(config: TrainConfig, out: Path) -> None:
    """ValueError unless ``config`` is the one ``out``'s run started with (but for
    ``ppo.timesteps`` and the engine)."""
    before = read_json_object(out / "config.json", MAX_STATE_BYTES, "a training run's config")
    before = json.loads(json.dumps(TrainConfig.from_dict(before).to_dict()))  # keys added since: defaults
    now = json.loads(json.dumps(config.to_dict()))
    for side in (before, now):  # the engine and the length may change; the engines play alike
        side["ppo"].pop("timesteps"), side.pop("core")
    if before != now:
        raise ValueError(f"{out} was started with another configuration (only ppo.timesteps may change on resume)")


MAX_STATE_BYTES = 1 << 24  # config.json and state.json are small; a larger file is refused unread


def read_state(path: Path) -> dict[str, Any]:
    """A run's ``state.json``, checked: ValueError naming the file and the fault."""
    state = read_json_object(path, MAX_STATE_BYTES, "a training run's state")
    checks = {
        "timesteps": lambda v: type(v) is int and v >= 0,
        "checkpoint": lambda v: v is None or isinstance(v, str),
        "snapshots": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    }
    for key, valid in checks.items():
        if key not in state or not valid(state[key]):
            raise ValueError(f"{path} is damaged: {key!r} is {state.get(key)!r}; start the run again in a new folder")
    return state


def model_meta(config: TrainConfig, timesteps: int) -> dict[str, Any]:
    """What a model folder of this run records about itself."""
    meta = {
        "encoding": config.encoding,
        "players": config.players,
        "preset": config.preset,
        "decides": "go_stop" if config.kind == "go_stop" else "all",
        "trained": {"timesteps": timesteps, "config": config.to_dict()},
    }
    if config.kind == "go_stop":
        meta["card_player"] = config.ppo.card_player
    return meta


def record_evaluation(folder: Path, config: TrainConfig, out: Path, now: int, log: Log, logger: Any = None) -> None:
    """Evaluate the model in ``folder``; log the figures (eval.jsonl, TensorBoard when given
    SB3's ``logger``, log lines)."""
    rows = evaluate(folder, config)
    with (out / "eval.jsonl").open("a") as f:
        for row in rows:
            f.write(json.dumps({"timesteps": now, **row}) + "\n")
            if logger is not None:
                for key in ("chips", "win_rate", "go_rate", "go_success"):
                    logger.record(f"eval/{row['against']}/{key}", row[key])
            low, high = row["chips_ci"]
            log(
                f"[{now} steps] against {row['against']}: {row['chips']:+.3f} chips/hand "
                f"(95% CI {low:+.3f} .. {high:+.3f}), win {row['win_rate']:.1%}, go {row['go_rate']:.1%}"
            )
    if logger is not None:
        logger.dump(now)


def evaluate(folder: str | Path, config: TrainConfig, deals: int | None = None) -> list[dict[str, Any]]:
    """The model in ``folder`` over duplicate deals: in 2-player games against each of
    ``config.eval.against`` in turn; in 3-player games against all of them together."""
    from gostop.agents.metrics import agent_figures
    from gostop.agents.tournament import TournamentConfig, run_tournament

    fields = [(o,) for o in config.eval.against] if config.players == 2 else [tuple(config.eval.against)]
    rows = []
    for field in fields:
        agents = (f"model:{folder}", *field)
        tournament = TournamentConfig(
            agents,
            config.players,
            config.preset,
            deals or config.eval.deals,
            seed=config.seed + 1_000_003,
            backend=config.core.backend,
        )
        figures = {f.agent: f for f in agent_figures(run_tournament(tournament))}[agents[0]]
        rows.append(
            {
                "against": " + ".join(field),
                "deals": tournament.deals,
                "chips": figures.chips,
                "chips_ci": list(figures.chips_ci),
                "win_rate": figures.win_rate,
                "go_rate": figures.go_rate,
                "go_success": figures.go_success,
            }
        )
    return rows


def next_due(done: int, every: int) -> int | None:
    """The first multiple of ``every`` after ``done`` (None when ``every`` is 0)."""
    return (done // every + 1) * every if every > 0 else None


def league_snapshot(folder: str | Path, config: TrainConfig) -> Policy:
    """A frozen learner as an opponent: it samples its moves (a more varied league)."""
    return load_model(str(folder), config.rules, deterministic=False)


def league_weights(config: TrainConfig, snapshots: int) -> list[float]:
    """Sampling weights of the named agents, then of the snapshots: the latest
    ``max_snapshots`` at ``snapshot_weight``, older ones retired at 0 (they keep their place)."""
    live = min(snapshots, config.opponents.max_snapshots)
    return [*config.opponents.pool.values(), *[0.0] * (snapshots - live), *[config.opponents.snapshot_weight] * live]
