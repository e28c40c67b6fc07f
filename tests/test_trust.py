"""Trust and safety: untrusted files are checked (never executed), logs never change figures
silently, bad input gets a clear error of the documented type."""

from __future__ import annotations

import fcntl
import json
import pickle
import shutil

import numpy as np
import pytest

from gostop.agents.tournament import LOCK_FILE, TournamentConfig, TournamentLogError, run_tournament
from gostop.train.cli import main
from gostop.train.config import TrainConfig
from gostop_env.core import GameBatch, ReferenceGame, Result, Rules, random_legal_actions
from gostop_env.core.rules import MAX_CARRY
from gostop_env.replay import Replay

# ---- actions are integers -----------------------------------------------------------------------
NOT_INTEGERS = [2.7, 3.0, "3", None, True, np.float64(1.0), [1]]


@pytest.mark.parametrize("bad", NOT_INTEGERS, ids=repr)
def test_engines_refuse_actions_that_are_not_integers(bad):
    game = ReferenceGame.from_seed(Rules(), 5)
    before = game.snapshot()
    with pytest.raises(TypeError, match="integer"):
        game.step(bad)
    assert game.snapshot() == before
    batch = GameBatch.from_seed(Rules(), 5, 2)
    legal = batch.legal_actions(0)[0]
    if not isinstance(bad, list):
        with pytest.raises(TypeError, match="integer"):
            batch.step([bad, bad])
    with pytest.raises(TypeError, match="integer"):
        batch.step(np.array([legal, legal]) + 0.7)
    assert batch.snapshot(0) == GameBatch.from_seed(Rules(), 5, 2).snapshot(0)
    batch.step(np.array([legal, batch.legal_actions(1)[0]], np.int32))  # NumPy integers are fine


@pytest.mark.parametrize("mode", ["penalize", "raise"])
def test_gymnasium_env_refuses_floats_in_both_modes(mode):
    from gostop_env.gym_env import GoStopEnv

    env = GoStopEnv(illegal_action=mode)
    env.reset(seed=3)
    legal = int(np.flatnonzero(env.action_masks())[0])
    for bad in (legal + 0.7, float(legal), str(legal)):
        with pytest.raises(TypeError, match="integer"):
            env.step(bad)
    env.step(np.int64(legal))


def test_vector_and_aec_envs_refuse_floats():
    from gostop_env.pettingzoo_env import raw_env
    from gostop_env.vec_env import GoStopVecEnv

    vec = GoStopVecEnv(4, seed=1)
    vec.reset()
    actions = random_legal_actions(vec.batch.legal_bits, np.random.default_rng(0))
    with pytest.raises(TypeError, match="integer"):
        vec.step_async(actions + 0.2)
    vec.step(actions)
    aec = raw_env()
    aec.reset(seed=1)
    legal = int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0])
    with pytest.raises(TypeError, match="integer"):
        aec.step(legal + 0.5)
    with pytest.raises(TypeError, match="step\\(None\\)"):
        aec.step(None)  # a live agent must act
    aec.step(legal)


def test_opponents_given_by_name_get_a_clear_error():
    from gostop_env.gym_env import GoStopEnv

    with pytest.raises(TypeError, match=r"make_agent\('greedy'\)"):
        GoStopEnv(opponents="greedy")


# ---- rules and the nagari carry ------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        dict(players=2.0),
        dict(players="2"),
        dict(jokers=1.0),
        dict(jokers=True),
        dict(go_multiplier=1),
        dict(target=7.5),
        dict(pi_bak_threshold=2.0),
    ],
)
def test_rules_refuse_values_of_the_wrong_type(options):
    with pytest.raises(ValueError, match=next(iter(options))):
        Rules(**options)


def test_rules_take_numpy_integers_as_python_ints():
    rules = Rules(players=np.int64(3), jokers=np.int8(1))
    assert type(rules.players) is int and rules == Rules(players=3, jokers=1)


@pytest.mark.parametrize("carry", [MAX_CARRY + 1, 10**9, 10**30, -1, 2.0, True])
def test_carry_out_of_bounds_is_refused_at_once_by_both_engines(carry):
    for start in (
        lambda: ReferenceGame.from_seed(Rules.preset("korean"), 0, carry=carry),
        lambda: GameBatch.from_seed(Rules.preset("korean"), 0, 2, carry=carry),
    ):
        with pytest.raises((ValueError, TypeError), match="carry"):
            start()


@pytest.mark.parametrize("preset", ["seed", "korean"])
def test_payments_at_the_carry_bound_are_exact_and_equal_across_engines(preset):
    """The same hands at carry 0 and at MAX_CARRY: the batch pays 2^MAX_CARRY (compounding)
    or 2 times as much, without overflow, and the reference engine agrees game by game."""
    rules = Rules.preset(preset)
    rng = np.random.default_rng(4)
    plain = GameBatch.from_seed(rules, 9, 300)
    carried = GameBatch.from_seed(rules, 9, 300, carry=MAX_CARRY)
    refs = [ReferenceGame(rules, deck, MAX_CARRY) for deck in _decks(rules, 9, 300)]
    history = []
    while not plain.done.all():
        actions = random_legal_actions(plain.legal_bits, rng)
        history.append(actions)
        plain.step(actions)
        carried.step(actions)
    for g, ref in enumerate(refs):
        for actions in history:
            if actions[g] >= 0:
                ref.step(int(actions[g]))
        assert ref.payments == carried.payments[g].tolist()
    factor = 2**MAX_CARRY if rules.nagari_compounding else 2
    stopped = carried.result == Result.STOP  # chongtong pays flat, the carry included (rules §3)
    assert (carried.payments[stopped] == plain.payments[stopped] * factor).all() and stopped.sum() > 100
    assert carried.payments.sum(axis=1).tolist() == [0] * 300


def _decks(rules, seed, n):
    from gostop_env.core.deck import shuffled_decks

    return shuffled_decks(rules, np.random.default_rng(seed), n)


def test_carry_stays_at_the_bound_after_another_nagari():
    rules = Rules.preset("korean")
    batch = GameBatch.from_seed(rules, 2, 400, carry=MAX_CARRY)
    rng = np.random.default_rng(0)
    while not batch.done.all():
        batch.step(random_legal_actions(batch.legal_bits, rng))
    nagari = batch.result == Result.NAGARI
    assert nagari.any() and (batch.next_carry[nagari] == MAX_CARRY).all()


# ---- replay files ---------------------------------------------------------------------------------
def _replay_text(**changes):
    game = ReferenceGame.from_seed(Rules(), 1)
    data = {
        "format": "gostop-replay/1",
        "rules": Rules().to_dict(),
        "deck": [int(c) for c in game.deck],
        "actions": [],
        "carry": 0,
        "payments": [],
    }
    return json.dumps({**data, **changes})


@pytest.mark.parametrize(
    "text",
    [
        "null",
        "123",
        "[" * 50_000 + "]" * 50_000,
        "{",
        "\xff",
        _replay_text(deck="abc"),
        _replay_text(deck=[float(c) for c in range(48)]),
        _replay_text(deck=[str(c) for c in range(48)]),
        _replay_text(rules={"players": 2.0}),
        _replay_text(rules={"bogus": 1}),
        _replay_text(carry=10**30),
        _replay_text(actions=[1.5]),
        _replay_text(payments=[1, 2, 3]),
        _replay_text(extra=1),
    ],
    ids=lambda t: t[:30],
)
def test_bad_replay_files_are_refused_with_a_value_error(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    with pytest.raises(ValueError):
        Replay.load(path)
    with pytest.raises(SystemExit):
        main(["replay", str(path)])


def test_a_replay_whose_actions_do_not_replay_is_refused(tmp_path):
    path = tmp_path / "wrong.json"
    path.write_text(_replay_text(actions=[124]))
    with pytest.raises(ValueError, match="illegal action 124"):
        list(Replay.load(path).play())


# ---- tournament logs -------------------------------------------------------------------------------
def _figures(results):
    from gostop.agents.metrics import agent_figures

    return [f.as_dict() for f in agent_figures(results)]


CONFIG = TournamentConfig(("greedy", "random"), deals=200, chunk=50)


def test_a_duplicated_log_line_counts_once(tmp_path):
    whole = _figures(run_tournament(CONFIG, tmp_path))
    log = tmp_path / "units.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join([*lines, lines[0], lines[3]]) + "\n")
    again = run_tournament(CONFIG, tmp_path)
    assert len(again.records()["deal"]) == 400 and _figures(again) == whole


@pytest.mark.parametrize("change", ["payments", "chunk", "shorter", "line", "key", "extra"])
def test_log_lines_that_do_not_belong_are_refused(tmp_path, change):
    run_tournament(CONFIG, tmp_path)
    log = tmp_path / "units.jsonl"
    lines = log.read_text().splitlines()
    unit = json.loads(lines[0])
    if change == "payments":  # a second, different result for the same unit
        unit["records"]["payments"][0] = [5, -5]
    elif change == "chunk":
        unit["chunk"] = 99
    elif change == "shorter":
        unit["records"]["result"] = unit["records"]["result"][:-1]
    elif change == "key":
        unit["key"] = "0" * 16
    elif change == "extra":
        unit["secret"] = 1
    log.write_text("\n".join([*lines, "123" if change == "line" else json.dumps(unit)]) + "\n")
    with pytest.raises(TournamentLogError):
        run_tournament(CONFIG, tmp_path)


KEPT = TournamentConfig(("greedy", "random"), deals=40, chunk=20, keep_replays=2, decisions=True)


def _forge(unit: dict, change: str) -> None:
    records, hand, decisions = unit["records"], unit["replays"][0], unit["decisions"]
    if change == "replay deal outside":
        hand["deal"] = "../../escaped"
    elif change == "replay of another deal":
        hand["deal"] = 10_000
    elif change == "replay actions":
        hand["actions"] = hand["actions"][:-1]
    elif change == "replay payments":
        hand["payments"] = [-p for p in hand["payments"]]
    elif change == "replay rules":
        hand["rules"] = {**hand["rules"], "target": 3}
    elif change == "too many replays":
        unit["replays"] = unit["replays"] * 3
    elif change == "decision agent":
        decisions["agent"] = ["search"] * len(decisions["agent"])
    elif change == "decision column":
        decisions["secret"] = decisions["deal"]
    elif change == "decision ragged":
        decisions["deal"] = decisions["deal"] + [0]
    elif change == "negative gos":  # the go rate of -0.3%
        records["gos"][0] = [-3, 0]
    elif change == "winner of a nagari":
        row = records["result"].index(2) if 2 in records["result"] else 0
        records["result"][row], records["winner"][row] = 2, 0
    elif change == "stop without winner":
        row = records["result"].index(1)
        records["winner"][row] = -1


@pytest.mark.parametrize(
    "change",
    [
        "replay deal outside",
        "replay of another deal",
        "replay actions",
        "replay payments",
        "replay rules",
        "too many replays",
        "decision agent",
        "decision column",
        "decision ragged",
        "negative gos",
        "winner of a nagari",
        "stop without winner",
    ],
)
def test_forged_replays_decisions_and_records_refuse_the_resume(tmp_path, change):
    run_tournament(KEPT, tmp_path)
    log = tmp_path / "units.jsonl"
    lines = log.read_text().splitlines()
    unit = json.loads(lines[0])
    assert unit["decisions"]["deal"], "the first unit needs a go/stop decision to forge"
    _forge(unit, change)
    log.write_text("\n".join([json.dumps(unit), *lines[1:]]) + "\n")
    with pytest.raises(TournamentLogError, match="units.jsonl, line 1"):
        run_tournament(KEPT, tmp_path)
    assert not list(tmp_path.parent.glob("escaped*"))


def test_a_line_cut_short_is_dropped_and_the_log_continues_cleanly(tmp_path):
    whole = _figures(run_tournament(CONFIG))
    run_tournament(CONFIG, tmp_path)
    log = tmp_path / "units.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])  # killed while writing line 3
    assert _figures(run_tournament(CONFIG, tmp_path)) == whole
    assert len(log.read_text().splitlines()) == 8  # 4 chunks x 2 lineups, each once
    assert _figures(run_tournament(CONFIG, tmp_path)) == whole


def test_a_second_run_on_a_folder_in_use_is_refused(tmp_path):
    with (tmp_path / LOCK_FILE).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run holds the folder
        with pytest.raises(TournamentLogError, match="in use"):
            run_tournament(CONFIG, tmp_path)
    run_tournament(CONFIG, tmp_path)  # free again


def test_bad_tournament_settings_are_refused():
    for bad in (dict(keep_replays=-3), dict(seed=-1), dict(deals=2.5), dict(players=2.0)):
        with pytest.raises(ValueError):
            TournamentConfig(("greedy", "random"), **bad)


def test_ray_runner_without_ray_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ray", None)
    with pytest.raises(ValueError, match=r"gostop\[ray\]"):
        run_tournament(CONFIG, runner="ray")
    with pytest.raises(SystemExit):
        main(["train-rllib", "--iterations", "1"])


# ---- training configs ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "override",
    [
        'ppo.timesteps="abc"',
        "ppo.envs=2.5",
        'ppo.net_arch="abc"',
        'opponents.pool={greedy="x"}',
        "ppo.timesteps=1500.5",
        "ppo.net_arch=[0]",
        "ppo.gamma=-3",
        "checkpoint_every=-5",
        'eval.against=["bogus"]',
        "ppo=5",
        "seed=-1",
        "ppo.learning_rate=nan",
        'bc.teacher="nope"',
        "players=2.0",
        "opponents.pool={}",
        "ppo.net_arch=[8,8,8,8,8,8,8,8,8]",
        'encoding="pixels"',
    ],
)
def test_bad_config_values_are_refused_up_front_naming_the_key(override):
    key = override.split("=")[0].split(".")[-1]
    with pytest.raises(ValueError, match=key):
        TrainConfig.load("quick", [override])


# ---- outputs checked before the work ---------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["go-stop", "values", "greedy", "--out", "/proc/gostop.csv"],
        ["go-stop", "values", "greedy", "--out", "values.txt"],
        ["go-stop", "sweep", "--out", "/proc/gostop.csv"],
        ["play", "--save", "/proc/hand.json"],
        ["tournament", "greedy", "random", "--out", "/proc/gostop"],
    ],
)
def test_unwritable_outputs_fail_before_any_work(monkeypatch, tmp_path, args, capsys):
    def no_work(*_args, **_kwargs):
        raise AssertionError("the work started before the destination was checked")

    for target in (
        "gostop.agents.studies.value_dataset",
        "gostop.agents.studies.versus",
        "gostop_env.human.play_in_terminal",
        "gostop.agents.tournament._run",
    ):
        monkeypatch.setattr(target, no_work)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(args)
    assert "error" in capsys.readouterr().err


def test_a_folder_where_a_file_is_expected_and_the_reverse(tmp_path):
    from gostop_env.files import writable_file, writable_folder

    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a folder"):
        writable_file(tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        writable_folder(tmp_path / "file")
    assert writable_file(tmp_path / "new" / "a.csv", (".csv",)).parent.is_dir()
    assert not (tmp_path / "new" / "a.csv").exists()  # checked, not left behind


def test_ctrl_c_in_play_leaves_cleanly(monkeypatch, capsys):
    class Interrupted:
        def readline(self):
            raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", Interrupted())
    assert main(["play", "--seed", "1"]) == 130
    assert "left the hand" in capsys.readouterr().out


# ---- model folders ----------------------------------------------------------------------------------
sb3 = pytest.importorskip("sb3_contrib")
from gostop.agents.learned import ModelError, model_fingerprint, read_meta, save_model  # noqa: E402
from gostop.agents.registry import load_model, make_agent  # noqa: E402

torch = pytest.importorskip("torch")


def _network(width: int = 8):
    from gostop.agents.learned import _empty_network

    return _empty_network(
        {
            "encoding": "vector",
            "network": {"inputs": 571, "actions": 125, "pi": [width], "vf": [width], "activation": "tanh"},
        }
    )


META = {"encoding": "vector", "players": 2, "preset": "seed", "decides": "all"}


class Payload:
    """Unpickling this creates a file: proof that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_pickled_models_are_refused_without_being_read(tmp_path):
    marker = tmp_path / "pwned"
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "policy.pth").write_bytes(pickle.dumps(Payload(marker)))
    (folder / "model.json").write_text(json.dumps({"format": "gostop-model/1", **META}))
    with pytest.raises(ModelError, match="gostop convert-model"):
        make_agent(f"model:{folder}")
    assert not marker.exists()
    save_model(_network(), folder, META)  # a safetensors file beside it: the pickle is never read
    load_model(str(folder))
    assert not marker.exists()


def test_a_trusted_old_model_converts_to_the_same_play(tmp_path):
    network = _network()
    folder = tmp_path / "old"
    folder.mkdir()
    network.save(str(folder / "policy.pth"))
    (folder / "model.json").write_text(json.dumps({"format": "gostop-model/1", **META}))
    assert main(["convert-model", str(folder)]) == 0
    obs = np.random.default_rng(0).random((4, 571), np.float32)
    assert np.array_equal(load_model(str(folder)).logits(obs), load_model(str(folder)).logits(obs))
    from gostop.agents.learned import NetworkPolicy

    assert np.allclose(load_model(str(folder)).logits(obs), NetworkPolicy(network).logits(obs))


@pytest.fixture
def model(tmp_path):
    return save_model(_network(), tmp_path / "m", META)


def _edit(folder, **changes):
    meta = json.loads((folder / "model.json").read_text())
    for key, value in changes.items():
        if value is None:
            meta.pop(key)
        else:
            meta[key] = value
    (folder / "model.json").write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(encoding="tokens"), "inputs"),
        (dict(encoding=["vector"]), "encoding"),
        (dict(players=None), "missing key 'players'"),
        (dict(network=None), "missing key 'network'"),
        (dict(players=3), "weights were saved for players"),
        (dict(players="2"), "players"),
        (dict(decides="go_stop"), "card_player"),
        (dict(format="gostop-model/9"), "unknown model format"),
        (dict(network={"inputs": 571, "actions": 125, "pi": [9], "vf": [8], "activation": "tanh"}), "do not fit"),
        (dict(network={"inputs": 571, "actions": 125, "pi": [8], "vf": [8], "activation": "gelu"}), "activation"),
    ],
)
def test_model_json_is_checked_against_the_network(model, changes, message):
    _edit(model, **changes)
    with pytest.raises(ModelError, match=message):
        load_model(str(model))


def test_weights_that_are_not_safetensors_are_refused(model):
    (model / "policy.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    with pytest.raises(ModelError, match="safetensors"):
        load_model(str(model))


def test_model_json_that_is_not_an_object_is_refused(model):
    for text in ("null", "[1]", "[" * 10_000 + "]" * 10_000, "{"):
        (model / "model.json").write_text(text)
        with pytest.raises(ModelError):
            read_meta(model)


def test_a_card_player_chain_that_comes_back_is_refused(tmp_path):
    first = save_model(_network(), tmp_path / "a", {**META, "decides": "go_stop", "card_player": "greedy"})
    second = save_model(_network(), tmp_path / "b", {**META, "decides": "go_stop", "card_player": f"model:{first}"})
    _edit(first, card_player=f"model:{second}")
    with pytest.raises(ModelError, match="leads back"):
        load_model(str(first))
    _edit(first, card_player=f"model:{first}")
    with pytest.raises(ModelError, match="leads back"):
        model_fingerprint(str(first))


def test_a_retrained_model_is_not_served_from_old_results(tmp_path, model):
    config = TournamentConfig((f"model:{model}", "greedy"), deals=20)
    run_tournament(config, tmp_path / "t")
    key = config.key()
    network = _network()
    save_model(network, model, META)  # new weights in the same folder
    assert config.key() != key
    with pytest.raises(TournamentLogError, match="another tournament configuration"):
        run_tournament(config, tmp_path / "t")


def test_model_fingerprint_covers_the_card_player_model(tmp_path, model):
    composite = save_model(_network(), tmp_path / "c", {**META, "decides": "go_stop", "card_player": f"model:{model}"})
    before = model_fingerprint(str(composite))
    save_model(_network(), model, META)
    assert model_fingerprint(str(composite)) != before


def test_the_shipped_model_moves_with_its_folder(tmp_path):
    from gostop.agents.learned import SHIPPED_MODELS

    shutil.copytree(SHIPPED_MODELS / "ppo", tmp_path / "ppo")
    assert model_fingerprint(str(tmp_path / "ppo")) == model_fingerprint("ppo")
    policy = make_agent(f"model:{tmp_path / 'ppo'}", Rules())
    obs = np.zeros((1, 571), np.float32)
    assert np.array_equal(policy.logits(obs), make_agent("model:ppo", Rules()).logits(obs))


def test_saving_one_network_twice_gives_the_same_bytes(tmp_path):
    """safetensors writes header metadata in a varying order; save_model sorts it, so equal
    networks have equal files and fingerprints (the shipped ones too)."""
    from gostop.agents.learned import SHIPPED_MODELS, WEIGHTS_FILE, stable_header

    network = _network()
    files = [(save_model(network, tmp_path / str(k), META) / WEIGHTS_FILE).read_bytes() for k in range(6)]
    assert all(f == files[0] for f in files)
    for shipped in SHIPPED_MODELS.glob(f"*/{WEIGHTS_FILE}"):
        copy = tmp_path / shipped.parent.name
        shutil.copy(shipped, copy)
        stable_header(copy)
        assert copy.read_bytes() == shipped.read_bytes(), f"{shipped} was not saved with a stable header"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: t.to(torch.int32), "not floating point"),
        (lambda t: t > 0, "not floating point"),
        (lambda t: t.clone().fill_(float("nan")), "NaN or infinite"),
        (lambda t: t.clone().fill_(float("inf")), "NaN or infinite"),
    ],
)
def test_weights_of_another_dtype_or_not_finite_are_refused(model, change, message):
    from safetensors.torch import load_file, save_file

    path = model / "policy.safetensors"
    state = load_file(path)
    key = sorted(state)[0]
    with open(path, "rb") as f:  # keep the header's metadata (encoding, players, decides)
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    save_file({**state, key: change(state[key])}, str(path), metadata=header["__metadata__"])
    with pytest.raises(ModelError, match=message):
        load_model(str(model))


@pytest.mark.parametrize(
    "network, message",
    [
        ({"inputs": 571, "actions": 125.0, "pi": [8], "vf": [8], "activation": "tanh"}, "'actions' must be 125"),
        ({"inputs": 571, "actions": 125, "pi": [8], "vf": [8], "activation": "tanh", "dropout": 0.5}, "unknown key"),
        ({"inputs": 571.0, "actions": 125, "pi": [8], "vf": [8], "activation": "tanh"}, "'inputs' must be"),
        ({"inputs": 571, "actions": 125, "pi": [8.0], "vf": [8], "activation": "tanh"}, "'pi' must be"),
    ],
)
def test_the_network_entry_takes_known_keys_and_integer_sizes(model, network, message):
    _edit(model, network=network)
    with pytest.raises(ModelError, match=message):
        load_model(str(model))


def test_a_relative_card_player_resolves_against_the_model_folder(tmp_path, monkeypatch):
    models = tmp_path / "models"
    save_model(_network(), models / "cards", META)
    monkeypatch.chdir(models)
    composite = save_model(_network(), models / "go", {**META, "decides": "go_stop", "card_player": "model:cards"})
    assert json.loads((composite / "model.json").read_text())["card_player"] == "model:../cards"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    save_model(_network(8), elsewhere / "cards", {**META})  # a decoy beside the working folder
    agent = load_model(str(composite))
    assert agent.card_player.name == f"model:{models / 'go' / '..' / 'cards'}"
    _edit(composite, card_player="model:ppo")  # a shipped model's name still names it
    assert load_model(str(composite)).card_player.name == "model:ppo"


# ---- the environments' smaller causes ------------------------------------------------------------
ENV_MAKERS = {
    "aec": lambda **kw: __import__("gostop_env.pettingzoo_env", fromlist=["x"]).raw_env(**kw),
    "gym": lambda **kw: __import__("gostop_env.gym_env", fromlist=["x"]).GoStopEnv(**kw),
    "vec": lambda **kw: __import__("gostop_env.vec_env", fromlist=["x"]).GoStopVecEnv(4, **kw),
}


@pytest.mark.parametrize("make", ENV_MAKERS.values(), ids=ENV_MAKERS.keys())
@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(reward_scale=float("nan")), ValueError),
        (dict(reward_scale=float("inf")), ValueError),
        (dict(reward_scale=True), TypeError),
        (dict(reward_scale="2"), TypeError),
        (dict(nagari_carry="false"), TypeError),
        (dict(nagari_carry=1), TypeError),
    ],
)
def test_env_constructors_refuse_values_of_the_wrong_kind(make, kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        make(**kwargs)


def test_gym_reset_takes_the_aec_envs_options():
    from gostop_env.core import Rules
    from gostop_env.core.deck import shuffled_decks
    from gostop_env.gym_env import GoStopEnv

    rules = Rules.preset("seed", players=2)
    deck = [int(c) for c in shuffled_decks(rules, np.random.default_rng(3), 1)[0]]
    env = GoStopEnv(learner_seat=0)
    env.reset(options={"deck": deck, "carry": 2})
    assert env.batch.stock[0].tolist()[: len(deck) - 28] == deck[28:] and int(env.batch.carry[0]) == 2
    with pytest.raises(TypeError, match="a dict"):
        env.reset(options=["deck"])
    with pytest.raises(ValueError, match="carry"):
        env.reset(options={"carry": -1})
    with pytest.raises(ValueError, match="deck"):
        env.reset(options={"deck": deck[:-1]})


def test_aec_step_none_for_an_agent_to_move_is_a_type_error():
    from gostop_env.pettingzoo_env import raw_env

    env = raw_env()
    env.reset(seed=1)
    with pytest.raises(TypeError, match="step\\(None\\)"):
        env.step(None)


def test_two_dimensional_actions_are_refused_not_flattened():
    from gostop_env.core import GameBatch, Rules

    batch = GameBatch.from_seed(Rules(), 0, 2)
    with pytest.raises(ValueError, match="one axis"):
        batch.step(np.zeros((2, 1), np.int64))


def test_files_that_are_not_regular_are_refused_before_reading(tmp_path, capsys):
    import os

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    for path in ("/dev/zero", str(pipe)):
        with pytest.raises(SystemExit):
            main(["replay", path])
        assert "not a regular file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["play", "--save", "/dev/full"])
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize(
    "override, message",
    [
        ("seed.x=1", "is a key, not a"),
        ("ppo.net_arch.x=1", "one level deep"),
        ("ppo.n_steps=100000000", "ppo.n_steps must be"),
        ("ppo.envs=65536 ppo.n_steps=100", "over 4,000,000 steps a rollout"),
        ("bc.hands=100000000", "bc.hands must be"),
    ],
)
def test_config_overrides_out_of_shape_or_bounds_are_named(override, message):
    from gostop.train.config import TrainConfig

    with pytest.raises(ValueError, match=message):
        TrainConfig.load("smoke", override.split())


def test_deeply_nested_toml_is_a_clear_error(tmp_path):
    from gostop.train.config import TrainConfig

    (tmp_path / "deep.toml").write_text("a = " + "[" * 3000 + "]" * 3000)
    with pytest.raises(ValueError, match="nested too deeply"):
        TrainConfig.load(str(tmp_path / "deep.toml"))


def test_train_rllib_checks_its_out_folder_before_ray_starts(tmp_path, capsys):
    pytest.importorskip("ray.rllib")
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        main(["train-rllib", "--out", str(tmp_path / "file")])
    assert "is a file" in capsys.readouterr().err


def test_names_that_differ_only_by_spaces_are_one_agent():
    with pytest.raises(ValueError, match="must differ"):
        TournamentConfig((" greedy", "greedy"), deals=10)
