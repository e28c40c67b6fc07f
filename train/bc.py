"""Behaviour cloning: record a teacher's decisions in batch, then fit a policy network to them.

:func:`collect` plays hands with the teacher in every seat on the batched core and keeps,
for every decision, the mover's observation, legal mask, chosen action and the chips that
seat finally won; given a ``behaviour`` agent, that agent plays the hands and the teacher
only labels the states it reaches (DAgger: the student's own states, the teacher's moves).
:func:`collect_in_parts` does the same in independent parts, each in its own process. Given a
``cache`` folder, each batch of hands is saved there as it ends and a later collection reads it
back instead of playing it again (:mod:`gostop.train.demo_files`).
:func:`clone` trains a masked actor-critic network (the policy of a MaskablePPO model) on
them: cross-entropy on the teacher's actions (go/stop decisions weighted up) plus a value
loss on the final chips, so PPO fine-tuning starts from both.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gostop.agents.match import play_out
from gostop_env.core import GameBatch, Phase, Rules, batch_class
from gostop_env.core.deck import shuffled_decks
from gostop_env.encodings import encode, encoding_shape
from gostop_env.policy import GameView, Policy, check_actions
from gostop_env.seats import policy_actions

from .demo_files import batch_path, kept_batches, load_batch, part_folder, save_batch

BATCH_HANDS = 1024  # hands :func:`collect` deals and plays at once (and keeps per file, given a cache)
POLL_SECONDS = 5.0  # how often :func:`collect_in_parts` counts its parts' kept batches


@dataclass
class Demonstrations:
    """Decisions of a teacher: one row per decision."""

    observations: np.ndarray  # (n, obs) float32, in the learner's encoding
    masks: np.ndarray  # (n, 125) bool
    actions: np.ndarray  # (n,) int64
    go_stop: np.ndarray  # (n,) bool: a go/stop decision
    returns: np.ndarray  # (n,) chips the deciding seat won in the end
    values: np.ndarray | None = None  # (n, 125) float16: the teacher's mean chips per action tried, NaN elsewhere

    def __len__(self) -> int:
        return len(self.actions)

    def only(self, rows: np.ndarray) -> Demonstrations:
        return Demonstrations(*(_rows(getattr(self, f), rows) for f in self.__dataclass_fields__))

    @staticmethod
    def concatenate(parts: list[Demonstrations]) -> Demonstrations:
        fields = Demonstrations.__dataclass_fields__
        return Demonstrations(*(_joined([getattr(p, f) for p in parts]) for f in fields))

    def columns(self) -> dict[str, np.ndarray]:
        """The columns by name (``values`` only where there are any), as a batch file holds them."""
        named = {f: getattr(self, f) for f in self.__dataclass_fields__}
        return {name: column for name, column in named.items() if column is not None}


def _rows(column: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if column is None else column[rows]


def _joined(columns: list[np.ndarray | None]) -> np.ndarray | None:
    """The columns end to end; None unless every part has the column."""
    return None if any(c is None for c in columns) else np.concatenate(columns)  # type: ignore[arg-type]


def collect(
    teacher: Policy,
    rules: Rules,
    hands: int,
    seed: int,
    encoding: str = "vector",
    batch_size: int = BATCH_HANDS,
    progress: Callable[[Iterable], Iterable] | None = None,
    backend: str | None = None,
    behaviour: Policy | None = None,
    cache: Path | None = None,
) -> Demonstrations:
    """Play ``hands`` hands with ``teacher`` (or ``behaviour``, whose states the teacher then
    labels) in every seat, on the core's ``backend``; record every decision with the
    teacher's action. With a ``cache`` folder each batch of ``batch_size`` hands is saved there
    as it ends, and a batch found there is read instead of played: the same demonstrations
    as a collection that was never stopped (the folder must hold this collection's batches
    alone: :func:`gostop.train.demo_files.demonstrations_folder`)."""
    rng = np.random.default_rng([seed, 1])
    parts = []
    starts = range(0, hands, batch_size)
    for index, start in enumerate(progress(starts) if progress else starts):
        saved = None if cache is None else batch_path(cache, index)
        if saved is not None and saved.exists():
            columns, state = load_batch(saved, encoding_shape(encoding))
            rng.bit_generator.state = state  # where the unbroken collection's generator stood
            parts.append(Demonstrations(**columns))
            continue
        decks = shuffled_decks(rules, np.random.default_rng([seed, 0, start]), min(batch_size, hands - start))
        batch = batch_class(backend)(rules, decks)
        demos = _record_hands(teacher, behaviour, batch, encoding, rng)
        if saved is not None:
            save_batch(saved, demos.columns(), rng.bit_generator.state)
        parts.append(demos)
    return Demonstrations.concatenate(parts)


def collect_in_parts(
    teacher: str,
    rules: Rules,
    hands: int,
    seed: int,
    parts: int,
    encoding: str = "vector",
    backend: str | None = None,
    behaviour: str | None = None,
    log: Callable[[str], None] | None = None,
    cache: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Demonstrations:
    """:func:`collect` of the agents named ``teacher`` (and ``behaviour``) over ``hands`` split
    into ``parts`` near-equal parts, part i from ``seed + i``, in up to ``parts`` processes (no
    more than the machine's cores); joined in part order, so the result depends on ``parts``
    alone. ``log`` hears of each part as it ends. With a ``cache`` folder part i keeps its
    batches in their own folder under ``cache`` (see :func:`collect`), and ``progress(done, total)`` hears
    how many of all the parts' batches are kept whenever that grows. The workers are
    spawned, so a script that calls this guards its top level with
    ``if __name__ == "__main__":``."""
    if not 1 <= parts <= hands:
        raise ValueError(f"need 1 <= parts <= hands, got {parts} parts of {hands} hands")
    sizes = [len(chunk) for chunk in np.array_split(np.arange(hands), parts)]
    jobs = [
        (teacher, behaviour, rules, size, seed + i, encoding, backend, None if cache is None else part_folder(cache, i))
        for i, size in enumerate(sizes)
    ]
    workers = min(parts, multiprocessing.cpu_count())
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_collect_part, job) for job in jobs]
        if cache is not None and progress is not None:
            _report_batches(futures, cache, sum(-(-size // BATCH_HANDS) for size in sizes), progress)
        results = []
        for i, demos in enumerate(future.result() for future in futures):
            if log is not None:
                log(f"demonstrations: part {i + 1} of {parts} ({sizes[i]} hands, {len(demos)} decisions)")
            results.append(demos)
    return Demonstrations.concatenate(results)


def _report_batches(futures: list[Future], cache: Path, total: int, progress: Callable[[int, int], None]) -> None:
    """``progress(done, total)`` each time more batch files are in ``cache``'s parts, until
    every part has ended or one has failed."""
    reported = -1
    while True:
        ended, running = wait(futures, timeout=POLL_SECONDS, return_when=FIRST_EXCEPTION)
        done = kept_batches(cache)
        if done != reported:
            progress(done, total)
            reported = done
        if not running or any(future.exception() is not None for future in ended):
            return


def _collect_part(job: tuple[str, str | None, Rules, int, int, str, str | None, Path | None]) -> Demonstrations:
    """One part of :func:`collect_in_parts`, in a worker process: its agents made there by name."""
    from gostop.agents.registry import make_agent

    teacher, behaviour, rules, hands, seed, encoding, backend, cache = job
    actor = None if behaviour is None else make_agent(behaviour, rules)
    return collect(
        make_agent(teacher, rules), rules, hands, seed, encoding, backend=backend, behaviour=actor, cache=cache
    )


def _record_hands(
    teacher: Policy, behaviour: Policy | None, batch: GameBatch, encoding: str, rng: np.random.Generator
) -> Demonstrations:
    recorder = _Recorder(encoding, None if behaviour is None else teacher, rng)
    play_out(batch, [behaviour or teacher] * batch.rules.players, rng, before_step=recorder)
    return recorder.demonstrations(batch)


class _Recorder:
    """A ``play_out`` hook keeping every decision: the mover's observation in ``encoding``,
    its mask, the action (or, given a ``labeller``, that policy's action in the same state),
    whether it is a go/stop decision, and the game and seat."""

    def __init__(self, encoding: str, labeller: Policy | None = None, rng: np.random.Generator | None = None):
        self.encoding, self.labeller, self.rng = encoding, labeller, rng
        self.values = hasattr(labeller, "decide_and_value")  # a search: keep its action values too
        keys = ("obs", "masks", "actions", "go_stop", "game", "seat") + (("values",) if self.values else ())
        self.rows: dict[str, list[np.ndarray]] = {k: [] for k in keys}

    def __call__(self, batch: GameBatch, actions: np.ndarray) -> None:
        games = np.flatnonzero(actions >= 0)
        seats = batch.seat[games].astype(np.int64)
        masks = batch.legal_action_mask()
        labels = actions[games]
        if self.labeller is not None and games.size:
            assert self.rng is not None  # given with the labeller
            if self.values:
                view = GameView(batch.select(games), seats)
                labels, values = self.labeller.decide_and_value(view, masks[games], self.rng)  # type: ignore[union-attr]
                labels = check_actions(labels, masks[games], "the teacher")
                self.rows["values"].append(values.astype(np.float16))
            else:
                labels = policy_actions(self.labeller, batch, games, masks, self.rng, "the teacher")
        for key, value in (
            ("obs", encode(batch.select(games), seats, self.encoding)),
            ("masks", masks[games]),
            ("actions", labels),
            ("go_stop", batch.phase[games] == Phase.GO_STOP),
            ("game", games),
            ("seat", seats),
        ):
            self.rows[key].append(value)

    def demonstrations(self, batch: GameBatch) -> Demonstrations:
        """What was kept, with the chips each decision's seat won in the (finished) ``batch``."""
        rows = {key: np.concatenate(parts) for key, parts in self.rows.items()}
        return Demonstrations(
            rows["obs"].astype(np.float32),
            rows["masks"],
            rows["actions"].astype(np.int64),
            rows["go_stop"],
            batch.payments[rows["game"], rows["seat"]].astype(np.float32),
            rows.get("values"),
        )


def clone(
    network: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    go_stop_weight: float = 1.0,
    value_weight: float = 0.5,
    reward_scale: float = 1.0,
    held_out: float = 0.05,
    temperature: float | None = None,
) -> list[dict[str, float]]:
    """Fit ``network`` (a ``MaskableActorCriticPolicy``) to ``demos``; return per-epoch figures
    (training loss, and the held-out share of decisions where it picks the teacher's action,
    overall and at go/stop decisions). With ``temperature`` (chips) and demonstrations that
    hold the teacher's action values, the policy is fitted to the softmax of those values at
    that temperature instead of the teacher's move (its move where it valued nothing)."""
    if temperature is not None and demos.values is None:
        raise ValueError(
            "cloning at a temperature needs the teacher's action values: a search teacher, with a behaviour"
        )
    import torch

    rng = np.random.default_rng([seed, 2])
    order = rng.permutation(len(demos))
    cut = int(len(demos) * held_out)
    train, test = demos.only(order[cut:]), demos.only(order[:cut])
    optimizer = torch.optim.Adam(network.parameters(), lr=learning_rate)
    network.set_training_mode(True)
    history = []
    for epoch in range(epochs):
        losses = [
            _fit_batch(network, optimizer, train.only(rows), go_stop_weight, value_weight, reward_scale, temperature)
            for rows in np.array_split(rng.permutation(len(train)), max(1, len(train) // batch_size))
        ]
        history.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), **agreement(network, test)})
    network.set_training_mode(False)
    return history


def _fit_batch(
    network: Any,
    optimizer: Any,
    batch: Demonstrations,
    go_stop_weight: float,
    value_weight: float,
    reward_scale: float,
    temperature: float | None = None,
) -> float:
    import torch

    obs = torch.as_tensor(batch.observations)
    if temperature is None:  # the teacher's move
        values, log_prob, _ = network.evaluate_actions(
            obs, torch.as_tensor(batch.actions), action_masks=torch.as_tensor(batch.masks)
        )
    else:  # the softmax of the teacher's action values
        values = network.predict_values(obs)
        log_probs = network.get_distribution(obs, action_masks=batch.masks).distribution.logits  # normalised
        targets = torch.as_tensor(_policy_targets(batch, temperature))
        log_prob = (targets * log_probs.masked_fill(~torch.as_tensor(batch.masks), 0.0)).sum(dim=1)
    weights = torch.as_tensor(np.where(batch.go_stop, go_stop_weight, 1.0), dtype=torch.float32)
    returns = torch.as_tensor(batch.returns * reward_scale)
    loss = -(weights * log_prob).sum() / weights.sum() + value_weight * ((values.flatten() - returns) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.item())


def _policy_targets(batch: Demonstrations, temperature: float) -> np.ndarray:
    """``(n, 125)`` float32 what the policy is fitted to at a ``temperature``: the softmax of
    the teacher's action values over the actions it valued (one-hot of its move in rows where
    it valued none)."""
    targets = np.zeros(batch.masks.shape, np.float32)
    targets[np.arange(len(batch)), batch.actions] = 1.0
    assert batch.values is not None  # checked by clone
    values = batch.values.astype(np.float32)
    valued = np.isfinite(values).any(axis=1)
    scaled = np.where(np.isfinite(values), values / temperature, -np.inf)[valued]
    scaled -= scaled.max(axis=1, keepdims=True)
    weights = np.exp(scaled)
    targets[valued] = weights / weights.sum(axis=1, keepdims=True)
    return targets


def agreement(network: Any, demos: Demonstrations) -> dict[str, float]:
    """Share of ``demos`` decisions where the network's most likely legal action is the teacher's."""
    from gostop.agents.learned import NetworkPolicy

    if not len(demos):
        return {"agreement": float("nan"), "go_stop_agreement": float("nan")}
    chosen = NetworkPolicy(network)(demos.observations, demos.masks, np.random.default_rng(0))
    same = chosen == demos.actions
    return {
        "agreement": float(same.mean()),
        "go_stop_agreement": float(same[demos.go_stop].mean()) if demos.go_stop.any() else float("nan"),
    }
