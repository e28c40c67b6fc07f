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
from gostop_env.policy import Policy

from .match import play_hands
from .metrics import figures_of
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
