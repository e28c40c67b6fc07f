"""Game indices given to a batch from outside, checked before any engine uses them.

The compiled kernels index their arrays with game numbers and trust them: an index past the
batch would write outside its arrays. Every public method that takes game indices passes
them through :func:`game_indices` or :func:`game_index` first.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def game_indices(index: Any, size: int, unique: bool = False) -> np.ndarray:
    """``index`` as a flat int64 array of games of a batch of ``size``: integers in
    ``0..size-1`` (IndexError otherwise), each at most once where ``unique`` (ValueError).
    Booleans and floats are a TypeError: never read as 0, 1 or rounded."""
    array = np.asarray(index)
    if array.dtype == bool:
        raise TypeError("game indices are integers, not booleans (for a mask of games: np.flatnonzero(mask))")
    if array.size == 0:
        return np.zeros(0, np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"game indices are integers, got {array.dtype}")
    if array.ndim > 1:
        raise ValueError(f"game indices are one list of games, got shape {array.shape}")
    flat = array.reshape(-1)
    bad = (flat < 0) | (flat >= size)
    if bad.any():
        raise IndexError(f"game index {int(flat[bad][0])} is out of range for a batch of {size} games (0..{size - 1})")
    flat = flat.astype(np.int64)
    if unique and not (flat[1:] > flat[:-1]).all() and np.unique(flat).size != flat.size:  # sorted: no sort
        values, counts = np.unique(flat, return_counts=True)
        raise ValueError(f"game index {int(values[counts > 1][0])} appears more than once")
    return flat


def game_index(i: Any, size: int) -> int:
    """One game of a batch of ``size``, checked as :func:`game_indices` checks each."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"a game index is an integer, got {i!r} ({type(i).__name__})")
    if not 0 <= int(i) < size:
        raise IndexError(f"game index {int(i)} is out of range for a batch of {size} games (0..{size - 1})")
    return int(i)
