"""Gymnasium single-agent view (``GoStop-v0``): one learning seat against opponent policies.

Each episode is one hand. The learner's seat is fixed (``learner_seat=0..P-1``) or drawn
each hand (``"random"``); the other seats are played by opponent policies (see
:mod:`gostop_env.policy`; default: random legal play), all inside ``step``. The
observation is the learner's encoding; ``action_masks()`` (and ``info["action_mask"]``)
gives the legal actions, as sb3-contrib's MaskablePPO expects. The reward is the learner's
chip payment × ``reward_scale`` when the hand ends, else 0. An illegal action ends the
hand with ``illegal_reward`` for the learner (``illegal_action="penalize"``, the default, so
that any action of the action space is valid input, as Gymnasium expects) or raises
:class:`~gostop_env.core.IllegalActionError` (``"raise"``). An action that is not an
integer (a float such as 2.7, a string) is a TypeError in both modes: it is never rounded.
``opponents`` is one policy for every other seat, or a list whose entry k plays the seat
k + 1 places after the learner.

A hand that ends before the learner's first decision (a chongtong deal, or an opponent
stopping first) has no decision to learn from: ``reset`` deals again and lists the skipped
hands' payments for the learner in ``info["skipped_hands"]``.

With ``match_hands`` an episode is a match (:mod:`gostop_env.match_episodes`): the learner is
one player throughout (``learner_seat`` then names the player, whose seat moves with the
lead), the observation has the match sections, and ``reward`` may be paid at the match's
end (hands of the match that end before the learner's first decision, chongtong deals, are
rewarded with its first step). ``info["seat"]`` is the learner's seat in the current hand,
``info["player"]`` its player.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from .core import NUM_ACTIONS, GameBatch, IllegalActionError, Phase, Rules, batch_class
from .core.actions import integer_action
from .core.deck import check_seed, shuffled_decks
from .core.match import MatchLedger, MatchView
from .encodings import OBSERVATION_HIGH, encode, encoding_shape, with_match
from .env_options import finite_number, flag, reset_options
from .match_episodes import check_reward, hand_rewards, match_format, settle_hands
from .policy import Policy, opponent_policies
from .render import RENDER_MODES, check_render_mode, render_frame, render_table, unsupported_render
from .seats import play_opponents


class GoStopEnv(gymnasium.Env):
    """One seat of a Go-Stop hand against opponent policies."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 1}

    def __init__(
        self,
        players: int = 2,
        preset: str = "seed",
        rules: dict[str, Any] | None = None,
        encoding: str = "vector",
        learner_seat: int | str = "random",
        opponents: Policy | Sequence[Policy] | None = None,
        nagari_carry: bool = True,
        reward_scale: float = 1.0,
        illegal_action: str = "penalize",
        illegal_reward: float = -10.0,
        render_mode: str | None = None,
        backend: str | None = None,
        reward: str = "chips",
        match_hands: int | None = None,
        match_bankroll: int | None = None,
    ):
        self.rules = Rules.preset(preset, players=players, **(rules or {}))
        self.format = match_format(self.rules, match_hands, match_bankroll)
        self.reward = check_reward(reward, self.format)
        if self.format is not None:
            encoding = with_match(encoding)
        self._batch_class = batch_class(backend)  # ValueError for an unknown engine
        self.backend = self._batch_class.backend
        if learner_seat != "random" and learner_seat not in range(players):
            raise ValueError(f"learner_seat must be 0..{players - 1} or 'random', got {learner_seat!r}")
        self.render_mode = check_render_mode(render_mode)
        self.encoding, self.learner_seat = encoding, learner_seat
        self.opponents = opponent_policies(opponents, players)
        self.nagari_carry = flag("nagari_carry", nagari_carry)
        self.reward_scale = finite_number("reward_scale", reward_scale)
        if illegal_action not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {illegal_action!r}")
        self.illegal_action, self.illegal_reward = illegal_action, finite_number("illegal_reward", illegal_reward)
        self.observation_space = gymnasium.spaces.Box(0.0, OBSERVATION_HIGH, encoding_shape(encoding), np.float32)
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self._rng, self._carry, self.seat, self.player, self._hand_over = np.random.default_rng(), 0, 0, 0, True
        self.batch: GameBatch | None = None
        self._pending = 0.0  # reward owed to the learner for hands before its first decision
        self.ledger = None if self.format is None else MatchLedger(self.format, players, 1)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new hand and play the opponents up to the learner's first decision.
        ``options``: ``{"deck": [...]}`` deals that deck order (top card first; checked),
        ``{"carry": n}`` sets the nagari carry (:mod:`gostop_env.env_options`)."""
        if seed is not None:
            seed = check_seed(seed)
        asked = reset_options(options)
        super().reset(seed=seed)
        if seed is not None:
            self._rng, self._carry = np.random.default_rng(seed), 0
        if asked.carry is not None:
            self._carry = asked.carry
        skipped = []
        while True:
            self.player = (
                int(self._rng.integers(self.rules.players)) if self.learner_seat == "random" else int(self.learner_seat)
            )
            if self.ledger is not None:
                self.ledger.restart(slice(None))
                self._carry = asked.carry or 0
            self._deal(asked.deck)
            reward = self._play_to_learner()
            if not self._hand_over:
                self._pending = reward  # a match's hands before the learner's first decision
                break
            if asked.deck is not None:
                raise ValueError("the given deck's hand ends before the learner's first decision")
            skipped.append(reward)
        return self._observation(), self._info(skipped_hands=skipped)

    def _deal(self, deck: Any = None) -> None:
        """A new hand (``deck``, checked, or shuffled by the env's generator), the learner at
        its player's seat."""
        self.seat = self.player if self.ledger is None else int(self.ledger.seat_of(self.player)[0])
        carry = self._carry if self.nagari_carry else 0
        if deck is None:
            self.batch = self._batch_class(self.rules, shuffled_decks(self.rules, self._rng, 1), carry=carry)
        else:
            self.batch = GameBatch.from_decks(self.rules, [deck], carry, self.backend)  # checked

    def _play_to_learner(self) -> float:
        """Play the opponents until the learner is to move or the episode is over (in a
        match, hands that end are entered and the next dealt); the learner's reward meanwhile."""
        reward = 0.0
        while True:
            self._play_opponents()
            if not self.batch.done[0]:
                self._hand_over = False
                return reward
            payments = self.batch.payments[:1]
            self._end_hand()
            if self.ledger is None:
                return reward + float(hand_rewards(payments, self.reward)[0, self.seat]) * self.reward_scale
            paid = settle_hands(self.ledger, np.array([0]), payments, self.batch.winner[:1], self.reward)
            reward += float(paid[0, self.player]) * self.reward_scale
            if self.ledger.over[0]:
                return reward
            self._deal()

    def step(self, action: int):
        if self.batch is None or self._hand_over:
            raise RuntimeError("step() called on a finished hand: call reset() first")
        action = integer_action(action)  # TypeError for floats, strings, ...: never rounded
        legal = self.batch.legal_actions(0)
        if action not in legal:
            return self._illegal(action, legal)
        self.batch.step([action])
        reward, self._pending = self._pending + self._play_to_learner(), 0.0
        done = self._hand_over
        info = self._info(**self._final()) if done else self._info()
        if self.render_mode == "human":
            print(self.render_text())
        return self._observation(), reward, done, False, info

    def _illegal(self, action: int, legal: list[int]):
        if self.illegal_action == "raise":
            raise IllegalActionError(action, Phase(self.batch.phase[0]), legal)
        self._hand_over = True  # the hand is abandoned; nobody is paid
        return self._observation(), self.illegal_reward, True, False, self._info(illegal_action=action)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner's current decision, ``(125,)`` bool (none once over)."""
        if self._hand_over:
            return np.zeros(NUM_ACTIONS, bool)
        return self.batch.legal_action_mask()[0]

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The table as text (``"ansi"``; ``"human"`` prints it) or as an image
        (``"rgb_array"``), as the learner sees it (every card, with the ``oracle`` encoding)."""
        if unsupported_render(self.render_mode) or self.batch is None:
            return None
        if self.render_mode == "rgb_array":
            return render_frame(self.batch.snapshot(0), self.rules, self.seat, self.encoding)
        text = self.render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def render_text(self) -> str:
        return render_table(self.batch, 0, viewer=self.seat) if self.batch is not None else ""

    # ---- inside a step -------------------------------------------------------------------
    def _play_opponents(self) -> None:
        """Let opponent policies move until the learner decides or the hand ends."""
        play_opponents(self.batch, self.seat, self.opponents, self._rng, self._match_view)

    def _end_hand(self) -> None:
        self._hand_over = True
        self._carry = int(self.batch.next_carry[0]) if self.nagari_carry else 0

    def _match_view(self) -> MatchView | None:
        """Where the match stands now (None: a lone hand)."""
        return None if self.ledger is None else self.ledger.view(self.batch.seat.astype(np.int64))

    def _observation(self) -> np.ndarray:
        return encode(self.batch, np.array([self.seat]), self.encoding, self._match_view())[0]

    def _final(self) -> dict[str, Any]:
        """What the info of an episode's last step adds: the last hand's payments, and in
        a match the chips each player won over it and the hands played."""
        final: dict[str, Any] = {"payments": self.batch.payments[0].tolist()}
        if self.ledger is not None:
            final.update(match_standing=self.ledger.standing[0].tolist(), match_hands=int(self.ledger.played[0]))
        return final

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.seat, "player": self.player, **extra}
