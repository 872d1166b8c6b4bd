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
    every = [s.name for s in curves.SERIES if s.name != "N / none share"]  # the sandbox's share only
    evals = [name for name in every if name not in ("trainable share", "admitted share")]  # train metrics only
    assert list(rows) == [f"train {name}" for name in every] + [f"eval/drugprot-validation {name}" for name in evals]
    assert [rows["train reward"]["points"], rows["eval/drugprot-validation official F1"]["points"]] == [60, 7]
    # the default recipe: the accuracy reward weighs 0, its raw accuracy is a metric
    assert rows["train accuracy reward"]["best"] == 0.0 and rows["train raw accuracy"]["last"] > 0.5
    # shaped like a run that learns: official F1 and raw accuracy end above where they started, completions shorten,
    # fewer rollouts carry a gradient
    for name in ("official F1", "raw accuracy"):
        train = metrics.curves[("train/agg", "agent", name)]
        assert train[-1][1] > train[0][1] + 0.15, name
    tokens = metrics.curves[("train/agg", "agent", "completion tokens")]
    trainable = metrics.curves[("train/agg", "agent", "trainable share")]
    assert tokens[-1][1] < tokens[0][1] - 300 and trainable[-1][1] < trainable[0][1] - 0.3
    # both of prime-rl's scopes: the trained-on batch (the groups that differ) is all trainable by construction
    assert metrics.subsets == {"train/agg": ("all", "effective"), "eval/drugprot-validation": ("all", "effective")}
    assert {value for _, value in metrics.effective[("train/agg", "agent", "trainable share")]} == {1.0}


def test_the_official_f1_is_that_of_the_step_s_rollouts() -> None:
    """The file logs the means of whole rollouts' cells (``TRAIN_ROLLOUTS`` a step): ``curves`` reads back the
    micro-F1 of the step's summed cells exactly."""
    from drugprot.core.metrics import prf

    line = build_metrics.metrics_lines()[1]
    n, prefix = build_metrics.TRAIN_ROLLOUTS, "train/agg/all/agent/metrics"
    sums = [line[f"{prefix}/official_{cell}/mean"] * n for cell in ("tp", "fp", "fn")]
    assert all(total == round(total) for total in sums)
    f1 = prf(*(round(total) for total in sums))[2]
    assert curves.read_metrics(build_metrics.RUN_DIR).curves[("train/agg", "agent", "official F1")][0] == (0, f1)


def test_the_readme_command_runs_on_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    assert cli_main(["curves", str(build_metrics.RUN_DIR), "--plot", str(png)]) == 0
    assert capsys.readouterr().out.startswith("drugprot curves: synthetic-prime-rl-run\n")
    assert png.read_bytes()[:4] == b"\x89PNG"
