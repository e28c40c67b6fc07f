"""Hwatu card faces drawn as shapes: the month's plant, the card's subject, its marks.

Every face is ``CARD_WIDTH`` × ``CARD_HEIGHT`` (40 × 60) at the origin and is built in
layers: the paper (or the month's sky), the month's plant (:data:`PLANTS`: pine, plum,
cherry, black bush clover, iris, peony, red bush clover, pampas under the hill,
chrysanthemum, maple, paulownia, willow in the rain), then the card's subject
(:data:`SUBJECTS`: the crane and the sun, the curtain, the moon, the phoenix and the rain man
for the brights; the warbler, cuckoo, bridge, butterflies, boar, geese, sake cup, deer and
swallow for the animals; a ribbon, with its poem when it is a red poem ribbon, in red, blue or
the rain's colour), then the marks a player reads at a glance: the month's number in the
top left corner, the brights' red seal in the top right, and a gold "x2" tag on the double
junk. Plain junk shows the plant alone, so the two plain junk of a month, which the rules
treat alike, look alike; every other card looks like no other. Jokers are black and gold
with their junk value. No downloaded art: every mark is made here.
"""

from __future__ import annotations

from collections.abc import Callable

from .canvas import INK, Shape, circle, ellipse, line, polygon
from .core.cards import DOUBLE_JUNK, JUNK_VALUE, KIND, MONTH, RAIN_BRIGHT, RIBBON_GROUPS, Kind

CARD_WIDTH, CARD_HEIGHT = 40, 60
PAPER = "#fbf5e6"
RED, DEEP_RED, PINK, GOLD = "#d62828", "#9d0208", "#ff8fab", "#ffb703"
GREEN, DARK_GREEN, BROWN, BLACK, WHITE = "#52b788", "#1b4332", "#6f4518", "#1b1b1b", "#ffffff"
PURPLE, BLUE, GREY = "#7b2cbf", "#1d4e89", "#6c757d"
SEAL_RED, RAIN_SEAL = "#e63946", "#5c677d"
RIBBON_COLOURS = {"red poem": "#c1121f", "blue": BLUE, "plain red": "#e85d75"}
RAIN_RIBBON_COLOUR = "#8d99ae"
BACK, BACK_INNER = "#9d0208", "#d00000"
JOKER_BODY, JOKER_GOLD = "#212529", GOLD

Art = list[Shape]


# ---- the month's plant (drawn on every card of the month) -----------------------------------
def _pine() -> Art:
    needles = [ellipse(x, y, 9, 3.5, DARK_GREEN) for x, y in ((12, 40), (27, 33), (14, 26), (28, 47))]
    return [line((6, 60, 12, 46, 20, 36, 24, 28), BROWN, 3), *needles]


def _plum() -> Art:
    blossoms = [circle(x, y, 3, RED) for x, y in ((14, 44), (22, 34), (30, 24), (9, 52), (33, 16))]
    centres = [circle(b.x, b.y, 1, GOLD) for b in blossoms]
    return [line((4, 58, 14, 46, 24, 34, 36, 14), BLACK, 2.5), *blossoms, *centres]


def _cherry() -> Art:
    clusters = [circle(x, y, 4.5, PINK, "#ff4d6d") for x, y in ((10, 18), (20, 14), (30, 20), (15, 26), (26, 27))]
    return [line((2, 30, 20, 22, 38, 28), BROWN, 2), *clusters]


def _black_clover() -> Art:
    strands = [line((x, 8, x + 2, 30, x - 1, 50), BLACK, 1) for x in (8, 16, 24, 32)]
    leaves = [ellipse(x + dx, y, 2, 1.2, BLACK) for x in (8, 16, 24, 32) for dx, y in ((-2, 18), (2, 28), (-1, 40))]
    return [*strands, *leaves]


def _iris() -> Art:
    blades = [polygon((x, 60, x + 2, 26, x + 4, 60), GREEN) for x in (6, 14, 24, 32)]
    flowers = [polygon((x - 4, y, x, y - 6, x + 4, y, x, y + 3), PURPLE) for x, y in ((10, 24), (28, 22))]
    return [*blades, *flowers]


def _peony() -> Art:
    leaves = [polygon((20, 52, 6, 44, 14, 38), GREEN), polygon((20, 52, 34, 44, 26, 38), GREEN)]
    petals = [circle(x, y, 6, c) for x, y, c in ((15, 30, "#e5383b"), (25, 30, "#e5383b"), (20, 24, "#ba181b"))]
    return [*leaves, *petals, circle(20, 30, 2.5, GOLD)]


def _red_clover() -> Art:
    stems = [line((4, 56, 14, 36, 30, 22), BROWN, 1), line((36, 58, 28, 40, 10, 26), BROWN, 1)]
    leaves = [
        ellipse(x, y, 2.2, 1.4, "#c9184a")
        for x, y in ((9, 46), (14, 36), (22, 29), (30, 22), (32, 48), (26, 38), (17, 30), (10, 26))
    ]
    return [*stems, *leaves]


def _pampas() -> Art:
    hill = polygon((0, 60, 0, 40, 10, 34, 22, 33, 32, 36, 40, 40, 40, 60), BLACK)
    grass = [line((x, 58, x + 3, 40), "#e9ecef", 0.8) for x in (6, 14, 22, 30)]
    return [hill, *grass]


def _chrysanthemum() -> Art:
    petals = [
        circle(20 + 6 * dx, 30 + 6 * dy, 3, GOLD)
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (0.7, 0.7), (-0.7, 0.7), (0.7, -0.7), (-0.7, -0.7))
    ]
    leaves = [polygon((20, 40, 8, 52, 16, 56), GREEN), polygon((20, 40, 32, 52, 24, 56), GREEN)]
    return [*leaves, *petals, circle(20, 30, 3.5, "#e85d04")]


def _maple() -> Art:
    return [
        line((2, 14, 20, 22, 38, 16), BROWN, 1.5),
        *(_leaf(x, y, c) for x, y, c in ((9, 22, RED), (21, 14, "#f48c06"), (31, 24, RED), (16, 32, "#f48c06"))),
    ]


def _leaf(x: float, y: float, colour: str, r: float = 5.0) -> Shape:
    """A five-pointed maple leaf centred at (x, y)."""
    tips = ((0, -1), (0.95, -0.31), (0.59, 0.81), (-0.59, 0.81), (-0.95, -0.31))
    points: list[float] = []
    for (tx, ty), (nx, ny) in zip(tips, tips[1:] + tips[:1], strict=True):
        points += [x + r * tx, y + r * ty, x + 0.4 * r * (tx + nx), y + 0.4 * r * (ty + ny)]
    return polygon(points, colour)


def _paulownia() -> Art:
    leaves = [ellipse(x, y, 8, 6, "#22223b") for x, y in ((10, 50), (30, 50), (20, 44))]
    flowers = [circle(20 + dx, 16 + 3 * k, 1.6, "#c77dff") for k in range(4) for dx in (-2, 2)]
    return [*leaves, line((20, 14, 20, 40), DARK_GREEN, 1), *flowers]


def _willow() -> Art:
    rain = [line((x, 6, x - 4, 58), "#adb5bd", 0.6) for x in (6, 14, 22, 30, 38)]
    branches = [line((x, 0, x + 3, 20, x, 40), "#70e000", 1.2) for x in (10, 20, 30)]
    return [*rain, *branches]


PLANTS: tuple[Callable[[], Art], ...] = (
    _pine, _plum, _cherry, _black_clover, _iris, _peony,
    _red_clover, _pampas, _chrysanthemum, _maple, _paulownia, _willow,
)  # fmt: skip
"""Each month's plant, January first."""
SKIES: dict[int, str] = {11: "#495057"}
"""Months whose cards are not on paper: December's is the rain's grey sky (the moon card
has its own red sky, :func:`_moon`)."""


# ---- subjects ----------------------------------------------------------------------------------
def _crane() -> Art:
    return [
        circle(26, 20, 9, RED),
        ellipse(18, 40, 9, 6, WHITE, INK),
        line((22, 36, 26, 26, 24, 18), BLACK, 2),
        circle(24, 17, 2.2, RED),
        line((16, 46, 14, 56), BLACK, 1), line((20, 46, 21, 56), BLACK, 1),
    ]  # fmt: skip


def _curtain() -> Art:
    stripes = [
        polygon((x, 32, x + 4, 32, x + 5, 54, x + 1, 54), RED if k % 2 else WHITE)
        for k, x in enumerate(range(6, 34, 4))
    ]
    return [Shape("rect", 4, 29, 32, 4, 1, DEEP_RED), *stripes]


def _moon() -> Art:
    return [Shape("rect", 1, 1, 38, 36, 3, "#d00000"), circle(20, 19, 11, "#fff3c4"), *_pampas()]


def _phoenix() -> Art:
    tail = [polygon((18, 34, x, 56, x + 5, 54), c) for x, c in ((4, RED), (12, GREEN), (20, GOLD), (28, BLUE))]
    return [*tail, ellipse(20, 28, 8, 6, RED, INK), circle(26, 20, 3.5, GREEN), polygon((29, 20, 34, 21, 29, 22), GOLD)]


def _rain_man() -> Art:
    return [
        polygon((4, 22, 20, 10, 36, 22), GOLD, INK),
        line((20, 22, 20, 32), BLACK, 1),
        polygon((14, 32, 26, 32, 28, 52, 12, 52), DEEP_RED),
        circle(20, 28, 3, "#ffddd2"),
        Shape("rect", 13, 52, 14, 3, 1, BLACK),
    ]  # fmt: skip


def _bird(x: float, y: float, body: str, head: str, beak: str = GOLD) -> Art:
    """A small perched bird facing right, its body centred at (x, y)."""
    return [
        polygon((x - 6, y, x - 11, y + 4, x - 5, y + 3), body),
        ellipse(x, y, 6, 4, body, INK),
        circle(x + 5, y - 3, 3, head),
        polygon((x + 7.5, y - 4, x + 11, y - 3, x + 7.5, y - 2), beak),
        circle(x + 6, y - 3.5, 0.7, BLACK),
    ]


def _warbler() -> Art:
    return _bird(20, 40, "#8a9a3b", "#a7c957")


def _cuckoo() -> Art:
    crescent = [circle(28, 14, 6, GOLD), circle(31, 12, 5, PAPER)]
    wings = polygon((10, 36, 20, 28, 30, 36, 20, 34), "#343a40")
    return [*crescent, wings, *_bird(20, 38, "#343a40", "#495057")]


def _bridge() -> Art:
    planks = [
        polygon((x, y, x + 10, y - 4, x + 12, y, x + 2, y + 4), "#a47148", INK)
        for x, y in ((2, 46), (12, 40), (22, 34))
    ]
    return planks


def _butterflies() -> Art:
    art: Art = []
    for x, y, colour in ((12, 16, GOLD), (28, 22, "#4cc9f0")):
        art += [ellipse(x - 3, y - 2, 3, 4, colour, INK), ellipse(x + 3, y - 2, 3, 4, colour, INK)]
        art += [ellipse(x - 2.5, y + 3, 2, 2.5, colour, INK), ellipse(x + 2.5, y + 3, 2, 2.5, colour, INK)]
        art.append(line((x, y - 5, x, y + 5), BLACK, 1))
    return art


def _boar() -> Art:
    return [
        ellipse(18, 46, 11, 6, "#7f5539", INK),
        polygon((27, 42, 36, 46, 28, 50), "#7f5539", INK),
        *(line((x, 50, x, 57), BLACK, 1.5) for x in (11, 16, 21, 25)),
        line((33, 47, 35, 44), WHITE, 1),
    ]  # fmt: skip


def _geese() -> Art:
    return [polygon((x - 5, y - 3, x, y, x + 5, y - 3, x, y + 2), BLACK) for x, y in ((10, 12), (22, 8), (32, 16))]


def _sake_cup() -> Art:
    return [
        polygon((8, 40, 32, 40, 26, 50, 14, 50), "#c1121f", INK),
        Shape("rect", 17, 50, 6, 3, 0, "#c1121f"),
        Shape("rect", 13, 53, 14, 2, 1, "#c1121f"),
        circle(20, 44, 2.5, GOLD),
    ]  # fmt: skip


def _deer() -> Art:
    return [
        ellipse(18, 46, 9, 5, "#b08968", INK),
        line((24, 43, 28, 34), "#b08968", 3),
        ellipse(29, 32, 3.5, 2.2, "#b08968", INK),
        line((28, 30, 26, 24, 23, 22), BROWN, 1), line((26, 24, 29, 21), BROWN, 1),
        *(line((x, 50, x, 57), "#7f5539", 1.2) for x in (12, 16, 21, 24)),
    ]  # fmt: skip


def _swallow() -> Art:
    return [
        polygon((8, 40, 2, 50, 12, 43), BLACK),
        polygon((8, 40, 9, 52, 14, 43), BLACK),
        polygon((10, 36, 22, 24, 30, 30, 18, 42), BLACK),
        ellipse(20, 38, 7, 4, WHITE, BLACK),
        circle(27, 34, 3, BLACK),
        circle(28, 34, 1, RED),
    ]  # fmt: skip


def _ribbon(colour: str, poem: bool) -> Art:
    """A ribbon hung across the plant; a red poem ribbon carries its verse (dark strokes)."""
    band = polygon((12, 10, 24, 10, 28, 54, 16, 54), colour, INK)
    verse = [line((17 + k * 0.3, 18 + 9 * k, 21 + k * 0.3, 18 + 9 * k), BLACK, 1.6) for k in range(4)] if poem else []
    return [band, *verse]


def _rain_ribbon() -> Art:
    zigzag = line((14, 20, 24, 26, 16, 34, 26, 40), RED, 1.5)
    return [*_ribbon(RAIN_RIBBON_COLOUR, poem=False), zigzag]


def _drum() -> Art:
    """December's double junk: the thunder drum and lightning."""
    return [
        circle(20, 26, 9, DEEP_RED, BLACK),
        circle(20, 26, 4, BLACK),
        polygon((26, 36, 32, 44, 28, 44, 34, 56, 24, 46, 28, 46), GOLD, INK),
    ]  # fmt: skip


def _red_paulownia() -> Art:
    """November's double junk: its paulownia leaves in red."""
    return [ellipse(x, y, 8, 6, "#c1121f") for x, y in ((10, 50), (30, 50), (20, 44))]


RED_PAULOWNIA = 41  # November's double junk

SUBJECTS: dict[int, Callable[[], Art]] = {
    0: _crane, 4: _warbler, 8: _curtain, 12: _cuckoo, 16: _bridge, 20: _butterflies,
    24: _boar, 28: _moon, 29: _geese, 32: _sake_cup, 36: _deer, 40: _phoenix,
    RED_PAULOWNIA: _red_paulownia, 44: _rain_man, 45: _swallow, 46: _rain_ribbon, 47: _drum,
}  # fmt: skip
"""The picture of each card that is more than its plant (ribbons other than the rain's are
drawn from their group, :func:`_subject`)."""


def _subject(card: int) -> Art:
    if card in SUBJECTS:
        return SUBJECTS[card]()
    if KIND[card] == Kind.RIBBON:
        group = next(g for g, cards in RIBBON_GROUPS.items() if card in cards)
        return _ribbon(RIBBON_COLOURS[group], poem=group == "red poem")
    return []


# ---- marks --------------------------------------------------------------------------------------
def _month_mark(month: int) -> Art:
    """The month's number in a white disc, top left."""
    return [circle(7, 7, 6, WHITE, INK), Shape("text", 7, 7.5, text=str(month + 1), size=8, bold=True)]


def _bright_seal(card: int) -> Art:
    """The brights' seal, top right: a red disc with a white ring (grey for the rain man)."""
    colour = RAIN_SEAL if card == RAIN_BRIGHT else SEAL_RED
    return [circle(32, 8, 6, colour, INK), circle(32, 8, 3.5, colour, WHITE)]


def _double_tag(value: int) -> Art:
    """A gold tag, bottom right, with the card's junk value ("x2")."""
    return [Shape("rect", 22, 47, 16, 11, 3, GOLD, INK), Shape("text", 30, 52.5, text=f"x{value}", size=8, bold=True)]


# ---- faces ----------------------------------------------------------------------------------------
def card_face(card: int) -> Art:
    """Card ``card`` face up, ``CARD_WIDTH`` × ``CARD_HEIGHT`` at the origin."""
    if KIND[card] == Kind.JOKER:
        return joker(card)
    month = int(MONTH[card])
    art = [Shape("rect", 0, 0, CARD_WIDTH, CARD_HEIGHT, 4, SKIES.get(month, PAPER), INK)]
    if card != RED_PAULOWNIA:  # it draws its leaves red instead
        art += PLANTS[month]()
    art += _subject(card)
    art += _month_mark(month)
    if KIND[card] == Kind.BRIGHT:
        art += _bright_seal(card)
    if card in DOUBLE_JUNK:
        art += _double_tag(int(JUNK_VALUE[card]))
    return art


def joker(card: int) -> Art:
    """A joker: black and gold, a star and its junk value."""
    star = [_leaf(20, 22, GOLD, r=9)]
    return [
        Shape("rect", 0, 0, CARD_WIDTH, CARD_HEIGHT, 4, JOKER_BODY, JOKER_GOLD),
        *star,
        Shape("text", CARD_WIDTH / 2, 40, text="JOKER", fill=JOKER_GOLD, size=8, bold=True),
        Shape("text", CARD_WIDTH / 2, 51, text=f"x{int(JUNK_VALUE[card])}", fill=JOKER_GOLD, size=10, bold=True),
    ]


def card_back() -> Art:
    """A card face down: hwatu red with an inner panel."""
    return [
        Shape("rect", 0, 0, CARD_WIDTH, CARD_HEIGHT, 4, BACK, INK),
        Shape("rect", 5, 5, CARD_WIDTH - 10, CARD_HEIGHT - 10, 3, BACK_INNER),
    ]
