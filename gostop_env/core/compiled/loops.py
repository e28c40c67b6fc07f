"""The batch loops compiled, for one thread (``SERIAL``) and for numba's threads
(``PARALLEL``), and how a backend calls them (:func:`run_kernel`: past numba's dispatcher
once the types are known).
"""

from __future__ import annotations

import types
from typing import Any

import numba

from .numba_kit import WITHOUT_RUNTIME
from .picker import _drawn_actions, _random_actions
from .threads import _deal_games, _legal_of_all, _step_games


def compile_loop(loop: Any, parallel: bool) -> Any:
    """``loop``, a Python function whose ``numba.prange`` runs over ranges of games, compiled
    for one thread (its ranges run in turn) or spread over numba's threads. The parallel
    copy gets a name of its own, so the two never share an entry of numba's disk cache."""
    if parallel:
        loop = types.FunctionType(loop.__code__, loop.__globals__, f"{loop.__name__}_parallel")
        loop.__qualname__ = loop.__name__
    return numba.njit(cache=True, nogil=True, parallel=parallel, **WITHOUT_RUNTIME)(loop)


def _loops(parallel: bool) -> dict[str, Any]:
    """The batch loops, by name, compiled for one thread or for numba's threads."""
    loops = (_step_games, _deal_games, _legal_of_all, _random_actions, _drawn_actions)
    return {loop.__name__: compile_loop(loop, parallel) for loop in loops}


SERIAL, PARALLEL = _loops(parallel=False), _loops(parallel=True)
"""The batch loops, on one thread and on numba's threads (compiled when first called)."""

ENTRY_POINTS: dict[Any, Any] = {}
"""Each batch kernel's compiled entry point, found on its first call (:func:`run_kernel`)."""


def run_kernel(kernel: Any, *args: Any) -> None:
    """Run a batch kernel: on its first call through numba's dispatcher (which compiles or
    loads it for the arguments' types), after that straight through the compiled entry
    point for those types. The dispatcher types every argument on every call, and typing
    some fifty arrays cost ten times the call itself (11 us of a step of one game: as
    much as the rest of the step). Sound because a batch passes the same types on every
    call of a kernel: its state arrays as
    :meth:`~gostop_env.core.compiled.backend.CompiledGameBatch.kernel_state` makes them, and
    arrays it makes itself or passes through :func:`~gostop_env.core.state.fit_array` (``tests/test_backends.py``
    checks the calls of batches made every way, from read-only, strided and other-typed
    inputs too, against the types the entry point was compiled for)."""
    entry = ENTRY_POINTS.get(kernel)
    if entry is not None:
        entry(*args)
        return
    kernel(*args)
    try:
        entry = kernel.overloads[tuple(kernel.typeof_pyval(a) for a in args)].entry_point
    except (AttributeError, KeyError):  # a numba without these: the dispatcher on every call
        entry = kernel
    ENTRY_POINTS[kernel] = entry
