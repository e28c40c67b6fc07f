"""The random action picker compiled: one uniformly random legal action per game from the
legal words, from NumPy's draws or from draws made in the kernel by NumPy's own PCG64
(:mod:`.pcg64`), the same actions either way.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .. import actions as A
from . import pcg64
from .intrinsics import popcount, select_bit
from .numba_kit import jit
from .threads import chunk


@jit
def pick(low: Any, high: Any, draw: float) -> int:
    """The legal action of rank ``int(draw * count)`` among those of the legal words (low,
    high): ``random_legal_actions``' pick (``NO_ACTION`` where none is legal)."""
    in_low = popcount(low)
    total = in_low + popcount(high)
    if total == 0:
        return A.NO_ACTION
    rank = int(draw * total)
    in_high = rank >= in_low
    return 64 * in_high + select_bit(high if in_high else low, rank - in_low * in_high)


@jit
def pick_range(legal: Any, generator: Any, actions: Any, start: int, stop: int) -> None:
    """Games [start, stop) of ``_drawn_actions``, game ``i`` by the generator's ``i``-th
    draw: from its state jumped ahead to draw ``start``."""
    increment_high, increment_low = generator[2], generator[3]  # read once: stores to actions could alias them
    high, low = pcg64.jump(generator[0], generator[1], increment_high, increment_low, start)
    for i in range(start, stop):
        high, low, draw = pcg64.next_double(high, low, increment_high, increment_low)
        actions[i] = pick(legal[i, 0], legal[i, 1], draw)


def _random_actions(legal: Any, draws: Any, actions: Any) -> None:
    """``random_legal_actions`` compiled, from NumPy's ``draws``."""
    for i in numba.prange(actions.size):
        actions[i] = pick(legal[i, 0], legal[i, 1], draws[i])


def _drawn_actions(legal: Any, generator: Any, actions: Any, chunks: int) -> None:
    """``random_legal_actions`` compiled, drawing its own numbers from a PCG64's state
    (``generator``: see :func:`~gostop_env.core.pcg64.state_words`), game ``i`` the ``i``-th
    draw, as ``Generator.random`` would make them; each of ``chunks`` even ranges of games
    on its thread. The state after every game's draw is written back into ``generator``."""
    for c in numba.prange(chunks):
        start, stop = chunk(c, chunks, actions.size)
        pick_range(legal, generator, actions, start, stop)
    generator[0], generator[1] = pcg64.jump(generator[0], generator[1], generator[2], generator[3], actions.size)


KERNEL_DRAWS_FROM = 16384
"""The fewest games for which ``numba-parallel``'s picker draws its numbers on the threads
(:func:`drawn_actions`); below, it takes NumPy's draws, since reading and setting the
generator's state costs a few microseconds (``python benchmarks/loop_parts.py --batches
2048,4096,8192,65536`` times both: the kernel's draws win clearly only at 65536)."""


def random_actions(legal_bits: np.ndarray, draws: np.ndarray, loops: dict[str, Any]) -> np.ndarray:
    """One legal action per game picked by ``draws`` (uniform in [0, 1)), as
    :func:`~gostop_env.core.batch.random_legal_actions` picks them (with ``loops``: ``SERIAL``
    or ``PARALLEL``)."""
    actions = np.empty(len(legal_bits), np.int64)
    loops["_random_actions"](np.ascontiguousarray(legal_bits), draws, actions)
    return actions


def drawn_actions(legal_bits: np.ndarray, rng: np.random.Generator, loops: dict[str, Any], chunks: int) -> np.ndarray:
    """:func:`random_actions` with ``rng.random(len(legal_bits))``'s draws, made inside the
    kernel where ``rng`` runs on NumPy's PCG64 (``numpy.random.default_rng``; other bit
    generators draw through NumPy): each of ``chunks`` even ranges of games draws its own,
    on its thread where ``loops`` is ``PARALLEL``. The same actions either way, and ``rng``
    is left as ``rng.random`` leaves it. (NumPy fills the draws on one thread while the other
    waits: see :data:`KERNEL_DRAWS_FROM`.)"""
    bit_generator = rng.bit_generator
    if type(bit_generator) is not np.random.PCG64:
        return random_actions(legal_bits, rng.random(len(legal_bits)), loops)
    actions = np.empty(len(legal_bits), np.int64)
    with bit_generator.lock:
        words, state = pcg64.state_words(bit_generator)
        loops["_drawn_actions"](np.ascontiguousarray(legal_bits), words, actions, chunks)
        pcg64.set_state(bit_generator, state, words[0], words[1])
    return actions
