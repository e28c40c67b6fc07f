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
- ``GET /api/cards/{card}.svg`` is one card face (``back.svg``: a face-down card); ``GET
  /cards`` is a gallery of every card by month, named.

A state: ``svg`` (the table as your seat sees it), ``moves`` (``[{"action", "label",
"card"}]``, only when it is your decision), ``phase``, ``to_move``, ``your_seat``,
``flipped`` (cards turned from the stock since your last decision), ``events`` (readable
lines, opponents' moves included), ``stop_payment`` (at your go/stop decision: what
stopping now pays each seat), ``done``, ``payments``, and once over ``replay`` (the hand as
a replay file's fields) and ``breakdown`` (:func:`~gostop_env.replay.payment_breakdown`).

Bad requests get a 4xx answer with ``{"error": ...}`` and change nothing: an unknown game or
replay (404), a body that is not a JSON object or has wrong fields (400), an illegal move
(409), a body over :data:`MAX_BODY_BYTES` (413, counted as it streams in). The server binds
to 127.0.0.1 unless told otherwise, keeps at most :data:`MAX_GAMES` games in memory (the
oldest go first) and reads only regular ``.json`` files inside the replay folder (symlinks
resolved), each checked by :class:`gostop_env.replay.Replay` and replayed by the engine.

The table trusts only its own page (docs/trust.md): requests must name one of the server's
own addresses as their Host (so a DNS-rebinding page gets nothing), a state-changing request
from a browser must come from the table's own origin, and every API call but the card
pictures carries the token the page was served with (``X-Gostop-Token``), which another
site's page cannot read. Game ids are random. Opponents come only from the server's list
(``opponents``), and the opponents' moves after one request stop after ``time_budget``
seconds (a ``GET`` of the game lets them go on).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import secrets
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from gostop.agents.registry import BEST_OPPONENT, FALLBACK_OPPONENT, default_opponent, make_agent
from gostop_env.core import Phase, Rules, action_name, batch_class
from gostop_env.core import actions as A
from gostop_env.core.cards import JOKERS, MONTH_ABBR, NUM_CARDS, card_name
from gostop_env.core.deck import check_seed, shuffled_decks
from gostop_env.core.rules import presets_for
from gostop_env.drawing import CARD_HEIGHT, CARD_WIDTH, card_picture, table, to_svg
from gostop_env.human import move_menu, stop_payment
from gostop_env.policy import Policy
from gostop_env.replay import Replay, describe, move_lines, paid_at_once, payment_breakdown
from gostop_env.seats import opponent_action

PAGE = Path(__file__).parent / "table_page.html"
MAX_GAMES = 100
MAX_BODY_BYTES = 10_000
MAX_SEED = 2**63
TOKEN_HEADER = "X-Gostop-Token"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
DEFAULT_OPPONENTS = (
    BEST_OPPONENT,
    "greedy",
    "simple",
    "random",
    "greedy:stop=ev:n=16",
    "search",
    "model:expert256_ppo",
    "model:expert60k_ppo",
    "model:expert_ppo",
    "model:expert",
    "model:expert3",
    "model:expert3_ppo",
    "model:seed3_ppo",
    "model:korean2_ppo",
    "model:matgo2_ppo",
    "model:ppo",
)
"""The agents a table offers unless told otherwise (those that load here: models need the rl extra)."""
DEFAULT_TIME_BUDGET = 10.0  # seconds of opponents' moves per request


class TableError(Exception):
    """A request the table refuses: ``status`` is the HTTP code, the message says why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class TableGame:
    """One hand between a person (``seat``) and agents in the other seats, on a one-game
    batch of the core (as ``gostop play`` runs it)."""

    def __init__(self, rules: Rules, opponent: str, seed: int | None, seat: int, time_budget: float = math.inf):
        self.rules, self.seat, self.opponent, self.time_budget = rules, seat, opponent, time_budget
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

    def opponents_move(self) -> None:
        """The opponents' moves up to the person's next decision, or until the time budget
        is spent after a move (the state then shows an opponent to move; calling again goes on)."""
        self._opponents_move()

    def _opponents_move(self) -> None:
        deadline = time.monotonic() + self.time_budget
        while not self.done and self.to_move != self.seat:
            mover = self.to_move
            self._step(opponent_action(self.batch, self.seat, self.policies, self.rng), f"seat {mover}")
            if time.monotonic() >= deadline:  # at least one move a request: it always goes on
                return

    def _step(self, action: int, who: str) -> None:
        before, paid = int(self.batch.stock_pos[0]), self.batch.payments[0].tolist()
        events = self.batch.step([action]).game(0)
        self.actions.append(action)
        self.flipped += [int(c) for c in self.batch.stock[0, before : int(self.batch.stock_pos[0])]]
        self.events += move_lines(who, action, events, self.rules.players)
        self.events += paid_at_once(paid, self.batch.payments[0].tolist(), self.done)

    def state(self) -> dict[str, Any]:
        """What the page shows (module docstring)."""
        mine = not self.done and self.to_move == self.seat
        phase = Phase(int(self.batch.phase[0]))
        state = {
            "svg": to_svg(table(self.batch.snapshot(0), self.rules.players, self.seat, self.rules)),
            "moves": _moves(move_menu(self.batch, self.seat)) if mine else [],
            "phase": phase.name.lower(),
            "to_move": None if self.done else self.to_move,
            "your_seat": self.seat,
            "opponent": self.opponent,
            "flipped": [{"card": c, "name": card_name(c)} for c in self.flipped],
            "events": self.events,
            "stop_payment": stop_payment(self.batch) if mine and phase == Phase.GO_STOP else None,
            "done": self.done,
            "payments": self.batch.payments[0].tolist() if self.done else None,
        }
        if self.done:
            state["replay"] = {"rules": self.rules.to_dict(), "deck": self.deck, "actions": self.actions,
                               "carry": 0, "payments": self.batch.payments[0].tolist()}  # fmt: skip
            state["breakdown"] = payment_breakdown(Replay.from_dict(state["replay"]))
        return state


def _moves(menu: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The menu's moves for the page; a move that plays or picks a card names it."""
    moves = []
    for label, action in menu:
        card = action if action < A.SHAKE else action - A.CHOOSE if A.CHOOSE <= action < A.GO else None
        moves.append({"action": action, "label": label, "card": card})
    return moves


def _replay_state(replay: Replay, step: int) -> dict[str, Any]:
    """A replay after ``step`` of its actions, every hand face up, with ``turns``: the steps
    at which a turn begins (the seat to move changes), for stepping turn by turn."""
    game = replay.game()
    events = describe(game.deal_events, game.rules.players)
    shown, turns, mover = None, [0], game.seat
    for k, action in enumerate(replay.actions):
        if k == step:
            shown = _replay_picture(game, events)
        seat = game.seat
        if seat != mover:
            turns.append(k)
            mover = seat
        paid = list(game.payments)
        events = move_lines(f"seat {seat}", action, game.step(action), game.rules.players)
        events += paid_at_once(paid, list(game.payments), game.done)
    if shown is None:
        shown = _replay_picture(game, events)
    return {
        **shown,
        "step": step,
        "steps": len(replay.actions),
        "turns": turns,
        "recorded_payments": replay.payments,
    }


def _replay_picture(game: Any, events: list[str]) -> dict[str, Any]:
    """What the replay viewer shows of ``game`` as it stands."""
    return {
        "svg": to_svg(table(game.snapshot(), game.rules.players, None, game.rules)),
        "events": events,
        "done": game.done,
        "payments": list(game.payments) if game.done else None,
    }


class Tables:
    """The server's games (at most ``MAX_GAMES``, oldest dropped), the opponents it offers
    and its replay folder."""

    def __init__(
        self,
        opponent: str | None = None,
        replays: str | Path | None = None,
        opponents: tuple[str, ...] = (),
        time_budget: float = DEFAULT_TIME_BUDGET,
    ):
        """``opponent``: the agent of a new game that names none; ``None``: the strongest that
        fits its rules (:func:`~gostop.agents.registry.default_opponent`)."""
        self.opponent, self.replays = opponent, Path(replays) if replays else None
        defaults = (opponent,) if opponent is not None else (BEST_OPPONENT, FALLBACK_OPPONENT)
        self.opponents = tuple(dict.fromkeys((*defaults, *opponents)))
        self.time_budget = time_budget
        self.games: OrderedDict[str, TableGame] = OrderedDict()

    def new_game(self, body: dict[str, Any]) -> tuple[str, TableGame]:
        known = {"players", "preset", "opponent", "seed", "seat"}
        if set(body) - known:
            raise TableError(400, f"unknown field(s) {sorted(set(body) - known)}; known: {sorted(known)}")
        opponent = body.get("opponent", self.opponent)
        if opponent is not None and (not isinstance(opponent, str) or opponent not in self.opponents):
            offered = list(self.opponents)
            raise TableError(400, f"opponent must be one of this table's agents {offered}, got {opponent!r}")
        try:
            players, preset, seed = body.get("players", 2), body.get("preset", "seed"), body.get("seed")
            if type(players) is not int or not isinstance(preset, str):
                raise ValueError(f"players is 2 or 3 and preset a name, got {players!r} and {preset!r}")
            if seed is not None and (type(seed) is not int or not 0 <= seed < MAX_SEED):
                raise ValueError(f"seed must be an integer 0..2**63-1, got {seed!r}")
            rules = Rules.preset(preset, players=players)
            seat = body.get("seat", 0)
            if type(seat) is not int or not 0 <= seat < rules.players:
                raise ValueError(f"seat must be 0..{rules.players - 1}, got {seat!r}")
            game = TableGame(rules, opponent or default_opponent(rules), seed, seat, self.time_budget)
        except (TypeError, ValueError, OverflowError) as error:
            raise TableError(400, str(error)) from None
        key = secrets.token_urlsafe(16)
        self.games[key] = game
        while len(self.games) > MAX_GAMES:
            self.games.popitem(last=False)
        return key, game

    def game(self, key: str) -> TableGame:
        if key not in self.games:
            raise TableError(404, f"no game {key!r} (games are kept in memory, at most {MAX_GAMES})")
        return self.games[key]

    def replay_names(self) -> list[str]:
        """The ``.json`` files in the replay folder that are regular files inside it once
        symlinks are resolved (a link out of the folder, a pipe or a device is not listed)."""
        if self.replays is None:
            return []
        folder = self.replays.resolve()
        return sorted(p.name for p in self.replays.glob("*.json") if _inside(p.resolve(), folder))

    def replay(self, name: str) -> Replay:
        if name not in self.replay_names():
            raise TableError(404, f"no replay {name!r}; replays: {self.replay_names()}")
        assert self.replays is not None
        try:
            replay = Replay.load(self.replays / name)
            for _ in replay.play():  # played through: the actions must be legal and the payments agree
                pass
        except (TypeError, ValueError) as error:
            message = str(error).replace(str(self.replays.resolve()), "").replace(str(self.replays), "")
            raise TableError(422, f"{name} does not replay: {message}") from None
        return replay


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (resolved) is a regular file directly inside ``folder``."""
    return path.parent == folder and path.is_file()


def card_svg(name: str) -> str:
    """One card (``"back"`` or an id 0..49) as an SVG document."""
    if name != "back" and not (re.fullmatch(r"[0-9]{1,2}", name) and int(name) < NUM_CARDS):
        raise TableError(404, f"no card {name!r}: ids 0..{NUM_CARDS - 1} or 'back'")
    return to_svg(card_picture(None if name == "back" else int(name)))


GALLERY_SCALE = 2  # the gallery shows cards at twice the table's size


def cards_page() -> str:
    """The card gallery: every card by month with its name, the jokers and the back."""
    from html import escape

    def figure(card: int | None) -> str:
        name = "back" if card is None else str(card)
        label = "face down" if card is None else card_name(card)
        return (
            f'<figure><img src="/api/cards/{name}.svg" width="{GALLERY_SCALE * CARD_WIDTH}" '
            f'height="{GALLERY_SCALE * CARD_HEIGHT}" alt="{escape(label)}">'
            f"<figcaption>{escape(label)}</figcaption></figure>"
        )

    rows = [
        f"<section><h2>{escape(title)}</h2><div class=row>{''.join(figure(c) for c in cards)}</div></section>"
        for title, cards in (
            *((f"{month + 1}: {MONTH_ABBR[month]}", range(4 * month, 4 * month + 4)) for month in range(12)),
            ("jokers and the back", (*JOKERS, None)),
        )
    ]
    return GALLERY_PAGE.replace("{{rows}}", "\n".join(rows))


GALLERY_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>gostop cards</title>
<style>
  body { font-family: sans-serif; background: #1b4332; color: #f8f9fa; margin: 1em; }
  a { color: #ffb703; } h2 { font-size: 1em; margin: 0.8em 0 0.2em; }
  main { display: flex; flex-wrap: wrap; gap: 0.5em 2em; }
  .row { display: flex; flex-wrap: wrap; gap: 0.8em; }
  figure { margin: 0; width: 7.5em; text-align: center; font-size: 0.8em; }
</style></head>
<body><p><a href="/">Back to the table</a></p><h1>The cards</h1>
<p>Each month's plant, its bright (red seal), animal, ribbon and junk; double junk carry a gold x2 tag.
Cards with the same name play alike and look alike.</p>
<main>{{rows}}</main>
</body></html>
"""


def _check_agent(name: str) -> None:
    """ValueError unless ``name`` is an agent for some player count and preset (a shipped
    3-player model is a fine default opponent for 3-player tables)."""
    errors = []
    for players in (2, 3):
        for preset in presets_for(players):
            try:
                make_agent(name, Rules.preset(preset, players=players))
                return
            except ValueError as error:
                errors.append(error)
    raise errors[0]


def offered_opponents(opponent: str | None, opponents: tuple[str, ...] | None) -> tuple[str, ...]:
    """The agents a table offers: ``opponents`` (each must name an agent: ValueError), or
    :data:`DEFAULT_OPPONENTS` that load here; the default ``opponent`` always among them
    (``None``: ``model:best`` where it loads, and ``greedy``)."""
    if opponent is None:
        defaults = [FALLBACK_OPPONENT]
        with contextlib.suppress(ValueError, ImportError):
            _check_agent(BEST_OPPONENT)
            defaults.insert(0, BEST_OPPONENT)
        return tuple(dict.fromkeys((*defaults, *offered_opponents(FALLBACK_OPPONENT, opponents))))
    _check_agent(opponent)  # an unknown agent fails here, before serving
    if opponents is None:
        loadable = []
        for name in DEFAULT_OPPONENTS:
            try:
                _check_agent(name)
                loadable.append(name)
            except (ValueError, ImportError):  # a model without the rl extra
                pass
        opponents = tuple(loadable)
    for name in opponents:
        _check_agent(name)
    return tuple(dict.fromkeys((opponent, *opponents)))


def allowed_hosts(host: str) -> list[str]:
    """The Host names a table bound to ``host`` answers: the loopback names, and ``host``."""
    return list(dict.fromkeys([*LOCAL_HOSTS, f"[{LOCAL_HOSTS[2]}]", host.strip("[]")]))


def create_app(
    opponent: str | None = None,
    replays: str | Path | None = None,
    opponents: tuple[str, ...] | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> Any:
    """The Starlette application (``opponent``: the default agent, ``None`` for the strongest
    that fits each table's rules; ``opponents``: every agent
    it offers; ``replays``: a folder; ``host`` and ``port``: where it is served, which
    requests must name). ``app.state.token`` is the token its page carries."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    if not (math.isfinite(time_budget) and time_budget > 0):
        raise ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
    tables = Tables(opponent, replays, offered_opponents(opponent, opponents), time_budget)
    token = secrets.token_urlsafe(24)
    hosts = allowed_hosts(host)
    origins = {f"http://{h if ':' not in h or h.startswith('[') else f'[{h}]'}:{port}" for h in hosts}

    def check_caller(request: Request) -> None:
        """403 unless the request carries the page's token and, from a browser, its origin."""
        origin = request.headers.get("origin")
        if request.method != "GET" and origin is not None and origin not in origins:
            raise TableError(403, "requests that change a game come only from the table's own page")
        if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), token):
            raise TableError(403, f"missing or wrong {TOKEN_HEADER}: use the table's own page")

    async def body_of(request: Request) -> dict[str, Any]:
        declared = request.headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > MAX_BODY_BYTES:
            raise TableError(413, f"request body over {MAX_BODY_BYTES} bytes")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                raise TableError(413, f"request body over {MAX_BODY_BYTES} bytes")
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError) as error:  # JSONDecodeError, UnicodeDecodeError, huge numbers
            raise TableError(400, f"the body is not JSON: {str(error)[:100]}") from None
        if not isinstance(body, dict):
            raise TableError(400, "the body must be a JSON object")
        return body

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE.read_text().replace("{{token}}", token))

    async def new_game(request: Request) -> Response:
        check_caller(request)
        key, game = tables.new_game(await body_of(request))
        return JSONResponse({"id": key, **game.state()}, status_code=201)

    async def show_game(request: Request) -> Response:
        check_caller(request)
        key = request.path_params["key"]
        game = tables.game(key)
        game.opponents_move()  # where the last request's time budget ran out
        return JSONResponse({"id": key, **game.state()})

    async def move(request: Request) -> Response:
        check_caller(request)
        key = request.path_params["key"]
        game, body = tables.game(key), await body_of(request)
        if set(body) != {"action"}:
            raise TableError(400, 'a move is {"action": <integer action id>}')
        game.move(body["action"])
        return JSONResponse({"id": key, **game.state()})

    async def replays_list(request: Request) -> Response:
        check_caller(request)
        return JSONResponse({"replays": tables.replay_names()})

    async def replay_step(request: Request) -> Response:
        check_caller(request)
        replay = tables.replay(request.path_params["name"])
        try:
            step = int(request.query_params.get("step", "0"))
        except ValueError:
            raise TableError(400, "step must be an integer") from None
        if not 0 <= step <= len(replay.actions):
            raise TableError(400, f"step must be 0..{len(replay.actions)}, got {step}")
        return JSONResponse(_replay_state(replay, step))

    async def gallery(request: Request) -> Response:
        return HTMLResponse(cards_page())

    async def card(request: Request) -> Response:
        return Response(card_svg(request.path_params["name"]), media_type="image/svg+xml")

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, TableError)
        return JSONResponse({"error": str(error)}, status_code=error.status)

    async def failed(request: Request, error: Exception) -> Response:
        return JSONResponse({"error": "the table failed on this request"}, status_code=500)

    routes = [
        Route("/", page),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{key}", show_game),
        Route("/api/games/{key}/move", move, methods=["POST"]),
        Route("/api/replays", replays_list),
        Route("/api/replays/{name}", replay_step),
        Route("/api/cards/{name}.svg", card),
        Route("/cards", gallery),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
        exception_handlers={TableError: refused, Exception: failed},
    )
    app.state.token = token
    return app


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    opponent: str | None = None,
    replays: str | None = None,
    opponents: tuple[str, ...] | None = None,
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> None:
    """Run the table until interrupted (``gostop serve``)."""
    import uvicorn

    app = create_app(opponent, replays, opponents, host, port, time_budget)
    if host not in LOCAL_HOSTS:
        print(
            f"warning: serving on {host}, not only this machine: anyone who can reach it can play "
            "its games and read its replays (docs/trust.md)"
        )
    print(f"the table is at http://{host}:{port}/  (Ctrl-C stops it)")
    uvicorn.run(app, host=host, port=port, log_level="warning")
