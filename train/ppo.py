"""MaskablePPO league training on the batched vector env, with optional behaviour cloning.

A run (:func:`train`) lives in one folder:

- ``config.json``: the configuration it runs under; ``state.json``: timesteps done, the
  latest checkpoint and the snapshots in the league (what ``resume`` reads);
- ``checkpoints/ppo_<timesteps>.zip``: full MaskablePPO models (optimizer included);
- ``snapshots/<timesteps>/``: frozen learners added to the opponent pool (model folders);
- ``bc.json``: behaviour-cloning figures per epoch;
- ``eval.jsonl``: one line per evaluation and opponent (chips per hand with its 95%
  interval over duplicate deals, win rate, go rate, go success rate);
- ``tb/``: TensorBoard logs (SB3's training figures plus ``eval/*``);
- ``model/``: the final policy as a model folder, playable as ``model:<run>/model``.

Snapshots, evaluations and checkpoints are taken between updates (at the first rollout
boundary at or after each multiple of their period), so each holds the weights trained on
every timestep it is labelled with. PPO starts from random weights, from behaviour cloning
(``[bc]``) or from a trained model (``ppo.init``); ``ppo.value_warmup`` holds the policy
while the value network alone trains; ``ppo.critic = "oracle"`` gives the value network
every hidden card (:mod:`gostop.train.asymmetric`).

With ``ppo.timesteps = 0`` a run is behaviour cloning alone: demonstrations, cloning,
``model/``, one evaluation (``bc.json``, ``eval.jsonl``; no checkpoints, nothing to resume).

Opponents are drawn per hand and seat from the pool (:class:`gostop_env.vec_env.OpponentPool`);
snapshots of the learner join it every ``opponents.snapshot_every`` timesteps (sampling
their moves, seeded by the env). A resumed run continues from its latest checkpoint with
the env reseeded by the timesteps done: it is reproducible, but not bit-identical to an
uninterrupted run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from gostop.agents.learned import save_model
from gostop.agents.registry import load_model, make_agent
from gostop_env.files import folder_lock, read_json_object, writable_folder, write_json_atomic
from gostop_env.policy import Policy
from gostop_env.vec_env import GoStopVecEnv, OpponentPool

from .asymmetric import OracleCriticPolicy, is_actor_weight, playable_network
from .config import TrainConfig

if TYPE_CHECKING:
    from .bc import Demonstrations

Log = Callable[[str], None]


def train(config: TrainConfig, resume: bool = False, progress: bool = True, log: Log = print) -> Path:
    """Run (or resume) the training ``config`` describes; return the run folder. The folder
    is locked while the run uses it (a second run or resume on it is refused)."""
    set_torch_threads()
    out = Path(config.out)
    with run_lock(out):
        return _train(config, out, resume, progress, log)


THREADS_VARIABLE = "GOSTOP_TORCH_THREADS"


def set_torch_threads() -> int:
    """Give torch the threads ``$GOSTOP_TORCH_THREADS`` asks for (1 when unset: the small
    networks here train fastest on one) and return that number; ValueError, before any work,
    on anything but a whole number from 1."""
    import torch

    text = os.environ.get(THREADS_VARIABLE, "1")
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a whole number of threads, 1 or more; got {text!r}")
    torch.set_num_threads(threads)
    return threads


def _train(config: TrainConfig, out: Path, resume: bool, progress: bool, log: Log) -> Path:
    from sb3_contrib import MaskablePPO

    state = _start_run(config, out, resume)
    if config.ppo.timesteps == 0:
        return _clone_only(config, out, resume, progress, log)
    remaining = config.ppo.timesteps - state["timesteps"]
    if remaining <= 0:
        raise ValueError(f"{out} already has {state['timesteps']} timesteps; raise ppo.timesteps to train on")
    pool = _make_pool(config, state)
    env = _make_env(config, pool, seed=config.seed + state["timesteps"])
    if state["checkpoint"]:
        model = MaskablePPO.load(state["checkpoint"], env=env, device="cpu", tensorboard_log=str(out / "tb"))
        log(f"resumed {out} at {state['timesteps']} timesteps")
    else:
        model = _new_model(config, env, out)
        start_weights(config, model.policy, out, progress, log)
    callback = RunCallback(config, out, pool, state, progress, log)
    model.learn(remaining, callback=callback, reset_num_timesteps=not state["checkpoint"], tb_log_name="ppo")
    callback.finish(model)
    return out


def _clone_only(config: TrainConfig, out: Path, resume: bool, progress: bool, log: Log) -> Path:
    """A run of behaviour cloning alone (``ppo.timesteps = 0``): the network cloned, exported
    to ``model/`` and evaluated; nothing to resume."""
    if resume:
        raise ValueError(f"{out}: a run of behaviour cloning alone (ppo.timesteps = 0) has nothing to resume")
    pool = _make_pool(config, {"snapshots": []})
    model = _new_model(config, _make_env(config, pool, seed=config.seed), out)
    start_weights(config, model.policy, out, progress, log)
    folder = save_model(playable_network(model.policy), out / "model", model_meta(config, 0))
    record_evaluation(folder, config, out, 0, log)
    write_json_atomic(out / "state.json", {"timesteps": 0, "checkpoint": None, "snapshots": []})
    return out


def record_evaluation(folder: Path, config: TrainConfig, out: Path, now: int, log: Log, logger: Any = None) -> None:
    """Evaluate the model in ``folder``; log the figures (eval.jsonl, TensorBoard when given
    SB3's ``logger``, log lines)."""
    rows = evaluate(folder, config)
    with (out / "eval.jsonl").open("a") as f:
        for row in rows:
            f.write(json.dumps({"timesteps": now, **row}) + "\n")
            if logger is not None:
                for key in ("chips", "win_rate", "go_rate", "go_success"):
                    logger.record(f"eval/{row['against']}/{key}", row[key])
            low, high = row["chips_ci"]
            log(
                f"[{now} steps] against {row['against']}: {row['chips']:+.3f} chips/hand "
                f"(95% CI {low:+.3f} .. {high:+.3f}), win {row['win_rate']:.1%}, go {row['go_rate']:.1%}"
            )
    if logger is not None:
        logger.dump(now)


def _start_run(config: TrainConfig, out: Path, resume: bool) -> dict[str, Any]:
    saved = out / "state.json"
    if not resume:
        if saved.exists():
            raise ValueError(f"{out} already holds a run: resume it (--resume) or choose another out folder")
        writable_folder(out)
        write_json_atomic(out / "config.json", config.to_dict())
        return {"timesteps": 0, "checkpoint": None, "snapshots": []}
    if not saved.exists():
        raise ValueError(f"nothing to resume in {out} (no state.json)")
    before = read_json_object(out / "config.json", MAX_STATE_BYTES, "a training run's config")
    before = json.loads(json.dumps(TrainConfig.from_dict(before).to_dict()))  # keys added since: defaults
    now = json.loads(json.dumps(config.to_dict()))
    for side in (before, now):  # the engine and the length may change; the engines play alike
        side["ppo"].pop("timesteps"), side.pop("core")
    if before != now:
        raise ValueError(f"{out} was started with another configuration (only ppo.timesteps may change on resume)")
    return read_state(saved)


MAX_STATE_BYTES = 1 << 24  # config.json and state.json are small; a larger file is refused unread


def read_state(path: Path) -> dict[str, Any]:
    """A run's ``state.json``, checked: ValueError naming the file and the fault."""
    state = read_json_object(path, MAX_STATE_BYTES, "a training run's state")
    checks = {
        "timesteps": lambda v: type(v) is int and v >= 0,
        "checkpoint": lambda v: v is None or isinstance(v, str),
        "snapshots": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    }
    for key, valid in checks.items():
        if key not in state or not valid(state[key]):
            raise ValueError(f"{path} is damaged: {key!r} is {state.get(key)!r}; start the run again in a new folder")
    return state


def run_lock(out: Path) -> Any:
    """The lock a training run holds on its folder (a second run or resume on it is refused)."""
    writable_folder(out)
    return folder_lock(out, LOCK_FILE, "training run")


LOCK_FILE = "run.lock"


def _make_pool(config: TrainConfig, state: dict[str, Any]) -> OpponentPool:
    rules = config.rules
    pool = OpponentPool(
        [make_agent(name, rules) for name in config.opponents.pool], list(config.opponents.pool.values())
    )
    for folder in state["snapshots"]:
        pool.add(_snapshot(folder, config))
    pool.set_weights(_league_weights(config, len(state["snapshots"])))
    return pool


def _snapshot(folder: str | Path, config: TrainConfig) -> Policy:
    """A frozen learner as an opponent: it samples its moves (a more varied league)."""
    return load_model(str(folder), config.rules, deterministic=False)


def _league_weights(config: TrainConfig, snapshots: int) -> list[float]:
    """Sampling weights of the named agents, then of the snapshots: the latest
    ``max_snapshots`` at ``snapshot_weight``, older ones retired at 0 (they keep their place)."""
    live = min(snapshots, config.opponents.max_snapshots)
    return [*config.opponents.pool.values(), *[0.0] * (snapshots - live), *[config.opponents.snapshot_weight] * live]


def _make_env(config: TrainConfig, pool: OpponentPool, seed: int) -> GoStopVecEnv:
    go_stop = config.kind == "go_stop"
    return GoStopVecEnv(
        config.ppo.envs,
        config.players,
        config.preset,
        encoding=config.network_encoding,
        opponents=pool,
        reward_scale=config.ppo.reward_scale,
        seed=seed,
        reward=config.ppo.reward,
        backend=config.core.backend,
        learner_decides="go_stop" if go_stop else "all",
        learner_autoplay=make_agent(config.ppo.card_player, config.rules) if go_stop else None,
        match_hands=config.match.hands,
        match_bankroll=config.match.bankroll,
    )


def _new_model(config: TrainConfig, env: GoStopVecEnv, out: Path) -> Any:
    from sb3_contrib import MaskablePPO

    p = config.ppo
    return MaskablePPO(
        OracleCriticPolicy if p.critic == "oracle" else "MlpPolicy",
        env,
        learning_rate=p.learning_rate if p.lr_schedule == "constant" else lambda left: p.learning_rate * left,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        ent_coef=p.ent_coef,
        clip_range=p.clip_range,
        policy_kwargs={"net_arch": list(p.net_arch)},
        tensorboard_log=str(out / "tb"),
        seed=config.seed,
        device="cpu",
        verbose=0,
    )


def start_weights(config: TrainConfig, policy: Any, out: Path, progress: bool, log: Log) -> None:
    """A new run's first weights (of either trainer): ``ppo.init``'s, then behaviour cloning
    from them (or from fresh weights) where the config has a ``[bc]`` table."""
    if config.ppo.init is not None:
        start_from_model(policy, config.ppo.init, config)
        log(f"starting from model {config.ppo.init}")
    if config.bc is not None:
        _behaviour_cloning(config, policy, out, progress, log)


def _behaviour_cloning(config: TrainConfig, policy: Any, out: Path, progress: bool, log: Log) -> None:
    """Fit ``policy`` (the network, of either trainer) to ``bc.teacher``'s demonstrations
    (on the states ``bc.behaviour`` reaches, where given)."""
    from .bc import clone

    bc = config.bc
    demos = _demonstrations(config, progress, log)
    if config.kind == "go_stop":
        demos = demos.only(np.flatnonzero(demos.go_stop))
    states = "" if bc.behaviour is None else f" on the states of {bc.behaviour}"
    log(f"behaviour cloning on {len(demos)} decisions of {bc.teacher}{states} ({int(demos.go_stop.sum())} go/stop)")
    history = clone(
        policy,
        demos,
        bc.epochs,
        bc.batch_size,
        bc.learning_rate,
        config.seed,
        bc.go_stop_weight,
        bc.value_weight,
        config.ppo.reward_scale,
        temperature=bc.temperature,
    )
    for epoch in history:
        log("  " + ", ".join(f"{k} {v:.4g}" for k, v in epoch.items()))
    (out / "bc.json").write_text(json.dumps({"decisions": len(demos), "epochs": history}, indent=2) + "\n")


def _demonstrations(config: TrainConfig, progress: bool, log: Log) -> Demonstrations:
    """The ``[bc]`` table's demonstrations: in this process, or in ``bc.parts`` processes."""
    from tqdm import tqdm

    from .bc import collect, collect_in_parts

    bc = config.bc
    assert bc is not None  # called for runs with a [bc] table
    rules, encoding, backend = config.rules, config.network_encoding, config.core.backend
    if bc.parts > 1:
        log(f"demonstrations of {bc.teacher}: {bc.hands} hands in {bc.parts} parts, in parallel processes")
        return collect_in_parts(
            bc.teacher, rules, bc.hands, config.seed, bc.parts, encoding, backend, behaviour=bc.behaviour, log=log
        )
    behaviour = None if bc.behaviour is None else make_agent(bc.behaviour, rules)
    bar = (lambda chunks: tqdm(chunks, desc=f"demonstrations ({bc.teacher})", unit="batch")) if progress else None
    teacher = make_agent(bc.teacher, rules)
    return collect(teacher, rules, bc.hands, config.seed, encoding, progress=bar, backend=backend, behaviour=behaviour)


def start_from_model(policy: Any, name: str, config: TrainConfig) -> None:
    """Copy the weights of model ``name`` into the new ``policy``: all of them, or with the
    oracle critic the policy's alone (the saved critic read the player's view). The model
    may have been trained under other rules for as many players (checked with the config:
    ``TrainConfig._check_init``): its weights are only where training starts."""
    from gostop.agents.learned import load_network, resolve_name

    saved = load_network(resolve_name(name, config.rules))[0].network.state_dict()
    state = policy.state_dict()
    for key in state:
        if is_actor_weight(key) or config.ppo.critic == "own":
            state[key] = saved[key].clone()
    policy.load_state_dict(state, strict=True)


def model_meta(config: TrainConfig, timesteps: int) -> dict[str, Any]:
    """What a model folder of this run records about itself."""
    meta = {
        "encoding": config.encoding,
        "players": config.players,
        "preset": config.preset,
        "decides": "go_stop" if config.kind == "go_stop" else "all",
        "trained": {"timesteps": timesteps, "config": config.to_dict()},
    }
    if config.kind == "go_stop":
        meta["card_player"] = config.ppo.card_player
    return meta


def evaluate(folder: str | Path, config: TrainConfig, deals: int | None = None) -> list[dict[str, Any]]:
    """The model in ``folder`` over duplicate deals: in 2-player games against each of
    ``config.eval.against`` in turn; in 3-player games against all of them together."""
    from gostop.agents.metrics import agent_figures
    from gostop.agents.tournament import TournamentConfig, run_tournament

    fields = [(o,) for o in config.eval.against] if config.players == 2 else [tuple(config.eval.against)]
    rows = []
    for field in fields:
        agents = (f"model:{folder}", *field)
        tournament = TournamentConfig(
            agents,
            config.players,
            config.preset,
            deals or config.eval.deals,
            seed=config.seed + 1_000_003,
            backend=config.core.backend,
        )
        figures = {f.agent: f for f in agent_figures(run_tournament(tournament))}[agents[0]]
        rows.append(
            {
                "against": " + ".join(field),
                "deals": tournament.deals,
                "chips": figures.chips,
                "chips_ci": list(figures.chips_ci),
                "win_rate": figures.win_rate,
                "go_rate": figures.go_rate,
                "go_success": figures.go_success,
            }
        )
    return rows


class RunCallback(BaseCallback):
    """Snapshots into the league, evaluations, checkpoints and a progress bar, by timesteps."""

    def __init__(
        self, config: TrainConfig, out: Path, pool: OpponentPool, state: dict[str, Any], progress: bool, log: Log
    ):
        super().__init__()
        self.config, self.out, self.pool, self.state, self.log = config, out, pool, state, log
        done = state["timesteps"]
        self.every = {
            "snapshot": config.opponents.snapshot_every,
            "eval": config.eval.every,
            "checkpoint": config.checkpoint_every,
        }
        self.due = {what: _next(done, every) for what, every in self.every.items()}
        self.bar, self.last_eval = None, None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=config.ppo.timesteps, initial=done, desc="ppo", unit="step", mininterval=1.0)

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)
        return True

    def _on_rollout_start(self) -> None:
        """Snapshots, evaluations and checkpoints that are due, taken between updates (here,
        after the update on the last rollout), so each one holds the weights trained on
        every timestep it is labelled with."""
        now = self.num_timesteps
        for what, action in (("snapshot", self._snapshot), ("eval", self._evaluate), ("checkpoint", self._checkpoint)):
            if self.due[what] is not None and now >= self.due[what]:
                action(self.model, now)
                self.due[what] = _next(now, self.every[what])

    def _on_rollout_end(self) -> None:
        """Hold the policy during the value warm-up: the updates after the rollouts that end
        within the first ``ppo.value_warmup`` timesteps train the value network alone."""
        hold = self.num_timesteps <= self.config.ppo.value_warmup
        for key, parameter in self.model.policy.named_parameters():
            if is_actor_weight(key):
                parameter.requires_grad_(not hold)

    def _snapshot(self, model: Any, now: int) -> None:
        folder = save_model(
            playable_network(model.policy), self.out / "snapshots" / f"{now:09d}", model_meta(self.config, now)
        )
        self.pool.add(_snapshot(folder, self.config))
        self.state["snapshots"].append(str(folder))
        self.pool.set_weights(_league_weights(self.config, len(self.state["snapshots"])))

    def _evaluate(self, model: Any, now: int) -> None:
        folder = save_model(playable_network(model.policy), self.out / "latest", model_meta(self.config, now))
        self._record_evaluation(folder, now)

    def _record_evaluation(self, folder: Path, now: int) -> None:
        record_evaluation(folder, self.config, self.out, now, self.log, self.logger)
        self.last_eval = now

    def _checkpoint(self, model: Any, now: int) -> None:
        path = self.out / "checkpoints" / f"ppo_{now:09d}.zip"
        path.parent.mkdir(exist_ok=True)
        model.save(str(path))
        self.state.update(timesteps=now, checkpoint=str(path))
        write_json_atomic(self.out / "state.json", self.state)

    def finish(self, model: Any) -> None:
        """Checkpoint, export ``model/`` and evaluate it (unless the last evaluation was now)."""
        now = self.num_timesteps
        if self.state["timesteps"] != now:
            self._checkpoint(model, now)
        folder = save_model(playable_network(model.policy), self.out / "model", model_meta(self.config, now))
        if self.bar is not None:
            self.bar.close()
        if self.last_eval != now:
            self._record_evaluation(folder, now)


def _next(done: int, every: int) -> int | None:
    """The first multiple of ``every`` after ``done`` (None when ``every`` is 0)."""
    return (done // every + 1) * every if every > 0 else None
