"""Output destinations checked before the work that fills them, so no run is lost to a bad path.

:func:`writable_file` and :func:`writable_folder` try the destination for real (open the
file for appending, create a scratch file in the folder) rather than trusting permission
bits, and raise ValueError with the reason: a folder where a file is expected, a missing
parent folder, a read-only or special file system (``/proc``), no permission.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def writable_file(path: str | Path, suffixes: tuple[str, ...] = ()) -> Path:
    """``path`` as a Path, once a file can be written there (its parent folders are created);
    with ``suffixes``, it must end in one of them."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file name")
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
