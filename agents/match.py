"""Play hands between policies on the batched core, and duplicate-deal comparisons."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gostop_env.core import GameBatch, Rules
from gostop_env.core.deck import shuffled_decks
from gostop_env.policy import Policy, check_actions, observe


def play_hands(
    rules: Rules,
    seat_policies: Sequence[Policy],
    decks: np.ndarray,
    rng: np.random.Generator,
    history: list[np.ndarray] | None = None,
    before_step: Callable[[GameBatch, np.ndarray], None] | None = None,
) -> GameBatch:
    """Play one hand per deck with ``seat_policies[s]`` at seat s; return the finished batch.
    With a ``history`` list, each step's actions (-1: no move) are appended to it."""
    return play_out(GameBatch(rules, decks), seat_policies, rng, history, before_step)


def play_out(
    batch: GameBatch,
    seat_policies: Sequence[Policy],
    rng: np.random.Generator,
    history: list[np.ndarray] | None = None,
    before_step: Callable[[GameBatch, np.ndarray], None] | None = None,
) -> GameBatch:
    """Play every game of ``batch`` to its end in place, ``seat_policies[s]`` at seat s.
    ``before_step(batch, actions)`` sees each step's state and actions before they are played."""
    if len(seat_policies) != batch.rules.players:
        raise ValueError(f"need one policy per seat ({batch.rules.players}), got {len(seat_policies)}")
    while not batch.done.all():
        actions = np.full(len(batch), -1, np.int64)
        masks = batch.legal_action_mask()
        for seat, policy in enumerate(seat_policies):
            games = np.flatnonzero(~batch.done & (batch.seat == seat))
            if games.size:
                seen = observe(policy, batch, games, np.full(games.size, seat))
                actions[games] = check_actions(policy(seen, masks[games], rng), masks[games], f"seat {seat}")
        if before_step is not None:
            before_step(batch, actions)
        batch.step(actions)
        if history is not None:
            history.append(actions)
    return batch


@dataclass(frozen=True)
class Comparison:
    """Policy A against policy B over duplicate 2-player deals (each deal played twice,
    seats swapped): A's chips per hand with a 95% interval, and rates."""

    deals: int
    chips_per_hand: float
    ci95: tuple[float, float]
    win_rate: float
    go_rate: float

    def __str__(self) -> str:
        low, high = self.ci95
        return (
            f"{self.deals} duplicate deals: {self.chips_per_hand:+.3f} chips/hand "
            f"(95% CI {low:+.3f} .. {high:+.3f}), win rate {self.win_rate:.1%}, go rate {self.go_rate:.1%}"
        )


def compare(
    policy_a: Policy, policy_b: Policy, deals: int, seed: int = 0, rules: Rules | None = None, batch_size: int = 2048
) -> Comparison:
    """Duplicate-deal comparison of two policies in 2-player games."""
    rules = rules or Rules()
    if rules.players != 2:
        raise ValueError("compare() plays 2-player duplicate deals")
    rng = np.random.default_rng(seed)
    per_deal, wins, gos, stops = [], 0, 0, 0
    for start in range(0, deals, batch_size):
        decks = shuffled_decks(rules, rng, min(batch_size, deals - start))
        first = play_hands(rules, [policy_a, policy_b], decks, rng)
        second = play_hands(rules, [policy_b, policy_a], decks, rng)
        per_deal.append((first.payments[:, 0] + second.payments[:, 1]) / 2.0)
        wins += int((first.winner == 0).sum() + (second.winner == 1).sum())
        gos += int(first.gos[:, 0].sum() + second.gos[:, 1].sum())
        stops += int(
            ((first.winner == 0) & (first.result == 1)).sum() + ((second.winner == 1) & (second.result == 1)).sum()
        )
    chips = np.concatenate(per_deal)
    half = 1.96 * chips.std(ddof=1) / np.sqrt(len(chips))
    return Comparison(
        len(chips),
        float(chips.mean()),
        (float(chips.mean() - half), float(chips.mean() + half)),
        wins / (2 * len(chips)),
        gos / max(gos + stops, 1),
    )
