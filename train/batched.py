"""The batched trainer (``trainer = "batched"``): masked PPO written out in torch over
thousands of hands of the compiled core at once.

One iteration is a *round* (:mod:`gostop.train.rollout`): ``ppo.envs`` hands dealt together
and played to their end, one network forward per step for every seat the learner holds
(its own seat, and with ``opponents.self_play`` the seats it plays against itself), the
league's agents deciding for theirs in one call each. The round's decisions then train the
network for ``ppo.epochs`` passes of minibatches of ``ppo.batch_size``: the clipped policy
loss, the value loss and an entropy bonus, with advantages by GAE (``ppo.gae_lambda``,
discount 1) over each complete hand. Nothing else sits between the game and the network: no
vector-env layer, no per-step Python per game, which is what makes it several times faster
than MaskablePPO on the same network (``benchmarks/train_throughput.py``).

The run folder is :mod:`gostop.train.run`'s (``config.json``, ``state.json``,
``snapshots/``, ``eval.jsonl``, ``tb/``, ``model/``), with checkpoints as
``checkpoints/batched_<steps>.safetensors`` (weights and optimizer moments; no pickle) and
the generator's state and the nagari carries in ``state.json``. Checkpoints fall between
rounds, where no hand is in flight, so a resumed run continues exactly as an unbroken one
would: the same weights, evaluations and model.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from gostop.agents.learned import save_model
from gostop.agents.registry import make_agent
from gostop_env.core import NUM_ACTIONS
from gostop_env.core.rules import MAX_CARRY
from gostop_env.encodings import OBSERVATION_HIGH, encoding_shape
from gostop_env.files import write_json_atomic

from .config import PPOConfig, TrainConfig
from .rollout import League, RoundFigures, Samples, SeatedGames, advantages
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

VALUE_WEIGHT = 0.5  # weight of the value loss (SB3's default vf_coef, so the two trainers compare)
MAX_GRAD_NORM = 0.5  # gradients are clipped to this norm (SB3's default)
MASKED_LOGIT = -1e9  # the logit of an illegal action: never sampled, no NaN in the entropy


def new_network(config: TrainConfig) -> Any:
    """An untrained ``MaskableActorCriticPolicy`` of the config's architecture (tanh), the
    network a model folder stores."""
    import gymnasium
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    torch.manual_seed(config.seed)
    space = gymnasium.spaces.Box(0.0, OBSERVATION_HIGH, encoding_shape(config.encoding), np.float32)
    arch = list(config.ppo.net_arch)
    return MaskableActorCriticPolicy(
        space, gymnasium.spaces.Discrete(NUM_ACTIONS), lambda _: 0.0, net_arch={"pi": arch, "vf": arch}
    )


def forward(network: Any, observations: Any, precision: str = "float32") -> tuple[Any, Any]:
    """(logits, values) of a batch of observations (torch tensors), as float32. With
    ``precision="bfloat16"`` the layers multiply in bfloat16 (torch's CPU autocast; the
    weights, losses and optimizer stay float32): about twice as fast where the CPU has
    bfloat16 instructions (AVX512-BF16, AMX), slower where it has none."""
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
        features = network.extract_features(observations, network.pi_features_extractor)
        latent_pi, latent_vf = network.mlp_extractor(features)
        logits, values = network.action_net(latent_pi), network.value_net(latent_vf).squeeze(-1)
    return logits.float(), values.float()


class NetworkLearner:
    """The learner's seats in a round: one forward pass, actions sampled with the round's generator."""

    def __init__(self, network: Any, precision: str = "float32"):
        self.network, self.precision = network, precision

    def __call__(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import torch

        if len(masks) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, np.float32)
        with torch.no_grad():
            logits, values = forward(self.network, torch.from_numpy(observations), self.precision)
        logits = np.where(masks, logits.numpy(), -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        cumulative = np.cumsum(weights, axis=1)
        total = cumulative[:, -1]
        actions = (cumulative <= (rng.random(len(masks)) * total)[:, None]).sum(axis=1)
        log_probs = logits[np.arange(len(masks)), actions] - np.log(total)
        return actions.astype(np.int64), log_probs.astype(np.float32), values.numpy()


def update(
    network: Any, optimizer: Any, samples: Samples, config: TrainConfig, rng: np.random.Generator
) -> dict[str, float]:
    """PPO's passes over one round's samples; the mean losses, entropy and clipped fraction."""
    import torch

    p = config.ppo
    advantage, returns = advantages(samples, p.gae_lambda)
    data = [
        torch.from_numpy(a)
        for a in (samples.observations, samples.masks, samples.actions, samples.log_probs, advantage, returns)
    ]
    totals: dict[str, float] = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "clip_fraction": 0.0}
    batches = 0
    for _ in range(p.epochs):
        order = rng.permutation(len(samples))
        for start in range(0, len(order), p.batch_size):
            rows = torch.from_numpy(order[start : start + p.batch_size])
            figures = _minibatch_step(network, optimizer, [d.index_select(0, rows) for d in data], p)
            for key, value in figures.items():
                totals[key] += value
            batches += 1
    return {key: value / max(batches, 1) for key, value in totals.items()}


def _minibatch_step(network: Any, optimizer: Any, batch: list[Any], p: PPOConfig) -> dict[str, float]:
    import torch

    clip, ent_coef = p.clip_range, p.ent_coef
    observations, masks, actions, old_log_probs, advantage, returns = batch
    logits, values = forward(network, observations, p.precision)
    log_probs_all = torch.log_softmax(logits.masked_fill(~masks, MASKED_LOGIT), dim=1)
    log_probs = log_probs_all.gather(1, actions[:, None]).squeeze(1)
    if len(advantage) > 1:
        advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
    ratio = torch.exp(log_probs - old_log_probs)
    policy_loss = -torch.min(ratio * advantage, ratio.clamp(1 - clip, 1 + clip) * advantage).mean()
    value_loss = ((values - returns) ** 2).mean()
    legal = log_probs_all.masked_fill(~masks, 0.0)  # 0 where masked: exp of an underflowing logit is slow on CPU
    entropy = -(legal.exp() * legal).sum(1).mean()
    loss = policy_loss + VALUE_WEIGHT * value_loss - ent_coef * entropy
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(network.parameters(), MAX_GRAD_NORM)
    optimizer.step()
    return {
        "policy_loss": float(policy_loss.detach()),
        "value_loss": float(value_loss.detach()),
        "entropy": float(entropy.detach()),
        "clip_fraction": float(((ratio - 1).abs() > clip).float().mean()),
    }


def train_batched(
    config: TrainConfig,
    resume: bool = False,
    progress: bool = True,
    log: Log = print,
    max_seconds: float | None = None,
) -> Path:
    """Run (or resume) a ``trainer = "batched"`` run; return the run folder. With
    ``max_seconds`` the run also ends at the first round boundary after that much wall time
    (then checkpointed, exported and evaluated as at ``ppo.timesteps``)."""
    check_trainer(config, "batched")
    set_torch_threads()
    out = Path(config.out)
    with run_lock(out):
        run = BatchedRun(config, out, resume, log)
        if run.done >= config.ppo.timesteps:
            raise ValueError(f"{out} already has {run.done} timesteps; raise ppo.timesteps to train on")
        run.train(progress, max_seconds)
    return out


class BatchedRun:
    """One run folder of the batched trainer: the network, its optimizer, the league, the
    games and the schedule of snapshots, evaluations and checkpoints."""

    def __init__(self, config: TrainConfig, out: Path, resume: bool, log: Log):
        import torch

        self.config, self.out, self.log = config, out, log
        self.state = start_run(config, out, resume)
        self.network = new_network(config)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        self.rng = np.random.default_rng(config.seed)
        rules = config.rules
        names = list(config.opponents.pool)
        self.league = League(
            [make_agent(n, rules) for n in names], list(config.opponents.pool.values()), config.opponents.self_play
        )
        for folder in self.state["snapshots"]:
            self.league.add(league_snapshot(folder, config), 0.0)
        self.league.set_weights(league_weights(config, len(self.state["snapshots"])))
        p = config.ppo
        self.games = SeatedGames(
            rules, p.envs, self.league, config.encoding, p.reward, p.reward_scale, backend=config.core.backend
        )
        self.writer: Any = None
        if self.state["checkpoint"]:
            self._load_checkpoint(self.state["checkpoint"])
            log(f"resumed {out} at {self.done} timesteps")
        else:
            self._start_weights()
        self.due = {what: next_due(self.done, every) for what, every in self._periods().items()}
        self.last_eval: int | None = None

    @property
    def done(self) -> int:
        return int(self.state["timesteps"])

    def _periods(self) -> dict[str, int]:
        c = self.config
        return {"snapshot": c.opponents.snapshot_every, "eval": c.eval.every, "checkpoint": c.checkpoint_every}

    def _start_weights(self) -> None:
        start_weights(self.config, self.network, self.out, False, self.log)

    def train(self, progress: bool, max_seconds: float | None = None) -> None:
        """Rounds until ``ppo.timesteps`` (or ``max_seconds``), then the final checkpoint,
        model and evaluation."""
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        deadline = time.monotonic() + (max_seconds if max_seconds is not None else float("inf"))
        self.writer = SummaryWriter(str(self.out / "tb" / "batched"), purge_step=self.done)
        total = self.config.ppo.timesteps
        shown = None if max_seconds is not None else total  # a run that ends by the clock: a count, no ETA
        bar = tqdm(total=shown, initial=self.done, desc="batched ppo", unit="step", disable=not progress)
        while self.done < total:
            self._due_tasks()
            start = time.perf_counter()
            samples, figures = self.play_round()
            losses = self.learn(samples)
            self.state["timesteps"] = self.done + len(samples)
            self._record_round(losses, figures.chips_vs_league, len(samples) / (time.perf_counter() - start))
            bar.update(len(samples))
            if time.monotonic() >= deadline:
                break
        bar.close()
        self._due_tasks()  # as an unbroken run would at this boundary, so a resume continues alike
        self._finish()

    def play_round(self) -> tuple[Samples, RoundFigures]:
        """One round of hands played by the network as it stands (sampling its moves)."""
        self.network.set_training_mode(False)
        samples, figures = self.games.play_round(NetworkLearner(self.network, self.config.ppo.precision), self.rng)
        self.network.set_training_mode(True)
        return samples, figures

    def learn(self, samples: Samples) -> dict[str, float]:
        """PPO's update on one round's ``samples``, at the learning rate of the steps done."""
        for group in self.optimizer.param_groups:  # by the steps done: a resume sets it alike
            group["lr"] = self.config.learning_rate_at(self.done)
        return update(self.network, self.optimizer, samples, self.config, self.rng)

    def _record_round(self, losses: dict[str, float], chips: float | None, rate: float) -> None:
        for key, value in losses.items():
            self.writer.add_scalar(f"train/{key}", value, self.done)
        if chips is not None:
            self.writer.add_scalar("train/chips_vs_league", chips, self.done)
        self.writer.add_scalar("time/steps_per_second", rate, self.done)
        self.writer.add_scalar("train/learning_rate", self.optimizer.param_groups[0]["lr"], self.done)

    def _due_tasks(self) -> None:
        """Snapshots, evaluations and checkpoints due at this round boundary."""
        tasks = (("snapshot", self._take_snapshot), ("eval", self._evaluate), ("checkpoint", self._checkpoint))
        for what, action in tasks:
            due = self.due[what]
            if due is not None and self.done >= due:
                action()
                self.due[what] = next_due(self.done, self._periods()[what])

    def _save(self, folder: Path) -> Path:
        self.network.set_training_mode(False)
        return save_model(self.network, folder, model_meta(self.config, self.done))

    def _take_snapshot(self) -> None:
        folder = self._save(self.out / "snapshots" / f"{self.done:09d}")
        self.league.add(league_snapshot(folder, self.config), 0.0)
        self.state["snapshots"].append(str(folder))
        self.league.set_weights(league_weights(self.config, len(self.state["snapshots"])))

    def _evaluate(self) -> None:
        folder = self._save(self.out / "latest")
        record_evaluation(folder, self.config, self.out, self.done, self.log, _Scalars(self.writer))
        self.last_eval = self.done

    def _checkpoint(self) -> None:
        from safetensors.torch import save_file

        path = self.out / "checkpoints" / f"batched_{self.done:09d}.safetensors"
        path.parent.mkdir(exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        save_file(_training_tensors(self.network, self.optimizer), str(partial))
        os.replace(partial, path)
        self.state.update(
            checkpoint=str(path),
            rng=self.rng.bit_generator.state,
            carry=self.games.carry.tolist(),
            checkpointed=self.done,
        )
        write_json_atomic(self.out / "state.json", self.state)

    def _load_checkpoint(self, path: str) -> None:
        from safetensors.torch import load_file

        where = self.out / "state.json"
        try:
            tensors = load_file(path)
            self.network.load_state_dict({k[len("net.") :]: v for k, v in tensors.items() if k.startswith("net.")})
            _load_optimizer(self.optimizer, self.network, tensors)
            self.rng.bit_generator.state = self.state["rng"]
        except (OSError, KeyError, TypeError, ValueError, RuntimeError) as error:
            raise ValueError(f"{where}: its checkpoint or generator state does not load: {error}") from None
        carry = self.state.get("carry")
        if not (
            isinstance(carry, list)
            and len(carry) == self.config.ppo.envs
            and all(type(c) is int and 0 <= c <= MAX_CARRY for c in carry)
        ):
            raise ValueError(f"{where} is damaged: 'carry' must be {self.config.ppo.envs} carries 0..{MAX_CARRY}")
        self.games.carry = np.asarray(carry, np.int64)

    def _finish(self) -> None:
        if self.state.get("checkpointed") != self.done:
            self._checkpoint()
        folder = self._save(self.out / "model")
        if self.last_eval != self.done:
            record_evaluation(folder, self.config, self.out, self.done, self.log, _Scalars(self.writer))
        self.writer.close()


class _Scalars:
    """The two calls :func:`gostop.train.run.record_evaluation` makes of SB3's logger, on a
    TensorBoard writer."""

    def __init__(self, writer: Any):
        self.writer, self.rows = writer, {}

    def record(self, key: str, value: float) -> None:
        self.rows[key] = value

    def dump(self, step: int) -> None:
        for key, value in self.rows.items():
            self.writer.add_scalar(key, value, step)
        self.rows.clear()


def _training_tensors(network: Any, optimizer: Any) -> dict[str, Any]:
    """The weights (``net.*``) and Adam's moments and step counts (``adam.<i>.*``), as plain tensors."""
    tensors = {f"net.{k}": v.detach().contiguous() for k, v in network.state_dict().items()}
    for i, parameter in enumerate(network.parameters()):
        for key, value in optimizer.state.get(parameter, {}).items():
            tensors[f"adam.{i}.{key}"] = value.detach().reshape(value.shape).contiguous()
    return tensors


def _load_optimizer(optimizer: Any, network: Any, tensors: dict[str, Any]) -> None:
    for i, parameter in enumerate(network.parameters()):
        found = {k.rsplit(".", 1)[1]: v for k, v in tensors.items() if k.startswith(f"adam.{i}.")}
        if found:
            optimizer.state[parameter] = found
