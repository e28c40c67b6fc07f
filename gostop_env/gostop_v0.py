"""The versioned PettingZoo entry point: ``from gostop_env import gostop_v0; gostop_v0.env()``."""

from .pettingzoo_env import env, raw_env

__all__ = ["env", "raw_env"]
