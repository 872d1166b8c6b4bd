"""``drugprot demo``: the whole evaluation flow offline, with no model, API key or dataset download.

1. Serves the ``lexical`` baseline (``drugprot.evaluation.baselines``) as an OpenAI-compatible streaming endpoint on
   127.0.0.1 (``drugprot.tools.serve.OpenAIServer``). It reads the marked pair from each prompt and replies in
   the environment's format: reasoning in ``<think></think>``, then one ``\\boxed{}`` letter.
2. Runs the real verifiers v1 eval CLI on the package's SYNTHETIC sample set (``drugprot/tools/sample/``):
   ``vf-eval drugprot`` on verifiers 0.4, the ``eval`` script on 0.3.1 (whose ``vf-eval`` is the legacy
   CLI), with ``--env.taskset.data-path <sample> --env.taskset.data-label <what the sample is>
   --client.base-url <local server> --no-push``, and shows the rollouts done as ``traces.jsonl`` grows.
3. Prints ``drugprot report`` of the run (with 95% intervals; ``--plot``/``--plot-classes`` write its charts)
   and keeps the run directory (``outputs/`` by default) for ``drugprot report <run dir>``.

Each rollout is one chat turn sent in-process by the taskset's ``drugprot`` harness, so the demo needs
neither ``uv`` nor PyPI.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path
from typing import Any, TextIO

from drugprot.core.errors import DrugprotError
from drugprot.core.labels import NO_RELATION
from drugprot.core.options import parse_negatives
from drugprot.core.prompts import CHEMICAL_TAGS, GENE_TAGS
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from drugprot.evaluation.baselines import Prediction, fallback_label, lexical_label, reply_text
from drugprot.evaluation.report import (
    V1_FILE,
    Run,
    format_report,
    load_run,
    plot_classes,
    plot_confusion,
    resamples_arg,
    summarize,
)
from drugprot.evaluation.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from drugprot.tools.serve import OpenAIServer, Reply, last_user_text

EVAL_ENTRY_POINT = "verifiers.v1.cli.eval.main:main"
"""The console-script target of verifiers' v1 eval CLI (``vf-eval`` in 0.4.0, ``eval`` in 0.3.1)."""
MODEL = "drugprot-lexical-baseline"
DEFAULT_TASKS = 22
"""Tasks a plain ``drugprot demo`` evaluates: the sample's first five abstracts with ``negatives=all``."""
DEFAULT_OUTPUT_DIR = Path("outputs")
"""Where the run directory goes unless ``--output-dir`` names another place (``vf-eval``'s own default)."""
KEY_VAR = "DRUGPROT_DEMO_API_KEY"
SAMPLE_NAME = "drugprot/tools/sample"
LOG_NAME = "eval-cli.log"
"""The eval CLI's output, kept in the run directory."""
POLL_SECONDS = 0.5
"""How often the progress display re-counts the run's traces."""
_ABSTRACT = re.compile(r"Abstract \(PMID [^)]*\):\n(?P<text>.*?)\n\nChemical: \"(?P<chem>.*?)\"(?P<rest>.*)", re.DOTALL)
_GENE_NAME = re.compile(r"Gene/protein: \"(?P<gene>.*?)\"")


class DemoError(DrugprotError, RuntimeError):
    """The demo could not run (no eval CLI, or the run failed); the message says what to do."""


# ------------------------------------------------------------------------------------------- the "model"


@dataclass(frozen=True, slots=True)
class PromptPair:
    """What the lexical baseline needs from a prompt: the plain text and the two mention spans."""

    text: str
    chemical: tuple[int, int]
    gene: tuple[int, int]
    with_no_relation: bool


def _unmark(marked: str) -> tuple[str, dict[str, int]]:
    """Text without the mention tags, and the plain-text position of each tag."""
    tags = (*CHEMICAL_TAGS, *GENE_TAGS)
    pattern = re.compile("|".join(re.escape(tag) for tag in tags))
    positions: dict[str, int] = {}
    parts, removed, last = [], 0, 0
    for match in pattern.finditer(marked):
        parts.append(marked[last : match.start()])
        positions.setdefault(match.group(0), match.start() - removed)
        removed += len(match.group(0))
        last = match.end()
    parts.append(marked[last:])
    return "".join(parts), positions


def pair_from_prompt(prompt: str) -> PromptPair | None:
    """The abstract and the pair's spans from a DrugProt user prompt (``drugprot.core.prompts.user_prompt``).

    Marked mentions give exact spans; without marks, the first occurrence of each quoted name is used.
    None when the prompt is not a DrugProt prompt or a mention cannot be found.
    """
    match = _ABSTRACT.search(prompt)
    if match is None:
        return None
    with_nr = f"\n{NO_RELATION.letter}. {NO_RELATION.name}" in prompt
    text, tags = _unmark(match.group("text"))
    if all(tag in tags for tag in (*CHEMICAL_TAGS, *GENE_TAGS)):
        chemical = (tags[CHEMICAL_TAGS[0]], tags[CHEMICAL_TAGS[1]])
        gene = (tags[GENE_TAGS[0]], tags[GENE_TAGS[1]])
        return PromptPair(text, chemical, gene, with_nr)
    gene_match = _GENE_NAME.search(match.group("rest"))
    chem_name, gene_name = match.group("chem"), gene_match.group("gene") if gene_match else ""
    chem_at, gene_at = text.find(chem_name), text.find(gene_name)
    if not chem_name or not gene_name or chem_at < 0 or gene_at < 0:
        return None
    return PromptPair(text, (chem_at, chem_at + len(chem_name)), (gene_at, gene_at + len(gene_name)), with_nr)


def lexical_reply(prompt: str) -> str:
    """The lexical baseline's reply to one DrugProt prompt, in the think/boxed format."""
    pair = pair_from_prompt(prompt)
    if pair is None:
        with_nr = f"\n{NO_RELATION.letter}. {NO_RELATION.name}" in prompt
        label = fallback_label(with_nr)
        return reply_text(Prediction(label, f"could not find the marked pair, so {label}"))
    return reply_text(lexical_label(pair.text, pair.chemical, pair.gene, with_no_relation=pair.with_no_relation))


def lexical_responder(body: Mapping[str, Any]) -> Reply:
    """A ``drugprot.tools.serve`` responder: the lexical baseline answering the request's last user message."""
    return Reply(content=lexical_reply(last_user_text(body)))


# ------------------------------------------------------------------------------------------- the sample


@contextlib.contextmanager
def sample_path() -> Iterator[Path]:
    """The packaged synthetic sample file as a real path (``drugprot/tools/sample/drugprot_sample.jsonl``)."""
    resource = importlib.resources.files("drugprot.tools.sample").joinpath("drugprot_sample.jsonl")
    with importlib.resources.as_file(resource) as path:
        if not path.is_file():
            raise DemoError(f"the sample set is missing from the installed package ({path}); reinstall drugprot")
        yield path


@dataclass(frozen=True, slots=True)
class SampleRun:
    """What the demo evaluates: how many abstracts the sample has and how many rollouts the run will make."""

    abstracts: int
    available: int
    """Tasks the sample has with the run's ``negatives``."""
    tasks: int
    """Tasks the run evaluates (after ``num_tasks``)."""
    rollouts: int
    """Rollouts the run makes: ``tasks`` times the rollouts per task."""

    @property
    def label(self) -> str:
        """The ``data_label`` the run records, which the report prints as its data."""
        return sample_label(self.abstracts)


def sample_label(abstracts: int) -> str:
    """How the report names the sample: ``bundled synthetic sample (drugprot/tools/sample, 10 abstracts)``."""
    return f"bundled synthetic sample ({SAMPLE_NAME}, {abstracts} abstracts)"


def plan_sample_run(path: Path, *, negatives: str, num_tasks: int | None, rollouts: int) -> SampleRun:
    """The size of a demo run on the sample at ``path``: the eval CLI evaluates the first ``num_tasks`` tasks.

    Raises:
        DrugprotDataError: the sample does not load (a broken install).
        ValueError: a bad ``negatives``, or ``num_tasks``/``rollouts`` below 1.
    """
    if rollouts < 1 or (num_tasks is not None and num_tasks < 1):
        raise ValueError(f"--rollouts and --num-tasks must be at least 1, got {rollouts} and {num_tasks}")
    documents = load_documents("validation", path)
    tasks = len(build_tasks(documents, negatives=parse_negatives(negatives)))
    selected = tasks if num_tasks is None else min(num_tasks, tasks)
    return SampleRun(abstracts=len(documents), available=tasks, tasks=selected, rollouts=selected * rollouts)


# ------------------------------------------------------------------------------------------- progress


def progress_line(done: int, total: int, seconds: float) -> str:
    """The progress display's text: ``rollouts 13/22 done (59%), 8.1 s``."""
    share = f" ({done / total:.0%})" if total else ""
    return f"rollouts {done}/{total} done{share}, {seconds:.1f} s"


def progress_step(done: int, total: int, steps: int = 4) -> int:
    """Which of ``steps`` equal parts of the run ``done`` rollouts have completed (0 to ``steps``).

    Without a terminal the display prints a line only when this changes, so a log gets a few lines, not one per
    rollout.
    """
    return steps if total <= 0 else min(steps, done * steps // total)


def count_lines(path: Path) -> int:
    """Complete lines in ``path`` (a line still being written is not counted); 0 when it does not exist yet."""
    try:
        with path.open("rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
    except FileNotFoundError:
        return 0


def new_run_files(output_dir: Path, before: set[Path]) -> list[Path]:
    """The run files (``<run dir>/traces.jsonl``) under ``output_dir`` that are not in ``before``, sorted."""
    return sorted(set(output_dir.glob(f"*/{V1_FILE}")) - before)


class Progress:
    """Shows the rollouts done (lines of the new run's ``traces.jsonl``, one per rollout) while the eval CLI runs.

    On a terminal the line is rewritten in place on every change; otherwise a line is printed at each quarter
    of the run. The output always ends with the final count, e.g. ``rollouts 22/22 done (100%), 3.2 s``.
    """

    def __init__(
        self,
        output_dir: Path,
        before: set[Path],
        total: int,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = POLL_SECONDS,
    ) -> None:
        self._output_dir, self._before, self._total = output_dir, before, total
        self._stream, self._clock, self._interval = stream, clock, interval
        self._tty = stream.isatty()
        self._started = clock()
        self._shown: tuple[int, int] | None = None  # (done, step) last printed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="drugprot-demo-progress", daemon=True)

    def start(self) -> Progress:
        self.update()
        self._thread.start()
        return self

    def done(self) -> int:
        """Rollouts written so far (0 until the run file appears)."""
        files = new_run_files(self._output_dir, self._before)
        return count_lines(files[0]) if len(files) == 1 else 0

    def update(self, *, final: bool = False) -> None:
        done = self.done()
        step = progress_step(done, self._total)
        if self._shown is None:
            show = True
        elif self._tty:  # rewritten in place; the final line also ends it
            show = final or done != self._shown[0]
        else:  # one line per quarter, and the final count unless that line was already printed
            show = step != self._shown[1] or (final and done != self._shown[0])
        if show:
            line = progress_line(done, self._total, self._clock() - self._started)
            end = "\n" if final or not self._tty else ""
            self._stream.write(f"\r{line}\033[K{end}" if self._tty else f"{line}{end}")
            self._stream.flush()
            self._shown = (done, step)

    def _poll(self) -> None:
        while not self._stop.wait(self._interval):
            self.update()

    def stop(self) -> None:
        """Stop polling and print the final count."""
        self._stop.set()
        self._thread.join()
        self.update(final=True)


# ------------------------------------------------------------------------------------------- the eval CLI


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


def _run_cli(argv: list[str], env: Mapping[str, str], log_path: Path | None, timeout: float) -> int:
    """Run the eval CLI (output to ``log_path``, or the terminal) and return its exit code.

    It runs in its own process group, so a timeout also stops anything it started.

    Raises:
        DemoError: it did not finish within ``timeout`` seconds.
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
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise DemoError(f"the eval CLI did not finish in {timeout:.0f} s; log: {log_path}") from None


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
        ValueError: a bad ``negatives``, ``num_tasks`` or ``rollouts``.
    """
    started = time.monotonic()
    negatives = str(parse_negatives(negatives))
    command = eval_command()
    output_dir.mkdir(parents=True, exist_ok=True)
    log_path = output_dir / f"drugprot-demo-{os.getpid()}.log"  # moved into the run directory once it exists
    with sample_path() as data_path, OpenAIServer(lexical_responder, port=0, models=(MODEL,)) as server:
        sample = plan_sample_run(data_path, negatives=negatives, num_tasks=num_tasks, rollouts=rollouts)
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
        display = Progress(output_dir, before, sample.rollouts, progress).start() if progress else None
        eval_started = time.monotonic()
        try:
            returncode = _run_cli(argv, {**os.environ, KEY_VAR: "demo"}, None if verbose else log_path, timeout)
        finally:
            if display:
                display.stop()
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


# ------------------------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--negatives",
        default="all",
        help="NO-RELATION candidates of the sample tasks: all (default), k per gold pair, or 0",
    )
    parser.add_argument("-r", "--rollouts", type=int, default=1, help="rollouts per task (default 1)")
    parser.add_argument(
        "-n",
        "--num-tasks",
        type=int,
        default=DEFAULT_TASKS,
        help=f"evaluate the first N tasks (default {DEFAULT_TASKS}: the first five abstracts)",
    )
    parser.add_argument("--all", action="store_true", help="evaluate every task of the sample (43 with negatives=all)")
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=DEFAULT_OUTPUT_DIR,
        metavar="DIR",
        help=f"the eval CLI writes the run directory here (default {DEFAULT_OUTPUT_DIR}/); it is kept",
    )
    parser.add_argument(
        "--bootstrap",
        type=resamples_arg,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"resamples of the tasks for the 95%% intervals (default {DEFAULT_RESAMPLES}; 0: none)",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, metavar="S", help=f"seed of the bootstrap (default {DEFAULT_SEED})"
    )
    parser.add_argument("--plot", metavar="PATH", help="write the run's confusion matrix as a PNG (needs matplotlib)")
    parser.add_argument(
        "--plot-classes",
        metavar="PATH",
        help="write the run's per-class precision/recall/F1 bars as a PNG (needs matplotlib)",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to allow the eval CLI (default 600)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the eval CLI's own output as it runs (instead of the rollout count)",
    )


def report_command(run_dir: str, args: argparse.Namespace) -> str:
    """The ``drugprot report`` command that reports the kept run again with the demo's options."""
    parts = ["drugprot", "report", run_dir]
    if args.bootstrap != DEFAULT_RESAMPLES:
        parts += ["--bootstrap", str(args.bootstrap)]
    if args.seed != DEFAULT_SEED:
        parts += ["--seed", str(args.seed)]
    return " ".join(parts) + " [--plot PNG] [--plot-classes PNG] [--json]"


def shown_path(path: str | Path) -> str:
    """``path`` relative to the working directory when it lies under it (shorter to read and paste), else as is."""
    absolute = Path(path).absolute()
    with contextlib.suppress(ValueError):
        return str(absolute.relative_to(Path.cwd()))
    return str(path)


def footer(result: DemoRun, args: argparse.Namespace, written: Sequence[str]) -> list[str]:
    """What the demo prints after the report: files written, time, the kept run and how to report it again."""
    shown = [shown_path(part) if os.path.isabs(part) else part for part in result.command]
    return [
        "",
        *written,
        f"demo: {result.sample.rollouts} rollouts in {result.seconds:.1f} s, {result.eval_seconds:.1f} s of them in "
        "the eval CLI",
        f"run kept in {result.run_dir} (with the CLI's log, {LOG_NAME}); report it again with:",
        f"  {report_command(result.run_dir, args)}",
        f"ran: {shlex.join(shown)}",
        *(
            [f"`drugprot demo --all` evaluates all {result.sample.available} tasks of the sample."]
            if result.run.config.limit
            else []
        ),
        "The data is SYNTHETIC (drugprot/tools/sample/README.md) and the 'model' is the lexical baseline: the numbers "
        "show the flow, not DrugProt performance.",
    ]


def write_plots(report: Mapping[str, Any], args: argparse.Namespace) -> list[str]:
    """Write the charts ``--plot``/``--plot-classes`` ask for; return what was written.

    Raises:
        ReportError: matplotlib is not installed (the ``drugprot[report]`` extra).
    """
    written = []
    if args.plot:
        plot_confusion([report], args.plot)
        written.append(f"wrote the confusion matrix to {args.plot}")
    if args.plot_classes:
        plot_classes([report], args.plot_classes)
        written.append(f"wrote the per-class chart to {args.plot_classes}")
    return written


def run(args: argparse.Namespace) -> int:
    if not args.json:
        print(
            f"drugprot demo: serving the lexical baseline on 127.0.0.1 and running the eval CLI on the bundled "
            f"synthetic sample (negatives={args.negatives}) ...",
            file=sys.stderr,
            flush=True,
        )
    try:
        result = run_demo(
            args.output_dir,
            rollouts=args.rollouts,
            negatives=args.negatives,
            num_tasks=None if args.all else args.num_tasks,
            timeout=args.timeout,
            verbose=args.verbose,
            progress=None if args.verbose else sys.stderr,
        )
    except (DrugprotError, ValueError, OSError) as exc:
        print(f"drugprot demo: error: {exc}", file=sys.stderr)
        return 1
    report = summarize(result.run, resamples=args.bootstrap, seed=args.seed)
    try:
        written = write_plots(report, args)
    except (DrugprotError, OSError) as exc:
        print(
            f"drugprot demo: error: {exc}\nrun kept in {result.run_dir}: {report_command(result.run_dir, args)}",
            file=sys.stderr,
        )
        return 1
    if args.json:
        demo = {
            "run_dir": result.run_dir,
            "command": result.command,
            "seconds": result.seconds,
            "eval_seconds": result.eval_seconds,
            "plots": [p for p in (args.plot, args.plot_classes) if p],
        }
        print(json.dumps({**report, "demo": demo}, indent=2, allow_nan=False))
        print("\n".join(footer(result, args, written)), file=sys.stderr)
    else:
        print(format_report(report))
        print("\n".join(footer(result, args, written)))
    return 0


__all__ = [
    "DEFAULT_OUTPUT_DIR",
    "DemoError",
    "DemoRun",
    "Progress",
    "PromptPair",
    "SampleRun",
    "count_lines",
    "eval_arguments",
    "eval_command",
    "lexical_reply",
    "lexical_responder",
    "new_run_files",
    "pair_from_prompt",
    "plan_sample_run",
    "progress_line",
    "progress_step",
    "report_command",
    "run_demo",
    "sample_label",
    "sample_path",
    "serves_env_workers",
]
