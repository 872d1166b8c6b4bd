"""The picture of ``drugprot curves`` (matplotlib, the ``drugprot[report]`` extra): the curves of one or several
prime-rl runs (``drugprot.evaluation.curves``) against step.

One row per scope (train above eval), one panel per kind of number, only where some run logged it (``PANELS``):

* reward: the total reward and the reward terms as prime-rl logs them (each term times its weight);
* official F1 / raw accuracy: the step's official micro-F1, precision and recall (from the official cells, or the
  sandbox's logged F1) and the raw accuracy ``correct``, on a fixed 0-1 axis;
* answered / shares: the answered share, the N / ``none`` share (the sandbox), and prime-rl's shares of rollouts that
  carry a gradient (``is_trainable``) and that were admitted (``is_admitted``), 0-1;
* completion length (tokens).

Colour is the run, line style and marker the curve (``_STYLES``, ``_MARKERS``: distinct dash patterns, and
markers that tell the short or thin ones apart). The legends stay off the data: the runs (one per line, a long name
shortened only at segment boundaries, ``plots.short_name``) under the panels, and above each panel with several
curves the legend of its line styles. A reward or length panel whose runs differ more than ``SCALE_GAP`` times in
magnitude (pair vs extraction utility) is split into one panel per scale, so the small range is not flattened.
Panels of one kind and the same runs share the y-range, train and eval alike; every panel shares the step range. A
curve with more than ``SMOOTH_FROM`` points is drawn faint under its trailing mean.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from drugprot.evaluation.plots import curve_label, pyplot_agg, save_png, short_name


class RunMetrics(Protocol):
    """What a picture reads of a run (``drugprot.evaluation.curves.RunMetrics``, which imports this module)."""

    name: str
    curves: dict[tuple[str, str, str], list[tuple[int, float]]]


@dataclass(frozen=True)
class Panel:
    """A kind of number in one scope: ``scope`` ``train`` or ``eval``, the ``curves.SERIES`` names it draws."""

    title: str
    scope: str
    names: tuple[str, ...]
    rate: bool
    """Drawn on the fixed 0-1 axis (never split by scale)."""


_KINDS = (
    ("reward", ("reward", "utility reward", "accuracy reward", "format reward"), False),
    ("official F1 / raw accuracy", ("official F1", "official precision", "official recall", "raw accuracy"), True),
    ("answered / shares", ("answered", "N / none share", "trainable share", "admitted share"), True),
    ("completion length (tokens)", ("completion tokens",), False),
)
PANELS: tuple[Panel, ...] = tuple(
    Panel(f"{scope} {title}", scope, names, rate) for scope in ("train", "eval") for title, names, rate in _KINDS
)
_STYLES: tuple[Any, ...] = ("-", "--", ":", "-.", (0, (6, 1.5, 1, 1.5, 1, 1.5)))  # the last: dash-dot-dot
_MARKERS = ("o", "s", "^", "D", "v")
"""One marker per curve beside its line style (same index): dotted and dash-dot lines look alike when short or
thin; their markers never do. Drawn on every point up to ``MARKED_POINTS`` points, then on about that many."""
MARKED_POINTS = 30
SMOOTH_FROM = 20  # a curve with more points is drawn faint, under its trailing mean over ``smoothing_window`` steps
SCALE_GAP = 5.0
"""Runs whose largest values in a panel differ more than this many times are drawn in separate panels."""


def smoothing_window(points: int) -> int:
    """The trailing-mean window for a curve of ``points`` points: 1 (none) up to ``SMOOTH_FROM``, else 2% of the
    points and at least 5."""
    return 1 if points <= SMOOTH_FROM else max(5, points // 50)


def trailing_mean(values: Sequence[float], window: int) -> list[float]:
    """Mean of each value and the ``window - 1`` before it (fewer at the start), each window summed afresh
    (``math.fsum``): a running total would lose the small values next to a huge one (1e17) for good."""
    return [math.fsum(values[max(0, i + 1 - window) : i + 1]) / min(i + 1, window) for i in range(len(values))]


def shared_range(values: Sequence[float], pad: float = 0.05) -> tuple[float, float] | None:
    """The y-range that shows every value of the panels of one kind, padded by ``pad`` of its span; None if empty."""
    if not values:
        return None
    low, high = min(values), max(values)
    margin = (high - low) * pad or max(abs(high) * pad, 0.05)
    return low - margin, high + margin


def scale_groups(magnitudes: Sequence[float], gap: float = SCALE_GAP) -> list[list[int]]:
    """Indices of ``magnitudes`` (each run's largest absolute value in a panel) grouped by scale: sorted, a new
    group starts where a magnitude exceeds ``gap`` times the smallest of the current group; a run of zeros joins
    the smallest scale. Groups in order of scale, indices ascending."""
    groups: list[list[int]] = []
    start = 0.0
    zeros = [i for i, size in enumerate(magnitudes) if size <= 0]
    for index in sorted((i for i, size in enumerate(magnitudes) if size > 0), key=lambda i: (magnitudes[i], i)):
        if not groups or magnitudes[index] > gap * start:
            groups.append([])
            start = magnitudes[index]
        groups[-1].append(index)
    if zeros:
        groups = [zeros + group for group in groups[:1]] + groups[1:] if groups else [zeros]
    return [sorted(group) for group in groups]


@dataclass
class _Drawn:
    """One panel to draw: its kind, title, the runs in it and their curves."""

    panel: Panel
    title: str
    runs: list[int]
    keys: list[tuple[str, str, str]]
    """The distinct curves (scope, agent, series) of the panel, in line-style order."""


def _panels(runs: Sequence[RunMetrics]) -> list[_Drawn]:
    """The panels that have data, each split by scale where its runs' magnitudes differ (``scale_groups``)."""
    drawn = []
    for panel in PANELS:
        present = [
            [key for key in run.curves if key[0].startswith(panel.scope) and key[2] in panel.names] for run in runs
        ]
        with_data = [k for k, keys in enumerate(present) if keys]
        if not with_data:
            continue
        if panel.rate:
            groups = [with_data]
        else:
            sizes = [max(abs(v) for key in present[k] for _, v in runs[k].curves[key]) for k in with_data]
            groups = [[with_data[i] for i in group] for group in scale_groups(sizes)]
        for group in groups:
            keys = sorted(
                {key for k in group for key in present[k]}, key=lambda key: (panel.names.index(key[2]), key[0], key[1])
            )
            shown = list(dict.fromkeys(key[2] for key in keys))
            title = f"{panel.scope} {shown[0]}" if len(shown) == 1 < len(panel.names) else panel.title  # what it is
            suffix = " · runs " + " ".join(f"[{k + 1}]" for k in group) if len(groups) > 1 else ""
            drawn.append(_Drawn(panel, title + suffix, group, keys))
    return drawn


def _draw(ax: Any, item: _Drawn, runs: Sequence[RunMetrics], colours: Sequence[Any]) -> list[float]:
    """Draw one panel's curves; returns every value drawn (for the shared y-range)."""
    values_drawn: list[float] = []
    for k in item.runs:
        for key in item.keys:
            if key not in runs[k].curves:
                continue
            steps, values = zip(*runs[k].curves[key], strict=True)
            values_drawn.extend(values)
            index, colour = item.keys.index(key), colours[k % len(colours)]
            style, marker = _STYLES[index % len(_STYLES)], _MARKERS[index % len(_MARKERS)]
            window = smoothing_window(len(steps))
            name = f"[{k + 1}] {curve_label(*key)}"
            if window > 1:
                ax.plot(steps, values, linestyle=style, color=colour, alpha=0.25, linewidth=0.8)
                values, name = trailing_mean(values, window), f"{name} (mean of {window})"
            ax.plot(steps, values, linestyle=style, color=colour, marker=marker, markersize=3.5, label=name,
                    markevery=max(1, math.ceil(len(steps) / MARKED_POINTS)))  # fmt: skip
    return values_drawn


def _style_legend(ax: Any, keys: Sequence[tuple[str, str, str]]) -> int:
    """The panel's line styles, above its axes (outside the data); returns the rows it takes (0: one curve). Curves
    of several eval environments are named with their environment, in one column."""
    from matplotlib.lines import Line2D

    if len(keys) < 2:
        return 0
    several = len({key[:2] for key in keys}) > 1
    names = [f"{key[2]} ({curve_label(*key[:2], '').strip()})" if several else key[2] for key in keys]
    handles = [
        Line2D(
            [], [], color="black", linestyle=_STYLES[i % len(_STYLES)], marker=_MARKERS[i % len(_MARKERS)], markersize=4
        )  # fmt: skip
        for i in range(len(keys))
    ]
    columns = 1 if max(len(name) for name in names) > 28 else 2
    ax.legend(handles, names, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=columns, fontsize=8, frameon=False,
              borderaxespad=0.0, handlelength=2.2, columnspacing=1.0)  # fmt: skip
    return math.ceil(len(keys) / columns)


def curves_figure(runs: Sequence[RunMetrics]) -> Any:
    """The panels with data (``PANELS``, split by scale), train on the first row(s), eval below; one colour per
    run, one line style per curve; a run legend under the panels and a short title."""
    plt = pyplot_agg()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    panels = _panels(runs)
    rows = [[p for p in panels if p.panel.scope == scope] for scope in ("train", "eval")]
    rows = [row for row in rows if row] or [[]]
    columns = max(1, *(len(row) for row in rows))
    legend_lines = len(runs) + 1
    height = 3.7 * len(rows) + 0.22 * legend_lines + 0.9
    fig, axes = plt.subplots(len(rows), columns, figsize=(4.8 * columns + 0.6, height), squeeze=False)
    colours = plt.get_cmap("tab10").colors
    values_of: dict[tuple[str, tuple[int, ...]], list[float]] = {}
    steps = [s for run in runs for points in run.curves.values() for s, _ in points]
    for r, row in enumerate(rows):
        for c in range(columns):
            ax = axes[r][c]
            if c >= len(row):
                if row or c:
                    fig.delaxes(ax)
                else:
                    ax.text(0.5, 0.5, "no reward, official-metric, accuracy, answered or completion-length curves "
                            "in metrics.jsonl", ha="center", va="center", transform=ax.transAxes, color="grey",
                            wrap=True)  # fmt: skip
                    ax.set_axis_off()
                continue
            item = row[c]
            kind = (item.panel.title.removeprefix(item.panel.scope), tuple(item.runs))
            values_of.setdefault(kind, []).extend(_draw(ax, item, runs, colours))
            legend_rows = _style_legend(ax, item.keys)
            ax.set_title(item.title, fontsize=10, pad=6 + 13 * legend_rows)
            ax.tick_params(labelsize=8)
            ax.set_xlabel("step", fontsize=8)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
            if steps:
                low, high = min(steps), max(steps)
                ax.set_xlim(low - 0.02 * (high - low or 1), high + 0.02 * (high - low or 1))
    for r, row in enumerate(rows):
        for c, item in enumerate(row):
            kind = (item.panel.title.removeprefix(item.panel.scope), tuple(item.runs))
            y_range = (-0.03, 1.03) if item.panel.rate else shared_range(values_of.get(kind, []))
            if y_range is not None:
                axes[r][c].set_ylim(*y_range)
    handles = [Line2D([], [], color=colours[k % len(colours)], linewidth=2) for k in range(len(runs))]
    names = [f"[{k + 1}] {short_name(run.name, 100)}" for k, run in enumerate(runs)]
    if any(len(points) > SMOOTH_FROM for run in runs for points in run.curves.values()):
        handles.append(Line2D([], [], color="grey", alpha=0.35))
        names.append(f"faint: every step, under its trailing mean (curves of more than {SMOOTH_FROM} points)")
    fig.legend(handles, names, loc="lower left", bbox_to_anchor=(0.01, 0.0), ncol=1, fontsize=9, frameon=False)
    title = (
        f"drugprot curves: {short_name(runs[0].name, 80)}" if len(runs) == 1 else f"drugprot curves: {len(runs)} runs"
    )
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0, (0.22 * legend_lines + 0.2) / height, 1, 1))
    return fig


def plot_curves(runs: Sequence[RunMetrics], path: str | os.PathLike[str]) -> None:
    """Write ``curves_figure`` as a picture (atomically; needs matplotlib, the ``drugprot[report]`` extra)."""
    save_png(curves_figure(runs), path)


__all__ = [
    "PANELS",
    "SCALE_GAP",
    "SMOOTH_FROM",
    "Panel",
    "curves_figure",
    "plot_curves",
    "scale_groups",
    "shared_range",
    "smoothing_window",
    "trailing_mean",
]
