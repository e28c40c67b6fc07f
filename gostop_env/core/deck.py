"""Deck orders: the deal slices of docs/rules.md §2, validation, and seeded shuffles.

A deck order is a sequence of the card ids in play, top card first. Seeds only choose
deck orders; given the deck and the actions a hand is fully determined.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .bitboard import NIBBLE_LOW
from .cards import MONTH, NUM_MONTH_CARDS, card_name
from .rules import Rules

#: (seat, start, stop) packets of the deal, in dealing order; seat -1 is the layout.
DEAL_PACKETS = {
    2: ((1, 0, 5), (0, 5, 10), (-1, 10, 14), (1, 14, 19), (0, 19, 24), (-1, 24, 28)),
    3: ((1, 0, 4), (2, 4, 8), (0, 8, 12), (-1, 12, 15), (1, 15, 18), (2, 18, 21), (0, 21, 24), (-1, 24, 27)),
}
DEALT = {2: 28, 3: 27}


def cards_in_play(rules: Rules) -> np.ndarray:
    """The card ids of a deck under ``rules``: 0..47, then 48 and 49 as jokers are added."""
    return np.arange(NUM_MONTH_CARDS + rules.jokers, dtype=np.int8)


def deal_slices(rules: Rules, deck: Sequence[int] | np.ndarray) -> tuple[list[list[int]], list[int], list[int]]:
    """Split a deck order into (hands by seat, layout, stock) exactly as §2 deals it."""
    hands: list[list[int]] = [[] for _ in range(rules.players)]
    layout: list[int] = []
    for seat, start, stop in DEAL_PACKETS[rules.players]:
        (layout if seat < 0 else hands[seat]).extend(int(c) for c in deck[start:stop])
    return hands, layout, [int(c) for c in deck[DEALT[rules.players] :]]


def replace_layout_jokers(layout: list[int], stock: list[int]) -> tuple[list[int], list[int], list[int]]:
    """§3.1: jokers dealt to the layout leave it, each replaced by the top stock card.

    Returns (layout, stock, jokers moved to the dealer's pile).
    """
    layout, stock, jokers = list(layout), list(stock), []
    while any(c >= NUM_MONTH_CARDS for c in layout):
        i = next(i for i, c in enumerate(layout) if c >= NUM_MONTH_CARDS)
        jokers.append(layout[i])
        layout[i] = stock.pop(0)
    return layout, stock, jokers


def four_of_a_month(cards: Iterable[int]) -> int | None:
    """The month index of which ``cards`` (a layout, a hand) hold all four, or None."""
    counts = Counter(int(MONTH[c]) for c in cards if c < NUM_MONTH_CARDS)
    full = [m for m, n in counts.items() if n == 4]
    return full[0] if full else None


def void_month(rules: Rules, deck: Sequence[int]) -> int | None:
    """The month index that makes this deal void (four on the layout after §3.1, where
    ``layout_four`` is ``"redeal"``), or None."""
    if rules.layout_four != "redeal":
        return None
    _, layout, stock = deal_slices(rules, deck)
    layout, _, _ = replace_layout_jokers(layout, stock)
    return four_of_a_month(layout)


def validate_deck(rules: Rules, deck: Sequence[int] | np.ndarray) -> np.ndarray:
    """Check an explicit deck order; return it as an int8 array or raise ValueError saying why
    (card ids must be Python or NumPy integers: 3.0 or "3" is refused, never converted)."""
    expected = cards_in_play(rules)
    if isinstance(deck, (str, bytes)) or not hasattr(deck, "__len__"):
        raise ValueError(f"a deck is a sequence of card ids, got {type(deck).__name__}")
    wrong = [c for c in deck if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer))]
    if wrong:
        raise ValueError(f"deck card ids must be integers, got {wrong[0]!r} ({type(wrong[0]).__name__})")
    values = [int(c) for c in deck]
    if len(values) != len(expected):
        raise ValueError(f"deck has {len(values)} cards; with {rules.jokers} joker(s) it must have {len(expected)}")
    unknown = sorted({c for c in values if not 0 <= c < len(expected)})
    if unknown:
        raise ValueError(
            f"deck has unknown card id(s) {unknown} for {rules.jokers} joker(s): ids are 0..{len(expected) - 1}"
        )
    duplicates = sorted(c for c, n in Counter(values).items() if n > 1)
    if duplicates:
        raise ValueError(f"deck has duplicate card id(s) {duplicates}")
    month = void_month(rules, values)
    if month is not None:
        raise ValueError(
            f"deck deals all four cards of month {month + 1} to the layout "
            f"({', '.join(card_name(4 * month + s) for s in range(4))}): a void deal"
        )
    return np.asarray(values, dtype=np.int8)


def shuffled_decks(rules: Rules, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random deck orders (``(count, deck_size)`` int8), void deals redrawn (§3.2)."""
    decks = rng.permuted(np.tile(cards_in_play(rules), (count, 1)), axis=1)
    for i in _void_rows(rules, decks):
        while void_month(rules, decks[i]) is not None:
            decks[i] = rng.permutation(cards_in_play(rules))
    return decks


def fisher_yates(draws: np.ndarray) -> np.ndarray:
    """Deck orders from uniform ``draws`` in [0, 1), one row per deck: the Fisher-Yates
    shuffle of ``0..d-1`` that swaps position i with ``int(draws[:, i] * (i + 1))`` for i from
    ``d - 1`` down to 1 (the compiled backend's kernel does the same, game by game)."""
    count, size = draws.shape
    decks = np.tile(np.arange(size, dtype=np.int8), (count, 1))
    rows = np.arange(count)
    for i in range(size - 1, 0, -1):
        j = (draws[:, i] * (i + 1)).astype(np.intp)
        decks[rows, i], decks[rows, j] = decks[rows, j], decks[rows, i].copy()
    return decks


def fresh_decks(
    rules: Rules, rng: np.random.Generator, count: int, shuffle: Callable[[np.ndarray], np.ndarray] = fisher_yates
) -> np.ndarray:
    """``count`` random deck orders from ``rng`` (``rng.random((count, deck_size))`` shuffled
    by ``shuffle``), void deals drawn again the same way (§3.2): what ``reset_games`` deals
    when given no decks, the same decks on every backend."""
    decks = shuffle(rng.random((count, rules.deck_size)))
    void = _void_rows(rules, decks)
    while void.size:
        decks[void] = shuffle(rng.random((void.size, rules.deck_size)))
        void = void[_void_rows(rules, decks[void])]
    return decks


def _void_rows(rules: Rules, decks: np.ndarray) -> np.ndarray:
    """The rows of ``decks`` that deal a void layout (none unless ``layout_four`` is ``"redeal"``)."""
    if rules.layout_four != "redeal":
        return np.zeros(0, np.intp)
    rows = [i for i in np.flatnonzero(_maybe_void(rules, decks)) if void_month(rules, decks[i]) is not None]
    return np.array(rows, dtype=np.intp)


def _maybe_void(rules: Rules, decks: np.ndarray) -> np.ndarray:
    """Decks that may deal a void layout: four of a month, or a joker, in the layout slices.

    The layout slices' cards as one bitboard per deck (bit = card id); a month is full when
    its four bits (a nibble) are all set; jokers are bits 48 and up."""
    layout = np.concatenate([decks[:, a:b] for seat, a, b in DEAL_PACKETS[rules.players] if seat < 0], axis=1)
    board = np.bitwise_or.reduce(np.uint64(1) << layout.astype(np.uint64), axis=1)
    full = board & (board >> np.uint64(1)) & (board >> np.uint64(2)) & (board >> np.uint64(3)) & NIBBLE_LOW
    return (full != 0) | ((board >> np.uint64(NUM_MONTH_CARDS)) != 0)


def check_seed(seed: Any) -> int:
    """``seed`` as an int: a Python or NumPy integer >= 0 (what NumPy's generators take);
    TypeError for any other type, ValueError for a negative one."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"a seed must be an integer >= 0, got {seed!r} ({type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"a seed must be an integer >= 0, got {seed}")
    return int(seed)


def decks_from_seeds(rules: Rules, seeds: Sequence[int]) -> np.ndarray:
    """One deck order per seed: game ``i`` is ``shuffled_decks(rules, default_rng(seeds[i]), 1)``."""
    if not len(seeds):
        raise ValueError("no seeds given: a batch needs at least one game")
    return np.stack([shuffled_decks(rules, np.random.default_rng(check_seed(s)), 1)[0] for s in seeds])
