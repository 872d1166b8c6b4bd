"""``drugprot curves``: the training curves of prime-rl runs, read from their ``metrics.jsonl``.

The file is prime-rl's file monitor (on by default) at the pinned commit 559b447:
``src/prime_rl/monitors/file.py`` ``FileMonitor.log_metrics`` appends ``{"step": N, "time": t, **metrics}``, one
line per ``monitors.log`` call, to ``<output_dir>/<run.name>/metrics.jsonl``. Trainer and orchestrator share the
file, so one step has several lines (the trainer's perf/optim/loss/time/disk lines, the orchestrator's train line
and one line per eval environment at eval steps; the eval line's ``step`` is a float). Non-finite values are
dropped by prime-rl before writing.

The keys read here are the orchestrator's episode metrics (``src/prime_rl/orchestrator/metrics.py``
``TrainMetrics.to_wandb`` / ``EvalMetrics.to_wandb``)::

    train/agg/effective/<agent>/reward/mean                  all training envs pooled, the shipped batch
    train/agg/effective/<agent>/rewards/<reward fn>/mean     drugprot: accuracy, utility, format
    train/agg/effective/<agent>/metrics/<metric>/mean        drugprot: answered
    train/agg/effective/<agent>/num_output_tokens/mean       completion length in tokens
    eval/<eval env>/effective/<agent>/...                    the same per eval environment (e.g. drugprot-validation)
    .../metrics/official_f1/mean, .../metrics/none_share/mean the held-out official micro-F1 and N / ``none`` share
                                                             that ``python -m bench.rl_sim`` (the CPU sandbox) logs

``<agent>`` is the env's agent field name, ``agent`` for drugprot's single-agent env (verifiers a60a606
``AgentInfo.name``). A line that is not a JSON object with a whole ``step`` is skipped and counted, never fatal.
Runs made before the ``reward`` knob log no ``rewards/utility``: their utility curve is simply absent.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import EXIT_ERROR, EXIT_OK, OutputSpec, check_outputs, error_line, wrote_line
from drugprot.evaluation.plots import check_plot_paths, pyplot_agg, save_png, short_name

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


# The curves, in table and panel order: the one place their keys are named.
SERIES: tuple[Series, ...] = (
    Series("reward", "reward/mean", True),
    Series("accuracy", "rewards/accuracy/mean", True),
    Series("utility", "rewards/utility/mean", True),
    Series("format", "rewards/format/mean", True),
    Series("answered", "metrics/answered/mean", True),
    Series("completion tokens", "num_output_tokens/mean", False),
    Series("official F1", "metrics/official_f1/mean", True),
    Series("N / none share", "metrics/none_share/mean", False),
)
_SUFFIXES = {s.suffix: s for s in SERIES}
_KEY = re.compile(r"^(?P<scope>train/agg|eval/[^/]+)/effective/(?P<agent>[^/]+)/(?P<suffix>.+)$")

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
        if math.isfinite(value):  # prime-rl drops non-finite values before writing; a NaN here means nothing
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


def curves_of(rows: Mapping[int, Mapping[str, float]]) -> dict[tuple[str, str, str], Points]:
    """The ``SERIES`` found in the merged per-step metrics, keyed by (scope, agent, series name)."""
    curves: dict[tuple[str, str, str], Points] = {}
    for step in sorted(rows):
        for key, value in rows[step].items():
            match = _KEY.match(key)
            if match and match["suffix"] in _SUFFIXES:
                name = _SUFFIXES[match["suffix"]].name
                curves.setdefault((match["scope"], match["agent"], name), []).append((step, value))
    return curves


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


def _label(scope: str, agent: str, series: str) -> str:
    where = "train" if scope == "train/agg" else scope
    return f"{where} {series}" + ("" if agent == "agent" else f" ({agent})")


def summary(metrics: RunMetrics) -> list[dict[str, Any]]:
    """Per curve: its label, the last value and step, and the best value and step (``None`` for a curve with no
    better direction, like completion length). Ties go to the earliest step."""
    order = {s.name: i for i, s in enumerate(SERIES)}
    rows = []
    for (scope, agent, name), points in sorted(
        metrics.curves.items(), key=lambda item: (item[0][0] != "train/agg", item[0][0], item[0][1], order[item[0][2]])
    ):
        series = next(s for s in SERIES if s.name == name)
        last_step, last = points[-1]
        best_step, best = max(points, key=lambda p: (p[1], -p[0])) if series.higher_is_better else (None, None)
        rows.append(
            {
                "curve": _label(scope, agent, name),
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
            "  no reward, accuracy, utility, format, answered or completion-length metrics (train/agg/effective/... or "
            "eval/<env>/effective/...): not an RL run, or the orchestrator logged no step yet"
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


# ------------------------------------------------------------------------------------------------ plot

# (panel title, scope filter: "train" or "eval", series names drawn in it), in figure order: two rows, train above
# eval, so each column holds one kind of number (reward, accuracy) and its two panels share the y-range.
PANELS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("train reward / utility", "train", ("reward", "utility")),
    ("train accuracy", "train", ("accuracy",)),
    ("train format / answered", "train", ("format", "answered")),
    ("eval reward / utility", "eval", ("reward", "utility")),
    ("eval accuracy / official F1", "eval", ("accuracy", "official F1", "N / none share")),
    ("train completion length (tokens)", "train", ("completion tokens",)),
)
_STYLES = ("-", "--", ":", "-.")
SMOOTH_FROM = 20  # a curve with more points is drawn faint, under its trailing mean over ``smoothing_window`` steps
_RATES = {
    "accuracy",
    "format",
    "answered",
    "official F1",
    "N / none share",
}  # drawn on a fixed 0-1 axis, so runs and panels compare at a glance


def smoothing_window(points: int) -> int:
    """The trailing-mean window for a curve of ``points`` points: 1 (none) up to ``SMOOTH_FROM``, else 2% of the
    points and at least 5."""
    return 1 if points <= SMOOTH_FROM else max(5, points // 50)


def trailing_mean(values: Sequence[float], window: int) -> list[float]:
    """Mean of each value and the ``window - 1`` before it (fewer at the start)."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def shared_range(values: Sequence[float], pad: float = 0.05) -> tuple[float, float] | None:
    """The y-range that shows every value of the panels of one kind, padded by ``pad`` of its span; None if empty."""
    if not values:
        return None
    low, high = min(values), max(values)
    margin = (high - low) * pad or max(abs(high) * pad, 0.05)
    return low - margin, high + margin


def _kind(names: Sequence[str]) -> str:
    """The kind of number a panel shows: rates share the fixed 0-1 axis, rewards share one range."""
    return "rate" if set(names) <= _RATES else "+".join(names)


def curves_figure(runs: Sequence[RunMetrics]) -> Any:
    """Six panels against step, one colour per run: train reward (and utility), accuracy and format/answered above
    eval reward (and utility) and accuracy (per eval environment) and completion length. Every panel shares the step
    axis; the panels of one kind of number share the y-range (rates 0-1; train and eval reward one range)."""
    plt = pyplot_agg()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, 3, figsize=(16, 9), sharex=True, squeeze=False)
    drawn_values: dict[str, list[float]] = {}
    colours = plt.get_cmap("tab10").colors
    for ax, (title, scope, names) in zip(axes.flat, PANELS, strict=True):
        drawn = 0
        for k, run in enumerate(runs):
            keys = sorted(key for key in run.curves if key[0].startswith(scope) and key[2] in names)
            for n, key in enumerate(keys):
                steps, values = zip(*run.curves[key], strict=True)
                drawn_values.setdefault(_kind(names), []).extend(values)  # the faint raw curve must fit too
                detail = [] if len(keys) == 1 else [_label(*key)]
                label = " ".join([f"[{k + 1}] {short_name(run.name, 36)}", *detail])
                style, colour = _STYLES[n % len(_STYLES)], colours[k % len(colours)]
                window = smoothing_window(len(steps))
                if window > 1:
                    ax.plot(steps, values, style, color=colour, alpha=0.25, linewidth=0.8)
                    values, label = trailing_mean(values, window), f"{label} (mean of {window})"
                ax.plot(
                    steps,
                    values,
                    style,
                    color=colour,
                    marker="o" if len(steps) <= 30 else None,
                    markersize=3,
                    label=label,
                )
                drawn += 1
        ax.set_title(title, fontsize=11)
        ax.tick_params(labelsize=9, labelbottom=True)  # shared x: keep the step labels on the top row too
        ax.set_xlabel("step", fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, "not in metrics.jsonl", ha="center", va="center", transform=ax.transAxes, color="grey")
    for ax, (_, _, names) in zip(axes.flat, PANELS, strict=True):
        kind = _kind(names)
        y_range = (-0.03, 1.03) if kind == "rate" else shared_range(drawn_values.get(kind, []))
        if y_range is not None:
            ax.set_ylim(*y_range)
    # The title names each run whole (up to 100 characters), one per line: the legends only have room for the index
    # and a shortened name, and what tells two runs apart is often in the middle (lr, rank, seed).
    names = "\n".join(f"[{k + 1}] {short_name(run.name, 100)}" for k, run in enumerate(runs))
    fig.suptitle(f"drugprot curves\n{names}", fontsize=11)
    fig.tight_layout()
    return fig


def plot_curves(runs: Sequence[RunMetrics], path: str | os.PathLike[str]) -> None:
    """Write ``curves_figure`` as a PNG (atomically; needs matplotlib, the ``drugprot[report]`` extra)."""
    save_png(curves_figure(runs), path)


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
    "METRICS_FILE",
    "PANELS",
    "SERIES",
    "CurvesError",
    "MetricsLineError",
    "RunMetrics",
    "Series",
    "curves_figure",
    "curves_of",
    "find_metrics_file",
    "format_table",
    "parse_line",
    "plot_curves",
    "read_metrics",
    "shared_range",
    "smoothing_window",
    "summary",
    "trailing_mean",
]
