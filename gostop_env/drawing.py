"""Card faces and the table, drawn by code: one description, two outputs.

A :class:`Drawing` is a list of :class:`Shape` (rounded rectangles, circles, text) on a
canvas of fixed size. :func:`card_face` and :func:`card_back` draw one card (month number
and name, the kind's mark: a sun for brights, a bird for animals, a band in the ribbon's
colour, "x2" on double junk, jokers in black and gold); :func:`table` draws a whole game
from a ``snapshot()`` (either engine) as one seat sees it. :func:`to_svg` writes a drawing
as SVG text (no dependency); :func:`to_rgb` paints it into an ``(H, W, 3)`` uint8 array
with Pillow (``pip install "gostop[draw]"``), which is what ``render_mode="rgb_array"``
returns. No downloaded art: every mark is a shape made here.

What a seat may not see is never drawn: other seats' hands are card backs except the
cards they showed by shaking, and the stock is a back with its count. ``viewer=None``
draws every hand face up (replays and research; say so where it is shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any

import numpy as np

from .core import Phase
from .core.cards import GODORI_BIRDS, JUNK_VALUE, KIND, MONTH, MONTH_ABBR, RAIN_BRIGHT, RIBBON_GROUPS, Kind, card_name

CARD_WIDTH, CARD_HEIGHT = 40, 60
TABLE_WIDTH, TABLE_HEIGHT = 960, 640
BACKGROUND = "#2d6a4f"  # the green of the table
TEXT = "#f8f9fa"
INK = "#212529"
MONTH_COLOURS = (
    "#f1faee", "#ffe5ec", "#fde2e4", "#e9f5db", "#e0fbfc", "#fff1e6",
    "#f0efeb", "#fefae0", "#f8edeb", "#fde4cf", "#e2ece9", "#dfe7fd",
)  # fmt: skip
RIBBON_COLOURS = {"red poem": "#c1121f", "blue": "#1d4e89", "plain red": "#e85d75"}
RAIN_RIBBON_COLOUR = "#7d8597"
SUN, RAIN_SUN, BIRD, ANIMAL_MARK = "#e63946", "#5c677d", "#f4a261", "#6a994e"
BACK, BACK_INNER = "#9d0208", "#d00000"
JOKER_BODY, JOKER_GOLD = "#212529", "#ffb703"


@dataclass(frozen=True)
class Shape:
    """One mark: ``"rect"`` (x, y: top left; w, h; corner radius ``r``), ``"circle"`` (x, y:
    centre; ``r``) or ``"text"`` (x, y: centre of the text; ``size`` in pixels)."""

    kind: str
    x: float
    y: float
    w: float = 0.0
    h: float = 0.0
    r: float = 0.0
    fill: str = INK
    stroke: str | None = None
    text: str = ""
    size: float = 10.0

    def moved(self, dx: float, dy: float) -> Shape:
        return replace(self, x=self.x + dx, y=self.y + dy)


@dataclass(frozen=True)
class Placed:
    """Where :func:`table` put a card: its id (``None``: a back), its top left corner, and the
    group it was fanned in (cards of one group may overlap, others may not)."""

    card: int | None
    x: float
    y: float
    group: str


@dataclass
class Drawing:
    """Shapes on a ``width`` × ``height`` canvas, painted in order over ``background``;
    ``cards`` records where each card went (for layout checks)."""

    width: int
    height: int
    background: str = BACKGROUND
    shapes: list[Shape] = field(default_factory=list)
    cards: list[Placed] = field(default_factory=list)

    def add(self, shapes: Sequence[Shape], dx: float = 0.0, dy: float = 0.0) -> None:
        self.shapes.extend(s.moved(dx, dy) for s in shapes)

    def place(self, card: int | None, x: float, y: float, group: str) -> None:
        """Card ``card`` face up (``None``: a back) with its top left corner at (x, y)."""
        self.add(card_back() if card is None else card_face(card), x, y)
        self.cards.append(Placed(card, x, y, group))


# ---- one card ------------------------------------------------------------------------------
def card_face(card: int) -> list[Shape]:
    """Card ``card`` face up, ``CARD_WIDTH`` × ``CARD_HEIGHT`` at the origin."""
    if KIND[card] == Kind.JOKER:
        return _joker(card)
    month, kind = int(MONTH[card]), Kind(int(KIND[card]))
    shapes = [
        Shape("rect", 0, 0, CARD_WIDTH, CARD_HEIGHT, 4, MONTH_COLOURS[month], INK),
        Shape("text", 9, 8, text=str(month + 1), size=10),
        Shape("text", 29, 8, text=MONTH_ABBR[month], size=8),
        *_kind_mark(card, kind),
        Shape("text", CARD_WIDTH / 2, 52, text=_short_name(card), size=7),
    ]
    return shapes


def card_back() -> list[Shape]:
    """A card face down."""
    return [
        Shape("rect", 0, 0, CARD_WIDTH, CARD_HEIGHT, 4, BACK, INK),
        Shape("rect", 5, 5, CARD_WIDTH - 10, CARD_HEIGHT - 10, 3, BACK_INNER),
    ]


def card_picture(card: int | None, background: str = "#ffffff") -> Drawing:
    """One card on its own canvas (``None``: face down), as the table's card images are served."""
    drawing = Drawing(CARD_WIDTH, CARD_HEIGHT, background)
    drawing.add(card_back() if card is None else card_face(card))
    return drawing


def _kind_mark(card: int, kind: Kind) -> list[Shape]:
    """The middle of a face: a sun (bright), a disc (animal; orange for the godori birds), a
    band in the ribbon group's colour, "x2" (double junk) or "J" (junk)."""
    x, y = CARD_WIDTH / 2, 30
    if kind == Kind.BRIGHT:
        return _lettered(Shape("circle", x, y, r=10, fill=RAIN_SUN if card == RAIN_BRIGHT else SUN), "B")
    if kind == Kind.ANIMAL:
        return _lettered(Shape("circle", x, y, r=8, fill=BIRD if card in GODORI_BIRDS else ANIMAL_MARK), "A")
    if kind == Kind.RIBBON:
        colour = next((RIBBON_COLOURS[g] for g, cards in RIBBON_GROUPS.items() if card in cards), RAIN_RIBBON_COLOUR)
        return _lettered(Shape("rect", 4, y - 6, CARD_WIDTH - 8, 12, 2, colour), "R")
    if JUNK_VALUE[card] == 2:
        return [Shape("text", x, y, text="x2", size=14)]
    return [Shape("text", x, y, text="J", size=12)]


def _lettered(mark: Shape, letter: str) -> list[Shape]:
    """``mark`` with ``letter`` written in its middle."""
    centre_y = mark.y + mark.h / 2 if mark.kind == "rect" else mark.y
    return [mark, Shape("text", CARD_WIDTH / 2, centre_y, text=letter, fill=TEXT)]


def _joker(card: int) -> list[Shape]:
    return [
        Shape("rect", 0, 0, CARD_WIDTH, CARD_HEIGHT, 4, JOKER_BODY, JOKER_GOLD),
        Shape("text", CARD_WIDTH / 2, 16, text="JOKER", fill=JOKER_GOLD, size=8),
        Shape("text", CARD_WIDTH / 2, 34, text=f"x{int(JUNK_VALUE[card])}", fill=JOKER_GOLD, size=14),
    ]


def _short_name(card: int) -> str:
    """The last word of the card's name ("crane", "ribbon", "junk"), cut to fit the card."""
    return card_name(card).split()[-1][:8]


# ---- the table -------------------------------------------------------------------------------
PILE_GROUPS = (
    (Kind.BRIGHT, "brights", 11),
    (Kind.ANIMAL, "animals", 15),
    (Kind.RIBBON, "ribbons", 15),
    (Kind.JUNK, "junk", 20),
)
"""A capture pile's groups, left to right (jokers go with the junk): kind, label, and the
share of the pile's width each gets."""
GROUP_GAP, MAX_FAN = 10, 12.0  # pixels between a pile's groups; the widest step of a fan
STEP = CARD_WIDTH + 4


def table(snap: dict[str, Any], players: int, viewer: int | None) -> Drawing:
    """The game in ``snap`` as seat ``viewer`` sees it (``None``: every hand face up), on a
    canvas of ``TABLE_WIDTH`` × ``TABLE_HEIGHT`` whatever the state: the other seats along
    the top, each in its own column, the stock and layout in the middle, the viewer's seat
    at the bottom. Cards overlap only within a fanned group of a pile."""
    drawing = Drawing(TABLE_WIDTH, TABLE_HEIGHT)
    bottom = 0 if viewer is None else viewer
    others = [(bottom + k) % players for k in range(1, players)]
    width = TABLE_WIDTH // len(others)
    for k, seat in enumerate(others):
        _seat_area(drawing, snap, seat, viewer, x=k * width + 10, y=10, width=width - 20)
    _middle(drawing, snap, y=250)
    _seat_area(drawing, snap, bottom, viewer, x=10, y=TABLE_HEIGHT - 220, width=TABLE_WIDTH - 20, own=True)
    return drawing


def _seat_area(
    drawing: Drawing,
    snap: dict[str, Any],
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
    drawing.add([Shape("text", x + width / 2, y + 8, text=text, fill=TEXT, size=11)])
    hand_y, pile_y = (y + 130, y + 30) if own else (y + 20, y + 100)
    step = min(STEP, (width - CARD_WIDTH) / max(len(hand) - 1, 1))
    for k, card in enumerate(hand):
        drawing.place(card if face_up or card in shown else None, x + k * step, hand_y, f"hand {seat}")
    _pile(drawing, snap["piles"][seat], x, pile_y, width, seat)


def _pile(drawing: Drawing, pile: Sequence[int], x: float, y: float, width: float, seat: int) -> None:
    """A capture pile grouped by kind, each group fanned into its share of ``width`` under a
    label with its count (junk: and the value §7 counts, double junk and jokers at theirs)."""
    shares = sum(share for _, _, share in PILE_GROUPS)
    room = width - GROUP_GAP * (len(PILE_GROUPS) - 1)
    for kind, label, share in PILE_GROUPS:
        group_width = room * share / shares
        group = [c for c in pile if KIND[c] == kind or (kind == Kind.JUNK and KIND[c] == Kind.JOKER)]
        count = f"{label} {len(group)}"
        if kind == Kind.JUNK and group:
            count += f" ({sum(int(JUNK_VALUE[c]) for c in group)})"
        drawing.add([Shape("text", x + group_width / 2, y - 5, text=count, fill=TEXT, size=9)])
        offset = min(MAX_FAN, (group_width - CARD_WIDTH) / max(len(group) - 1, 1))
        for k, card in enumerate(group):
            drawing.place(card, x + k * offset, y, f"pile {seat} {label}")
        x += group_width + GROUP_GAP


def _middle(drawing: Drawing, snap: dict[str, Any], y: float) -> None:
    """The stock (a back and its count) and the layout, in rows of 18."""
    drawing.place(None, 10, y + 20, "stock")
    drawing.add([Shape("text", 30, y + 92, text=f"stock {len(snap['stock'])}", fill=TEXT, size=11)])
    for k, card in enumerate(snap["layout"]):
        row, column = divmod(k, 18)
        drawing.place(card, 70 + column * STEP, y + 10 + row * (CARD_HEIGHT + 6), "layout")
    if Phase(snap["phase"]) == Phase.DONE:
        text = f"hand over: payments {list(snap['payments'])}"
        drawing.add([Shape("text", TABLE_WIDTH / 2, y + 150, text=text, fill=TEXT, size=13)])


# ---- output ------------------------------------------------------------------------------------
def to_svg(drawing: Drawing) -> str:
    """The drawing as a standalone SVG document."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{drawing.width}" height="{drawing.height}" '
        f'viewBox="0 0 {drawing.width} {drawing.height}" font-family="sans-serif">',
        f'<rect width="{drawing.width}" height="{drawing.height}" fill="{drawing.background}"/>',
    ]
    parts += [_svg_shape(s) for s in drawing.shapes]
    return "\n".join([*parts, "</svg>"])


def _svg_shape(s: Shape) -> str:
    stroke = f' stroke="{s.stroke}"' if s.stroke else ""
    if s.kind == "rect":
        return f'<rect x="{s.x:g}" y="{s.y:g}" width="{s.w:g}" height="{s.h:g}" rx="{s.r:g}" fill="{s.fill}"{stroke}/>'
    if s.kind == "circle":
        return f'<circle cx="{s.x:g}" cy="{s.y:g}" r="{s.r:g}" fill="{s.fill}"{stroke}/>'
    return (
        f'<text x="{s.x:g}" y="{s.y:g}" font-size="{s.size:g}" fill="{s.fill}" text-anchor="middle" '
        f'dominant-baseline="central">{escape(s.text)}</text>'
    )


def to_rgb(drawing: Drawing) -> np.ndarray:
    """The drawing painted into an ``(height, width, 3)`` uint8 array (needs Pillow)."""
    try:
        from PIL import Image, ImageDraw
    except ModuleNotFoundError:
        raise ModuleNotFoundError('rgb_array rendering needs Pillow: pip install "gostop[draw]"') from None
    image = Image.new("RGB", (drawing.width, drawing.height), drawing.background)
    pen = ImageDraw.Draw(image)
    for s in drawing.shapes:
        if s.kind == "rect":
            pen.rounded_rectangle((s.x, s.y, s.x + s.w, s.y + s.h), s.r, fill=s.fill, outline=s.stroke)
        elif s.kind == "circle":
            pen.ellipse((s.x - s.r, s.y - s.r, s.x + s.r, s.y + s.r), fill=s.fill, outline=s.stroke)
        else:
            pen.text((s.x, s.y), s.text, fill=s.fill, font=_font(s.size), anchor="mm")
    return np.asarray(image, np.uint8)


_FONTS: dict[float, Any] = {}


def _font(size: float) -> Any:
    from PIL import ImageFont

    if size not in _FONTS:
        _FONTS[size] = ImageFont.load_default(size=size)
    return _FONTS[size]
