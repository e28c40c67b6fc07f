"""The batched trainer: rounds of learner seats, advantages, configs, and exact resumes."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from gostop.agents.registry import make_agent  # noqa: E402
from gostop.train.batched import NetworkLearner, _minibatch_step, new_network, train_batched  # noqa: E402
from gostop.train.config import TrainConfig  # noqa: E402
from gostop.train.rollout import LEARNER, League, Samples, SeatedGames, advantages  # noqa: E402
from gostop_env.core import Rules  # noqa: E402
from gostop_env.policy import RandomPolicy  # noqa: E402

BATCHED = [
    "trainer='batched'",
    "ppo.envs=16",
    "ppo.timesteps=900",
    "ppo.batch_size=128",
    "checkpoint_every=300",
    "opponents.snapshot_every=300",
    "opponents.self_play=1.0",
    "eval.every=600",
    "eval.deals=10",
]


def batched(tmp_path, *extra: str, folder: str = "run") -> TrainConfig:
    config = TrainConfig.load("smoke", [*BATCHED, f'out="{tmp_path / folder}"', *extra])
    return TrainConfig.from_dict({**config.to_dict(), "bc": None})


def _random_learner(observations, masks, rng):
    actions = RandomPolicy()(observations, masks, rng)
    return actions, np.zeros(len(masks), np.float32), np.zeros(len(masks), np.float32)


# ---- advantages ------------------------------------------------------------------------------
def test_advantages_follow_each_episode_in_time_order_only():
    # Two episodes interleaved: 0 decides at samples 0, 2, 3; episode 5 at 1 and 4.
    samples = Samples(
        observations=np.zeros((5, 1), np.float32),
        masks=np.ones((5, 125), bool),
        actions=np.zeros(5, np.int64),
        log_probs=np.zeros(5, np.float32),
        values=np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32),
        episodes=np.array([0, 5, 0, 0, 5]),
        rewards=np.array([10.0, 0, 0, 0, 0, -1.0], np.float32),
    )
    lam = 0.5
    advantage, returns = advantages(samples, lam)
    # episode 0: values 1, 3, 4 then reward 10; episode 5: values 2, 5 then reward -1
    d0 = [3 - 1, 4 - 3, 10 - 4]
    a0 = [d0[0] + lam * (d0[1] + lam * d0[2]), d0[1] + lam * d0[2], d0[2]]
    d5 = [5 - 2, -1 - 5]
    a5 = [d5[0] + lam * d5[1], d5[1]]
    np.testing.assert_allclose(advantage, [a0[0], a5[0], a0[1], a0[2], a5[1]], rtol=1e-6)
    np.testing.assert_allclose(returns, advantage + samples.values, rtol=1e-6)


def test_the_linear_learning_rate_falls_to_zero_at_the_last_step(tmp_path):
    config = batched(tmp_path, "ppo.lr_schedule='linear'", "ppo.learning_rate=0.001")
    rates = [config.learning_rate_at(s) for s in (0, 450, 900, 2000)]
    assert rates == pytest.approx([0.001, 0.0005, 0.0, 0.0])
    assert batched(tmp_path).learning_rate_at(900) == 3e-4


def test_advantages_with_lambda_one_are_the_final_reward_less_the_value():
    rng = np.random.default_rng(1)
    episodes = rng.integers(0, 6, 40)
    samples = Samples(
        np.zeros((40, 1), np.float32),
        np.ones((40, 125), bool),
        np.zeros(40, np.int64),
        np.zeros(40, np.float32),
        rng.normal(size=40).astype(np.float32),
        episodes,
        rng.normal(size=6).astype(np.float32),
    )
    advantage, returns = advantages(samples, 1.0)
    np.testing.assert_allclose(returns, samples.rewards[episodes], rtol=1e-5, atol=1e-5)


# ---- rounds ------------------------------------------------------------------------------------
@pytest.mark.parametrize("players, self_play", [(2, 0.0), (2, 1.0), (3, 0.5)])
def test_a_round_plays_every_hand_out_with_the_learner_in_its_seats(players, self_play):
    rules = Rules.preset("seed", players=players)
    league = League([make_agent("greedy", rules), RandomPolicy()], [1.0, 1.0], self_play)
    games = SeatedGames(rules, 24, league, reward_scale=0.1)
    samples, figures = games.play_round(_random_learner, np.random.default_rng(0))
    assert games.batch.done.all() and figures.hands == 24 and figures.decisions == len(samples) > 0
    rows = np.arange(len(samples))
    assert samples.masks[rows, samples.actions].all()  # every decision legal where it was taken
    seats = samples.episodes % players
    assert set(np.unique(samples.episodes // players)) <= set(range(24)) and (seats < players).all()
    chips = games.batch.payments.reshape(-1)
    np.testing.assert_allclose(samples.rewards, chips * 0.1, rtol=1e-6)
    assert games.batch.payments.sum(axis=1).tolist() == [0] * 24  # zero-sum hands
    if self_play == 0:  # one learner seat per game: its decisions come from one seat
        per_game = {g: set(seats[samples.episodes // players == g]) for g in range(24)}
        assert all(len(s) <= 1 for s in per_game.values())


def test_greedy_opponents_play_alike_on_the_kernels_and_in_python():
    """On a compiled batch the league's greedy players decide by the compiled greedy's kernel;
    the hands come out as the Python greedy plays them on the NumPy core."""
    pytest.importorskip("numba")
    rules = Rules.preset("seed", players=2)

    def play(backend):
        league = League([make_agent("greedy:stop=threshold:stock=2:margin=3", rules)], [1.0])
        games = SeatedGames(rules, 32, league, backend=backend)
        samples, _ = games.play_round(_random_learner, np.random.default_rng(9))
        return samples.actions.tolist(), games.batch.payments.tolist()

    assert play("numpy") == play("numba")


def test_rounds_are_reproducible_from_the_generator():
    rules = Rules.preset("seed", players=2)

    def play(seed):
        league = League([make_agent("greedy", rules)], [1.0], 1.0)
        samples, _ = SeatedGames(rules, 16, league).play_round(_random_learner, np.random.default_rng(seed))
        return samples

    a, b, c = play(4), play(4), play(5)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.observations, b.observations)
    assert not (len(a) == len(c) and np.array_equal(a.actions, c.actions))


def test_league_draws_the_learner_by_its_self_play_weight():
    league = League([RandomPolicy(), RandomPolicy()], [1.0, 0.0], self_play=3.0)
    drawn = league.draw(np.random.default_rng(0), 4000)
    assert set(np.unique(drawn)) == {LEARNER, 0}  # never the zero-weight policy
    assert 0.70 < (drawn == LEARNER).mean() < 0.80
    with pytest.raises(ValueError, match="positive sum"):
        League([RandomPolicy()], [0.0], 0.0)


def test_network_learner_samples_legal_actions_with_their_log_probabilities(tmp_path):
    import torch

    config = batched(tmp_path)
    network = new_network(config)
    rng = np.random.default_rng(0)
    observations = rng.random((200, 571)).astype(np.float32)
    masks = rng.random((200, 125)) < 0.1
    masks[:, 7] = True
    actions, log_probs, values = NetworkLearner(network)(observations, masks, rng)
    assert masks[np.arange(200), actions].all() and values.shape == (200,)
    with torch.no_grad():
        logits = network.action_net(network.mlp_extractor.forward_actor(torch.from_numpy(observations))).numpy()
    legal = np.where(masks, logits, -np.inf)
    expected = legal[np.arange(200), actions] - np.log(np.exp(legal).sum(axis=1))
    np.testing.assert_allclose(log_probs, expected, atol=1e-4)


def test_the_update_reports_the_entropy_of_the_legal_actions_alone(tmp_path):
    import torch

    config = batched(tmp_path)
    network = new_network(config)
    torch.nn.init.zeros_(network.action_net.weight)
    torch.nn.init.zeros_(network.action_net.bias)  # every legal action equally likely
    rng = np.random.default_rng(1)
    masks = rng.random((64, 125)) < 0.1
    masks[:, 3] = True
    rows = 64
    batch = [
        torch.from_numpy(rng.random((rows, 571)).astype(np.float32)),
        torch.from_numpy(masks),
        torch.full((rows,), 3, dtype=torch.int64),
        torch.from_numpy(-np.log(masks.sum(axis=1)).astype(np.float32)),
        torch.zeros(rows),
        torch.zeros(rows),
    ]
    optimizer = torch.optim.Adam(network.parameters(), lr=0.0)
    figures = _minibatch_step(network, optimizer, batch, config.ppo)
    assert figures["entropy"] == pytest.approx(np.log(masks.sum(axis=1)).mean(), rel=1e-5)
    assert figures["clip_fraction"] == 0.0  # the old log-probabilities are the uniform policy's


# ---- configs -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "override, message",
    [
        ("trainer='jax'", "trainer must be one of"),
        ("opponents.self_play=-1.0", "opponents.self_play must be"),
        ("kind='go_stop'", "'batched' trains kind = 'ppo'"),
        ("ppo.critic='oracle'", "no oracle critic"),
        ("ppo.precision='float16'", "ppo.precision must be one of"),
        ("ppo.lr_schedule='cosine'", "ppo.lr_schedule must be one of"),
    ],
)
def test_bad_batched_configs_are_named_before_any_work(tmp_path, override, message):
    with pytest.raises(ValueError, match=message):
        batched(tmp_path, override)


@pytest.mark.parametrize("threads", ["two", "0", "-1", "", "2.5", "²"])
def test_a_bad_thread_count_is_named_before_any_work(tmp_path, monkeypatch, threads):
    monkeypatch.setenv("GOSTOP_TORCH_THREADS", threads)
    config = batched(tmp_path)
    with pytest.raises(ValueError, match="GOSTOP_TORCH_THREADS must be a whole number"):
        train_batched(config, progress=False, log=lambda _: None)
    assert not (tmp_path / "run").exists()


def test_each_trainer_refuses_a_config_for_the_other_before_any_work(tmp_path):
    from gostop.train.ppo import train

    with pytest.raises(ValueError, match="names trainer = 'batched', not 'sb3'"):
        train(batched(tmp_path), progress=False, log=lambda _: None)
    sb3 = TrainConfig.load("smoke", [f'out="{tmp_path / "run"}"'])
    with pytest.raises(ValueError, match="names trainer = 'sb3', not 'batched'"):
        train_batched(sb3, progress=False, log=lambda _: None)
    assert not (tmp_path / "run").exists()


def test_a_run_goes_to_the_trainer_its_config_names(tmp_path):
    from gostop.train.launch import train

    out = train(batched(tmp_path), progress=False, log=lambda _: None)
    names = [p.name for p in (out / "checkpoints").iterdir()]
    assert names and all(n.startswith("batched_") and n.endswith(".safetensors") for n in names)


def test_the_thread_count_is_given_to_torch(monkeypatch):
    import torch

    from gostop.train.run import set_torch_threads

    before = torch.get_num_threads()
    monkeypatch.setenv("GOSTOP_TORCH_THREADS", "2")
    try:
        assert set_torch_threads() == 2 and torch.get_num_threads() == 2
        monkeypatch.delenv("GOSTOP_TORCH_THREADS")
        assert set_torch_threads() == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_self_play_and_bfloat16_need_the_batched_trainer(tmp_path):
    with pytest.raises(ValueError, match="self_play needs trainer = 'batched'"):
        TrainConfig.load("smoke", ["opponents.self_play=1.0"])
    with pytest.raises(ValueError, match="needs trainer = 'batched'"):
        TrainConfig.load("smoke", ["ppo.precision='bfloat16'"])


def test_a_bfloat16_run_trains_float32_weights_close_to_its_float32_twin(tmp_path):
    import torch

    from gostop.train.batched import forward

    config = batched(tmp_path, "ppo.precision='bfloat16'")
    out = train_batched(config, progress=False, log=lambda _: None)
    agent = make_agent(f"model:{out / 'model'}", config.rules)
    assert all(p.dtype == torch.float32 for p in agent.network.parameters())
    observations = torch.rand(64, 571)
    exact, _ = forward(agent.network, observations)
    rounded, _ = forward(agent.network, observations, "bfloat16")
    assert exact.dtype == rounded.dtype == torch.float32
    assert (exact - rounded).abs().max() < 0.1 and not torch.equal(exact, rounded)


# ---- runs --------------------------------------------------------------------------------------
def test_a_batched_run_writes_its_folder_and_a_playable_model(tmp_path):
    config = batched(tmp_path)
    out = train_batched(config, progress=False, log=lambda _: None)
    state = json.loads((out / "state.json").read_text())
    assert state["timesteps"] >= 900 and state["checkpoint"].endswith(".safetensors")
    assert len(state["snapshots"]) >= 2
    rows = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert [r["timesteps"] for r in rows][-1] == state["timesteps"] and all(r["deals"] == 10 for r in rows)
    agent = make_agent(f"model:{out / 'model'}", config.rules)
    assert agent.encoding == "vector"
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    with pytest.raises(ValueError, match="already holds a run"):
        train_batched(config, progress=False, log=lambda _: None)


@pytest.mark.parametrize("settings", [[], ["ppo.precision='bfloat16'", "ppo.lr_schedule='linear'"]])
def test_a_killed_batched_run_resumes_to_the_same_model_and_figures(tmp_path, settings):
    whole = train_batched(batched(tmp_path, *settings, folder="whole"), progress=False, log=lambda _: None)
    part = batched(tmp_path, *settings, folder="part")
    train_batched(part, progress=False, log=lambda _: None, max_seconds=0)  # stopped after its first round
    resumed = batched(tmp_path, *settings, folder="part")
    train_batched(resumed, resume=True, progress=False, log=lambda _: None)
    assert (whole / "model" / "policy.safetensors").read_bytes() == (
        tmp_path / "part" / "model" / "policy.safetensors"
    ).read_bytes()
    whole_rows = (whole / "eval.jsonl").read_text().splitlines()
    part_rows = (tmp_path / "part" / "eval.jsonl").read_text().splitlines()
    assert set(whole_rows) <= set(part_rows)  # the interrupted run also evaluated where it stopped


def test_gostop_train_runs_the_trainer_the_config_names(tmp_path, capsys):
    from gostop.train.cli import main

    sets = [f"--set={s}" for s in BATCHED if not s.startswith("opponents.snapshot")] + ["--set=bc.hands=16"]
    assert main(["train", "smoke", "--quiet", "--out", str(tmp_path / "cli"), *sets]) == 0
    assert "model:" in capsys.readouterr().out
    assert sorted(p.suffix for p in (tmp_path / "cli" / "checkpoints").iterdir())[0] == ".safetensors"
    assert (tmp_path / "cli" / "bc.json").exists()  # cloning first, then the batched trainer


def test_a_run_folder_in_use_is_refused_and_a_damaged_state_is_named(tmp_path):
    import fcntl

    from gostop.train.run import LOCK_FILE
    from gostop_env.files import FolderInUseError

    config = batched(tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    with (folder / LOCK_FILE).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run holds the folder
        with pytest.raises(FolderInUseError, match="in use by another training run"):
            train_batched(config, progress=False, log=lambda _: None)
    train_batched(config, progress=False, log=lambda _: None)
    state = json.loads((folder / "state.json").read_text())
    (folder / "state.json").write_text(json.dumps({**state, "carry": [99] * 16}))
    longer = batched(tmp_path, "ppo.timesteps=2000")
    with pytest.raises(ValueError, match=r"state.json is damaged: 'carry'"):
        train_batched(longer, resume=True, progress=False, log=lambda _: None)
    (folder / "state.json").write_text('{"timesteps": "many"')
    with pytest.raises(ValueError, match="state.json is not valid JSON"):
        train_batched(longer, resume=True, progress=False, log=lambda _: None)
    (folder / "state.json").write_text(json.dumps({**state, "timesteps": -5}))
    with pytest.raises(ValueError, match="state.json is damaged: 'timesteps'"):
        train_batched(longer, resume=True, progress=False, log=lambda _: None)
    assert not list(folder.glob("*.partial"))  # state files are written whole, then renamed


def test_learning_curves_of_runs_by_steps_and_wall_time(tmp_path, capsys):
    from gostop.train.cli import main
    from gostop.train.curves import learning_curve, write_curves

    out = train_batched(batched(tmp_path), progress=False, log=lambda _: None)
    curve = learning_curve(out, "greedy")
    assert [p.steps for p in curve] == sorted(p.steps for p in curve) and len(curve) >= 2
    assert all(p.seconds is not None and p.seconds >= 0 and p.low <= p.chips <= p.high for p in curve)
    command = ["curve", str(out), str(out), "--against", "greedy", "--labels", "a,b", "--out", str(tmp_path / "c")]
    assert main(command) == 0
    rows = (tmp_path / "c" / "curve.csv").read_text().splitlines()
    assert rows[0] == "run,steps,seconds,chips,low,high,deals" and len(rows) == 1 + 2 * len(curve)
    assert (tmp_path / "c" / "curve.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="no evaluation against 'search'"):
        learning_curve(out, "search")
    with pytest.raises(ValueError, match="no eval.jsonl"):
        learning_curve(tmp_path, "greedy")
    with pytest.raises(ValueError, match="1 labels for 2 runs"):
        write_curves([out, out], "greedy", tmp_path / "d", ["a"])


def test_exploit_trains_a_best_response_for_its_time_and_measures_it(tmp_path, capsys):
    from gostop.train.cli import main

    small = ["ppo.envs=16", "ppo.batch_size=128", "ppo.net_arch=[32, 32]", "checkpoint_every=100000"]
    from gostop.train.exploit import exploit

    result = exploit("random", tmp_path / "e", hours=2 / 3600, deals=20, overrides=tuple(small), progress=True)
    assert result.agent == "random" and result.steps > 0 and result.seconds >= 2 and result.deals == 20
    bar = capsys.readouterr().err  # a run that ends by the clock counts its steps: no total, no ETA
    assert "batched ppo" in bar and "%" not in bar and str(10**15) not in bar
    low, high = result.chips_ci
    assert low <= result.chips <= high
    with pytest.raises(SystemExit):
        main(["exploit", "nobody", "--hours", "0.001", "--out", str(tmp_path / "x")])
    assert "unknown agent" in capsys.readouterr().err and not (tmp_path / "x" / "state.json").exists()
    with pytest.raises(SystemExit):
        main(["exploit", "greedy", "--hours", "0"])
    assert "hours" in capsys.readouterr().err
    assert (
        main(["exploit", "random", "--hours", "0.0003", "--deals", "10", "--quiet", "--out", str(tmp_path / "c")]) == 0
    )
    assert "best response to random (2 players, seed):" in capsys.readouterr().out
    assert json.loads((tmp_path / "c" / "exploit.json").read_text())["deals"] == 10
