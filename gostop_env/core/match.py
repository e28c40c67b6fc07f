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
the tests hold it equal to. :class:`MatchLedger` keeps the books of many matches between
hands (the environments' match episodes use it too), and :class:`MatchView` is what a
policy or an encoding sees of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .batch import batch_class
from .deck import check_seed, shuffled_decks
from .reference import ReferenceGame
from .rules import Rules

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
    with nothing doubled, or a flat win's payment (a chongtong, three ppuks)."""
    flat = [rules.chongtong_chips] + ([rules.three_ppuk_chips] if rules.three_ppuk_chips else [])
    return min(rules.target_score, *flat)


def player_of(seat: np.ndarray | int, leader: np.ndarray | int, players: int) -> np.ndarray:
    """The player at engine seat ``seat`` of a hand that ``leader`` leads."""
    return (np.asarray(seat) + np.asarray(leader)) % players


def match_decks(rules: Rules, seed: int, matches: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """The deck of hand ``hand[i]`` of match ``matches[i]``: ``(n, deck_size)`` int8."""
    return np.stack(
        [shuffled_decks(rules, np.random.default_rng([seed, int(m), int(k)]), 1)[0] for m, k in zip(matches, hand)]
    )


@dataclass(frozen=True)
class MatchView:
    """Where each game's match stands, as the seat to move and the encodings see it: hands
    ``played`` and ``hands_left`` after this one; ``standing``, the chips so far of the player
    at each engine seat of the current hand, ``(n, players)``; ``lead``, the seat to move's
    chips so far less the most any other player has; the match's ``bankroll`` (None: none).
    A lone hand is a match of one hand (:meth:`single`)."""

    played: np.ndarray
    hands_left: np.ndarray
    standing: np.ndarray
    lead: np.ndarray
    bankroll: int | None = None

    @classmethod
    def single(cls, games: int, players: int) -> MatchView:
        """``games`` lone hands: nothing played, nothing left, nothing won."""
        none = np.zeros(games, np.int64)
        return cls(none, none, np.zeros((games, players), np.int64), none)

    def select(self, rows: np.ndarray) -> MatchView:
        """The view of games ``rows`` only."""
        return MatchView(self.played[rows], self.hands_left[rows], self.standing[rows], self.lead[rows], self.bankroll)

    def __len__(self) -> int:
        return len(self.played)


class MatchLedger:
    """The books of ``n`` matches between their hands: ``standing``, each player's chips so
    far (by player, not engine seat); ``played``, the hands finished; ``leader``, the player
    who leads the current hand (engine seat 0); ``over``, which matches have ended.
    :meth:`settle` enters finished hands; :class:`MatchBatch` and the match episodes of the
    environments keep their matches with it."""

    def __init__(self, fmt: MatchFormat, players: int, n: int):
        self.format, self.players = fmt, players
        self.standing = np.zeros((n, players), np.int64)
        self.played = np.zeros(n, np.int64)
        self.leader = np.zeros(n, np.int64)
        self.over = np.zeros(n, bool)

    def __len__(self) -> int:
        return len(self.played)

    def restart(self, games: np.ndarray | slice) -> None:
        """Start ``games`` as new matches."""
        self.standing[games], self.played[games], self.leader[games], self.over[games] = 0, 0, 0, False

    def settle(self, games: np.ndarray, payments: np.ndarray, winner: np.ndarray) -> None:
        """Enter the finished hands of ``games``: ``payments`` ``(k, players)`` by engine
        seat, ``winner`` the winning engine seat (-1: none; the same player leads again).
        Moves the lead, and ends matches that have played their hands or lost a bankroll."""
        games, winner = np.asarray(games, np.int64), np.asarray(winner, np.int64)
        seats = np.arange(self.players)
        for k, m in enumerate(games):
            self.standing[m, player_of(seats, self.leader[m], self.players)] += payments[k]
        self.leader[games] = np.where(
            winner >= 0, player_of(winner, self.leader[games], self.players), self.leader[games]
        )
        self.played[games] += 1
        over = self.played[games] >= self.format.hands
        if self.format.bankroll is not None:
            over |= (self.standing[games] + self.format.bankroll <= 0).any(axis=1)
        self.over[games] = over

    @property
    def hands_left(self) -> np.ndarray:
        """Hands each match has still to play after its current one (at most: a bankroll
        can end it sooner)."""
        return np.maximum(self.format.hands - self.played - 1, 0)

    def seat_of(self, players: np.ndarray | int) -> np.ndarray:
        """The engine seat each match's ``players`` (one per match) holds in its current hand."""
        return (np.asarray(players) - self.leader) % self.players

    def by_seat(self) -> np.ndarray:
        """``(n, players)``: the standing of the player at each engine seat of the current hand."""
        return self.standing[
            np.arange(len(self))[:, None], player_of(np.arange(self.players), self.leader[:, None], self.players)
        ]

    def view(self, seats: np.ndarray) -> MatchView:
        """The matches as :class:`MatchView`, ``lead`` for the player at engine seat
        ``seats[m]`` (the seat to move) of each."""
        standing = self.by_seat()
        seats = np.asarray(seats, np.int64) % self.players
        rows = np.arange(len(self))
        others = np.where(np.arange(self.players) == seats[:, None], np.iinfo(np.int64).min, standing)
        lead = np.where(self.over, 0, standing[rows, seats] - others.max(axis=1))
        return MatchView(self.played.copy(), self.hands_left, standing, lead, self.format.bankroll)


class MatchBatch:
    """``matches`` matches in a row of hands, stepped together.

    ``hand`` is the :class:`GameBatch` of each match's current hand (game ``m`` is match
    ``m``'s); :meth:`step` plays one action per game, as ``GameBatch.step`` does, and deals a
    match's next hand as soon as its hand ends. ``ledger`` (:class:`MatchLedger`) keeps the
    books: ``standing`` holds each player's chips so far (by player, not engine seat),
    ``played`` the hands finished, ``leader`` who leads the current hand, ``done`` which
    matches are over (their last hand stays, finished)."""

    def __init__(
        self, rules: Rules, fmt: MatchFormat, seed: int, matches: int, backend: str | None = None, first: int = 0
    ):
        if matches < 1:
            raise ValueError(f"matches must be >= 1, got {matches}")
        self.rules, self.format, self.seed = rules, fmt.check(rules), check_seed(seed)
        self.ids = np.arange(first, first + matches)
        self.ledger = MatchLedger(fmt, rules.players, matches)
        self.standing, self.played, self.leader = self.ledger.standing, self.ledger.played, self.ledger.leader
        self.done = self.ledger.over
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
        return self.ledger.hands_left

    def lead(self) -> np.ndarray:
        """Per match, the chips so far of the player to move less the most any other player
        has (0 where the match is over)."""
        return self.view().lead

    def view(self) -> MatchView:
        """Where each match stands, for the seat to move of its hand."""
        return self.ledger.view(self.hand.seat.astype(np.int64))

    def seats_of(self, player: int) -> np.ndarray:
        """The engine seat ``player`` holds in each match's current hand."""
        return self.ledger.seat_of(player)

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
            self.ledger.settle(ended, self.hand.payments[ended], self.hand.winner[ended])
            going_on = ended[~self.done[ended]]
            if going_on.size:
                carry = self.hand.next_carry[going_on]
                decks = match_decks(self.rules, self.seed, self.ids[going_on], self.played[going_on])
                self.hand.reset_games(going_on, decks, carry)


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
