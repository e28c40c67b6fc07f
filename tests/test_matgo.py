"""The commercial Matgo rules of docs/rules.md §15, one named scenario each, on every engine.

Each scenario runs on the reference engine, the NumPy core and the compiled backend in
lock-step (``Both`` compares every state field, mask and event after each step). Each rule
has its normal case, a boundary case and a counter case (the rule switched off, or the
reading another site follows); docs/rules.md's conformance table names these tests.
"""

from __future__ import annotations

import pytest
from conftest import from_deck, from_position, position, stacked_deck

from gostop_env.core import Event, Phase, Result, Rules
from gostop_env.core import actions as A

MATGO = Rules.preset("matgo")
KOREAN = Rules.preset("korean")
OTHER_JUNK = [6, 7, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31, 34, 35, 38]  # 15 plain junk: 6 points


def first_turn_ppuk(rules: Rules, turns=(1, 0), ppuks=(0, 0), carry: int = 0):
    """Seat 0 plays 1 onto the layout's 0 and flips 2: a ppuk on its turn ``turns[0]``."""
    pos = position(
        rules, {0: [1, 11], 1: [20]}, layout=[0, 10], stock=[2, 12, 39], turns=list(turns), ppuks=list(ppuks)
    )
    pos.carry = carry
    g = from_position(rules, pos)
    events = g.step(1)
    assert events.count(Event.PPUK, seat=0) == 1
    return g


# ---- the preset -----------------------------------------------------------------------------


def test_matgo_preset_is_korean_two_players_with_the_commercial_options():
    assert MATGO.players == 2 and MATGO.target_score == 7 and MATGO.jokers == 2
    assert MATGO.pi_bak_threshold == 7 and MATGO.go_bak and MATGO.nagari_compounding
    assert MATGO.bonus_steal and MATGO.consecutive_ppuk and MATGO.layout_four == "dealer_wins"
    assert (MATGO.first_ppuk_chips, MATGO.three_ppuk_chips, MATGO.first_ttadak_chips, MATGO.chongtong_chips) == (
        7,
        7,
        7,
        10,
    )
    for name in ("seed", "korean"):  # the new options leave the other presets as they were
        rules = Rules.preset(name)
        assert not rules.bonus_steal and rules.first_ppuk_chips == rules.three_ppuk_chips == 0
        assert rules.chongtong_chips == 5 and rules.layout_four == "redeal"


@pytest.mark.parametrize(
    "kwargs,conflict",
    [
        (dict(players=3), "2-player Matgo.*players=3"),
        (dict(jokers=0), "'bonus_steal' needs bonus cards.*'jokers' is 0"),
        (dict(first_ppuk_chips=0), "'consecutive_ppuk'.*'first_ppuk_chips'"),
        (dict(layout_four="void"), "layout_four"),
        (dict(three_ppuk_chips=-1), "three_ppuk_chips"),
        (dict(chongtong_chips=0), "chongtong_chips"),
    ],
)
def test_contradicting_options_are_errors_naming_the_conflict(kwargs, conflict):
    with pytest.raises(ValueError, match=conflict):
        Rules.preset("matgo", **kwargs)


# ---- bonus cards steal --------------------------------------------------------------------


def test_bonus_card_played_from_hand_steals_one_junk():
    g = from_position(MATGO, position(MATGO, {0: [48, 20], 1: [24]}, layout=[1], stock=[0, 12], piles={1: [6, 7]}))
    events = g.step(48)  # to the pile; 0 stands in, pairs with 1; 12 is flipped
    assert 48 in g.piles[0] and {0, 1} <= g.piles[0]
    assert events.stolen[0][1] == {6}


def test_bonus_card_flipped_from_the_stock_steals_too():
    g = from_position(MATGO, position(MATGO, {0: [20, 21], 1: [24]}, layout=[], stock=[49, 12], piles={1: [6, 7]}))
    events = g.step(20)  # 20 is laid; 49 flips to the pile, then 12 is flipped
    assert 49 in g.piles[0] and events.count(Event.JOKER, seat=0) == 1
    assert events.stolen[0][1] == {6}


def test_bonus_card_steals_nothing_from_a_player_without_junk():
    g = from_position(MATGO, position(MATGO, {0: [48, 20], 1: [24]}, layout=[1], stock=[0, 12], piles={1: [4]}))
    events = g.step(48)
    assert events.stolen[0][1] == set() and g.piles[1] == {4}


def test_bonus_card_without_bonus_steal_steals_nothing():
    rules = Rules.preset("korean", jokers=2)
    g = from_position(rules, position(rules, {0: [48, 20], 1: [24]}, layout=[1], stock=[0, 12], piles={1: [6, 7]}))
    events = g.step(48)
    assert events.stolen[0][1] == set()


# ---- ppuk payments ---------------------------------------------------------------------------


def test_first_turn_ppuk_is_paid_at_once():
    g = first_turn_ppuk(MATGO)
    assert g.payments == [7, -7] and g.ppuks == [1, 0] and not g.done


def test_first_turn_ppuk_payment_stands_beside_the_stop_payment():
    rules = MATGO
    pos = position(rules, {0: [1, 11], 1: [20]}, layout=[0, 10], stock=[2, 12, 39], piles={0: OTHER_JUNK})
    g = from_position(rules, pos)
    g.step(1)  # ppuk: +7 at once
    g.step(20)  # seat 1 lays 20, flips 12
    g.step(11)  # seat 0 pairs 11 with 10: 17 junk, 8 points
    assert g.phase == Phase.GO_STOP
    g.step(A.STOP)
    assert g.result == Result.STOP and g.payments == [7 + 8, -(7 + 8)]


def test_second_turn_ppuk_after_a_first_turn_ppuk_pays_double():
    g = first_turn_ppuk(MATGO, turns=(2, 1), ppuks=(1, 0))
    assert g.payments == [14, -14]


def test_third_turn_ppuk_on_a_streak_pays_triple_and_wins():
    g = first_turn_ppuk(MATGO, turns=(3, 2), ppuks=(2, 0))
    assert g.result == Result.THREE_PPUKS and g.payments == [21 + 7, -(21 + 7)]


def test_ppuk_on_a_later_turn_without_a_streak_is_not_paid():
    g = first_turn_ppuk(MATGO, turns=(2, 1), ppuks=(0, 0))
    assert g.payments == [0, 0] and g.ppuks == [1, 0]


def test_second_turn_ppuk_is_not_paid_without_consecutive_ppuk():
    rules = Rules.preset("matgo", consecutive_ppuk=False)  # the Pmang reading: the first ppuk only
    g = first_turn_ppuk(rules, turns=(2, 1), ppuks=(1, 0))
    assert g.payments == [0, 0]


def test_first_turn_ppuk_is_not_paid_under_korean():
    g = first_turn_ppuk(KOREAN)
    assert g.payments == [0, 0] and g.ppuks == [1, 0]


# ---- three ppuks -------------------------------------------------------------------------------


def test_third_ppuk_wins_at_once_flat_and_ends_the_carry():
    g = first_turn_ppuk(MATGO, turns=(6, 5), ppuks=(2, 1), carry=2)
    assert g.done and g.result == Result.THREE_PPUKS and g.winner == 0
    assert g.payments == [7, -7] and g.next_carry == 0


def test_second_ppuk_does_not_end_the_hand():
    g = first_turn_ppuk(MATGO, turns=(6, 5), ppuks=(1, 2))
    assert not g.done and g.ppuks == [2, 2]


def test_third_ppuk_plays_on_without_three_ppuk_chips():
    g = first_turn_ppuk(KOREAN, turns=(6, 5), ppuks=(2, 0))
    assert not g.done and g.ppuks == [3, 0]


# ---- first-turn ttadak --------------------------------------------------------------------------


def ttadak(rules: Rules, turns=(1, 0)):
    """Seat 0 plays 1 between 0 and 2, takes 0, and flips 3: a ttadak."""
    g = from_position(rules, position(rules, {0: [1, 20], 1: [24]}, layout=[0, 2], stock=[3, 12], turns=list(turns)))
    g.step(1)
    events = g.step(A.CHOOSE + 0)
    assert events.count(Event.TTADAK, seat=0) == 1
    return g


def test_first_turn_ttadak_is_paid_at_once():
    assert ttadak(MATGO).payments == [7, -7]


def test_ttadak_on_a_later_turn_is_not_paid():
    assert ttadak(MATGO, turns=(2, 1)).payments == [0, 0]


def test_first_turn_ttadak_is_not_paid_under_korean():
    assert ttadak(KOREAN).payments == [0, 0]


# ---- chongtong and the layout at the deal ----------------------------------------------------------


def test_chongtong_pays_ten_under_matgo():
    g = from_deck(MATGO, stacked_deck(MATGO, hands={1: [0, 1, 2, 3]}))
    assert g.result == Result.CHONGTONG and g.winner == 1 and g.payments == [-10, 10]


def test_chongtong_pays_the_option_s_chips():
    rules = Rules.preset("matgo", chongtong_chips=7)  # the Pmang reading
    g = from_deck(rules, stacked_deck(rules, hands={1: [0, 1, 2, 3]}))
    assert g.payments == [-7, 7]


def test_four_of_a_month_on_the_layout_wins_for_the_dealer():
    g = from_deck(MATGO, stacked_deck(MATGO, layout=[4, 5, 6, 7]), carry=1)
    assert g.done and g.result == Result.CHONGTONG and g.winner == 0
    assert g.payments == [10, -10] and g.deal_events.count(Event.CHONGTONG, seat=0) == 1 and g.next_carry == 0


def test_four_of_a_month_made_by_a_bonus_card_s_replacement_wins_too():
    g = from_deck(MATGO, stacked_deck(MATGO, layout=[4, 5, 6, 48], stock=[7]))
    assert g.result == Result.CHONGTONG and g.winner == 0 and 48 in g.piles[0] and g.payments == [10, -10]


def test_four_of_a_month_on_the_layout_is_a_nagari_under_that_reading():
    rules = Rules.preset("matgo", layout_four="nagari")  # the Pmang reading
    g = from_deck(rules, stacked_deck(rules, layout=[4, 5, 6, 7]), carry=1)
    assert g.result == Result.NAGARI and g.payments == [0, 0] and g.next_carry == 2
    assert g.deal_events.count(Event.NAGARI, seat=0) == 1


def test_four_of_a_month_on_the_layout_is_a_void_deal_under_korean():
    with pytest.raises(ValueError, match="void"):
        from_deck(KOREAN, stacked_deck(KOREAN, layout=[4, 5, 6, 7]))


# ---- inherited from korean ------------------------------------------------------------------------


def test_matgo_nagari_carry_compounds():
    rules = MATGO
    pos = position(rules, {0: [11], 1: [20]}, layout=[10], stock=[39], piles={0: OTHER_JUNK})
    pos.carry = 2
    g = from_position(rules, pos)
    g.step(11)  # 17 junk: 8 points, at the last turn of seat 0's hand but not of the hand
    g.step(A.STOP)
    assert g.payments == [8 * 4, -8 * 4]  # x2 per nagari before this hand


def stop_payment(winner_pile: list[int], loser_pile: list[int], **kw) -> list[int]:
    """Seat 0, at its go/stop decision with ``winner_pile``, stops against ``loser_pile``."""
    pos = position(MATGO, {1: [13]}, piles={0: winner_pile, 1: loser_pile}, go_stop=True, **kw)
    return from_position(MATGO, pos).step(A.STOP).payments


SEVEN_POINTS = [0, 8, 28, 1, 5, 9, 6, 7, 14, 15, 18, 19, 22, 23, 26, 27]  # 3 brights, red poems, 10 junk


def test_matgo_pi_bak_doubles_against_seven_junk():
    assert stop_payment(SEVEN_POINTS, [40, 2, 3, 10, 11, 30, 31, 34]) == [14, -14]


def test_matgo_pi_bak_stops_at_eight_junk():
    assert stop_payment(SEVEN_POINTS, [40, 2, 3, 10, 11, 30, 31, 34, 35]) == [7, -7]


def test_matgo_pi_bak_spares_a_loser_without_junk():
    assert stop_payment(SEVEN_POINTS, [40]) == [7, -7]


def test_matgo_go_bak_loser_who_went_pays_double():
    loser = [40, 2, 3, 10, 11, 30, 31, 34, 35]  # a bright, junk 8: no bak
    assert stop_payment(SEVEN_POINTS, loser, gos=[0, 1], go_scores=[0, 7], last_go=[-1, 3]) == [14, -14]
    assert stop_payment(SEVEN_POINTS, loser) == [7, -7]


def test_a_position_with_more_ppuks_than_turns_is_refused():
    with pytest.raises(ValueError, match="position.ppuks"):
        from_position(MATGO, position(MATGO, {0: [1], 1: [20]}, ppuks=[2, 0]))
