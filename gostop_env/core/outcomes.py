"""Codes both engines share: how a hand ended, and what the card from hand did.

Kept apart from either engine so that the vectorised core never imports the reference
engine (and the reverse): both import these.
"""

from __future__ import annotations

from enum import IntEnum


class Result(IntEnum):
    """How a hand ended (``ReferenceGame.result``, ``GameBatch.result``)."""

    ONGOING = 0
    STOP = 1
    NAGARI = 2
    CHONGTONG = 3
    THREE_PPUKS = 4  # a player's third ppuk of the hand won it at once (option three_ppuk_chips)


class Outcome(IntEnum):
    """What the card from hand did (§5), remembered until the flip decides jjok, ppuk or
    ttadak (``h_did`` in both engines)."""

    NONE = 0  # no card from hand this turn (a pass), or not yet resolved
    PLACED = 1  # placed on the layout: a flip onto it is a jjok
    PAIRED = 2  # took one card: a flip of the month makes a ppuk
    CHOSE = 3  # took one of two: a flip of the month is a ttadak
    STACKED = 4  # took a stack of three (or more)
    BOMBED = 5  # a bomb took the month's fourth card
