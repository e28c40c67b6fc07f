"""Matches (gostop_env.core.match): batched matches on every backend equal the reference
engine's, the winner leads, a nagari keeps the leader and carries, decks come from the
match's seed alone, and bad formats are refused."""

from __future__ import annotations

import numpy as np
import pytest

from gostop_env.core import Rules
from gostop_env.core.backends import available_backends
from gostop_env.core.match import MatchBatch, MatchFormat, match_decks, play_reference_match, smallest_payment
from gostop_env.core.outcomes import Result

SEED = 41


def pick(legal: list[int], player: int, clock: int) -> int:
    """A move that depends only on what both engines show alike (legal moves, the player,
    the turn clock), so both play the same matches."""
    return legal[(3 * player + 5 * clock + len(legal)) % len(legal)]


def play_batched(matches: MatchBatch) -> None:
    """Play every match to its end."""
    while not matches.done.all():
        hand, player = matches.hand, matches.player_to_move
        actions = np.array(
            [
                -1 if matches.done[m] else pick(hand.legal_actions(m), int(player[m]), int(hand.clock[m]))
                for m in range(len(matches))
            ]
        )
        matches.step(actions)


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize(
    ("players", "preset", "fmt"),
    [(2, "seed", MatchFormat(8)), (3, "korean", MatchFormat(6)), (2, "korean", MatchFormat(30, bankroll=40))],
)
def test_batched_matches_equal_the_reference_engine(backend, players, preset, fmt):
    rules = Rules.preset(preset, players=players)
    matches = MatchBatch(rules, fmt, SEED, 24, backend=backend)
    play_batched(matches)
    for m in range(24):
        standing, played, leader = play_reference_match(
            rules, fmt, SEED, m, lambda game, player: pick(game.legal_actions(), player, game.clock)
        )
        assert matches.standing[m].tolist() == standing and matches.played[m] == played
        assert matches.leader[m] == leader
    assert (matches.standing.sum(axis=1) == 0).all()
    if fmt.bankroll is not None:
        assert (matches.played < fmt.hands).any()  # some matches ended on a bankroll


def test_the_winner_leads_and_a_nagari_keeps_the_leader_and_carries():
    rules = Rules()
    matches = MatchBatch(rules, MatchFormat(20), 7, 64)
    seen = {"win": 0, "nagari": 0}
    while not matches.done.all():
        before_leader, before_played, hand = matches.leader.copy(), matches.played.copy(), matches.hand
        player = matches.player_to_move
        actions = np.array(
            [
                -1 if matches.done[m] else pick(hand.legal_actions(m), int(player[m]), int(hand.clock[m]))
                for m in range(64)
            ]
        )
        hand.step(actions)
        ended = np.flatnonzero(hand.done & ~matches.done)
        results, winners = hand.result[ended].copy(), hand.winner[ended].astype(np.int64)
        carries = hand.next_carry[ended]
        matches._settle()
        for m, result, winner, carry in zip(ended, results, winners, carries):
            if matches.done[m] or matches.played[m] != before_played[m] + 1:  # over, or the next deal ended too
                continue
            if result == Result.NAGARI:
                seen["nagari"] += 1
                assert matches.leader[m] == before_leader[m] and matches.hand.carry[m] == carry > 0
            elif winner >= 0:
                seen["win"] += 1
                assert matches.leader[m] == (before_leader[m] + winner) % 2 and matches.hand.carry[m] == 0
    assert seen["win"] > 50 and seen["nagari"] > 0


def test_decks_come_from_the_seed_and_the_match_alone():
    rules = Rules()
    whole, part = MatchBatch(rules, MatchFormat(3), 5, 10), MatchBatch(rules, MatchFormat(3), 5, 4, first=6)
    assert (whole.hand.stock[6:] == part.hand.stock).all()
    again = match_decks(rules, 5, np.array([6, 6]), np.array([0, 1]))
    assert (again[0] != again[1]).any() and (match_decks(rules, 5, np.array([6]), np.array([0])) == again[0]).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"hands": 0}, ValueError, "hands must be 1 .. "),
        ({"hands": -3}, ValueError, "hands must be"),
        ({"hands": 2.5}, TypeError, "whole number"),
        ({"hands": True}, TypeError, "whole number"),
        ({"hands": 8, "bankroll": 0}, ValueError, "bankroll must be"),
        ({"hands": 8, "bankroll": 1.5}, TypeError, "whole number"),
    ],
)
def test_bad_match_formats_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        MatchFormat(**kwargs)


def test_a_bankroll_below_one_hands_smallest_payment_is_refused():
    rules = Rules(players=3)
    assert smallest_payment(rules) == 3 and smallest_payment(Rules()) == 5
    with pytest.raises(ValueError, match="cannot cover one hand's smallest payment"):
        MatchBatch(rules, MatchFormat(8, bankroll=2), 0, 4)
    MatchBatch(rules, MatchFormat(8, bankroll=3), 0, 4)


def test_policies_play_their_player_whatever_seat_it_holds():
    """play_matches gives each player its policy in every hand: greedy as player 0 against
    random wins chips over matches whichever seat it leads from."""
    from gostop.agents.match import play_matches
    from gostop.agents.registry import make_agent

    rules = Rules()
    policies = [make_agent("greedy"), make_agent("random")]
    matches = play_matches(rules, MatchFormat(4), policies, 3, 200, np.random.default_rng(0))
    assert matches.done.all() and (matches.played == 4).all()
    assert matches.standing[:, 0].mean() > 20 and (matches.standing.sum(axis=1) == 0).all()
    swapped = play_matches(rules, MatchFormat(4), policies[::-1], 3, 200, np.random.default_rng(0))
    assert swapped.standing[:, 1].mean() > 20
    with pytest.raises(ValueError, match="one policy per player"):
        play_matches(rules, MatchFormat(4), policies[:1], 3, 2, np.random.default_rng(0))


def test_the_match_win_table_is_a_chance_that_rises_with_the_lead():
    from gostop.agents.match_stop import MatchWinTable

    table = MatchWinTable(np.array([-7, 7, -14, 14, 0, 3, -3]))
    lead = np.arange(-100, 101)
    for hands_left in (0, 1, 5, 64, 500):
        chance = table(np.full(lead.shape, hands_left), lead)
        assert ((chance >= 0) & (chance <= 1)).all() and (np.diff(chance) >= -1e-12).all()
        assert np.allclose(chance + chance[::-1], 1)  # symmetric payments: a lead of d against -d
    assert table(0, 1) == 1 and table(0, 0) == 0.5 and table(0, -1) == 0
    assert 0.5 < table(3, 10) < 1  # a lead of 10 can still be lost in 3 hands of +-28 swings
    with pytest.raises(ValueError, match="sample of hand payments"):
        MatchWinTable(np.array([]))


def _go_stop_views(hands: int, seed: int):
    """Views of every go/stop decision of ``hands`` hands of a going greedy rule."""
    from gostop.agents.decisions import DecisionRecorder
    from gostop.agents.match import play_hands
    from gostop.agents.registry import make_agent
    from gostop_env.core.deck import shuffled_decks
    from gostop_env.policy import GameView

    rules, player = Rules(), make_agent("greedy:stop=threshold:gos=3")
    recorder = DecisionRecorder(keep_states=True)
    decks = shuffled_decks(rules, np.random.default_rng(seed), hands)
    play_hands(rules, [player, player], decks, np.random.default_rng(seed), before_step=recorder)
    states = recorder.states()
    return GameView(states, states.seat.astype(np.int64)), states.legal_action_mask()


def test_stop_match_goes_more_when_behind_and_is_the_ev_rule_outside_a_match():
    from gostop.agents.registry import make_agent
    from gostop_env.core import actions as A
    from gostop_env.core.match import MatchView
    from gostop_env.policy import GameView

    view, masks = _go_stop_views(150, 4)
    n = len(view)
    match_rule, ev_rule = make_agent("greedy:stop=match:n=32"), make_agent("greedy:stop=ev:n=32")
    alone = match_rule(view, masks, np.random.default_rng(1))
    assert (alone == ev_rule(view, masks, np.random.default_rng(1))).all()

    def go_rate(lead: int) -> float:
        none = np.zeros(n, np.int64)
        where = MatchView(none, none, np.zeros((n, 2), np.int64), np.full(n, lead))
        chosen = match_rule(GameView(view.batch, view.viewers, where), masks, np.random.default_rng(1))
        return float((chosen == A.GO).mean())

    behind, level, ahead = go_rate(-40), go_rate(0), go_rate(40)
    assert n > 30 and behind > level and behind > ahead
    with pytest.raises(ValueError, match="for 2 players"):
        make_agent("greedy:stop=match", Rules(players=3))


def test_match_comparisons_report_win_rates_and_refuse_what_they_cannot_play(capsys):
    from gostop.agents.compare import compare_matches
    from gostop.agents.registry import make_agent
    from gostop.train.cli import main

    result = compare_matches(make_agent("greedy"), make_agent("random"), MatchFormat(3), 60, seed=2)
    assert result.win_rate > 0.8 and result.win_ci[0] < result.win_rate < result.win_ci[1]
    assert result.chips_per_match > 0 and result.hands_per_match == 3
    with pytest.raises(ValueError, match="2 players"):
        compare_matches(make_agent("greedy"), make_agent("random"), MatchFormat(3), 4, rules=Rules(players=3))
    assert main(["compare", "greedy", "random", "--match-hands", "2", "--bankroll", "10", "--deals", "20"]) == 0
    assert "duplicate matches of 2 hands (bankroll 10): match win rate" in capsys.readouterr().out
    for bad, message in (
        (["--bankroll", "10"], "--bankroll needs --match-hands"),
        (["--match-hands", "2", "--players", "3"], "for 2 players"),
        (["--match-hands", "2", "--bankroll", "4"], "cannot cover one hand's smallest payment"),
    ):
        with pytest.raises(SystemExit):
            main(["compare", "greedy", "random", "--deals", "4", *bad])
        assert message in capsys.readouterr().err


def test_the_match_study_goes_more_on_the_last_hand_when_far_behind():
    from gostop.agents.registry import make_agent
    from gostop.agents.studies import match_go_rates

    rules = Rules()
    player = make_agent("greedy:stop=threshold:gos=3", rules)
    rows = match_go_rates(rules, [player, player], hands=120, samples=8, seed=3, leads=(-60, 0, 60), hands_left=(0, 7))
    assert set(rows) == {"hands_left", "lead", "go_rate", "ev_go_rate", "decisions"} and len(rows["lead"]) == 6
    rate = {(int(k), int(d)): g for k, d, g in zip(rows["hands_left"], rows["lead"], rows["go_rate"])}
    assert rate[0, -60] > rate[0, 0] and rate[0, -60] > rows["ev_go_rate"][0]
    assert abs(rate[7, 0] - rows["ev_go_rate"][0]) < 0.1  # many hands left: close to the ev rule


def test_go_stop_values_give_the_chance_of_winning_the_match_by_each_choice(tmp_path, capsys):
    from gostop.agents.decisions import load_table
    from gostop.agents.go_stop_value import go_stop_values
    from gostop.agents.greedy import Greedy
    from gostop.agents.match_stop import match_win_chances, match_win_table
    from gostop.train.cli import main

    view, _ = _go_stop_views(80, 5)
    rules = Rules()
    values = go_stop_values(view.batch, [Greedy(), Greedy()], 16, np.random.default_rng(0))
    table = match_win_table(rules)
    sure, _ = match_win_chances(values, table, 0, 500)
    assert (sure == 1).all()
    go, stop = match_win_chances(values, table, 3, 0)
    assert ((go > 0) & (go < 1)).all() and (stop >= 0.5).all()  # stopping pays: from level, at least even
    out = tmp_path / "values.csv"
    arguments = ["greedy:stop=threshold:gos=1", "--hands", "60", "--samples", "4", "--out", str(out)]
    assert main(["go-stop", "values", *arguments, "--match-hands-left", "1", "--lead", "-20"]) == 0
    assert "the chance of winning it is" in capsys.readouterr().out
    assert {"go_match_win", "stop_match_win"} <= set(load_table(out))
