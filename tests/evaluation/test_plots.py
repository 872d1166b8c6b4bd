"""``drugprot.evaluation.plots``: the report's pictures, confusion matrix and per-class chart (PNG, JPEG, PDF, SVG).

Every PNG is opened and checked for its size and that it is not blank; what is drawn is checked on the figure
objects (titles, bar lengths), never pixel by pixel.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.extras import install_hint
from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation import plots
from drugprot.evaluation.runs import load_run
from drugprot.modes.pair.summary import summarize
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


def test_the_colour_bar_says_its_scale_is_square_root(tmp_path: Path) -> None:
    multilabel = summaries(tmp_path)[0]
    for normalize, label in (
        (True, "share of the gold row (number = count); square-root colour scale"),
        (False, "count; square-root colour scale"),
    ):
        fig = plots.confusion_figure([multilabel], normalize=normalize)
        (bar,) = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
        assert bar.get_ylabel() == label
        assert fig.axes[0].get_images()[0].norm.gamma == plots.COLOUR_GAMMA == 0.5


def test_plot_counts_writes_the_count_coloured_matrix(tmp_path: Path) -> None:
    png = tmp_path / "counts.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(png), "--plot-counts"]) == 0
    assert_png(png, min_size=(800, 600), max_size=(1400, 1200))


def test_short_name_drops_whole_segments_in_the_middle_never_cuts_one() -> None:
    assert plots.short_name("run-a") == "run-a"
    assert plots.short_name("x" * 48) == "x" * 48
    name = "outputs/evals/drugprot--arcee-ai--trinity-mini-lora-r16-step-0400/2026-12-03-abcdef12"
    assert plots.short_name(name) == "outputs/evals/drugprot--…/2026-12-03-abcdef12"  # not "…400/": step-0400 is whole
    assert plots.short_name(name, 30) == "outputs/…/2026-12-03-abcdef12"
    assert plots.short_name(name, 10) == "…-abcdef12"  # the end first (what tells runs apart); "-" where "/" won't fit
    long = "drugprot--test-model--" + "-".join(["lora-r16-a64-lr3e-6"] * 6) + "--step-400"
    assert [plots.short_name(long, limit) for limit in (10, 20, 30, 48, 100)] == [
        "…-400",
        "…--step-400",
        "drugprot--…--step-400",
        "drugprot--test-model--…--step-400",
        "drugprot--test-model--…--step-400",
    ]
    assert plots.short_name("x" * 60, 10) == "xxxxx…xxxx"  # one segment longer than the limit: cut, the only way


def report_named(name: str, model: str | None) -> dict[str, Any]:
    return {"run": {"name": name, "model": model}}


@pytest.mark.parametrize(
    ("runs", "labels"),
    [
        (  # one run: its model and its hash
            [("drugprot--drugprot-lexical-baseline--drugprot--e11b95f9", "drugprot-lexical-baseline")],
            ["drugprot-lexical-baseline · e11b95f9"],
        ),
        (  # the model's slash spelled -- in the name (verifiers 0.4.0)
            [("drugprot--arcee--trinity-mini--drugprot--db2905b8", "arcee/trinity-mini")],
            ["arcee/trinity-mini · db2905b8"],
        ),
        (  # base vs adapter: the parts the other run lacks
            [
                ("drugprot--arcee--trinity-mini--drugprot--db2905b8", "arcee/trinity-mini"),
                ("drugprot--drugprot--drugprot--cc9f59e3", "drugprot"),
            ],
            ["arcee/trinity-mini · db2905b8", "drugprot · cc9f59e3"],
        ),
        (  # two harnesses of one model
            [("drugprot--m--drugprot--aaaa1111", "m"), ("drugprot--m--null--bbbb2222", "m")],
            ["m · drugprot--aaaa1111", "m · null--bbbb2222"],
        ),
        ([("311f215a", None)], ["311f215a"]),  # no saved model: the name
        ([("baseline majority", "baseline:majority")], ["baseline:majority"]),  # a baseline: named once
        (
            [("baseline majority", "baseline:majority"), ("baseline lexical", "baseline:lexical")],
            ["baseline:majority", "baseline:lexical"],
        ),
        (  # too long: the model is shortened, the distinguishing part kept
            [("drugprot--" + "m" * 60 + "--drugprot--e11b95f9", "m" * 60)],
            ["m" * 18 + "…" + "m" * 18 + " · e11b95f9"],
        ),
    ],
)
def test_run_labels_keep_the_model_and_what_tells_the_runs_apart(
    runs: list[tuple[str, str | None]], labels: list[str]
) -> None:
    assert plots.run_labels([report_named(*run) for run in runs]) == labels
    assert all(len(label) <= 48 for label in labels)


def test_a_long_run_name_keeps_its_model_and_hash_and_its_title_stays_inside_the_figure(tmp_path: Path) -> None:
    long_name = "drugprot--test-model--" + "-".join(["lora-r16-a64-lr3e-6"] * 6) + "--step-400"
    run_dir = write_run(tmp_path / long_name, [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))] * 3, negatives=0)
    one = summarize(load_run(run_dir))
    assert one["run"]["name"] == long_name
    for fig in (plots.confusion_figure([one]), plots.classes_figure([one])):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        titles = [ax.title for ax in fig.axes if ax.get_title()] + ([fig._suptitle] if fig._suptitle else [])
        texts = [t.get_text() for t in titles] + [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        assert not any(long_name in t for t in texts)
        assert any("test-model · step-400" in t for t in texts)
        box = fig.bbox
        for title in titles:
            extent = title.get_window_extent(renderer)
            assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and extent.y1 <= box.y1, title.get_text()
    png = tmp_path / "long.png"
    assert cli_main(["report", str(run_dir), "--plot", str(png)]) == 0
    assert_png(png, min_size=(900, 700), max_size=(1500, 1300))


def test_cell_counts_and_labels_are_readable_at_100_percent(tmp_path: Path) -> None:
    """At 120 dpi a 10-pt text is ~17 px tall: the counts in the cells and the axis labels are at least 9 pt."""
    fig = plots.confusion_figure([summaries(tmp_path)[0]])
    ax = fig.axes[0]
    assert ax.texts and {t.get_fontsize() for t in ax.texts} == {11.0}
    assert {t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()} == {9.0}


@pytest.mark.parametrize("digits", [3, 4, 5, 6])
def test_every_count_fits_inside_its_cell_with_a_margin(tmp_path: Path, digits: int) -> None:
    """At 100k rollouts a cell holds 5 digits: the panel widens so that the largest count stays inside its cell."""
    report = summaries(tmp_path)[0]
    big = int("9" * digits)
    columns = len(report["confusion"]["columns"])
    report["confusion"]["matrix"] = [[big] * columns for _ in report["confusion"]["labels"]]
    fig = plots.confusion_figure([report, report])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert len(panels) == 2
    for ax in panels:
        assert len(ax.texts) == columns * len(report["confusion"]["labels"])
        for text in ax.texts:
            j = round(text.get_position()[0])
            left, right = (ax.transData.transform((x, 0))[0] for x in (j - 0.5, j + 0.5))
            extent = text.get_window_extent(renderer)
            assert left + 2 <= extent.x0 and extent.x1 <= right - 2, (digits, text.get_text())
    width = fig.get_size_inches()[0]
    assert width == 19.0 if digits <= 3 else width > 19.0  # two panels of 9.5 inches until the counts need more


@pytest.mark.parametrize(
    ("name", "magic"),
    [
        ("confusion.png", PNG_MAGIC),
        ("confusion.jpg", b"\xff\xd8\xff"),
        ("confusion.JPEG", b"\xff\xd8\xff"),
        ("confusion.pdf", b"%PDF"),
        ("confusion.svg", b"<?xml"),
    ],
)
def test_plot_writes_the_format_its_extension_names(tmp_path: Path, name: str, magic: bytes) -> None:
    path = tmp_path / name
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--bootstrap", "0", "--plot", str(path)]) == 0
    assert path.read_bytes()[: len(magic)] == magic
    assert no_temporary_files(tmp_path)


@pytest.mark.parametrize(("name", "given"), [("confusion.gif", "extension '.gif'"), ("confusion", "no extension")])
def test_a_picture_format_that_cannot_be_written_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, given: str
) -> None:
    run_dir = multilabel_run(tmp_path)

    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("summarize ran before the picture path was checked")

    monkeypatch.setattr("drugprot.modes.pair.mode.summarize", no_work)  # the pair mode's summary
    path = tmp_path / name
    assert cli_main(["report", str(run_dir), "--plot-classes", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"drugprot report: error: {path}: cannot write a picture with {given}; name the file with one of .png, .jpg, "
        ".jpeg, .pdf, .svg (the extension picks the format)\n"
    )
    assert not path.exists()
    with pytest.raises(plots.ReportError):
        plots.plot_format("x.tiff")


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
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        f"[1] test-model · multilabel, micro-F1 {first['micro_f1']:.3f}",
        f"[2] test-model · rollouts, micro-F1 {second['micro_f1']:.3f}",
    ]
    inhibitor = [t.get_text() for t in fig.axes[0].get_yticklabels()][RELATION_NAMES.index("INHIBITOR")]
    assert inhibitor == "E  INHIBITOR  (n=1/3)"
    assert fig._suptitle.get_text() == (
        "Per class, pair mode (one task per chemical-gene pair): gold pairs of each type, rollouts pooled (each "
        "rollout counts once)\nn = gold support of run [1]/[2]; - = undefined (no prediction or no gold of that type)"
    )
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
    assert f"needs matplotlib (the drugprot[report] extra): {install_hint('report')}" in capsys.readouterr().err
    assert not png.exists()


def test_a_png_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing-dir" / "c.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(target)]) == 2
    assert "drugprot report: error:" in capsys.readouterr().err
    assert not target.parent.exists()
