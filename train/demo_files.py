"""Demonstration batches kept on disk as they are collected, so a run killed while its teacher
plays loses at most the batch in flight.

A run's demonstrations go under ``<run>/demonstrations/<key>/`` (``key``: a digest of what
decides them, so a run with another teacher, deal seed or rule set never reads them), one
folder per part (``part<i>/``), one compressed ``batch<k>.npz`` per batch of hands: the
decisions' columns and the state of the collection's generator after the batch, written whole
or not at all. :func:`gostop.train.bc.collect` reads the batches a folder already holds and
plays only the rest, so the result is the same as an unbroken collection's. A batch file sits
in a run folder that may have been copied from anywhere: it is read without pickle and checked
(columns, dtypes, shapes, legal actions, the generator state) before use.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from gostop_env.core import NUM_ACTIONS

DEMONSTRATIONS_FOLDER = "demonstrations"
MAX_BATCH_BYTES = 1 << 30  # a batch of 1,024 hands holds about 55 MB of columns; more is refused unread
RNG_KEY = "rng_state"  # the generator's state after the batch, as JSON text
COMPRESS_LEVEL = 1  # deflate's fastest: 0.2 s and 2.6 MB for a batch of 1,024 hands of 2 players (52 MB raw)


def demonstrations_folder(out: Path, key: dict[str, Any]) -> Path:
    """The folder under run folder ``out`` for the demonstrations ``key`` (a JSON-able dict of
    everything that decides them) describes."""
    text = json.dumps(key, sort_keys=True)
    return out / DEMONSTRATIONS_FOLDER / hashlib.sha256(text.encode()).hexdigest()[:16]


def batch_path(folder: Path, index: int) -> Path:
    """Where batch ``index`` of a collection that keeps its batches in ``folder`` goes."""
    return folder / f"batch{index:04d}.npz"


def part_folder(folder: Path, part: int) -> Path:
    """The folder of part ``part``'s batches, for a collection in parts kept in ``folder``."""
    return folder / f"part{part}"


def kept_batches(folder: Path) -> int:
    """How many batches are kept in ``folder`` and its parts' folders."""
    return sum(1 for _ in folder.rglob("batch*.npz"))


def save_batch(path: Path, columns: dict[str, np.ndarray], rng_state: dict[str, Any]) -> None:
    """Write one batch's ``columns`` and the generator's state after it, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    arrays = {**columns, RNG_KEY: np.array(json.dumps(rng_state))}
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as archive:
        for name, array in arrays.items():  # np.savez_compressed's layout, at a faster level
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    os.replace(partial, path)


def load_batch(path: Path, observation_shape: tuple[int, ...]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """One saved batch: its columns (``observations``, ``masks``, ``actions``, ``go_stop``,
    ``returns`` and, for a search teacher, ``values``) and the generator state after it.
    ValueError naming the file on anything that is not such a batch."""
    try:
        size = _declared_bytes(path)
        if size > MAX_BATCH_BYTES:
            raise ValueError(f"its arrays declare {size} bytes, more than a batch's {MAX_BATCH_BYTES}")
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files}
        state = json.loads(str(arrays.pop(RNG_KEY)))
        np.random.default_rng(0).bit_generator.state = state  # refuses a state that is not one
        _check_columns(arrays, observation_shape)
    except (OSError, KeyError, TypeError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(
            f"{path} is not a demonstration batch this run wrote ({error}); delete it to collect that batch again"
        ) from None
    return arrays, state


def _declared_bytes(path: Path) -> int:
    """The bytes the ``.npy`` headers and the zip directory of ``path`` declare, whichever is
    more, read before any array is: numpy sizes an array by its header."""
    total, stored = 0, 0
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            stored += info.file_size
            with archive.open(info) as member:
                major, _ = np.lib.format.read_magic(member)
                read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                shape, _, dtype = read_header(member)
                total += int(np.prod(shape, dtype=object)) * dtype.itemsize
    return max(total, stored)


_DTYPES = {
    "observations": np.float32,
    "masks": np.bool_,
    "actions": np.int64,
    "go_stop": np.bool_,
    "returns": np.float32,
    "values": np.float16,
}


def _check_columns(arrays: dict[str, np.ndarray], observation_shape: tuple[int, ...]) -> None:
    names = set(arrays)
    required = set(_DTYPES) - {"values"}
    if not required <= names <= set(_DTYPES):
        raise ValueError(f"columns {sorted(names)}, expected {sorted(required)} and perhaps 'values'")
    rows = len(arrays["actions"])
    shapes = {
        "observations": (rows, *observation_shape),
        "masks": (rows, NUM_ACTIONS),
        "actions": (rows,),
        "go_stop": (rows,),
        "returns": (rows,),
        "values": (rows, NUM_ACTIONS),
    }
    for name, array in arrays.items():
        if array.dtype != _DTYPES[name] or array.shape != shapes[name]:
            raise ValueError(
                f"'{name}' is {array.dtype} {array.shape}, expected {np.dtype(_DTYPES[name])} {shapes[name]}"
            )
    actions = arrays["actions"]
    if ((actions < 0) | (actions >= NUM_ACTIONS)).any() or not arrays["masks"][np.arange(rows), actions].all():
        raise ValueError("an action out of range or not legal in its row")
    if not (np.isfinite(arrays["observations"]).all() and np.isfinite(arrays["returns"]).all()):
        raise ValueError("a value that is not finite")
    if "values" in arrays and np.isinf(arrays["values"]).any():
        raise ValueError("an infinite action value")
