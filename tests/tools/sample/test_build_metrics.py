"""``drugprot.tools.sample.build_metrics``: the shipped SYNTHETIC prime-rl ``metrics.jsonl`` for ``drugprot curves``."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.evaluation import curves
from drugprot.tools.cli import main as cli_main
from drugprot.tools.sample import build_metrics


def test_the_shipped_file_is_what_the_builder_writes() -> None:
    assert build_metrics.METRICS.read_text(encoding="utf-8") == build_metrics.render(build_metrics.metrics_lines())


def test_drugprot_curves_reads_every_curve_of_the_example() -> None:
    metrics = curves.read_metrics(build_metrics.RUN_DIR)
    assert (metrics.name, metrics.lines, metrics.steps, metrics.skipped) == ("synthetic-prime-rl-run", 127, 60, [])
    rows = {row["curve"]: row for row in curves.summary(metrics)}
    assert list(rows) == [
        "train reward",
        "train accuracy",
        "train format",
        "train answered",
        "train completion tokens",
        "eval/drugprot-validation reward",
        "eval/drugprot-validation accuracy",
        "eval/drugprot-validation format",
        "eval/drugprot-validation answered",
        "eval/drugprot-validation completion tokens",
    ]
    assert [rows["train reward"]["points"], rows["eval/drugprot-validation accuracy"]["points"]] == [60, 7]
    # shaped like a run that learns: accuracy ends above where it started, completions shorten
    train_accuracy = metrics.curves[("train/agg", "agent", "accuracy")]
    tokens = metrics.curves[("train/agg", "agent", "completion tokens")]
    assert train_accuracy[-1][1] > train_accuracy[0][1] + 0.2 and tokens[-1][1] < tokens[0][1] - 300


def test_the_readme_command_runs_on_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    assert cli_main(["curves", str(build_metrics.RUN_DIR), "--plot", str(png)]) == 0
    assert capsys.readouterr().out.startswith("drugprot curves: synthetic-prime-rl-run\n")
    assert png.read_bytes()[:4] == b"\x89PNG"
