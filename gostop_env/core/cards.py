"""The card catalogue of docs/rules.md §1 as data: ids, months, kinds, junk values, groups.

Card id = ``4 * (month - 1) + slot`` for the 48 month cards; 48 and 49 are the jokers.
Sets of cards are also given as 64-bit bitboards (bit ``id`` set), which is how the
vectorised core stores every pile.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

import numpy as np

NUM_CARDS = 50
NUM_MONTH_CARDS = 48
NUM_MONTHS = 12
JOKERS = (48, 49)


class Kind(IntEnum):
    """Card kinds; the order is the one used by the choice rule of §5 and §14.13."""

    BRIGHT = 0
    ANIMAL = 1
    RIBBON = 2
    JUNK = 3
    JOKER = 4


_B, _A, _R, _J = Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON, Kind.JUNK
#: (flower, kinds of slots 0..3, names of slots 0..3) for months 1..12.
_MONTHS = (
    ("pine", (_B, _R, _J, _J), ("crane", "red poem ribbon", "junk", "junk")),
    ("plum", (_A, _R, _J, _J), ("warbler", "red poem ribbon", "junk", "junk")),
    ("cherry", (_B, _R, _J, _J), ("curtain", "red poem ribbon", "junk", "junk")),
    ("black bush clover", (_A, _R, _J, _J), ("cuckoo", "plain red ribbon", "junk", "junk")),
    ("iris", (_A, _R, _J, _J), ("bridge", "plain red ribbon", "junk", "junk")),
    ("peony", (_A, _R, _J, _J), ("butterflies", "blue ribbon", "junk", "junk")),
    ("red bush clover", (_A, _R, _J, _J), ("boar", "plain red ribbon", "junk", "junk")),
    ("pampas", (_B, _A, _J, _J), ("moon", "geese", "junk", "junk")),
    ("chrysanthemum", (_A, _R, _J, _J), ("sake cup", "blue ribbon", "junk", "junk")),
    ("maple", (_A, _R, _J, _J), ("deer", "blue ribbon", "junk", "junk")),
    ("paulownia", (_B, _J, _J, _J), ("phoenix", "double junk", "junk", "junk")),
    ("rain", (_B, _A, _R, _J), ("rain man", "swallow", "rain ribbon", "double junk")),
)

KIND = np.array([k for _, kinds, _ in _MONTHS for k in kinds] + [Kind.JOKER] * 2, np.int8)
KINDS = tuple(Kind(int(k)) for k in KIND)
"""KIND as a tuple of :class:`Kind` (for plain-Python code)."""
MONTH = np.array([m for m in range(NUM_MONTHS) for _ in range(4)] + [-1, -1], np.int8)
"""Month index 0..11 of each card (January = 0); -1 for the jokers, which match nothing."""

DOUBLE_JUNK = (41, 47)
JUNK_VALUE = np.array(
    [(2 if c in DOUBLE_JUNK else 1) if KIND[c] == Kind.JUNK else 0 for c in range(48)] + [2, 3],
    np.int8,
)
"""Junk value of each card: plain junk 1, double junk 2, jokers 2 and 3, others 0."""

RAIN_BRIGHT = 44
SEPTEMBER_ANIMAL = 32
GODORI_BIRDS = (4, 12, 29)
RIBBON_GROUPS = {"red poem": (1, 5, 9), "blue": (21, 33, 37), "plain red": (13, 17, 25)}

CARD_NAMES = tuple(f"{flower} {names[slot]}" for flower, _, names in _MONTHS for slot in range(4)) + (
    "joker (2 junk)",
    "joker (3 junk)",
)


def card_name(card: int) -> str:
    """Human-readable name of a card id, e.g. ``card_name(0) == 'Jan pine crane'``."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"unknown card id {card}: ids are 0..{NUM_CARDS - 1}")
    if card >= NUM_MONTH_CARDS:
        return CARD_NAMES[card]
    return f"{MONTH_ABBR[MONTH[card]]} {CARD_NAMES[card]}"


MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def bits(cards: Iterable[int]) -> int:
    """Bitboard (Python int) of an iterable of card ids."""
    board = 0
    for card in cards:
        board |= 1 << int(card)
    return board


def cards_of(board: int) -> list[int]:
    """Card ids of a bitboard, ascending."""
    board = int(board)
    return [c for c in range(NUM_CARDS) if board >> c & 1]


def _board_of_kind(kind: Kind) -> int:
    return bits(c for c in range(NUM_CARDS) if KIND[c] == kind)


BRIGHTS = _board_of_kind(Kind.BRIGHT)
ANIMALS = _board_of_kind(Kind.ANIMAL)
RIBBONS = _board_of_kind(Kind.RIBBON)
PLAIN_JUNK = bits(c for c in range(NUM_CARDS) if JUNK_VALUE[c] == 1)
VALUE2_JUNK = bits(c for c in range(NUM_CARDS) if JUNK_VALUE[c] == 2)
VALUE3_JUNK = bits(c for c in range(NUM_CARDS) if JUNK_VALUE[c] == 3)
JOKER_BITS = bits(JOKERS)
ALL_MONTH_CARDS = (1 << NUM_MONTH_CARDS) - 1
MONTH_BITS = tuple(0xF << (4 * m) for m in range(NUM_MONTHS))
