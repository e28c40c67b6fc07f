"""gostop: Go-Stop for reinforcement learning.

The rules live in :mod:`gostop_env.core` (a vectorised NumPy core and a reference engine);
the environments built on it come in later releases.
"""
from .core import (
    NUM_ACTIONS,
    Event,
    GameBatch,
    IllegalActionError,
    Phase,
    ReferenceGame,
    Result,
    Rules,
    action_name,
    card_name,
    random_legal_actions,
)

__all__ = [
    "NUM_ACTIONS", "Event", "GameBatch", "IllegalActionError", "Phase", "ReferenceGame", "Result",
    "Rules", "action_name", "card_name", "random_legal_actions",
]
__version__ = "0.1.0"
