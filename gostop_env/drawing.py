"""The table drawn by code: one description, two outputs.

:func:`table` draws a whole game from a ``snapshot()`` (either engine) as one seat sees it,
on a :class:`~gostop_env.canvas.Drawing` of fixed size, with the hwatu faces of
:mod:`gostop_env.card_art`; :func:`card_picture` is one card on its own canvas and
:func:`deck` every card by month. :func:`to_svg` writes a drawing as SVG text (no
dependency); :func:`to_rgb` paints it into an ``(H, W, 3)`` uint8 array with Pillow
(``pip install "gostop[draw]"``), which is what ``render_mode="rgb_array"`` returns.

What a seat may not see is never drawn: other seats' hands are card backs except the
cards they showed by shaking, and the stock is a back with its count. ``viewer=None``
draws every hand face up (replays and research; say so where it is shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .canvas import Drawing, Placed, Shape, to_rgb, to_svg
from .card_art import CARD_HEIGHT, CARD_WIDTH, card_back, card_face
from .core import Phase, Rules
from .core.cards import KIND, MONTH_ABBR, NUM_CARDS, NUM_MONTHS, Kind, card_name
from .core.scoring import read_pile

__all__ = [
    "CARD_HEIGHT", "CARD_WIDTH", "TABLE_HEIGHT", "TABLE_WIDTH", "Drawing", "Placed", "Shape",
    "card_face", "card_picture", "deck", "place", "table", "to_rgb", "to_svg",
]  # fmt: skip

TABLE_WIDTH, TABLE_HEIGHT = 960, 640
BACKGROUND = "#2d6a4f"  # the green of the table
TEXT = "#f8f9fa"
TO_MOVE = "#ffb703"  # the seat to move


def place(drawing: Drawing, card: int | None, x: float, y: float, group: str) -> None:
    """Card ``card`` face up (``None``: a back) with its top left corner at (x, y), in
    ``group`` (cards of one group may overlap)."""
    name = "a face-down card" if card is None else card_name(card)
    drawing.add_card(card, card_back() if card is None else card_face(card), x, y, group, name)


def card_picture(card: int | None, background: str = "#ffffff") -> Drawing:
    """One card on its own canvas (``None``: face down), as the table's card images are served."""
    drawing = Drawing(CARD_WIDTH, CARD_HEIGHT, background)
    place(drawing, card, 0, 0, "card")
    return drawing


DECK_GAP, DECK_LABEL = 8, 64


def deck() -> Drawing:
    """Every card: a row per month (its four cards, labelled), the jokers and a back last."""
    step_x, step_y = CARD_WIDTH + DECK_GAP, CARD_HEIGHT + DECK_GAP
    drawing = Drawing(DECK_LABEL + 4 * step_x, (NUM_MONTHS + 1) * step_y + DECK_GAP, BACKGROUND)
    for card in range(NUM_CARDS):
        row, column = divmod(card, 4)
        place(drawing, card, DECK_LABEL + column * step_x, DECK_GAP + row * step_y, f"month {row + 1}")
    place(drawing, None, DECK_LABEL + 2 * step_x, DECK_GAP + NUM_MONTHS * step_y, "back")
    for row in range(NUM_MONTHS + 1):
        label = f"{row + 1} {MONTH_ABBR[row]}" if row < NUM_MONTHS else "jokers"
        drawing.add(
            [Shape("text", DECK_LABEL / 2, DECK_GAP + row * step_y + CARD_HEIGHT / 2, text=label, fill=TEXT, size=11)]
        )
    return drawing


# ---- the table -------------------------------------------------------------------------------
PILE_GROUPS = (
    (Kind.BRIGHT, "brights", 11, "bright_points"),
    (Kind.ANIMAL, "animals", 15, "animal_points"),
    (Kind.RIBBON, "ribbons", 15, "ribbon_points"),
    (Kind.JUNK, "junk", 20, "junk_points"),
)
"""A capture pile's groups, left to right (jokers go with the junk): kind, label, the
share of the pile's width each gets, and the field of its points in a pile's reading."""
GROUP_GAP, MAX_FAN = 10, 12.0  # pixels between a pile's groups; the widest step of a fan
STEP = CARD_WIDTH + 4


def table(snap: dict[str, Any], players: int, viewer: int | None, rules: Rules | None = None) -> Drawing:
    """The game in ``snap`` as seat ``viewer`` sees it (``None``: every hand face up), on a
    canvas of ``TABLE_WIDTH`` × ``TABLE_HEIGHT`` whatever the state: the other seats along
    the top, each in its own column, the stock and layout in the middle, the viewer's seat
    at the bottom, the seat to move in gold. Cards overlap only within a fanned group of a
    pile; each group's label gives its count and the points it scores under ``rules``
    (default: the ``seed`` preset for ``players``)."""
    rules = rules or Rules.preset("seed", players=players)
    drawing = Drawing(TABLE_WIDTH, TABLE_HEIGHT, BACKGROUND)
    bottom = 0 if viewer is None else viewer
    others = [(bottom + k) % players for k in range(1, players)]
    width = TABLE_WIDTH // len(others)
    for k, seat in enumerate(others):
        _seat_area(drawing, snap, rules, seat, viewer, x=k * width + 10, y=10, width=width - 20)
    _middle(drawing, snap, y=250)
    _seat_area(drawing, snap, rules, bottom, viewer, x=10, y=TABLE_HEIGHT - 220, width=TABLE_WIDTH - 20, own=True)
    return drawing


def _seat_area(
    drawing: Drawing,
    snap: dict[str, Any],
    rules: Rules,
    seat: int,
    viewer: int | None,
    x: float,
    y: float,
    width: float,
    own: bool = False,
) -> None:
    """A seat's status line, hand and capture pile (the viewer's: pile above the hand), in a
    column ``width`` pixels wide."""
    hand, shown = snap["hands"][seat], set(snap["revealed"][seat])
    face_up = viewer is None or seat == viewer
    status = (
        f"seat {seat}{' (you)' if seat == viewer else ''}: {snap['scores'][seat]} pts, go {snap['gos'][seat]}, "
        f"shake {snap['shakes'][seat]}, bomb {snap['bombs'][seat]}"
    )
    to_move = Phase(snap["phase"]) != Phase.DONE and snap["seat"] == seat
    text = status + ("  <- to move" if to_move else "")
    drawing.add(
        [Shape("text", x + width / 2, y + 8, text=text, fill=TO_MOVE if to_move else TEXT, size=11, bold=to_move)]
    )
    hand_y, pile_y = (y + 130, y + 30) if own else (y + 20, y + 100)
    step = min(STEP, (width - CARD_WIDTH) / max(len(hand) - 1, 1))
    for k, card in enumerate(hand):
        place(drawing, card if face_up or card in shown else None, x + k * step, hand_y, f"hand {seat}")
    _pile(drawing, snap["piles"][seat], rules, x, pile_y, width, seat)


def _pile(drawing: Drawing, pile: Sequence[int], rules: Rules, x: float, y: float, width: float, seat: int) -> None:
    """A capture pile grouped by kind, each group fanned into its share of ``width`` under a
    label with its count and the points it scores (§7, sets included; junk: and the value
    §7 counts, double junk and jokers at theirs)."""
    shares = sum(share for _, _, share, _ in PILE_GROUPS)
    room = width - GROUP_GAP * (len(PILE_GROUPS) - 1)
    reading = read_pile(set(pile), rules)
    for kind, label, share, field in PILE_GROUPS:
        group_width = room * share / shares
        group = [c for c in pile if KIND[c] == kind or (kind == Kind.JUNK and KIND[c] == Kind.JOKER)]
        count = f"{label} {len(group)}"
        if kind == Kind.JUNK and group:
            count += f" ({reading.junk_value})"
        points = getattr(reading, field)
        if points:
            count += f": {points} pt{'s' if points > 1 else ''}"
        drawing.add([Shape("text", x + group_width / 2, y - 5, text=count, fill=TEXT, size=9)])
        offset = min(MAX_FAN, (group_width - CARD_WIDTH) / max(len(group) - 1, 1))
        for k, card in enumerate(group):
            place(drawing, card, x + k * offset, y, f"pile {seat} {label}")
        x += group_width + GROUP_GAP


def _middle(drawing: Drawing, snap: dict[str, Any], y: float) -> None:
    """The stock (a back and its count) and the layout, in rows of 18."""
    place(drawing, None, 10, y + 20, "stock")
    drawing.add([Shape("text", 30, y + 92, text=f"stock {len(snap['stock'])}", fill=TEXT, size=11)])
    for k, card in enumerate(snap["layout"]):
        row, column = divmod(k, 18)
        place(drawing, card, 70 + column * STEP, y + 10 + row * (CARD_HEIGHT + 6), "layout")
    if Phase(snap["phase"]) == Phase.DONE:
        text = f"hand over: payments {list(snap['payments'])}"
        drawing.add([Shape("text", TABLE_WIDTH / 2, y + 150, text=text, fill=TEXT, size=13)])


def main(argv: Sequence[str] | None = None) -> None:
    """Write the deck's picture: ``python -m gostop_env.drawing docs/images/deck.svg`` (a
    ``.png`` path paints it with Pillow at three times the size)."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("path", type=Path)
    path = parser.parse_args(argv).path
    if path.suffix == ".png":
        from PIL import Image

        Image.fromarray(to_rgb(deck(), scale=3)).save(path)
    else:
        path.write_text(to_svg(deck()) + "\n")


if __name__ == "__main__":
    main()
