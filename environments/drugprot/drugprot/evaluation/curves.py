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
from drugprot.evaluation.plots import pyplot_agg, save_png, short_name

METRICS_FILE = "metrics.jsonl"
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
    if isinstance(step, bool) or not isinstance(step, int | float) or not math.isfinite(step):
        raise MetricsLineError(f"no numeric 'step' (got {str(step)[:40]!r})")
    if step < 0 or step != int(step):
        raise MetricsLineError(f"'step' {step} is not a whole non-negative number")
    values = {
        key: float(value)
        for key, value in row.items()
        if not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    }
    return int(step), values


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

# (panel title, scope filter: "train" or "eval", series names drawn in it)
PANELS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("train reward / utility", "train", ("reward", "utility")),
    ("train accuracy", "train", ("accuracy",)),
    ("train format / answered", "train", ("format", "answered")),
    ("train completion length (tokens)", "train", ("completion tokens",)),
    ("eval accuracy", "eval", ("accuracy",)),
    ("eval reward / utility", "eval", ("reward", "utility")),
)
_STYLES = ("-", "--", ":", "-.")
SMOOTH_FROM = 20  # a curve with more points is drawn faint, under its trailing mean over ``smoothing_window`` steps
_RATES = {"accuracy", "format", "answered"}  # drawn on a fixed 0-1 axis, so runs and panels compare at a glance


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


def curves_figure(runs: Sequence[RunMetrics]) -> Any:
    """Six panels against step (train reward and utility, accuracy, format/answered, completion length; eval
    accuracy, and reward and utility per eval environment), one colour per run."""
    plt = pyplot_agg()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, 3, figsize=(16, 9), squeeze=False)
    colours = plt.get_cmap("tab10").colors
    for ax, (title, scope, names) in zip(axes.flat, PANELS, strict=True):
        drawn = 0
        for k, run in enumerate(runs):
            keys = sorted(key for key in run.curves if key[0].startswith(scope) and key[2] in names)
            for n, key in enumerate(keys):
                steps, values = zip(*run.curves[key], strict=True)
                detail = [] if len(keys) == 1 else [_label(*key)]
                label = " ".join([f"[{k + 1}] {short_name(run.name, 28)}", *detail])
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
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if set(names) <= _RATES:
            ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "not in metrics.jsonl", ha="center", va="center", transform=ax.transAxes, color="grey")
    names_line = "   ".join(f"[{k + 1}] {short_name(run.name, 40)}" for k, run in enumerate(runs))
    fig.suptitle(f"drugprot curves: {names_line}", fontsize=10)
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
    parser.add_argument("--plot", metavar="PATH", help="write the curves of all runs, overlaid, as a PNG")
    parser.add_argument("--json", action="store_true", help="print the last/best table as JSON instead of text")
    parser.epilog = (
        "exit status: 0 read; 2 a run has no metrics.jsonl, an empty one, or no readable line. "
        "Bad lines are skipped, counted and listed, never fatal."
    )


def run(args: argparse.Namespace) -> int:
    try:
        runs = [read_metrics(path) for path in args.runs]
        if args.plot:
            plot_curves(runs, args.plot)
    except (DrugprotError, OSError) as exc:
        print(f"drugprot curves: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        payload = [
            {"name": r.name, "path": str(r.path), "lines": r.lines, "steps": r.steps, "skipped": r.skipped}
            | {"curves": summary(r)}
            for r in runs
        ]
        print(json.dumps(payload[0] if len(payload) == 1 else {"runs": payload}, indent=2))
    else:
        print("\n\n".join(format_table(r) for r in runs))
    if args.plot:
        print(f"wrote the curves to {args.plot}", file=sys.stderr)
    return 0


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
    "smoothing_window",
    "summary",
    "trailing_mean",
]
