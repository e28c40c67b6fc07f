"""Rule-by-rule scenarios from stacked decks and explicit positions (docs/rules.md §2–§12).

Every scenario runs on every engine in lock-step: the reference, the NumPy core and the
compiled backend where numba is installed (``Both`` compares every state field, mask and
event after each step), and asserts what the rule book says should happen.
Card ids: January 0 bright, 1 red-poem ribbon, 2 and 3 junk; month m's cards are
4(m-1)..4(m-1)+3 (see docs/rules.md §1).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import from_deck, from_position, position, rules_of, stacked_deck

from gostop_env.core import Event, IllegalActionError, Phase, Result, Rules
from gostop_env.core import actions as A

JUNK_15 = [2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30]  # 15 plain junk: 6 points


def choose(card: int) -> int:
    return A.CHOOSE + card


def seats(rules: Rules, cards: list[int]) -> dict[int, list[int]]:
    """Seat 0 holds ``cards``; every other seat one card that matches nothing in play."""
    return {0: cards, 1: [20], 2: [36]} if rules.players == 3 else {0: cards, 1: [20]}


# ---- §2 the deal ----------------------------------------------------------------------


def test_deal_slices_two_players(preset):
    rules = rules_of(preset)
    d = [int(c) for c in np.random.default_rng(5).permutation(48)]
    g = from_deck(rules, d)
    assert g.hands[1] == set(d[0:5] + d[14:19]) and g.hands[0] == set(d[5:10] + d[19:24])
    assert g.layout == set(d[10:14] + d[24:28])
    assert g.stock == d[28:]
    assert [len(h) for h in g.hands] == [10, 10] and len(g.stock) == 20
    assert g.seat == 0 and g.phase == Phase.PLAY


def test_deal_slices_three_players(preset):
    rules = rules_of(preset, players=3)
    d = [int(c) for c in np.random.default_rng(6).permutation(48)]
    g = from_deck(rules, d)
    assert g.hands[1] == set(d[0:4] + d[15:18])
    assert g.hands[2] == set(d[4:8] + d[18:21])
    assert g.hands[0] == set(d[8:12] + d[21:24])
    assert g.layout == set(d[12:15] + d[24:27])
    assert g.stock == d[27:] and [len(h) for h in g.hands] == [7, 7, 7] and len(g.layout) == 6


def test_dealer_moves_first_and_play_passes_in_seat_order():
    rules = rules_of("seed", players=3)
    g = from_deck(rules, stacked_deck(rules))
    starts = []
    while len(starts) < 4:
        if g.phase == Phase.PLAY and (not starts or starts[-1] != (g.seat, g.turns[g.seat])):
            starts.append((g.seat, g.turns[g.seat]))
        g.step(g.legal_actions()[0] if g.phase != Phase.GO_STOP else A.GO)
    assert starts == [(0, 1), (1, 1), (2, 1), (0, 2)]


# ---- §3 before the first turn ---------------------------------------------------------------


def test_joker_on_layout_goes_to_dealer_and_is_replaced():
    rules = Rules(jokers=1)
    g = from_deck(rules, stacked_deck(rules, layout=[48], stock=[5]))
    assert 48 in g.piles[0] and 48 not in g.layout and 5 in g.layout
    assert g.deal_events.count(Event.JOKER, seat=0) == 1
    assert g.stock[0] != 5


def test_joker_replacement_repeats_while_the_replacement_is_a_joker():
    rules = Rules(jokers=2)
    g = from_deck(rules, stacked_deck(rules, layout=[48], stock=[49, 5]))
    assert g.piles[0] == {48, 49} and 5 in g.layout
    assert g.deal_events.count(Event.JOKER, seat=0) == 2


def test_void_deal_is_rejected_for_an_explicit_deck(preset):
    rules = rules_of(preset)
    deck = stacked_deck(rules, layout=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="month 1.*void"):
        from_deck(rules, deck)


def test_void_deal_after_joker_replacement_is_rejected():
    rules = Rules(jokers=1)
    deck = stacked_deck(rules, layout=[0, 1, 2, 48], stock=[3])
    with pytest.raises(ValueError, match="void"):
        from_deck(rules, deck)


def test_chongtong_two_players_pays_five_flat_and_ends_the_carry(preset):
    rules = rules_of(preset)
    g = from_deck(rules, stacked_deck(rules, hands={1: [0, 1, 2, 3]}), carry=3)
    assert g.done and g.result == Result.CHONGTONG and g.winner == 1
    assert g.payments == [-5, 5]
    assert g.deal_events.count(Event.CHONGTONG, seat=1) == 1
    assert g.next_carry == 0


def test_chongtong_three_players_two_holders_net_out():
    rules = rules_of("seed", players=3)
    g = from_deck(rules, stacked_deck(rules, hands={0: [0, 1, 2, 3], 1: [4, 5, 6, 7]}))
    assert g.payments == [5, 5, -10] and g.winner == -1


def test_chongtong_three_holders_nobody_pays():
    rules = rules_of("korean", players=3)
    g = from_deck(rules, stacked_deck(rules, hands={0: [0, 1, 2, 3], 1: [4, 5, 6, 7], 2: [8, 9, 10, 11]}))
    assert g.payments == [0, 0, 0] and g.result == Result.CHONGTONG


def test_chongtong_with_two_months_is_paid_once():
    rules = rules_of("seed")
    g = from_deck(rules, stacked_deck(rules, hands={1: [0, 1, 2, 3, 4, 5, 6, 7]}))
    assert g.payments == [-5, 5]


def test_dealt_stack_is_captured_whole_and_has_no_owner(preset):
    rules = rules_of(preset)
    g = from_deck(rules, stacked_deck(rules, hands={0: [0]}, layout=[1, 2, 3]))
    assert g.stack_owner == {}
    events = g.step(0)
    assert {0, 1, 2, 3} <= events.captured[0]
    assert events.count(Event.STACK_CAPTURE) == 1 and events.count(Event.JA_PPUK) == 0


# ---- §4 a turn: shake, bomb, pass, flip-only, jokers ------------------------------------------


def test_shake_reveals_three_cards_that_stay_in_hand(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0, 1, 2, 8]), layout=[4]))
    assert A.shake_action(0) in g.legal_actions()
    events = g.step(A.shake_action(0))
    assert events.count(Event.SHAKE, seat=0) == 1
    assert g.revealed[0] == {0, 1, 2} and {0, 1, 2} <= g.hands[0]
    assert g.seat == 0 and g.phase == Phase.PLAY and g.shakes[0] == 1
    assert A.shake_action(0) not in g.legal_actions()


def test_shake_and_bomb_are_both_legal_and_shaking_rules_out_the_bomb(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0, 1, 2]), layout=[3]))
    legal = g.legal_actions()
    assert A.shake_action(0) in legal and A.bomb_action(0) in legal
    g.step(A.shake_action(0))
    assert A.bomb_action(0) not in g.legal_actions()


def test_bomb_captures_four_gives_two_pass_tokens_then_flips(preset, players):
    rules = rules_of(preset, players)
    pos = position(rules, seats(rules, [0, 1, 2, 8]), layout=[3, 4, 12], stock=[5], piles={1: [6]})
    g = from_position(rules, pos)
    events = g.step(A.bomb_action(0))
    assert events.captured[0] >= {0, 1, 2, 3, 4, 5}
    assert g.hands[0] == {8} and g.pass_tokens[0] == 2 and g.bombs[0] == 1
    assert events.count(Event.BOMB, seat=0) == 1
    stolen = events.stolen[0][1]
    assert stolen == ({6} if preset == "korean" else set())  # korean bomb also steals


def test_pass_spends_a_token_and_only_flips(preset, players):
    rules = rules_of(preset, players)
    g = from_position(
        rules, position(rules, seats(rules, [8]), layout=[4], stock=[5], pass_tokens=[1] + [0] * (players - 1))
    )
    assert A.PASS in g.legal_actions()
    events = g.step(A.PASS)
    assert g.pass_tokens[0] == 0 and g.hands[0] == {8}
    assert events.captured[0] == {4, 5}


def test_flip_only_turn_needs_no_decision(preset):
    rules = rules_of(preset)
    g = from_position(rules, position(rules, {0: [8, 9], 1: []}, layout=[4], stock=[28, 5]))
    events = g.step(8)
    # seat 1 had no cards: it flipped 5 (taking the Feb animal) without a decision
    assert events.captured[1] == {4, 5}
    assert g.seat == 0 and g.turns == [2, 1] and g.phase == Phase.PLAY


def test_joker_from_hand_goes_to_pile_and_the_stock_card_is_played(preset):
    rules = rules_of(preset, jokers=1)
    g = from_position(rules, position(rules, seats(rules, [48, 8]), layout=[1], stock=[0, 4]))
    events = g.step(48)
    assert events.captured[0] == {48, 0, 1}
    assert events.count(Event.JOKER, seat=0) == 1
    assert 4 in g.layout and g.hands[0] == {8}


def test_joker_from_hand_skips_stock_jokers_on_the_way(preset):
    rules = rules_of(preset, jokers=2)
    g = from_position(rules, position(rules, seats(rules, [48, 8]), layout=[1], stock=[49, 0, 4]))
    events = g.step(48)
    assert events.captured[0] == {48, 49, 0, 1} and events.count(Event.JOKER, seat=0) == 2


def test_flipped_joker_goes_to_pile_and_the_next_card_is_flipped(preset):
    rules = rules_of(preset, jokers=1)
    g = from_position(rules, position(rules, seats(rules, [8]), layout=[1], stock=[48, 0]))
    events = g.step(8)
    assert events.captured[0] == {48, 0, 1} and 8 in g.layout


def test_joker_from_hand_with_an_empty_stock_plays_nothing_more(preset):
    rules = rules_of(preset, jokers=1)
    pos = position(rules, seats(rules, [48, 8]), layout=[1], stock=[], rest_to=1)
    g = from_position(rules, pos)
    events = g.step(48)
    assert events.captured[0] == {48} and g.layout == {1}


def test_flip_is_skipped_when_the_stock_is_empty(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0, 8]), layout=[1], stock=[], rest_to=1))
    events = g.step(0)
    assert events.captured[0] == {0, 1} and g.seat == 1


# ---- §5 matching -------------------------------------------------------------------------------


def test_played_card_with_no_match_is_placed(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[4], stock=[8]))
    events = g.step(0)
    assert g.layout == {0, 4, 8} and events.captured[0] == set()


def test_played_card_pairs_with_the_one_match(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[1], stock=[8]))
    assert g.step(0).captured[0] == {0, 1}


def test_choice_between_two_different_layout_cards(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[1, 2], stock=[8]))
    g.step(0)
    assert g.phase == Phase.CHOOSE_HAND and g.legal_actions() == [choose(1), choose(2)]
    events = g.step(choose(1))
    assert events.captured[0] == {0, 1} and g.layout == {2, 8}


def test_two_alike_layout_cards_take_the_lower_id_without_a_choice(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[2, 3], stock=[8]))
    events = g.step(0)
    assert events.captured[0] == {0, 2} and g.layout == {3, 8}


def test_choice_rule_always_offers_the_choice():
    rules = Rules(choice_rule="always")
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[2, 3], stock=[8]))
    g.step(0)
    assert g.legal_actions() == [choose(2), choose(3)]


def test_choice_between_double_and_plain_junk_is_offered(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [40]), layout=[41, 42], stock=[8]))
    g.step(40)
    assert g.legal_actions() == [choose(41), choose(42)]


def test_september_animal_is_an_animal_for_the_choice_rule():
    rules = rules_of("korean")
    g = from_position(rules, position(rules, seats(rules, [33]), layout=[32, 34], stock=[8]))
    g.step(33)
    assert g.legal_actions() == [choose(32), choose(34)]


def test_played_card_takes_a_stack_of_three(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [6]}))
    events = g.step(0)
    assert events.captured[0] == {0, 1, 2, 3}
    assert events.count(Event.STACK_CAPTURE, seat=0) == 1 and events.stolen[0][1] == {6}


def test_jjok_flip_takes_the_placed_card_and_steals(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [2]), layout=[4], stock=[3, 8], piles={1: [6, 7]}))
    events = g.step(2)
    assert events.captured[0] == {2, 3} and events.count(Event.JJOK, seat=0) == 1
    assert events.stolen[0][1] == {6}


def test_ppuk_leaves_a_stack_of_three_and_remembers_its_maker(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [2]), layout=[3, 4], stock=[0, 8]))
    events = g.step(2)
    assert events.count(Event.PPUK, seat=0) == 1 and events.captured[0] == set()
    assert {0, 2, 3} <= g.layout and g.stack_owner == {0: (0, 1)}


def test_ttadak_after_a_choice(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [2]), layout=[0, 3, 4], stock=[1, 8], piles={1: [6]}))
    g.step(2)
    events = g.step(choose(3))
    assert events.captured[0] == {0, 1, 2, 3} and events.count(Event.TTADAK, seat=0) == 1
    assert events.stolen[0][1] == {6}


def test_ttadak_after_an_automatic_pick(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [1]), layout=[2, 3, 4], stock=[0, 8]))
    events = g.step(1)
    assert events.captured[0] == {0, 1, 2, 3} and events.count(Event.TTADAK, seat=0) == 1


def test_flipped_card_is_placed_pairs_or_takes_a_stack(preset):
    rules = rules_of(preset)
    g = from_position(rules, position(rules, {0: [0, 9], 1: [20, 21]}, layout=[4, 12, 13, 14], stock=[5, 28, 15]))
    assert g.step(0).captured[0] == {4, 5}  # flip pairs
    g.step(20)
    assert 28 in g.layout  # seat 1's flip placed
    events = g.step(9)
    assert events.captured[0] == {12, 13, 14, 15} and events.count(Event.STACK_CAPTURE, seat=0) == 1


def test_flipped_card_with_two_matches_asks_for_a_choice(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[4, 6], stock=[5]))
    g.step(0)
    assert g.phase == Phase.CHOOSE_FLIP and g.legal_actions() == [choose(4), choose(6)]
    events = g.step(choose(6))
    assert events.captured[0] == {5, 6} and 4 in g.layout


def test_hand_choice_is_made_before_the_flip_even_when_ttadak_makes_it_moot(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [1]), layout=[0, 2, 4], stock=[3]))
    g.step(1)
    assert g.phase == Phase.CHOOSE_HAND
    assert g.step(choose(0)).captured[0] == {0, 1, 2, 3}


# ---- §6 steals ---------------------------------------------------------------------------------


def test_sweep_steals_one_from_the_opponent(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[1, 4], stock=[5], piles={1: [6]}))
    events = g.step(0)
    assert not g.layout and events.count(Event.SWEEP, seat=0) == 1 and events.stolen[0][1] == {6}


def test_turn_taking_nothing_with_an_empty_layout_is_no_sweep(preset):
    rules = rules_of(preset, jokers=1)
    g = from_position(rules, position(rules, seats(rules, [48]), layout=[], stock=[], rest_to=1))
    events = g.step(48)
    assert events.count(Event.SWEEP) == 0


def test_ja_ppuk_on_the_next_turn_steals_two(preset):
    rules = rules_of(preset)
    pos = position(rules, {0: [2, 1], 1: [20, 24]}, layout=[3, 44], stock=[0, 28, 40], piles={1: [6, 7, 10]})
    g = from_position(rules, pos)
    g.step(2)  # ppuk on seat 0's turn 1
    g.step(20)
    events = g.step(1)  # seat 0's turn 2 takes its own stack
    assert events.count(Event.JA_PPUK, seat=0) == 1 and events.count(Event.STACK_CAPTURE, seat=0) == 1
    assert events.stolen[0][1] == {6, 7}


def test_own_ppuk_from_an_earlier_turn_is_ja_ppuk_only_in_korean(preset, players):
    rules = rules_of(preset, players)
    pos = position(
        rules,
        seats(rules, [1]),
        layout=[0, 2, 3],
        stock=[8],
        piles={1: [6, 7]},
        stacks={0: (0, 1)},
        turns=[3] + [2] * (players - 1),
    )
    events = from_position(rules, pos).step(1)
    expected = 1 if preset == "korean" else 0
    assert events.count(Event.JA_PPUK, seat=0) == expected
    assert len(events.stolen[0][1]) == 1 + expected


def test_capturing_another_players_ppuk_is_a_plain_stack_capture(preset, players):
    rules = rules_of(preset, players)
    pos = position(
        rules,
        seats(rules, [1]),
        layout=[0, 2, 3],
        stock=[8],
        piles={1: [6, 7]},
        stacks={0: (1, 1)},
        turns=[2] + [1] * (players - 1),
    )
    events = from_position(rules, pos).step(1)
    assert events.count(Event.JA_PPUK) == 0 and events.stolen[0][1] == {6}


def test_steal_gives_the_lowest_value_junk_lowest_id_first(preset):
    rules = rules_of(preset, jokers=2)
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [49, 47, 48, 41, 10]})
    assert from_position(rules, pos).step(0).stolen[0][1] == {10}
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [49, 47, 48, 41]})
    assert from_position(rules, pos).step(0).stolen[0][1] == {41}
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [49, 44]})
    assert from_position(rules, pos).step(0).stolen[0][1] == {49}


def test_a_player_without_junk_gives_nothing(preset, players):
    rules = rules_of(preset, players)
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [4, 44]})
    events = from_position(rules, pos).step(0)
    assert events.stolen[0][1] == set() and events.count(Event.STACK_CAPTURE) == 1


def test_each_opponent_gives_with_three_players(preset):
    rules = rules_of(preset, players=3)
    pos = position(rules, {0: [0], 1: [20], 2: [24]}, layout=[1, 2, 3], stock=[8], piles={1: [6], 2: [7]})
    events = from_position(rules, pos).step(0)
    assert events.stolen[0][1] == {6} and events.stolen[0][2] == {7}


def test_steal_events_add_up(preset, players):
    rules = rules_of(preset, players)
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3, 5, 6, 7], stock=[4], piles={1: [10, 11, 14, 15]})
    events = from_position(rules, pos).step(0)
    assert events.count(Event.STACK_CAPTURE, seat=0) == 2 and events.count(Event.SWEEP, seat=0) == 1
    assert events.stolen[0][1] == {10, 11, 14}


# ---- §7 scoring is tested in test_scoring.py; §8 go or stop ------------------------------------


def _at_seven(rules, opponent_pile):
    """Seat 0 holds 15 junk (6 points) and takes one more: 7 points."""
    return position(rules, {0: [34], 1: [20]}, layout=[33], stock=[8], piles={0: JUNK_15, 1: opponent_pile})


def test_go_or_stop_is_offered_on_reaching_the_target(preset):
    rules = rules_of(preset)
    g = from_position(rules, _at_seven(rules, [35, 38, 39, 42, 43, 31, 46]))
    g.step(34)
    assert g.scores()[0] == 7 and g.phase == Phase.GO_STOP and g.legal_actions() == [A.GO, A.STOP]


def test_stop_pays_the_score(preset):
    rules = rules_of(preset)
    g = from_position(rules, _at_seven(rules, [35, 38, 39, 42, 43, 41, 47]))  # opponent junk 9
    g.step(34)
    events = g.step(A.STOP)
    assert g.done and g.result == Result.STOP and g.winner == 0
    assert events.payments == [7, -7] and events.count(Event.STOP, seat=0) == 1


def test_go_continues_and_the_score_must_rise_before_the_next_decision(preset):
    rules = rules_of(preset)
    pos = position(
        rules, {0: [34, 40], 1: [20, 24]}, layout=[33, 45], stock=[8, 28, 44], piles={0: JUNK_15, 1: [35, 38, 39]}
    )
    g = from_position(rules, pos)
    g.step(34)
    g.step(A.GO)
    assert g.gos[0] == 1 and g.go_scores[0] == 7 and g.seat == 1
    g.step(20)
    g.step(40)  # takes nothing: score stays 7, no decision
    assert g.seat == 1 and g.phase == Phase.PLAY


def test_last_turn_stops_without_a_decision(preset):
    rules = rules_of(preset)
    pos = position(rules, {0: [34], 1: []}, layout=[33], stock=[], piles={0: JUNK_15}, rest_to=1)
    g = from_position(rules, pos)
    events = g.step(34)
    assert g.done and g.result == Result.STOP and events.count(Event.STOP, seat=0) == 1


def test_nagari_when_the_cards_run_out(preset):
    rules = rules_of(preset)
    pos = position(rules, {0: [34], 1: []}, layout=[33], stock=[], rest_to=1, carry=1)
    g = from_position(rules, pos)
    events = g.step(34)
    assert g.done and g.result == Result.NAGARI and events.payments == [0, 0]
    assert events.count(Event.NAGARI) == 1 and g.next_carry == 2


def test_three_player_target_is_three(preset):
    rules = rules_of(preset, players=3)
    assert rules.target_score == 3
    pos = position(rules, {0: [0], 1: [20], 2: [24]}, layout=[1], stock=[13], piles={0: [5, 9]})
    g = from_position(rules, pos)
    g.step(0)
    assert g.scores()[0] == 3 and g.phase == Phase.GO_STOP


def test_target_option_changes_the_threshold():
    rules = Rules(target=3)
    pos = position(rules, seats(rules, [0]), layout=[1], stock=[13], piles={0: [5, 9]})
    g = from_position(rules, pos)
    g.step(0)
    assert g.phase == Phase.GO_STOP


# ---- §9 payment ------------------------------------------------------------------------------


def _stop_payment(rules, winner_pile, loser_piles, **kw) -> list[int]:
    hands = {s: [c] for s, c in zip(range(1, rules.players), (13, 17))}
    piles = {0: winner_pile} | {s + 1: p for s, p in enumerate(loser_piles)}
    pos = position(rules, hands, piles=piles, go_stop=True, **kw)
    return from_position(rules, pos).step(A.STOP).payments


LOSER_JUNK_9 = [35, 38, 39, 42, 43, 41, 47]  # junk value 9: no pi-bak in either preset
LOSER_JUNK_8 = [31, 35, 38, 39, 41, 47]  # junk value 8: over the korean 2-player threshold 7


def test_payment_score_seven_no_go(preset):
    assert _stop_payment(rules_of(preset), JUNK_15 + [34], [LOSER_JUNK_9]) == [7, -7]


def test_payment_score_nine_after_two_gos(preset):
    pile = JUNK_15 + [34, 42, 43]  # junk 18: 9 points
    assert _stop_payment(rules_of(preset), pile, [LOSER_JUNK_8], gos=[2, 0], go_scores=[8, 0]) == [11, -11]


def test_payment_score_ten_after_four_gos():
    pile = JUNK_15 + [34, 31, 35, 39]  # junk 19: 10 points
    loser = [38, 42, 43, 41, 47]  # junk 7
    assert _stop_payment(Rules(), pile, [loser], gos=[4, 0], go_scores=[9, 0]) == [28, -28]


def test_korean_go_payment_doubles_from_the_third_go():
    pile = JUNK_15 + [34, 1, 5, 9]  # 7 junk points + red poem ribbons 3
    rules = rules_of("korean")
    loser = LOSER_JUNK_8
    assert _stop_payment(rules, pile, [loser], gos=[3, 0], go_scores=[9, 0]) == [26, -26]
    assert _stop_payment(rules, pile, [loser], gos=[4, 0], go_scores=[9, 0]) == [56, -56]


def test_one_shake_and_pi_bak_multiply_by_four():
    pile = JUNK_15 + [34]  # junk 16: 7 points
    assert _stop_payment(Rules(), pile, [[35, 38]], shakes=[1, 0]) == [28, -28]


def test_two_shakes_multiply_by_four():
    assert _stop_payment(Rules(), JUNK_15 + [34], [LOSER_JUNK_9], shakes=[2, 0]) == [28, -28]


def test_pi_bak_threshold_and_zero_junk(preset):
    rules = rules_of(preset)
    pile = JUNK_15 + [34]
    no_junk = _stop_payment(rules, pile, [[]])
    assert no_junk == ([7, -7] if preset == "korean" else [14, -14])  # korean: 0 junk exempt
    junk_6 = _stop_payment(rules, pile, [[35, 38, 39, 42, 43, 31]])
    assert junk_6 == ([14, -14] if preset == "korean" else [7, -7])  # korean 2p threshold is 7


def test_bright_bak_only_against_a_player_without_brights(preset):
    rules = rules_of(preset)
    pile = [0, 8, 28, 34]  # three brights without rain: 3 points
    rules3 = Rules.preset(preset, target=3)
    assert _stop_payment(rules3, pile, [LOSER_JUNK_9]) == [6, -6]
    assert _stop_payment(rules3, pile, [LOSER_JUNK_9 + [40]]) == [3, -3]
    assert rules.target_score == 7


def test_seven_animals_double_the_payment(preset):
    rules = Rules.preset(preset, target=3)
    pile = [4, 12, 16, 20, 24, 29, 36]  # godori 5 + 7 animals 3 = 8
    assert _stop_payment(rules, pile, [LOSER_JUNK_9]) == [16, -16]


def test_nagari_carry_doubles_once_in_seed_and_compounds_in_korean(preset):
    rules = rules_of(preset)
    paid = _stop_payment(rules, JUNK_15 + [34], [LOSER_JUNK_9 + [46]], carry=2)
    assert paid == ([28, -28] if preset == "korean" else [14, -14])


def test_korean_go_bak_two_players_loser_who_went_pays_double():
    rules = rules_of("korean")
    loser = LOSER_JUNK_8
    paid = _stop_payment(rules, JUNK_15 + [34], [loser], gos=[0, 1], go_scores=[0, 7], last_go=[-1, 3])
    assert paid == [14, -14]
    assert _stop_payment(Rules(), JUNK_15 + [34], [loser], gos=[0, 1], go_scores=[0, 7]) == [7, -7]


def test_korean_go_bak_three_players_latest_goer_pays_every_share():
    rules = rules_of("korean", players=3)
    pile = [0, 8, 28]  # 3 bright points: bright-bak against seat 2 only
    losers = [[40, 35], [38, 39]]
    plain = _stop_payment(rules, pile, losers)
    assert plain == [9, -3, -6]
    both = _stop_payment(rules, pile, losers, gos=[0, 1, 1], go_scores=[0, 3, 3], last_go=[-1, 5, 2])
    assert both == [9, -9, 0]
    one = _stop_payment(rules, pile, losers, gos=[0, 0, 1], go_scores=[0, 0, 3], last_go=[-1, -1, 2])
    assert one == [9, 0, -9]


def test_korean_bomb_counts_as_a_shake_at_payment():
    pile = JUNK_15 + [34]
    loser = LOSER_JUNK_8
    assert _stop_payment(rules_of("korean"), pile, [loser], bombs=[1, 0]) == [14, -14]
    assert _stop_payment(Rules(), pile, [loser], bombs=[1, 0]) == [7, -7]


# ---- §12 korean options in play ---------------------------------------------------------------


def test_korean_september_animal_is_stolen_only_as_junk():
    for preset, expected in (("korean", {32}), ("seed", {41})):
        rules = rules_of(preset, jokers=2)
        pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [32, 41, 47, 48, 49]})
        assert from_position(rules, pos).step(0).stolen[0][1] == expected


def test_korean_sweep_on_the_last_turn_steals_nothing(preset):
    rules = rules_of(preset)
    pos = position(rules, {0: [0], 1: []}, layout=[1, 4], stock=[5], rest_to=1)
    g = from_position(rules, pos)
    events = g.step(0)
    swept = 0 if preset == "korean" else 1
    assert events.count(Event.SWEEP) == swept and g.done


def test_korean_last_card_would_be_ppuk_takes_all_three(preset, players):
    rules = rules_of(preset, players)
    pos = position(rules, seats(rules, [2, 8]), layout=[3], stock=[0], rest_to=1)
    g = from_position(rules, pos)
    events = g.step(2)
    if preset == "korean":
        assert events.captured[0] == {0, 2, 3} and events.count(Event.PPUK) == 0
    else:
        assert events.count(Event.PPUK) == 1 and {0, 2, 3} <= g.layout


def test_korean_last_card_would_be_jjok_steals_nothing(preset, players):
    rules = rules_of(preset, players)
    pos = position(rules, seats(rules, [2, 8]), layout=[4], stock=[3], piles={1: [6]}, rest_to=1)
    events = from_position(rules, pos).step(2)
    assert events.captured[0] == {2, 3}
    assert len(events.stolen[0][1]) == (0 if preset == "korean" else 1)


# ---- §11 actions ------------------------------------------------------------------------------


def test_illegal_action_names_the_action_phase_and_legal_actions(preset, players):
    rules = rules_of(preset, players)
    g = from_position(rules, position(rules, seats(rules, [0]), layout=[1], stock=[8]))
    with pytest.raises(IllegalActionError, match=r"illegal action 5 .*PLAY.*legal actions: 0 \(play"):
        g.ref.step(5)
    for batch in g.batches:
        with pytest.raises(IllegalActionError, match=r"game 0: illegal action 5"):
            batch.step([5])
    g.check()  # nothing changed


def test_finished_game_takes_only_no_action():
    rules = Rules()
    g = from_deck(rules, stacked_deck(rules, hands={1: [0, 1, 2, 3]}))
    for batch in g.batches:
        with pytest.raises(IllegalActionError, match="none \\(game over\\)"):
            batch.step([0])
        batch.step([A.NO_ACTION])
    assert g.ref.legal_actions() == []


def test_steal_choice_highest_gives_the_most_valuable_junk(players):
    rules = Rules(players=players, jokers=2, steal_choice="highest")
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [49, 47, 48, 41, 10]})
    assert from_position(rules, pos).step(0).stolen[0][1] == {49}
    pos = position(rules, seats(rules, [0]), layout=[1, 2, 3], stock=[8], piles={1: [47, 48, 41, 10]})
    assert from_position(rules, pos).step(0).stolen[0][1] == {48}
