"""``drugprot curves``: the training curves of prime-rl runs, read from their ``metrics.jsonl``.

The file is prime-rl's file monitor (on by default) at the pinned commit 559b447:
``src/prime_rl/monitors/file.py`` ``FileMonitor.log_metrics`` appends ``{"step": N, "time": t, **metrics}``, one
line per ``monitors.log`` call, to ``<output_dir>/<run.name>/metrics.jsonl``. Trainer and orchestrator share the
file, so one step has several lines (the trainer's perf/optim/loss/time/disk lines, the orchestrator's train line
and one line per eval environment at eval steps; the eval line's ``step`` is a float). Non-finite values are
dropped by prime-rl before writing.

The keys read here are the orchestrator's episode metrics (``src/prime_rl/orchestrator/metrics.py``
``TrainMetrics.to_wandb`` / ``EvalMetrics.to_wandb``; ``Stat.mean`` is the plain mean over the step's rollouts), each
logged in two scopes (``orchestrator.py`` 654, 697-702)::

    train/agg/all/<agent>/...        every rollout of the step (the batch cut at batch_size, before pruning)
    train/agg/effective/<agent>/...  the traces shipped to the trainer: with train.filter_zero_advantages (the
                                     default) the all-equal groups are gone, so effective is_trainable is 1.0
    eval/<eval env>/{all,effective}/<agent>/...   all eval rollouts / the ones without an error

and under each, ``reward/mean``, ``rewards/<reward fn>/mean`` (drugprot: accuracy, utility, format, each x its
weight), ``metrics/<metric>/mean`` (drugprot: answered, correct = the raw accuracy, official_tp/fp/fn =
``drugprot.core.rewards.METRIC_NAMES``), ``num_output_tokens/mean``, ``is_trainable/mean`` (share of rollouts that
carry a gradient) and ``is_admitted/mean`` (train only); ``metrics/official_f1/mean`` and
``metrics/none_share/mean`` are the CPU sandbox's (``python -m evidence.rl_sim``). Each curve shows the ``all``
value, what a user watches for learning and collapse, with the ``effective`` (trained-on) value beside it where
the two differ (``RunMetrics.effective``); a run that logged one scope only (made before this reader, or by an
older sandbox) is read from it, and says so (``RunMetrics.subsets``). Empty batches log nothing here: the
orchestrator's log tells them (``drugprot.evaluation.curves_log``).

The step's official micro-F1, precision and recall are computed from the means of the three cells
(``official_scores``): F1 = 2·TP / (2·TP + FP + FN) over the means equals it over the sums (one denominator), so
it is the micro-F1 of the step's rollouts pooled, what ``drugprot report`` prints for the same rollouts.

``<agent>`` is the env's agent field name, ``agent`` for drugprot's single-agent env (verifiers a60a606
``AgentInfo.name``). A line that is not a JSON object with a whole ``step`` is skipped and counted, never fatal.
Runs made before the ``reward`` knob log no ``rewards/utility``, runs before the official metrics no cells: those
curves are simply absent. The pictures are ``drugprot.evaluation.curves_plot``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import EXIT_ERROR, EXIT_OK, OutputSpec, check_outputs, error_line, wrote_line
from drugprot.evaluation.curves_log import (
    LogCounts,
    OrchestratorLogError,
    check_log,
    count_log,
    expected_empty_rate,
    find_logs,
    log_lines,
)
from drugprot.evaluation.curves_plot import plot_curves
from drugprot.evaluation.curves_read import (
    CELLS,
    GROUPS_KEY,
    MAX_ROLLOUTS,
    METRIC_KEY,
    SUBSETS,
    CurvesError,
    MetricsLineError,
    official_scores,
    parse_line,
)
from drugprot.evaluation.plots import check_plot_paths, curve_label

METRICS_FILE = "metrics.jsonl"
_MAX_LISTED = 5


@dataclass(frozen=True)
class Series:
    """One curve: a metric suffix under ``<scope>/<subset>/<agent>/``."""

    name: str
    suffix: str
    higher_is_better: bool


FROM_CELLS_SUFFIX = "metrics/official_{tp,fp,fn}/mean"
"""The ``key`` that ``summary`` gives a curve computed from the official cells."""

# The curves, in table order: the one place their keys are named.
SERIES: tuple[Series, ...] = (
    Series("reward", "reward/mean", True),
    Series("accuracy reward", "rewards/accuracy/mean", True),
    Series("utility reward", "rewards/utility/mean", True),
    Series("format reward", "rewards/format/mean", True),
    Series("official F1", "metrics/official_f1/mean", True),
    Series("official precision", FROM_CELLS_SUFFIX, True),
    Series("official recall", FROM_CELLS_SUFFIX, True),
    Series("raw accuracy", "metrics/correct/mean", True),
    Series("answered", "metrics/answered/mean", True),
    Series("N / none share", "metrics/none_share/mean", False),
    Series("trainable share", "is_trainable/mean", False),
    Series("admitted share", "is_admitted/mean", False),
    Series("completion tokens", "num_output_tokens/mean", False),
)
FROM_CELLS = ("official precision", "official recall", "official F1")
"""The curves computed from ``CELLS``, in ``official_scores`` order (at a step that logs the cells, the official F1
from them replaces a logged ``metrics/official_f1``; a step that logs only the latter keeps it, so a run that
switched keys midway keeps every point)."""
_SUFFIXES = {s.suffix: s for s in SERIES if s.name not in FROM_CELLS[:2]}
Points = list[tuple[int, float]]
Curves = dict[tuple[str, str, str], Points]


@dataclass
class RunMetrics:
    """A run's curves: ``curves[(scope, agent, series name)]`` = [(step, value)] sorted by step, from the scope's
    ``subsets[scope]`` (``all`` where logged); ``effective[...]``: the trained-on curve where the run logged both
    scopes; ``groups``: per step, the groups in its batch (``GROUPS_KEY``); ``log``: the orchestrator log's counts
    (``curves_log``), ``None`` without a log."""

    name: str
    path: Path
    lines: int = 0
    steps: int = 0
    skipped: list[str] = field(default_factory=list)
    curves: Curves = field(default_factory=dict)
    effective: Curves = field(default_factory=dict)
    subsets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    groups: dict[int, float] = field(default_factory=dict)
    log: LogCounts | None = None


def find_metrics_file(path: str | os.PathLike[str]) -> Path:
    """``path`` itself when it is a file, else ``path/metrics.jsonl``.

    Raises:
        CurvesError: neither exists.
    """
    given = Path(path)
    if given.is_file():
        return given
    if (given / METRICS_FILE).is_file():
        return given / METRICS_FILE
    raise CurvesError(
        f"{given}: no {METRICS_FILE} here. Pass a prime-rl run directory (<output_dir>/<run.name>, written when the "
        f"file monitor is on, the default) or the {METRICS_FILE} file itself"
    )


def curves_of(rows: Mapping[int, Mapping[str, float]]) -> dict[tuple[str, str, str, str], Points]:
    """The ``SERIES`` found in the merged per-step metrics, keyed by (scope, subset, agent, series name); the
    official precision, recall and F1 of each step that logs all three ``CELLS`` (``official_scores``)."""
    curves: dict[tuple[str, str, str, str], Points] = {}
    derived: dict[tuple[str, str, str, str], Points] = {}
    for step in sorted(rows):
        cells: dict[tuple[str, str, str], dict[str, float]] = {}
        for key, value in rows[step].items():
            match = METRIC_KEY.match(key)
            if not match:
                continue
            where = (match["scope"], match["subset"], match["agent"])
            if match["suffix"] in CELLS:
                cells.setdefault(where, {})[CELLS[match["suffix"]]] = value
            elif match["suffix"] in _SUFFIXES:
                curves.setdefault((*where, _SUFFIXES[match["suffix"]].name), []).append((step, value))
        for where, found in cells.items():
            if len(found) == len(CELLS):
                scores = official_scores(found["tp"], found["fp"], found["fn"])
                for name, value in zip(FROM_CELLS, scores, strict=True):
                    derived.setdefault((*where, name), []).append((step, value))
    merged = curves | derived
    for key, points in derived.items():  # a step's F1 from its cells replaces its logged F1; other steps keep theirs
        if key in curves:
            by_step = dict(curves[key]) | dict(points)
            merged[key] = sorted(by_step.items())
    return merged


def split_scopes(scoped: Mapping[tuple[str, str, str, str], Points]) -> tuple[Curves, Curves, dict[str, tuple]]:
    """The shown curves (``all`` in a scope that logged it, else ``effective``), the trained-on curves beside
    them (only where both were logged), and the subsets each scope logged (``SUBSETS`` order)."""
    subsets = {scope: tuple(s for s in SUBSETS if any(k[:2] == (scope, s) for k in scoped)) for scope, *_ in scoped}
    shown: Curves = {}
    beside: Curves = {}
    for (scope, subset, agent, name), points in scoped.items():
        if subset == subsets[scope][0]:
            shown[(scope, agent, name)] = points
        else:
            beside[(scope, agent, name)] = points
    return shown, beside, subsets


def read_metrics(path: str | os.PathLike[str]) -> RunMetrics:
    """Read a prime-rl ``metrics.jsonl`` (or the run directory holding it); bad lines are skipped and listed.

    Raises:
        CurvesError: no such file, an empty file, or no readable line.
    """
    file = find_metrics_file(path)
    name = file.parent.name if file.name == METRICS_FILE else file.stem
    metrics = RunMetrics(name=name or str(file), path=file)
    rows: dict[int, dict[str, float]] = {}
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            metrics.lines += 1
            try:
                step, values = parse_line(raw)
            except MetricsLineError as exc:
                metrics.skipped.append(f"line {number}: {exc}")
                continue
            rows.setdefault(step, {}).update(values)  # several lines per step: trainer, orchestrator, evals
    if not metrics.lines:
        raise CurvesError(f"{file}: empty; prime-rl writes one line per logged step, so the run logged no step yet")
    if not rows:
        raise CurvesError(
            f"{file}: none of its {metrics.lines} lines is a metrics line ({metrics.skipped[0]}); is it a prime-rl "
            f"{METRICS_FILE}?"
        )
    metrics.steps = len(rows)
    metrics.curves, metrics.effective, metrics.subsets = split_scopes(curves_of(rows))
    metrics.groups = {step: row[GROUPS_KEY] for step, row in rows.items() if GROUPS_KEY in row}
    return metrics


def _curve_row(curves: Curves, scope: str, subset: str, agent: str, name: str) -> dict[str, Any]:
    """One curve's key, points, last value and step, best value and step (``None`` without a better direction)."""
    points = curves[(scope, agent, name)]
    series = next(s for s in SERIES if s.name == name)
    from_cells = curves.get((scope, agent, FROM_CELLS[0]), [])
    if name in FROM_CELLS and from_cells:  # computed from the cells
        suffix = FROM_CELLS_SUFFIX
        if len(points) > len(from_cells):  # the F1 of earlier steps was logged under the older key
            suffix = f"{series.suffix} + {FROM_CELLS_SUFFIX}"
        series = Series(name, suffix, True)
    last_step, last = points[-1]
    best_step, best = max(points, key=lambda p: (p[1], -p[0])) if series.higher_is_better else (None, None)
    return {
        "key": f"{scope}/{subset}/{agent}/{series.suffix}",
        "points": len(points),
        "last": last,
        "last_step": last_step,
        "best": best,
        "best_step": best_step,
    }


def summary(metrics: RunMetrics) -> list[dict[str, Any]]:
    """Per curve: its label, the scope it was read from (``all`` where the run logged it), its key, the last value
    and step, and the best value and step (``None`` for a curve with no better direction, like completion length;
    ties go to the earliest step); where the run logged both scopes, ``effective``: the same of the trained-on
    curve, and ``differs``: whether any of its points differs from the shown curve's."""
    order = {s.name: i for i, s in enumerate(SERIES)}
    rows = []
    for scope, agent, name in sorted(
        metrics.curves, key=lambda key: (key[0] != "train/agg", key[0], key[1], order[key[2]])
    ):
        subset = metrics.subsets[scope][0]
        row = {"curve": curve_label(scope, agent, name), "scope": subset}
        row |= _curve_row(metrics.curves, scope, subset, agent, name)
        if (scope, agent, name) in metrics.effective:
            row["effective"] = _curve_row(metrics.effective, scope, "effective", agent, name)
            row["differs"] = metrics.effective[(scope, agent, name)] != metrics.curves[(scope, agent, name)]
        rows.append(row)
    return rows


def _value(value: float | None, step: int | None) -> str:
    return "-" if value is None else f"{value:.3f} ({step})" if abs(value) < 100 else f"{value:.1f} ({step})"


def scope_lines(metrics: RunMetrics) -> list[str]:
    """What the curves were read from: all rollouts with the effective value beside where both scopes were
    logged, else the one scope a run logged (and what that leaves out)."""
    scopes = sorted(metrics.subsets, key=lambda scope: (scope != "train/agg", scope))
    out = []
    if any(metrics.subsets[scope] == SUBSETS for scope in scopes):
        out.append(
            "  scope: all rollouts; effective last = the trained-on batch (eval: the rollouts without an error), "
            "where it differs"
        )
    for scope in scopes:
        if metrics.subsets[scope] == ("effective",):
            out.append(
                f"  {scope}: effective only (logged before drugprot read both scopes, or by an older sandbox): "
                "without the all-equal groups prime-rl drops"
            )
        elif metrics.subsets[scope] != SUBSETS:
            out.append(f"  {scope}: {metrics.subsets[scope][0]} only")
    return out


def _expected_and_logged(metrics: RunMetrics) -> tuple[float | None, int]:
    """The empty-batch rate the all-rollouts trainable share predicts (``None`` without it or ``progress/tasks``)
    and the number of train batches shipped (steps with a trained-on line)."""
    shares = dict(metrics.curves.get(("train/agg", "agent", "trainable share"), []))
    expected = None
    if metrics.subsets.get("train/agg", ("",))[0] == "all" and shares:
        steps = [step for step in shares if step in metrics.groups]
        expected = expected_empty_rate([1 - shares[s] for s in steps], [metrics.groups[s] for s in steps])
    # the shipped steps: the trained-on scope's (the sandbox logs all rollouts at an empty step too; prime-rl does not)
    shipped = metrics.effective if metrics.subsets.get("train/agg", ("",))[0] == "all" else metrics.curves
    return expected, len(shipped.get(("train/agg", "agent", "reward"), []))


def empty_batches(metrics: RunMetrics) -> dict[str, Any]:
    """``--json``'s empty-batch record: the log's counts (``None`` without a log) and the expected rate."""
    expected, logged = _expected_and_logged(metrics)
    counts = metrics.log
    seen = None
    if counts is not None:
        seen = {"logs": [str(p) for p in counts.paths], "empty": counts.empty, "longest_streak": counts.longest_streak}
        seen |= {"few_trainable_warnings": counts.few_trainable, "stopped": counts.stopped}
        seen["rate"] = counts.empty / (counts.empty + logged) if counts.empty + logged else 0.0
    return {"shipped_steps": logged, "expected_rate": expected, "observed": seen}


def empty_batch_lines(metrics: RunMetrics) -> list[str]:
    """The empty-batch lines: the orchestrator log's counts beside the rate the trainable share predicts."""
    if "train/agg" not in metrics.subsets:
        return []
    expected, logged = _expected_and_logged(metrics)
    return log_lines(metrics.log, logged, expected)


def _beside(row: dict[str, Any]) -> bool:
    """The table shows a curve's effective last value where it differs from the all-rollouts last value."""
    return "effective" in row and row["effective"]["last"] != row["last"]


def format_table(metrics: RunMetrics) -> str:
    """The text block of one run: what was read, skipped lines, the scopes, last/best per curve (the trained-on
    last value beside it where it differs), and the empty train batches."""
    out = [
        f"drugprot curves: {metrics.name}",
        f"  {metrics.path}",
        f"  {metrics.lines} lines, {metrics.steps} steps; skipped {len(metrics.skipped)} bad lines",
    ]
    more = len(metrics.skipped) - _MAX_LISTED
    out += [f"    {s}" for s in metrics.skipped[:_MAX_LISTED]] + [f"    ... and {more} more"] * (more > 0)
    rows = summary(metrics)
    if not rows:
        out.append(
            "  no reward, official-metric, accuracy, answered or completion-length metrics (train/agg/{all,"
            "effective}/... or eval/<env>/{all,effective}/...): not an RL run, or the orchestrator logged no step yet"
        )
        return "\n".join(out)
    out += scope_lines(metrics)
    width = max(len(r["curve"]) for r in rows) + 2
    beside = any(_beside(r) for r in rows)
    head = f"  {'curve':<{width}}{'last (step)':>18}{'best (step)':>18}{'points':>8}"
    out.append(head + (f"{'effective last':>18}" if beside else ""))
    for r in rows:
        line = f"  {r['curve']:<{width}}{_value(r['last'], r['last_step']):>18}{_value(r['best'], r['best_step']):>18}"
        line += f"{r['points']:>8}"
        if _beside(r):
            line += f"{_value(r['effective']['last'], r['effective']['last_step']):>18}"
        out.append(line)
    out += empty_batch_lines(metrics)
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------ CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", nargs="+", metavar="RUN_DIR", help=f"a prime-rl run directory (holding {METRICS_FILE}) or the file"
    )
    parser.add_argument(
        "--plot", metavar="PATH", help="write the curves of all runs, overlaid, as a picture (.png, .jpg, .pdf, .svg)"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the --plot file if it exists (default: refuse before reading; an input is never replaced)",
    )
    parser.add_argument("--json", action="store_true", help="print the last/best table as JSON instead of text")
    parser.add_argument(
        "--log",
        metavar="PATH",
        help="the run's orchestrator log, to count its empty train batches (default: the run directory's "
        "logs/attempt_*/orchestrator.log, or orchestrator.log beside metrics.jsonl); one run only",
    )
    parser.epilog = (
        f"exit status: 0 read; {EXIT_ERROR} a run has no metrics.jsonl, an empty one, or no readable line, or --plot "
        "is refused (an input, an existing file without --overwrite, a missing or read-only folder), or --log is "
        "missing or given with several runs. "
        "Bad lines are skipped, counted and listed, never fatal."
    )


def run(args: argparse.Namespace) -> int:
    try:
        plot = None
        if args.plot:  # checked before any reading: a refused path costs nothing and destroys nothing
            inputs = [find_metrics_file(path) for path in args.runs]
            plot = check_outputs([OutputSpec.of("--plot", args.plot)], inputs, overwrite=args.overwrite)[0]
        check_plot_paths(args.plot)  # a bad extension stops before any work
        if args.log is not None and len(args.runs) > 1:
            raise OrchestratorLogError(f"--log names one run's log; {len(args.runs)} runs given: pass one run")
        logs = [check_log(args.log)] if args.log is not None else None
        runs = [read_metrics(path) for path in args.runs]
        for one in runs:
            paths = logs if logs is not None else find_logs(one.path.parent)
            one.log = count_log(paths) if paths else None
        if args.plot:
            plot_curves(runs, args.plot)
    except (DrugprotError, OSError) as exc:
        print(error_line("curves", exc), file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        payload = [
            {"name": r.name, "path": str(r.path), "lines": r.lines, "steps": r.steps, "skipped": r.skipped}
            | {"subsets": {scope: list(subsets) for scope, subsets in r.subsets.items()}}
            | {"curves": summary(r), "empty_batches": empty_batches(r)}
            for r in runs
        ]
        print(json.dumps(payload[0] if len(payload) == 1 else {"runs": payload}, indent=2))
    else:
        print("\n\n".join(format_table(r) for r in runs))
    if plot is not None:
        print(wrote_line("the curves", plot.path, plot.replaces), file=sys.stderr)
    return EXIT_OK


__all__ = [
    "CELLS",
    "FROM_CELLS",
    "MAX_ROLLOUTS",
    "METRICS_FILE",
    "SERIES",
    "CurvesError",
    "MetricsLineError",
    "RunMetrics",
    "Series",
    "curves_of",
    "empty_batches",
    "find_metrics_file",
    "format_table",
    "official_scores",
    "parse_line",
    "read_metrics",
    "split_scopes",
    "summary",
]
