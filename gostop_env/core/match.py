"""Matches: hands in a row between the same players, as people play sessions.

A match lasts ``hands`` hands (:class:`MatchFormat`), or, with a ``bankroll``, until a
player has lost their bankroll (chips won so far plus ``bankroll`` at 0 or below), at most
``hands`` hands. Between hands:

- the player who won the hand (stopped, or held the only chongtong) leads the next one;
- after a nagari, or a chongtong with several holders, the same player leads again, and a
  nagari carries into the next hand (``GameBatch.next_carry``: the rules'
  ``nagari_compounding`` says how the carry multiplies payments).

The engine always deals its seat 0 first, so in a hand led by player ``leader``, engine seat
``e`` is player ``(leader + e) % players`` (:func:`player_of`). Hand ``k`` of match ``m`` is
dealt from ``shuffled_decks(rules, default_rng([seed, m, k]), 1)``: a match's decks come from
its seed and index alone, so the same matches can be played again under another seating.

:class:`MatchBatch` plays many matches at once on a :class:`GameBatch` of their current
hands (any backend); :func:`play_reference_match` plays one with the reference engine, which
the tests hold it equal to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .batch import batch_class
from .deck import check_seed, shuffled_decks
from .reference import ReferenceGame
from .rules import CHONGTONG_CHIPS, Rules

MAX_MATCH_HANDS = 1000
"""The most hands a match may last."""


@dataclass(frozen=True)
class MatchFormat:
    """How long a match lasts: ``hands`` hands, or with a ``bankroll`` until a player's
    bankroll (``bankroll`` plus the chips they have won so far) is gone, at most ``hands``."""

    hands: int
    bankroll: int | None = None

    def __post_init__(self) -> None:
        _whole_number("hands", self.hands, MAX_MATCH_HANDS)
        if self.bankroll is not None:
            _whole_number("bankroll", self.bankroll, 10**9)

    def check(self, rules: Rules) -> MatchFormat:
        """This format, or ValueError where its bankroll cannot cover the smallest payment
        of one hand under ``rules``."""
        smallest = smallest_payment(rules)
        if self.bankroll is not None and self.bankroll < smallest:
            raise ValueError(
                f"bankroll {self.bankroll} cannot cover one hand's smallest payment under these rules "
                f"({smallest} chips): use a bankroll of {smallest} or more"
            )
        return self


def _whole_number(name: str, value: object, most: int) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number of {name}, got {value!r}")
    if not 1 <= value <= most:
        raise ValueError(f"{name} must be 1 .. {most}, got {value}")


def smallest_payment(rules: Rules) -> int:
    """The fewest chips a loser pays in a hand that is not a nagari: a stop at the target
    with nothing doubled, or a chongtong's flat payment."""
    return min(rules.target_score, CHONGTONG_CHIPS)


def player_of(seat: np.ndarray | int, leader: np.ndarray | int, players: int) -> np.ndarray:
    """The player at engine seat ``seat`` of a hand that ``leader`` leads."""
    return (np.asarray(seat) + np.asarray(leader)) % players


def match_decks(rules: Rules, seed: int, matches: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """The deck of hand ``hand[i]`` of match ``matches[i]``: ``(n, deck_size)`` int8."""
    return np.stack(
        [shuffled_decks(rules, np.random.default_rng([seed, int(m), int(k)]), 1)[0] for m, k in zip(matches, hand)]
    )


class MatchBatch:
    """``matches`` matches in a row of hands, stepped together.

    ``hand`` is the :class:`GameBatch` of each match's current hand (game ``m`` is match
    ``m``'s); :meth:`step` plays one action per game, as ``GameBatch.step`` does, and deals a
    match's next hand as soon as its hand ends. ``standing`` holds each player's chips so far
    (by player, not engine seat), ``played`` the hands finished, ``leader`` who leads the
    current hand, ``done`` which matches are over (their last hand stays, finished)."""

    def __init__(
        self, rules: Rules, fmt: MatchFormat, seed: int, matches: int, backend: str | None = None, first: int = 0
    ):
        if matches < 1:
            raise ValueError(f"matches must be >= 1, got {matches}")
        self.rules, self.format, self.seed = rules, fmt.check(rules), check_seed(seed)
        self.ids = np.arange(first, first + matches)
        players = rules.players
        self.standing = np.zeros((matches, players), np.int64)
        self.played = np.zeros(matches, np.int64)
        self.leader = np.zeros(matches, np.int64)
        self.done = np.zeros(matches, bool)
        self.hand = batch_class(backend)(rules, match_decks(rules, self.seed, self.ids, self.played))
        self._settle()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def player_to_move(self) -> np.ndarray:
        """The player to move in each match's hand (-1 where the match is over)."""
        return np.where(self.done, -1, player_of(self.hand.seat.astype(np.int64), self.leader, self.rules.players))

    @property
    def hands_left(self) -> np.ndarray:
        """Hands each match has still to play after its current one (at most: a bankroll
        can end it sooner)."""
        return np.maximum(self.format.hands - self.played - 1, 0)

    def lead(self) -> np.ndarray:
        """Per match, the chips so far of the player to move less the most any other player
        has (0 where the match is over)."""
        mover = np.maximum(self.player_to_move, 0)
        rows = np.arange(len(self))
        own = self.standing[rows, mover]
        others = np.where(np.arange(self.rules.players) == mover[:, None], np.iinfo(np.int64).min, self.standing)
        return np.where(self.done, 0, own - others.max(axis=1))

    def seats_of(self, player: int) -> np.ndarray:
        """The engine seat ``player`` holds in each match's current hand."""
        return (player - self.leader) % self.rules.players

    def step(self, actions: np.ndarray) -> None:
        """One action per game (``NO_ACTION`` for finished matches), then the hands that
        ended are settled and the next hands dealt."""
        self.hand.step(actions)
        self._settle()

    def _settle(self) -> None:
        """Settle every hand that ended (the deal itself can end one: a chongtong) and deal
        the next hand of each match that goes on, until every live match awaits a move."""
        while True:
            ended = np.flatnonzero(self.hand.done & ~self.done)
            if not ended.size:
                return
            self._score(ended)
            going_on = ended[~self.done[ended]]
            if going_on.size:
                carry = self.hand.next_carry[going_on]
                decks = match_decks(self.rules, self.seed, self.ids[going_on], self.played[going_on])
                self.hand.reset_games(going_on, decks, carry)

    def _score(self, ended: np.ndarray) -> None:
        """Add the ended hands' payments to the standing; move the lead; end matches."""
        players = self.rules.players
        seats = np.arange(players)
        for m in ended:
            self.standing[m, player_of(seats, self.leader[m], players)] += self.hand.payments[m]
        winner = self.hand.winner[ended].astype(np.int64)
        self.leader[ended] = np.where(winner >= 0, player_of(winner, self.leader[ended], players), self.leader[ended])
        self.played[ended] += 1
        over = self.played[ended] >= self.format.hands
        if self.format.bankroll is not None:
            over |= (self.standing[ended] + self.format.bankroll <= 0).any(axis=1)
        self.done[ended] = over


def play_reference_match(
    rules: Rules, fmt: MatchFormat, seed: int, match: int, choose: Callable[[ReferenceGame, int], int]
) -> tuple[list[int], int, int]:
    """One match on the reference engine, ``choose(game, player)`` giving each move of the
    player to move: (standing by player, hands played, who would lead the next hand)."""
    fmt.check(rules)
    players = rules.players
    standing, leader, carry = [0] * players, 0, 0
    for k in range(fmt.hands):
        deck = shuffled_decks(rules, np.random.default_rng([seed, match, k]), 1)[0]
        game = ReferenceGame(rules, deck, carry)
        while not game.done:
            game.step(choose(game, (leader + game.seat) % players))
        for seat in range(players):
            standing[(leader + seat) % players] += game.payments[seat]
        carry = game.next_carry
        if game.winner >= 0:
            leader = (leader + game.winner) % players
        if fmt.bankroll is not None and min(standing) + fmt.bankroll <= 0:
            return standing, k + 1, leader
    return standing, fmt.hands, leader
