"""``gostop serve``: a local web table to play a hand against any agent and to watch replays.

A small Starlette app (``pip install "gostop[table]"``). The page holds no rule of its own:
every state comes from the engine through a JSON API, as an SVG picture of the table drawn
by :mod:`gostop_env.drawing` plus the legal moves with their labels.

- ``POST /api/games`` ``{"players", "preset", "opponent", "seed", "seat"}`` (all optional)
  deals a hand against ``opponent`` (an agent name) and plays the opponents up to your first
  decision; ``GET /api/games/{id}`` is its state; ``POST /api/games/{id}/move``
  ``{"action": id}`` plays your move and the opponents' replies.
- ``GET /api/replays`` lists the replay files of ``--replays DIR``; ``GET
  /api/replays/{name}?step=k`` is the hand after its k-th action, every hand face up (a
  replay viewer is omniscient), with that step's events and, at the end, the payments.
- ``GET /api/cards/{card}.svg`` is one card face (``back.svg``: a face-down card).

A state: ``svg`` (the table as your seat sees it), ``moves`` (``[{"action", "label",
"card"}]``, only when it is your decision), ``phase``, ``to_move``, ``your_seat``,
``flipped`` (cards turned from the stock since your last decision), ``events`` (readable
lines, opponents' moves included), ``stop_payment`` (at your go/stop decision: what
stopping now pays each seat), ``done``, ``payments``, and once over ``replay`` (the hand as
a replay file's fields) and ``breakdown`` (:func:`payment_breakdown`).

Bad requests get a 4xx answer with ``{"error": ...}`` and change nothing: an unknown game or
replay (404), a body that is not a JSON object or has wrong fields (400), an illegal move
(409). The server binds to 127.0.0.1 unless told otherwise, keeps at most
:data:`MAX_GAMES` games in memory (the oldest go first) and reads only the ``.json`` files
directly inside the replay folder, each checked by :class:`gostop_env.replay.Replay` and
replayed by the engine before it is shown.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from gostop.agents.registry import make_agent
from gostop_env.core import Phase, Result, Rules, action_name, batch_class
from gostop_env.core import actions as A
from gostop_env.core.cards import NUM_CARDS, card_name
from gostop_env.core.deck import check_seed, shuffled_decks
from gostop_env.core.rules import PRESETS
from gostop_env.drawing import card_picture, table, to_svg
from gostop_env.human import move_menu
from gostop_env.policy import Policy, decide
from gostop_env.replay import Replay, describe

PAGE = Path(__file__).parent / "table_page.html"
MAX_GAMES = 100
MAX_BODY_BYTES = 10_000


class TableError(Exception):
    """A request the table refuses: ``status`` is the HTTP code, the message says why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class TableGame:
    """One hand between a person (``seat``) and agents in the other seats, on a one-game
    batch of the core (as ``gostop play`` runs it)."""

    def __init__(self, rules: Rules, opponent: str, seed: int | None, seat: int):
        self.rules, self.seat, self.opponent = rules, seat, opponent
        self.rng = np.random.default_rng(None if seed is None else check_seed(seed))
        self.deck = [int(c) for c in shuffled_decks(rules, self.rng, 1)[0]]
        self.batch = batch_class()(rules, np.array([self.deck]))
        self.policies: list[Policy] = [make_agent(opponent, rules) for _ in range(rules.players - 1)]
        self.actions: list[int] = []
        self.events = describe(self.batch.deal_events.game(0), rules.players)
        self.flipped: list[int] = []
        self._opponents_move()

    @property
    def done(self) -> bool:
        return bool(self.batch.done[0])

    @property
    def to_move(self) -> int:
        return int(self.batch.seat[0])

    def move(self, action: Any) -> None:
        """Play the person's ``action`` (an integer id), then the opponents up to the next
        decision; TableError (and no change) if it is not a legal move now."""
        if type(action) is not int:
            raise TableError(400, f"'action' must be an integer action id, got {action!r}")
        if self.done or self.to_move != self.seat:
            raise TableError(409, "it is not your move")
        legal = self.batch.legal_actions(0)
        if action not in legal:
            names = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            raise TableError(409, f"action {action} is not legal now; legal: {names}")
        self.events, self.flipped = [], []
        self._step(action, "you")
        self._opponents_move()

    def _opponents_move(self) -> None:
        while not self.done and self.to_move != self.seat:
            mover = self.to_move
            policy = self.policies[(mover - self.seat) % self.rules.players - 1]
            action = decide(
                policy, self.batch, np.array([0]), self.batch.legal_action_mask(), self.rng, f"seat {mover}"
            )
            self._step(int(action[0]), f"seat {mover}")

    def _step(self, action: int, who: str) -> None:
        before = int(self.batch.stock_pos[0])
        events = self.batch.step([action]).game(0)
        self.actions.append(action)
        self.flipped += [int(c) for c in self.batch.stock[0, before : int(self.batch.stock_pos[0])]]
        self.events += [f"{who}: {action_name(action)}"] + [
            "  " + line for line in describe(events, self.rules.players)
        ]

    def state(self) -> dict[str, Any]:
        """What the page shows (module docstring)."""
        mine = not self.done and self.to_move == self.seat
        phase = Phase(int(self.batch.phase[0]))
        state = {
            "svg": to_svg(table(self.batch.snapshot(0), self.rules.players, self.seat)),
            "moves": _moves(move_menu(self.batch, self.seat)) if mine else [],
            "phase": phase.name.lower(),
            "to_move": None if self.done else self.to_move,
            "your_seat": self.seat,
            "opponent": self.opponent,
            "flipped": [{"card": c, "name": card_name(c)} for c in self.flipped],
            "events": self.events,
            "stop_payment": self._stop_payment() if mine and phase == Phase.GO_STOP else None,
            "done": self.done,
            "payments": self.batch.payments[0].tolist() if self.done else None,
        }
        if self.done:
            state["replay"] = {"rules": self.rules.to_dict(), "deck": self.deck, "actions": self.actions,
                               "carry": 0, "payments": self.batch.payments[0].tolist()}  # fmt: skip
            state["breakdown"] = payment_breakdown(Replay.from_dict(state["replay"]))
        return state

    def _stop_payment(self) -> list[int]:
        """What each seat would be paid if you said stop now (the engine decides)."""
        stopped = self.batch.clone()
        stopped.step([A.STOP])
        return [int(p) for p in stopped.payments[0]]


def payment_breakdown(replay: Replay) -> list[dict[str, Any]]:
    """How a hand that ended by a stop was paid, as the engine computes it: for each loser,
    the named factors of its share (those other than 1, and the base) and the share before
    go-bak. Empty for a nagari."""
    game = replay.game()
    for action in replay.actions:
        game.step(action)
    if game.result != Result.STOP:
        return []
    rows = []
    for loser in (s for s in range(game.rules.players) if s != game.winner):
        factors = game.share_factors(game.winner, loser)
        shown = [[name, value] for k, (name, value) in enumerate(factors) if k == 0 or value != 1]
        share = math.prod(value for _, value in factors)
        rows.append({"payer": loser, "winner": game.winner, "factors": shown, "share": share})
    return rows


def _moves(menu: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The menu's moves for the page; a move that plays or picks a card names it."""
    moves = []
    for label, action in menu:
        card = action if action < A.SHAKE else action - A.CHOOSE if A.CHOOSE <= action < A.GO else None
        moves.append({"action": action, "label": label, "card": card})
    return moves


def _replay_state(replay: Replay, step: int) -> dict[str, Any]:
    """A replay after ``step`` of its actions, every hand face up."""
    game = replay.game()
    events = describe(game.deal_events, game.rules.players)
    for action in replay.actions[:step]:
        seat = game.seat
        events = [f"seat {seat}: {action_name(action)}"] + describe(game.step(action), game.rules.players)
    return {
        "svg": to_svg(table(game.snapshot(), game.rules.players, None)),
        "step": step,
        "steps": len(replay.actions),
        "events": events,
        "done": game.done,
        "payments": list(game.payments) if game.done else None,
        "recorded_payments": replay.payments,
    }


class Tables:
    """The server's games (at most ``MAX_GAMES``, oldest dropped) and replay folder."""

    def __init__(self, opponent: str = "greedy", replays: str | Path | None = None):
        self.opponent, self.replays = opponent, Path(replays) if replays else None
        self.games: OrderedDict[str, TableGame] = OrderedDict()
        self._ids = itertools.count(1)

    def new_game(self, body: dict[str, Any]) -> tuple[str, TableGame]:
        known = {"players", "preset", "opponent", "seed", "seat"}
        if set(body) - known:
            raise TableError(400, f"unknown field(s) {sorted(set(body) - known)}; known: {sorted(known)}")
        try:
            rules = Rules.preset(body.get("preset", "seed"), players=body.get("players", 2))
            seat = body.get("seat", 0)
            if type(seat) is not int or not 0 <= seat < rules.players:
                raise ValueError(f"seat must be 0..{rules.players - 1}, got {seat!r}")
            game = TableGame(rules, body.get("opponent", self.opponent), body.get("seed"), seat)
        except (TypeError, ValueError) as error:
            raise TableError(400, str(error)) from None
        key = str(next(self._ids))
        self.games[key] = game
        while len(self.games) > MAX_GAMES:
            self.games.popitem(last=False)
        return key, game

    def game(self, key: str) -> TableGame:
        if key not in self.games:
            raise TableError(404, f"no game {key!r} (games are kept in memory, at most {MAX_GAMES})")
        return self.games[key]

    def replay_names(self) -> list[str]:
        if self.replays is None:
            return []
        return sorted(p.name for p in self.replays.glob("*.json") if p.is_file())

    def replay(self, name: str) -> Replay:
        if name not in self.replay_names():
            raise TableError(404, f"no replay {name!r}; replays: {self.replay_names()}")
        assert self.replays is not None
        try:
            replay = Replay.load(self.replays / name)
            for _ in replay.play():  # played through: the actions must be legal and the payments agree
                pass
        except (TypeError, ValueError) as error:
            raise TableError(422, f"{name} does not replay: {error}") from None
        return replay


def card_svg(name: str) -> str:
    """One card (``"back"`` or an id 0..49) as an SVG document."""
    if name != "back" and not (name.isdigit() and int(name) < NUM_CARDS):
        raise TableError(404, f"no card {name!r}: ids 0..{NUM_CARDS - 1} or 'back'")
    return to_svg(card_picture(None if name == "back" else int(name)))


def _check_agent(name: str) -> None:
    """ValueError unless ``name`` is an agent for some player count and preset (a shipped
    3-player model is a fine default opponent for 3-player tables)."""
    errors = []
    for players, preset in itertools.product((2, 3), PRESETS):
        try:
            make_agent(name, Rules.preset(preset, players=players))
            return
        except ValueError as error:
            errors.append(error)
    raise errors[0]


def create_app(opponent: str = "greedy", replays: str | Path | None = None) -> Any:
    """The Starlette application (``opponent``: the default agent; ``replays``: a folder)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    _check_agent(opponent)  # an unknown agent fails here, before serving
    tables = Tables(opponent, replays)

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise TableError(413, f"request body over {MAX_BODY_BYTES} bytes")
        try:
            body = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise TableError(400, f"the body is not JSON: {error}") from None
        if not isinstance(body, dict):
            raise TableError(400, "the body must be a JSON object")
        return body

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE.read_text())

    async def new_game(request: Request) -> Response:
        key, game = tables.new_game(await body_of(request))
        return JSONResponse({"id": key, **game.state()}, status_code=201)

    async def show_game(request: Request) -> Response:
        key = request.path_params["key"]
        return JSONResponse({"id": key, **tables.game(key).state()})

    async def move(request: Request) -> Response:
        key = request.path_params["key"]
        game, body = tables.game(key), await body_of(request)
        if set(body) != {"action"}:
            raise TableError(400, 'a move is {"action": <integer action id>}')
        game.move(body["action"])
        return JSONResponse({"id": key, **game.state()})

    async def replays_list(request: Request) -> Response:
        return JSONResponse({"replays": tables.replay_names()})

    async def replay_step(request: Request) -> Response:
        replay = tables.replay(request.path_params["name"])
        try:
            step = int(request.query_params.get("step", "0"))
        except ValueError:
            raise TableError(400, "step must be an integer") from None
        if not 0 <= step <= len(replay.actions):
            raise TableError(400, f"step must be 0..{len(replay.actions)}, got {step}")
        return JSONResponse(_replay_state(replay, step))

    async def card(request: Request) -> Response:
        return Response(card_svg(request.path_params["name"]), media_type="image/svg+xml")

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, TableError)
        return JSONResponse({"error": str(error)}, status_code=error.status)

    routes = [
        Route("/", page),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{key}", show_game),
        Route("/api/games/{key}/move", move, methods=["POST"]),
        Route("/api/replays", replays_list),
        Route("/api/replays/{name}", replay_step),
        Route("/api/cards/{name}.svg", card),
    ]
    return Starlette(routes=routes, exception_handlers={TableError: refused})


def serve(host: str = "127.0.0.1", port: int = 8000, opponent: str = "greedy", replays: str | None = None) -> None:
    """Run the table until interrupted (``gostop serve``)."""
    import uvicorn

    print(f"the table is at http://{host}:{port}/  (Ctrl-C stops it)")
    uvicorn.run(create_app(opponent, replays), host=host, port=port, log_level="warning")
