"""Matches as episodes: the options and rewards every environment shares.

With ``match_hands=N`` an environment plays one match per episode (:mod:`gostop_env.core.match`):
N hands between the same players, the winner of a hand leading the next, a nagari carrying
into the next hand. ``match_bankroll=B`` also ends the match as soon as a player's bankroll
(B plus the chips they have won so far) is gone. The observation gains the encoding's match
sections (``vector`` becomes ``vector+match``). Without ``match_hands`` an episode is one
hand, as before.

The reward (``reward``) is one of :data:`REWARDS`:

- ``"chips"``: a hand's chips, when it ends (the default);
- ``"win"``: +1, -1 or 0 when a hand ends, by the sign of its chips;
- ``"match_win"``: 0 until the match ends, then +1 to its winner and -1/(P-1) to each other
  player (players level at the top share the win: with 2 players a tie pays 0): the
  rewards of a match add up to 0;
- ``"match_chips"``: 0 until the match ends, then each player's chips over the match.

Every reward is multiplied by the environment's ``reward_scale``.
"""

from __future__ import annotations

import numpy as np

from .core import Rules
from .core.match import MatchFormat, MatchLedger, player_of

REWARDS = ("chips", "win", "match_win", "match_chips")
MATCH_REWARDS = ("match_win", "match_chips")
"""The rewards paid at a match's end: they need ``match_hands``."""


def match_format(rules: Rules, hands: int | None, bankroll: int | None) -> MatchFormat | None:
    """The matches an environment plays (None: one hand per episode); a clear error for
    non-positive or non-integer values, a bankroll without a hand cap, or one that cannot
    cover a hand's smallest payment."""
    if hands is None:
        if bankroll is not None:
            raise ValueError("match_bankroll needs match_hands, the most hands a match may last")
        return None
    try:
        return MatchFormat(hands, bankroll).check(rules)
    except (TypeError, ValueError) as error:
        raise type(error)(f"match: {error}") from None


def check_reward(reward: str, fmt: MatchFormat | None) -> str:
    """``reward`` if it is one of :data:`REWARDS` that ``fmt`` allows; else ValueError."""
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
    if reward in MATCH_REWARDS and fmt is None:
        raise ValueError(f"reward {reward!r} is paid when a match ends: give match_hands too")
    return reward


def hand_rewards(payments: np.ndarray, reward: str) -> np.ndarray:
    """What each seat gets when hands end, ``(k, P)`` float64, from their ``payments``
    ``(k, P)`` (0 for the rewards paid at a match's end)."""
    payments = np.asarray(payments, np.float64)
    if reward == "chips":
        return payments
    if reward == "win":
        return np.sign(payments)
    return np.zeros_like(payments)


def settle_hands(
    ledger: MatchLedger, games: np.ndarray, payments: np.ndarray, winner: np.ndarray, reward: str
) -> np.ndarray:
    """Enter the finished hands of matches ``games`` in ``ledger`` (``payments`` ``(k, P)``
    and ``winner`` by engine seat); what each player gets by ``reward``, ``(k, P)`` by player
    and unscaled: the hand's reward, plus the match's where the match is now over."""
    games = np.asarray(games, np.int64)
    rows, seats = np.arange(games.size)[:, None], np.arange(ledger.players)
    paid = np.zeros((games.size, ledger.players))
    paid[rows, player_of(seats, ledger.leader[games][:, None], ledger.players)] = hand_rewards(payments, reward)
    ledger.settle(games, payments, winner)
    over = ledger.over[games]
    paid[over] += match_rewards(ledger.standing[games[over]], reward)
    return paid


def match_rewards(standing: np.ndarray, reward: str) -> np.ndarray:
    """What each player gets when matches end, ``(k, P)`` float64, from their final
    ``standing`` ``(k, P)`` (0 for the rewards paid hand by hand)."""
    standing = np.asarray(standing, np.int64)
    players = standing.shape[1]
    if reward == "match_chips":
        return standing.astype(np.float64)
    if reward != "match_win":
        return np.zeros(standing.shape)
    top = standing == standing.max(axis=1, keepdims=True)
    share = top / top.sum(axis=1, keepdims=True)
    return (share * players - 1) / (players - 1)
