"""Play hands between policies on the batched core."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gostop_env.core import GameBatch, Rules, batch_class
from gostop_env.core.match import MatchBatch, MatchFormat
from gostop_env.policy import Policy
from gostop_env.seats import controlled_actions


def play_hands(
    rules: Rules,
    seat_policies: Sequence[Policy],
    decks: np.ndarray,
    rng: np.random.Generator,
    history: list[np.ndarray] | None = None,
    before_step: Callable[[GameBatch, np.ndarray], None] | None = None,
    backend: str | None = None,
) -> GameBatch:
    """Play one hand per deck with ``seat_policies[s]`` at seat s; return the finished batch.
    With a ``history`` list, each step's actions (-1: no move) are appended to it. ``backend``:
    the core's engine (None: the default)."""
    return play_out(batch_class(backend)(rules, decks), seat_policies, rng, history, before_step)


def play_out(
    batch: GameBatch,
    seat_policies: Sequence[Policy],
    rng: np.random.Generator,
    history: list[np.ndarray] | None = None,
    before_step: Callable[[GameBatch, np.ndarray], None] | None = None,
) -> GameBatch:
    """Play every game of ``batch`` to its end in place, ``seat_policies[s]`` at seat s.
    ``before_step(batch, actions)`` sees each step's state and actions before they are played.
    A policy object that sits at several seats is asked once a step for all of them (its
    games in batch order), in the order of the seat it first sits at.

    On a compiled batch whose every seat plays a compiled greedy (exactly ``Greedy`` with
    the always-stop or a threshold rule), with no history or hook asked for, one kernel call
    plays the hands (:mod:`.compiled_greedy`): the same games, far faster."""
    if len(seat_policies) != batch.rules.players:
        raise ValueError(f"need one policy per seat ({batch.rules.players}), got {len(seat_policies)}")
    if history is None and before_step is None and batch.backend != "numpy":
        from . import compiled_greedy  # numba is there: the batch runs compiled

        params = compiled_greedy.compiled_seats(batch, seat_policies)
        if params is not None:
            compiled_greedy.play_out_greedy(batch, params)  # type: ignore[arg-type]
            return batch
    policies, names, group_of_seat = _grouped(seat_policies, "seat")
    while not batch.done.all():
        actions = np.full(len(batch), -1, np.int64)
        masks = batch.legal_action_mask()
        controller = np.where(batch.done, -1, group_of_seat[batch.seat.astype(np.int64)])
        controlled_actions(batch, actions, controller, policies, masks, rng, names)
        if before_step is not None:
            before_step(batch, actions)
        batch.step(actions)
        if history is not None:
            history.append(actions)
    return batch


def play_matches(
    rules: Rules,
    fmt: MatchFormat,
    player_policies: Sequence[Policy],
    seed: int,
    matches: int,
    rng: np.random.Generator,
    backend: str | None = None,
    first: int = 0,
) -> MatchBatch:
    """Play ``matches`` matches (ids ``first`` on) with ``player_policies[p]`` as player p,
    whatever seat p holds in each hand; return them finished (``standing``, ``played``).
    ``"state"`` policies see where each match stands (:class:`~gostop_env.core.match.MatchView`)."""
    if len(player_policies) != rules.players:
        raise ValueError(f"need one policy per player ({rules.players}), got {len(player_policies)}")
    batch = MatchBatch(rules, fmt, seed, matches, backend, first)
    policies, names, group_of_player = _grouped(player_policies, "player")
    while not batch.done.all():
        actions = np.full(len(batch), -1, np.int64)
        mover = batch.player_to_move
        controller = np.where(mover >= 0, group_of_player[np.maximum(mover, 0)], -1)
        where = batch.view()
        controlled_actions(
            batch.hand, actions, controller, policies, batch.hand.legal_action_mask(), rng, names, None, where
        )
        batch.step(actions)
    return batch


def _grouped(place_policies: Sequence[Policy], place: str) -> tuple[list[Policy], list[str], np.ndarray]:
    """Each distinct policy object once, in order of the first place (seat or player) it
    holds; a name for each ("seat 1", "seats [0, 2]"); the index of each place's policy."""
    groups: dict[int, tuple[Policy, list[int]]] = {}
    for k, policy in enumerate(place_policies):
        groups.setdefault(id(policy), (policy, []))[1].append(k)
    policies = [policy for policy, _ in groups.values()]
    names = [f"{place} {held[0]}" if len(held) == 1 else f"{place}s {held}" for _, held in groups.values()]
    group_of = np.zeros(len(place_policies), np.int64)
    for k, (_, held) in enumerate(groups.values()):
        group_of[held] = k
    return policies, names, group_of
