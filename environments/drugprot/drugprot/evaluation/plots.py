"""The report's pictures (matplotlib, the ``drugprot[report]`` extra): confusion matrices and per-class bars."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation.records import INVALID, ReportError
from drugprot.evaluation.render import pct

_TITLE_CHARS = 48  # run names longer than this are shortened in plot titles and legends


def short_name(name: str, limit: int = _TITLE_CHARS) -> str:
    """``name`` cut to ``limit`` characters in the middle (``"head…tail"``), so a title never runs off its figure."""
    if len(name) <= limit:
        return name
    tail = (limit - 1) // 2
    return f"{name[: limit - 1 - tail]}…{name[len(name) - tail :]}"


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
        raise ReportError(
            "--plot needs matplotlib: from the drugprot repository root run "
            "uv pip install -e 'environments/drugprot[report]' (or pip install matplotlib)"
        ) from exc
    return plt


def save_png(fig: Any, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` as a PNG through a temporary file in the same directory, then close it.

    A failed write leaves no file behind (and an existing ``path`` untouched).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        fig.savefig(tmp, dpi=120, format="png", bbox_inches="tight")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        pyplot_agg().close(fig)


def _axis_label(name: str) -> str:
    return "inv  no valid answer" if name == INVALID else f"{letter_of(name)}  {name}"


def row_shares(matrix: Sequence[Sequence[int]]) -> list[list[float]]:
    """Each count as a share of its row (its gold type); an empty row is all zeros."""
    return [[value / total if (total := sum(row)) else 0.0 for value in row] for row in matrix]


def _confusion_panel(ax: Any, report: Mapping[str, Any], normalize: bool) -> Any:
    from matplotlib.colors import PowerNorm

    confusion = report["confusion"]
    matrix = confusion["matrix"]
    # Square-root colour scale: a dominant cell (NO-RELATION's diagonal, an always-INHIBITOR column) stays dark
    # without washing the small cells out to white. Row shares keep each gold type on the same 0-1 scale.
    values = row_shares(matrix) if normalize else [[float(v) for v in row] for row in matrix]
    peak = 1.0 if normalize else max((v for row in values for v in row), default=0.0) or 1.0
    norm = PowerNorm(gamma=0.5, vmin=0.0, vmax=peak)
    image = ax.imshow(values, cmap="Blues", norm=norm, aspect="auto")
    ax.set_xticks(range(len(confusion["columns"])), [_axis_label(c) for c in confusion["columns"]])
    ax.set_yticks(range(len(confusion["labels"])), [_axis_label(c) for c in confusion["labels"]])
    ax.tick_params(axis="x", labelrotation=55, labelsize=7)
    ax.tick_params(axis="y", labelsize=7)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold (first gold type of a multi-label pair)")
    ax.set_title(
        f"{short_name(report['run']['name'])}\nmicro-F1 {pct(report['micro_f1'])}, "
        f"accuracy {pct(report['accuracy'])}, {report['n_rollouts']} rollouts",
        fontsize=9,
    )
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            if count:
                dark = norm(values[i][j]) > 0.6
                ax.text(j, i, str(count), ha="center", va="center", fontsize=6, color="white" if dark else "black")
    return image


def confusion_figure(reports: Sequence[Mapping[str, Any]], *, normalize: bool = True) -> Any:
    """One confusion-matrix panel per run: full label names, counts in the cells, colour = share of the gold row
    (``normalize``) or the count itself."""
    plt = pyplot_agg()
    fig, axes = plt.subplots(1, len(reports), figsize=(8.5 * len(reports), 7.5), squeeze=False)
    for ax, report in zip(axes[0], reports, strict=True):
        image = _confusion_panel(ax, report, normalize)
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
        bar.set_label("share of the gold row (number = count)" if normalize else "count", fontsize=8)
    fig.tight_layout()
    return fig


def plot_confusion(
    reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, normalize: bool = True
) -> None:
    """Write the confusion matrices (one panel per run) as a PNG (``confusion_figure``).

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
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


def classes_figure(reports: Sequence[Mapping[str, Any]]) -> Any:
    """Per-class precision, recall and F1 (one panel each) with the gold support in the labels; one bar per run."""
    plt = pyplot_agg()
    names = list(RELATION_NAMES)
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.42 * len(names) + 2.2), sharey=True, squeeze=False)
    height = 0.8 / len(reports)
    colours = plt.get_cmap("tab10").colors
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
                label=f"[{k + 1}] {short_name(report['run']['name'], 36)}",
            )
            for y, v in zip(ys, values, strict=True):
                ax.text((v or 0.0) + 0.01, y, "-" if v is None else f"{v:.2f}", va="center", fontsize=6)
        ax.set_xlim(0, 1.12)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(names)), [_support_label(n, reports) for n in names], fontsize=8)
    axes[0][0].invert_yaxis()
    runs = ", ".join(f"[{k + 1}] micro-F1 {pct(r['micro_f1'])}" for k, r in enumerate(reports))
    fig.suptitle(f"Per class, rollouts pooled (n = gold support; - = undefined): {runs}", fontsize=9)
    axes[0][2].legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def plot_classes(reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write the per-class precision/recall/F1 bar chart (``classes_figure``) as a PNG.

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
    """
    save_png(classes_figure(reports), path)
