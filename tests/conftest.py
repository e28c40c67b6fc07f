"""Shared helpers: run one scenario on both engines in lock-step."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small torch nets run far faster on one thread

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from gostop_env.core import GameBatch, ReferenceGame, Rules
from gostop_env.core.backends import available_backends
from gostop_env.core.bitboard import bit
from gostop_env.core.deck import DEAL_PACKETS, DEALT, cards_in_play
from gostop_env.core.position import Position
from gostop_env.core.state import STATE_FIELDS

PRESETS = ("seed", "korean")

# Property tests: the same examples on every run (derandomized, no example database), no
# per-example deadline (CI machines are busy); HYPOTHESIS_PROFILE=deep searches longer.
settings.register_profile(
    "gostop",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile("deep", parent=settings.get_profile("gostop"), derandomize=False, max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gostop"))


BACKENDS = available_backends()[:2]
"""The batch backends every scenario runs on: the NumPy core, and the compiled one (one
thread; the threaded loops are held equal in ``test_backends.py``) where numba is
installed, as it is in CI (``.ci/run`` installs the ``fast`` extra)."""
needs_numba = pytest.mark.skipif(len(BACKENDS) < 2, reason='needs numba: pip install "gostop[fast]" (CI installs it)')


@pytest.fixture(autouse=True)
def threads_at_every_batch_size(monkeypatch):
    """``numba-parallel`` runs a batch under ``ParallelGameBatch.parallel_from`` games on one
    thread, and the tests' batches are small: here it spreads every batch over the threads,
    so that the threaded loops are what the tests hold equal to the other engines
    (``test_backends.py`` checks the threshold itself)."""
    if "numba-parallel" in available_backends():
        from gostop_env.core.compiled import ParallelGameBatch

        monkeypatch.setattr(ParallelGameBatch, "parallel_from", 0)


class Both:
    """A reference game and a one-game batch on every backend, stepped together and compared
    at every step (``batch`` is the NumPy core's)."""

    def __init__(self, ref: ReferenceGame, batches: list[GameBatch]):
        self.ref, self.batches, self.batch = ref, batches, batches[0]
        for batch in batches:
            assert batch.deal_events.game(0).as_tuple() == ref.deal_events.as_tuple(), batch.backend
        self.check()

    def check(self) -> None:
        a = self.ref.snapshot()
        for batch in self.batches:
            b = batch.snapshot(0)
            diffs = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
            assert not diffs, f"engines disagree (reference, {batch.backend}): {diffs}"
            assert (batch.legal_action_mask()[0] == self.ref.legal_action_mask()).all(), batch.backend
        for name in STATE_FIELDS:  # the backends agree on every field, scratch ones included
            for batch in self.batches[1:]:
                assert (getattr(batch, name) == getattr(self.batch, name)).all(), (name, batch.backend)

    def step(self, *actions: int):
        """Apply actions in turn on every engine; return the reference's events of the last."""
        events = None
        for action in actions:
            events = self.ref.step(action)
            for batch in self.batches:
                batch_events = batch.step([action]).game(0)
                assert events.as_tuple() == batch_events.as_tuple(), (batch.backend, events, batch_events)
            self.check()
        return events

    def __getattr__(self, name):
        return getattr(self.ref, name)


def from_deck(rules: Rules, deck, carry: int = 0) -> Both:
    return Both(ReferenceGame(rules, deck, carry), [GameBatch.from_decks(rules, [deck], carry, b) for b in BACKENDS])


def from_position(rules: Rules, position: Position) -> Both:
    batches = [GameBatch.from_positions(rules, [position], b) for b in BACKENDS]
    return Both(ReferenceGame.from_position(rules, position), batches)


def stacked_deck(rules: Rules, hands: dict[int, list[int]] | None = None, layout=(), stock=()) -> list[int]:
    """A deck order dealing the given cards to those hands, the layout and the top of the stock;
    every other place gets the remaining cards, months interleaved (0, 4, 8, ..., 1, 5, ...)."""
    hands = hands or {}
    slots = {seat: [] for seat in range(-1, rules.players)}
    for seat, start, stop in DEAL_PACKETS[rules.players]:
        slots[seat].extend(range(start, stop))
    deck = [None] * rules.deck_size
    wanted = {seat: list(cards) for seat, cards in hands.items()} | {-1: list(layout)}
    for seat, cards in wanted.items():
        for place, card in zip(slots[seat], cards):
            deck[place] = card
    for offset, card in enumerate(stock):
        deck[DEALT[rules.players] + offset] = card
    spread = sorted(cards_in_play(rules).tolist(), key=lambda c: (c % 4, c))
    rest = iter(c for c in spread if c not in set(deck))
    return [c if c is not None else next(rest) for c in deck]


def position(rules: Rules, hands, layout=(), stock=(), piles=None, rest_to="stock", **kw) -> Position:
    """A position with the given cards; every card not named goes to the bottom of the stock
    (``rest_to="stock"``) or to seat ``rest_to``'s capture pile."""
    hands = [list(hands.get(s, [])) for s in range(rules.players)] if isinstance(hands, dict) else hands
    piles = [list(piles.get(s, [])) for s in range(rules.players)] if isinstance(piles, dict) else piles
    piles = piles or [[] for _ in range(rules.players)]
    named = {c for h in hands for c in h} | set(layout) | set(stock) | {c for p in piles for c in p}
    rest = [c for c in cards_in_play(rules).tolist() if c not in named]
    stock = list(stock)
    if rest_to == "stock":
        stock += rest
    else:
        piles[rest_to] = piles[rest_to] + rest
    return Position(hands=hands, layout=list(layout), stock=stock, piles=piles, **kw)


@pytest.fixture(params=PRESETS)
def preset(request) -> str:
    return request.param


def rules_of(preset: str, players: int = 2, **kw) -> Rules:
    return Rules.preset(preset, players=players, **kw)


def np_rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.fixture(params=(2, 3))
def players(request) -> int:
    return request.param


def check_invariants(b: GameBatch, rules: Rules) -> None:
    """Every card in exactly one place (cards taken mid-turn count as one); a decision always
    has a legal action; payments are zero-sum."""
    stock_left = np.where(np.arange(b.stock.shape[1]) >= b.stock_pos[:, None], b.stock, -1)
    stock_bits = np.bitwise_or.reduce(bit(stock_left), axis=1)
    places = np.concatenate([b.hands, b.piles, b.layout[:, None], b.taken[:, None], stock_bits[:, None]], axis=1)
    assert (np.bitwise_or.reduce(places, axis=1) == np.uint64((1 << rules.deck_size) - 1)).all()
    assert (np.bitwise_count(places).sum(axis=1) == rules.deck_size).all()
    live = ~b.done
    assert (b.legal_bits[live] != 0).any(axis=1).all()
    assert (b.legal_bits[~live] == 0).all()
    assert (b.payments.sum(axis=1) == 0).all()


def hide_differently(batch: GameBatch, viewer: np.ndarray, rng: np.random.Generator) -> GameBatch:
    """A copy in which each game's hidden cards are rearranged: one unshaken card of another
    hand swapped with a stock card, and the rest of the stock shuffled."""
    other = batch.clone()
    hands, stocks = other.hands.copy(), other.stock.copy()
    players = batch.rules.players
    for i in range(len(batch)):
        pos, length = int(other.stock_pos[i]), int(other.stock_len[i])
        stock = stocks[i, pos:length].copy()
        opponent = (viewer[i] + 1 + rng.integers(players - 1)) % players
        hidden = [c for c in range(50) if (int(hands[i, opponent]) & ~int(other.revealed[i, opponent])) >> c & 1]
        if hidden and stock.size:
            card, k = int(rng.choice(hidden)), int(rng.integers(stock.size))
            hands[i, opponent] ^= np.uint64((1 << card) | (1 << int(stock[k])))
            stock[k] = card
        stocks[i, pos:length] = rng.permutation(stock)
    other.replace_hidden(hands, stocks)
    return other
