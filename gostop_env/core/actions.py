"""The 125 action ids of docs/rules.md §11, named once, and the decision phases."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from .cards import NUM_CARDS, NUM_MONTH_CARDS, card_name

NUM_ACTIONS = 125
PLAY = 0  # 0..49: play card id
SHAKE = 50  # 50..61: shake month (id - 50), month index 0..11
BOMB = 62  # 62..73: bomb month (id - 62)
PASS = 74
CHOOSE = 75  # 75..122: choose layout card (id - 75)
GO = 123
STOP = 124
NO_ACTION = -1
"""No action: what a finished game must be given, and what leaves a live game of a batch
waiting, untouched, for a later step (so a batch's games can be moved in any groups)."""


class Phase(IntEnum):
    """Which decision a game is waiting for."""

    PLAY = 0  # play, shake, bomb or pass
    CHOOSE_HAND = 1  # pick which of two layout cards the played card takes
    CHOOSE_FLIP = 2  # pick which of two layout cards the flipped card takes
    GO_STOP = 3
    DONE = 4


def shake_action(month: int) -> int:
    """Action id shaking month index ``month`` (0 = January)."""
    return SHAKE + month


def bomb_action(month: int) -> int:
    """Action id bombing month index ``month`` (0 = January)."""
    return BOMB + month


def choose_action(card: int) -> int:
    """Action id choosing layout card ``card``."""
    return CHOOSE + card


def action_name(action: int) -> str:
    """Readable name of an action id, e.g. ``'play Jan pine crane'`` or ``'go'``."""
    action = int(action)
    if PLAY <= action < PLAY + NUM_CARDS:
        return f"play {card_name(action)}"
    if SHAKE <= action < BOMB:
        return f"shake month {action - SHAKE + 1}"
    if BOMB <= action < PASS:
        return f"bomb month {action - BOMB + 1}"
    if action == PASS:
        return "pass"
    if CHOOSE <= action < CHOOSE + NUM_MONTH_CARDS:
        return f"choose {card_name(action - CHOOSE)}"
    if action == GO:
        return "go"
    if action == STOP:
        return "stop"
    raise ValueError(f"unknown action id {action}: ids are 0..{NUM_ACTIONS - 1}")


def integer_action(action: Any) -> int:
    """``action`` as a Python int: a Python or NumPy integer (or a 0-d integer array).
    Anything else, floats, strings, bools and None included, is a TypeError: an action is
    never rounded or parsed."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(
            f"an action must be an integer id 0..{NUM_ACTIONS - 1} (Python or NumPy integer), "
            f"got {action!r} of type {type(action).__name__}"
        )
    return int(action)


def integer_actions(actions: Any) -> np.ndarray:
    """``actions`` as a flat int64 array; TypeError unless every entry is a Python or NumPy
    integer (see :func:`integer_action`), ValueError for more than one axis (a ``(B, 1)``
    array is not silently flattened)."""
    array = np.asarray(actions) if not isinstance(actions, np.ndarray) else actions
    if array.dtype == np.int64 and array.ndim == 1:  # already what is returned: no checks to make
        return array
    if array.ndim > 1:
        raise ValueError(f"actions are one id per game (one axis), got an array of shape {array.shape}")
    if array.size == 0:
        return np.zeros(0, np.int64)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(
            f"actions must be integer ids (Python or NumPy integers), got an array of {array.dtype} "
            f"(e.g. {np.asarray(array.reshape(-1)[0]).tolist()!r})"
        )
    if array.dtype == np.uint64 and (array > np.iinfo(np.int64).max).any():
        raise ValueError(f"action ids are 0..{NUM_ACTIONS - 1}, got {int(array.max())}")
    return array.astype(np.int64, copy=False).reshape(-1)


class IllegalActionError(ValueError):
    """An action that is not legal in the game's current decision."""

    def __init__(self, action: int, phase: Phase, legal: list[int], game: int | None = None):
        where = "" if game is None else f"game {game}: "
        try:
            name = action_name(action)
        except ValueError:
            name = "no such action"
        legal_names = ", ".join(f"{a} ({action_name(a)})" for a in legal) or "none (game over)"
        super().__init__(
            f"{where}illegal action {action} ({name}) in phase {Phase(phase).name}; legal actions: {legal_names}"
        )
        self.action, self.phase, self.legal, self.game = action, Phase(phase), legal, game
