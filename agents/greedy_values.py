"""The greedy players' values of cards, points, steals and plays, shared by the Python greedy
(:mod:`.greedy`) and its compiled kernels (:mod:`.compiled_greedy`)."""

from __future__ import annotations

import numpy as np

from gostop_env.core import cards as C

U64 = np.uint64


def _card_values() -> np.ndarray:
    """A rough worth of each card to its taker, in junk-card units."""
    values = np.zeros(C.NUM_CARDS)
    grouped = {c for g in C.RIBBON_GROUPS.values() for c in g}
    for card in range(C.NUM_CARDS):
        kind = C.KIND[card]
        if kind == C.Kind.BRIGHT:
            values[card] = 3.0 if card == C.RAIN_BRIGHT else 4.0
        elif kind == C.Kind.ANIMAL:
            values[card] = 3.0 if card in C.GODORI_BIRDS else 2.0
        elif kind == C.Kind.RIBBON:
            values[card] = 2.5 if card in grouped else 1.5
        else:
            values[card] = float(C.JUNK_VALUE[card])
    return values


CARD_VALUE = _card_values()
MONTH_MASKS = np.array(C.MONTH_BITS + (0,), U64)[np.where(C.MONTH >= 0, C.MONTH, 12)]  # per card; jokers: 0
MONTH_CARDS_BY_VALUE = tuple(
    sorted((c for c in range(C.NUM_MONTH_CARDS) if C.MONTH[c] == C.MONTH[card]), key=lambda c: CARD_VALUE[c])
    if card < C.NUM_MONTH_CARDS
    else []
    for card in range(C.NUM_CARDS)
)
"""The cards of each card's month, least valuable first (none for jokers)."""
STEAL_VALUE = 1.5  # one junk card moved from an opponent to us
POINT_VALUE = 10.0  # a point of score, in the units of CARD_VALUE
EXPOSURE = 0.3  # share of a placed card's worth counted as given away (an opponent may take it)
BOMB_BONUS = 5.0  # a bomb's worth beyond what it takes (pass tokens, steals, the shake it may count as)
PASS_VALUE = -0.1  # a pass: slightly worse than any play that takes nothing
