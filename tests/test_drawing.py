"""Card faces and table images (gostop_env.drawing): readable faces, frames of one shape that
follow the state, and nothing drawn that the viewing seat may not see."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import hide_differently

pytest.importorskip("PIL", reason="rgb_array rendering needs Pillow (the draw extra)")

from gostop_env import gostop_v0  # noqa: E402
from gostop_env.core import GameBatch, Rules, random_legal_actions  # noqa: E402
from gostop_env.core.cards import JUNK_VALUE, KIND, MONTH, NUM_CARDS, Kind  # noqa: E402
from gostop_env.drawing import (  # noqa: E402
    CARD_HEIGHT,
    CARD_WIDTH,
    TABLE_HEIGHT,
    TABLE_WIDTH,
    Drawing,
    card_face,
    card_picture,
    table,
    to_rgb,
    to_svg,
)

FRAME = (640, 960, 3)


def test_cards_look_alike_only_when_they_play_alike_and_none_looks_like_the_back():
    faces = [to_rgb(card_picture(c)).tobytes() for c in range(NUM_CARDS)]
    for a in range(NUM_CARDS):
        for b in range(a + 1, NUM_CARDS):
            if faces[a] == faces[b]:  # only two plain junk cards of one month (11 such pairs)
                assert MONTH[a] == MONTH[b] and JUNK_VALUE[a] == JUNK_VALUE[b] == 1 and KIND[a] == Kind.JUNK
    assert len(set(faces)) == 39 and to_rgb(card_picture(None)).tobytes() not in faces


def test_svg_is_well_formed_and_names_each_month_and_the_jokers():
    drawing = Drawing(NUM_CARDS * 44, 70)
    for card in range(NUM_CARDS):
        drawing.add(card_face(card), 44 * card, 5)
    root = ET.fromstring(to_svg(drawing))
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {str(m) for m in range(1, 13)} <= set(texts) and texts.count("JOKER") == 2 and "x2" in texts


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
                    labels = {s.text for s in drawing.shapes if s.kind == "text"}
                    assert all(f"brights {sum(KIND[c] == 0 for c in pile)}" in labels for pile in piles)
            batch.step(random_legal_actions(batch.legal_bits, rng))
