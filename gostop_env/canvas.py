"""Shapes on a canvas, and the two ways they are written out: SVG text and a Pillow image.

A :class:`Drawing` is a list of :class:`Shape` (rounded rectangles, circles, ellipses,
polygons, lines, text) on a canvas of fixed size; :func:`to_svg` writes it as an SVG
document (no dependency) and :func:`to_rgb` paints it into an ``(H, W, 3)`` uint8 array with
Pillow (``pip install "gostop[draw]"``). Card art (:mod:`gostop_env.card_art`) and the table
(:mod:`gostop_env.drawing`) are built from these shapes only, so both outputs show the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any

import numpy as np

INK = "#212529"
SHAPE_KINDS = ("rect", "circle", "ellipse", "polygon", "line", "text")


@dataclass(frozen=True)
class Shape:
    """One mark.

    - ``"rect"``: top left (x, y), size (w, h), corner radius ``r``;
    - ``"circle"``: centre (x, y), radius ``r``;
    - ``"ellipse"``: centre (x, y), radii (w, h);
    - ``"polygon"``: corners ``points`` (x0, y0, x1, y1, ...), offset by (x, y);
    - ``"line"``: a polyline through ``points`` (offset by (x, y)), ``width`` pixels wide,
      drawn in ``fill``;
    - ``"text"``: centre of the text (x, y), ``size`` in pixels, bold when ``bold``.

    ``stroke`` outlines a filled shape (``width`` pixels wide).
    """

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
    points: tuple[float, ...] = ()
    width: float = 1.0
    bold: bool = False

    def __post_init__(self) -> None:
        if self.kind not in SHAPE_KINDS:
            raise ValueError(f"unknown shape kind {self.kind!r}: one of {SHAPE_KINDS}")
        if self.kind in ("polygon", "line") and (len(self.points) < 4 or len(self.points) % 2):
            raise ValueError(f"a {self.kind} needs two or more (x, y) points, got {self.points!r}")

    def moved(self, dx: float, dy: float) -> Shape:
        return replace(self, x=self.x + dx, y=self.y + dy)

    def corners(self) -> list[tuple[float, float]]:
        """A polygon's or line's points, offset by (x, y)."""
        return [(self.x + px, self.y + py) for px, py in zip(self.points[::2], self.points[1::2], strict=True)]


def polygon(points: Sequence[float], fill: str, stroke: str | None = None, width: float = 1.0) -> Shape:
    """A filled polygon through ``points`` (x0, y0, x1, y1, ...)."""
    return Shape("polygon", 0, 0, fill=fill, stroke=stroke, points=tuple(points), width=width)


def line(points: Sequence[float], colour: str, width: float = 1.0) -> Shape:
    """A polyline through ``points`` (x0, y0, x1, y1, ...)."""
    return Shape("line", 0, 0, fill=colour, points=tuple(points), width=width)


def ellipse(x: float, y: float, rx: float, ry: float, fill: str, stroke: str | None = None) -> Shape:
    """A filled ellipse centred at (x, y) with radii ``rx`` and ``ry``."""
    return Shape("ellipse", x, y, w=rx, h=ry, fill=fill, stroke=stroke)


def circle(x: float, y: float, r: float, fill: str, stroke: str | None = None) -> Shape:
    """A filled circle centred at (x, y)."""
    return Shape("circle", x, y, r=r, fill=fill, stroke=stroke)


@dataclass(frozen=True)
class Placed:
    """Where a card was put: its id (``None``: a back), its top left corner, the group it was
    fanned in (cards of one group may overlap, others may not), its name, and the range of
    the drawing's shapes that draw it (SVG wraps them in one ``<g class="card">``)."""

    card: int | None
    x: float
    y: float
    group: str
    name: str = ""
    shapes: tuple[int, int] = (0, 0)


@dataclass
class Drawing:
    """Shapes on a ``width`` × ``height`` canvas, painted in order over ``background``;
    ``cards`` records where each card went (layout checks, SVG groups, animation)."""

    width: int
    height: int
    background: str = "#ffffff"
    shapes: list[Shape] = field(default_factory=list)
    cards: list[Placed] = field(default_factory=list)

    def add(self, shapes: Sequence[Shape], dx: float = 0.0, dy: float = 0.0) -> None:
        self.shapes.extend(s.moved(dx, dy) for s in shapes)

    def add_card(self, card: int | None, shapes: Sequence[Shape], x: float, y: float, group: str, name: str) -> None:
        """``shapes`` of one card with its top left corner at (x, y), recorded in ``cards``."""
        start = len(self.shapes)
        self.add(shapes, x, y)
        self.cards.append(Placed(card, x, y, group, name, (start, len(self.shapes))))


# ---- SVG -----------------------------------------------------------------------------------
def to_svg(drawing: Drawing) -> str:
    """The drawing as a standalone SVG document. Each placed card is one ``<g class="card">``
    with ``data-card`` (its id, or ``back``), ``data-group``, ``data-x``/``data-y`` (its
    corner) and a ``<title>`` naming it (a tooltip in browsers)."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{drawing.width}" height="{drawing.height}" '
        f'viewBox="0 0 {drawing.width} {drawing.height}" font-family="sans-serif">',
        f'<rect width="{drawing.width}" height="{drawing.height}" fill="{drawing.background}"/>',
    ]
    starts = {p.shapes[0]: p for p in drawing.cards if p.shapes[1] > p.shapes[0]}
    ends = {p.shapes[1] for p in starts.values()}
    for k, shape in enumerate(drawing.shapes):
        if k in ends:
            parts.append("</g>")
        if k in starts:
            parts.append(_svg_group(starts[k]))
        parts.append(_svg_shape(shape))
    if len(drawing.shapes) in ends:
        parts.append("</g>")
    return "\n".join([*parts, "</svg>"])


def _svg_group(p: Placed) -> str:
    card = "back" if p.card is None else str(p.card)
    return (
        f'<g class="card" data-card="{card}" data-group="{escape(p.group)}" data-x="{p.x:g}" '
        f'data-y="{p.y:g}"><title>{escape(p.name)}</title>'
    )


def _svg_shape(s: Shape) -> str:
    stroke = f' stroke="{s.stroke}" stroke-width="{s.width:g}"' if s.stroke else ""
    if s.kind == "rect":
        return f'<rect x="{s.x:g}" y="{s.y:g}" width="{s.w:g}" height="{s.h:g}" rx="{s.r:g}" fill="{s.fill}"{stroke}/>'
    if s.kind == "circle":
        return f'<circle cx="{s.x:g}" cy="{s.y:g}" r="{s.r:g}" fill="{s.fill}"{stroke}/>'
    if s.kind == "ellipse":
        return f'<ellipse cx="{s.x:g}" cy="{s.y:g}" rx="{s.w:g}" ry="{s.h:g}" fill="{s.fill}"{stroke}/>'
    if s.kind in ("polygon", "line"):
        points = " ".join(f"{x:g},{y:g}" for x, y in s.corners())
        if s.kind == "polygon":
            return f'<polygon points="{points}" fill="{s.fill}"{stroke}/>'
        return (
            f'<polyline points="{points}" fill="none" stroke="{s.fill}" stroke-width="{s.width:g}" '
            'stroke-linecap="round" stroke-linejoin="round"/>'
        )
    weight = ' font-weight="bold"' if s.bold else ""
    return (
        f'<text x="{s.x:g}" y="{s.y:g}" font-size="{s.size:g}" fill="{s.fill}"{weight} text-anchor="middle" '
        f'dominant-baseline="central">{escape(s.text)}</text>'
    )


# ---- Pillow ----------------------------------------------------------------------------------
def to_rgb(drawing: Drawing, scale: float = 1.0) -> np.ndarray:
    """The drawing painted into an ``(height, width, 3)`` uint8 array, every length times
    ``scale`` (needs Pillow)."""
    try:
        from PIL import Image, ImageDraw
    except ModuleNotFoundError:
        raise ModuleNotFoundError('rgb_array rendering needs Pillow: pip install "gostop[draw]"') from None
    size = (round(drawing.width * scale), round(drawing.height * scale))
    image = Image.new("RGB", size, drawing.background)
    pen = ImageDraw.Draw(image)
    for s in drawing.shapes:
        _paint(pen, s, scale)
    return np.asarray(image, np.uint8)


def _paint(pen: Any, s: Shape, k: float) -> None:
    """One shape onto a Pillow ``ImageDraw``, lengths times ``k``."""
    outline, width = s.stroke, max(1, round(s.width * k))
    if s.kind == "rect":
        pen.rounded_rectangle((k * s.x, k * s.y, k * (s.x + s.w), k * (s.y + s.h)), k * s.r, s.fill, outline, width)
    elif s.kind == "circle":
        pen.ellipse((k * (s.x - s.r), k * (s.y - s.r), k * (s.x + s.r), k * (s.y + s.r)), s.fill, outline, width)
    elif s.kind == "ellipse":
        pen.ellipse((k * (s.x - s.w), k * (s.y - s.h), k * (s.x + s.w), k * (s.y + s.h)), s.fill, outline, width)
    elif s.kind == "polygon":
        pen.polygon([(k * x, k * y) for x, y in s.corners()], s.fill, outline, width)
    elif s.kind == "line":
        pen.line([(k * x, k * y) for x, y in s.corners()], s.fill, width, joint="curve")
    else:
        pen.text((k * s.x, k * s.y), s.text, fill=s.fill, font=_font(k * s.size), anchor="mm")


_FONTS: dict[float, Any] = {}


def _font(size: float) -> Any:
    """Pillow's own font at ``size`` pixels (it has no bold: SVG alone shows ``bold``)."""
    from PIL import ImageFont

    if size not in _FONTS:
        _FONTS[size] = ImageFont.load_default(size=size)
    return _FONTS[size]
