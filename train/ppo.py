"""MaskablePPO league training on the batched vector env, with optional behaviour cloning.

A run (:func:`train`) lives in one folder (:mod:`gostop.train.run`):

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
(``[bc]``) or from a trained model (``ppo.init``), as :mod:`gostop.train.start` sets them;
``ppo.value_warmup`` holds the policy while the value network alone trains;
``ppo.critic = "oracle"`` gives the value network every hidden card
(:mod:`gostop.train.asymmetric`).

With ``ppo.timesteps = 0`` a run is behaviour cloning alone: demonstrations, cloning,
``model/``, one evaluation (``bc.json``, ``eval.jsonl``; no checkpoints: resumed before it
ends, it starts over with the demonstrations collected so far).

Opponents are drawn per hand and seat from the pool (:class:`gostop_env.vec_env.OpponentPool`);
snapshots of the learner join it every ``opponents.snapshot_every`` timesteps (sampling
their moves, seeded by the env). A resumed run continues from its latest checkpoint with
the env reseeded by the timesteps done: it is reproducible, but not bit-identical to an
uninterrupted run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from gostop.agents.learned import save_model
from gostop.agents.registry import make_agent
from gostop_env.files import write_json_atomic
from gostop_env.vec_env import GoStopVecEnv, OpponentPool

from .asymmetric import OracleCriticPolicy, is_actor_weight, playable_network
from .config import TrainConfig
from .run import (
    Log,
    check_trainer,
    league_snapshot,
    league_weights,
    model_meta,
    next_due,
    record_evaluation,
    run_lock,
    set_torch_threads,
    start_run,
)
from .start import start_weights


def train(config: TrainConfig, resume: bool = False, progress: bool = True, log: Log = print) -> Path:
    """Run (or resume) the training ``config`` describes; return the run folder. The folder
    is locked while the run uses it (a second run or resume on it is refused). The config
    names ``trainer = "sb3"``; :func:`gostop.train.launch.train` runs either trainer."""
    check_trainer(config, "sb3")
    set_torch_threads()
    out = Path(config.out)
    with run_lock(out):
        return _train(config, out, resume, progress, log)


def _train(config: TrainConfig, out: Path, resume: bool, progress: bool, log: Log) -> Path:
    from sb3_contrib import MaskablePPO

    state = start_run(config, out, resume)
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
    to ``model/`` and evaluated. Resumed before it ends, it collects the demonstrations it
    had not and clones; once ended, there is nothing to resume."""
    if resume and (out / "state.json").exists():
        raise ValueError(f"{out}: this run of behaviour cloning alone (ppo.timesteps = 0) has ended; nothing to resume")
    pool = _make_pool(config, {"snapshots": []})
    model = _new_model(config, _make_env(config, pool, seed=config.seed), out)
    start_weights(config, model.policy, out, progress, log)
    folder = save_model(playable_network(model.policy), out / "model", model_meta(config, 0))
    record_evaluation(folder, config, out, 0, log)
    write_json_atomic(out / "state.json", {"timesteps": 0, "checkpoint": None, "snapshots": []})
    return out


def _make_pool(config: TrainConfig, state: dict[str, Any]) -> OpponentPool:
    rules = config.rules
    pool = OpponentPool(
        [make_agent(name, rules) for name in config.opponents.pool], list(config.opponents.pool.values())
    )
    for folder in state["snapshots"]:
        pool.add(league_snapshot(folder, config))
    pool.set_weights(league_weights(config, len(state["snapshots"])))
    return pool


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
        self.due = {what: next_due(done, every) for what, every in self.every.items()}
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
                self.due[what] = next_due(now, self.every[what])

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
        self.pool.add(league_snapshot(folder, self.config))
        self.state["snapshots"].append(str(folder))
        self.pool.set_weights(league_weights(self.config, len(self.state["snapshots"])))

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
