"""What the compiled modules share (:mod:`.compiled` and :mod:`.pcg64`): numba's settings for
their kernels and the unsigned constants they compute with. Loaded with them, only where
numba is installed."""

from __future__ import annotations

from typing import Any

import numba
import numba.extending
import numpy as np

U = np.uint64
"""The kernels' word: uint64 mixed with int64 would become float64, so constants are typed."""
U0, U1, U2, U15, U63 = U(0), U(1), U(2), U(15), U(63)

WITHOUT_RUNTIME: dict[str, Any] = {"_nrt": False}
"""Compile without numba's reference-counting runtime (its ``_nrt`` option): the kernels
allocate nothing, and counting references to every state array at every call cost more
than the rules themselves."""
jit = numba.njit(cache=True, nogil=True, **WITHOUT_RUNTIME)
"""Scalar helpers: compiled once, inlined by LLVM where it pays."""
inline = numba.njit(cache=True, nogil=True, inline="always", **WITHOUT_RUNTIME)
"""Helpers that take the state: inlined into their callers before typing, since a call would
pass every state array by value (a few hundred words) and cost more than the work it does."""
intrinsic: Any = numba.extending.intrinsic
"""numba's decorator for functions written in LLVM IR (untyped here: mypy would read the
typing context argument it passes as one the caller must give)."""
