"""Learning curves of training runs: chips per hand against one agent, by steps and by wall
time, as a CSV table and a PNG figure (``gostop curve RUN [RUN ...] --against AGENT``).

The figures are a run's evaluations (``eval.jsonl``: chips per hand with its 95% interval
over duplicate deals); the wall time of each is read from the run's TensorBoard logs
(``tb/``, written with every evaluation by both trainers), counted from the run's first
logged event, so a resumed run's pause is counted too.
"""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gostop_env.files import writable_folder

MAX_LOG_BYTES = 1 << 24
COLUMNS = ("run", "steps", "seconds", "chips", "low", "high", "deals")


@dataclass(frozen=True)
class CurvePoint:
    """One evaluation of a run against the agent: its steps, wall time and chips per hand."""

    run: str
    steps: int
    seconds: float | None
    chips: float
    low: float
    high: float
    deals: int


def learning_curve(run: str | Path, against: str, label: str | None = None) -> list[CurvePoint]:
    """The evaluations of ``run`` against ``against``, in order of steps (ValueError when the
    run folder has no ``eval.jsonl`` or no evaluation against that agent)."""
    run = Path(run)
    log = run / "eval.jsonl"
    if not log.is_file():
        raise ValueError(f"{run} has no eval.jsonl: not a training run folder, or not evaluated yet")
    if log.stat().st_size > MAX_LOG_BYTES:
        raise ValueError(f"{log} is larger than {MAX_LOG_BYTES} bytes")
    rows = []
    for number, line in enumerate(log.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
            if row["against"] == against:
                low, high = map(float, row["chips_ci"])
                rows.append((int(row["timesteps"]), float(row["chips"]), low, high, int(row["deals"])))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{log}, line {number}: not an evaluation row ({error})") from None
    if not rows:
        raise ValueError(f"{log} has no evaluation against {against!r}")
    seconds = _wall_times(run, against)
    name = label or run.name
    points = {steps: CurvePoint(name, steps, seconds.get(steps), c, lo, hi, d) for steps, c, lo, hi, d in rows}
    return [points[steps] for steps in sorted(points)]  # an evaluation repeated on resume counts once


def _wall_times(run: Path, against: str) -> dict[int, float]:
    """Seconds from the run's first TensorBoard event to each evaluation against ``against``
    (empty where the run has no logs, or TensorBoard is not installed)."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ModuleNotFoundError:
        return {}
    times: dict[int, float] = {}
    start = None
    for folder in sorted({p.parent for p in (run / "tb").rglob("events.out.tfevents.*")}):
        events = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        events.Reload()
        tags = events.Tags()["scalars"]
        firsts = [events.Scalars(tag)[0].wall_time for tag in tags if events.Scalars(tag)]
        if firsts:
            start = min([*firsts, *([start] if start is not None else [])])
        tag = f"eval/{against}/chips"
        if tag in tags:
            times.update({event.step: event.wall_time for event in events.Scalars(tag)})
    return {steps: wall - start for steps, wall in times.items()} if start is not None else {}


def write_curves(runs: Sequence[str | Path], against: str, out: str | Path, labels: Sequence[str] = ()) -> list[Path]:
    """``curve.csv`` and (with matplotlib) ``curve.png`` of ``runs`` against ``against`` in
    ``out``: chips per hand with 95% intervals by steps and by wall time. The files written."""
    if labels and len(labels) != len(runs):
        raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
    curves = [learning_curve(run, against, labels[k] if labels else None) for k, run in enumerate(runs)]
    out = writable_folder(out)
    table = out / "curve.csv"
    with table.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for curve in curves:
            for p in curve:
                seconds = "" if p.seconds is None else f"{p.seconds:.0f}"
                writer.writerow([p.run, p.steps, seconds, f"{p.chips:.4f}", f"{p.low:.4f}", f"{p.high:.4f}", p.deals])
    written = [table]
    with contextlib.suppress(ModuleNotFoundError):  # matplotlib: the plots extra
        written.append(_plot(curves, against, out / "curve.png"))
    return written


def _plot(curves: list[list[CurvePoint]], against: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for curve in curves:
        for ax, x in ((axes[0], [p.steps / 1e6 for p in curve]), (axes[1], [_minutes(p) for p in curve])):
            shown = [(xi, p) for xi, p in zip(x, curve) if xi is not None]
            if not shown:
                continue
            xs = [xi for xi, _ in shown]
            ax.plot(xs, [p.chips for _, p in shown], marker="o", label=curve[0].run)
            ax.fill_between(xs, [p.low for _, p in shown], [p.high for _, p in shown], alpha=0.2)
    axes[0].set_xlabel("learner steps (millions)")
    axes[1].set_xlabel("wall time (minutes)")
    steps = [p.steps for curve in curves for p in curve]
    if max(steps) > 50 * min(steps):  # runs of very different lengths: each readable
        from matplotlib.ticker import NullFormatter, ScalarFormatter

        for ax in axes:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0].set_ylabel(f"chips per hand against {against}")
    for ax in axes:
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.grid(alpha=0.3)
    axes[0].legend()
    figure.suptitle(f"Learning curves against {against} (95% intervals, duplicate deals)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _minutes(point: CurvePoint) -> float | None:
    return None if point.seconds is None else point.seconds / 60
