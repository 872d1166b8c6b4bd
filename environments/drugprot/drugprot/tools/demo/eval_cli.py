"""verifiers' v1 eval CLI: finding it, its arguments for the demo run, and running it with a timeout."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path

from drugprot.tools.demo.errors import DemoError

EVAL_ENTRY_POINT = "verifiers.v1.cli.eval.main:main"
"""The console-script target of verifiers' v1 eval CLI (``vf-eval`` in 0.4.0, ``eval`` in 0.3.1)."""
MODEL = "drugprot-lexical-baseline"
KEY_VAR = "DRUGPROT_DEMO_API_KEY"


def eval_command() -> list[str]:
    """The command that starts verifiers' v1 eval CLI in this environment.

    The console script whose target is ``EVAL_ENTRY_POINT`` (``vf-eval`` on 0.4.0, ``eval`` on 0.3.1),
    looked up next to this Python first, then on PATH; if the script file is missing, the same entry
    point through this interpreter.

    Raises:
        DemoError: the installed verifiers has no v1 eval CLI.
    """
    names = [ep.name for ep in entry_points(group="console_scripts") if ep.value.replace(" ", "") == EVAL_ENTRY_POINT]
    if not names:
        raise DemoError("no verifiers v1 eval CLI is installed: pip install 'verifiers>=0.3.1.dev59,<0.5'")
    name = "vf-eval" if "vf-eval" in names else names[0]
    script = Path(sys.executable).parent / name
    if script.is_file():
        return [str(script)]
    found = shutil.which(name)
    if found:
        return [found]
    module, attr = EVAL_ENTRY_POINT.split(":")
    code = f"import sys; sys.argv[0] = {name!r}; from {module} import {attr}; sys.exit({attr}())"
    return [sys.executable, "-c", code]


def serves_env_workers() -> bool:
    """Whether the installed verifiers' v1 eval CLI runs rollouts in env-server worker processes by default.

    verifiers 0.3.x does (``--no-serve`` runs them in-process, which spares re-importing verifiers in a
    worker); 0.4 has no such option.
    """
    try:
        major_minor = tuple(int(part) for part in re.findall(r"\d+", version("verifiers"))[:2])
    except PackageNotFoundError:
        return False
    return major_minor < (0, 4)


def eval_arguments(
    base_url: str,
    data_path: Path,
    output_dir: Path,
    *,
    rollouts: int = 1,
    negatives: str = "all",
    num_tasks: int | None = None,
    data_label: str | None = None,
    in_process: bool = False,
) -> list[str]:
    """The eval CLI's arguments for the demo run (after the command itself); ``in_process`` adds ``--no-serve``."""
    args = [
        "drugprot",
        "-m",
        MODEL,
        "--client.base-url",
        base_url,
        "--client.api-key-var",
        KEY_VAR,
        "--no-push",
        "--no-rich",
        "-r",
        str(rollouts),
        "-o",
        str(output_dir),
        "--env.taskset.data-path",
        str(data_path),
        "--env.taskset.negatives",
        str(negatives),
    ]
    if data_label is not None:
        args += ["--env.taskset.data-label", data_label]
    if num_tasks is not None:
        args += ["-n", str(num_tasks)]
    if in_process:
        args.append("--no-serve")
    return args


STOP_GRACE_SECONDS = 5.0
"""How long a stopped eval CLI gets to exit after SIGTERM before its process group is killed."""


def stop_process_group(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_SECONDS) -> None:
    """Stop ``proc`` and everything it started (its own process group): SIGTERM, then SIGKILL after ``grace`` s."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):  # a grandchild that outlived the leader
        os.killpg(proc.pid, signal.SIGKILL)


def run_cli(argv: list[str], env: Mapping[str, str], log_path: Path | None, timeout: float) -> int:
    """Run the eval CLI (output to ``log_path``, or the terminal) and return its exit code.

    It runs in its own process group (so a Ctrl-C at the terminal reaches this process alone, which then decides),
    and this process owns it: on a timeout, a Ctrl-C (``KeyboardInterrupt``) or any other exception here the whole
    group is stopped (``stop_process_group``) before the exception goes on.

    Raises:
        DemoError: it did not finish within ``timeout`` seconds (the message names the log and what it holds).
        KeyboardInterrupt: interrupted; the CLI and its children are stopped.
    """
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(log_path.open("w", encoding="utf-8")) if log_path else None
        proc = subprocess.Popen(
            argv,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT if log else None,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_process_group(proc)
            note = log_note(log_path)
            raise DemoError(f"the eval CLI did not finish in {timeout:.0f} s and was stopped; {note}") from None
        except BaseException:
            with _sigint_ignored():  # a second Ctrl-C must not cut the clean-up short and orphan the group
                stop_process_group(proc)
            raise


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT inside the block (main thread only; elsewhere a no-op)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def log_note(log_path: Path | None) -> str:
    """Where the eval CLI's output is, and whether it printed anything: ``log: PATH (1,234 bytes)``."""
    if log_path is None:
        return "its output is above"
    try:
        size = log_path.stat().st_size
    except OSError:
        return f"log: {log_path} (missing)"
    return f"log: {log_path} ({size:,} bytes)" if size else f"log: {log_path} (empty: the CLI printed nothing yet)"
