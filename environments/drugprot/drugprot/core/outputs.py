"""The one output policy of every command that writes a file: nothing written may destroy what the command reads.

Before any work, a command names its inputs (the files it reads) and its outputs (``OutputSpec``: the flag and the
path) and calls ``check_outputs``. It refuses, with an ``OutputError`` naming the flag and how to fix it:

- an output that is, or resolves to, an input: the same path after ``..`` and symlinks are resolved, or the same
  file by device and inode (a hard link);
- an output that already exists, unless the command's ``--overwrite`` was given (the command then says it
  replaced it: ``wrote_line``);
- an output whose folder is missing, is not a folder, or cannot be written (checked now, not after the work);
- an output named like a file that defines a run (``RUN_FILES``: traces, results, metadata, metrics, the resolved
  eval config) inside a run folder (one that holds any of them), even with ``--overwrite``: it would replace the
  run's own record, or shadow it (an export named ``traces.jsonl`` beside a legacy ``results.jsonl`` is read first
  afterwards and changes the run's report);
- an output path that cannot be resolved (a symlink loop);
- two outputs that are the same file.

Every program of the repository that writes a file goes through this module: the ``drugprot`` commands, the
bench modules (``bench.common``) and the scripts.

Then every file is written through ``atomic_path``: a temporary file in the same folder, moved over the target with
``os.replace`` once complete, so a failed or interrupted write leaves no half-written result (and an existing file
as it was). Replacing a directory entry never writes through a hard link or a symlink into another file.

Exit codes and error lines, the same for every ``drugprot`` command: ``EXIT_OK`` (0) done; ``EXIT_ERROR`` (2) refused
or failed, with one line ``drugprot <command>: error: <message>`` on stderr (``error_line``); argparse's own usage
errors are 2 as well. ``drugprot report`` and ``drugprot baseline`` add 3 for a failed run (``EXIT_FAILED_RUN``).
A Ctrl-C ends any command with one line and ``EXIT_INTERRUPTED`` (130).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from drugprot.core.errors import DrugprotError

EXIT_OK = 0
"""The command did what was asked."""
EXIT_ERROR = 2
"""The command refused its options, inputs or outputs, or failed; ``error_line`` says why."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C, SIGINT): the shell's 128 + 2; the command stopped what it started and says so in one line."""
RUN_FILES = ("traces.jsonl", "results.jsonl", "metadata.json", "metrics.jsonl")
"""The files that define a run in its folder: verifiers v1 traces, a legacy run's results and metadata, prime-rl's
metrics. No writer replaces one, nor writes a file of one of these names into a folder holding any of them."""
RUN_CONFIG = ("configs", "resolved", "eval.json")
"""The saved setting of a verifiers v1 run, below its folder (``configs/resolved/eval.json``)."""


class OutputError(DrugprotError, ValueError):
    """An output path the policy refuses: it is an input, exists without ``--overwrite``, or cannot be written.

    Attributes:
        flag: the option that named the path (``--export-tsv``, ``--plot``, ...).
        path: the path as given.
    """

    def __init__(self, message: str, *, flag: str, path: str | os.PathLike[str]) -> None:
        self.flag, self.path = flag, str(path)
        super().__init__(f"{flag} {path}: {message}")


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """One file a command will write: the option that named it and the path."""

    flag: str
    path: Path

    @classmethod
    def of(cls, flag: str, path: str | os.PathLike[str]) -> OutputSpec:
        return cls(flag, Path(path))


@dataclass(frozen=True, slots=True)
class CheckedOutput:
    """An output the policy accepted; ``replaces`` when it exists and ``--overwrite`` lets the command replace it."""

    flag: str
    path: Path
    replaces: bool


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def expand_inputs(paths: Iterable[str | os.PathLike[str] | None]) -> list[Path]:
    """The files behind ``paths``: a file itself, every file directly in a folder (a TSV directory), none for
    ``None`` or a path that does not exist (the command reports that itself)."""
    files: list[Path] = []
    for given in paths:
        if given is None:
            continue
        path = Path(given)
        if path.is_dir():
            with contextlib.suppress(OSError):
                files.extend(sorted(p for p in path.iterdir() if p.is_file()))
        elif path.exists():
            files.append(path)
    return files


def _resolved(path: Path, flag: str = "output") -> Path:
    """``path`` with ``..`` and symlinks resolved.

    Raises:
        OutputError: the path is a symlink loop (or a link chain the system gives up on).
    """
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # RuntimeError: "Symlink loop from ..." (Python 3.11/3.12)
        raise OutputError(
            f"cannot be resolved ({type(exc).__name__}: a symlink loop?); remove the link or choose another path",
            flag=flag,
            path=path,
        ) from exc


def same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file: equal after resolving ``..`` and symlinks, or the same
    device and inode (hard links).

    Raises:
        OutputError: ``a`` or ``b`` is a symlink loop.
    """
    try:
        other = b.resolve()
    except (RuntimeError, OSError):  # an input that is a symlink loop names no file an output could be
        return False
    if _resolved(a) == other:
        return True
    ia = _identity(a)
    return ia is not None and ia == _identity(b)


def _check_folder(folder: Path, spec: OutputSpec) -> None:
    if not folder.exists():
        raise OutputError(f"its folder {folder} does not exist; create it first", flag=spec.flag, path=spec.path)
    if not folder.is_dir():
        raise OutputError(f"{folder} is not a folder", flag=spec.flag, path=spec.path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"its folder {folder} is not writable", flag=spec.flag, path=spec.path)


def run_files_in(folder: Path) -> list[str]:
    """The files of ``RUN_FILES`` (and ``configs/resolved/eval.json``) that ``folder`` holds: non-empty when it is
    a run folder."""
    found = [name for name in RUN_FILES if (folder / name).exists()]
    if folder.joinpath(*RUN_CONFIG).exists():
        found.append("/".join(RUN_CONFIG))
    return found


def _run_file_clash(path: Path) -> str | None:
    """Why writing ``path`` would replace or shadow a file that defines a run; None when it would not."""
    if path.name in RUN_FILES:
        folder = path.parent
    elif path.name == RUN_CONFIG[-1] and path.parent.parts[-2:] == RUN_CONFIG[:2]:
        folder = path.parent.parent.parent
    else:
        return None
    held = run_files_in(folder)
    if not held:
        return None
    return (
        f"{path.name} is a file that defines a run, and {folder} is a run folder (it holds {', '.join(held)}): "
        "writing it would replace the run's record or change how the run is read, even with --overwrite. "
        "Choose another name or folder"
    )


def check_output(spec: OutputSpec, inputs: Sequence[Path], *, overwrite: bool) -> CheckedOutput:
    """Check one output file against the policy (module docstring), without touching anything.

    Raises:
        OutputError: the path is an input, a symlink loop, a folder, a run file of a run folder, exists without
            ``overwrite``, or its folder is missing or not writable.
    """
    path = spec.path
    _resolved(path, spec.flag)
    for source in inputs:
        if same_file(path, source):
            raise OutputError(
                f"this is an input of the command ({source}); writing it would destroy it. Choose another path",
                flag=spec.flag,
                path=path,
            )
    if path.is_dir():
        raise OutputError("is a folder; name a file", flag=spec.flag, path=path)
    clash = _run_file_clash(path)
    if clash is not None:
        raise OutputError(clash, flag=spec.flag, path=path)
    exists = path.exists() or path.is_symlink()
    if exists and not overwrite:
        raise OutputError("exists; pass --overwrite to replace it, or choose another path", flag=spec.flag, path=path)
    _check_folder(path.parent, spec)
    return CheckedOutput(spec.flag, path, replaces=exists)


def check_outputs(specs: Sequence[OutputSpec], inputs: Iterable[Path], *, overwrite: bool) -> list[CheckedOutput]:
    """Check every output of a command (``check_output``) and that no two are the same file.

    Raises:
        OutputError: the first output the policy refuses.
    """
    sources = list(inputs)
    checked = [check_output(spec, sources, overwrite=overwrite) for spec in specs]
    for i, first in enumerate(checked):
        for second in checked[i + 1 :]:
            if _resolved(first.path, first.flag) == _resolved(second.path, second.flag):
                raise OutputError(f"is also the path of {second.flag}", flag=first.flag, path=first.path)
    return checked


def check_folder_output(flag: str, folder: str | os.PathLike[str], inputs: Iterable[Path]) -> Path:
    """Check a folder a command creates files in (or creates itself): not an input, and its nearest existing
    ancestor a writable folder.

    Raises:
        OutputError: the folder is an input file, a file, or cannot be created or written.
    """
    path = Path(folder)
    spec = OutputSpec(flag, path)
    _resolved(path, flag)
    for source in inputs:
        if same_file(path, source):
            raise OutputError(f"this is an input of the command ({source})", flag=flag, path=path)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == path and not path.is_dir():
        raise OutputError("exists and is not a folder", flag=flag, path=path)
    _check_folder(existing, spec)
    return path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a fresh temporary path in ``path``'s folder; on a normal exit move it over ``path`` (``os.replace``).

    On an exception the temporary file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, line ends as given) to ``path`` through ``atomic_path``."""
    with atomic_path(path) as tmp, open(tmp, "x", encoding="utf-8", newline="") as handle:
        handle.write(text)


def wrote_line(what: str, path: str | os.PathLike[str], replaced: bool) -> str:
    """The message after a write: ``wrote <what> to <path>``, saying when an existing file was replaced."""
    return f"wrote {what} to {path}" + (" (replaced the existing file: --overwrite)" if replaced else "")


def error_line(command: str, error: BaseException | str) -> str:
    """The one error line of every command: ``drugprot <command>: error: <message>``."""
    return f"drugprot {command}: error: {error}"


__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "CheckedOutput",
    "OutputError",
    "OutputSpec",
    "atomic_path",
    "check_folder_output",
    "check_output",
    "check_outputs",
    "error_line",
    "RUN_CONFIG",
    "RUN_FILES",
    "expand_inputs",
    "run_files_in",
    "same_file",
    "write_text_atomic",
    "wrote_line",
]
