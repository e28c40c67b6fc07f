"""Readable text for one game of a batch: what a seat may see, with card names."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .core import GameBatch, Phase
from .core.actions import CHOOSE
from .core.cards import KINDS, Kind, card_name
from .core.scoring import read_pile

_DECISIONS = {
    Phase.PLAY: "play",
    Phase.CHOOSE_HAND: "choose a card to take",
    Phase.CHOOSE_FLIP: "choose a card to take",
    Phase.GO_STOP: "say go or stop",
}


RENDER_MODES = ["ansi", "human", "rgb_array"]
"""What the environments render: ``"ansi"`` returns the table as text, ``"human"`` prints it,
``"rgb_array"`` returns it as an image (:mod:`gostop_env.drawing`; needs Pillow)."""


def check_render_mode(render_mode: str | None, supported: Sequence[str] = tuple(RENDER_MODES)) -> str | None:
    """Gymnasium's convention for a render mode the environment does not support (one not in
    ``supported``): a warning, not an error; ``render()`` then warns and returns None. A mode
    that is not a string is a TypeError."""
    if render_mode is not None and not isinstance(render_mode, str):
        raise TypeError(f"render_mode must be a string or None, got {render_mode!r}")
    if render_mode is not None and render_mode not in supported:
        warnings.warn(
            f"render_mode {render_mode!r} is not supported (supported: {list(supported)}); render() returns None",
            UserWarning,
            stacklevel=3,
        )
    return render_mode


def unsupported_render(render_mode: str | None) -> bool:
    """True (after a warning) when ``render()`` has nothing to give in ``render_mode``."""
    if render_mode in RENDER_MODES:
        return False
    warnings.warn(f"render() in render_mode {render_mode!r} gives nothing: use one of {RENDER_MODES}", stacklevel=3)
    return True


def render_frame(snap: dict, rules, seat: int, encoding: str) -> np.ndarray:
    """A game's ``snapshot()`` as an RGB image, ``(640, 960, 3)`` uint8, as ``seat`` sees it
    when its observations are in ``encoding``: the ``oracle`` encoding sees every hand, so its
    image shows every hand face up."""
    from .drawing import table, to_rgb

    return to_rgb(table(snap, rules.players, None if encoding == "oracle" else seat, rules))


def _names(cards) -> str:
    return ", ".join(card_name(c) for c in sorted(cards)) or "-"


PILE_GROUPS = (("brights", (Kind.BRIGHT,)), ("animals", (Kind.ANIMAL,)), ("ribbons", (Kind.RIBBON,)))
"""A capture pile's groups by kind as text shows them; the rest (junk and jokers) is junk."""


def pile_text(cards, rules) -> str:
    """A capture pile grouped by kind, each group with its count (junk with the value §7
    counts, double junk and jokers included), e.g. ``brights 1: Jan pine crane | animals 0 |
    ribbons 2: ... | junk 5 (worth 6): ...``."""
    cards = sorted(cards)
    parts, grouped = [], set()
    for name, kinds in PILE_GROUPS:
        group = [c for c in cards if KINDS[c] in kinds]
        grouped.update(group)
        parts.append(f"{name} {len(group)}" + (f": {_names(group)}" if group else ""))
    junk = [c for c in cards if c not in grouped]
    worth = read_pile(set(cards), rules).junk_value
    parts.append(f"junk {len(junk)}" + (f" (worth {worth}): {_names(junk)}" if junk else ""))
    return " | ".join(parts)


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
            f"  pile: {pile_text(snap['piles'][seat], rules)}",
        ]
    if phase in (Phase.CHOOSE_HAND, Phase.CHOOSE_FLIP):
        lines.append(f"choose one of: {_names(a - CHOOSE for a in snap['legal'])}")
    if phase == Phase.DONE:
        lines.append(f"hand over: payments {snap['payments']} (target {rules.target_score})")
    return "\n".join(lines)
