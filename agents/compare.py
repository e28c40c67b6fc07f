"""Two policies over duplicate deals: a two-agent tournament of policy objects.

:func:`compare` plays each 2-player deal twice with the seats swapped, as a tournament
does (with 3 players, three times, policy A in each seat in turn and B in the other two), and
reads its figures with the tournament's own code (:func:`~.tournament.records_of`,
:func:`~.metrics.figures_of`); unlike :func:`~.tournament.run_tournament` it takes policies
rather than agent names, and plays in one process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gostop_env.core import Rules
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.match import MatchFormat
from gostop_env.policy import Policy

from .match import play_hands, play_matches
from .metrics import figures_of, half_width
from .tournament import RECORD_FIELDS, records_of

SEATINGS = ((0, 1), (1, 0))  # lineup 0: A deals first; lineup 1: B does
SEATINGS_3 = ((0, 1, 1), (1, 0, 1), (1, 1, 0))  # A in seat 0, 1, 2 in turn; B in the others


@dataclass(frozen=True)
class Comparison:
    """Policy A against policy B over duplicate deals (each deal played once per seat of A):
    A's chips per hand with a 95% interval, and rates."""

    deals: int
    chips_per_hand: float
    ci95: tuple[float, float]
    win_rate: float
    go_rate: float

    def __str__(self) -> str:
        low, high = self.ci95
        return (
            f"{self.deals} duplicate deals: {self.chips_per_hand:+.3f} chips/hand "
            f"(95% CI {low:+.3f} .. {high:+.3f}), win rate {self.win_rate:.1%}, go rate {self.go_rate:.1%}"
        )


def compare(
    policy_a: Policy,
    policy_b: Policy,
    deals: int,
    seed: int = 0,
    rules: Rules | None = None,
    batch_size: int = 2048,
    backend: str | None = None,
) -> Comparison:
    """Duplicate-deal comparison of two policies (2 players; with 3, A against two B's), on
    the core's ``backend`` (None: the default)."""
    rules = rules or Rules()
    seatings = SEATINGS if rules.players == 2 else SEATINGS_3
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, deals, batch_size):
        decks = shuffled_decks(rules, rng, min(batch_size, deals - start))
        for lineup, seating in enumerate(seatings):
            batch = play_hands(rules, [(policy_a, policy_b)[a] for a in seating], decks, rng, backend=backend)
            parts.append(records_of(batch, start, lineup))
    records = {name: np.concatenate([np.asarray(p[name]) for p in parts]) for name in RECORD_FIELDS}
    a = next(f for f in figures_of(records, seatings, ("A", "B")) if f.agent == "A")
    return Comparison(deals, a.chips, a.chips_ci, a.win_rate, a.go_rate)


@dataclass(frozen=True)
class MatchComparison:
    """Policy A against policy B over duplicate matches (each match played twice, A as each
    player; 2 players): A's match win rate (a tie counts half), chips per match and per hand,
    each with a 95% interval over matches (the two seatings of a match averaged first)."""

    matches: int
    fmt: MatchFormat
    win_rate: float
    win_ci: tuple[float, float]
    chips_per_match: float
    chips_ci: tuple[float, float]
    chips_per_hand: float
    hands_per_match: float

    def __str__(self) -> str:
        return (
            f"{self.matches} duplicate matches of {_format_text(self.fmt)}: match win rate {self.win_rate:.1%} "
            f"(95% CI {self.win_ci[0]:.1%} .. {self.win_ci[1]:.1%}), {self.chips_per_match:+.2f} chips/match "
            f"(95% CI {self.chips_ci[0]:+.2f} .. {self.chips_ci[1]:+.2f}), {self.chips_per_hand:+.3f} chips/hand, "
            f"{self.hands_per_match:.2f} hands/match"
        )


def _format_text(fmt: MatchFormat) -> str:
    return f"{fmt.hands} hands" + (f" (bankroll {fmt.bankroll})" if fmt.bankroll is not None else "")


def compare_matches(
    policy_a: Policy,
    policy_b: Policy,
    fmt: MatchFormat,
    matches: int,
    seed: int = 0,
    rules: Rules | None = None,
    batch_size: int = 2048,
    backend: str | None = None,
) -> MatchComparison:
    """Duplicate-match comparison of two policies (2 players): every match is played with A
    as player 0 and again, on the same decks, with A as player 1."""
    rules = rules or Rules()
    if rules.players != 2:
        raise ValueError(f"match comparisons are for 2 players, not {rules.players}")
    wins, chips, hands = np.zeros((matches, 2)), np.zeros((matches, 2)), np.zeros((matches, 2))
    for start in range(0, matches, batch_size):
        count = min(batch_size, matches - start)
        rows = slice(start, start + count)
        for a_seat in (0, 1):
            players = [policy_a, policy_b] if a_seat == 0 else [policy_b, policy_a]
            rng = np.random.default_rng([seed, start, a_seat])
            played = play_matches(rules, fmt, players, seed, count, rng, backend, first=start)
            margin = played.standing[:, a_seat] - played.standing[:, 1 - a_seat]
            wins[rows, a_seat] = (margin > 0) + 0.5 * (margin == 0)
            chips[rows, a_seat] = played.standing[:, a_seat]
            hands[rows, a_seat] = played.played
    win, chip = wins.mean(axis=1), chips.mean(axis=1)
    return MatchComparison(
        matches,
        fmt,
        float(win.mean()),
        _interval(win),
        float(chip.mean()),
        _interval(chip),
        float(chips.sum() / hands.sum()),
        float(hands.mean()),
    )


def _interval(values: np.ndarray) -> tuple[float, float]:
    half = half_width(values)
    return float(values.mean() - half), float(values.mean() + half)
