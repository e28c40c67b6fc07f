"""Replays: a hand saved as a small JSON file (rules, deck order, actions) and played back.

A hand is fully determined by its rules, deck order, nagari carry and actions (docs/rules.md
§2), so that is all a replay stores; the payments are kept too, to check the playback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from .core import Event, ReferenceGame, Result, Rules, action_name
from .core.actions import GO as GO_ACTION
from .core.actions import STOP as STOP_ACTION
from .core.cards import card_name
from .core.deck import validate_deck
from .core.events import Events
from .core.rules import check_carry
from .files import read_json_object

FORMAT = "gostop-replay/1"
MAX_REPLAY_BYTES = 1 << 20  # a hand is a few kilobytes


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
    def load(cls, path: str | Path) -> Replay:
        """Read and check a replay file (ValueError saying what is wrong). The file is data:
        nothing in it is executed, and it must replay under the engine to be used."""
        data = read_json_object(path, MAX_REPLAY_BYTES, "a replay")
        if data.pop("format", None) != FORMAT:
            raise ValueError(f"{path} is not a {FORMAT} file")
        return cls.from_dict(data, str(path))

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "replay") -> Replay:
        """A replay from its fields, each checked: rules a valid rule set, deck a valid deck
        order of integers, actions integers, carry 0..MAX_CARRY, payments one integer per seat."""
        known = {f.name for f in fields(cls)}
        if set(data) - known or not {"rules", "deck", "actions"} <= set(data):
            raise ValueError(
                f"{where}: a replay has the keys {sorted(known)} (rules, deck and actions required), got {sorted(data)}"
            )
        rules = data["rules"]
        if not isinstance(rules, dict) or set(rules) - {f.name for f in fields(Rules)}:
            raise ValueError(f"{where}: 'rules' must be a table of rule options, got {rules!r:.200}")
        try:
            checked = Rules(**rules)
            validate_deck(checked, data["deck"])
            check_carry(data.get("carry", 0), scalar=True)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: {error}") from None
        for name in ("actions", "payments"):
            if not isinstance(data.get(name, []), list) or not all(type(a) is int for a in data.get(name, [])):
                raise ValueError(f"{where}: {name!r} must be a list of integers")
        if len(data.get("payments", [])) not in (0, checked.players):
            raise ValueError(f"{where}: 'payments' must have one entry per seat ({checked.players})")
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


def describe(events: Events, players: int, who: Callable[[int], str] | None = None) -> list[str]:
    """Readable lines for one step's events (captures, specials, steals, go/stop, payments);
    ``who(seat)`` names a seat (default ``"seat k"``)."""
    name = who or (lambda seat: f"seat {seat}")
    lines = []
    for seat in range(players):
        if events.captured[seat]:
            lines.append(f"{name(seat)} takes {_names(events.captured[seat])}")
        for event in Event:
            for _ in range(events.counts[seat][event]):
                lines.append(f"{name(seat)}: {EVENT_TEXT[event]}")
        for giver in range(players):
            if events.stolen[seat][giver]:
                lines.append(f"{name(giver)} gives {name(seat)} {_names(events.stolen[seat][giver])}")
    if any(events.payments):
        lines.append("payments: " + ", ".join(f"{name(s)} {p:+d}" for s, p in enumerate(events.payments)))
    return lines


def move_lines(who: str | None, action: int, events: Events, players: int) -> list[str]:
    """A move and what it did, as the terminal and the web table log it: ``who: move`` (not
    where ``who`` is None: the caller told the move), then the step's events indented; a go
    or a stop is told once, by its event."""
    said = who is None or action in (GO_ACTION, STOP_ACTION)
    return ([] if said else [f"{who}: {action_name(action)}"]) + ["  " + line for line in describe(events, players)]


def paid_at_once(before: list[int], after: list[int], ended: bool) -> list[str]:
    """The log line, indented as ``move_lines`` indents events, that tells a payment made
    during a hand (docs/rules.md §15: a first-turn or consecutive ppuk, a first-turn ttadak),
    from each seat's payments before and after a step; none where nothing changed hands, or
    where the step ``ended`` the hand (the hand's end tells its payments)."""
    if ended or before == after:
        return []
    moved = ", ".join(f"seat {seat} {b - a:+d}" for seat, (a, b) in enumerate(zip(before, after)))
    return [f"  paid at once (a first-turn or consecutive ppuk, or a first-turn ttadak): {moved}"]


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
    effective = {**game.rules.to_dict(), "target": game.rules.target_score}  # the target in force, not None
    lines = ["rules: " + ", ".join(f"{k} {v}" for k, v in effective.items()), f"carry: {replay.carry}"]
    lines += [f"seat {s} hand: {_names(h)}" for s, h in enumerate(game.hands)]
    lines.append(f"layout: {_names(game.layout)}")
    lines += ["  " + line for line in describe(game.deal_events, players)]
    for seat, action, events in replay.play():
        lines.append(f"seat {seat}: {action_name(action)}")
        lines += ["  " + line for line in describe(events, players)]
    return lines


def payment_breakdown(replay: Replay) -> list[dict[str, Any]]:
    """How a hand that ended by a stop was paid, as the engine computes it: for each loser,
    the named factors of its share (those other than 1, and the base) and the share before
    go-bak. Empty for a nagari."""
    game = replay.game()
    for action in replay.actions:
        game.step(action)
    if game.result != Result.STOP:
        return []
    rows = []
    for loser in (s for s in range(game.rules.players) if s != game.winner):
        factors = game.share_factors(game.winner, loser)
        shown = [[name, value] for k, (name, value) in enumerate(factors) if k == 0 or value != 1]
        share = math.prod(value for _, value in factors)
        rows.append({"payer": loser, "winner": game.winner, "factors": shown, "share": share})
    return rows


def breakdown_lines(rows: list[dict[str, Any]]) -> list[str]:
    """:func:`payment_breakdown`'s rows as text: ``seat 1 pays seat 0 14: score + gos 7 x go
    multiplier 2``."""
    return [
        f"seat {row['payer']} pays seat {row['winner']} {row['share']}: "
        + " x ".join(f"{name} {value}" for name, value in row["factors"])
        for row in rows
    ]
