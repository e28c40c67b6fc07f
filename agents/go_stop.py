"""Go/stop rules, usable with any card-play policy.

A rule looks at the decoded views of the rows that are at a go/stop decision and returns a
boolean array: True to go, False to stop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .view import View


class AlwaysStop:
    """Stop at the first chance."""

    name = "stop"

    def __call__(self, view: View) -> np.ndarray:
        return np.zeros(len(view.scores), bool)


@dataclass(frozen=True)
class Threshold:
    """Go while every given condition holds, else stop.

    Attributes:
        score_below: go only while the own score is below this.
        max_gos: go only while fewer than this many gos have been said.
        min_stock: go only while at least this many cards are left in the stock.
        opponent_margin: never go when an opponent's score is within this many points of
            the target.
    """

    score_below: int | None = None
    max_gos: int | None = None
    min_stock: int | None = None
    opponent_margin: int | None = None
    name = "threshold"

    def __call__(self, view: View) -> np.ndarray:
        go = np.ones(len(view.scores), bool)
        if self.score_below is not None:
            go &= view.scores[:, 0] < self.score_below
        if self.max_gos is not None:
            go &= view.gos[:, 0] < self.max_gos
        if self.min_stock is not None:
            go &= view.stock_size >= self.min_stock
        if self.opponent_margin is not None:
            go &= view.scores[:, 1:].max(axis=1) < view.target - self.opponent_margin
        return go


RULE_PARAMETERS = {"k": "score_below", "gos": "max_gos", "stock": "min_stock", "margin": "opponent_margin"}


def make_go_stop_rule(kind: str, **params: int) -> AlwaysStop | Threshold:
    """A rule by name: ``stop`` (always stop) or ``threshold`` with ``k``, ``gos``, ``stock``,
    ``margin`` (see :class:`Threshold`)."""
    if kind == "stop":
        if params:
            raise ValueError(f"go/stop rule 'stop' takes no parameters, got {sorted(params)}")
        return AlwaysStop()
    if kind == "threshold":
        unknown = sorted(set(params) - set(RULE_PARAMETERS))
        if unknown:
            raise ValueError(f"unknown threshold parameter(s) {unknown}; known: {sorted(RULE_PARAMETERS)}")
        return Threshold(**{RULE_PARAMETERS[k]: int(v) for k, v in params.items()})
    raise ValueError(f"unknown go/stop rule {kind!r}: use 'stop' or 'threshold'")
