"""``drugprot demo``: its arguments, and one real run end to end (``drugprot.tools.demo.command``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from drugprot.core.options import TaskOptions
from drugprot.evaluation.baselines import baseline_run
from drugprot.modes.pair.summary import summarize
from drugprot.tools import demo
from drugprot.tools.cli import build_parser
from drugprot.tools.cli import main as cli_main
from drugprot.tools.demo.command import TRAINING_LINES_NOTE
from tests.tools.demo import SAMPLE_LABEL

# ------------------------------------------------------------------------------------------- CLI


def test_the_run_goes_to_outputs_by_default_and_the_report_options_are_the_report_s() -> None:
    args = build_parser(["demo"]).parse_args(["demo"])
    assert (args.output_dir, args.bootstrap, args.bootstrap_seed, args.plot, args.plot_classes) == (
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
    # it renders (argparse reads % as a format) and names what the bootstrap resamples: abstracts, never tasks
    assert (
        "--bootstrap N resamples of the abstracts (each with all its tasks and rollouts) for the 95% intervals "
        "(default 1000; 0: none)" in " ".join(parser.format_help().split())
    )
    for seed in ("--bootstrap-seed", "--seed"):  # --seed: the old spelling, still the bootstrap's seed
        args = build_parser(["demo"]).parse_args(["demo", "--bootstrap", "200", seed, "3"])
        assert demo.report_command("outputs/r1", args) == (
            "drugprot report outputs/r1 --bootstrap 200 --bootstrap-seed 3 [--plot PNG] [--plot-classes PNG] [--json]"
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
    assert TRAINING_LINES_NOTE in lines and not [line for line in lines if line.startswith("  calibration")]
    assert (
        "  [low, high]: 95% percentile bootstrap over abstracts (all pairs and rollouts of an abstract together), "
        "200 resamples of the 2 abstracts (8 tasks), seed 0 (--bootstrap N, --bootstrap-seed S; --bootstrap 0: none)"
        in lines
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


def test_the_demo_refuses_a_bad_output_before_its_banner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample is the demo's input: a --plot onto it is refused, with nothing started and the sample intact."""
    from drugprot.tools.demo import runner
    from drugprot.tools.demo.sample_run import sample_path

    started: list[object] = []
    monkeypatch.setattr(runner, "run_cli", lambda *args: started.append(args) or 0)
    with sample_path() as sample:
        before = sample.read_bytes()
        assert cli_main(["demo", "--output-dir", str(tmp_path), "--plot", str(sample), "--overwrite"]) == 2
        assert sample.read_bytes() == before
    assert capsys.readouterr().err.splitlines() == [
        f"drugprot demo: error: --plot {sample}: this is an input of the command ({sample}); writing it would "
        "destroy it. Choose another path"
    ]
    existing = tmp_path / "old.png"
    existing.write_bytes(b"keep")
    assert cli_main(["demo", "--output-dir", str(tmp_path), "--plot-classes", str(existing)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"drugprot demo: error: --plot-classes {existing}: exists; pass --overwrite to replace it, or choose "
        "another path"
    ]
    assert cli_main(["demo", "--output-dir", str(tmp_path), "--negatives", "some"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("drugprot demo: error: ") and "negatives" in line
    assert (existing.read_bytes(), started) == (b"keep", [])
