"""``drugprot.evaluation.plots``: the report's pictures, confusion matrix and per-class chart (PNG).

Every PNG is opened and checked for its size and that it is not blank; what is drawn is checked on the figure
objects (titles, bar lengths), never pixel by pixel.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation import plots
from drugprot.evaluation.runs import load_run
from drugprot.evaluation.summary import summarize
from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import episode, multilabel_run, rollouts_run, trace, write_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path, *, min_size: tuple[int, int], max_size: tuple[int, int], min_ink: float = 0.02) -> None:
    """``path`` is a PNG whose (width, height) lies within the bounds and whose share of non-white pixels is at
    least ``min_ink`` (a blank or nearly blank picture fails)."""
    image = pytest.importorskip("matplotlib.image")
    assert path.read_bytes()[:8] == PNG_MAGIC
    pixels = image.imread(path)
    height, width = pixels.shape[:2]
    assert min_size[0] <= width <= max_size[0] and min_size[1] <= height <= max_size[1], (width, height)
    ink = (pixels[..., :3] < 0.9).any(axis=-1).mean()
    assert ink >= min_ink, f"{path.name}: only {ink:.3%} non-white pixels"


def no_temporary_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture(autouse=True)
def _matplotlib() -> None:
    pytest.importorskip("matplotlib")


def summaries(tmp_path: Path) -> list[dict[str, Any]]:
    return [summarize(load_run(d)) for d in (multilabel_run(tmp_path), rollouts_run(tmp_path))]


# ------------------------------------------------------------------------------------------ confusion matrix


def test_the_confusion_png_of_two_runs_has_one_panel_each_and_is_not_blank(tmp_path: Path) -> None:
    png = tmp_path / "confusion.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), str(rollouts_run(tmp_path)), "--plot", str(png)]) == 0
    assert_png(png, min_size=(1500, 600), max_size=(2600, 1200))
    assert no_temporary_files(tmp_path)


def test_row_shares_divide_each_count_by_its_gold_row() -> None:
    assert plots.row_shares([[3, 1, 0], [0, 0, 0], [1, 1, 2]]) == [
        [0.75, 0.25, 0.0],
        [0.0, 0.0, 0.0],
        [0.25, 0.25, 0.5],
    ]


def test_the_confusion_matrix_names_the_labels_annotates_counts_and_colours_row_shares(tmp_path: Path) -> None:
    multilabel = summaries(tmp_path / "a")[0]
    fig = plots.confusion_figure([multilabel])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{letter_of(n)}  {n}" for n in RELATION_NAMES] + [
        "N  NO-RELATION"
    ]
    assert [t.get_text() for t in ax.get_xticklabels()][-2:] == ["N  NO-RELATION", "inv  no valid answer"]
    matrix = multilabel["confusion"]["matrix"]
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert cells == {(i, j): str(v) for i, row in enumerate(matrix) for j, v in enumerate(row) if v}
    image = ax.get_images()[0]
    assert image.get_array().tolist() == plots.row_shares(matrix)
    assert (image.norm.vmin, image.norm.vmax, image.norm.gamma) == (0.0, 1.0, 0.5)
    counts = plots.confusion_figure([multilabel], normalize=False).axes[0].get_images()[0]
    assert counts.get_array().tolist() == [[float(v) for v in row] for row in matrix]
    assert counts.norm.vmax == 1.0  # every cell of this run holds one rollout
    rollouts = summaries(tmp_path / "b")[1]  # INHIBITOR gold answered INHIBITOR twice of three
    assert plots.confusion_figure([rollouts], normalize=False).axes[0].get_images()[0].norm.vmax == 2.0


def test_plot_counts_writes_the_count_coloured_matrix(tmp_path: Path) -> None:
    png = tmp_path / "counts.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(png), "--plot-counts"]) == 0
    assert_png(png, min_size=(800, 600), max_size=(1400, 1200))


def test_short_name_cuts_long_names_in_the_middle() -> None:
    assert plots.short_name("run-a") == "run-a"
    assert plots.short_name("x" * 48) == "x" * 48
    name = "outputs/evals/drugprot--arcee-ai--trinity-mini-lora-r16-step-0400/2026-12-03-abcdef12"
    assert plots.short_name(name) == "outputs/evals/drugprot--…400/2026-12-03-abcdef12"
    assert len(plots.short_name(name)) == 48
    assert plots.short_name(name, 10) == "outpu…ef12"


def test_a_long_run_name_is_shortened_and_its_title_stays_inside_the_figure(tmp_path: Path) -> None:
    long_name = "drugprot-trinity-mini-" + "lora-r16-a64-lr3e-6-" * 6 + "step-400"
    run_dir = write_run(tmp_path / long_name, [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))] * 3, negatives=0)
    one = summarize(load_run(run_dir))
    assert one["run"]["name"] == long_name
    for fig in (plots.confusion_figure([one, one]), plots.classes_figure([one, one])):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        titles = [ax.title for ax in fig.axes if ax.get_title()] + ([fig._suptitle] if fig._suptitle else [])
        texts = [t.get_text() for t in titles] + [
            t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()
        ]
        assert not any(long_name in t for t in texts)
        assert any(plots.short_name(long_name) in t or plots.short_name(long_name, 36) in t for t in texts)
        box = fig.bbox
        for title in titles:
            extent = title.get_window_extent(renderer)
            assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and extent.y1 <= box.y1, title.get_text()
    png = tmp_path / "long.png"
    assert cli_main(["report", str(run_dir), "--plot", str(png)]) == 0
    assert_png(png, min_size=(800, 600), max_size=(1400, 1200))


# ------------------------------------------------------------------------------------------ per-class chart


def test_the_per_class_chart_draws_precision_recall_f1_with_support(tmp_path: Path) -> None:
    multilabel = summaries(tmp_path)[0]
    fig = plots.classes_figure([multilabel])
    precision, recall, f1 = fig.axes[:3]
    assert [ax.get_title() for ax in (precision, recall, f1)] == ["precision", "recall", "F1"]
    per_class = multilabel["per_class"]
    assert [t.get_text() for t in precision.get_yticklabels()] == [
        f"{per_class[n]['letter']}  {n}  (n={per_class[n]['support']})" for n in RELATION_NAMES
    ]
    # INHIBITOR: TP 1, FP 1 -> P 1/2; SUBSTRATE: TP 1 of 2 gold -> R 1/2 (hand-computed in test_report)
    widths = {name: bar.get_width() for name, bar in zip(RELATION_NAMES, precision.patches, strict=True)}
    assert widths["INHIBITOR"] == 0.5 and widths["SUBSTRATE"] == 1.0 and widths["ANTAGONIST"] == 0.0
    recalls = {name: bar.get_width() for name, bar in zip(RELATION_NAMES, recall.patches, strict=True)}
    assert recalls["SUBSTRATE"] == 0.5 and recalls["ACTIVATOR"] == 0.0
    labels = {name: text.get_text() for name, text in zip(RELATION_NAMES, precision.texts, strict=True)}
    assert labels["INHIBITOR"] == "0.50" and labels["PART-OF"] == "-"  # no prediction: undefined, not 0


def test_the_comparison_chart_has_one_bar_per_run_and_both_supports(tmp_path: Path) -> None:
    first, second = summaries(tmp_path)
    fig = plots.classes_figure([first, second])
    f1 = fig.axes[2]
    assert len(f1.patches) == 2 * len(RELATION_NAMES)
    assert [t.get_text() for t in f1.get_legend().get_texts()] == ["[1] multilabel", "[2] rollouts"]
    inhibitor = [t.get_text() for t in fig.axes[0].get_yticklabels()][RELATION_NAMES.index("INHIBITOR")]
    assert inhibitor == "E  INHIBITOR  (n=1/3)"
    png = tmp_path / "classes.png"
    assert (
        cli_main(["report", str(multilabel_run(tmp_path)), str(rollouts_run(tmp_path)), "--plot-classes", str(png)])
        == 0
    )
    assert_png(png, min_size=(1500, 500), max_size=(2200, 1100))
    assert no_temporary_files(tmp_path)


def test_the_baseline_command_draws_both_pictures(tmp_path: Path, fixture_jsonl: Path) -> None:
    conf, classes = tmp_path / "c.png", tmp_path / "k.png"
    argv = ["baseline", "lexical", "--split", "train", "--data-path", str(fixture_jsonl), "--negatives", "all"]
    assert cli_main([*argv, "--plot", str(conf), "--plot-classes", str(classes)]) == 0
    assert_png(conf, min_size=(800, 600), max_size=(1400, 1200))
    assert_png(classes, min_size=(1500, 500), max_size=(2200, 1100))


def test_plot_classes_without_matplotlib_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    png = tmp_path / "x.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot-classes", str(png)]) == 2
    assert (
        "needs matplotlib: from the drugprot repository root run uv pip install -e 'environments/drugprot[report]'"
    ) in capsys.readouterr().err
    assert not png.exists()


def test_a_png_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing-dir" / "c.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(target)]) == 2
    assert "drugprot report: error:" in capsys.readouterr().err
    assert not target.parent.exists()
