"""How the kernels see a batch: the state arrays as one argument (:data:`KernelState`, its
fields :data:`KERNEL_FIELDS` taken from :data:`~gostop_env.core.state.STATE_FIELDS`), the
events, a deal's inputs and the match tables as named tuples, the events' flat rows, and
the writing of code that names every state array from their declaration
(:func:`per_field`).

A kernel sees each per-seat array (state and events) flat, as a view: game ``i``'s entry for
seat ``p`` is at ``i * players + p`` (:func:`~gostop_env.core.compiled.rules.at`), one
product shared by every such array, where a two-axis array would be indexed by its own
second axis length (loaded, multiplied and checked for a negative index at each access).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numba
import numpy as np

from ..events import Event
from ..state import SEAT, STATE_FIELDS
from .numba_kit import U2, WITHOUT_RUNTIME, U, inline

NUM_EVENTS = U(len(Event))
"""Events counted per seat: one row of the flat ``counts`` has ``players * NUM_EVENTS``."""
KERNEL_FIELDS: tuple[str, ...] = tuple(name for name in STATE_FIELDS if not name.startswith("_"))

Arrays = namedtuple("Arrays", KERNEL_FIELDS)  # type: ignore[misc]
"""The public state arrays of a batch, by name."""

KernelState = namedtuple("KernelState", (*KERNEL_FIELDS, "players"))  # type: ignore[misc]
"""The state as a kernel takes it, one argument: the state arrays, the per-seat ones flat
(views; game ``i``'s entry for seat ``p`` at ``at(s, i, p)``), and the number of players."""

EventArrays = namedtuple("EventArrays", ["counts", "captured", "stolen", "payments"])

DealArrays = namedtuple("DealArrays", ["index", "decks", "carry", "columns", "starts"])
"""The games a deal deals, ``index``, their ``decks`` and ``carry``; ``columns``, the deck
positions of seat 0's cards, seat 1's, ..., the layout's, each group from ``starts``."""

INITIAL: Any = Arrays(*(int(STATE_FIELDS[name].initial) for name in KERNEL_FIELDS))
"""Each state array's declared initial value (:data:`STATE_FIELDS`), by name: constants in
the kernels."""

MatchTables = namedtuple("MatchTables", ["pick", "place", "keep", "candidates", "choose", "did", "partner", "stack"])


def kernel_view(array: np.ndarray, shape: str) -> np.ndarray:
    """A state array as the kernels index it: a per-seat array flat (a view: the arrays are
    C-contiguous by then), the others as they are."""
    return array.reshape(-1) if shape == SEAT else array


@inline
def flat_events(ev: Any) -> Any:
    """The events ``ev`` (:data:`EventArrays` of a batch's arrays) as the kernels index them:
    each array flat, a view (made in the kernel: four reshapes in Python cost 3 us a step)."""
    return EventArrays(
        ev.counts.reshape(ev.counts.size),
        ev.captured.reshape(ev.captured.size),
        ev.stolen.reshape(ev.stolen.size),
        ev.payments.reshape(ev.payments.size),
    )


@inline
def clear_row(a: Any, i: Any, row: Any) -> None:
    """Row ``i`` of the flat ``a``, rows of ``row`` entries, set to zero."""
    for j in range(row):
        a[i * row + j] = 0


@inline
def event_row_lengths(players: Any) -> tuple[Any, Any, Any, Any]:
    """How many entries one game has in each flat events array (counts, captured, stolen,
    payments), with ``players`` seats."""
    return players * NUM_EVENTS, players, players * players, players


@inline
def clear_event_rows(ev: Any, i: Any, players: Any) -> None:
    """Game ``i``'s rows of the flat events ``ev`` of ``players`` seats set to zero."""
    counts, captured, stolen, payments = event_row_lengths(players)
    clear_row(ev.counts, i, counts)
    clear_row(ev.captured, i, captured)
    clear_row(ev.stolen, i, stolen)
    clear_row(ev.payments, i, payments)


@inline
def clear_game_events(ev: Any, i: Any, players: int) -> None:
    """:func:`clear_event_rows` for 2 and for 3 players apart, so that each row's length is
    a constant when compiled: a few stores (a length read at run time made each row a call
    to ``memset``)."""
    if players == 2:
        clear_event_rows(ev, i, U2)
    else:
        clear_event_rows(ev, i, U(3))


@inline
def move_row(source: Any, i: Any, out: Any, k: Any, row: Any) -> None:
    """Row ``i`` of the flat ``source`` (rows of ``row`` entries) into row ``k`` of the flat
    ``out``, zeroed in ``source`` (unsigned indices, as in ``step_range``)."""
    for j in range(row):
        out[k * row + j] = source[i * row + j]
        source[i * row + j] = 0


@inline
def move_event_row(s: Any, source: Any, i: Any, out: Any, k: Any) -> None:
    """``move_row`` for each of the flat events ``source`` into the same array of ``out``
    (rows of ``s.players`` games' events)."""
    counts, captured, stolen, payments = event_row_lengths(U(s.players))
    move_row(source.counts, i, out.counts, k, counts)
    move_row(source.captured, i, out.captured, k, captured)
    move_row(source.stolen, i, out.stolen, k, stolen)
    move_row(source.payments, i, out.payments, k, payments)


def per_field(statements: dict[str, str], skip: tuple[str, ...] = ()) -> str:
    """Source lines, one per kernel state array (but those in ``skip``) in declaration order:
    the statement for the array's shape, ``{name}`` replaced by its name. Code that must
    name every state array is written from the declaration this way, so a new field
    cannot be left out."""
    return "".join(
        f"    {statements[STATE_FIELDS[name].shape].format(name=name)}\n" for name in KERNEL_FIELDS if name not in skip
    )


def generated_inline(name: str, parameters: str, body: str, uses: dict[str, Any]) -> Any:
    """A helper made from source written here (``def name(parameters):`` then ``body``),
    which sees only the names in ``uses``, compiled as ``inline`` is but without the disk
    cache (it needs a source file): it is inlined into its callers, and cached with them."""
    scope = dict(uses)
    exec(compile(f"def {name}({parameters}):\n{body}", f"<{name}, written from STATE_FIELDS>", "exec"), scope)
    return numba.njit(nogil=True, inline="always", **WITHOUT_RUNTIME)(scope[name])
