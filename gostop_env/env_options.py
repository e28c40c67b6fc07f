"""Arguments and reset options every environment takes, checked in one place.

The PettingZoo, Gymnasium and vector environments take the same numeric and flag arguments
(``reward_scale``, ``illegal_reward``, ``nagari_carry``) and, at ``reset``, the same
``options``: ``{"deck": [...]}`` (a deck order, top card first, checked by the engine) and
``{"carry": n}`` (the nagari carry); other keys are ignored. A value of the wrong kind (NaN, infinity, a bool for a
number, a string for a flag) is an error naming the argument, raised when the env is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .core.rules import check_carry

RESET_OPTIONS = ("deck", "carry")


def finite_number(name: str, value: Any) -> float:
    """``value`` as a float: an int or float (not a bool), finite; else TypeError or ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool; else TypeError (``"false"`` is not False)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


@dataclass(frozen=True)
class ResetOptions:
    """What ``reset(options=...)`` asks: a deck order to deal (None: shuffle) and a carry
    to set (None: keep the env's own)."""

    deck: Any = None
    carry: int | None = None


def reset_options(options: Any) -> ResetOptions:
    """``options`` of a reset: a dict (TypeError otherwise) whose keys of :data:`RESET_OPTIONS`
    are checked; other keys are ignored, as PettingZoo's API test expects of an env."""
    if options is None:
        return ResetOptions()
    if not isinstance(options, dict):
        raise TypeError(f"reset options are a dict, got {type(options).__name__}")
    carry = int(check_carry(options["carry"], scalar=True)) if "carry" in options else None
    return ResetOptions(options.get("deck"), carry)
