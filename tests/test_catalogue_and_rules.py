"""§1 catalogue, §2 deck handling, §12 rule options and §13 worked checks."""

from __future__ import annotations

import numpy as np
import pytest

from gostop_env.core import GameBatch, ReferenceGame, Rules
from gostop_env.core import cards as C
from gostop_env.core.deck import decks_from_seeds, shuffled_decks, validate_deck, void_month
from gostop_env.core.scoring import read_pile, read_piles

# ---- §1 and §13: the deck -----------------------------------------------------------------


def test_deck_counts_match_the_worked_check():
    kinds = C.KIND[:48]
    assert [(kinds == k).sum() for k in (C.Kind.BRIGHT, C.Kind.ANIMAL, C.Kind.RIBBON, C.Kind.JUNK)] == [5, 9, 10, 24]
    assert all((C.MONTH[:48] == m).sum() == 4 for m in range(12))
    assert C.JUNK_VALUE[:48].sum() == 26
    assert C.JUNK_VALUE[:49].sum() == 28 and C.JUNK_VALUE.sum() == 31


def test_groups_birds_and_special_cards():
    assert C.RIBBON_GROUPS == {"red poem": (1, 5, 9), "blue": (21, 33, 37), "plain red": (13, 17, 25)}
    assert C.GODORI_BIRDS == (4, 12, 29) and C.RAIN_BRIGHT == 44
    assert all(C.KIND[c] == C.Kind.ANIMAL for c in C.GODORI_BIRDS)
    assert C.KIND[46] == C.Kind.RIBBON and all(46 not in g for g in C.RIBBON_GROUPS.values())
    assert C.JUNK_VALUE[41] == C.JUNK_VALUE[47] == 2 and C.MONTH[48] == C.MONTH[49] == -1


def test_card_names_are_readable_and_unknown_ids_rejected():
    assert C.card_name(0) == "Jan pine crane" and C.card_name(44) == "Dec rain rain man"
    assert "joker" in C.card_name(49)
    with pytest.raises(ValueError, match="unknown card id 50"):
        C.card_name(50)


# ---- §2 and §3: deck orders ----------------------------------------------------------------


@pytest.mark.parametrize("players,sizes", [(2, (10, 10, 8, 20)), (3, (7, 7, 7, 6, 21))])
def test_deal_sizes(players, sizes):
    rules = Rules(players=players)
    g = ReferenceGame.from_seed(rules, 11)
    assert tuple(len(h) for h in g.hands) + (len(g.layout), len(g.stock)) == sizes


@pytest.mark.parametrize(
    "deck,message",
    [
        (list(range(47)), "47 cards.*must have 48"),
        (list(range(47)) + [46], "duplicate card id\\(s\\) \\[46\\]"),
        (list(range(47)) + [48], "unknown card id\\(s\\) \\[48\\]"),
    ],
)
def test_bad_deck_orders_say_why(deck, message):
    with pytest.raises(ValueError, match=message):
        validate_deck(Rules(), deck)
    with pytest.raises(ValueError, match="game 0: .*" + message):
        GameBatch.from_decks(Rules(), [deck])


def test_seeded_decks_are_reproducible_and_never_void():
    rules = Rules(jokers=2)
    a = shuffled_decks(rules, np.random.default_rng(3), 500)
    b = shuffled_decks(rules, np.random.default_rng(3), 500)
    assert (a == b).all()
    assert all(void_month(rules, d) is None for d in a)
    assert all(sorted(d) == list(range(50)) for d in a)


def test_same_seed_same_hand_in_both_engines():
    rules = Rules.preset("korean", players=3)
    ref = ReferenceGame.from_seed(rules, 42)
    batch = GameBatch.from_seeds(rules, [41, 42])
    assert batch.snapshot(1) == ref.snapshot()
    assert (decks_from_seeds(rules, [42]) == ref.deck).all()


# ---- §12 options and presets -----------------------------------------------------------------


def test_presets_hold_the_table_values():
    seed, korean = Rules.preset("seed"), Rules.preset("korean")
    assert seed == Rules() and seed.target_score == 7 and Rules(players=3).target_score == 3
    assert korean.go_multiplier == "doubling_from_3" and korean.go_bak and korean.bomb_bonus
    assert korean.pi_bak_threshold == 7 and Rules.preset("korean", players=3).pi_bak_threshold == 5
    assert korean.pi_bak_zero_exempt and korean.nagari_compounding and korean.september_dual
    assert not korean.sweep_on_last_turn and korean.last_card_exceptions
    assert Rules.preset("korean", jokers=2).jokers == 2
    assert seed.choice_rule == korean.choice_rule == "distinct" and seed.steal_choice == korean.steal_choice == "lowest"


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(players=4), "'players' must be one of \\[2, 3\\], got 4"),
        (dict(target=0), "'target' must be a positive integer"),
        (dict(jokers=3), "'jokers' must be one of \\[0, 1, 2\\]"),
        (dict(go_multiplier="x"), "'go_multiplier' must be one of"),
        (dict(ja_ppuk="never"), "'ja_ppuk' must be one of"),
        (dict(go_bak="yes"), "'go_bak' must be True or False"),
        (dict(pi_bak_threshold=-1), "'pi_bak_threshold' must be an integer"),
        (dict(choice_rule="never"), "'choice_rule' must be one of"),
        (dict(steal_choice="random"), "'steal_choice' must be one of \\['lowest', 'highest'\\]"),
    ],
)
def test_bad_options_name_the_option_and_what_is_allowed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


def test_unknown_option_and_preset_are_rejected():
    with pytest.raises(ValueError, match="unknown rule option\\(s\\) \\['colour'\\]"):
        Rules.preset("seed", colour="red")
    with pytest.raises(ValueError, match="'preset' must be one of \\['seed', 'korean', 'matgo'\\]"):
        Rules.preset("american")


# ---- §7 and §13: scoring, on both engines' scorers ----------------------------------------------

SCORES = [
    ({0, 8, 28}, 3),
    ({0, 8, 44}, 2),
    ({0, 8, 28, 44}, 4),
    ({0, 8, 28, 40, 44}, 15),
    ({4, 12, 29}, 5),
    ({4, 12, 16, 20, 29}, 6),
    ({16, 20, 24, 32, 36}, 1),
    ({13, 17, 46}, 0),
    ({13, 17, 25}, 3),
    ({1, 5, 9}, 3),
    ({21, 33, 37}, 3),
    ({1, 5, 9, 13, 17}, 4),
    ({41, 47, 2, 3, 6, 7, 10, 11}, 1),
    ({2, 3, 6, 7, 10, 11, 14, 15, 18}, 0),
    ({48, 49, 2, 3, 6, 7, 10}, 1),
    ({0, 8, 28, 4, 12, 29, 1, 5, 9}, 11),
]


@pytest.mark.parametrize("pile,points", SCORES)
@pytest.mark.parametrize("preset", ["seed", "korean"])
def test_worked_score_checks(pile, points, preset):
    rules = Rules.preset(preset)
    assert read_pile(pile, rules).score == points
    assert read_piles(np.array([C.bits(pile)], np.uint64), rules)["score"][0] == points


def test_september_animal_counts_as_junk_only_when_that_scores_higher():
    korean, seed = Rules.preset("korean"), Rules()
    junk9 = {2, 3, 6, 7, 10, 11, 14, 15, 18}
    assert read_pile(junk9 | {32}, korean).score == 2  # junk 11 with card 32 as junk
    assert read_pile(junk9 | {32}, seed).score == 0
    animals = {4, 12, 16, 20, 29, 32}  # godori + 6 animals = 7 beats 6 as junk
    assert read_pile(animals, korean).score == 7 and not read_pile(animals, korean).september_as_junk
    for pile in (junk9 | {32}, animals):
        board = np.array([C.bits(pile)], np.uint64)
        assert read_piles(board, korean)["score"][0] == read_pile(pile, korean).score
