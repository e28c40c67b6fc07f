"""Registering the environments with Gymnasium and PettingZoo without importing either.

``import gostop_env`` must not load Gymnasium or PettingZoo (the rules core runs without
them), yet ``gymnasium.make("GoStop-v0")`` and ``pettingzoo.make("aec", "gostop_v0")``
must work after it. So each registration runs when its library is imported: at once if it
already is, otherwise right after its first import, through a finder on ``sys.meta_path``
that wraps that one module's loader (it changes nothing else about the import).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType


def _register_gymnasium(gymnasium: ModuleType) -> None:
    if "GoStop-v0" not in gymnasium.registry:
        gymnasium.register(
            id="GoStop-v0",
            entry_point="gostop_env.gym_env:GoStopEnv",
            vector_entry_point="gostop_env.gym_vector:GoStopVectorEnv",
        )


def _register_pettingzoo(pettingzoo: ModuleType) -> None:
    register = getattr(pettingzoo, "register", None)  # PettingZoo's registry is recent (1.26+)
    if register is not None:
        register("aec", "gostop_v0", entry_point="gostop_env.pettingzoo_env:env")


REGISTRATIONS: dict[str, Callable[[ModuleType], None]] = {
    "gymnasium": _register_gymnasium,
    "pettingzoo": _register_pettingzoo,
}


class _LoaderThenRegister(importlib.abc.Loader):
    """A module's own loader, then its registration once the module has run."""

    def __init__(self, loader: importlib.abc.Loader, register: Callable[[ModuleType], None]):
        self.loader, self.register = loader, register

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.register(module)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of a library awaiting registration."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name not in REGISTRATIONS or name in _pending:
            return None
        _pending.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            _pending.discard(name)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _LoaderThenRegister(spec.loader, REGISTRATIONS[name])
        return spec


_pending: set[str] = set()


def register_environments() -> None:
    """Register now with the libraries already imported; the others when they are."""
    waiting = False
    for name, register in REGISTRATIONS.items():
        if name in sys.modules:
            register(sys.modules[name])
        else:
            waiting = True
    if waiting and not any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
