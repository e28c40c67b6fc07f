"""Play a hand in the terminal against agents (``gostop play``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .core import GameBatch, Phase, Result, Rules, action_name, batch_class
from .core import actions as A
from .core import cards as C
from .core.cards import card_name
from .core.deck import check_seed, shuffled_decks
from .policy import Policy
from .render import render_table
from .replay import Replay, breakdown_lines, describe, move_lines, paid_at_once, payment_breakdown
from .seats import opponent_action


class LeftGame(Exception):
    """The player's input ended before the hand did."""


def play_in_terminal(
    rules: Rules,
    opponents: Sequence[Policy],
    seed: int | None = None,
    seat: int = 0,
    read: Callable[[str], str] = input,
    write: Callable[[str], None] = print,
) -> Replay:
    """Play one hand as ``seat`` against ``opponents`` (one per other seat, in turn order
    after you); only legal moves are offered; returns the hand's replay."""
    if len(opponents) != rules.players - 1:
        raise ValueError(f"need {rules.players - 1} opponent(s), got {len(opponents)}")
    if not 0 <= seat < rules.players:
        raise ValueError(f"seat must be 0..{rules.players - 1}")
    rng = np.random.default_rng(None if seed is None else check_seed(seed))
    deck = shuffled_decks(rules, rng, 1)[0]
    batch = batch_class()(rules, deck[None, :])
    write(f"You are seat {seat} (seat 0 deals and moves first); target {rules.target_score} points.")
    for line in describe(batch.deal_events.game(0), rules.players):
        write(line)
    actions: list[int] = []
    while not batch.done[0]:
        mover = int(batch.seat[0])
        mine = mover == seat
        action = _ask(batch, seat, read, write) if mine else opponent_action(batch, seat, opponents, rng)
        before, paid = int(batch.stock_pos[0]), batch.payments[0].tolist()
        events = batch.step([action]).game(0)
        flipped = [card_name(int(c)) for c in batch.stock[0, before : int(batch.stock_pos[0])]]
        lines = move_lines(None if mine else f"seat {mover}", action, events, rules.players)
        lines += paid_at_once(paid, batch.payments[0].tolist(), bool(batch.done[0]))
        if flipped:
            lines.insert(0 if mine else 1, f"  flipped from the stock: {', '.join(flipped)}")
        for line in lines:
            write(line)
        actions.append(action)
    replay = Replay(rules.to_dict(), [int(c) for c in deck], actions, 0, batch.payments[0].tolist())
    _summary(batch, seat, write)
    for line in breakdown_lines(payment_breakdown(replay)):
        write("  " + line)
    return replay


HELP = (
    "Answer with a move's number, its name (with or without 'play'), or the start of a name that "
    "only one move has (e.g. 'jan' when only one January card can be played); 'help' shows this, "
    "'quit' leaves the hand."
)


def _ask(batch: GameBatch, seat: int, read: Callable[[str], str], write: Callable[[str], None]) -> int:
    write("")
    write(render_table(batch, 0, viewer=seat))
    menu = move_menu(batch, seat)
    if int(batch.phase[0]) == Phase.GO_STOP:
        write(f"Stopping now pays you {stop_payment(batch)[seat]:+d} chips; going plays on for more, or for less.")
    listing = "  ".join(f"{i}) {label}" for i, (label, _) in enumerate(menu, start=1))
    write("Your move: " + listing)
    while True:
        try:
            answer = read("> ").strip().lower()
        except EOFError:
            raise LeftGame("no more input: the hand is left unfinished") from None
        if answer == "quit":
            raise LeftGame("you left the hand")
        if answer == "help":
            write(HELP)
            continue
        choice = _parse(answer, menu)
        if choice is not None:
            if choice not in (A.GO, A.STOP):  # a go or a stop is told by its event
                write(f"you: {next(label for label, action in menu if action == choice)}")
            return choice
        write(f"{answer!r} is not one of the choices ('help' explains). {listing}")


def stop_payment(batch: GameBatch) -> list[int]:
    """What each seat of game 0 would be paid if the seat to move said stop now (the engine
    decides, on a copy): the terminal's go/stop prompt and the web table show it."""
    stopped = batch.select([0])
    stopped.step([A.STOP])
    return [int(p) for p in stopped.payments[0]]


def move_menu(batch: GameBatch, seat: int) -> list[tuple[str, int]]:
    """(label, action) for each distinct legal move of game 0: identical cards (two plain
    junk of a month) are offered once, and shakes and bombs name the cards they show (the
    terminal's menu and the web table's buttons)."""
    hand = C.cards_of(batch.hands[0, seat])
    menu: dict[str, int] = {}
    for action in batch.legal_actions(0):
        label = action_name(action)
        if A.SHAKE <= action < A.PASS:
            month = (action - A.SHAKE) % 12
            verb = "shake" if action < A.BOMB else "bomb"
            shown = [card_name(c) for c in hand if C.MONTH[c] == month]
            label = f"{verb} {card_name(4 * month).split()[0]} ({', '.join(shown)})"
        menu.setdefault(label, action)
    return list(menu.items())


def _parse(answer: str, menu: list[tuple[str, int]]) -> int | None:
    """The move ``answer`` names: a number, a label (or a card's name without 'play'), or a
    prefix of exactly one of those; None when it names none or several."""
    if answer.isdigit():
        return menu[int(answer) - 1][1] if 1 <= int(answer) <= len(menu) else None
    names = [(label.lower(), action) for label, action in menu]
    names += [(label[len("play ") :], action) for label, action in names if label.startswith("play ")]
    exact = {action for label, action in names if label == answer}
    if exact:
        return exact.pop()
    matches = {action for label, action in names if answer and label.startswith(answer)}
    return matches.pop() if len(matches) == 1 else None


def _summary(batch: GameBatch, seat: int, write: Callable[[str], None]) -> None:
    write("")
    write(render_table(batch, 0, viewer=seat))
    result = Result(int(batch.result[0])).name.lower()
    payments = batch.payments[0].tolist()
    write(
        f"Hand over ({result}). Scores {batch.scores[0].tolist()}, payments {payments}: you {payments[seat]:+d} chips."
    )
