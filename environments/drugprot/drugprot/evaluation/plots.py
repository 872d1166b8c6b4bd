"""The report's pictures (matplotlib, the ``drugprot[report]`` extra): confusion matrices and per-class bars."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from drugprot.core.extras import install_hint
from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.core.outputs import atomic_path
from drugprot.evaluation.records import INVALID, ReportError
from drugprot.evaluation.render import pct
from drugprot.modes.base import mode_of_reports

_TITLE_CHARS = 48  # run names longer than this are shortened in plot titles and legends


_SEGMENTS = (re.compile(r"(--|[/\s·]+)"), re.compile(r"(--|[-/_.:\s·]+)"))
"""What separates the segments of a run name: first the parts verifiers joins with ``--`` (``env--model--harness--
hash``) and a path's folders; only where not even the last of those fits, also ``-``, ``_``, ``.`` and ``:``."""


def short_name(name: str, limit: int = _TITLE_CHARS) -> str:
    """``name`` in at most ``limit`` characters, so a title or legend never runs off its figure: whole segments
    (``_SEGMENTS``) from both ends around ``…``, never a segment cut in two; the end (the hash, the step, what tells
    runs apart) is taken first. Only when not even the last segment fits is the name cut in its middle."""
    if len(name) <= limit:
        return name
    for pattern in _SEGMENTS:
        kept = _keep_segments(name, pattern, limit)
        if kept is not None:
            return kept
    keep = (limit - 1) // 2
    return f"{name[: limit - 1 - keep]}…{name[len(name) - keep :]}"


def _keep_segments(name: str, pattern: re.Pattern[str], limit: int) -> str | None:
    """``short_name`` by the segments ``pattern`` separates, or None when not even the last one fits."""
    parts = pattern.split(name)
    segments, separators = parts[0::2], parts[1::2]
    count = len(segments)

    def shown(head: int, tail: int) -> str:
        kept_head = "".join(segments[i] + separators[i] for i in range(head))
        kept_tail = "".join(separators[i - 1] + segments[i] for i in range(count - tail, count))
        return f"{kept_head}…{kept_tail}"

    head = tail = 0
    sides = ["tail", "head"]
    while sides and head + tail < count - 1:
        side = sides[0]
        more = (head, tail + 1) if side == "tail" else (head + 1, tail)
        if len(shown(*more)) <= limit:
            head, tail = more
            if len(sides) == 2:
                sides.reverse()  # alternate: one segment from the end, one from the start
        else:
            sides.remove(side)
    return shown(head, tail) if tail else None


def curve_label(scope: str, agent: str, series: str) -> str:
    """How ``drugprot curves`` names a curve, in its table and its picture: ``train official F1``,
    ``eval/drugprot-validation raw accuracy`` (the agent in brackets unless it is drugprot's ``agent``)."""
    where = "train" if scope == "train/agg" else scope
    return f"{where} {series}" + ("" if agent == "agent" else f" ({agent})")


def _model_parts(model: str) -> set[str]:
    """How a run directory's name may spell ``model`` (verifiers joins name parts with ``--``; a baseline run
    ``baseline majority`` has the model ``baseline:majority``)."""
    return {model, model.replace("/", "-"), model.replace("/", "--"), model.replace(":", " "), *model.split("/")}


def run_labels(reports: Sequence[Mapping[str, Any]], limit: int = _TITLE_CHARS) -> list[str]:
    """What names each run in a picture: its model, then what tells its directory name from the others'.

    verifiers names a run ``<env>--<model>--<harness>--<hash>``: one run is ``model · hash``; of several, each keeps
    the parts of its name the others lack (the hash when none). A run without a saved model keeps its whole name.
    Too long a label is shortened in the model, never in the distinguishing part.
    """
    names = [str(report["run"]["name"]) for report in reports]
    split = [name.split("--") for name in names]
    labels = []
    for report, name, parts in zip(reports, names, split, strict=True):
        model = report["run"].get("model")
        if not model:
            labels.append(short_name(name, limit))
            continue
        spelled = _model_parts(model)
        own = [part for part in _distinct_parts(parts, split) if part not in spelled]
        tail = "--".join(own or [part for part in parts[-1:] if part not in spelled])
        if not tail:
            labels.append(short_name(model, limit))
            continue
        room = max(limit - len(tail) - 3, 8)
        labels.append(f"{short_name(model, room)} · {short_name(tail, limit)}")
    return labels


def _distinct_parts(parts: Sequence[str], every: Sequence[Sequence[str]]) -> list[str]:
    """The parts of one run's name the other runs' names lack: position by position when all names have as many
    parts (``env--model--harness--hash``), else as a set; none for a single run."""
    if len(every) < 2:
        return []
    if len({len(other) for other in every}) == 1:
        return [part for i, part in enumerate(parts) if len({other[i] for other in every}) > 1]
    shared = set(every[0]).intersection(*every[1:])
    return [part for part in parts if part not in shared]


PLOT_FORMATS = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".pdf": "pdf", ".svg": "svg"}
"""The picture formats ``--plot`` writes, by file extension (matplotlib's Agg backend writes each)."""


def plot_format(path: str | os.PathLike[str]) -> str:
    """The format a picture path asks for by its extension (``x.jpg`` -> ``jpeg``); checked before any work.

    Raises:
        ReportError: an extension matplotlib is not asked to write here (the message lists the ones it is).
    """
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_FORMATS:
        given = f"extension {suffix!r}" if suffix else "no extension"
        raise ReportError(
            f"{path}: cannot write a picture with {given}; name the file with one of "
            f"{', '.join(PLOT_FORMATS)} (the extension picks the format)"
        )
    return PLOT_FORMATS[suffix]


def check_plot_paths(*paths: str | os.PathLike[str] | None) -> None:
    """``plot_format`` of every given picture path (None: not asked for), and matplotlib present when one is, so a
    bad path or a missing matplotlib stops a command up front, before any work.

    Raises:
        ReportError: a path's extension names no supported format, or matplotlib is not installed.
    """
    asked = [path for path in paths if path is not None]
    for path in asked:
        plot_format(path)
    if asked:
        pyplot_agg()


def pyplot_agg() -> Any:
    """matplotlib.pyplot on the Agg backend (files only, no display).

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ReportError(f"--plot needs matplotlib (the drugprot[report] extra): {install_hint('report')}") from exc
    return plt


def save_png(fig: Any, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` in the format its extension names (``plot_format``: PNG, JPEG, PDF or SVG) through
    a temporary file in the same directory (``drugprot.core.outputs.atomic_path``), then close it.

    A failed write leaves no file behind (and an existing ``path`` untouched).

    Raises:
        ReportError: the extension names no supported format.
    """
    kind = plot_format(path)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120, format=kind, bbox_inches="tight")
    finally:
        pyplot_agg().close(fig)


def _axis_label(name: str) -> str:
    return "inv  no valid answer" if name == INVALID else f"{letter_of(name)}  {name}"


def row_shares(matrix: Sequence[Sequence[int]]) -> list[list[float]]:
    """Each count as a share of its row (its gold type); an empty row is all zeros."""
    return [[value / total if (total := sum(row)) else 0.0 for value in row] for row in matrix]


COLOUR_GAMMA = 0.5
"""The confusion matrix's colour scale: colour = value ** ``COLOUR_GAMMA`` (square root), said on its colour bar."""


def colour_scale_label(normalize: bool) -> str:
    """The colour bar's label: what the colour measures and that its scale is not linear."""
    what = "share of the gold row (number = count)" if normalize else "count"
    return f"{what}; square-root colour scale"


def _confusion_panel(ax: Any, report: Mapping[str, Any], normalize: bool, run_label: str) -> Any:
    from matplotlib.colors import PowerNorm

    confusion = report["confusion"]
    matrix = confusion["matrix"]
    # Square-root colour scale: a dominant cell (NO-RELATION's diagonal, an always-INHIBITOR column) stays dark
    # without washing the small cells out to white. Row shares keep each gold type on the same 0-1 scale.
    values = row_shares(matrix) if normalize else [[float(v) for v in row] for row in matrix]
    peak = 1.0 if normalize else max((v for row in values for v in row), default=0.0) or 1.0
    norm = PowerNorm(gamma=COLOUR_GAMMA, vmin=0.0, vmax=peak)
    image = ax.imshow(values, cmap="Blues", norm=norm, aspect="auto")
    ax.set_xticks(range(len(confusion["columns"])), [_axis_label(c) for c in confusion["columns"]])
    ax.set_yticks(range(len(confusion["labels"])), [_axis_label(c) for c in confusion["labels"]])
    ax.tick_params(axis="x", labelrotation=55, labelsize=9)
    ax.tick_params(axis="y", labelsize=9)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    ax.set_xlabel("predicted", fontsize=10)
    ax.set_ylabel("gold (first gold type of a multi-label pair)", fontsize=10)
    ax.set_title(
        f"{run_label}\nmicro-F1 {pct(report['micro_f1'])}, accuracy {pct(report['accuracy'])}, "
        f"{report['n_rollouts']} rollouts",
        fontsize=11,
    )
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            if count:
                dark = norm(values[i][j]) > 0.6
                ax.text(
                    j, i, str(count), ha="center", va="center", fontsize=_CELL_FONT, color="white" if dark else "black"
                )
    return image


_CELL_FONT = 11  # points: the counts in the confusion matrix's cells
_PANEL_INCHES = 9.5  # one confusion panel's width, for counts of up to 3 digits
_PANEL_FRAME_INCHES = 3.6  # of it, what is not cells: the gold labels on the left, the colour bar on the right


def confusion_panel_inches(reports: Sequence[Mapping[str, Any]]) -> float:
    """How wide one confusion panel is: wide enough that the largest count (its digits at ``_CELL_FONT`` points,
    plus 8 points of margin) fits in its cell, never narrower than ``_PANEL_INCHES``."""
    from matplotlib.textpath import TextPath

    counts = [v for report in reports for row in report["confusion"]["matrix"] for v in row]
    digits = max([1, *(len(str(v)) for v in counts)])
    columns = max([1, *(len(report["confusion"]["columns"]) for report in reports)])
    text_points = TextPath((0, 0), "8" * digits, size=_CELL_FONT).get_extents().width
    return max(_PANEL_INCHES, _PANEL_FRAME_INCHES + columns * (text_points + 8) / 72)


def confusion_figure(reports: Sequence[Mapping[str, Any]], *, normalize: bool = True) -> Any:
    """One confusion-matrix panel per run: full label names, counts in the cells, colour = share of the gold row
    (``normalize``) or the count itself. Panels widen with the largest count (``confusion_panel_inches``)."""
    plt = pyplot_agg()
    width = confusion_panel_inches(reports)
    fig, axes = plt.subplots(1, len(reports), figsize=(width * len(reports), 8.5), squeeze=False)
    for ax, report, label in zip(axes[0], reports, run_labels(reports), strict=True):
        image = _confusion_panel(ax, report, normalize, label)
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
        bar.set_label(colour_scale_label(normalize), fontsize=10)
    fig.tight_layout()
    return fig


def plot_confusion(
    reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, normalize: bool = True
) -> None:
    """Write the confusion matrices (one panel per run) as a picture (``confusion_figure``; ``save_png``).

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra), or the extension names no
            supported format.
    """
    save_png(confusion_figure(reports, normalize=normalize), path)


def _support_label(name: str, reports: Sequence[Mapping[str, Any]]) -> str:
    supports = "/".join(str(r["per_class"][name]["support"]) for r in reports)
    return f"{letter_of(name)}  {name}  (n={supports})"


def _class_value(scores: Mapping[str, Any], metric: str) -> float | None:
    """A per-class score as the text report shows it: undefined (None) without predictions or gold."""
    defined = {
        "precision": scores["predicted"],
        "recall": scores["support"],
        "f1": scores["predicted"] or scores["support"],
    }
    return scores[metric] if defined[metric] else None


def support_note(reports: Sequence[Mapping[str, Any]]) -> str:
    """The chart's title: which mode (``Mode.chart_unit`` of the reports' mode), how its rollouts are counted, and
    what ``n=a/b`` in the labels means."""
    mode = mode_of_reports(reports).chart_unit
    runs = "/".join(f"[{k + 1}]" for k in range(len(reports)))
    per = "of run " + runs if len(reports) > 1 else "of the run"
    return (
        f"Per class, {mode} of each type, rollouts pooled (each rollout counts once)\n"
        f"n = gold support {per}; - = undefined (no prediction or no gold of that type)"
    )


def classes_figure(reports: Sequence[Mapping[str, Any]]) -> Any:
    """Per-class precision, recall and F1 (one panel each) with the gold support in the labels; one bar per run.

    The title says the mode (pair or extraction) and what ``n=a/b`` counts (``support_note``).
    """
    plt = pyplot_agg()
    names = list(RELATION_NAMES)
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.5 * len(names) + 2.6), sharey=True, squeeze=False)
    height = 0.8 / len(reports)
    colours = plt.get_cmap("tab10").colors
    labels = run_labels(reports, 40)
    for ax, (metric, title) in zip(
        axes[0], (("precision", "precision"), ("recall", "recall"), ("f1", "F1")), strict=True
    ):
        for k, report in enumerate(reports):
            ys = [i - 0.4 + height * (k + 0.5) for i in range(len(names))]
            values = [_class_value(report["per_class"][name], metric) for name in names]
            ax.barh(
                ys,
                [v or 0.0 for v in values],
                height=height,
                color=colours[k % len(colours)],
                label=f"[{k + 1}] {labels[k]}, micro-F1 {pct(report['micro_f1'])}",
            )
            for y, v in zip(ys, values, strict=True):
                ax.text((v or 0.0) + 0.01, y, "-" if v is None else f"{v:.2f}", va="center", fontsize=9)
        ax.set_xlim(0, 1.15)
        ax.set_title(title, fontsize=11)
        ax.tick_params(axis="x", labelsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(names)), [_support_label(n, reports) for n in names], fontsize=9)
    axes[0][0].invert_yaxis()
    fig.suptitle(support_note(reports), fontsize=11)
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=min(len(reports), 3), fontsize=9)
    fig.tight_layout(rect=(0, 0.02 + 0.035 * ((len(reports) + 2) // 3), 1, 1))
    return fig


def plot_classes(reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write the per-class precision/recall/F1 bar chart (``classes_figure``) as a picture (``save_png``).

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra), or the extension names no
            supported format.
    """
    save_png(classes_figure(reports), path)
