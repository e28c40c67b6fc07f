"""PettingZoo AEC environment for Go-Stop: one hand per episode, a thin layer over the core.

``env(**kwargs)`` is the environment, ``raw_env`` its class (the same object: it makes
PettingZoo's order checks itself, see :func:`env`); ``gostop_env.gostop_v0`` exposes both
under the versioned name.
Agents are ``player_0`` (the dealer, first to move), ``player_1`` and, with 3 players,
``player_2``. The same agent may act several times in a row (shake then play, a choice,
go/stop). No rule is decided here: by default the hand is a
:class:`~gostop_env.core.ReferenceGame`, the core's single-game engine (checked step by step
against the vectorised core), which is far cheaper than a batch of one; observations come
from :func:`~gostop_env.encodings.encode_game`, equal to the batched encodings.

Options:
    players: 2 or 3. preset: ``"seed"``, ``"korean"`` or ``"matgo"`` (2 players). rules: a dict of rule overrides
    (see :class:`~gostop_env.core.Rules`). encoding: ``"vector"`` (default), ``"tokens"``
    or ``"oracle"`` (sees hidden cards: research only). nagari_carry: carry consecutive
    nagari hands into the next hand's payments (default True). illegal_action: ``"raise"``
    (default: IllegalActionError naming the legal actions) or ``"penalize"`` (PettingZoo's
    classic convention: the hand ends, the offender gets ``illegal_reward``, others 0).
    reward: ``"chips"`` (default), ``"win"``, ``"match_win"`` or ``"match_chips"``
    (:mod:`gostop_env.match_episodes`). match_hands, match_bankroll: play one match per
    episode (below). reward_scale: rewards are multiplied by this (default 1). render_mode: ``"ansi"``, ``"human"`` or
    ``"rgb_array"`` (an image of the table, :mod:`gostop_env.drawing`). backend:
    ``"reference"`` (default: the one-hand engine) or a batched core's engine, ``"numpy"``,
    ``"numba"`` or ``"numba-parallel"``, playing a batch of one
    (:class:`~gostop_env.batch_game.BatchGame`): the same hands from the same seeds.

An action is an integer id (Python or NumPy); anything else (a float, a string, or None for
an agent that is to move) is a TypeError in either mode, never rounded. ``reset(options=...)``
takes ``{"deck": [...]}`` and ``{"carry": n}`` (:mod:`gostop_env.env_options`).

Every agent's ``info`` has the same keys, with arrays of fixed shape, at every step of a
hand (so that clients which stack infos, such as Tianshou's collectors, can store them):

- ``action_mask``: ``(125,)`` int8, the legal actions (all zero unless the agent is to move);
- ``event_counts``: ``(P, len(Event))`` int64, what the last step did, per seat, in
  :class:`~gostop_env.core.Event` order;
- ``captured``: ``(P,)`` uint64 bitboards of the cards each seat took in the last step;
  ``stolen``: ``(P, P)`` uint64 bitboards, ``stolen[taker, giver]``;
- ``payments``: ``(P,)`` int64, the hand's payments (zero until it ends); ``result``: the
  :class:`~gostop_env.core.Result` code (0 while the hand goes on);
- ``chongtong_hands`` and ``chongtong_payments`` ``(P,)``: chongtong deals skipped before
  this hand (a chongtong ends before anyone decides, so ``reset`` deals again) and what
  they paid;
- ``illegal_by``: the seat whose illegal action ended the hand (``"penalize"`` mode), else -1.

``event_lines()`` gives the last step's events as readable lines.

With ``match_hands=N`` an episode is a match of N hands (:mod:`gostop_env.match_episodes`):
the agents are the match's players, and ``player_k`` holds seat (k - leader) % P of each
hand, where the leader is the player who won the hand before. A hand that ends is rewarded
(by ``reward``) in the step that ends it, and the next hand is dealt at once; the agents
terminate when the match is over. The observation has the match sections, the infos'
per-seat arrays are by player, and every info adds ``seat`` (the agent's seat in the
current hand), ``match_standing`` ``(P,)`` (each player's chips so far) and
``match_hands`` (hands finished). A chongtong deal is a hand of the match.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from .batch_game import REFERENCE, BatchGame
from .core import NUM_ACTIONS, Events, IllegalActionError, Phase, ReferenceGame, Rules, batch_class
from .core.actions import integer_action
from .core.cards import bits
from .core.deck import check_seed
from .core.match import MatchLedger
from .encodings import OBSERVATION_HIGH, encode_game, encoding_shape, with_match
from .env_options import finite_number, flag, reset_options
from .match_episodes import check_reward, hand_rewards, match_format, settle_hands
from .render import RENDER_MODES, check_render_mode, render_frame, render_snapshot, unsupported_render
from .replay import describe


def env(**kwargs: Any) -> AECEnv:
    """The Go-Stop AEC environment. PettingZoo's default wrappers are not needed, so none is
    added: ``raw_env`` makes the order checks of PettingZoo's ``OrderEnforcingWrapper`` itself
    (the same errors: ``step``, ``observe``, ``render`` or ``agent_iter`` before ``reset``; a
    loop over ``agent_iter`` that does not step; a warning for a step after every agent is
    done) and checks every action itself (out-of-range ids included), answering as
    ``illegal_action`` says and naming the legal actions. Without a wrapper, every attribute
    read is a plain one: the wrapper's forwarding cost more than a tenth of a decision."""
    return raw_env(**kwargs)


class _CheckedIterable(AECIterable):
    """What ``raw_env.agent_iter`` returns: iterates with :class:`_CheckedIterator`."""

    def __iter__(self) -> _CheckedIterator:
        return _CheckedIterator(self.env, self.max_iter)


class _CheckedIterator(AECIterator):
    """``agent_iter``'s iterator with the order wrapper's check that each turn steps."""

    def __next__(self) -> str:
        agent: str = super().__next__()
        if not self.env._stepped:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        self.env._stepped = False
        return agent


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's naming convention)
    """Go-Stop as a PettingZoo AEC environment (see the module docstring for options)."""

    metadata = {"name": "gostop_v0", "render_modes": RENDER_MODES, "is_parallelizable": False}

    def __init__(
        self,
        players: int = 2,
        preset: str = "seed",
        rules: dict[str, Any] | None = None,
        encoding: str = "vector",
        nagari_carry: bool = True,
        illegal_action: str = "raise",
        illegal_reward: float = -10.0,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
        backend: str = REFERENCE,
        reward: str = "chips",
        match_hands: int | None = None,
        match_bankroll: int | None = None,
    ):
        super().__init__()
        self.rules = Rules.preset(preset, players=players, **(rules or {}))
        self.format = match_format(self.rules, match_hands, match_bankroll)
        self.reward = check_reward(reward, self.format)
        self.ledger = None if self.format is None else MatchLedger(self.format, players, 1)
        if self.format is not None:
            encoding = with_match(encoding)
        if backend != REFERENCE:
            batch_class(backend)  # ValueError for an unknown engine, ImportError for one not installed
        self.backend = backend
        encoding_shape(encoding)  # raises on an unknown encoding
        if illegal_action not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {illegal_action!r}")
        self.render_mode = check_render_mode(render_mode)
        self.encoding, self.nagari_carry = encoding, flag("nagari_carry", nagari_carry)
        self.illegal_action, self.illegal_reward = illegal_action, finite_number("illegal_reward", illegal_reward)
        self.reward_scale = finite_number("reward_scale", reward_scale)
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self._player_of = {agent: player for player, agent in enumerate(self.possible_agents)}
        self.agents = list(self.possible_agents)
        self._observation_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, OBSERVATION_HIGH, encoding_shape(encoding), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self._action_space: gymnasium.spaces.Discrete = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self._rng = np.random.default_rng()
        self._carry = 0
        self._opening = np.zeros(players)  # what a match's opening chongtong hands paid (see _deal)
        self.game: ReferenceGame | BatchGame | None = None
        self._scores: list[int] = []
        self._chongtong = (0, self._no_payments())  # chongtong deals skipped before this hand, their payments
        self._last_events, self._events_leader = Events(players), 0
        self._has_reset = False  # PettingZoo's order checks (see env())
        self._stepped = False  # a step or reset since agent_iter last gave an agent

    # ---- spaces ------------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._action_space

    # ---- episode -----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand. ``options``: ``{"deck": [...]}`` deals that deck order (top card
        first), ``{"carry": n}`` sets the nagari carry."""
        self._has_reset = self._stepped = True
        if seed is not None:
            self._rng = np.random.default_rng(check_seed(seed))
            self._carry = 0
        asked = reset_options(options)
        if asked.carry is not None:
            self._carry = asked.carry
        self.agents = list(self.possible_agents)
        if self.ledger is not None:
            self.ledger.restart(slice(None))
            self._carry = asked.carry or 0
        skipped = self._deal(asked.deck)
        paid = np.array(skipped, np.int64).sum(axis=0) if skipped else self._no_payments()
        self._chongtong = (len(skipped), paid)
        opening = self._opening * self.reward_scale  # a match's chongtong hands before its first decision
        self.rewards = {a: float(opening[i]) for i, a in enumerate(self.agents)}
        self._cumulative_rewards = dict(self.rewards)
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._refresh()
        self._set_infos(self.game.deal_events)
        self.agent_selection = self._agent(self.game.seat)

    def _deal(self, deck: Any) -> list[list[int]]:
        """Deal until a hand needs a decision; return the payments (by player) of chongtong
        deals skipped: every one of a lone hand, and in a match those of matches that ended
        before anyone decided. A match's chongtong hands before its first decision are hands
        of the match: ``_opening`` keeps what they pay each player, rewarded at the reset."""
        skipped: list[list[int]] = []
        self._opening = np.zeros(self.rules.players)
        while True:
            carry = self._carry if self.nagari_carry else 0
            self.game = self._new_game(deck, carry)
            self.deck = self.game.deck  # the current hand's deck order, top card first
            if not self.game.done:
                return skipped
            if deck is not None:
                raise ValueError("the given deck deals a chongtong: the hand ends before any decision")
            self._carry = 0
            if self.ledger is None:
                skipped.append(list(self.game.payments))
                continue
            self._carry = self.game.next_carry if self.nagari_carry else 0
            self._opening += self._settle()
            if self.ledger.over[0]:
                skipped.append(self.ledger.standing[0].tolist())
                self.ledger.restart(slice(None))
                self._opening[:], self._carry = 0, 0

    def _settle(self) -> np.ndarray:
        """Enter the finished hand in the match; what it pays each player, by ``reward``,
        with the match's reward if it is over (by player, unscaled)."""
        assert self.ledger is not None
        payments, winner = np.array([self.game.payments], np.int64), np.array([self.game.winner])
        return settle_hands(self.ledger, np.array([0]), payments, winner, self.reward)[0]

    def _new_game(self, deck: Any, carry: int) -> ReferenceGame | BatchGame:
        """A hand dealt from ``deck`` (checked: ValueError saying why), or shuffled by the
        env's generator, on the env's engine."""
        if self.backend == REFERENCE:
            if deck is None:
                return ReferenceGame.from_shuffle(self.rules, self._rng, carry)
            return ReferenceGame(self.rules, deck, carry)
        if deck is None:
            return BatchGame.from_shuffle(self.rules, self._rng, carry, self.backend)
        return BatchGame.from_deck(self.rules, deck, carry, self.backend)

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _CheckedIterable(self, max_iter)

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._stepped = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise TypeError(f"step(None) is for agents that are done; {agent} is to move: give an action id")
        self._cumulative_rewards[agent] = 0.0
        action = integer_action(action)  # TypeError for floats, strings, ...: never rounded
        if not self._is_legal(action):
            self._illegal(agent, action)
            return
        events = self.game.step(action)
        self._after_step(events)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _is_legal(self, action: int) -> bool:
        return 0 <= action < NUM_ACTIONS and self._mask_now[action] == 1

    def _illegal(self, agent: str, action: int) -> None:
        if self.illegal_action == "raise":
            raise IllegalActionError(int(action), Phase(self.game.phase), self.game.legal_actions())
        self.rewards = {a: (self.illegal_reward if a == agent else 0.0) for a in self.agents}
        self.terminations = {a: True for a in self.agents}
        self._set_infos(Events(self.rules.players), illegal_by=self._player_of[agent])
        self._accumulate_rewards()

    def _after_step(self, events: Events) -> None:
        done, lead = self.game.done, self._leader()  # the hand the events come from
        paid = np.zeros(self.rules.players)
        if done:
            self._carry = self.game.next_carry if self.nagari_carry else 0
            if self.ledger is None:
                paid = hand_rewards(np.array([events.payments]), self.reward)[0]
                self.terminations = {a: True for a in self.agents}
            else:
                paid = self._next_hand()
        self.rewards = {a: float(paid[i]) * self.reward_scale for i, a in enumerate(self.agents)}
        self._refresh()
        self._set_infos(events, lead=lead, ended=done)
        self.agent_selection = self._agent(self.game.seat)

    def _next_hand(self) -> np.ndarray:
        """In a match, after a hand ends: enter it, and deal the next hands until one needs a
        decision or the match is over (then the agents terminate); what they paid each player."""
        assert self.ledger is not None
        paid = self._settle()
        while not self.ledger.over[0]:
            self.game = self._new_game(None, self._carry if self.nagari_carry else 0)
            self.deck = self.game.deck
            if not self.game.done:
                return paid
            self._carry = self.game.next_carry if self.nagari_carry else 0
            paid = paid + self._settle()
        self.terminations = {a: True for a in self.agents}
        return paid

    def _refresh(self) -> None:
        """Cache what every observer of this step needs: scores and the legal-action mask."""
        self._scores = self.game.scores()
        mask = bytearray(NUM_ACTIONS)  # item by item: cheaper than NumPy's fancy indexing for a few actions
        for action in self.game.legal_actions():
            mask[action] = 1
        self._mask_now = np.frombuffer(mask, np.int8)

    def _set_infos(self, events: Events, illegal_by: int = -1, lead: int | None = None, ended: bool = False) -> None:
        """Every agent's info: the same keys and shapes at every step (module docstring).
        ``lead``: the leader of the hand the ``events`` come from (None: the current hand's),
        whose seats they are by; ``ended``: that hand ended in this step."""
        lead = self._leader() if lead is None else lead
        self._last_events, self._events_leader = events, lead
        players = self.rules.players
        stolen = np.zeros((players, players), np.uint64)
        for taker, row in enumerate(events.stolen):
            for giver, cards in enumerate(row):
                if cards:
                    stolen[taker, giver] = bits(cards)
        stolen = np.roll(stolen, (lead, lead), axis=(0, 1))
        payments = events.payments if ended else self.game.payments
        shared = {
            "event_counts": np.roll(np.array(events.counts, np.int64), lead, axis=0),
            "captured": np.roll(np.array([bits(c) if c else 0 for c in events.captured], np.uint64), lead),
            "stolen": stolen,
            "payments": np.roll(np.array(payments, np.int64), lead),
            "result": int(self.game.result),
            "chongtong_hands": self._chongtong[0],
            "chongtong_payments": self._chongtong[1],
            "illegal_by": illegal_by,
        }
        if self.ledger is not None:
            shared.update(match_standing=self.ledger.standing[0].copy(), match_hands=int(self.ledger.played[0]))
        idle = np.zeros(NUM_ACTIONS, np.int8)
        over = self.game.done or illegal_by >= 0
        to_move = self._player(self.game.seat)
        for i, agent in enumerate(self.agents):
            mask = self._mask_now if i == to_move and not over else idle
            self.infos[agent] = {"action_mask": mask, **shared}
            if self.ledger is not None:
                self.infos[agent]["seat"] = self._seat(i)

    def event_lines(self) -> list[str]:
        """The last step's events as readable lines (captures, specials, steals, payments);
        in a match, seats are named by their players too."""
        if self.ledger is None:
            return describe(self._last_events, self.rules.players)
        lead, players = self._events_leader, self.rules.players
        return describe(self._last_events, players, lambda seat: f"player_{(seat + lead) % players} (seat {seat})")

    def _no_payments(self) -> np.ndarray:
        return np.zeros(self.rules.players, np.int64)

    def _leader(self) -> int:
        """The player who leads the current hand (seat 0): player 0 outside a match."""
        return 0 if self.ledger is None else int(self.ledger.leader[0])

    def _player(self, seat: int) -> int:
        """The player at ``seat`` of the current hand."""
        return (seat + self._leader()) % self.rules.players

    def _seat(self, player: int) -> int:
        """The seat ``player`` holds in the current hand."""
        return (player - self._leader()) % self.rules.players

    def _agent(self, seat: int) -> str:
        """The agent at ``seat`` of the current hand."""
        return self.possible_agents[self._player(seat)]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        seat = self._seat(self._player_of[agent])
        match = None if self.ledger is None else self.ledger.view(np.array([self.game.seat]))
        if isinstance(self.game, BatchGame):
            observation = self.game.observe(seat, self.encoding, match)
        else:
            observation = encode_game(self.game, seat, self.encoding, self._scores, match)
        if seat != self.game.seat or self.game.done:
            return {"observation": observation, "action_mask": np.zeros(NUM_ACTIONS, np.int8)}
        return {"observation": observation, "action_mask": self._mask_now.copy()}

    # ---- rendering -------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """The table as the seat to move sees it (every card, with the ``oracle`` encoding):
        text (``"ansi"``; ``"human"`` prints it) or an image (``"rgb_array"``)."""
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        if unsupported_render(self.render_mode) or self.game is None:
            return None
        if self.render_mode == "rgb_array":
            return render_frame(self.game.snapshot(), self.rules, self.game.seat, self.encoding)
        text = render_snapshot(self.game.snapshot(), self.rules, viewer=self.game.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.game = None
