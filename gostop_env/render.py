"""Readable text for one game of a batch: what a seat may see, with card names."""

from __future__ import annotations

from .core import GameBatch, Phase
from .core.actions import CHOOSE
from .core.cards import card_name

_DECISIONS = {
    Phase.PLAY: "play",
    Phase.CHOOSE_HAND: "choose a card to take",
    Phase.CHOOSE_FLIP: "choose a card to take",
    Phase.GO_STOP: "say go or stop",
}


def _names(cards) -> str:
    return ", ".join(card_name(c) for c in sorted(cards)) or "-"


def render_table(batch: GameBatch, i: int, viewer: int) -> str:
    """Game ``i`` of a batch as seen by seat ``viewer`` (see :func:`render_snapshot`)."""
    return render_snapshot(batch.snapshot(i), batch.rules, viewer)


def render_snapshot(snap: dict, rules, viewer: int) -> str:
    """A game's ``snapshot()`` (either engine) as seen by seat ``viewer``: layout, own hand,
    other hands' sizes and shaken cards, capture piles, scores, gos, shakes, bombs, pass
    tokens, and whose decision it is."""
    phase = Phase(snap["phase"])
    lines = [
        f"Go-Stop, {rules.players} players; stock {len(snap['stock'])} cards; "
        + ("hand over" if phase == Phase.DONE else f"seat {snap['seat']} to {_DECISIONS[phase]}"),
        f"layout: {_names(snap['layout'])}",
    ]
    for seat in range(rules.players):
        hand = snap["hands"][seat]
        if seat == viewer:
            shown = f"hand: {_names(hand)}"
        else:
            shaken = snap["revealed"][seat]
            shown = f"hand: {len(hand)} cards" + (f", shown: {_names(shaken)}" if shaken else "")
        lines += [
            f"seat {seat}{' (you)' if seat == viewer else ''}: score {snap['scores'][seat]}, "
            f"gos {snap['gos'][seat]}, shakes {snap['shakes'][seat]}, "
            f"bombs {snap['bombs'][seat]}, pass tokens {snap['pass_tokens'][seat]}",
            f"  {shown}",
            f"  pile: {_names(snap['piles'][seat])}",
        ]
    if phase in (Phase.CHOOSE_HAND, Phase.CHOOSE_FLIP):
        lines.append(f"choose one of: {_names(a - CHOOSE for a in snap['legal'])}")
    if phase == Phase.DONE:
        lines.append(f"hand over: payments {snap['payments']} (target {rules.target_score})")
    return "\n".join(lines)
