"""One demo run: the baseline served on 127.0.0.1, the eval CLI on the sample, the run directory kept."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from drugprot.core.options import TaskOptions
from drugprot.evaluation.records import V1_FILE, Run
from drugprot.evaluation.runs import load_run
from drugprot.modes.pair.summary import summarize
from drugprot.tools.demo.errors import DemoError
from drugprot.tools.demo.eval_cli import KEY_VAR, MODEL, eval_arguments, eval_command, run_cli, serves_env_workers
from drugprot.tools.demo.progress import FINISHED, STOPPED, Progress, new_run_files
from drugprot.tools.demo.replier import lexical_replier
from drugprot.tools.demo.sample_run import SampleRun, plan_sample_run, sample_options, sample_path
from drugprot.tools.serve import OpenAIServer

LOG_NAME = "eval-cli.log"
"""The eval CLI's output, kept in the run directory."""
RUN_DIR_PREFIX = "drugprot--"
"""How the eval CLI names the run directories of the drugprot environment (``drugprot--<model>--...``)."""


def new_run_dirs(output_dir: Path, before: set[Path]) -> list[Path]:
    """The eval CLI's run directories under ``output_dir`` that were not there ``before`` (``set(output_dir.iterdir())``
    when the CLI started), sorted: the ones a stopped run may have left half-written."""
    try:
        now = set(output_dir.iterdir())
    except OSError:
        return []
    return sorted(p for p in now - before if p.is_dir() and not p.is_symlink() and p.name.startswith(RUN_DIR_PREFIX))


def remove_partial_runs(output_dir: Path, before: set[Path]) -> list[Path]:
    """Remove the run directories a stopped eval CLI left under ``output_dir`` (``new_run_dirs``); return them.

    A stopped run is not a result: left in place, ``drugprot report outputs`` would list it (as a failed or
    incomplete run of the demo's model).
    """
    removed = new_run_dirs(output_dir, before)
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _keep_log(log_path: Path, created: Sequence[Path]) -> Path:
    """Move the CLI's log into the run directory when there is exactly one; return where it is."""
    if len(created) != 1 or not log_path.is_file():
        return log_path
    return log_path.replace(created[0].parent / LOG_NAME)


@dataclass
class DemoRun:
    """A finished demo run: the run as ``drugprot report`` reads it, and how it was made."""

    run: Run
    sample: SampleRun
    command: list[str]
    seconds: float
    eval_seconds: float

    @property
    def run_dir(self) -> str:
        return self.run.path


def run_demo(
    output_dir: Path,
    *,
    rollouts: int = 1,
    negatives: str = "all",
    num_tasks: int | None = None,
    timeout: float = 600.0,
    verbose: bool = False,
    progress: TextIO | None = None,
) -> DemoRun:
    """Serve the lexical baseline and run the eval CLI on the sample set into a new run directory of ``output_dir``.

    The run directory (with the CLI's log, ``eval-cli.log``) is kept, also when the run fails. ``progress``:
    the stream that shows the rollouts done while the CLI runs (None: no display).

    Raises:
        DemoError: no eval CLI, the run failed or timed out, or most rollouts errored (the message carries
            the end of the CLI's log and where the run directory is).
        DrugprotConfigError: a bad ``negatives``, ``num_tasks`` or ``rollouts``.
    """
    started = time.monotonic()
    negatives = str(TaskOptions(negatives=negatives).negatives)  # the knob checked (and normalised) up front
    command = eval_command()
    output_dir.mkdir(parents=True, exist_ok=True)
    log_path = output_dir / f"drugprot-demo-{os.getpid()}.log"  # moved into the run directory once it exists
    with contextlib.ExitStack() as stack:
        data_path = stack.enter_context(sample_path())
        sample = plan_sample_run(data_path, negatives=negatives, num_tasks=num_tasks, rollouts=rollouts)
        # The served baseline loads the questions the eval CLI will ask: the same file, the same options.
        replier = lexical_replier(sample_options(data_path, negatives=negatives))
        server = stack.enter_context(OpenAIServer(replier, port=0, models=(MODEL,)))
        argv = command + eval_arguments(
            server.base_url,
            data_path,
            output_dir,
            rollouts=rollouts,
            negatives=negatives,
            num_tasks=num_tasks,
            data_label=sample.label,
            in_process=serves_env_workers(),
        )
        before = set(output_dir.glob(f"*/{V1_FILE}"))
        entries_before = set(output_dir.iterdir())
        display = Progress(output_dir, before, sample.rollouts, progress).start() if progress else None
        eval_started = time.monotonic()
        ended: str | None = STOPPED
        try:
            returncode = run_cli(argv, {**os.environ, KEY_VAR: "demo"}, None if verbose else log_path, timeout)
            ended = FINISHED if returncode == 0 else STOPPED
        except KeyboardInterrupt:  # the CLI is stopped (run_cli); nothing of the run is left
            ended = None
            remove_partial_runs(output_dir, entries_before)
            log_path.unlink(missing_ok=True)
            raise
        except DemoError:  # a timeout: the CLI is stopped; its log stays (the message names it), the run does not
            remove_partial_runs(output_dir, entries_before)
            raise
        finally:
            if display:
                display.stop(ended)
        eval_seconds = time.monotonic() - eval_started
    created = new_run_files(output_dir, before)
    log = _keep_log(log_path, created)
    if len(created) == 1:
        where = f"run directory: {created[0].parent}"
    else:
        where = "no run directory was made; " + ("the CLI's output is above" if verbose else f"log: {log}")
    if returncode != 0:
        raise DemoError(f"the eval CLI failed (exit {returncode}): {' '.join(argv)}\n{_tail(log)}\n{where}")
    if len(created) != 1:
        raise DemoError(f"expected one new run with {V1_FILE} under {output_dir}, found {len(created)}; log: {log}")
    run = load_run(created[0])
    errored = summarize(run)["errored"]
    if errored["failed"]:  # most rollouts errored: the figures would describe the failure, not the baseline
        raise DemoError(
            f"{errored['rollouts']} of {len(run.rollouts)} rollouts failed (first: "
            f"{errored['example']}); see {run.path}/{V1_FILE} and {run.path}/{LOG_NAME}"
        )
    return DemoRun(run, sample, argv, time.monotonic() - started, eval_seconds)
