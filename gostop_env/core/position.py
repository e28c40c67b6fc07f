"""Explicit positions: start a hand from any state, not only from a deal.

A :class:`Position` is the start of ``seat``'s turn (or its go/stop decision): where every
card is and the public counters. Both engines load one (``ReferenceGame.from_position``,
``GameBatch.from_positions``); scenario tests, search and go/stop analysis use them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .cards import MONTH, NUM_MONTH_CARDS, card_name
from .rules import Rules, check_carry


@dataclass
class Position:
    """Where every card is, and the counters, at the start of ``seat``'s turn.

    ``turns[p]`` counts the turns ``p`` has begun, the current one included; ``ppuks[p]``
    the ppuks ``p`` has made this hand; ``stacks``
    maps a month index to the (seat, turn number) of the ppuk that made its stack;
    ``revealed`` lists shaken cards still in hand; ``last_go[p]`` orders the gos
    (a larger value is a later go; -1 for none). With ``go_stop`` the seat is at its
    go/stop decision instead of its play.
    """

    hands: list[list[int]]
    layout: list[int]
    stock: list[int]
    piles: list[list[int]] = field(default_factory=list)
    seat: int = 0
    gos: list[int] = field(default_factory=list)
    go_scores: list[int] = field(default_factory=list)
    shakes: list[int] = field(default_factory=list)
    bombs: list[int] = field(default_factory=list)
    pass_tokens: list[int] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    ppuks: list[int] = field(default_factory=list)
    revealed: list[list[int]] = field(default_factory=list)
    stacks: dict[int, tuple[int, int]] = field(default_factory=dict)
    last_go: list[int] = field(default_factory=list)
    carry: int = 0
    go_stop: bool = False

    def filled(self, rules: Rules) -> Position:
        """A copy with every None replaced by its empty default, checked against ``rules``."""
        p = rules.players
        zeros = [0] * p
        turns = [1 if s <= self.seat else 0 for s in range(p)]
        pos = Position(
            hands=[list(h) for h in self.hands],
            layout=list(self.layout),
            stock=list(self.stock),
            piles=[list(x) for x in self.piles] if self.piles else [[] for _ in range(p)],
            seat=self.seat,
            gos=list(self.gos or zeros),
            go_scores=list(self.go_scores or zeros),
            shakes=list(self.shakes or zeros),
            bombs=list(self.bombs or zeros),
            pass_tokens=list(self.pass_tokens or zeros),
            turns=list(self.turns or turns),
            ppuks=list(self.ppuks or zeros),
            revealed=[list(r) for r in self.revealed] if self.revealed else [[] for _ in range(p)],
            stacks=dict(self.stacks),
            last_go=list(self.last_go or [-1] * p),
            carry=self.carry,
            go_stop=self.go_stop,
        )
        pos.check(rules)
        return pos

    def check(self, rules: Rules) -> None:
        """Raise ValueError if the position cannot occur under ``rules``."""
        p = rules.players
        for name in (
            "hands",
            "piles",
            "gos",
            "go_scores",
            "shakes",
            "bombs",
            "pass_tokens",
            "turns",
            "ppuks",
            "revealed",
            "last_go",
        ):
            if len(getattr(self, name)) != p:
                raise ValueError(f"position.{name} must have one entry per seat ({p})")
        check_carry(self.carry, scalar=True)
        if any(not 0 <= made <= turns for made, turns in zip(self.ppuks, self.turns)):
            raise ValueError(f"position.ppuks must be 0 .. the seat's turns (a ppuk a turn at most), got {self.ppuks}")
        if not 0 <= self.seat < p:
            raise ValueError(f"position.seat must be 0..{p - 1}, got {self.seat}")
        everywhere = [c for h in self.hands for c in h] + self.layout + self.stock + [c for x in self.piles for c in x]
        _check_cards(rules, everywhere)
        if any(c >= NUM_MONTH_CARDS for c in self.layout):
            raise ValueError("position.layout holds a joker: jokers never stay on the layout")
        months = Counter(int(MONTH[c]) for c in self.layout)
        if any(n == 4 for n in months.values()):
            raise ValueError("position.layout holds four cards of one month")
        for seat, shown in enumerate(self.revealed):
            if not set(shown) <= set(self.hands[seat]):
                raise ValueError(f"position.revealed[{seat}] lists cards not in that hand")
        if not self.hands[self.seat] and not self.stock and not self.go_stop:
            raise ValueError("the seat to move has no cards and the stock is empty")


def _check_cards(rules: Rules, cards: list[int]) -> None:
    expected = set(range(NUM_MONTH_CARDS + rules.jokers))
    counts = Counter(int(c) for c in cards)
    twice = sorted(c for c, n in counts.items() if n > 1)
    if twice:
        raise ValueError(f"position places card(s) twice: {[card_name(c) for c in twice]}")
    unknown = sorted(set(counts) - expected)
    if unknown:
        raise ValueError(f"position has unknown card id(s) {unknown} for {rules.jokers} joker(s)")
    missing = sorted(expected - set(counts))
    if missing:
        raise ValueError(f"position leaves out card(s) {missing}: every card must be somewhere")
