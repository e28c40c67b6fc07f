"""§7 scoring of capture piles, for both engines side by side.

The reference engine reads a pile as a set of card ids (:func:`read_pile`); the vectorised
core reads bitboards of any shape at once (:func:`read_piles`, :func:`pile_scores`). Both
use the same tables (:data:`BRIGHT_POINTS`, the sets) and must agree on every pile
(``tests/test_catalogue_and_rules.py``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import cards as C
from .bitboard import ONE, U64, Array
from .cards import GODORI_BIRDS, JUNK_VALUE, KINDS, RAIN_BRIGHT, RIBBON_GROUPS, SEPTEMBER_ANIMAL, Kind
from .rules import Rules

BRIGHT_POINTS = np.array([0, 0, 0, 0, 0, 0, 3, 2, 4, 4, 15, 15], np.int16)
"""Bright points by ``2 * brights + (rain bright held)``: three brights 3 (2 with the rain
bright), four 4, five 15."""
GODORI_POINTS, RIBBON_SET_POINTS = 5, 3
THRESHOLDS = {"animals": 4, "ribbons": 4, "junk": 9}
"""Points start above these counts: each animal or ribbon beyond 4, each junk value beyond 9."""


# ---- the reference engine's reading: one pile as a set of card ids ------------------------------
@dataclass(frozen=True)
class PileReading:
    """A capture pile as §7 scores it (with ``september_dual``, the better reading); the
    points of each kind (sets included) add up to ``score``."""

    score: int
    brights: int
    bright_points: int
    animals: int
    junk_value: int
    september_as_junk: bool
    animal_points: int = 0
    ribbon_points: int = 0
    junk_points: int = 0


def read_pile(pile: set[int] | frozenset[int], rules: Rules) -> PileReading:
    """Score a capture pile (§7); under ``september_dual`` card 32 counts as double junk
    when that gives a strictly higher score (§12)."""
    return _read_frozen(frozenset(pile), rules.september_dual)


@functools.lru_cache(maxsize=65536)
def _read_frozen(pile: frozenset[int], september_dual: bool) -> PileReading:
    """``read_pile`` remembered: a pile is read many times between its changes."""
    as_animal = _read_set(pile, september_as_junk=False)
    if september_dual and SEPTEMBER_ANIMAL in pile:
        as_junk = _read_set(pile, september_as_junk=True)
        if as_junk.score > as_animal.score:
            return as_junk
    return as_animal


def _read_set(pile: frozenset[int], september_as_junk: bool) -> PileReading:
    brights = pile & BRIGHT_CARDS
    animals = pile & ANIMAL_CARDS
    if september_as_junk:
        animals = animals - {SEPTEMBER_ANIMAL}
    ribbons = pile & RIBBON_CARDS
    junk = sum(map(JUNK_VALUES.__getitem__, pile & JUNK_CARDS))
    if september_as_junk and SEPTEMBER_ANIMAL in pile:
        junk += junk_value(SEPTEMBER_ANIMAL, True) - JUNK_VALUES[SEPTEMBER_ANIMAL]
    bright_points = int(BRIGHT_POINTS[2 * len(brights) + (RAIN_BRIGHT in brights)])
    animal_points = max(len(animals) - THRESHOLDS["animals"], 0) + (GODORI_POINTS if pile >= GODORI else 0)
    ribbon_points = max(len(ribbons) - THRESHOLDS["ribbons"], 0) + sum(
        RIBBON_SET_POINTS for group in GROUPS if group <= pile
    )
    junk_points = max(junk - THRESHOLDS["junk"], 0)
    score = bright_points + animal_points + ribbon_points + junk_points
    return PileReading(
        score,
        len(brights),
        bright_points,
        len(animals),
        junk,
        september_as_junk,
        animal_points,
        ribbon_points,
        junk_points,
    )


def _cards_of_kind(kind: Kind) -> frozenset[int]:
    return frozenset(c for c, k in enumerate(KINDS) if k == kind)


BRIGHT_CARDS, ANIMAL_CARDS, RIBBON_CARDS = (_cards_of_kind(k) for k in (Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON))
JUNK_CARDS = frozenset(c for c, v in enumerate(JUNK_VALUE) if v > 0) | {SEPTEMBER_ANIMAL}
"""Cards that can carry junk value (card 32 only under ``september_dual``'s junk reading)."""
GODORI = frozenset(GODORI_BIRDS)
GROUPS = tuple(frozenset(g) for g in RIBBON_GROUPS.values())
JUNK_VALUES = tuple(int(v) for v in JUNK_VALUE)


def junk_value(card: int, september_as_junk: bool) -> int:
    """A card's junk value (card 32: 2 when read as junk)."""
    return 2 if (september_as_junk and card == SEPTEMBER_ANIMAL) else JUNK_VALUES[card]


# ---- the vectorised core's reading: bitboards of any shape ------------------------------------------
_SETS = ((U64(C.bits(C.GODORI_BIRDS)), np.uint8(GODORI_POINTS)),) + tuple(  # (cards, points) of §7's sets
    (U64(C.bits(g)), np.uint8(RIBBON_SET_POINTS)) for g in C.RIBBON_GROUPS.values()
)
BIT32 = U64(1 << C.SEPTEMBER_ANIMAL)
_EXCESS_BASE = sum(THRESHOLDS.values())


def read_piles(piles: Array, rules: Rules) -> dict[str, Array]:
    """§7 score and the parts §9 needs, for bitboard piles of any shape; with
    ``september_dual``, card 32 is read as double junk where that scores strictly higher."""
    base = _read_boards(piles, september_as_junk=False)
    if not rules.september_dual:
        return base
    alt = _read_boards(piles, september_as_junk=True)
    use = ((piles & BIT32) != 0) & (alt["score"] > base["score"])
    return {k: np.where(use, alt[k], base[k]) for k in base}


def pile_scores(piles: Array, rules: Rules) -> Array:
    """The §7 score alone (int16) of bitboard piles of any shape: ``read_piles(...)["score"]``."""
    if rules.september_dual:
        return read_piles(piles, rules)["score"]
    brights, rain, animals, ribbons, junk = _tally(piles, september_as_junk=False)
    return _score(piles, BRIGHT_POINTS[2 * brights + rain], animals, ribbons, junk)


def _tally(piles: Array, september_as_junk: bool) -> tuple[Array, Array, Array, Array, Array]:
    """(brights, rain bright held, animals, ribbons, junk value) of each pile, unsigned."""
    animals_mask = U64(C.ANIMALS & ~(1 << 32)) if september_as_junk else U64(C.ANIMALS)
    value2 = U64(C.VALUE2_JUNK | (1 << 32)) if september_as_junk else U64(C.VALUE2_JUNK)
    count = np.bitwise_count
    junk = count(piles & U64(C.PLAIN_JUNK)) + 2 * count(piles & value2) + 3 * count(piles & U64(C.VALUE3_JUNK))
    return (
        count(piles & U64(C.BRIGHTS)),
        (piles >> U64(C.RAIN_BRIGHT)) & ONE,
        count(piles & animals_mask),
        count(piles & U64(C.RIBBONS)),
        junk,
    )


def _score(piles: Array, bright_points: Array, animals: Array, ribbons: Array, junk: Array) -> Array:
    """§7: bright points, animals, ribbons and junk beyond their thresholds, and the sets."""
    excess = (
        np.maximum(animals, THRESHOLDS["animals"])
        + np.maximum(ribbons, THRESHOLDS["ribbons"])
        + np.maximum(junk, THRESHOLDS["junk"])
        - _EXCESS_BASE
    )
    for cards, points in _SETS:
        excess += points * ((piles & cards) == cards)
    result: Array = bright_points + excess
    return result


def _read_boards(piles: Array, september_as_junk: bool) -> dict[str, Array]:
    brights, rain, animals, ribbons, junk = _tally(piles, september_as_junk)
    bright_points = BRIGHT_POINTS[2 * brights + rain]
    score = _score(piles, bright_points, animals, ribbons, junk)
    september = np.full(piles.shape, september_as_junk)
    return dict(
        score=score,
        brights=brights.astype(np.int16),
        bright_points=bright_points,
        animals=animals.astype(np.int16),
        junk=junk.astype(np.int16),
        september_as_junk=september,
    )
