"""Publish a directory all at once: build it beside its final place, then rename it into place.

A reader of the final directory sees either what was there before or the complete new contents, never a
mix: the contents are written into a hidden staging directory in the same parent (so the final rename
stays on one file system), flushed to disk, and renamed over the target. Whatever goes wrong before the
rename (an exception, Ctrl-C) deletes the staging directory and leaves the target as it was. A process
killed outright can leave a hidden ``.<name>.partial-*`` directory behind, never a complete-looking target.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_directory(target: Path, *, replace: bool) -> Iterator[Path]:
    """Yield an empty staging directory; on a normal exit, move it to ``target``.

    Args:
        target: the directory to publish. Its parent is created if missing.
        replace: an existing ``target`` (the caller has decided it may go) is replaced as a whole; without
            it an existing ``target`` must be an empty directory.

    Raises:
        OSError: the staging directory cannot be made or moved; ``target`` is then unchanged.
    """
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    stage = _new_directory(parent, f".{target.name}.partial-")
    try:
        yield stage
        _fsync_tree(stage)
        _move_into_place(stage, target, replace=replace)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _move_into_place(stage: Path, target: Path, *, replace: bool) -> None:
    """Rename ``stage`` to ``target``; an existing ``target`` is set aside first and deleted after."""
    if not target.exists() or not replace:
        os.rename(stage, target)  # replaces an empty directory, fails on a non-empty one
        _fsync_dir(target.parent)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rename(target, old)
    try:
        os.rename(stage, target)
    except BaseException:
        os.rename(old, target)
        raise
    _fsync_dir(target.parent)
    shutil.rmtree(old, ignore_errors=True)  # the new contents are published; a leftover is only hidden clutter


def _new_directory(parent: Path, prefix: str) -> Path:
    """A new directory with a unique name; unlike ``tempfile.mkdtemp`` its mode follows the umask, so the
    published directory is as readable as one made by ``mkdir``."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path


def _fsync_tree(directory: Path) -> None:
    """Flush every file under ``directory`` and the directories themselves, so the rename publishes data."""
    for root, _dirs, files in os.walk(directory):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(root))


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
