"""Demonstrations kept batch by batch (gostop.train.demo_files): a collection stopped part way
and run again gives what an unbroken one gives, and a batch file that is not one is refused."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from gostop.agents.greedy import Greedy  # noqa: E402
from gostop.agents.registry import make_agent  # noqa: E402
from gostop.train import bc  # noqa: E402
from gostop.train.bc import Demonstrations, collect  # noqa: E402
from gostop.train.config import TrainConfig  # noqa: E402
from gostop.train.demo_files import batch_path, demonstrations_folder, load_batch, save_batch  # noqa: E402
from gostop.train.launch import train  # noqa: E402
from gostop_env.core import Rules  # noqa: E402

OBSERVATION = (571,)  # the vector encoding


def same(a: Demonstrations, b: Demonstrations) -> bool:
    columns = a.columns(), b.columns()
    return columns[0].keys() == columns[1].keys() and all(
        np.array_equal(columns[0][k], columns[1][k], equal_nan=k == "values") for k in columns[0]
    )


class Refusing:
    """A teacher that must not be asked: every batch is on disk already."""

    def __call__(self, *args, **kwargs):
        raise AssertionError("a kept batch was played again")


def test_a_collection_stopped_part_way_ends_as_an_unbroken_one(tmp_path):
    rules = Rules()
    search = make_agent("search:n=2:rounds=2", rules)  # draws from the collection's generator; keeps action values
    whole = collect(search, rules, hands=30, seed=7, batch_size=10, behaviour=Greedy(rules=rules))
    assert whole.values is not None
    cache = tmp_path / "cache"
    kept = collect(search, rules, hands=30, seed=7, batch_size=10, behaviour=Greedy(rules=rules), cache=cache)
    assert same(kept, whole) and sorted(p.name for p in cache.iterdir()) == [f"batch000{i}.npz" for i in range(3)]
    batch_path(cache, 2).unlink()  # stopped while the last batch was played
    resumed = collect(search, rules, hands=30, seed=7, batch_size=10, behaviour=Greedy(rules=rules), cache=cache)
    assert same(resumed, whole)
    read_back = collect(Refusing(), rules, hands=30, seed=7, batch_size=10, behaviour=Refusing(), cache=cache)
    assert same(read_back, whole)


def test_a_run_killed_while_its_teacher_plays_resumes_to_the_same_network(tmp_path, monkeypatch):
    def config(name: str) -> TrainConfig:
        overrides = ["ppo.timesteps=0", "bc.hands=1100", "bc.epochs=1", "eval.deals=2", f'out="{tmp_path / name}"']
        return TrainConfig.load("smoke", overrides)

    unbroken = train(config("unbroken"), progress=False, log=lambda _: None)
    record, calls = bc._record_hands, []

    def killed_in_second_batch(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return record(*args)

    monkeypatch.setattr(bc, "_record_hands", killed_in_second_batch)
    with pytest.raises(KeyboardInterrupt):
        train(config("killed"), progress=False, log=lambda _: None)
    monkeypatch.setattr(bc, "_record_hands", record)
    logs: list[str] = []
    out = train(config("killed"), resume=True, progress=False, log=logs.append)
    assert any("1 batches already collected" in line for line in logs)
    assert [line for line in logs if " of 2 batches" in line] == [
        f"demonstrations: {done} of 2 batches of greedy kept" for done in (1, 2)
    ]
    weights = [(run / "model" / "policy.safetensors").read_bytes() for run in (unbroken, out)]
    assert weights[0] == weights[1]
    assert json.loads((out / "bc.json").read_text()) == json.loads((unbroken / "bc.json").read_text())
    with pytest.raises(ValueError, match="has ended"):
        train(config("killed"), resume=True, progress=False, log=lambda _: None)


def test_demonstrations_of_other_settings_go_to_another_folder(tmp_path):
    key = {"teacher": "search", "behaviour": None, "seed": 1, "hands": 100, "parts": 1}
    assert demonstrations_folder(tmp_path, key) == demonstrations_folder(tmp_path, dict(reversed(key.items())))
    assert demonstrations_folder(tmp_path, key) != demonstrations_folder(tmp_path, {**key, "seed": 2})


def small_batch() -> tuple[dict[str, np.ndarray], dict]:
    rules = Rules()
    rng = np.random.default_rng([3, 1])
    demos = collect(Greedy(rules=rules), rules, hands=2, seed=3)
    return demos.columns(), rng.bit_generator.state


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda c: c.update(actions=(c["actions"] + 1) % 125), "not legal"),
        (lambda c: c.update(observations=c["observations"][:, :-1]), "'observations'"),
        (lambda c: c.update(returns=c["returns"].astype(np.float64)), "'returns'"),
        (lambda c: c.update(observations=np.where(c["observations"] > 0, np.nan, 0).astype(np.float32)), "finite"),
        (lambda c: c.pop("masks"), "columns"),
        (lambda c: c.update(extra=np.zeros(3)), "columns"),
    ],
)
def test_a_damaged_batch_file_is_refused_naming_it(tmp_path, damage, message):
    columns, state = small_batch()
    path = tmp_path / "batch0000.npz"
    save_batch(path, columns, state)
    assert load_batch(path, OBSERVATION)[1] == state
    damage(columns)
    save_batch(path, columns, state)
    with pytest.raises(ValueError, match=f"{path}.*{message}"):
        load_batch(path, OBSERVATION)


def test_a_batch_file_with_pickles_or_no_generator_or_no_zip_is_refused(tmp_path):
    columns, state = small_batch()
    path = tmp_path / "batch0000.npz"
    np.savez(path, **columns, rng_state=np.array([{"a": 1}], dtype=object))  # loading it would unpickle
    with pytest.raises(ValueError, match="not a demonstration batch"):
        load_batch(path, OBSERVATION)
    save_batch(path, columns, {"bit_generator": "PCG64", "state": "nonsense"})
    with pytest.raises(ValueError, match="not a demonstration batch"):
        load_batch(path, OBSERVATION)
    huge = {"descr": "<f4", "fortran_order": False, "shape": (1 << 40,)}  # refused before numpy sizes it
    with zipfile.ZipFile(path, "w") as archive, archive.open("observations.npy", "w") as member:
        np.lib.format.write_array_header_1_0(member, huge)
    with pytest.raises(ValueError, match="declare"):
        load_batch(path, OBSERVATION)
    path.write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="delete it"):
        load_batch(path, OBSERVATION)
