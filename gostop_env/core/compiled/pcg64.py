"""NumPy's PCG64 bit generator in compiled code: the draws of ``Generator.random`` made inside
a kernel, the same numbers in the same order.

:func:`~gostop_env.core.batch.random_legal_actions` draws one uniform number per game. On a
``numpy.random.Generator`` over ``PCG64`` (what ``numpy.random.default_rng`` makes), the
compiled backend on numba's threads (``numba-parallel``, in a batch of
``KERNEL_DRAWS_FROM`` games or more) draws them inside its picking kernel instead of asking
NumPy for an array first: NumPy fills the array on one thread, while here each thread draws
its own range of games, starting from the generator's state jumped ahead to that range
(PCG64 is a 128-bit linear congruential generator, and jumping ``k`` draws ahead costs
``log2 k`` steps). The generator is then left where ``Generator.random`` would have left
it, so a caller's later draws are unchanged too (``tests/test_backends.py`` holds both to
NumPy's own).

The 128-bit numbers are pairs of ``uint64`` (high, low); the high word of a 64-by-64-bit
product is LLVM's 128-bit multiply (one instruction on x86-64).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir as llvm_ir

from .numba_kit import U0, U1, U, intrinsic, jit

MULTIPLIER_HIGH, MULTIPLIER_LOW = U(0x2360ED051FC65DA4), U(0x4385DF649FCCF645)
"""PCG64's multiplier (PCG's default for 128-bit states), high and low words."""
ROTATION_SHIFT, WORD_MASK = U(58), U(63)
MANTISSA_SHIFT, DOUBLE_UNIT = U(11), 1.0 / (1 << 53)
"""A double from a draw as NumPy makes it: the draw's top 53 bits, times 2**-53."""
WORD = (1 << 64) - 1


@intrinsic
def _mul_high(typingctx: Any, a: Any, b: Any) -> Any:
    """The high word of the 128-bit product of two uint64."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        wide = llvm_ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, llvm_ir.Constant(wide, 64)), llvm_ir.IntType(64))

    return numba.types.uint64(numba.types.uint64, numba.types.uint64), codegen


@jit
def multiply(a_high: Any, a_low: Any, b_high: Any, b_low: Any) -> tuple[Any, Any]:
    """``a * b`` modulo 2**128."""
    return _mul_high(a_low, b_low) + a_high * b_low + a_low * b_high, a_low * b_low


@jit
def add(a_high: Any, a_low: Any, b_high: Any, b_low: Any) -> tuple[Any, Any]:
    """``a + b`` modulo 2**128."""
    low = a_low + b_low
    return a_high + b_high + U(low < a_low), low


@jit
def next_double(high: Any, low: Any, increment_high: Any, increment_low: Any) -> tuple[Any, Any, float]:
    """One step of the generator from state (high, low): the new state and the double
    in [0, 1) that ``Generator.random`` makes of its output (XSL-RR of the new state)."""
    high, low = multiply(high, low, MULTIPLIER_HIGH, MULTIPLIER_LOW)
    high, low = add(high, low, increment_high, increment_low)
    mixed, rotation = high ^ low, high >> ROTATION_SHIFT
    output = (mixed >> rotation) | (mixed << ((U(64) - rotation) & WORD_MASK))
    return high, low, float(np.int64(output >> MANTISSA_SHIFT)) * DOUBLE_UNIT  # < 2**53: as int64, one instruction


@jit
def jump(high: Any, low: Any, increment_high: Any, increment_low: Any, draws: int) -> tuple[Any, Any]:
    """The state ``draws`` steps on from (high, low), in ``log2 draws`` squarings (Brown's
    jump-ahead for linear congruential generators)."""
    times_high, times_low, plus_high, plus_low = U0, U1, U0, U0  # the jump so far: x -> times * x + plus
    step_high, step_low = MULTIPLIER_HIGH, MULTIPLIER_LOW  # the step of 2**bit draws: x -> step * x + add
    add_high, add_low = increment_high, increment_low
    while draws > 0:
        if draws & 1:
            times_high, times_low = multiply(times_high, times_low, step_high, step_low)
            plus_high, plus_low = multiply(plus_high, plus_low, step_high, step_low)
            plus_high, plus_low = add(plus_high, plus_low, add_high, add_low)
        once_more_high, once_more_low = add(step_high, step_low, U0, U1)
        add_high, add_low = multiply(once_more_high, once_more_low, add_high, add_low)
        step_high, step_low = multiply(step_high, step_low, step_high, step_low)
        draws >>= 1
    high, low = multiply(times_high, times_low, high, low)
    return add(high, low, plus_high, plus_low)


def state_words(bit_generator: np.random.PCG64) -> tuple[np.ndarray, dict[str, Any]]:
    """A PCG64's state as kernels take it, ``uint64`` [state high, state low, increment high,
    increment low], and its state as NumPy gives it (to set it back with a new state)."""
    state: dict[str, Any] = dict(bit_generator.state)
    value, increment = state["state"]["state"], state["state"]["inc"]
    words = np.array([value >> 64, value & WORD, increment >> 64, increment & WORD], np.uint64)
    return words, state


def set_state(bit_generator: np.random.PCG64, state: dict[str, Any], high: int, low: int) -> None:
    """Give the generator state (high, low), its increment and its buffered 32-bit draw as
    they were: what drawing doubles leaves of it."""
    new_state: Any = {**state, "state": {**state["state"], "state": (int(high) << 64) | int(low)}}
    bit_generator.state = new_state
