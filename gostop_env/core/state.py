"""The state of a batch of hands, declared once: each array's dtype, shape after the batch
axis, value before a deal, meaning and the values it may hold (:class:`State`, collected
in :data:`STATE_FIELDS`), and the checks an array set from outside must pass. Every engine
reads and writes these arrays; code that walks all of them (allocation, a deal's reset,
selection, the compiled kernels' arguments) is driven by :data:`STATE_FIELDS`, so that a
new field cannot be missed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, get_type_hints

import numpy as np

from . import cards as C
from .actions import Phase
from .bitboard import U64, Array
from .events import BatchEvents
from .outcomes import Outcome, Result
from .rules import MAX_CARRY, Rules

STAGES = DECIDE, RESOLVE_H, FLIP, END_TURN, NEXT_TURN, STOP = tuple(np.int8(stage) for stage in range(6))
"""The stages of a turn inside a step, in turn order (``_stage``: where a game is), the
same in every engine."""


def fit_array(array: Any, dtype: Any) -> np.ndarray:
    """``array`` (itself where it is one already; else a copy) as an array of ``dtype`` that
    is C-contiguous, writeable and aligned: how every state array is kept (the NumPy core
    writes through flat views, and the compiled kernels are typed by these flags too).
    (The flags are read here first: ``np.require`` alone costs five times as much where the
    array is already fit, as it mostly is.)"""
    if type(array) is np.ndarray and array.dtype == dtype:
        flags = array.flags
        if flags.c_contiguous and flags.writeable and flags.aligned:
            return array
    return np.require(np.asarray(array), dtype, ("C_CONTIGUOUS", "WRITEABLE", "ALIGNED"))


GAME, SEAT, MONTH, STOCK = "game", "seat", "month", "stock"
"""Shapes of state arrays after the batch axis: (), (players,), (12,), (stock width,)."""


BOARD = "board"
"""The values of a bitboard state array: sets of the deck's cards."""


@dataclass(frozen=True)
class State:
    """How one state array of :class:`GameBatch` is declared: its dtype, its shape after the
    batch axis (``GAME``, ``SEAT``, ``MONTH`` or ``STOCK``), its value before a deal, what
    it means, and which values it may hold (``values``, a key of :data:`VALUE_RANGES`, or
    ``BOARD`` for bitboards of the deck's cards). Every field so declared is allocated, reset
    by a deal, selected, concatenated and cloned together (:data:`STATE_FIELDS`), and an array
    set from outside is checked against its declaration first (:meth:`GameBatch.__setattr__`)."""

    dtype: type
    shape: str
    initial: int
    meaning: str
    values: str = "count"


class GameState:
    """The state of B hands: one declaration per array, with its dtype, shape and meaning
    (the base of :class:`~gostop_env.core.batch.GameBatch`, which holds these arrays as public
    attributes with a leading batch axis). Those from ``taken`` on hold a turn in progress
    (a pending choice), and ``_stage`` is scratch within a step.
    """

    # ---- the state: one declaration per array --------------------------------------------
    hands: Annotated[Array, State(U64, SEAT, 0, "each seat's hand (bitboard)", BOARD)]
    piles: Annotated[Array, State(U64, SEAT, 0, "each seat's capture pile (bitboard)", BOARD)]
    revealed: Annotated[
        Array, State(U64, SEAT, 0, "shaken cards shown to all (a subset of a hand at the shake)", BOARD)
    ]
    layout: Annotated[Array, State(U64, GAME, 0, "the layout (bitboard)", BOARD)]
    stock: Annotated[Array, State(np.int8, STOCK, -1, "stock card ids, top first, -1 past the end", "card")]
    stock_pos: Annotated[Array, State(np.int16, GAME, 0, "index in ``stock`` of the next card to flip", "position")]
    stock_len: Annotated[Array, State(np.int16, GAME, 0, "cards the stock was dealt", "position")]
    shakes: Annotated[Array, State(np.int8, SEAT, 0, "shakes said (§9's 2^shakes)")]
    bombs: Annotated[Array, State(np.int8, SEAT, 0, "bombs played")]
    pass_tokens: Annotated[Array, State(np.int8, SEAT, 0, "pass (flip-only) turns left, two per bomb")]
    gos: Annotated[Array, State(np.int8, SEAT, 0, "gos said")]
    go_scores: Annotated[Array, State(np.int16, SEAT, 0, "score when the seat last said go")]
    last_go_clock: Annotated[Array, State(np.int16, SEAT, -1, "``clock`` of the seat's last go (-1: none)", "clock")]
    turns: Annotated[Array, State(np.int16, SEAT, 0, "own turns begun (§14.7)")]
    ppuks: Annotated[Array, State(np.int8, SEAT, 0, "ppuks made this hand (§15's ppuk payments and win)")]
    scores: Annotated[Array, State(np.int16, SEAT, 0, "§7 score of each pile")]
    payments: Annotated[Array, State(np.int64, SEAT, 0, "chips each seat received (+) or paid (-) this hand", "chips")]
    clock: Annotated[Array, State(np.int16, GAME, 0, "turns taken by anyone")]
    seat: Annotated[Array, State(np.int8, GAME, 0, "the seat to move", "seat")]
    phase: Annotated[Array, State(np.int8, GAME, Phase.PLAY, "the decision awaited (:class:`Phase`)", "phase")]
    result: Annotated[Array, State(np.int8, GAME, Result.ONGOING, "how the hand ended (:class:`Result`)", "result")]
    winner: Annotated[Array, State(np.int8, GAME, -1, "the seat that stopped, or -1", "seat_or_none")]
    carry: Annotated[Array, State(np.int16, GAME, 0, "consecutive nagari hands before this one", "carry")]
    stack_owner: Annotated[
        Array, State(np.int8, MONTH, -1, "seat whose ppuk made the month's stack (-1: none)", "seat_or_none")
    ]
    stack_turn: Annotated[Array, State(np.int16, MONTH, 0, "that seat's turn number when it did")]
    candidates: Annotated[Array, State(U64, GAME, 0, "the two layout cards of a pending choice (bitboard)", BOARD)]
    taken: Annotated[Array, State(U64, GAME, 0, "cards taken this turn, to the pile at its end", BOARD)]
    steals: Annotated[Array, State(np.int8, GAME, 0, "junk steals owed at the end of this turn")]
    h: Annotated[Array, State(np.int8, GAME, -1, "the card from hand being resolved (-1: none)", "card")]
    h_did: Annotated[Array, State(np.int8, GAME, Outcome.NONE, "what ``h`` did (:class:`Outcome`)", "outcome")]
    h_partner: Annotated[Array, State(np.int8, GAME, -1, "the layout card ``h`` paired with (-1: none)", "card")]
    f: Annotated[Array, State(np.int8, GAME, -1, "the card flipped this turn (-1: none)", "card")]
    _stage: Annotated[
        Array, State(np.int8, GAME, DECIDE, "scratch: where a game is in its turn during a step", "stage")
    ]

    rules: Rules
    deal_events: BatchEvents  # what the deal did (jokers on the layout, chongtong)
    _events: BatchEvents  # what the current step did
    _tables: dict[str, Array]  # §5's match tables for the rules' choice rule
    _legal: Array | None  # legal-action words, computed when first read after a change

    def __len__(self) -> int:
        return len(self.phase)

    @property
    def done(self) -> np.ndarray:
        return self.phase == int(Phase.DONE)  # a plain int: comparing with an IntEnum is slower


STATE_FIELDS: dict[str, State] = {
    name: hint.__metadata__[0]
    for name, hint in get_type_hints(GameState, include_extras=True).items()
    if isinstance(getattr(hint, "__metadata__", (None,))[0], State)
}
"""Every state array, as declared in :class:`GameState`'s class body."""


DECK_BITS = U64((1 << C.NUM_CARDS) - 1)


VALUE_RANGES: dict[str, Any] = {
    "count": lambda players, width: (0, None),
    "chips": lambda players, width: (None, None),
    "card": lambda players, width: (-1, C.NUM_CARDS - 1),
    "position": lambda players, width: (0, width),
    "clock": lambda players, width: (-1, None),
    "seat": lambda players, width: (0, players - 1),
    "seat_or_none": lambda players, width: (-1, players - 1),
    "phase": lambda players, width: (0, len(Phase) - 1),
    "result": lambda players, width: (0, len(Result) - 1),
    "outcome": lambda players, width: (0, len(Outcome) - 1),
    "stage": lambda players, width: (0, int(STOP)),
    "carry": lambda players, width: (0, MAX_CARRY),
}
"""Lowest and highest value (None: unbounded) a state array of each ``values`` kind may
hold, given the players and the stock's width."""


def check_decks(rules: Rules, decks: Any, games: int) -> np.ndarray:
    """``decks`` as ``(games, deck_size)`` int8 of card ids of the rules' deck (ValueError
    naming the first row with another id; TypeError for non-integers). That each row is an
    order of the deck is not checked here (it costs as much as a deal of the compiled core):
    :func:`~gostop_env.core.deck.validate_deck` checks that."""
    raw = np.asarray(decks)
    expected = (games, rules.deck_size)
    if raw.shape != expected:
        raise ValueError(f"{games} games to reset need decks of shape {expected}, got {raw.shape}")
    if raw.size == 0:
        return raw.astype(np.int8)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"deck card ids are integers, got {raw.dtype}")
    if raw.min() < 0 or raw.max() >= rules.deck_size:
        row = int(np.flatnonzero(((raw < 0) | (raw >= rules.deck_size)).any(axis=1))[0])
        raise ValueError(f"deck {row} holds card ids outside 0..{rules.deck_size - 1}: {raw[row].tolist()}")
    return raw.astype(np.int8, copy=False)


def check_values(name: str, field: State, values: np.ndarray, players: int, width: int) -> None:
    """ValueError naming ``name`` and the first game at fault unless every entry of
    ``values`` is one its declaration allows (bitboards: cards of the deck only)."""
    if values.size == 0:
        return
    if field.values == BOARD:
        bad = (values.astype(U64) & ~DECK_BITS) != 0 if values.dtype.kind == "u" else values < 0
        if bad.any():
            game = int(np.argwhere(bad)[0][0])
            raise ValueError(f"state array {name}: game {game} holds a bit that is no card (0..{C.NUM_CARDS - 1})")
        return
    low, high = VALUE_RANGES[field.values](players, width)
    limits = np.iinfo(field.dtype)  # and never a value its dtype would wrap
    low = limits.min if low is None else max(low, limits.min)
    high = limits.max if high is None else min(high, limits.max)
    bad = (values < low) | (values > high)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        span = f"{low} .. {high}".replace("None", "")
        raise ValueError(f"state array {name}: game {at[0]} holds {int(values[at])}, outside {span}")
