"""The batch loops: a step, a deal or the legal words over a range of games, and those
ranges spread over numba's threads. A batch splits its games into consecutive ranges, one
per thread; after each step the bounds move toward the threads' speeds
(:func:`rebalance`). Each game is stepped by one thread, start to end, and touches only its
own rows, so neither the order of games nor the thread that runs one can change a
result.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .. import actions as A
from .arrays import clear_game_events, flat_events
from .deal import deal_range
from .intrinsics import ticks
from .numba_kit import U0, U, jit
from .rules import DONE, is_legal, legal_words, step_game


@jit
def first_illegal(actions: Any, legal: Any, phase: Any, start: int, stop: int) -> int:
    """The first game of [start, stop) whose action is neither ``NO_ACTION`` nor legal (-1:
    none)."""
    for i in range(start, stop):
        a = actions[i]
        if a == A.NO_ACTION:
            continue
        if a < 0 or a >= A.NUM_ACTIONS or phase[i] == DONE or not is_legal(legal, i, a):
            return i
    return -1


@jit
def step_range(s: Any, ev: Any, t: Any, actions: Any, options: Any, legal: Any, start: int, stop: int) -> None:
    """Step games [start, stop): each game's rows of the events ``ev`` (new, unwritten
    arrays) zeroed just before its step, which finds them in cache (zeroing the whole batch
    first was a pass of its own); its legal words go to ``legal[1]``, copied from
    ``legal[0]`` where it takes no action. (The zeroing and the copy are the step's, not
    passes of NumPy over the whole batch before it: spread over the threads with the step.)
    Game indices are unsigned: numba wraps a negative signed index around on every array
    access, and leaving that out made a step a fifth faster."""
    before, after = legal
    for i in range(U(start), U(stop)):
        clear_game_events(ev, i, s.players)
        if actions[i] >= 0:
            step_game(s, ev, t, i, int(actions[i]), options, after)
        else:
            after[i, 0], after[i, 1] = before[i, 0], before[i, 1]


@jit
def legal_range(s: Any, legal: Any, start: int, stop: int) -> None:
    for i in range(U(start), U(stop)):  # unsigned: see step_range
        legal_words(s, i, legal)


@jit
def list_done(phase: Any, done: Any) -> int:
    """The games that are over, in order, into ``done`` (as long as the batch); how many. Without
    a branch a game: each game is written where the next game over goes, and moves that on
    only if it is over (a branch would be mispredicted at each game over: in random play at
    batch 65536, 61 us against 39). The loop stops at the last game over, so it
    writes nothing past the games over."""
    last = phase.size - 1
    while last >= 0 and phase[last] != DONE:
        last -= 1
    entry = U0
    for i in range(U(last + 1)):
        done[entry] = i
        entry += U(phase[i] == DONE)
    return int(entry)


# ---- the batch loops: ranges of games, one per thread ---------------------------------------------
# A batch splits its games into consecutive ranges, range c being games [bounds[c],
# bounds[c + 1]), one range per thread (``CompiledGameBatch._thread_ranges``). The
# step moves the bounds after each call so that the threads finish together (``rebalance``).
# (Each thread's range is a call: numba's parallel loops lose writes made in their own body
# through arrays held in a tuple, but keep those made by a function they call.)
@jit
def chunk(c: int, chunks: int, n: int) -> tuple[int, int]:
    """Games [start, stop) of chunk ``c`` of ``chunks`` even chunks over ``n`` games."""
    return c * n // chunks, (c + 1) * n // chunks


@jit
def share(c: int, bounds: Any, n: int) -> tuple[int, int]:
    """Items [start, stop) of ``n`` that go to range ``c`` of ``bounds``: the range's
    share of the batch (for a list of some of the games, such as those dealt again)."""
    games = bounds[bounds.size - 1]
    if games == 0:
        return chunk(c, bounds.size - 1, n)
    return n * bounds[c] // games, n * bounds[c + 1] // games


def even_bounds(games: int, ranges: int) -> np.ndarray:
    """The bounds of ``ranges`` even ranges of ``games`` games (range c: games [bounds[c],
    bounds[c + 1])), where a batch's threads start."""
    return np.arange(ranges + 1, dtype=np.int64) * games // ranges


MIN_SHARE = 4
"""``rebalance`` leaves each range at least 1 / MIN_SHARE of an even share of the games, so
that a thread held up once still gets games to be timed on."""


@jit
def rebalance(bounds: Any, elapsed: Any) -> None:
    """Move each inner bound halfway toward where the ranges' rates in the call just made
    (games per tick of ``elapsed``) would have had every thread finish at once. One core of
    a shared machine can run slower than the other for seconds at a time, and even ranges
    then wait on the slow one. The bounds stay where a time is missing (no tick counter) or
    a range is empty."""
    chunks, games = bounds.size - 1, bounds[bounds.size - 1]
    least = max(1, games // (MIN_SHARE * chunks))
    if chunks < 2 or games < least * chunks:
        return
    total = 0.0
    for c in range(chunks):
        if elapsed[c] <= 0 or bounds[c + 1] <= bounds[c]:
            return
        total += (bounds[c + 1] - bounds[c]) / elapsed[c]
    old, rate_below = bounds[0], 0.0
    for c in range(chunks - 1):
        rate_below += (bounds[c + 1] - old) / elapsed[c]
        old = bounds[c + 1]
        target = int(games * rate_below / total)
        moved = (old + target) // 2
        bounds[c + 1] = min(max(moved, bounds[c] + least), games - least * (chunks - 1 - c))


def _step_games(
    s: Any, ev: Any, t: Any, actions: Any, options: Any, before: Any, after: Any, found: Any, bounds: Any, elapsed: Any
) -> None:
    """Each range's first game whose action is neither ``NO_ACTION`` nor legal into
    ``found`` (-1: none); then, only if there is none, the step of every game (one call
    where a check and a step would be two, each with its pass over the batch), each
    range's time into ``elapsed`` and the bounds rebalanced."""
    chunks = bounds.size - 1
    for c in numba.prange(chunks):
        found[c] = first_illegal(actions, before, s.phase, bounds[c], bounds[c + 1])
    legal = True
    for c in range(chunks):
        legal &= found[c] < 0
    if legal:
        ev = flat_events(ev)
        for c in numba.prange(chunks):
            began = ticks()
            step_range(s, ev, t, actions, options, (before, after), bounds[c], bounds[c + 1])
            elapsed[c] = ticks() - began
        rebalance(bounds, elapsed)


def _deal_games(s: Any, ev: Any, t: Any, d: Any, options: Any, legal: Any, dealt: Any, bounds: Any) -> None:
    """Deal ``d.decks[k]`` into game ``d.index[k]``, its events through the scratch ``ev``
    (every game's, all zero between deals) into row ``k`` of ``dealt`` (see ``deal_range``);
    each range's share of the dealt games on its thread."""
    ev, dealt = flat_events(ev), flat_events(dealt)
    for c in numba.prange(bounds.size - 1):
        start, stop = share(c, bounds, d.index.size)
        deal_range(s, ev, t, d, options, legal, dealt, start, stop)


def _legal_of_all(s: Any, legal: Any, bounds: Any) -> None:
    for c in numba.prange(bounds.size - 1):
        legal_range(s, legal, bounds[c], bounds[c + 1])


PARALLEL_FROM = 2048
"""The fewest games ``numba-parallel`` spreads over numba's threads; a smaller batch runs on
one thread. On 2 cores the threads ran random play at 0.60x one thread's speed
at batch 1, 0.63x at 64, 0.77x at 256, about 1x at 1024 and 1.4x at 4096 (``python
benchmarks/core_throughput.py --seconds 1 --repeats 2 --batches 1,64,256 --backends
numba,numba-parallel``, and the docs' table)."""
