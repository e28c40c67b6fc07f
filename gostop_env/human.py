"""Play a hand in the terminal against agents (``gostop play``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .core import GameBatch, Result, Rules, action_name
from .core.deck import check_seed, shuffled_decks
from .policy import Policy, check_actions, observe
from .render import render_table
from .replay import Replay, describe


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
    batch = GameBatch(rules, deck[None, :])
    write(f"You are seat {seat} (seat 0 deals and moves first); target {rules.target_score} points.")
    for line in describe(batch.deal_events.game(0), rules.players):
        write(line)
    actions: list[int] = []
    while not batch.done[0]:
        mover = int(batch.seat[0])
        if mover == seat:
            action = _ask(batch, seat, read, write)
        else:
            policy = opponents[(mover - seat) % rules.players - 1]
            masks = batch.legal_action_mask()
            action = int(
                check_actions(policy(observe(policy, batch, np.array([0]), np.array([mover])), masks, rng), masks)[0]
            )
            write(f"seat {mover}: {action_name(action)}")
        for line in describe(batch.step([action]).game(0), rules.players):
            write("  " + line)
        actions.append(action)
    _summary(batch, seat, write)
    return Replay(rules.to_dict(), [int(c) for c in deck], actions, 0, batch.payments[0].tolist())


def _ask(batch: GameBatch, seat: int, read: Callable[[str], str], write: Callable[[str], None]) -> int:
    write("")
    write(render_table(batch, 0, viewer=seat))
    legal = batch.legal_actions(0)
    menu = "  ".join(f"{i}) {action_name(a)}" for i, a in enumerate(legal, start=1))
    write("Your move: " + menu)
    while True:
        try:
            answer = read("> ").strip().lower()
        except EOFError:
            raise LeftGame("no more input: the hand is left unfinished") from None
        choice = _parse(answer, legal)
        if choice is not None:
            return choice
        write(f"{answer!r} is not one of the choices. Choose a number: {menu}")


def _parse(answer: str, legal: list[int]) -> int | None:
    names = {action_name(a).lower(): a for a in legal}
    if answer in names:
        return names[answer]
    if answer.isdigit() and 1 <= int(answer) <= len(legal):
        return legal[int(answer) - 1]
    return None


def _summary(batch: GameBatch, seat: int, write: Callable[[str], None]) -> None:
    write("")
    write(render_table(batch, 0, viewer=seat))
    result = Result(int(batch.result[0])).name.lower()
    payments = batch.payments[0].tolist()
    write(
        f"Hand over ({result}). Scores {batch.scores[0].tolist()}, payments {payments}: you {payments[seat]:+d} chips."
    )
