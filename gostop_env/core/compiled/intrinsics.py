"""LLVM intrinsics for the kernels, and the bit helpers built on them: population count,
trailing and leading zeros and ``pdep`` (one instruction each where the CPU has them), the
CPU's cycle counter (to time the threads' ranges) and cache prefetch (for large deals).
"""

from __future__ import annotations

import platform
from typing import Any

import numba
import numba.core.cgutils
from llvmlite import binding as llvm_binding
from llvmlite import ir as llvm_ir

from .. import bitboard
from .numba_kit import U0, U1, U63, U, intrinsic, jit

# ---- bit helpers: LLVM's bit-counting intrinsics (one instruction where the CPU has it) ---------
UINT64_OF_UINT64 = numba.types.uint64(numba.types.uint64)


def _bit_count(name: str) -> Any:
    """Code for ``llvm.<name>.i64`` (``cttz`` and ``ctlz`` with is-zero-poison False: 0 gives 64)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64, i1 = llvm_ir.IntType(64), llvm_ir.IntType(1)
        if name == "ctpop":
            return builder.call(builder.module.declare_intrinsic("llvm.ctpop", [i64]), [args[0]])
        function = builder.module.declare_intrinsic(f"llvm.{name}", [i64, i1])
        return builder.call(function, [args[0], llvm_ir.Constant(i1, 0)])

    return codegen


@intrinsic
def _ctpop(typingctx: Any, x: Any) -> Any:
    """Set bits of a uint64."""
    return UINT64_OF_UINT64, _bit_count("ctpop")


@intrinsic
def _cttz(typingctx: Any, x: Any) -> Any:
    """Trailing zeros of a uint64 (64 for 0)."""
    return UINT64_OF_UINT64, _bit_count("cttz")


@intrinsic
def _ctlz(typingctx: Any, x: Any) -> Any:
    """Leading zeros of a uint64 (64 for 0)."""
    return UINT64_OF_UINT64, _bit_count("ctlz")


def _host_has_pdep() -> bool:
    try:
        return "+bmi2" in llvm_binding.get_host_cpu_features().flatten().split(",")
    except RuntimeError:  # llvmlite cannot read this host's features: take the portable loop
        return False


HAS_PDEP = _host_has_pdep()
"""Whether this CPU has BMI2's ``pdep`` (x86-64 since Haswell / Zen): the rank-select of
``random_actions`` uses it where present, and a loop over set bits elsewhere."""


@intrinsic
def _pdep(typingctx: Any, x: Any, mask: Any) -> Any:
    """x86 BMI2 ``pdep``: the low bits of ``x`` deposited at the set bits of ``mask``."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        word = llvm_ir.IntType(64)
        cgutils: Any = numba.core.cgutils
        function = cgutils.get_or_insert_function(
            builder.module, llvm_ir.FunctionType(word, [word, word]), "llvm.x86.bmi.pdep.64"
        )
        return builder.call(function, args)

    return numba.types.uint64(numba.types.uint64, numba.types.uint64), codegen


HAS_TICKS = platform.machine().lower() in ("x86_64", "amd64")
"""Whether the kernels can read a tick counter (x86-64's ``rdtsc``, through LLVM's
``readcyclecounter``): elsewhere that counter may be closed to programs, and
:func:`ticks` gives 0, which leaves the threads' ranges of games even."""


@intrinsic
def _cycle_counter(typingctx: Any) -> Any:
    """LLVM's ``readcyclecounter``: a tick count that runs at a fixed rate, wall time."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        word = llvm_ir.IntType(64)
        function = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=llvm_ir.FunctionType(word, []))
        return builder.call(function, [])

    return numba.types.int64(), codegen


@intrinsic
def _prefetch(typingctx: Any, array: Any, index: Any) -> Any:
    """LLVM's ``prefetch`` for writing, of the cache line of ``array``'s row ``index`` (its
    first entry): the line is on its way while the code before its first use runs."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        cgutils: Any = numba.core.cgutils
        array_struct = context.make_array(array_type)(context, builder, args[0])
        zero = llvm_ir.Constant(args[1].type, 0)
        row = [args[1]] + [zero] * (array_type.ndim - 1)
        pointer = cgutils.get_item_pointer(context, builder, array_type, array_struct, row, wraparound=False)
        byte_pointer, i32 = llvm_ir.IntType(8).as_pointer(), llvm_ir.IntType(32)
        signature_ir = llvm_ir.FunctionType(llvm_ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, signature_ir, "llvm.prefetch.p0i8")
        # for writing (1), kept in every cache level (3), data (1)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return numba.types.none(array, index), codegen


@jit
def ticks() -> int:
    """Ticks of the CPU's time-stamp counter (0 where :data:`HAS_TICKS` is False)."""
    return _cycle_counter() if HAS_TICKS else 0


@jit
def bit(card: int) -> Any:
    """The bitboard of one card; card -1 gives 0."""
    return U1 << U(card) if card >= 0 else U0


@jit
def popcount(x: Any) -> int:
    return int(_ctpop(U(x)))


@jit
def bit_index(x: Any) -> int:
    """The index of the lowest set bit of ``x`` (64 for 0)."""
    return int(_cttz(U(x)))


@jit
def highest_bit(x: Any) -> Any:
    """The highest set bit of ``x`` as a board (0 for 0)."""
    return U1 << (U63 - _ctlz(U(x))) if x else U0


@jit
def select_bit_by_pdep(word: Any, rank: int) -> int:
    """The index of the ``rank``-th (from 0) set bit of ``word`` (fewer set bits: 64), by
    BMI2's ``pdep``: one instruction, no branch (needs ``HAS_PDEP``)."""
    return bit_index(_pdep(U1 << U(rank), U(word)))


@jit
def select_bit_by_loop(word: Any, rank: int) -> int:
    """:func:`select_bit_by_pdep` on any CPU: drop the lowest set bit ``rank`` times."""
    for _ in range(rank):
        word &= word - U1
    return bit_index(word)


select_bit = select_bit_by_pdep if HAS_PDEP else select_bit_by_loop
"""The rank-select of ``random_actions``: ``pdep`` where the CPU has it (random play's
varying loop counts cost more in mispredicted branches than the rest of the pick)."""

# bitboard's own helpers, compiled: their uint64 expressions work on scalars as on arrays
lowest_bit, nibble_counts, months_of_flags = (
    jit(f) for f in (bitboard.lowest_bit, bitboard.nibble_counts, bitboard.months_of_flags)
)
