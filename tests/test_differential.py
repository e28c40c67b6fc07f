"""The three engines against each other, plus invariants on every step.

The reference engine, the NumPy core and the compiled backend (where numba is installed, as
in CI) play the same random legal actions from the same decks; at every step they must
agree on every state field, the legal actions, the events and the payments, and the two
batch backends on every array they hold. The default run plays 2,000 hands per (preset x
players x jokers); ``-m slow`` plays 50,000.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import BACKENDS, check_invariants

from gostop_env.core import GameBatch, ReferenceGame, Rules, random_legal_actions
from gostop_env.core.batch import STATE_FIELDS, batch_class
from gostop_env.core.cards import bits
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.events import BatchEvents

CONFIGS = [(preset, players, jokers) for preset in ("seed", "korean") for players in (2, 3) for jokers in (0, 2)]
VARIANTS = [dict(choice_rule="always", steal_choice="highest", jokers=1), dict(target=3, jokers=1, ja_ppuk="any_turn")]
MAX_DECISIONS = 120  # a hand has at most ~3 decisions per card; far fewer in practice


def reference_rows(refs: list[ReferenceGame]) -> list[tuple]:
    rows = []
    for g in refs:
        mask = g.legal_action_mask()
        rows.append(
            (
                g.seat,
                int(g.phase),
                bits(np.flatnonzero(mask[:64])),
                bits(np.flatnonzero(mask[64:])),
                tuple(bits(h) for h in g.hands),
                bits(g.layout),
                bits(g.taken),
                tuple(bits(p) for p in g.piles),
                tuple(g.stock),
                tuple(bits(r & h) for r, h in zip(g.revealed, g.hands)),
                tuple(g.scores()),
                tuple(g.gos),
                tuple(g.go_scores),
                tuple(g.shakes),
                tuple(g.bombs),
                tuple(g.pass_tokens),
                tuple(g.turns),
                tuple(sorted(g.stack_owner.items())),
                g.result,
                g.winner,
                tuple(g.payments),
                g.next_carry,
            )
        )
    return rows


def batch_rows(b: GameBatch) -> list[tuple]:
    pos, stock = b.stock_pos.tolist(), b.stock.tolist()
    owners, turns = b.stack_owner.tolist(), b.stack_turn.tolist()
    cols = [b.seat.tolist(), b.phase.tolist(), b.legal_bits[:, 0].tolist(), b.legal_bits[:, 1].tolist()]
    rows = []
    seats = [b.hands.tolist(), b.layout.tolist(), b.piles.tolist(), (b.revealed & b.hands).tolist()]
    taken = b.taken.tolist()
    counters = [x.tolist() for x in (b.scores, b.gos, b.go_scores, b.shakes, b.bombs, b.pass_tokens, b.turns)]
    tail = [b.result.tolist(), b.winner.tolist(), b.payments.tolist(), b.next_carry.tolist()]
    for i in range(len(b)):
        stacks = tuple((m, (owners[i][m], turns[i][m])) for m in range(12) if owners[i][m] >= 0)
        rows.append(
            (
                cols[0][i],
                cols[1][i],
                cols[2][i],
                cols[3][i],
                tuple(seats[0][i]),
                seats[1][i],
                taken[i],
                tuple(seats[2][i]),
                tuple(c for c in stock[i][pos[i] : b.stock_len[i]]),
                tuple(seats[3][i]),
                *(tuple(c[i]) for c in counters),
                stacks,
                tail[0][i],
                tail[1][i],
                tuple(tail[2][i]),
                tail[3][i],
            )
        )
    return rows


def same_arrays(batches: list[GameBatch], events: list[BatchEvents]) -> None:
    """The batch backends hold equal arrays: every state field and this step's events."""
    for batch, step in zip(batches[1:], events[1:]):
        for name in STATE_FIELDS:
            assert (getattr(batch, name) == getattr(batches[0], name)).all(), (batch.backend, name)
        for name in ("counts", "captured", "stolen", "payments"):
            assert (getattr(step, name) == getattr(events[0], name)).all(), (batch.backend, name)
        assert (batch.legal_bits == batches[0].legal_bits).all(), batch.backend


def play_lockstep(rules: Rules, hands: int, seed: int, backends: tuple[str, ...] = BACKENDS) -> np.ndarray:
    """Play ``hands`` random hands on every engine, comparing everything; return the results."""
    rng = np.random.default_rng(seed)
    decks = shuffled_decks(rules, rng, hands)
    batches = [batch_class(b)(rules, decks) for b in backends]
    batch = batches[0]
    refs = [ReferenceGame(rules, d) for d in decks]
    for i, ref in enumerate(refs):
        assert batch.deal_events.game(i).as_tuple() == ref.deal_events.as_tuple(), f"deal of game {i}"
    same_arrays(batches, [b.deal_events for b in batches])
    for decision in range(MAX_DECISIONS + 1):
        check_invariants(batch, rules)
        mismatched = [i for i, (x, y) in enumerate(zip(reference_rows(refs), batch_rows(batch))) if x != y]
        first = mismatched[0] if mismatched else None
        assert not mismatched, f"step {decision}, game {first}: {refs[first].snapshot()} vs {batch.snapshot(first)}"
        if batch.done.all():
            return batch.result
        assert decision < MAX_DECISIONS, "a hand did not end within the decision bound"
        actions = random_legal_actions(batch.legal_bits, rng, "numpy")
        events = [b.step(actions) for b in batches]
        same_arrays(batches, events)
        for i in np.flatnonzero(actions >= 0):
            ref_events = refs[i].step(int(actions[i]))
            assert ref_events.as_tuple() == events[0].game(i).as_tuple(), f"events of game {i} at step {decision}"
            assert sum(ref_events.payments) == 0


@pytest.mark.parametrize("preset,players,jokers", CONFIGS)
def test_core_matches_reference(preset, players, jokers):
    rules = Rules.preset(preset, players=players, jokers=jokers)
    results = play_lockstep(rules, 2000, seed=CONFIGS.index((preset, players, jokers)))
    assert (results > 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("preset,players,jokers", CONFIGS)
def test_core_matches_reference_long(preset, players, jokers):
    rules = Rules.preset(preset, players=players, jokers=jokers)
    for part in range(10):
        play_lockstep(rules, 5000, seed=1000 + part)


def test_same_seed_same_hands():
    rules = Rules.preset("korean", players=3, jokers=1)
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(9)
        batch = GameBatch.from_seed(rules, rng, 64)
        trace = []
        while not batch.done.all():
            actions = random_legal_actions(batch.legal_bits, rng)
            trace.append(actions)
            batch.step(actions)
        runs.append((np.stack(trace), batch.payments.copy()))
    assert (runs[0][0] == runs[1][0]).all() and (runs[0][1] == runs[1][1]).all()


@pytest.mark.parametrize("players", (2, 3))
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_core_matches_reference_on_option_variants(variant, players):
    rules = Rules.preset("seed", players=players, **VARIANTS[variant])
    play_lockstep(rules, 500, seed=100 + variant)
