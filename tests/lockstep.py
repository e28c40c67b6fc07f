"""Playing random hands on every engine in lock-step, comparing everything at every step:
the helpers of ``test_differential.py`` and ``test_backends.py``."""

from __future__ import annotations

import numpy as np
from conftest import BACKENDS, check_invariants

from gostop_env.core import GameBatch, ReferenceGame, Rules, random_legal_actions
from gostop_env.core.batch import batch_class
from gostop_env.core.cards import bits
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.events import BatchEvents
from gostop_env.core.state import STATE_FIELDS

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
                tuple(g.ppuks),
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
    counters = [x.tolist() for x in (b.scores, b.gos, b.go_scores, b.shakes, b.bombs, b.pass_tokens, b.turns, b.ppuks)]
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
