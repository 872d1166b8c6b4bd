"""Shared helpers of the benchmarks: machine facts, repeated timing, child processes, JSON output, and the command
line convention every bench module and script follows.

The convention (the ``drugprot`` commands' own, ``drugprot.core.outputs``): before any computation a program checks
its outputs against the output policy (``check_outputs``: never an input, never a file that defines a run, an
existing file only with ``--overwrite``, its folder present and writable) and its data (``load_data``: a file
``drugprot`` reads, with enough abstracts and relations for the analysis); bad input is one line
``<prog>: error: <what is wrong and what to do>`` on stderr and exit 2 (``fail``). Every result file is written
whole or not at all (``write_json``, ``emit``: ``drugprot.core.outputs.write_text_atomic``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import (
    EXIT_ERROR,
    OutputError,
    OutputSpec,
    check_folder_output,
    expand_inputs,
    run_files_in,
    write_text_atomic,
)
from drugprot.core.outputs import check_outputs as _check_outputs

if TYPE_CHECKING:
    from drugprot.core.schema import Document

REPO = Path(__file__).resolve().parent.parent


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """CPU model, cores, RAM, load, Python and package versions: the context every figure needs."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "load_avg_1_5_15": load,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": platform.platform(terse=True),
        "bytecode_cache": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
        "verifiers": _version("verifiers"),
        "drugprot": _version("drugprot"),
    }


def measure(fn: Callable[[], Any], repeats: int, warmup: int = 0) -> dict[str, Any]:
    """Run ``fn`` ``repeats`` times; medians (and all runs) of wall and CPU seconds of this process.

    CPU seconds (``time.process_time``) are reported beside wall seconds because a shared 2-core box
    inflates wall time with other processes' work; on an idle machine the two agree for this
    single-threaded code.
    """
    for _ in range(warmup):
        fn()
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(max(1, repeats)):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
        del result  # freeing the result is not part of what is timed
    return {
        "wall_s": round(statistics.median(walls), 4),
        "cpu_s": round(statistics.median(cpus), 4),
        "wall_runs": [round(w, 4) for w in walls],
        "cpu_runs": [round(c, 4) for c in cpus],
    }


def maxrss_mib() -> float:
    """Peak resident set size of this process so far, in MiB.

    Linux's ``VmHWM`` when there is one: ``ru_maxrss`` survives ``exec``, so in a child it can report the
    parent's peak. Elsewhere ``ru_maxrss`` (KiB on Linux, bytes on macOS).
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def run_child(module: str, args: Sequence[str], timeout: float = 600) -> dict[str, Any]:
    """Run ``python -m module args`` in a fresh interpreter and return the JSON object it prints last."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_json(result: Any, out: str, *, indent: int = 2) -> None:
    """Write ``result`` as JSON to ``out`` whole or not at all (``drugprot.core.outputs.write_text_atomic``: a
    temporary file beside it, then a rename)."""
    write_text_atomic(out, json.dumps(result, indent=indent) + "\n")


def emit(result: dict[str, Any], json_path: str | os.PathLike[str] | None) -> None:
    """Print the result as indented JSON, and also write it to ``json_path`` when given (checked beforehand with
    ``check_outputs``; written whole or not at all)."""
    text = json.dumps(result, indent=2)
    print(text)
    if json_path:
        write_text_atomic(json_path, text + "\n")


# --- the command line convention: one line, exit 2, before any computation


def fail(prog: str, message: object) -> NoReturn:
    """Print ``<prog>: error: <message>`` (one line) on stderr and exit 2 (``drugprot.core.outputs.EXIT_ERROR``)."""
    line = " ".join(str(message).split("\n"))
    print(f"{prog}: error: {line}", file=sys.stderr)
    raise SystemExit(EXIT_ERROR)


def add_overwrite(parser: argparse.ArgumentParser) -> None:
    """The ``--overwrite`` flag: replace an existing output file (never an input, never a run's own file)."""
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an output file that already exists (default: refuse it before any work; an input or a file "
        "that defines a run is never replaced)",
    )


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (a count of seeds, steps, repeats, resamples ...)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


Named = tuple[str, "str | os.PathLike[str] | None"]
"""``(flag, path)`` of one output; a None path (the option not given) is skipped."""


def check_outputs(
    prog: str,
    files: Iterable[Named] = (),
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    folders: Iterable[Named] = (),
    overwrite: bool = False,
) -> None:
    """Check a program's outputs against the output policy (``drugprot.core.outputs``) before any work: ``files``
    it will write and ``folders`` it will create files in, against the files and folders it reads (``inputs``).

    Exits 2 with one line (``fail``) when the policy refuses one.
    """
    sources = expand_inputs(list(inputs))
    try:
        for flag, folder in folders:
            if folder is not None:
                check_folder_output(flag, folder, sources)
        _check_outputs([OutputSpec.of(flag, path) for flag, path in files if path], sources, overwrite=overwrite)
    except OutputError as exc:
        fail(prog, exc)


def load_data(
    prog: str,
    data_path: str | os.PathLike[str],
    *,
    split: str = "train",
    flag: str = "--data-path",
    min_abstracts: int = 1,
    relations: bool = False,
    what: str = "this analysis",
) -> list[Document]:
    """The abstracts of ``data_path`` (any file or TSV directory ``drugprot`` reads), or one line and exit 2.

    Refused: a missing, empty, unreadable or malformed file (``DrugprotDataError``'s message, naming file and row),
    fewer than ``min_abstracts`` abstracts, and, with ``relations``, data without a gold relation.
    """
    from drugprot.core.sources import load_documents

    try:
        documents = load_documents(split, data_path, path_hint=flag)
    except DrugprotError as exc:
        fail(prog, f"{flag} {data_path}: {exc}")
    if len(documents) < min_abstracts:
        count = f"{len(documents)} abstract{'s' if len(documents) != 1 else ''}"
        fail(prog, f"{flag} {data_path}: {count}, too few for {what} (at least {min_abstracts}); pass more abstracts")
    if relations and not any(document.relations for document in documents):
        fail(
            prog,
            f"{flag} {data_path}: no abstract has a gold relation, so {what} has nothing to measure; pass annotated "
            "data (the training or development split)",
        )
    return documents


def check_run_folders(
    prog: str,
    flag: str,
    out: str | os.PathLike[str],
    runs: Sequence[str],
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    overwrite: bool = False,
) -> None:
    """Check a folder ``out`` a program writes one run folder per name of ``runs`` into, plus its ``summary.json``:
    ``out`` can be created or written, ``summary.json`` passes the output policy, and no run folder already holds a
    file that defines a run (``drugprot.core.outputs.RUN_FILES``: never replaced, ``--overwrite`` or not)."""
    folder = Path(out)
    check_outputs(prog, folders=[(flag, folder)], inputs=inputs)
    if folder.is_dir():
        check_outputs(prog, [(flag, folder / "summary.json")], inputs=inputs, overwrite=overwrite)
    for name in runs:
        held = run_files_in(folder / name)
        if held:
            fail(
                prog,
                f"{flag} {folder}: {folder / name} already holds a run ({', '.join(held)}), which is never replaced; "
                f"choose another {flag}",
            )


@contextlib.contextmanager
def too_small(prog: str, what: str = "this analysis") -> Iterator[None]:
    """Turn a fit that fails for lack of data (scikit-learn's "0 samples" or "only one class" ``ValueError``) into one
    line and exit 2; any other error propagates as a bug."""
    try:
        yield
    except ValueError as exc:
        frames = [frame.f_code.co_filename for frame, _ in _walk(exc.__traceback__)]
        if not any(f"{os.sep}sklearn{os.sep}" in name for name in frames):
            raise
        fail(prog, f"the data is too small for {what} ({str(exc).splitlines()[0]}); pass more abstracts")


def _walk(tb: Any) -> Iterator[tuple[Any, int]]:
    import traceback

    return traceback.walk_tb(tb)


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("inf")
