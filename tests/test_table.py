"""The web table's JSON API (gostop serve), through Starlette's test client: whole hands by
HTTP with only legal moves, every bad request refused without changing the game, replays
stepped to the end with the file's payments."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the web table needs the table extra")
pytest.importorskip("httpx2", reason="Starlette's test client needs httpx2")

from starlette.testclient import TestClient  # noqa: E402

from gostop.train.table import MAX_GAMES, TOKEN_HEADER, create_app  # noqa: E402
from gostop_env.replay import Replay  # noqa: E402

BASE = "http://127.0.0.1:8000"


def page_client(app) -> TestClient:
    """A client as the table's own page calls it: its address, with its token."""
    return TestClient(app, base_url=BASE, headers={TOKEN_HEADER: app.state.token})


@pytest.fixture
def client(tmp_path):
    return page_client(create_app("greedy", replays=tmp_path, opponents=("greedy", "random")))


def _play_to_the_end(client, body, choose=lambda moves: moves[0]):
    state = client.post("/api/games", json=body).json()
    seen_go_stop = []
    while not state["done"]:
        assert state["to_move"] == state["your_seat"] and state["moves"]
        if state["stop_payment"] is not None:
            seen_go_stop.append(state)
        move = choose(state["moves"])
        state = client.post(f"/api/games/{state['id']}/move", json={"action": move["action"]}).json()
    return state, seen_go_stop


@pytest.mark.parametrize(
    "body", [{"seed": 1}, {"players": 3, "preset": "korean", "seed": 2, "seat": 1}, {"preset": "matgo", "seed": 5}]
)
def test_a_whole_hand_by_http_against_greedy(client, body):
    state, _ = _play_to_the_end(client, body)
    assert state["moves"] == [] and sum(state["payments"]) == 0 and state["svg"].startswith("<svg")
    replay = Replay.from_dict(state["replay"])
    assert [seat for seat, _, _ in replay.play()]  # the recorded hand replays, payments checked


@pytest.mark.parametrize("preset", ["seed", "matgo"])  # matgo: with what the hand paid before
def test_the_stop_payment_is_what_stopping_pays(client, preset):
    stop = lambda moves: next((m for m in moves if m["label"] == "stop"), moves[0])  # noqa: E731
    for seed in range(40):
        state, go_stops = _play_to_the_end(client, {"seed": seed, "preset": preset}, stop)
        if go_stops:
            assert go_stops[-1]["stop_payment"] == state["payments"] and sum(state["payments"]) == 0
            return
    pytest.fail("no go/stop decision in 40 hands")


def test_bad_requests_are_refused_and_change_nothing(client):
    game = client.post("/api/games", json={"seed": 3}).json()
    url = f"/api/games/{game['id']}"
    before = client.get(url).json()
    assert before["phase"] == "play"
    illegal = 123  # go, at a card-play decision
    refusals = [
        (client.post(f"{url}/move", json={"action": illegal}), 409, "not legal"),
        (client.post(f"{url}/move", json={"action": "1"}), 400, "integer"),
        (client.post(f"{url}/move", json={"action": 1.0}), 400, "integer"),
        (client.post(f"{url}/move", json={"move": 1}), 400, "action"),
        (client.post(f"{url}/move", content=b"{not json"), 400, "not JSON"),
        (client.post(f"{url}/move", content=b"[1, 2]"), 400, "JSON object"),
        (client.post("/api/games/999/move", json={"action": 1}), 404, "no game"),
        (client.get("/api/games/nope"), 404, "no game"),
        (client.post("/api/games", json={"players": 4}), 400, "players"),
        (client.post("/api/games", json={"preset": "vegas"}), 400, "preset"),
        (client.post("/api/games", json={"seat": 2}), 400, "seat"),
        (client.post("/api/games", json={"opponent": "alpha"}), 400, "one of this table's agents"),
        (client.post("/api/games", json={"colour": "red"}), 400, "unknown field"),
        (client.get("/api/cards/50.svg"), 404, "no card"),
    ]
    for response, status, words in refusals:
        assert response.status_code == status and words in response.json()["error"], response.json()
    assert client.get(url).json() == before


def test_games_kept_in_memory_are_bounded(client):
    first = client.post("/api/games", json={"seed": 0}).json()["id"]
    for seed in range(MAX_GAMES):
        client.post("/api/games", json={"seed": seed})
    assert client.get(f"/api/games/{first}").status_code == 404


def test_replays_step_to_the_end_with_the_files_payments(client, tmp_path):
    state, _ = _play_to_the_end(client, {"seed": 5})
    (tmp_path / "hand.json").write_text(json.dumps({"format": "gostop-replay/1", **state["replay"]}))
    broken = {**state["replay"], "actions": state["replay"]["actions"][:-1]}  # stops before the end
    (tmp_path / "broken.json").write_text(json.dumps({"format": "gostop-replay/1", **broken}))
    assert client.get("/api/replays").json() == {"replays": ["broken.json", "hand.json"]}
    steps = len(state["replay"]["actions"])
    views = [client.get(f"/api/replays/hand.json?step={k}").json() for k in range(steps + 1)]
    assert [v["step"] for v in views] == list(range(steps + 1)) and all(v["steps"] == steps for v in views)
    assert not any(v["done"] for v in views[:-1]) and views[-1]["payments"] == state["payments"]
    assert views[-1]["recorded_payments"] == state["payments"]
    turns = views[0]["turns"]  # where each turn begins: the seat to move changes there, and only there
    game = Replay.from_dict(state["replay"]).game()
    movers = []
    for action in state["replay"]["actions"]:
        movers.append(game.seat)
        game.step(action)
    assert turns == [0] + [k for k in range(1, steps) if movers[k] != movers[k - 1]]
    assert all(v["turns"] == turns for v in views) and len(turns) < steps
    assert client.get("/api/replays/broken.json").status_code == 422
    assert client.get("/api/replays/other.json").status_code == 404
    assert client.get("/api/replays/..%2Fsecret.json").status_code == 404
    assert client.get(f"/api/replays/hand.json?step={steps + 1}").status_code == 400


def test_the_page_and_the_card_pictures(client):
    page = client.get("/")
    assert page.status_code == 200 and "<title>gostop table</title>" in page.text
    card = client.get("/api/cards/0.svg")
    assert card.headers["content-type"].startswith("image/svg+xml") and card.text.startswith("<svg")
    assert client.get("/api/cards/back.svg").status_code == 200


def test_serve_refuses_an_unknown_default_agent_and_takes_a_three_player_model():
    with pytest.raises(ValueError, match="unknown agent"):
        create_app("alpha")
    pytest.importorskip("sb3_contrib")
    client = page_client(create_app("model:expert3", opponents=()))
    assert client.post("/api/games", json={"players": 3, "preset": "korean", "seed": 1}).status_code == 201
    refused = client.post("/api/games", json={"seed": 1})  # 2 players, seed rules
    assert refused.status_code == 400 and "trained for 3 players" in refused.json()["error"]


def test_a_table_with_no_default_agent_plays_the_strongest_for_each_rule_set():
    """With no default opponent, a new game that names none is played by ``model:best``
    for its rules where one is shipped, else by ``greedy``; both are offered."""
    pytest.importorskip("sb3_contrib")
    from gostop.agents.learned import BEST_MODELS

    client = page_client(create_app(None, opponents=()))
    for players, preset in [(2, "seed"), (2, "korean"), (2, "matgo"), (3, "seed"), (3, "korean")]:
        made = client.post("/api/games", json={"players": players, "preset": preset, "seed": 1})
        assert made.status_code == 201
        expected = "model:best" if (players, preset) in BEST_MODELS else "greedy"
        assert made.json()["opponent"] == expected, (players, preset)
    named = client.post("/api/games", json={"opponent": "greedy", "seed": 1})
    assert named.status_code == 201 and named.json()["opponent"] == "greedy"


def test_the_payment_breakdown_multiplies_to_each_share(client):
    for seed in range(30):
        state, _ = _play_to_the_end(client, {"seed": seed})
        if state["breakdown"]:
            (row,) = state["breakdown"]  # 2 players: one loser
            product = 1
            for _, value in row["factors"]:
                product *= value
            assert row["factors"][0][0] == "score + gos" and product == row["share"]
            assert state["payments"][row["winner"]] in (row["share"], 2 * row["share"])  # 2x: go-bak
            return
    pytest.fail("no hand ended by a stop in 30 hands")


# ---- only the table's own page drives it (docs/trust.md) ------------------------------------------
def test_requests_without_the_pages_token_or_from_another_origin_are_refused(tmp_path):
    app = create_app("greedy", replays=tmp_path, opponents=("greedy",))
    own = page_client(app)
    stranger = TestClient(app, base_url=BASE)  # another site's page: no token
    assert stranger.post("/api/games", json={"seed": 1}).status_code == 403
    assert stranger.get("/api/replays").status_code == 403
    forged = own.post("/api/games", json={"seed": 1}, headers={"Origin": "http://evil.example"})
    assert forged.status_code == 403 and "own page" in forged.json()["error"]
    wrong = own.post("/api/games", json={"seed": 1}, headers={TOKEN_HEADER: "guess"})
    assert wrong.status_code == 403
    game = own.post("/api/games", json={"seed": 1}, headers={"Origin": BASE})
    assert game.status_code == 201
    assert stranger.get(f"/api/games/{game.json()['id']}").status_code == 403
    assert app.state.token in own.get("/").text  # the page carries the token
    assert own.get("/api/cards/3.svg").status_code == 200  # pictures need none (loaded by <img>)


def test_a_host_header_not_of_this_server_is_refused(tmp_path):
    app = create_app("greedy", opponents=())
    rebinding = TestClient(app, base_url="http://attacker.example:8000", headers={TOKEN_HEADER: app.state.token})
    assert rebinding.get("/").status_code == 400
    assert rebinding.post("/api/games", json={}).status_code == 400
    assert TestClient(app, base_url="http://localhost:8000").get("/").status_code == 200


def test_game_ids_are_unguessable(client):
    ids = {client.post("/api/games", json={"seed": s}).json()["id"] for s in range(5)}
    assert len(ids) == 5 and all(len(i) >= 20 and not i.isdigit() for i in ids)


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"opponent": 7}, 400, "one of this table's agents"),
        ({"opponent": "search:seconds=inf"}, 400, "one of this table's agents"),
        ({"opponent": "search:n=3000000"}, 400, "one of this table's agents"),
        ({"players": 10**40}, 400, "players"),
        ({"players": True}, 400, "players"),
        ({"seed": 10**40}, 400, "seed"),
        ({"seed": 1.5}, 400, "seed"),
        ({"preset": ["seed"]}, 400, "preset"),
    ],
)
def test_bad_new_game_bodies_get_a_4xx(client, body, status, words):
    response = client.post("/api/games", json=body)
    assert response.status_code == status and words in response.json()["error"], response.json()


def test_bodies_are_bounded_as_they_stream_and_deep_nesting_is_a_400(client):
    assert client.post("/api/games", content=b'{"seed": ' + b"9" * 5000 + b"}").status_code == 400
    nested = b"[" * 5000 + b"]" * 5000
    assert client.post("/api/games", content=nested[:9000]).status_code == 400
    deep = client.post("/api/games", content=b'{"a":' * 3000 + b"1" + b"}" * 3000)
    assert deep.status_code in (400, 413)
    big = client.post("/api/games", content=b" " * 20_000)
    assert big.status_code == 413

    def chunks():
        for _ in range(100):
            yield b" " * 1000

    streamed = client.post("/api/games", content=chunks())  # no Content-Length: counted as it comes
    assert streamed.status_code == 413


@pytest.mark.parametrize("name", ["²", "٣", "1e1", "-1", "007"])
def test_odd_card_names_are_a_404(client, name):
    assert client.get(f"/api/cards/{name}.svg").status_code == 404


def test_replays_are_only_regular_files_inside_the_folder(tmp_path):
    import os

    folder, outside = tmp_path / "replays", tmp_path / "secret.json"
    folder.mkdir()
    outside.write_text("{}")
    (folder / "link.json").symlink_to(outside)
    (folder / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe.json")
    app = create_app("greedy", replays=folder, opponents=())
    client = page_client(app)
    assert client.get("/api/replays").json() == {"replays": []}
    for name in ("link.json", "zero.json", "pipe.json"):
        assert client.get(f"/api/replays/{name}").status_code == 404


def test_replay_errors_do_not_show_server_paths(tmp_path):
    (tmp_path / "bad.json").write_text('{"format": "gostop-replay/1"}')
    response = page_client(create_app("greedy", replays=tmp_path, opponents=())).get("/api/replays/bad.json")
    assert response.status_code == 422 and str(tmp_path) not in response.text


def test_opponents_stop_at_the_time_budget_and_go_on_when_asked(tmp_path):
    app = create_app("greedy", opponents=(), time_budget=1e-9)
    client = page_client(app)
    state = client.post("/api/games", json={"players": 3, "preset": "korean", "seed": 4, "seat": 2}).json()
    assert not state["done"] and state["to_move"] == 1 and state["moves"] == []  # seat 0 moved, seat 1 not yet
    for _ in range(10):  # seat 1's decisions, one a request
        state = client.get(f"/api/games/{state['id']}").json()
        if state["to_move"] == 2:
            break
    assert state["to_move"] == 2 and state["moves"]


def test_the_page_offers_only_listed_opponents_and_serve_checks_its_arguments():
    with pytest.raises(ValueError, match="unknown agent"):
        create_app("greedy", opponents=("greedy", "alpha"))
    with pytest.raises(ValueError, match="time_budget"):
        create_app("greedy", opponents=(), time_budget=float("inf"))


def test_serve_refuses_a_port_out_of_range_and_warns_when_exposed(monkeypatch, capsys):
    from gostop.train import cli, table

    with pytest.raises(SystemExit):
        cli.main(["serve", "--port", "99999"])
    assert "1..65535" in capsys.readouterr().err
    ran = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: ran.append(kw))
    table.serve(host="0.0.0.0", port=8123, opponents=())
    assert "warning: serving on 0.0.0.0" in capsys.readouterr().out and ran[0]["port"] == 8123
    table.serve(host="127.0.0.1", port=8124, opponents=())
    assert "warning" not in capsys.readouterr().out


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(["players", "preset", "opponent", "seed", "seat", "action", "other"])


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.dictionaries(FIELDS, JSON, max_size=5) | JSON, path=st.text(max_size=12).map(quote))
def test_random_requests_get_an_answer_never_a_server_error(client, body, path):
    created = client.post("/api/games", json=body)
    assert created.status_code < 500, created.text
    game = client.post("/api/games", json={"seed": 1}).json()["id"]
    assert client.post(f"/api/games/{game}/move", json=body).status_code < 500
    for url in (f"/api/games/{path}", f"/api/replays/{path}", f"/api/cards/{path}.svg"):
        assert client.get(url).status_code < 500


def test_the_log_tells_a_payment_made_during_a_matgo_hand(client):
    for seed in range(100):
        game = client.post("/api/games", json={"preset": "matgo", "seed": seed}).json()
        state = client.post(f"/api/games/{game['id']}/move", json={"action": game["moves"][0]["action"]}).json()
        told = [line for line in state["events"] if "paid at once" in line]
        if told and not state["done"]:
            assert "seat 0 " in told[0] and "seat 1 " in told[0]
            return
    pytest.fail("no first-turn payment in 100 matgo hands")
