"""Greedy card-play baselines, each with a pluggable go/stop rule.

Both read only their observation (the ``vector`` encoding, see :mod:`gostop.agents.view`) and
judge a play by what the played card takes from the layout now; the flip is unknown.

- :class:`SimpleGreedy` takes the most cards, bombs when it can, never shakes.
- :class:`Greedy` values what it takes by the score it adds and by card values, adds the
  junk that a stack capture steals, discounts a pair by the chance that the flip makes a
  ppuk, prefers bombs, and shakes whenever it can (a shake doubles a win).
"""

from __future__ import annotations

import numpy as np

from gostop_env.core import GameBatch, Phase, Rules
from gostop_env.core import actions as A
from gostop_env.core import cards as C
from gostop_env.core.scoring import read_piles

from .go_stop import AlwaysStop
from .greedy_values import (
    BOMB_BONUS,
    CARD_VALUE,
    EXPOSURE,
    MONTH_CARDS_BY_VALUE,
    MONTH_MASKS,
    PASS_VALUE,
    POINT_VALUE,
    STEAL_VALUE,
    U64,
)
from .view import View


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x).astype(np.int64)


def _board_value(board: np.ndarray) -> np.ndarray:
    """Sum of card values of each bitboard."""
    weights = (board[:, None] >> np.arange(C.NUM_CARDS, dtype=U64)) & U64(1)
    return weights.astype(np.float64) @ CARD_VALUE


class _Base:
    """Shared decision plumbing: go/stop through the rule, choices by card value."""

    encoding = "vector"

    def __init__(self, go_stop=None, rules: Rules | None = None):
        self.go_stop = go_stop or AlwaysStop()
        self.rules = rules or Rules()

    def __call__(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        masks = np.asarray(masks, bool)
        view = View.of(observations)
        actions = np.full(len(masks), -1, np.int64)
        go_stop = np.flatnonzero(view.phase == Phase.GO_STOP)
        if go_stop.size:
            goes = self.go_stop(_rows(view, go_stop))
            actions[go_stop] = np.where(goes, A.GO, A.STOP)
        choosing = np.flatnonzero((view.phase == Phase.CHOOSE_HAND) | (view.phase == Phase.CHOOSE_FLIP))
        if choosing.size:
            candidates = masks[choosing, A.CHOOSE : A.CHOOSE + C.NUM_MONTH_CARDS]
            actions[choosing] = A.CHOOSE + np.where(candidates, CARD_VALUE[:48], -np.inf).argmax(axis=1)
        playing = np.flatnonzero(view.phase == Phase.PLAY)
        if playing.size:
            actions[playing] = self._play(_rows(view, playing), masks[playing])
        return actions

    def _play(self, view: View, masks: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def _rows(view: View, rows: np.ndarray) -> View:
    return View(
        {k: v[rows] for k, v in view.boards.items()},
        view.scores[rows],
        view.gos[rows],
        view.hand_sizes[rows],
        view.stock_size[rows],
        view.target[rows],
        view.phase[rows],
    )


def _taken_by_play(card: int, layout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cards the played card takes now, how many of its month lie on the layout)."""
    same = layout & MONTH_MASKS[card]
    count = _popcount(same)
    best_of_two = np.zeros(len(layout), U64)
    for other in MONTH_CARDS_BY_VALUE[card]:  # the most valuable one is written last and wins
        best_of_two = np.where((same >> U64(other)) & U64(1) == 1, U64(1 << other), best_of_two)
    taken = np.where(count == 3, same, np.where(count >= 1, best_of_two, U64(0)))
    return np.where(count > 0, taken | U64(1 << card), U64(0)), count


class SimpleGreedy(_Base):
    """Plays the card that takes the most cards now (lowest id among equals); bombs when it can."""

    name = "simple"

    def _play(self, view: View, masks: np.ndarray) -> np.ndarray:
        scores = np.full(masks.shape, -np.inf)
        for card in np.flatnonzero(masks[:, : C.NUM_CARDS].any(axis=0)):
            taken, _ = _taken_by_play(card, view.boards["layout"])
            scores[:, card] = np.where(masks[:, card], _popcount(taken) - card / 100.0, -np.inf)
        bombs = masks[:, A.BOMB : A.PASS]
        scores[:, A.BOMB : A.PASS] = np.where(bombs, 10.0, -np.inf)
        scores[:, A.PASS] = np.where(masks[:, A.PASS], -1.0, -np.inf)
        return scores.argmax(axis=1)


class Greedy(_Base):
    """Values each play by the score and card worth it takes now, steals and ppuk risk."""

    name = "greedy"
    kernel_compiled = True  # its decisions are what compiled_greedy's kernels compute

    def batch_actions(self, batch: GameBatch, games: np.ndarray) -> np.ndarray | None:
        """The fast path it declares (:mod:`gostop_env.seats`): on a compiled batch of its own
        rules, its moves by the compiled greedy's kernel (:mod:`.compiled_greedy`; the same
        moves, held equal by tests); None elsewhere, and for go/stop rules the kernel lacks."""
        if batch.backend == "numpy" or batch.rules != self.rules:
            return None
        from . import compiled_greedy

        row = compiled_greedy.seat_parameters(self)
        if row is None:
            return None
        params = np.tile(row, (batch.rules.players, 1))
        return compiled_greedy.greedy_actions(batch, params)[games]  # type: ignore[arg-type]

    def _play(self, view: View, masks: np.ndarray) -> np.ndarray:
        shake = masks[:, A.SHAKE : A.BOMB]
        if shake.any():
            rows = shake.any(axis=1)
            chosen = np.where(rows, A.SHAKE + shake.argmax(axis=1), -1)
            if rows.all():
                return chosen
        else:
            rows, chosen = np.zeros(len(masks), bool), np.full(len(masks), -1)
        values = self._play_values(view, masks)
        return np.where(rows, chosen, values.argmax(axis=1))

    def _play_values(self, view: View, masks: np.ndarray) -> np.ndarray:
        pile, layout, unseen = view.boards["own_pile"], view.boards["layout"], view.boards["unseen"]
        base = read_piles(pile, self.rules)["score"].astype(np.float64)
        opponents = self.rules.players - 1
        unseen_count = np.maximum(_popcount(unseen), 1)
        values = np.full(masks.shape, -np.inf)
        for card in np.flatnonzero(masks[:, : C.NUM_CARDS].any(axis=0)):
            if card >= C.NUM_MONTH_CARDS:  # a bonus card: to the pile at once, maybe a steal (§15)
                taken = np.full(len(masks), U64(1 << int(card)))
                value = self._gain(pile, taken, base) + STEAL_VALUE * opponents * self.rules.bonus_steal
                values[:, card] = np.where(masks[:, card], value, -np.inf)
                continue
            taken, count = _taken_by_play(card, layout)
            value = self._gain(pile, taken, base)
            value += np.where(count == 3, STEAL_VALUE * opponents, 0.0)
            ppuk_chance = _popcount(unseen & MONTH_MASKS[card]) / unseen_count
            value -= np.where(count == 1, ppuk_chance * value, 0.0)
            value -= np.where(count == 0, EXPOSURE * CARD_VALUE[card], 0.0)
            values[:, card] = np.where(masks[:, card], value, -np.inf)
        for month in np.flatnonzero(masks[:, A.BOMB : A.PASS].any(axis=0)):
            taken = np.full(len(masks), U64(C.MONTH_BITS[month]))
            value = self._gain(pile, taken, base) + BOMB_BONUS
            values[:, A.BOMB + month] = np.where(masks[:, A.BOMB + month], value, -np.inf)
        values[:, A.PASS] = np.where(masks[:, A.PASS], PASS_VALUE, -np.inf)
        return values

    def _gain(self, pile: np.ndarray, taken: np.ndarray, base: np.ndarray) -> np.ndarray:
        """Score points added (each worth POINT_VALUE) plus the card worth of what is taken."""
        after = read_piles(pile | taken, self.rules)["score"]
        return POINT_VALUE * (after - base) + _board_value(taken)
