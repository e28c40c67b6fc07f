"""The compiled greedy (``gostop.agents.compiled_greedy``) held equal to :class:`Greedy`:
decision by decision on the states random and greedy play reach, and hand by hand when
``play_out`` takes the compiled path."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PRESETS, needs_numba

from gostop.agents import AlwaysStop, Greedy, SimpleGreedy, Threshold, make_agent
from gostop.agents.match import play_out
from gostop_env.core import Rules, batch_class, random_legal_actions
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.state import STATE_FIELDS
from gostop_env.policy import observe

pytestmark = needs_numba

GO_RULES = (AlwaysStop(), Threshold(), Threshold(score_below=9, max_gos=2, min_stock=3, opponent_margin=2))


def _compiled():
    from gostop.agents import compiled_greedy

    return compiled_greedy


@pytest.mark.parametrize(("preset", "players"), [(p, n) for p in PRESETS for n in (2, 3)] + [("matgo", 2)])
@pytest.mark.parametrize("go_stop", GO_RULES, ids=["stop", "always-go", "threshold"])
def test_compiled_greedy_decides_as_greedy_at_every_state(preset, players, go_stop):
    cg, rules = _compiled(), Rules.preset(preset, players=players)
    greedy = Greedy(go_stop=go_stop, rules=rules)
    params = np.stack([cg.seat_parameters(greedy)] * players)
    rng = np.random.default_rng(players)
    batch = batch_class("numba")(rules, shuffled_decks(rules, rng, 300))
    decisions = 0
    while not batch.done.all():
        live = np.flatnonzero(~batch.done)
        wanted = greedy(observe(greedy, batch, live, batch.seat[live]), batch.legal_action_mask()[live], rng)
        assert (cg.greedy_actions(batch, params)[live] == wanted).all()
        decisions += live.size
        actions = np.full(len(batch), -1)  # half greedy's moves, half random: states of both kinds
        actions[live] = np.where(rng.random(live.size) < 0.5, wanted, random_legal_actions(batch.legal_bits, rng)[live])
        batch.step(actions)
    assert decisions > 5000


@pytest.mark.parametrize("backend", ["numba", "numba-parallel"])
@pytest.mark.parametrize(("preset", "players"), [("seed", 2), ("korean", 3), ("matgo", 2)])
def test_compiled_play_out_plays_the_same_hands(backend, preset, players):
    rules = Rules.preset(preset, players=players)
    seats = [Greedy(go_stop=GO_RULES[s % 3], rules=rules) for s in range(players)]
    decks = shuffled_decks(rules, np.random.default_rng(9), 400)
    plain = play_out(batch_class("numpy")(rules, decks, carry=1), seats, np.random.default_rng(0))
    fast = batch_class(backend)(rules, decks, carry=1)
    assert _compiled().compiled_seats(fast, seats) is not None
    play_out(fast, seats, np.random.default_rng(0))
    for name in STATE_FIELDS:
        assert (getattr(fast, name) == getattr(plain, name)).all(), name
    assert (fast.legal_action_mask() == plain.legal_action_mask()).all()


def test_only_exact_greedy_with_a_simple_go_stop_rule_is_compiled():
    cg, rules = _compiled(), Rules()
    batch = batch_class("numba")(rules, shuffled_decks(rules, np.random.default_rng(0), 2))
    greedy = Greedy(rules=rules)
    assert cg.compiled_seats(batch, [greedy, greedy]) is not None
    for other in (SimpleGreedy(rules=rules), make_agent("greedy:stop=ev:n=2"), make_agent("random")):
        assert cg.compiled_seats(batch, [greedy, other]) is None
    assert (
        cg.compiled_seats(
            batch_class("numpy")(rules, shuffled_decks(rules, np.random.default_rng(0), 2)), [greedy, greedy]
        )
        is None
    )
