"""A new run's first weights, for either trainer: a trained model's (``ppo.init``), then
behaviour cloning of a teacher's demonstrations (``[bc]``), or fresh ones."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gostop.agents.registry import make_agent

from .asymmetric import is_actor_weight
from .config import TrainConfig
from .demo_files import demonstrations_folder, kept_batches
from .run import Log

if TYPE_CHECKING:
    from .bc import Demonstrations


def start_weights(config: TrainConfig, policy: Any, out: Path, progress: bool, log: Log) -> None:
    """A new run's first weights (of either trainer): ``ppo.init``'s, then behaviour cloning
    from them (or from fresh weights) where the config has a ``[bc]`` table."""
    if config.ppo.init is not None:
        start_from_model(policy, config.ppo.init, config)
        log(f"starting from model {config.ppo.init}")
    if config.bc is not None:
        _behaviour_cloning(config, policy, out, progress, log)


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


def _behaviour_cloning(config: TrainConfig, policy: Any, out: Path, progress: bool, log: Log) -> None:
    """Fit ``policy`` (the network, of either trainer) to ``bc.teacher``'s demonstrations
    (on the states ``bc.behaviour`` reaches, where given)."""
    from .bc import clone

    bc = config.bc
    demos = _demonstrations(config, out, progress, log)
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


def _demonstrations(config: TrainConfig, out: Path, progress: bool, log: Log) -> Demonstrations:
    """The ``[bc]`` table's demonstrations: in this process, or in ``bc.parts`` processes;
    each batch kept in the run folder as it ends, so a killed run, run again, plays only
    the batches it had not finished (:mod:`gostop.train.demo_files`)."""
    from tqdm import tqdm

    from .bc import BATCH_HANDS, collect, collect_in_parts

    bc = config.bc
    assert bc is not None  # called for runs with a [bc] table
    rules, encoding, backend = config.rules, config.network_encoding, config.core.backend
    key = {"teacher": bc.teacher, "behaviour": bc.behaviour, "rules": rules.to_dict(), "encoding": encoding}
    counts = {"seed": config.seed, "hands": bc.hands, "parts": bc.parts, "batch_hands": BATCH_HANDS}
    cache = demonstrations_folder(out, {**key, **counts})
    kept = kept_batches(cache)
    if kept:
        log(f"demonstrations: {kept} batches already collected in {cache}, read back instead of played")

    name = bc.teacher

    def log_batches(done: int, total: int) -> None:
        log(f"demonstrations: {done} of {total} batches of {name} kept")

    def logged(chunks: Iterable[int]) -> Iterator[int]:  # a line as each batch ends: runs without bars
        listed = list(chunks)
        for done, chunk in enumerate(listed, 1):
            yield chunk
            log_batches(done, len(listed))

    if bc.parts > 1:
        log(f"demonstrations of {name}: {bc.hands} hands in {bc.parts} parts, in parallel processes")
        return collect_in_parts(
            name, rules, bc.hands, config.seed, bc.parts, encoding, backend, bc.behaviour, log, cache, log_batches
        )
    behaviour = None if bc.behaviour is None else make_agent(bc.behaviour, rules)
    bar = (lambda chunks: tqdm(chunks, desc=f"demonstrations ({name})", unit="batch")) if progress else logged
    teacher = make_agent(name, rules)
    return collect(
        teacher, rules, bc.hands, config.seed, encoding, progress=bar, backend=backend, behaviour=behaviour, cache=cache
    )
