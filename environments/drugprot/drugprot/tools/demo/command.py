"""``drugprot demo``: its arguments, the report it prints and the footer that says where the run is kept."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from drugprot.core.errors import DrugprotConfigError, DrugprotError
from drugprot.core.options import TaskOptions
from drugprot.core.outputs import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CheckedOutput,
    OutputSpec,
    check_folder_output,
    check_outputs,
    error_line,
    wrote_line,
)
from drugprot.evaluation.plots import check_plot_paths, plot_classes, plot_confusion
from drugprot.evaluation.report import resamples_arg, seed_arg
from drugprot.evaluation.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from drugprot.modes.pair.render import format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.demo.runner import LOG_NAME, DemoRun, run_demo
from drugprot.tools.demo.sample_run import plan_sample_run, sample_path

DEFAULT_TASKS = 22
"""Tasks a plain ``drugprot demo`` evaluates: the sample's first five abstracts with ``negatives=all``."""
MAX_ROLLOUTS = 2000
"""The most rollouts (tasks x ``-r``) a demo runs. The demo shows the flow on a 10-abstract synthetic sample; 344
rollouts (``--all -r 8``) took 41 s of wall time on a loaded 2-core machine, so 2,000 end well inside the default
``--timeout`` of 600 s, where an unbounded ``-r`` (10^12) completed no rollout and waited the timeout out."""
DEFAULT_OUTPUT_DIR = Path("outputs")
"""Where the run directory goes unless ``--output-dir`` names another place (``vf-eval``'s own default)."""
TRAINING_LINES_NOTE = (
    "  (--full adds the lines that plan RL training on a real model's run: the calibration, the step-0 forecast and "
    "the eval size's power)"
)
"""What the demo's report shows in place of the report's training lines, unless ``--full``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--negatives",
        default="all",
        help="NO-RELATION candidates of the sample tasks: all (default), k per gold pair, or 0",
    )
    parser.add_argument(
        "-r",
        "--rollouts",
        type=int,
        default=1,
        help=f"rollouts per task (default 1; {MAX_ROLLOUTS:,} rollouts in all at most)",
    )
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
        help=f"resamples of the abstracts (each with all its tasks and rollouts) for the 95%% intervals "
        f"(default {DEFAULT_RESAMPLES}; 0: none)",
    )
    parser.add_argument(
        "--bootstrap-seed",
        type=seed_arg,
        default=DEFAULT_SEED,
        metavar="S",
        help=f"seed of the bootstrap (default {DEFAULT_SEED})",
    )
    parser.add_argument("--seed", dest="bootstrap_seed", type=seed_arg, default=DEFAULT_SEED, help=argparse.SUPPRESS)
    parser.add_argument("--plot", metavar="PATH", help="write the run's confusion matrix as a PNG (needs matplotlib)")
    parser.add_argument(
        "--plot-classes",
        metavar="PATH",
        help="write the run's per-class precision/recall/F1 bars as a PNG (needs matplotlib)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace --plot/--plot-classes files that exist (default: refuse)"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to allow the eval CLI (default 600)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "--full",
        action="store_true",
        help="the report's training lines too (calibration, step-0 forecast, power), as drugprot report prints them",
    )
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
    if args.bootstrap_seed != DEFAULT_SEED:
        parts += ["--bootstrap-seed", str(args.bootstrap_seed)]
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


def write_plots(
    report: Mapping[str, Any], args: argparse.Namespace, outputs: Mapping[str, CheckedOutput] | None = None
) -> list[str]:
    """Write the charts ``--plot``/``--plot-classes`` ask for; return what was written.

    ``outputs``: ``check_options``'s checked outputs by flag, for the line that says a file was replaced.

    Raises:
        ReportError: matplotlib is not installed (the ``drugprot[report]`` extra).
    """
    outputs = outputs or {}
    written = []
    for flag, path, draw, what in (
        ("--plot", args.plot, plot_confusion, "the confusion matrix"),
        ("--plot-classes", args.plot_classes, plot_classes, "the per-class chart"),
    ):
        if path:
            draw([report], path)
            written.append(wrote_line(what, path, (checked := outputs.get(flag)) is not None and checked.replaces))
    return written


def check_options(args: argparse.Namespace) -> dict[str, CheckedOutput]:
    """Check every option before the banner and any work: the run's size and ``--negatives``, ``--output-dir`` and
    the ``--plot``/``--plot-classes`` files (``drugprot.core.outputs``; the sample file is the input).

    Raises:
        DrugprotConfigError: a bad ``--negatives``, ``--num-tasks``, ``--rollouts`` or ``--timeout``, or more than
            ``MAX_ROLLOUTS`` rollouts in all.
        OutputError: an output the policy refuses.
    """
    TaskOptions(negatives=args.negatives)
    if args.rollouts < 1 or (not args.all and args.num_tasks < 1):
        knob = "rollouts" if args.rollouts < 1 else "num_tasks"
        raise DrugprotConfigError(
            f"--rollouts and --num-tasks must be at least 1, got {args.rollouts} and {args.num_tasks}", knob=knob
        )
    if not args.timeout > 0:
        raise DrugprotConfigError(f"--timeout must be a positive number of seconds, got {args.timeout}", knob="timeout")
    with sample_path() as sample:
        inputs = [sample]
        plan = plan_sample_run(sample, negatives=args.negatives, num_tasks=None, rollouts=1)
        if not args.all and args.num_tasks > plan.available:
            raise DrugprotConfigError(
                f"-n {args.num_tasks} is more than the {plan.available} tasks the sample has with "
                f"negatives={args.negatives}: give -n {plan.available} or less, or --all",
                knob="num_tasks",
            )
    tasks = plan.available if args.all else args.num_tasks
    if tasks * args.rollouts > MAX_ROLLOUTS:
        per = f"{tasks} task{'s' if tasks != 1 else ''} x {args.rollouts}"
        raise DrugprotConfigError(
            f"-r {args.rollouts} makes {tasks * args.rollouts:,} rollouts ({per}), more than the demo's "
            f"{MAX_ROLLOUTS:,}: give -r {max(1, MAX_ROLLOUTS // tasks)} or less (the demo shows the flow; "
            "for a larger run, serve a baseline with `drugprot serve` and run the eval CLI)",
            knob="rollouts",
        )
    check_folder_output("--output-dir", args.output_dir, inputs)
    named = (("--plot", args.plot), ("--plot-classes", args.plot_classes))
    checked = check_outputs([OutputSpec.of(f, p) for f, p in named if p], inputs, overwrite=args.overwrite)
    return {c.flag: c for c in checked}


def run(args: argparse.Namespace) -> int:
    try:
        outputs = check_options(args)
        check_plot_paths(args.plot, args.plot_classes)  # a bad extension or no matplotlib stops before the run
    except DrugprotError as exc:
        print(error_line("demo", exc), file=sys.stderr)
        return EXIT_ERROR
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
    except (DrugprotError, OSError) as exc:
        print(error_line("demo", exc), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("drugprot demo: interrupted; the eval CLI was stopped and its unfinished run removed", file=sys.stderr)
        return EXIT_INTERRUPTED
    try:
        return _score(result, args, outputs)
    except KeyboardInterrupt:  # the run is finished and kept: say where, and how to report it
        print(interrupted_scoring_line(result, args), file=sys.stderr)
        return EXIT_INTERRUPTED


def interrupted_scoring_line(result: DemoRun, args: argparse.Namespace) -> str:
    """The one line of a Ctrl-C after the eval CLI finished: the run it wrote is whole and kept; where, and the
    command that reports it (a picture is written whole or not at all, ``save_png``)."""
    return (
        f"drugprot demo: interrupted while scoring; the finished run of {len(result.run.rollouts)} rollouts is kept in "
        f"{result.run_dir}; report it with: {report_command(result.run_dir, args)}"
    )


def _score(result: DemoRun, args: argparse.Namespace, outputs: Mapping[str, CheckedOutput]) -> int:
    """Report the finished run: the text report (or JSON), its pictures and the footer."""
    if not args.json:
        print(f"scoring: the report of {len(result.run.rollouts)} rollouts ...", file=sys.stderr, flush=True)
    report = summarize(result.run, resamples=args.bootstrap, seed=args.bootstrap_seed)
    try:
        written = write_plots(report, args, outputs)
    except (DrugprotError, OSError) as exc:
        print(
            f"{error_line('demo', exc)}\nrun kept in {result.run_dir}: {report_command(result.run_dir, args)}",
            file=sys.stderr,
        )
        return EXIT_ERROR
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
        print(format_report(report, instead_of_training_lines=None if args.full else TRAINING_LINES_NOTE))
        print("\n".join(footer(result, args, written)))
    return EXIT_OK
