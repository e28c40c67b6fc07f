"""Playing the seats a caller does not play: the one place where opponents take their turns.

Every loop that plays other seats goes through here: the vector envs' opponents
(:mod:`gostop_env.learner_games`), the Gymnasium env's, the batched trainer's league
(``gostop.train.rollout``), matches and tournaments (``gostop.agents.match``), terminal play
(:mod:`gostop_env.human`) and the web table. A policy is asked through
:func:`policy_actions`, which takes the fast path the policy declares (its
``batch_actions(batch, games)``, see :mod:`gostop_env.policy`) and otherwise encodes the
games for it (or reuses observations already encoded) and checks its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .core import GameBatch
from .core.match import MatchView
from .policy import Policy, check_actions, decide


def policy_actions(
    policy: Policy,
    batch: GameBatch,
    games: np.ndarray,
    masks: np.ndarray,
    rng: np.random.Generator,
    who: str,
    encoded: tuple[str, np.ndarray] | None = None,
    match: MatchView | None = None,
) -> np.ndarray:
    """``policy``'s legal actions in ``games`` of ``batch`` (for the seat to move in each;
    ``masks``: the whole batch's). ``encoded``: (encoding, observations of every game for its
    seat to move), used where the policy reads that encoding; ``match``: where each game of
    the batch stands in its match. A wrong answer is a
    :class:`~gostop_env.policy.PolicyActionError` naming ``who``."""
    declared = getattr(policy, "batch_actions", None)
    chosen = declared(batch, games) if declared is not None else None
    if chosen is not None:
        return check_actions(chosen, masks[games], who)
    if encoded is not None and encoded[0] == policy.encoding:
        return check_actions(policy(encoded[1][games], masks[games], rng), masks[games], who)
    return decide(policy, batch, games, masks, rng, who, match)


def controlled_actions(
    batch: GameBatch,
    actions: np.ndarray,
    controller: np.ndarray,
    policies: Sequence[Policy],
    masks: np.ndarray,
    rng: np.random.Generator,
    names: Sequence[str] | None = None,
    encoded: tuple[str, np.ndarray] | None = None,
    match: MatchView | None = None,
) -> None:
    """Fill ``actions`` of every game whose ``controller`` (per game: an index into
    ``policies``, or negative for a game none of them plays now) is a policy, one call per
    policy for all its games, in the order of the policies."""
    for j in np.unique(controller[controller >= 0]):
        games = np.flatnonzero(controller == j)
        who = names[j] if names is not None else getattr(policies[j], "name", f"policy {j}")
        actions[games] = policy_actions(policies[j], batch, games, masks, rng, who, encoded, match)


def opponent_action(
    batch: GameBatch,
    seat: int,
    opponents: Sequence[Policy],
    rng: np.random.Generator,
    match: Callable[[], MatchView | None] | None = None,
) -> int:
    """In a one-game batch where another seat than ``seat`` is to move, that seat's action by
    its policy: ``opponents[k]`` plays the seat k + 1 places after ``seat`` in turn order.
    ``match()``: where the game's match stands now, if it is a hand of one."""
    mover = int(batch.seat[0])
    policy = opponents[(mover - seat) % batch.rules.players - 1]
    where = None if match is None else match()
    return int(
        policy_actions(policy, batch, np.array([0]), batch.legal_action_mask(), rng, f"seat {mover}", None, where)[0]
    )


def play_opponents(
    batch: GameBatch,
    seat: int,
    opponents: Sequence[Policy],
    rng: np.random.Generator,
    match: Callable[[], MatchView | None] | None = None,
) -> None:
    """In a one-game batch, the opponents' moves until ``seat`` is to move or the hand ends."""
    while not batch.done[0] and int(batch.seat[0]) != seat:
        batch.step([opponent_action(batch, seat, opponents, rng, match)])
