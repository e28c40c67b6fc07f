"""Training: configs, the opponent pool and go/stop-only env, behaviour cloning, PPO runs."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from gostop.agents.greedy import Greedy  # noqa: E402
from gostop.agents.learned import GoStopComposite, NetworkPolicy, read_meta, save_model  # noqa: E402
from gostop.agents.registry import (
    load_model,  # noqa: E402
    make_agent,  # noqa: E402
)
from gostop.train.bc import agreement, clone, collect, collect_in_parts  # noqa: E402
from gostop.train.config import TrainConfig  # noqa: E402
from gostop.train.ppo import train  # noqa: E402
from gostop_env.core import Phase, Rules  # noqa: E402
from gostop_env.core import actions as A  # noqa: E402
from gostop_env.policy import RandomPolicy  # noqa: E402
from gostop_env.vec_env import GoStopVecEnv, OpponentPool  # noqa: E402

SMOKE = [
    "ppo.timesteps=1024",
    "ppo.n_steps=8",  # rollouts of 32 envs x 8 steps: snapshots, evaluations and checkpoints come between them
    "checkpoint_every=512",
    "opponents.snapshot_every=256",
    "eval.every=512",
    "eval.deals=20",
    "bc.hands=32",
    "bc.epochs=1",
]


def smoke(tmp_path, *extra: str) -> TrainConfig:
    return TrainConfig.load("smoke", [*SMOKE, f'out="{tmp_path / "run"}"', *extra])


# ---- configuration -------------------------------------------------------------------------
def test_shipped_configs_load_and_overrides_apply():
    config = TrainConfig.load("smoke", ["ppo.timesteps=4096", "ppo.net_arch=[32, 32]", "opponents.pool={random=1.0}"])
    assert config.ppo.timesteps == 4096 and config.ppo.net_arch == (32, 32)
    assert config.opponents.pool == {"random": 1.0} and config.bc is not None
    for name in ("quick", "ship", "go_stop", "go_stop_hands"):
        assert TrainConfig.load(name).ppo.timesteps > 0
    matches = TrainConfig.load("go_stop_match")
    assert matches.match.hands == 8 and matches.ppo.reward == "match_win" and matches.encoding == "vector+match"
    expert = TrainConfig.load("expert")
    assert expert.ppo.timesteps == 0 and expert.bc is not None and expert.bc.teacher == "search"


@pytest.mark.parametrize(
    "override, message",
    [
        ("ppo.timestep=5", "unknown key"),
        ("colour=1", "unknown key"),
        ("kind='dqn'", "kind must be"),
        ("ppo.reward='points'", "ppo.reward"),
        ("ppo.envs=0", "ppo.envs"),
        ("players=4", "players"),
        ("opponents.pool={}", "opponents.pool"),
        ("noequals", "section.key=value"),
        ("players=3", "eval.against"),
        ("opponents.max_snapshots=0", "max_snapshots"),
        ("ppo.timesteps=-1", "ppo.timesteps"),
    ],
)
def test_bad_config_values_are_named(override, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig.load("smoke", [override])


def test_a_folder_named_like_a_shipped_config_does_not_hide_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke").mkdir()  # e.g. a run folder called smoke
    assert TrainConfig.load("smoke").ppo.timesteps > 0


def test_missing_config_file_lists_shipped_ones():
    with pytest.raises(ValueError, match="shipped configs"):
        TrainConfig.load("no-such-config")


# ---- the league and the go/stop env --------------------------------------------------------------
class Marked(RandomPolicy):
    """A random policy that counts the rows it was asked about."""

    def __init__(self):
        self.rows = 0

    def __call__(self, observations, masks, rng):
        self.rows += len(masks)
        return super().__call__(observations, masks, rng)


def test_opponent_pool_draws_by_weight_and_never_a_zero_weight():
    a, b, c = Marked(), Marked(), Marked()
    pool = OpponentPool([a, b, c], [1.0, 3.0, 0.0])
    draws = pool.draw(np.random.default_rng(0), 4000)
    assert not (draws == 2).any() and 0.7 < (draws == 1).mean() < 0.8
    env = GoStopVecEnv(64, opponents=pool, seed=1)
    env.reset()
    for _ in range(30):
        env.step(RandomPolicy()(None, env.action_masks(), np.random.default_rng(0)))
    assert a.rows > 0 and b.rows > 2 * a.rows and c.rows == 0
    with pytest.raises(ValueError, match="weights"):
        pool.set_weights([0.0, 0.0, 0.0])


def test_go_stop_env_asks_the_learner_only_go_or_stop():
    env = GoStopVecEnv(
        32, opponents=Greedy(), learner_decides="go_stop", learner_autoplay=Greedy(), reward="win", seed=3
    )
    env.reset()
    rng, finished = np.random.default_rng(0), 0
    for _ in range(40):
        masks = env.action_masks()
        assert (env.batch.phase == Phase.GO_STOP).all()
        assert masks[:, [A.GO, A.STOP]].all() and masks.sum(axis=1).max() == 2
        _, rewards, done, _ = env.step(RandomPolicy()(None, masks, rng))
        assert set(np.unique(rewards[done])) <= {-1.0, 0.0, 1.0}
        finished += int(done.sum())
    assert finished > 0


def test_go_stop_env_needs_a_card_player():
    with pytest.raises(ValueError, match="learner_autoplay"):
        GoStopVecEnv(4, learner_decides="go_stop")


# ---- behaviour cloning ------------------------------------------------------------------------
def test_demonstrations_hold_the_teachers_choices_and_final_chips():
    rules = Rules()
    demos = collect(Greedy(rules=rules), rules, hands=40, seed=5, batch_size=16)
    replayed = Greedy(rules=rules)(demos.observations, demos.masks, np.random.default_rng(0))
    assert (replayed == demos.actions).all()
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    assert (demos.go_stop == demos.masks[:, A.GO]).all() and demos.go_stop.any()
    assert np.allclose(demos.returns, np.rint(demos.returns)) and demos.returns.max() > 0 > demos.returns.min()


def test_dagger_demonstrations_are_the_teachers_moves_on_the_behaviours_states():
    rules = Rules()
    teacher, behaviour = Greedy(rules=rules), RandomPolicy()
    demos = collect(teacher, rules, hands=40, seed=5, batch_size=16, behaviour=behaviour)
    labels = teacher(demos.observations, demos.masks, np.random.default_rng(0))
    assert (labels == demos.actions).all() and demos.masks[np.arange(len(demos)), demos.actions].all()
    own = collect(teacher, rules, hands=40, seed=5, batch_size=16)  # the same deals, greedy playing
    assert len(own) != len(demos) or (own.observations != demos.observations).any()


def test_demonstrations_in_parts_are_each_parts_own_collection_joined_in_order():
    rules, logs = Rules(), []
    demos = collect_in_parts("greedy", rules, hands=7, seed=40, parts=2, behaviour="random", log=logs.append)
    teacher, behaviour = Greedy(rules=rules), RandomPolicy()
    first, second = (collect(teacher, rules, n, seed, behaviour=behaviour) for n, seed in ((4, 40), (3, 41)))
    assert len(demos) == len(first) + len(second)
    for name in ("observations", "masks", "actions", "go_stop", "returns"):
        assert np.array_equal(getattr(demos, name), np.concatenate([getattr(first, name), getattr(second, name)]))
    assert logs[0].startswith("demonstrations: part 1 of 2 (4 hands") and len(logs) == 2
    with pytest.raises(ValueError, match="parts"):
        collect_in_parts("greedy", rules, hands=2, seed=0, parts=3)


def test_a_run_collects_its_demonstrations_in_parts(tmp_path):
    logs = []
    out = train(smoke(tmp_path, "ppo.timesteps=0", "bc.hands=6", "bc.parts=2"), progress=False, log=logs.append)
    assert any("part 2 of 2 (3 hands" in line for line in logs) and (out / "model").is_dir()
    assert "demonstrations: 2 of 2 batches of greedy kept" in logs  # each part's one batch, counted on disk
    assert len(list((out / "demonstrations").glob("*/part*/batch0000.npz"))) == 2
    with pytest.raises(ValueError, match="bc.parts"):
        smoke(tmp_path, "bc.hands=2", "bc.parts=3")
    with pytest.raises(ValueError, match="bc.parts"):
        smoke(tmp_path, "bc.parts=0")


def test_a_search_labelling_states_gives_its_action_values_and_they_can_be_cloned(tmp_path):
    rules = Rules()
    teacher = make_agent("search:n=4:rounds=2", rules)
    demos = collect(teacher, rules, hands=24, seed=3, batch_size=12, behaviour=Greedy(rules=rules))
    values = demos.values.astype(np.float32)
    valued = np.isfinite(values).any(axis=1)
    assert valued.mean() > 0.9 and (~np.isfinite(values) | demos.masks).all()  # legal actions only
    assert np.isfinite(values[valued, :][np.arange(valued.sum()), demos.actions[valued]]).all()
    assert demos.only(np.arange(5)).values.shape == (5, A.NUM_ACTIONS)
    from gostop.train.batched import new_network

    network = new_network(smoke(tmp_path, "ppo.net_arch=[32, 32]"))
    history = clone(network, demos, epochs=6, batch_size=64, learning_rate=3e-3, seed=0, temperature=1.0)
    assert history[-1]["loss"] < history[0]["loss"]
    plain = collect(Greedy(rules=rules), rules, hands=4, seed=3)
    assert plain.values is None
    with pytest.raises(ValueError, match="action values"):
        clone(network, plain, epochs=1, batch_size=64, learning_rate=1e-3, seed=0, temperature=1.0)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["bc.temperature=1.0"], "set both"),
        (["bc.temperature=1.0", "bc.behaviour='greedy'"], "set both"),  # the teacher is no search
        (["bc.temperature=0.0", "bc.behaviour='greedy'", "bc.teacher='search'"], "positive"),
    ],
)
def test_cloning_at_a_temperature_needs_a_search_a_behaviour_and_a_positive_one(tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        smoke(tmp_path, *overrides)


def test_a_run_can_clone_from_a_starting_model(tmp_path):
    logs = []
    starts = ["ppo.timesteps=0", "ppo.net_arch=[256, 256]", "ppo.init='ppo'"]
    config = smoke(tmp_path, *starts, "bc.behaviour='model:ppo'", "bc.hands=40")
    out = train(config, progress=False, log=logs.append)
    assert logs[:2] == ["starting from model ppo", "demonstrations: 1 of 1 batches of greedy kept"]
    assert "on the states of model:ppo" in logs[2]
    assert read_meta(out / "model")["trained"]["config"]["bc"]["behaviour"] == "model:ppo"
    with pytest.raises(ValueError, match="bc.behaviour"):
        smoke(tmp_path, "bc.behaviour='nobody'")


def test_cloning_learns_the_teacher(tmp_path):
    from gostop.train.ppo import _make_env, _make_pool, _new_model

    config = smoke(tmp_path)
    model = _new_model(config, _make_env(config, _make_pool(config, {"snapshots": []}), 0), tmp_path)
    demos = collect(Greedy(rules=config.rules), config.rules, hands=300, seed=1)
    before = agreement(model.policy, demos)["agreement"]
    history = clone(model.policy, demos, epochs=10, batch_size=256, learning_rate=3e-3, seed=0)
    assert history[-1]["loss"] < history[0]["loss"]
    assert agreement(model.policy, demos)["agreement"] > max(0.6, before + 0.2)


# ---- networks as agents ----------------------------------------------------------------------------
def test_network_policy_plays_legal_moves_and_samples_reproducibly(tmp_path):
    out = train(smoke(tmp_path), progress=False, log=lambda _: None)
    policy = make_agent(f"model:{out / 'model'}", Rules())
    assert isinstance(policy, NetworkPolicy)
    env = GoStopVecEnv(16, seed=2)
    obs = env.reset()
    masks = env.action_masks()
    chosen = policy(obs, masks, np.random.default_rng(0))
    assert masks[np.arange(16), chosen].all()
    sampler = NetworkPolicy(policy.network, deterministic=False)
    first, second = (sampler(obs, masks, np.random.default_rng(7)) for _ in range(2))
    assert (first == second).all() and masks[np.arange(16), first].all()
    with pytest.raises(ValueError, match="trained for 2 players"):
        load_model(str(out / "model"), Rules.preset("seed", players=3))
    assert load_model(str(out / "model")).network is policy.network  # loaded once per file version
    save_model(policy.network, out / "model", read_meta(out / "model"))
    assert load_model(str(out / "model")).network is not policy.network  # a rewritten file is read again
    assert not list((out / "model").glob("*.partial"))
    with pytest.raises(ValueError, match="no model"):
        make_agent(f"model:{tmp_path / 'nothing'}")


# ---- training runs -------------------------------------------------------------------------------
def test_ppo_run_writes_everything_and_resumes(tmp_path):
    logs = []
    config = smoke(tmp_path)
    out = train(config, progress=False, log=logs.append)
    state = json.loads((out / "state.json").read_text())
    assert state["timesteps"] == 1024 and len(state["snapshots"]) == 3  # at 256, 512, 768
    evals = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert [e["timesteps"] for e in evals] == [512, 1024] and all(e["deals"] == 20 for e in evals)
    assert json.loads((out / "bc.json").read_text())["epochs"]
    assert any((out / "tb").rglob("events.out.tfevents*"))
    with pytest.raises(ValueError, match="already holds a run"):
        train(config, progress=False, log=logs.append)
    longer = smoke(tmp_path, "ppo.timesteps=2048")
    train(longer, resume=True, progress=False, log=logs.append)
    assert json.loads((out / "state.json").read_text())["timesteps"] == 2048
    assert any("resumed" in line for line in logs)
    with pytest.raises(ValueError, match="another configuration"):
        train(smoke(tmp_path, "ppo.timesteps=4096", "seed=9"), resume=True, progress=False)


def test_cloning_only_run_exports_and_evaluates_the_cloned_network(tmp_path):
    logs = []
    out = train(smoke(tmp_path, "ppo.timesteps=0", "bc.teacher='search:n=2:rounds=2'"), progress=False, log=logs.append)
    evals = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert [e["timesteps"] for e in evals] == [0] and evals[0]["deals"] == 20
    assert json.loads((out / "bc.json").read_text())["epochs"]
    assert not (out / "checkpoints").exists() and read_meta(out / "model")["trained"]["timesteps"] == 0
    assert isinstance(load_model(str(out / "model")), NetworkPolicy)
    with pytest.raises(ValueError, match="nothing to resume"):
        train(smoke(tmp_path, "ppo.timesteps=0", "bc.teacher='search:n=2:rounds=2'"), resume=True, progress=False)
    smoke_config = TrainConfig.load("smoke")
    with pytest.raises(ValueError, match="needs a \\[bc\\] table"):
        replace(smoke_config, bc=None, ppo=replace(smoke_config.ppo, timesteps=0))


def test_go_stop_run_gives_a_go_stop_model_on_its_card_player(tmp_path):
    config = smoke(tmp_path, "kind='go_stop'", "ppo.card_player='simple'", "ppo.reward='win'", "bc.hands=200")
    out = train(config, progress=False, log=lambda _: None)
    policy = make_agent(f"model:{out / 'model'}", Rules())
    assert isinstance(policy, GoStopComposite) and policy.card_player.name == "simple"
    assert json.loads((out / "model" / "model.json").read_text())["decides"] == "go_stop"


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["match.hands=8"], "must read the match sections"),
        (["match.hands=0", "encoding='vector+match'"], "match.hands must be between 1 and 1000"),
        (["match.hands=8", "match.bankroll=2", "encoding='vector+match'"], "cannot cover one hand"),
        (["match.bankroll=50"], "match_bankroll needs match_hands"),
        (["ppo.reward='match_win'"], "paid when a match ends"),
        (["match.hands=8", "encoding='vector+match'", "trainer='batched'"], "plays single hands"),
    ],
)
def test_bad_match_training_is_named(tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        smoke(tmp_path, *overrides)


def test_a_go_stop_policy_trains_on_matches_and_plays_them(tmp_path):
    from gostop.agents.compare import compare_matches
    from gostop_env.core.match import MatchFormat

    extra = ["kind='go_stop'", "encoding='vector+match'", "match.hands=3", "ppo.reward='match_win'", "bc.hands=200"]
    out = train(smoke(tmp_path, *extra), progress=False, log=lambda _: None)
    meta = json.loads((out / "model" / "model.json").read_text())
    assert meta["encoding"] == "vector+match" and meta["trained"]["config"]["match"]["hands"] == 3
    policy = make_agent(f"model:{out / 'model'}", Rules())
    assert isinstance(policy, GoStopComposite) and policy.encoding == "vector+match"
    result = compare_matches(policy, make_agent("greedy", Rules()), MatchFormat(3), 40, seed=5)
    assert 0 <= result.win_rate <= 1 and result.hands_per_match == 3


def test_three_player_korean_run(tmp_path):
    config = smoke(
        tmp_path,
        "players=3",
        "preset='korean'",
        "opponents.pool={greedy=1.0, random=1.0}",
        "eval.against=['greedy', 'random']",
        "opponents.snapshot_every=0",
    )
    out = train(config, progress=False, log=lambda _: None)
    evals = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert evals[-1]["against"] == "greedy + random"
    meta = json.loads((out / "model" / "model.json").read_text())
    assert (meta["players"], meta["preset"]) == (3, "korean")


def test_cli_train(tmp_path, capsys):
    from gostop.train.cli import main

    assert main(["train", "smoke", "--quiet", "--out", str(tmp_path / "cli"), *(f"--set={s}" for s in SMOKE)]) == 0
    assert "model:" in capsys.readouterr().out
    assert (tmp_path / "cli" / "model" / "policy.safetensors").exists()


def test_cli_train_overwrite_replaces_only_a_run_folder(tmp_path):
    from gostop.train.cli import main

    args = [
        "train",
        "smoke",
        "--quiet",
        "--out",
        str(tmp_path / "run"),
        *(f"--set={s}" for s in SMOKE),
        "--set=ppo.timesteps=512",
    ]
    assert main(args) == 0
    (tmp_path / "run" / "marker").write_text("old")
    assert main([*args, "--overwrite"]) == 0
    assert not (tmp_path / "run" / "marker").exists() and (tmp_path / "run" / "model").is_dir()
    (tmp_path / "other").mkdir()
    with pytest.raises(SystemExit):
        main(["train", "smoke", "--quiet", "--out", str(tmp_path / "other"), "--overwrite"])
    assert (tmp_path / "other").is_dir()


def test_retired_snapshots_stay_retired_on_resume(tmp_path):
    from gostop.train.ppo import _make_pool

    config = smoke(tmp_path, "opponents.max_snapshots=1")
    out = train(config, progress=False, log=lambda _: None)
    state = json.loads((out / "state.json").read_text())
    assert len(state["snapshots"]) == 3
    pool = _make_pool(config, state)  # greedy, random, then the three snapshots
    assert len(pool.policies) == 5 and list(pool.weights[2:4]) == [0, 0] and pool.weights[4] > 0


# ---- starting points, the value warm-up and the asymmetric critic -------------------------------
def _actor_and_critic(folder):
    from safetensors.torch import load_file

    weights = load_file(str(folder / "policy.safetensors"))
    actor = {k: v for k, v in weights.items() if k.startswith(("mlp_extractor.policy_net.", "action_net."))}
    return actor, {k: v for k, v in weights.items() if k not in actor}


def _same(a, b):
    return a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)


def _no_bc_config(tmp_path, *extra: str) -> TrainConfig:
    """The smoke run without its [bc] table (PPO from random weights or from ``ppo.init``)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "nobc.toml"
    path.write_text('kind = "ppo"\n[ppo]\nnet_arch = [64, 64]\nenvs = 32\nbatch_size = 256\n')
    return TrainConfig.load(str(path), [*(s for s in SMOKE if not s.startswith("bc.")), *extra])


def test_snapshots_hold_the_weights_trained_on_every_step_before_them(tmp_path):
    out = train(smoke(tmp_path, "bc.epochs=1"), progress=False, log=lambda _: None)
    first = _actor_and_critic(out / "snapshots" / f"{256:09d}")[0]
    cloned = train(smoke(tmp_path / "bc", "ppo.timesteps=0"), progress=False, log=lambda _: None)
    assert not _same(first, _actor_and_critic(cloned / "model")[0])  # one PPO update after cloning


def test_ppo_from_a_model_holds_its_policy_during_the_value_warmup(tmp_path):
    start = train(smoke(tmp_path / "start", "ppo.timesteps=0"), progress=False, log=lambda _: None) / "model"
    logs = []
    held = train(
        _no_bc_config(tmp_path / "held", f"ppo.init='{start}'", "ppo.value_warmup=1024", f"out='{tmp_path / 'h'}'"),
        progress=False,
        log=logs.append,
    )
    assert any("starting from model" in line for line in logs)
    (actor, critic), (actor0, critic0) = _actor_and_critic(held / "model"), _actor_and_critic(start)
    assert _same(actor, actor0) and not _same(critic, critic0)
    moved = train(
        _no_bc_config(tmp_path / "moved", f"ppo.init='{start}'", "ppo.value_warmup=512", f"out='{tmp_path / 'm'}'"),
        progress=False,
        log=lambda _: None,
    )
    assert not _same(_actor_and_critic(moved / "model")[0], actor0)


@pytest.mark.parametrize(
    "override, message",
    [
        ("ppo.critic='hidden'", "ppo.critic must be one of"),
        ("ppo.value_warmup=99999", "more than ppo.timesteps"),
        ("ppo.init='expert'", "policy layers"),
        ("ppo.init='expert3'", "players 3"),
        ("ppo.init='no-such-model'", "ppo.init: .*no-such-model"),
        ("ppo.init='go_stop_match'", "decides 'go_stop'; this run trains 'all'"),
    ],
)
def test_bad_starting_points_and_critics_are_named(tmp_path, override, message):
    with pytest.raises(ValueError, match=message):
        _no_bc_config(tmp_path, override)


def test_a_go_stop_run_may_start_from_a_network_that_decides_everything(tmp_path):
    """Its go/stop outputs are the same: ``expert_ppo``'s weights start a go/stop network."""
    config = _no_bc_config(tmp_path, "kind='go_stop'", "ppo.init='expert_ppo'", "ppo.net_arch=[256, 256]")
    assert (config.kind, config.ppo.init) == ("go_stop", "expert_ppo")


def test_a_run_may_start_from_a_model_of_other_rules_for_as_many_players(tmp_path):
    """``ppo.init`` copies the weights of a model trained under other rules (``expert_ppo``,
    2 players ``seed``) into a 2-player ``korean`` run: a starting point, not an agent."""
    import torch

    from gostop.agents.learned import load_network
    from gostop.train.batched import new_network
    from gostop.train.start import start_from_model

    config = _no_bc_config(tmp_path, "preset='korean'", "ppo.init='expert_ppo'", "ppo.net_arch=[256, 256]")
    network = new_network(config)
    start_from_model(network, "expert_ppo", config)
    saved = load_network("expert_ppo")[0].network.state_dict()
    assert all(torch.equal(value, saved[key]) for key, value in network.state_dict().items())


def test_an_oracle_critic_on_tokens_is_refused(tmp_path):
    with pytest.raises(ValueError, match="encoding = 'vector'"):
        smoke(tmp_path, "ppo.critic='oracle'", "encoding='tokens'")


def test_oracle_critic_reads_hidden_cards_and_its_policy_does_not(tmp_path):
    import torch

    from gostop.train.asymmetric import OWN_VIEW_INPUTS, OracleCriticPolicy, playable_network

    config = smoke(tmp_path, "ppo.critic='oracle'", "bc.hands=16")
    out = train(config, progress=False, log=lambda _: None)
    assert read_meta(out / "model")["encoding"] == "vector"
    from gostop.train.ppo import _make_env, _make_pool, _new_model

    env = _make_env(config, _make_pool(config, {"snapshots": []}), seed=3)
    model = _new_model(config, env, tmp_path)
    assert isinstance(model.policy, OracleCriticPolicy)
    obs = torch.as_tensor(env.reset()[:4])
    hidden = obs.clone()
    hidden[:, OWN_VIEW_INPUTS:] = 1.0 - hidden[:, OWN_VIEW_INPUTS:]  # other hidden cards
    policy = model.policy
    with torch.no_grad():
        actor = policy.mlp_extractor.forward_actor
        logits = [policy.action_net(actor(policy.extract_features(o))) for o in (obs, hidden)]
        values = [policy.predict_values(o) for o in (obs, hidden)]
    assert torch.equal(logits[0], logits[1]) and not torch.equal(values[0], values[1])
    plain = playable_network(policy)
    own = NetworkPolicy(plain).logits(obs[:, :OWN_VIEW_INPUTS].numpy())
    assert np.allclose(own, logits[0].numpy(), atol=1e-6)
    with torch.no_grad():
        assert not plain.predict_values(obs[:, :OWN_VIEW_INPUTS]).any()  # the critic is not exported


def test_a_training_folder_in_use_is_refused_and_its_state_is_written_whole(tmp_path):
    import fcntl

    from gostop.train.run import LOCK_FILE
    from gostop_env.files import FolderInUseError

    config = smoke(tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    with (folder / LOCK_FILE).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run or resume holds it
        with pytest.raises(FolderInUseError, match="in use by another training run"):
            train(config, progress=False, log=lambda _: None)
        from gostop.train.cli import main

        (folder / "config.json").write_text("{}")  # looks like a run folder
        with pytest.raises(SystemExit):  # --overwrite never deletes a folder in use
            main(["train", "smoke", "--quiet", "--overwrite", "--out", str(folder)])
        assert (folder / "config.json").exists()
    train(config, progress=False, log=lambda _: None)
    assert not list(folder.glob("*.partial"))
    (folder / "state.json").write_text('{"timesteps": 10, "checkpoint": 3, "snapshots": []}')
    with pytest.raises(ValueError, match="state.json is damaged: 'checkpoint'"):
        train(smoke(tmp_path, "ppo.timesteps=2048"), resume=True, progress=False, log=lambda _: None)
