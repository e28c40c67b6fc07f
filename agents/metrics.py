"""Figures of a tournament: per agent, head to head, and openskill ratings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from gostop_env.core import Result

from .tournament import TournamentResults

Z95 = 1.959964


@dataclass(frozen=True)
class AgentFigures:
    """One agent's results over all its games."""

    agent: str
    games: int
    chips: float  # mean chips per hand
    chips_ci: tuple[float, float]  # 95%, over deals (each deal's seatings averaged: paired)
    win_rate: float
    win_ci: tuple[float, float]  # Wilson 95%
    nagari_rate: float
    go_rate: float  # gos said / (gos said + stops said)
    go_success: float  # share of hands with a go that ended in this agent's stop
    score_at_stop: float
    p5: float
    p95: float
    p99: float
    cvar5: float  # mean of the worst 5% of hands
    rating: float = 0.0  # openskill ordinal (mu - 3 sigma)
    mu: float = 0.0
    sigma: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def half_width(values: np.ndarray) -> float:
    """Half the 95% normal interval of the mean of ``values`` (infinite for fewer than two)."""
    return float(Z95 * values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("inf")


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """Wilson score 95% interval of a proportion."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + Z95**2 / (2 * trials)) / (1 + Z95**2 / trials)
    half = Z95 * np.sqrt(p * (1 - p) / trials + Z95**2 / (4 * trials**2)) / (1 + Z95**2 / trials)
    return (float(centre - half), float(centre + half))


def agent_figures(results: TournamentResults) -> list[AgentFigures]:
    """Figures for every agent, best chips per hand first, with openskill ratings."""
    config, r = results.config, results.records()
    return figures_of(r, config.lineups(), config.agents, openskill_ratings(results))


def figures_of(
    records: dict[str, np.ndarray],
    lineups: Sequence[tuple[int, ...]],
    agents: Sequence[str],
    ratings: dict[str, tuple[float, float, float]] | None = None,
) -> list[AgentFigures]:
    """Figures for every agent from game records (``RECORD_FIELDS``) whose ``lineup`` column
    indexes ``lineups``; best chips per hand first. Ratings default to 0 (not computed)."""
    seats = np.array(lineups)[records["lineup"]]  # (n, P) agent index per seat
    figures = [
        _figures(a, name, records, seats, (ratings or {}).get(name, (0.0, 0.0, 0.0))) for a, name in enumerate(agents)
    ]
    return sorted(figures, key=lambda f: -f.chips)


def _figures(a: int, name: str, r: dict, seats: np.ndarray, rating: tuple[float, float, float]) -> AgentFigures:
    game, seat = np.nonzero(seats == a)
    chips = r["payments"][game, seat].astype(np.float64)
    per_deal = _per_deal_chips(a, r, seats)[1]
    half = half_width(per_deal)
    won = r["winner"][game] == seat
    stopped = won & (r["result"][game] == Result.STOP)
    gos = r["gos"][game, seat]
    worst = np.sort(chips)[: max(1, int(np.ceil(0.05 * len(chips))))]
    return AgentFigures(
        agent=name,
        games=len(game),
        chips=float(chips.mean()),
        chips_ci=(float(chips.mean() - half), float(chips.mean() + half)),
        win_rate=float(won.mean()),
        win_ci=wilson(int(won.sum()), len(game)),
        nagari_rate=float((r["result"][game] == Result.NAGARI).mean()),
        go_rate=float(gos.sum() / max(gos.sum() + stopped.sum(), 1)),
        go_success=float(stopped[gos > 0].mean()) if (gos > 0).any() else 0.0,
        score_at_stop=float(r["scores"][game, seat][stopped].mean()) if stopped.any() else 0.0,
        p5=float(np.percentile(chips, 5)),
        p95=float(np.percentile(chips, 95)),
        p99=float(np.percentile(chips, 99)),
        cvar5=float(worst.mean()),
        rating=rating[0],
        mu=rating[1],
        sigma=rating[2],
    )


@dataclass(frozen=True)
class PairedDifference:
    """Agent ``first``'s chips per hand less agent ``second``'s, on the same deals: each
    deal's seatings averaged per agent, the difference taken deal by deal, then its mean
    and 95% interval over deals (the duplicate deals pair the two agents' hands)."""

    first: str
    second: str
    chips: float
    chips_ci: tuple[float, float]


def paired_differences(results: TournamentResults) -> list[PairedDifference]:
    """Every pair of agents, each pair once (``first`` listed before ``second``)."""
    config, r = results.config, results.records()
    seats = np.array(config.lineups())[r["lineup"]]
    per_deal = [_per_deal_chips(a, r, seats) for a in range(len(config.agents))]
    pairs = []
    for a, first in enumerate(config.agents):
        for b in range(a + 1, len(config.agents)):
            both = np.intersect1d(per_deal[a][0], per_deal[b][0])
            gap = per_deal[a][1][np.searchsorted(per_deal[a][0], both)]
            gap = gap - per_deal[b][1][np.searchsorted(per_deal[b][0], both)]
            half = half_width(gap)
            mean = float(gap.mean()) if len(gap) else float("nan")
            pairs.append(PairedDifference(first, config.agents[b], mean, (mean - half, mean + half)))
    return pairs


def _per_deal_chips(a: int, r: dict, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the deals agent ``a`` played, sorted; its mean chips per hand on each)."""
    game, seat = np.nonzero(seats == a)
    chips = r["payments"][game, seat].astype(np.float64)
    return np.unique(r["deal"][game]), _per_deal_means(r["deal"][game], chips)


def head_to_head(results: TournamentResults) -> np.ndarray:
    """``H[a, b]``: agent a's mean chips per hand in the games where agent b also sat."""
    config, r = results.config, results.records()
    seats = np.array(config.lineups())[r["lineup"]]
    n = len(config.agents)
    table = np.full((n, n), np.nan)
    for a in range(n):
        for b in range(n):
            if a != b:
                game, seat = np.nonzero(seats == a)
                with_b = (seats[game] == b).any(axis=1)
                table[a, b] = r["payments"][game[with_b], seat[with_b]].mean()
    return table


def openskill_ratings(results: TournamentResults) -> dict[str, tuple[float, float, float]]:
    """Plackett-Luce ratings from every game in record order, ranked by chips won (ties,
    such as a nagari, are draws): ``{agent: (ordinal, mu, sigma)}``."""
    from openskill.models import PlackettLuce

    config, r = results.config, results.records()
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in config.agents}
    lineups = config.lineups()
    for lineup, payments in zip(r["lineup"], r["payments"]):
        names = [config.agents[a] for a in lineups[lineup]]
        ranks = [1 + int((payments > p).sum()) for p in payments]
        rated = model.rate([[ratings[n]] for n in names], ranks=ranks)
        for name, (rating,) in zip(names, rated):
            ratings[name] = rating
    return {n: (float(v.ordinal()), float(v.mu), float(v.sigma)) for n, v in ratings.items()}


@dataclass(frozen=True)
class MatchFigures:
    """One agent's results over the matches of a match tournament. Each match is played
    under every lineup: an agent's figures on it are averaged over the lineups it sat in,
    and the intervals are over matches (duplicate matches pair the lineups)."""

    agent: str
    matches: int  # matches played, every lineup counted
    win_rate: float  # share of matches won; players level at the top share the win
    win_ci: tuple[float, float]
    chips_per_match: float
    chips_ci: tuple[float, float]
    chips_per_hand: float
    hands_per_match: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def match_figures(results: TournamentResults) -> list[MatchFigures]:
    """Figures of every agent of a match tournament, best match win rate first."""
    config, r = results.config, results.records()
    seats = np.array(config.lineups())[r["lineup"]]  # (n, P) agent index per player
    standing = r["standing"]
    top = standing == standing.max(axis=1, keepdims=True)
    share = top / top.sum(axis=1, keepdims=True)
    figures = []
    for a, name in enumerate(config.agents):
        game, player = np.nonzero(seats == a)
        chips = standing[game, player].astype(np.float64)
        wins, per_match = _per_deal_means(r["deal"][game], share[game, player]), _per_deal_means(r["deal"][game], chips)
        win_half, chips_half = half_width(wins), half_width(per_match)
        figures.append(
            MatchFigures(
                agent=name,
                matches=len(game),
                win_rate=float(wins.mean()),
                win_ci=(float(wins.mean() - win_half), float(wins.mean() + win_half)),
                chips_per_match=float(per_match.mean()),
                chips_ci=(float(per_match.mean() - chips_half), float(per_match.mean() + chips_half)),
                chips_per_hand=float(chips.sum() / r["hands"][game].sum()),
                hands_per_match=float(r["hands"][game].mean()),
            )
        )
    return sorted(figures, key=lambda f: -f.win_rate)


def _per_deal_means(deals: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The mean of ``values`` on each deal (or match), in deal order."""
    _, inverse = np.unique(deals, return_inverse=True)
    return np.bincount(inverse, weights=values) / np.bincount(inverse)
