"""Determinization: full game states consistent with what one player knows.

:func:`determinize` takes a batch and one viewer seat per game and returns ``samples``
copies of each game in which every card the viewer cannot see (the other hands' unshaken
cards and the stock) is dealt anew, uniformly at random: each other hand keeps its size
and its shaken cards, the stock keeps its size. Only the viewer's information enters the
sampling (which cards are unseen, and the public counts), so a sample never depends on
where the hidden cards really are. Search agents and go/stop analysis build on it.
"""

from __future__ import annotations

import numpy as np

from .core import GameBatch
from .core.bitboard import bit
from .core.cards import NUM_CARDS


def unseen_cards(batch: GameBatch, viewers: np.ndarray) -> np.ndarray:
    """``(B,)`` bitboards of the cards seat ``viewers[i]`` cannot see in game i."""
    rows = np.arange(len(batch))
    shown = batch.revealed & batch.hands
    seen = batch.hands[rows, viewers] | batch.layout | batch.taken
    seen |= np.bitwise_or.reduce(batch.piles | shown, axis=1)
    return np.uint64((1 << batch.rules.deck_size) - 1) & ~seen


def determinize(batch: GameBatch, viewers: np.ndarray | list[int], samples: int, rng: np.random.Generator) -> GameBatch:
    """``len(batch) * samples`` games: game ``i * samples + k`` is game i with the cards
    unseen by ``viewers[i]`` dealt anew (see the module docstring)."""
    viewers = np.asarray(viewers, np.int64).reshape(-1)
    if viewers.shape != (len(batch),):
        raise ValueError(f"need one viewer seat per game ({len(batch)}), got {viewers.shape[0]}")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    source = np.repeat(np.arange(len(batch)), samples)
    out, viewer = batch.select(source), viewers[source]
    unseen = unseen_cards(batch, viewers)[source]
    order = _random_orders(unseen, rng)
    start = np.zeros(len(out), np.int64)
    rows = np.arange(len(out))
    players = batch.rules.players
    hands, stock = out.hands.copy(), out.stock.copy()
    for offset in range(1, players):
        seat = (viewer + offset) % players
        shown = out.revealed[rows, seat] & out.hands[rows, seat]
        hidden = np.bitwise_count(out.hands[rows, seat] & ~shown).astype(np.int64)
        hands[rows, seat] = shown | _bits_of(order, start, hidden)
        start += hidden
    _deal_stock(out, stock, order, start)
    out.replace_hidden(hands, stock)
    return out


def _random_orders(unseen: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the unseen card ids in uniformly random order first, then the others."""
    flags = (unseen[:, None] >> np.arange(NUM_CARDS, dtype=np.uint64)) & np.uint64(1)
    keys = rng.random((len(unseen), NUM_CARDS)) + np.where(flags == 1, 0.0, 2.0)
    return np.argsort(keys, axis=1)


def _bits_of(order: np.ndarray, start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Bitboards of ``order[i, start[i] : start[i] + count[i]]``."""
    width = int(count.max()) if count.size else 0
    if width == 0:
        return np.zeros(len(order), np.uint64)
    columns = start[:, None] + np.arange(width)
    picked = np.take_along_axis(order, np.minimum(columns, NUM_CARDS - 1), axis=1)
    return np.bitwise_or.reduce(np.where(np.arange(width) < count[:, None], bit(picked), np.uint64(0)), axis=1)


def _deal_stock(out: GameBatch, stock: np.ndarray, order: np.ndarray, start: np.ndarray) -> None:
    """Fill each game's ``stock`` (a copy of ``out``'s), from its next card on, with the
    remaining cards of ``order``."""
    left = (out.stock_len - out.stock_pos).astype(np.int64)
    width = int(left.max()) if left.size else 0
    if width == 0:
        return
    j = np.arange(width)
    live = j < left[:, None]
    cards = np.take_along_axis(order, np.minimum(start[:, None] + j, NUM_CARDS - 1), axis=1)
    rows = np.broadcast_to(np.arange(len(out))[:, None], live.shape)
    columns = out.stock_pos[:, None].astype(np.int64) + j
    stock[rows[live], columns[live]] = cards[live]
