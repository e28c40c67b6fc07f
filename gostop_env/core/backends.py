"""The backends that can step a batch: which exist, which this installation can run, which
one a program gets by default, and the class that runs each. A backend's module registers
its class here when imported (:func:`register_backend`); the compiled one, which needs
numba, is imported only when first asked for."""

from __future__ import annotations

import functools
import importlib
import os

BACKENDS = ("numpy", "numba", "numba-parallel")
"""The engines that can step a :class:`~gostop_env.core.batch.GameBatch`: the NumPy core, and the compiled backend
(:mod:`~gostop_env.core.compiled`, needs numba) on one thread or on numba's threads."""


BACKEND_VARIABLE = "GOSTOP_BACKEND"
"""Environment variable naming the backend for a whole program (when a constructor gets none)."""


@functools.cache
def _numba_importable() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def available_backends() -> tuple[str, ...]:
    """The backends this installation can run (the compiled ones need ``pip install "gostop[fast]"``)."""
    return BACKENDS if _numba_importable() else BACKENDS[:1]


def default_backend() -> str:
    """``$GOSTOP_BACKEND`` when set, else the fastest backend installed (``"numba"`` when numba
    imports, else ``"numpy"``)."""
    return os.environ.get(BACKEND_VARIABLE) or ("numba" if _numba_importable() else "numpy")


def registered_class(backend: str | None = None) -> type:
    """The class that runs ``backend`` (``None``: :func:`default_backend`), its module imported
    first where it has not been (:func:`gostop_env.core.batch.batch_class` gives it typed).

    ValueError for an unknown name; ImportError, saying what to install, for a compiled
    backend without numba."""
    name = default_backend() if backend is None else backend
    if name not in BACKENDS:
        source = f"${BACKEND_VARIABLE}" if backend is None else "backend"
        raise ValueError(f"{source} must be one of {', '.join(BACKENDS)}; got {name!r}")
    if name not in _REGISTERED:
        if name != "numpy" and not _numba_importable():
            raise ImportError(f'backend {name!r} needs numba: pip install "gostop[fast]" (or use backend="numpy")')
        importlib.import_module(NUMPY_MODULE if name == "numpy" else COMPILED_MODULE)  # registers; numba only now
    return _REGISTERED[name]


COMPILED_MODULE = "gostop_env.core.compiled"
"""The module that defines the compiled backends and registers them when imported."""


_REGISTERED: dict[str, type] = {}
"""Each backend's class, by name: registered by the module that defines it when imported."""
NUMPY_MODULE = "gostop_env.core.batch"
"""The module that defines the NumPy backend's class, :class:`~gostop_env.core.batch.GameBatch`."""


def register_backend(name: str, kind: type) -> None:
    """Make ``kind`` the class of backend ``name`` (called by the module that defines it)."""
    _REGISTERED[name] = kind
