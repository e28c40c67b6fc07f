"""gostop: Go-Stop for reinforcement learning.

The rules live in :mod:`gostop_env.core` (a vectorised NumPy core and a reference engine).
``gostop_env.env(**kwargs)`` / ``gostop_env.raw_env`` (also ``gostop_env.gostop_v0``, and
``pettingzoo.make("aec", "gostop_v0")``) is the PettingZoo AEC environment;
``gymnasium.make("GoStop-v0")`` the single-agent view; :mod:`gostop_env.encodings` holds the
observation encodings and :mod:`gostop_env.vec_env` the batched SB3 vector env.
"""
import gymnasium
import pettingzoo

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

gymnasium.register(id="GoStop-v0", entry_point="gostop_env.gym_env:GoStopEnv")
pettingzoo.register("aec", "gostop_v0", entry_point="gostop_env.pettingzoo_env:env")


def __getattr__(name: str):
    """Load the PettingZoo environment (and its dependencies) only when asked for."""
    if name in ("env", "raw_env"):
        from . import pettingzoo_env

        return getattr(pettingzoo_env, name)
    raise AttributeError(f"module 'gostop_env' has no attribute {name!r}")
