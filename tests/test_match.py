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
