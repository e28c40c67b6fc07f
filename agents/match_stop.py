"""Match-aware stopping: go or stop by the chance of winning the match, not a hand's chips.

In a match of several hands, what a go is worth depends on where the match stands: trailing
with few hands left, a risky go can be right; leading, a sure stop can be. The expected-value
rule (``stop=ev``) compares the mean chips of going and stopping; ``stop=match`` compares
``W(hands left, lead + 2 × chips)``, the chance of winning the match, averaged over the
same determinized rollouts (2 players: what one is paid the other pays, so a hand moves
the lead by twice its payment). :func:`match_win_chances` reports those chances for the
go/stop values of any decisions.

:class:`MatchWinTable` is ``W``: after ``k`` more hands, the chance that a player ``d``
chips ahead ends ahead (a tie counts half), when each hand's payments are drawn
independently from a sample of hand payments (by default 20,000 hands of the search's
rollout player against itself, both seats: :func:`match_win_table`). It is a model of the
rest of the match, not a measurement of it: the players' real payments depend on who they
are, and a lead moves the next hand's leader.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from gostop_env.core import Rules
from gostop_env.core.deck import shuffled_decks

from .go_stop import Threshold
from .go_stop_value import CHOICES, GoStopValues
from .greedy import Greedy
from .match import play_hands
from .search import DEFAULT_ROLLOUT_RULE

MAX_LEAD = 800
"""Leads (and their moves in one hand) are read in chips from -MAX_LEAD to MAX_LEAD;
further ahead counts as a sure win, further behind as a sure loss."""
LEAD_PER_CHIP = 2
"""How far a hand moves a 2-player lead per chip it pays: the payer loses what the winner gains."""
TABLE_HANDS = 64
"""Hands left beyond this are read as this many (the table's last row)."""
CHIPS_TIE_BREAK = 1e-6
"""The weight of a chip beside the chance of winning (far below any difference in chances a
rollout sample can show): between equal chances, the choice that pays more."""
TIES_GO = -1e-9
"""The go margin of the match rule: where going and stopping are worth exactly the same
(a match no sampled future wins), it goes, the only way left to win."""
PAYMENT_HANDS = 20_000
PAYMENT_SEED = 20_261_206


class MatchWinTable:
    """``W[k, d]``: the chance of winning a 2-player match from lead ``d`` with ``k`` hands
    still to play, each hand paying a player a draw from ``payments``."""

    def __init__(self, payments: np.ndarray, hands: int = TABLE_HANDS):
        payments = np.asarray(payments, np.int64).ravel()
        if not payments.size:
            raise ValueError("a match win table needs a sample of hand payments")
        moves = np.clip(LEAD_PER_CHIP * payments, -MAX_LEAD, MAX_LEAD)
        width = 2 * MAX_LEAD + 1
        pmf = np.bincount(moves + MAX_LEAD, minlength=width) / moves.size
        lead = np.arange(-MAX_LEAD, MAX_LEAD + 1)
        rows = [(lead > 0) + 0.5 * (lead == 0)]
        for _ in range(hands):
            padded = np.concatenate([np.zeros(MAX_LEAD), rows[-1], np.ones(MAX_LEAD)])
            rows.append(np.correlate(padded, pmf, "valid"))
        self.table = np.stack(rows)

    def __call__(self, hands_left: np.ndarray, lead: np.ndarray) -> np.ndarray:
        """The chance of winning from ``lead`` chips ahead with ``hands_left`` hands still
        to play (arrays that broadcast together)."""
        k = np.minimum(np.asarray(hands_left, np.int64), len(self.table) - 1)
        d = np.clip(np.rint(lead).astype(np.int64), -MAX_LEAD, MAX_LEAD) + MAX_LEAD
        return self.table[k, d]

    def after(self, hands_left: np.ndarray, lead: np.ndarray, chips: np.ndarray) -> np.ndarray:
        """The chance of winning after a hand that pays ``chips`` to a player ``lead`` chips
        ahead, with ``hands_left`` hands after it."""
        return self(hands_left, lead + LEAD_PER_CHIP * chips)

    def value(self, hands_left: np.ndarray, lead: np.ndarray, chips: np.ndarray) -> np.ndarray:
        """What a hand that pays ``chips`` is worth to a player ``lead`` chips ahead with
        ``hands_left`` hands after it: the chance ``w`` of winning the match, times ``1 +
        CHIPS_TIE_BREAK × chips``, so that between equal chances of winning the more chips
        count (a sure win stops where going could only pay more on average), while a lost
        cause stays worth 0 whatever it pays (and exact ties go: :data:`TIES_GO`)."""
        return self.after(hands_left, lead, chips) * (1 + CHIPS_TIE_BREAK * chips)


@lru_cache(maxsize=8)
def match_win_table(rules: Rules) -> MatchWinTable:
    """The table for ``rules`` (2 players), from :data:`PAYMENT_HANDS` hands of the search's
    default rollout player against itself (seeded: the same table every time)."""
    if rules.players != 2:
        raise ValueError(f"match-aware stopping is for 2 players, not {rules.players}")
    player = Greedy(go_stop=Threshold(**DEFAULT_ROLLOUT_RULE), rules=rules)
    rng = np.random.default_rng(PAYMENT_SEED)
    batch = play_hands(rules, [player, player], shuffled_decks(rules, rng, PAYMENT_HANDS), rng)
    return MatchWinTable(batch.payments)


def match_win_chances(
    values: GoStopValues, table: MatchWinTable, hands_left: int | np.ndarray, lead: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per decision of ``values`` (2 players), the chance of winning the match by going and
    by stopping, for a player ``lead`` chips ahead with ``hands_left`` hands after this one:
    ``W`` averaged over the same samples as the chips."""
    hands_left, lead = np.asarray(hands_left)[..., None], np.asarray(lead, np.float64)[..., None]
    go, stop = (table.after(hands_left, lead, values.chips(choice)).mean(axis=1) for choice in CHOICES)
    return go, stop
