"""``drugprot demo``: its arguments, and one real run end to end (``drugprot.tools.demo.command``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from drugprot.core.options import TaskOptions
from drugprot.evaluation.baselines import baseline_run
from drugprot.evaluation.summary import summarize
from drugprot.tools import demo
from drugprot.tools.cli import build_parser
from drugprot.tools.cli import main as cli_main
from tests.tools.demo import SAMPLE_LABEL

# ------------------------------------------------------------------------------------------- CLI


def test_the_run_goes_to_outputs_by_default_and_the_report_options_are_the_report_s() -> None:
    args = build_parser(["demo"]).parse_args(["demo"])
    assert (args.output_dir, args.bootstrap, args.seed, args.plot, args.plot_classes) == (
        Path("outputs"),
        1000,
        0,
        None,
        None,
    )
    assert demo.report_command("outputs/r1", args) == (
        "drugprot report outputs/r1 [--plot PNG] [--plot-classes PNG] [--json]"
    )
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert "for the 95% intervals" in parser.format_help()  # it renders (argparse reads % as a format)
    args = build_parser(["demo"]).parse_args(["demo", "--bootstrap", "200", "--seed", "3"])
    assert demo.report_command("outputs/r1", args) == (
        "drugprot report outputs/r1 --bootstrap 200 --seed 3 [--plot PNG] [--plot-classes PNG] [--json]"
    )


def test_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One real run: progress, the sample's label, intervals, both plots, and a run directory that is kept."""
    out, confusion, classes = tmp_path / "runs", tmp_path / "confusion.png", tmp_path / "classes.png"
    assert (
        cli_main(
            [
                "demo",
                "-n",
                "8",
                "--output-dir",
                str(out),
                "--timeout",
                "900",
                "--bootstrap",
                "200",
                "--plot",
                str(confusion),
                "--plot-classes",
                str(classes),
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
    assert (run_dir / "eval-cli.log").is_file() and sorted(p.name for p in out.iterdir()) == [run_dir.name]
    assert captured.err.splitlines()[-2].endswith(" s] finished: rollouts 8/8 done (100%)")
    assert captured.err.splitlines()[-1] == "scoring: the report of 8 rollouts ..."
    lines = captured.out.splitlines()
    assert lines[2] == f"  model {demo.MODEL} | data {SAMPLE_LABEL} | negatives all | limit -n 8"
    assert (
        "  [low, high]: 95% percentile bootstrap over tasks (all rollouts of a task together), 200 resamples of "
        "the 8 tasks, seed 0 (--bootstrap N, --seed S; --bootstrap 0: none)" in lines
    )
    assert f"wrote the confusion matrix to {confusion}" in lines and f"wrote the per-class chart to {classes}" in lines
    assert f"run kept in {run_dir} (with the CLI's log, eval-cli.log); report it again with:" in lines
    assert f"  drugprot report {run_dir} --bootstrap 200 [--plot PNG] [--plot-classes PNG] [--json]" in lines
    for png in (confusion, classes):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The kept run reports again, and the served lexical baseline scores exactly as the offline baseline run.
    assert cli_main(["report", str(run_dir), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["n_tasks"], payload["n_rollouts"], payload["lines"]["corrupt"]) == (8, 8, 0)
    assert payload["run"]["model"] == demo.MODEL and payload["setting"]["negatives"] == "all"
    assert payload["run"]["data_label"] == SAMPLE_LABEL and payload["run"]["split"] == "validation"
    with demo.sample_path() as path:
        offline = summarize(baseline_run("lexical", TaskOptions(data_path=str(path), negatives="all", num_tasks=8)))
    for key in ("accuracy", "micro_precision", "micro_recall", "micro_f1", "macro_f1", "invalid_rate", "per_class"):
        assert payload[key] == offline[key], key
    assert payload["tokens"]["rollouts_with_usage"] == 8
