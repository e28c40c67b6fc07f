"""The compiled backend: :class:`~gostop_env.core.batch.GameBatch`'s turn logic as numba
kernels, one game at a time (``backend="numba"``, and ``"numba-parallel"`` on numba's
threads). Importing this package needs numba (``pip install "gostop[fast]"``) and registers
both backends; :func:`gostop_env.core.backends.available_backends` says whether it is there.

The state arrays are those declared in :mod:`gostop_env.core.state`; these modules only
replace how a step walks through them. Where the NumPy engine runs each stage of a turn on
the index array of the games in it, a kernel takes one game at a time through its whole
turn (the same stages, in the same order) as scalar code, and loops over the batch. The
parts, each its own module:

- :mod:`.numba_kit`: numba's settings for the kernels and their ``uint64`` constants;
- :mod:`.intrinsics`: LLVM intrinsics (bit counts, ``pdep``, cycle counter, prefetch);
- :mod:`.arrays`: the kernels' arguments (state, events, deals) and code written from the
  state declaration;
- :mod:`.rules`: the rules as scalar code and the legal-action words;
- :mod:`.deal`: dealing, and the shuffle of fresh decks;
- :mod:`.threads`: the batch loops over ranges of games, and their balance over threads;
- :mod:`.picker` and :mod:`.pcg64`: the random action picker and NumPy's PCG64 in a kernel;
- :mod:`.loops`: the batch loops compiled and called;
- :mod:`.backend`: the backend classes;
- :mod:`.kernels`: the declared API for kernels written outside the core (agents).

Kernels compile on first use and are cached on disk (``cache=True``), so a later program
loads them in well under a second.
"""

from .backend import CompiledGameBatch, ParallelGameBatch

__all__ = ["CompiledGameBatch", "ParallelGameBatch"]
