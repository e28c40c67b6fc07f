"""The three engines against each other, plus invariants on every step.

The reference engine, the NumPy core and the compiled backend (where numba is installed, as
in CI) play the same random legal actions from the same decks; at every step they must
agree on every state field, the legal actions, the events and the payments, and the two
batch backends on every array they hold. The default run plays 2,000 hands per (preset x
players x jokers), ``matgo`` included; ``-m slow`` plays 50,000.
"""

from __future__ import annotations

import numpy as np
import pytest
from lockstep import play_lockstep

from gostop_env.core import GameBatch, Rules, random_legal_actions

CONFIGS = [(preset, players, jokers) for preset in ("seed", "korean") for players in (2, 3) for jokers in (0, 2)] + [
    ("matgo", 2, 2)
]
VARIANTS = [
    dict(choice_rule="always", steal_choice="highest", jokers=1),
    dict(target=3, jokers=1, ja_ppuk="any_turn"),
    # §15's options on either player count, other values than matgo's
    dict(
        jokers=1,
        bonus_steal=True,
        first_ppuk_chips=3,
        consecutive_ppuk=True,
        three_ppuk_chips=5,
        first_ttadak_chips=2,
        chongtong_chips=7,
        layout_four="nagari",
    ),
    dict(jokers=2, first_ppuk_chips=4, three_ppuk_chips=9, layout_four="dealer_wins", steal_choice="highest"),
]


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


@pytest.mark.parametrize("preset,players,jokers", [("seed", 2, 2), ("korean", 3, 1)])
def test_remembered_pile_readings_follow_every_pile_change(preset, players, jokers):
    """``ReferenceGame.reading`` remembers a seat's reading until its pile changes (captures,
    jokers, steals): after every step it equals a fresh reading of the pile."""
    from gostop_env.core import ReferenceGame
    from gostop_env.core.deck import shuffled_decks
    from gostop_env.core.scoring import read_pile

    rules = Rules.preset(preset, players=players, jokers=jokers)
    rng = np.random.default_rng(7)
    steals = 0
    for deck in shuffled_decks(rules, rng, 300):
        game = ReferenceGame(rules, deck)
        while not game.done:
            legal = game.legal_actions()
            events = game.step(legal[int(rng.integers(len(legal)))])
            steals += sum(len(cards) for row in events.stolen for cards in row)
            for seat in range(players):
                reading = game.reading(seat)
                assert reading == read_pile(game.piles[seat], rules)
                parts = reading.bright_points + reading.animal_points + reading.ribbon_points + reading.junk_points
                assert parts == reading.score
    assert steals > 0  # the steals' pile changes were exercised
