"""Files in and out: JSON from others read with limits, and output destinations checked
before the work that fills them, so no run is lost to a bad path.

:func:`read_json_object` reads a small JSON file someone else may have written: a size limit,
no crash on deep nesting or bad encoding, and an object at the top, else ValueError.
:func:`writable_file` and :func:`writable_folder` try the destination for real (open the
file for appending, create a scratch file in the folder) rather than trusting permission
bits, and raise ValueError with the reason: a folder where a file is expected, a missing
parent folder, a read-only or special file system (``/proc``), no permission.
:func:`folder_lock` keeps a second run out of a folder in use, and :func:`write_json_atomic`
writes a small state file so that a reader never sees half of it.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def read_json_object(path: str | Path, max_bytes: int, what: str) -> dict[str, Any]:
    """The JSON object in ``path`` (``what`` names the kind of file in errors); ValueError
    for a file over ``max_bytes``, invalid or too deeply nested JSON, or a non-object."""
    path = Path(path)
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):  # /dev/zero would be read forever, a pipe would block
        raise ValueError(f"{path} is not a regular file: not {what}")
    if info.st_size > max_bytes:
        raise ValueError(f"{path} is larger than {max_bytes} bytes: not {what}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not {what}: it holds a JSON {type(data).__name__}, not an object")
    return data


def writable_file(path: str | Path, suffixes: tuple[str, ...] = ()) -> Path:
    """``path`` as a Path, once a file can be written there (its parent folders are created);
    with ``suffixes``, it must end in one of them."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file name")
    if path.exists() and not path.is_file():  # /dev/full takes the open and fails the write
        raise ValueError(f"{path} is not a regular file; give a file name")
    if suffixes and path.suffix not in suffixes:
        raise ValueError(f"{path}: the file name must end in {' or '.join(suffixes)}")
    _make_parents(path.parent)
    existed = path.exists()
    try:
        with path.open("a"):
            pass
    except OSError as error:
        raise ValueError(f"cannot write {path}: {error.strerror or error}") from None
    if not existed:
        path.unlink()
    return path


def writable_folder(folder: str | Path) -> Path:
    """``folder`` as a Path, created if missing, once a file can be written inside it."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file, not a folder")
    _make_parents(folder)
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise ValueError(f"cannot write in the folder {folder}: {error.strerror or error}") from None
    return folder


def _make_parents(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        where = error.filename or folder
        raise ValueError(f"cannot create the folder {where}: {error.strerror or error}") from None
    if not os.path.isdir(folder):
        raise ValueError(f"{folder} is not a folder")


class FolderInUseError(ValueError):
    """Another process holds the folder's lock: a second run would interleave its files."""


@contextmanager
def folder_lock(
    folder: str | Path, lock_name: str, what: str, error: type[ValueError] = FolderInUseError
) -> Iterator[None]:
    """Hold ``folder/lock_name`` for a run; ``error`` (by default :class:`FolderInUseError`,
    naming ``what`` runs there) if another process holds it. POSIX ``flock``: released by the system when a run
    dies, so no stale lock is left behind. Elsewhere runs are not guarded."""
    try:
        import fcntl
    except ImportError:  # not POSIX (Windows)
        yield
        return
    with (Path(folder) / lock_name).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise error(
                f"{folder} is in use by another {what}; wait for it to finish or choose another folder (--out)"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file renamed over it."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(partial, path)
