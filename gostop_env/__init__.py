"""gostop: Go-Stop for reinforcement learning.

The rules live in :mod:`gostop_env.core` (a vectorised NumPy core and a reference engine).
``gostop_env.env(**kwargs)`` / ``gostop_env.raw_env`` (also ``gostop_env.gostop_v0``, and
``pettingzoo.make("aec", "gostop_v0")``) is the PettingZoo AEC environment;
``gymnasium.make("GoStop-v0")`` the single-agent view; :mod:`gostop_env.encodings` holds the
observation encodings and :mod:`gostop_env.vec_env` the batched SB3 vector env.

Importing the package (or :mod:`gostop_env.core`) loads neither Gymnasium nor PettingZoo:
the environments are registered with each when it is imported (:mod:`.registration`).
"""

from importlib import import_module

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
from .registration import register_environments

__all__ = [
    "NUM_ACTIONS",
    "Event",
    "GameBatch",
    "IllegalActionError",
    "Phase",
    "ReferenceGame",
    "Result",
    "Rules",
    "action_name",
    "card_name",
    "random_legal_actions",
]
__version__ = "0.1.0"

register_environments()


def __getattr__(name: str) -> object:
    """Load the PettingZoo environment (and its dependencies) only when asked for."""
    if name in ("env", "raw_env", "gostop_v0"):
        module = import_module("gostop_env.gostop_v0")
        return module if name == "gostop_v0" else getattr(module, name)
    raise AttributeError(f"module 'gostop_env' has no attribute {name!r}")
