"""Tournament outputs: a markdown leaderboard, CSV and JSON files, PNG plots, replays."""

from __future__ import annotations

import csv
import importlib.util
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from .decisions import save_table
from .metrics import AgentFigures, MatchFigures, agent_figures, head_to_head, match_figures, paired_differences
from .tournament import TournamentResults

COLUMNS = (
    "agent",
    "rating",
    "chips/hand",
    "95% CI",
    "win rate",
    "win 95% CI",
    "nagari",
    "go rate",
    "go success",
    "score at stop",
    "p5",
    "p95",
    "p99",
    "CVaR-5%",
    "hands",
)
COMPACT = ("agent", "chips/hand", "95% CI", "win rate", "go rate", "go success", "rating")
"""The columns a terminal shows by default (``gostop tournament --wide`` prints them all)."""
RATING_LEGEND = (
    "rating: openskill ordinal, mu - 3 sigma, shown with mu ± sigma; from each hand's finishing ranks "
    "(chips won), not from chip amounts, so its order can differ from chips/hand."
)
"""The line under a leaderboard that says what its rating column is."""


MATCH_COLUMNS = (
    "agent",
    "match win rate",
    "95% CI",
    "chips/match",
    "chips 95% CI",
    "chips/hand",
    "hands/match",
    "matches",
)
"""The leaderboard of a tournament of matches."""


def match_rows(figures: list[MatchFigures]) -> list[list[str]]:
    return [
        [
            f.agent,
            f"{f.win_rate:.1%}",
            f"{f.win_ci[0]:.1%} .. {f.win_ci[1]:.1%}",
            f"{f.chips_per_match:+.2f}",
            f"{f.chips_ci[0]:+.2f} .. {f.chips_ci[1]:+.2f}",
            f"{f.chips_per_hand:+.3f}",
            f"{f.hands_per_match:.2f}",
            str(f.matches),
        ]
        for f in figures
    ]


def match_leaderboard_markdown(results: TournamentResults) -> str:
    """The leaderboard of a tournament of matches, best match win rate first."""
    config = results.config
    length = f"{config.match_hands} hands" + (f", bankroll {config.bankroll}" if config.bankroll is not None else "")
    head = (
        f"{config.deals} duplicate matches of {length}, {config.players} players, {config.preset} rules, "
        f"{len(config.lineups())} seatings per match, seed {config.seed}\n\n"
    )
    lines = _markdown_table(MATCH_COLUMNS, match_rows(match_figures(results)))
    lines += ["", "A match is won by the most chips at its end; players level at the top share the win."]
    return head + "\n".join(lines)


def _markdown_table(columns: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    """The lines of a markdown table."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]


def _write_csv(path: Path, columns: tuple[str, ...], rows: list[list[str]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)


def leaderboard_rows(figures: list[AgentFigures]) -> list[list[str]]:
    return [
        [
            f.agent,
            f"{f.rating:.1f} ({f.mu:.1f}±{f.sigma:.1f})",
            f"{f.chips:+.3f}",
            f"{f.chips_ci[0]:+.3f} .. {f.chips_ci[1]:+.3f}",
            f"{f.win_rate:.1%}",
            f"{f.win_ci[0]:.1%} .. {f.win_ci[1]:.1%}",
            f"{f.nagari_rate:.1%}",
            f"{f.go_rate:.1%}",
            f"{f.go_success:.1%}",
            f"{f.score_at_stop:.1f}",
            f"{f.p5:+.0f}",
            f"{f.p95:+.0f}",
            f"{f.p99:+.0f}",
            f"{f.cvar5:+.1f}",
            str(f.games),
        ]
        for f in figures
    ]


def leaderboard_markdown(results: TournamentResults, columns: tuple[str, ...] = COLUMNS) -> str:
    """The leaderboard as a markdown table of ``columns`` (all by default; ``COMPACT`` fits
    a terminal), best chips per hand first; for a tournament of matches, its own columns
    (``MATCH_COLUMNS``)."""
    config = results.config
    if config.match_hands is not None:
        return match_leaderboard_markdown(results)
    keep = [COLUMNS.index(c) for c in columns]
    rows = [[row[i] for i in keep] for row in leaderboard_rows(agent_figures(results))]
    head = (
        f"{config.deals} duplicate deals, {config.players} players, {config.preset} rules, "
        f"{len(config.lineups())} seatings per deal, seed {config.seed}\n\n"
    )
    lines = _markdown_table(columns, rows)
    if "rating" in columns:
        lines += ["", RATING_LEGEND]
    if len(config.agents) > 2:  # with two agents this is the leaderboard's own chips column
        lines += ["", "Paired differences (same deals): chips per hand of the first agent less the second's", ""]
        lines += ["| agents | chips/hand | 95% CI |", "|---|---|---|"]
        lines += [
            f"| {d.first} − {d.second} | {d.chips:+.3f} | {d.chips_ci[0]:+.3f} .. {d.chips_ci[1]:+.3f} |"
            for d in paired_differences(results)
        ]
    return head + "\n".join(lines)


def write_outputs(results: TournamentResults, folder: str | Path) -> list[Path]:
    """Write leaderboard.md, leaderboard.csv, results.json, the PNG plots and the kept
    replays into ``folder``; return the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if results.config.match_hands is not None:
        return _match_outputs(results, folder)
    figures = agent_figures(results)
    table = head_to_head(results)
    written = [folder / "leaderboard.md", folder / "leaderboard.csv", folder / "results.json"]
    written[0].write_text(leaderboard_markdown(results) + "\n")
    _write_csv(written[1], COLUMNS, leaderboard_rows(figures))
    agents = list(results.config.agents)
    written[2].write_text(
        json.dumps(
            {
                "config": {**results.config.__dict__, "agents": agents},
                "agents": [f.as_dict() for f in figures],
                "head_to_head": {
                    a: {b: (None if np.isnan(v) else float(v)) for b, v in zip(agents, row)}
                    for a, row in zip(agents, table)
                },
                "paired_differences": [asdict(d) for d in paired_differences(results)],
            },
            indent=1,
        )
    )
    decisions = results.decisions()
    if decisions:
        written.append(save_table(decisions, folder / "decisions.csv"))
    if plots_available():
        config = results.config
        about = f"{config.deals:,} duplicate deals, {config.players} players, {config.preset} rules"
        written += _plots(figures, table, agents, folder, about, config.players)
    written += _replays(results, folder)
    return written


def _match_outputs(results: TournamentResults, folder: Path) -> list[Path]:
    """leaderboard.md, leaderboard.csv and results.json of a tournament of matches."""
    figures = match_figures(results)
    written = [folder / "leaderboard.md", folder / "leaderboard.csv", folder / "results.json"]
    written[0].write_text(match_leaderboard_markdown(results) + "\n")
    _write_csv(written[1], MATCH_COLUMNS, match_rows(figures))
    config = {**results.config.__dict__, "agents": list(results.config.agents)}
    written[2].write_text(json.dumps({"config": config, "agents": [f.as_dict() for f in figures]}, indent=1))
    return written


def _replays(results: TournamentResults, folder: Path) -> list[Path]:
    from gostop_env.replay import Replay

    paths = []
    for rank, hand in enumerate(results.replays()[: results.config.keep_replays], start=1):
        path = folder / "replays" / f"hand{rank:02d}_deal{int(hand['deal'])}.json"  # a number: stays inside
        path.parent.mkdir(exist_ok=True)
        Replay(hand["rules"], hand["deck"], hand["actions"], hand["carry"], hand["payments"]).save(path)
        paths.append(path)
    return paths


def plots_available() -> bool:
    """Whether matplotlib, which draws the PNG plots, is installed (the ``plots`` extra)."""
    return importlib.util.find_spec("matplotlib") is not None


def _plots(
    figures: list[AgentFigures],
    table: np.ndarray,
    agents: list[str],
    folder: Path,
    about: str,
    players: int,
) -> list[Path]:
    """chips.png, head_to_head.png and ratings.png; ``about`` (deals, players, rules) titles them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = [folder / "chips.png", folder / "head_to_head.png", folder / "ratings.png"]
    _chips_plot(plt, figures, about, paths[0])
    _head_to_head_plot(plt, figures, table, agents, about, players, paths[1])
    _ratings_plot(plt, figures, about, paths[2])
    return paths


def _chips_plot(plt: Any, figures: list[AgentFigures], about: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(figures)))
    errors = np.array([[f.chips - f.chips_ci[0], f.chips_ci[1] - f.chips] for f in figures]).T
    ax.barh([f.agent for f in figures], [f.chips for f in figures], xerr=errors, capsize=4, color="tab:blue")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("chips per hand (95% interval over deals)")
    ax.set_title(f"Chips per hand: {about}", fontsize=10)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _head_to_head_plot(
    plt: Any,
    figures: list[AgentFigures],
    table: np.ndarray,
    agents: list[str],
    about: str,
    players: int,
    path: Path,
) -> None:
    """Rows and columns in leaderboard order. With two players a cell is the row agent's
    chips per hand against the column agent; with more, at the tables where the column agent
    also sits (constant along a row when every table holds every agent, and titled so)."""
    order = [agents.index(f.agent) for f in figures]
    table, names = table[np.ix_(order, order)], [agents[i] for i in order]
    size = len(names)
    fig, ax = plt.subplots(figsize=(2.5 + 0.9 * size, 1.8 + 0.8 * size))
    limit = float(np.nanmax(np.abs(table))) if np.isfinite(table).any() else 1.0
    image = ax.imshow(np.nan_to_num(table), cmap="RdBu", vmin=-limit, vmax=limit)
    ax.set_xticks(range(size), names, rotation=45, ha="right")
    ax.set_yticks(range(size), names)
    for (a, b), value in np.ndenumerate(table):
        if not np.isnan(value):
            strong = abs(value) > 0.6 * limit
            ax.text(b, a, f"{value:+.1f}", ha="center", va="center", fontsize=8, color="white" if strong else "black")
    if players == 2:
        what = "row agent's chips/hand against the column agent"
    elif size == players:
        what = "row agent's chips/hand (every table holds every agent: one value per row)"
    else:
        what = "row agent's chips/hand at tables where the column agent also sits"
    ax.set_title(f"{what}\n{about}", fontsize=9)
    fig.colorbar(image, label="chips per hand of the row agent")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _ratings_plot(plt: Any, figures: list[AgentFigures], about: str, path: Path) -> None:
    """Each agent's openskill mu (dot) with 3 sigma either side (its uncertainty) and its
    rating, mu - 3 sigma (bar end), best rating first. Points, not bars from an axis: the
    axis starts a little below the lowest rating, where a bar's length would mislead."""
    ranked = sorted(figures, key=lambda f: -f.rating)
    fig, ax = plt.subplots(figsize=(7, 1.8 + 0.5 * len(ranked)))
    rows = range(len(ranked))
    mus = [f.mu for f in ranked]
    ax.errorbar(
        mus, rows, xerr=[3 * f.sigma for f in ranked], fmt="o", capsize=4, color="tab:green", label="mu ± 3 sigma"
    )
    ax.plot([f.rating for f in ranked], rows, "|", markersize=14, color="black", label="rating (mu - 3 sigma)")
    low = min(f.mu - 3 * f.sigma for f in ranked)
    high = max(f.mu + 3 * f.sigma for f in ranked)
    margin = 0.1 * max(high - low, 1.0)
    ax.set_xlim(low - margin, high + margin)
    ax.set_yticks(list(rows), [f.agent for f in ranked])
    ax.set_xlabel("openskill skill estimate (from finishing ranks, not chip amounts)")
    ax.set_title(f"Ratings, best first: {about}", fontsize=11)
    ax.legend(fontsize=9, loc="lower right")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
