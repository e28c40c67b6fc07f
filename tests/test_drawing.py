"""Card faces and table images (gostop_env.drawing): readable faces, frames of one shape that
follow the state, and nothing drawn that the viewing seat may not see."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import hide_differently

pytest.importorskip("PIL", reason="rgb_array rendering needs Pillow (the draw extra)")

from gostop_env import gostop_v0  # noqa: E402
from gostop_env.core import GameBatch, Rules, random_legal_actions  # noqa: E402
from gostop_env.core.cards import DOUBLE_JUNK, JUNK_VALUE, KIND, MONTH, NUM_CARDS, Kind, card_name  # noqa: E402
from gostop_env.drawing import (  # noqa: E402
    CARD_HEIGHT,
    CARD_WIDTH,
    TABLE_HEIGHT,
    TABLE_WIDTH,
    card_face,
    card_picture,
    deck,
    table,
    to_rgb,
    to_svg,
)

FRAME = (640, 960, 3)
SVG = "{http://www.w3.org/2000/svg}"
DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_cards_look_alike_only_when_the_rules_treat_them_alike_and_none_looks_like_the_back():
    """Two faces are the same picture exactly when the cards share a name (the two plain
    junk of a month, which every rule treats alike); the back looks like no face."""
    faces = [to_rgb(card_picture(c)).tobytes() for c in range(NUM_CARDS)]
    for a in range(NUM_CARDS):
        for b in range(a + 1, NUM_CARDS):
            assert (faces[a] == faces[b]) == (card_name(a) == card_name(b)), (card_name(a), card_name(b))
    assert len(set(faces)) == len({card_name(c) for c in range(NUM_CARDS)}) == 39
    assert to_rgb(card_picture(None)).tobytes() not in faces


def test_faces_stay_on_the_card_and_carry_their_month_and_kind_marks():
    """Every shape of a face lies on the card; each month card shows its month's number in
    the corner at a readable size; brights carry the seal, double junk its x2 tag."""
    for card in range(NUM_CARDS):
        shapes = card_face(card)
        for s in shapes:
            xs, ys = _extent(s)
            assert min(xs) >= 0 and max(xs) <= CARD_WIDTH and min(ys) >= 0 and max(ys) <= CARD_HEIGHT, (card, s)
        texts = [s for s in shapes if s.kind == "text"]
        if KIND[card] == Kind.JOKER:
            assert [t.text for t in texts] == ["JOKER", f"x{JUNK_VALUE[card]}"]
            continue
        month = [t for t in texts if t.text == str(MONTH[card] + 1)]
        assert len(month) == 1 and month[0].size >= 8 and month[0].x < 10 and month[0].y < 10
        assert any(t.text == "x2" for t in texts) == (card in DOUBLE_JUNK)
        seals = [s for s in shapes if s.kind == "circle" and s.x > 30 and s.y < 10]
        assert bool(seals) == (KIND[card] == Kind.BRIGHT)


def _extent(s) -> tuple[list[float], list[float]]:
    """The x and y ranges a shape covers (its bounding box's corners)."""
    if s.kind in ("polygon", "line"):
        corners = s.corners()
        return [x for x, _ in corners], [y for _, y in corners]
    if s.kind == "rect":
        return [s.x, s.x + s.w], [s.y, s.y + s.h]
    if s.kind in ("circle", "ellipse"):
        rx, ry = (s.r, s.r) if s.kind == "circle" else (s.w, s.h)
        return [s.x - rx, s.x + rx], [s.y - ry, s.y + ry]
    return [s.x], [s.y]


def test_svg_groups_each_card_with_its_name_and_the_docs_deck_is_current():
    """Each card of a drawing is one <g class="card"> naming it; docs/images/deck.svg is what
    ``deck()`` draws today (regenerate: python -m gostop_env.drawing docs/images/deck.svg)."""
    svg = to_svg(deck())
    root = ET.fromstring(svg)
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "card"]
    assert [g.get("data-card") for g in groups] == [*map(str, range(NUM_CARDS)), "back"]
    assert [g.find(f"{SVG}title").text for g in groups[:NUM_CARDS]] == [card_name(c) for c in range(NUM_CARDS)]
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {str(m) for m in range(1, 13)} <= set(texts) and texts.count("JOKER") == 2 and "x2" in texts
    assert (DOCS / "images" / "deck.svg").read_text() == svg + "\n"


@pytest.mark.parametrize("players", [2, 3])
def test_frames_keep_their_shape_and_follow_the_state(players):
    rules = Rules(players=players)
    batch, rng = GameBatch.from_seed(rules, 4, 1), np.random.default_rng(0)
    frames = []
    while not batch.done[0]:
        frames.append(to_rgb(table(batch.snapshot(0), players, int(batch.seat[0]))))
        batch.step(random_legal_actions(batch.legal_bits, rng))
    frames.append(to_rgb(table(batch.snapshot(0), players, 0)))
    assert all(f.shape == FRAME and f.dtype == np.uint8 for f in frames)
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False))


def test_a_frame_shows_nothing_hidden_from_its_viewer_and_the_omniscient_one_does():
    rules, rng = Rules(), np.random.default_rng(3)
    batch = GameBatch.from_seed(rules, 9, 16)
    for _ in range(6):
        batch.step(random_legal_actions(batch.legal_bits, rng))
    viewers = batch.seat.astype(np.int64)
    changed = hide_differently(batch, viewers, rng)
    differ = 0
    for i in np.flatnonzero(~batch.done):
        seen = [to_rgb(table(b.snapshot(int(i)), 2, int(viewers[i]))) for b in (batch, changed)]
        assert np.array_equal(*seen)
        everything = [to_rgb(table(b.snapshot(int(i)), 2, None)) for b in (batch, changed)]
        differ += not np.array_equal(*everything)
    assert differ > 0


def test_pile_labels_give_each_kinds_points_under_the_tables_rules():
    """A pile of three brights, five animals with the godori birds and nine junk worth ten:
    its labels give each group's count and the points it scores (korean rules)."""
    rules = Rules.preset("korean")
    pile = [0, 8, 28, 4, 12, 29, 16, 20, *range(2, 24, 4)[:5], 3, 7, 11, 41]
    snap = GameBatch.from_seed(rules, 0, 1).snapshot(0)
    snap["piles"] = [pile, []]
    labels = {s.text for s in table(snap, 2, 0, rules).shapes if s.kind == "text"}
    assert {"brights 3: 3 pts", "animals 5: 6 pts", "ribbons 0", "junk 9 (10): 1 pt"} <= labels


def test_envs_render_rgb_array_and_the_oracle_view_shows_every_hand():
    frames = {}
    for encoding in ("vector", "oracle"):
        env = gostop_v0.env(render_mode="rgb_array", encoding=encoding)
        env.reset(seed=2)
        frames[encoding] = env.render()
        assert frames[encoding].shape == FRAME
    assert not np.array_equal(frames["vector"], frames["oracle"])


def _overlap(a, b) -> bool:
    return abs(a.x - b.x) < CARD_WIDTH and abs(a.y - b.y) < CARD_HEIGHT


@pytest.mark.parametrize("players", [2, 3])
def test_cards_stay_on_the_table_and_overlap_only_within_a_fanned_group(players):
    """Over random hands of either preset, at every step, from every seat and face up: every
    card lies inside the picture, and two cards overlap only in the same fanned group (a hand,
    or one kind of one pile); every group of a pile is labelled with its count."""
    rng = np.random.default_rng(players)
    for preset in ("seed", "korean"):
        rules = Rules.preset(preset, players=players, jokers=2)
        batch = GameBatch.from_seed(rules, rng, 12)
        while not batch.done.all():
            for i in range(len(batch)):
                for viewer in (*range(players), None):
                    drawing = table(batch.snapshot(i), players, viewer)
                    cards = drawing.cards
                    assert all(
                        0 <= c.x <= TABLE_WIDTH - CARD_WIDTH and 0 <= c.y <= TABLE_HEIGHT - CARD_HEIGHT for c in cards
                    )
                    clashes = [
                        (a, b)
                        for k, a in enumerate(cards)
                        for b in cards[k + 1 :]
                        if _overlap(a, b) and a.group != b.group
                    ]
                    assert not clashes, clashes[0]
                    piles = batch.snapshot(i)["piles"]
                    labels = {s.text.split(":")[0] for s in drawing.shapes if s.kind == "text"}
                    assert all(f"brights {sum(KIND[c] == 0 for c in pile)}" in labels for pile in piles)
            batch.step(random_legal_actions(batch.legal_bits, rng))
