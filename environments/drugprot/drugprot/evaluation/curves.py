"""``drugprot curves``: the training curves of prime-rl runs, read from their ``metrics.jsonl``.

The file is prime-rl's file monitor (on by default) at the pinned commit 559b447:
``src/prime_rl/monitors/file.py`` ``FileMonitor.log_metrics`` appends ``{"step": N, "time": t, **metrics}``, one
line per ``monitors.log`` call, to ``<output_dir>/<run.name>/metrics.jsonl``. Trainer and orchestrator share the
file, so one step has several lines (the trainer's perf/optim/loss/time/disk lines, the orchestrator's train line
and one line per eval environment at eval steps; the eval line's ``step`` is a float). Non-finite values are
dropped by prime-rl before writing.

The keys read here are the orchestrator's episode metrics (``src/prime_rl/orchestrator/metrics.py``
``TrainMetrics.to_wandb`` / ``EvalMetrics.to_wandb``; ``Stat.mean`` is the plain mean over the step's rollouts)::

    train/agg/effective/<agent>/reward/mean                  all training envs pooled, the shipped batch
    train/agg/effective/<agent>/rewards/<reward fn>/mean     drugprot: accuracy, utility, format, each x its weight
    train/agg/effective/<agent>/metrics/<metric>/mean        drugprot: answered, correct (the raw accuracy, 0..1),
                                                             official_tp, official_fp, official_fn (the official
                                                             metric's cells; drugprot.core.rewards.METRIC_NAMES)
    train/agg/effective/<agent>/num_output_tokens/mean       completion length in tokens
    train/agg/effective/<agent>/is_trainable/mean            share of rollouts that carry a gradient (TrainMetrics;
    train/agg/effective/<agent>/is_admitted/mean             share admitted to the batch    the sandbox writes both)
    eval/<eval env>/effective/<agent>/...                    the same per eval environment (e.g. drugprot-validation)
    .../metrics/official_f1/mean, .../metrics/none_share/mean the held-out official micro-F1 and N / ``none`` share
                                                             that ``python -m evidence.rl_sim`` (the CPU sandbox) logs

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
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from drugprot.core.errors import DrugprotArgumentError, DrugprotError
from drugprot.core.metrics import check_counts, prf
from drugprot.core.outputs import EXIT_ERROR, EXIT_OK, OutputSpec, check_outputs, error_line, wrote_line
from drugprot.evaluation.curves_plot import plot_curves
from drugprot.evaluation.plots import check_plot_paths, curve_label

METRICS_FILE = "metrics.jsonl"
MAX_STEP = 10**12
"""The largest step read; a line with a larger (or fractional, or negative) step is skipped and counted."""
MAX_VALUE = 1e300
"""The largest magnitude of a metric value read; a line with a larger one (a 400-digit integer) is skipped."""
_MAX_LISTED = 5


class CurvesError(DrugprotError, ValueError):
    """A run's ``metrics.jsonl`` is missing, empty or has no readable line."""


class MetricsLineError(CurvesError):
    """One line of ``metrics.jsonl`` that is not a metrics line (``read_metrics`` skips and lists it)."""


@dataclass(frozen=True)
class Series:
    """One curve: a metric suffix under ``<scope>/effective/<agent>/``."""

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
CELLS: dict[str, str] = {f"metrics/official_{cell}/mean": cell for cell in ("tp", "fp", "fn")}
"""The official cells' keys (``drugprot.core.rewards.METRIC_NAMES``): read, not drawn; ``official_scores`` of
their means are the official F1, precision and recall curves."""
FROM_CELLS = ("official precision", "official recall", "official F1")
"""The curves computed from ``CELLS``, in ``official_scores`` order (at a step that logs the cells, the official F1
from them replaces a logged ``metrics/official_f1``; a step that logs only the latter keeps it, so a run that
switched keys midway keeps every point)."""
_SUFFIXES = {s.suffix: s for s in SERIES if s.name not in FROM_CELLS[:2]}
_KEY = re.compile(r"^(?P<scope>train/agg|eval/[^/]+)/effective/(?P<agent>[^/]+)/(?P<suffix>.+)$")
MAX_ROLLOUTS = 100_000
"""The most rollouts a step's mean is read as a fraction of (``official_scores``)."""

Points = list[tuple[int, float]]


@dataclass
class RunMetrics:
    """A run's curves: ``curves[(scope, agent, series name)]`` = [(step, value)] sorted by step."""

    name: str
    path: Path
    lines: int = 0
    steps: int = 0
    skipped: list[str] = field(default_factory=list)
    curves: dict[tuple[str, str, str], Points] = field(default_factory=dict)


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


def parse_line(raw: bytes) -> tuple[int, dict[str, float]]:
    """The step and numeric metrics of one line.

    Raises:
        MetricsLineError: the line is not a JSON object with a whole, non-negative ``step`` (the message says why).
    """
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MetricsLineError(f"not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise MetricsLineError("JSON nested too deeply") from None
    except ValueError as exc:
        raise MetricsLineError(f"invalid JSON ({str(exc)[:60]}); a partial write?") from None
    if not isinstance(row, dict):
        raise MetricsLineError(f"a JSON {type(row).__name__}, not an object")
    step = row.get("step")
    if isinstance(step, bool) or not isinstance(step, int | float) or (isinstance(step, float) and math.isnan(step)):
        raise MetricsLineError(f"no numeric 'step' (got {str(step)[:40]!r})")
    if not _in_range(step) or not math.isfinite(step) or step < 0 or step != int(step):
        raise MetricsLineError(f"'step' {_shown(step)} is not a whole number from 0 to {MAX_STEP:,}")
    values = {}
    for key, value in row.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not _in_range(value, MAX_VALUE):
            raise MetricsLineError(f"{key[:80]!r} is {_shown(value)}, out of range (magnitude above {MAX_VALUE:g})")
        if not math.isfinite(value):  # prime-rl drops non-finite values before writing; a NaN here means nothing
            continue
        match = _KEY.match(key)
        if match and match["suffix"] in CELLS:
            try:  # the rule official_scores applies (through prf), applied when the line is read
                check_counts(**{CELLS[match["suffix"]]: value})
            except DrugprotArgumentError as exc:
                raise MetricsLineError(f"{key[:80]!r}: {exc}") from None
        values[key] = float(value)
    return int(step), values


def _in_range(number: int | float, limit: float = MAX_STEP) -> bool:
    """``number`` is within ``limit`` in magnitude; a float's inf/NaN passes (the caller decides), an int too
    large for a float never does (comparing it is exact, converting it would raise ``OverflowError``)."""
    if isinstance(number, int):
        return -limit <= number <= limit
    return not math.isfinite(number) or abs(number) <= limit


def _shown(number: int | float) -> str:
    text = str(number)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"


def _fraction(mean: float) -> Fraction:
    """The step mean of a count as the fraction it is: ``S/n`` (``n`` rollouts, ``S`` the summed count) when a
    fraction with ``n <= MAX_ROLLOUTS`` rounds to ``mean`` (it is then the only one: two such fractions differ by at
    least ``1/MAX_ROLLOUTS**2``, far more than a float's rounding), else the float's own value."""
    exact = Fraction(mean)
    near = exact.limit_denominator(MAX_ROLLOUTS)
    return near if float(near) == mean else exact


def official_scores(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """The official micro precision, recall and F1 of a step from the means of its rollouts' official cells.

    Means share the denominator (the step's rollouts), so ``prf`` of the means is ``prf`` of the sums: the micro
    scores of the step's rollouts pooled, as ``drugprot report`` computes them (0 where a denominator is 0). Each
    mean is read back as the fraction it is (``_fraction``), so the result is the correctly rounded value of that
    fraction, bit for bit the report's ``prf`` of the integer sums.
    """
    return tuple(float(value) for value in prf(*map(_fraction, (tp, fp, fn))))  # type: ignore[return-value]


def curves_of(rows: Mapping[int, Mapping[str, float]]) -> dict[tuple[str, str, str], Points]:
    """The ``SERIES`` found in the merged per-step metrics, keyed by (scope, agent, series name); the official
    precision, recall and F1 of each step that logs all three ``CELLS`` (``official_scores``)."""
    curves: dict[tuple[str, str, str], Points] = {}
    derived: dict[tuple[str, str, str], Points] = {}
    for step in sorted(rows):
        cells: dict[tuple[str, str], dict[str, float]] = {}
        for key, value in rows[step].items():
            match = _KEY.match(key)
            if not match:
                continue
            if match["suffix"] in CELLS:
                cells.setdefault((match["scope"], match["agent"]), {})[CELLS[match["suffix"]]] = value
            elif match["suffix"] in _SUFFIXES:
                name = _SUFFIXES[match["suffix"]].name
                curves.setdefault((match["scope"], match["agent"], name), []).append((step, value))
        for (scope, agent), found in cells.items():
            if len(found) == len(CELLS):
                scores = official_scores(found["tp"], found["fp"], found["fn"])
                for name, value in zip(FROM_CELLS, scores, strict=True):
                    derived.setdefault((scope, agent, name), []).append((step, value))
    merged = curves | derived
    for key, points in derived.items():  # a step's F1 from its cells replaces its logged F1; other steps keep theirs
        if key in curves:
            by_step = dict(curves[key]) | dict(points)
            merged[key] = sorted(by_step.items())
    return merged


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
    metrics.curves = curves_of(rows)
    return metrics


def summary(metrics: RunMetrics) -> list[dict[str, Any]]:
    """Per curve: its label, the last value and step, and the best value and step (``None`` for a curve with no
    better direction, like completion length). Ties go to the earliest step."""
    order = {s.name: i for i, s in enumerate(SERIES)}
    rows = []
    for (scope, agent, name), points in sorted(
        metrics.curves.items(), key=lambda item: (item[0][0] != "train/agg", item[0][0], item[0][1], order[item[0][2]])
    ):
        series = next(s for s in SERIES if s.name == name)
        from_cells = metrics.curves.get((scope, agent, FROM_CELLS[0]), [])
        if name in FROM_CELLS and from_cells:  # computed from the cells
            suffix = FROM_CELLS_SUFFIX
            if len(points) > len(from_cells):  # the F1 of earlier steps was logged under the older key
                suffix = f"{series.suffix} + {FROM_CELLS_SUFFIX}"
            series = Series(name, suffix, True)
        last_step, last = points[-1]
        best_step, best = max(points, key=lambda p: (p[1], -p[0])) if series.higher_is_better else (None, None)
        rows.append(
            {
                "curve": curve_label(scope, agent, name),
                "key": f"{scope}/effective/{agent}/{series.suffix}",
                "points": len(points),
                "last": last,
                "last_step": last_step,
                "best": best,
                "best_step": best_step,
            }
        )
    return rows


def _value(value: float | None, step: int | None) -> str:
    return "-" if value is None else f"{value:.3f} ({step})" if abs(value) < 100 else f"{value:.1f} ({step})"


def format_table(metrics: RunMetrics) -> str:
    """The text block of one run: what was read, skipped lines, and last/best per curve."""
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
            "  no reward, official-metric, accuracy, answered or completion-length metrics (train/agg/effective/... "
            "or eval/<env>/effective/...): not an RL run, or the orchestrator logged no step yet"
        )
        return "\n".join(out)
    width = max(len(r["curve"]) for r in rows) + 2
    out.append(f"  {'curve':<{width}}{'last (step)':>18}{'best (step)':>18}{'points':>8}")
    out += [
        f"  {r['curve']:<{width}}{_value(r['last'], r['last_step']):>18}{_value(r['best'], r['best_step']):>18}"
        f"{r['points']:>8}"
        for r in rows
    ]
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
    parser.epilog = (
        f"exit status: 0 read; {EXIT_ERROR} a run has no metrics.jsonl, an empty one, or no readable line, or --plot "
        "is refused (an input, an existing file without --overwrite, a missing or read-only folder). "
        "Bad lines are skipped, counted and listed, never fatal."
    )


def run(args: argparse.Namespace) -> int:
    try:
        plot = None
        if args.plot:  # checked before any reading: a refused path costs nothing and destroys nothing
            inputs = [find_metrics_file(path) for path in args.runs]
            plot = check_outputs([OutputSpec.of("--plot", args.plot)], inputs, overwrite=args.overwrite)[0]
        check_plot_paths(args.plot)  # a bad extension stops before any work
        runs = [read_metrics(path) for path in args.runs]
        if args.plot:
            plot_curves(runs, args.plot)
    except (DrugprotError, OSError) as exc:
        print(error_line("curves", exc), file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        payload = [
            {"name": r.name, "path": str(r.path), "lines": r.lines, "steps": r.steps, "skipped": r.skipped}
            | {"curves": summary(r)}
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
    "METRICS_FILE",
    "SERIES",
    "CurvesError",
    "MetricsLineError",
    "RunMetrics",
    "Series",
    "curves_of",
    "find_metrics_file",
    "format_table",
    "official_scores",
    "parse_line",
    "read_metrics",
    "summary",
]
