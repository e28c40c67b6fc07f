"""Replays: a hand saved as a small JSON file (rules, deck order, actions) and played back.

A hand is fully determined by its rules, deck order, nagari carry and actions (RULES.md
§2), so that is all a replay stores; the payments are kept too, to check the playback.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator

from .core import Event, ReferenceGame, Rules, action_name
from .core.cards import card_name
from .core.events import Events

FORMAT = "gostop-replay/1"


@dataclass
class Replay:
    """One hand: enough to play it again exactly."""

    rules: dict
    deck: list[int]
    actions: list[int]
    carry: int = 0
    payments: list[int] = field(default_factory=list)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"format": FORMAT, **asdict(self)}, indent=1))

    @classmethod
    def load(cls, path: str | Path) -> "Replay":
        data = json.loads(Path(path).read_text())
        if data.pop("format", None) != FORMAT:
            raise ValueError(f"{path} is not a {FORMAT} file")
        return cls(**data)

    def game(self) -> ReferenceGame:
        """A fresh game at the deal of this hand."""
        return ReferenceGame(Rules(**self.rules), self.deck, self.carry)

    def play(self) -> Iterator[tuple[int, int, Events]]:
        """Play the hand back: yields (seat, action, events) per action; checks the payments."""
        game = self.game()
        for action in self.actions:
            seat = game.seat
            yield seat, action, game.step(action)
        if not game.done:
            raise ValueError("the replay's actions stop before the hand ends")
        if self.payments and game.payments != self.payments:
            raise ValueError(f"replay payments {game.payments} differ from the recorded {self.payments}")


def describe(events: Events, players: int) -> list[str]:
    """Readable lines for one step's events (captures, specials, steals, go/stop, payments)."""
    lines = []
    for seat in range(players):
        if events.captured[seat]:
            lines.append(f"seat {seat} takes {_names(events.captured[seat])}")
        for event in Event:
            for _ in range(events.counts[seat][event]):
                lines.append(f"seat {seat}: {EVENT_TEXT[event]}")
        for giver in range(players):
            if events.stolen[seat][giver]:
                lines.append(f"seat {giver} gives seat {seat} {_names(events.stolen[seat][giver])}")
    if any(events.payments):
        lines.append("payments: " + ", ".join(f"seat {s} {p:+d}" for s, p in enumerate(events.payments)))
    return lines


EVENT_TEXT = {
    Event.PPUK: "ppuk! the three cards stay as a stack",
    Event.JA_PPUK: "ja-ppuk: took back its own stack (two junk from each opponent)",
    Event.JJOK: "jjok: the flip took the card just played (one junk from each opponent)",
    Event.TTADAK: "ttadak: all four cards of the month (one junk from each opponent)",
    Event.SWEEP: "sweep: the layout is empty (one junk from each opponent)",
    Event.STACK_CAPTURE: "took a stack of three with the fourth card",
    Event.BOMB: "bomb: three cards from hand take the fourth",
    Event.SHAKE: "shakes: three cards of a month shown, winnings doubled",
    Event.JOKER: "a joker goes to the pile",
    Event.GO: "says GO",
    Event.STOP: "says STOP",
    Event.CHONGTONG: "chongtong: four cards of a month in hand",
    Event.NAGARI: "nagari: the cards ran out with no winner",
}


def _names(cards) -> str:
    return ", ".join(card_name(c) for c in sorted(cards))


def replay_lines(replay: Replay) -> list[str]:
    """The hand turn by turn, as ``gostop replay`` prints it."""
    game = replay.game()
    players = game.rules.players
    lines = [f"rules: {replay.rules}", f"carry: {replay.carry}"]
    lines += [f"seat {s} hand: {_names(h)}" for s, h in enumerate(game.hands)]
    lines.append(f"layout: {_names(game.layout)}")
    lines += ["  " + line for line in describe(game.deal_events, players)]
    for seat, action, events in replay.play():
        lines.append(f"seat {seat}: {action_name(action)}")
        lines += ["  " + line for line in describe(events, players)]
    return lines
