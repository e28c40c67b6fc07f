"""Bitboards: a set of cards as one ``uint64`` with bit ``card id`` set.

Card ``c`` of month ``m`` (``c // 4 == m`` for the 48 month cards) sits in the month's
4-bit nibble at bits ``4m .. 4m + 3``; the jokers are bits 48 and 49. The helpers work on
arrays of any shape and are shared by the vectorised core, the encodings and the agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import cards as C

Array = npt.NDArray[Any]
"""Any NumPy array (the core's arrays are typed by the fields that hold them)."""

U64 = np.uint64
ONE = U64(1)
ALL = U64(0xFFFFFFFFFFFFFFFF)
NONE = U64(0)
NIBBLE_LOW = U64(0x111111111111)  # bit 0 of each month's nibble
M1, M2 = U64(0x5555555555555555), U64(0x3333333333333333)
MONTH_BITS = np.array([0xF << (4 * m) for m in range(12)], U64)  # [month]: its four cards

BIT_OF = np.array([0] + [1 << c for c in range(C.NUM_CARDS)], U64)
"""Bitboard of each card, indexed by card id + 1 (index 0, card -1: the empty board)."""


def bit(card: Array) -> Array:
    """Bitboards of single cards; card -1 gives 0."""
    return BIT_OF[np.asarray(card, np.int64) + 1]


def flat(array: Array) -> Array:
    """A flat view of a contiguous per-seat array, indexed by :meth:`GameBatch._slot`."""
    return array.reshape(-1)


def lowest_bit(x: Array) -> Array:
    return x & (~x + ONE)


def highest_bit(x: Array) -> Array:
    """The highest set bit of each word (0 for 0); exact, since boards use under 53 bits."""
    exponent = np.frexp(x.astype(np.float64))[1]
    return np.where(x != 0, ONE << np.maximum(exponent - 1, 0).astype(U64), U64(0))


def nibble_counts(board: Array) -> Array:
    """Per-month card counts, one per 4-bit nibble (SWAR popcount)."""
    x = board - ((board >> ONE) & M1)
    return (x & M2) + ((x >> U64(2)) & M2)


def months_of_flags(flags: Array) -> Array:
    """12-bit month masks (bit m) from nibble flags (bit 4m), any shape.

    Three rounds of shift-or-mask pack the flags together: pairs of months into each byte,
    then four months into each 16 bits, eight into each 32, and the last round joins all."""
    x = (flags | (flags >> U64(3))) & U64(0x0303030303030303)
    x = (x | (x >> U64(6))) & U64(0x000F000F000F000F)
    x = (x | (x >> U64(12))) & U64(0x000000FF000000FF)
    return (x | (x >> U64(24))) & U64(0xFFFF)
