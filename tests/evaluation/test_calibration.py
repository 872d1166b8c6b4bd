"""The report's calibration line: the run's micro-F1 F, the threshold F/2 and the ``fp_cost`` whose utility
threshold is there at the run's own ``fn_cost``, with the bootstrap interval of F mapped through the formula."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from drugprot.core.options import TaskOptions
from drugprot.core.rewards import Costs, fp_cost_for_f1, threshold
from drugprot.evaluation.baselines import baseline_run
from drugprot.evaluation.records import Run
from drugprot.modes.extraction.render import format_extraction_report
from drugprot.modes.extraction.summary import summarize_extraction
from drugprot.modes.pair.render import format_comparison, format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import episode, header_reward, trace, versions_record, write_run
from tests.fixtures import FIXTURE_JSONL

FIXTURE = {"split": "train", "data_path": str(FIXTURE_JSONL)}


def test_the_calibration_of_a_run_with_every_candidate_at_its_recorded_costs() -> None:
    """The lexical baseline on the fixture with every candidate, trained at f1_target 0.3 and fn_cost 2: official
    TP 16, FP 16, FN 12, so F = 32/60 = 8/15, the threshold 4/15, and fp_cost = F*(1+2)/(2-F) = 12/11 at the run's
    recorded fn_cost 2 (its own fp_cost, from f1_target 0.3, is 0.3*3/1.7 = 9/17, run on the 1/64 reward grid as
    34/64: threshold 0.1504)."""
    options = TaskOptions(**FIXTURE, negatives="all", f1_target=0.3, fn_cost=2)
    report = summarize(baseline_run("lexical", options), resamples=200, seed=0)
    got = report["calibration"]
    low, high = report["intervals"]["micro_f1"]["low"], report["intervals"]["micro_f1"]["high"]
    assert got == {
        "f1": pytest.approx(8 / 15, abs=1e-15),
        "f1_low": low,
        "f1_high": high,
        "f_star": None,  # one rollout per task: F* is not estimated, the target is F
        "target": "F",
        "target_f1": pytest.approx(8 / 15, abs=1e-15),
        "threshold": pytest.approx(4 / 15, abs=1e-15),
        "fn_cost": 2.0,
        "fn_cost_recorded": True,
        "formula": "fp_cost = F(1+fn_cost)/(2-F)",
        "fp_cost": pytest.approx(12 / 11, abs=1e-15),
        "fp_cost_low": fp_cost_for_f1(low, 2.0),
        "fp_cost_high": fp_cost_for_f1(high, 2.0),
        "advice": {"knob": "f1_target", "value": "0.533", "why": None},
        "withheld": [  # a fixture run is no probe: each thing it lacks, named
            "42 tasks (needs >= 200)",
            "1 rollout per task (needs the recipe's group size, 8)",
            f"the F interval {high - low:.3f} wide (needs <= 0.15)",
        ],
        "run_fp_cost": 34 / 64,
        "run_threshold": (34 / 64) / (1 + 34 / 64 + 2),
    }
    assert threshold(got["fp_cost"], 2.0) == pytest.approx(got["threshold"], abs=1e-15)
    assert abs(Costs(got["fp_cost"], 2.0).fp - got["fp_cost"]) <= 1 / 128  # the knob runs it on the 1/64 grid
    assert got["fp_cost_low"] < got["fp_cost"] < got["fp_cost_high"]  # the interval of F, mapped (increasing)
    text = format_report(report).splitlines()
    assert "fp_cost from f1_target 0.3)" in next(line for line in text if line.startswith("  reward: "))
    i = text.index(
        f"  calibration: micro-F1 F = 0.533 [{low:.3f}, {high:.3f}]; F* (the F1 at the best vote-share threshold) "
        "needs >= 4 rollouts per task, and F understates it; micro-F1 gains from stating a relation that is right "
        "with p > F/2 = 0.267"
    )
    assert text[i + 1] == (
        f"    the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at the run F: 1.091 "
        f"[{got['fp_cost_low']:.3f}, "
        f"{got['fp_cost_high']:.3f}] with fn_cost 2 (no recipe value from this run: 42 tasks (needs >= 200); 1 "
        "rollout per task (needs the recipe's group size, 8); the F interval "
        f"{high - low:.3f} wide (needs <= 0.15); probe as docs/training/before-you-train.md shows); this run's "
        "fp_cost 0.53125 puts it at 0.150"
    )
    assert text[i + 2] == (
        "    at stake between calibrations (F*, F or the default cost): <= 0.01 F1 near F* 0.4, about 0.05 at F* 0.17 "
        "(the sandbox: evidence/README.md)"
    )
    json.dumps(report, allow_nan=False)


def test_a_micro_f1_of_zero_defines_no_cost_and_every_figure_stays_finite() -> None:
    report = summarize(baseline_run("majority", TaskOptions(**FIXTURE, negatives="all")), resamples=50, seed=0)
    got = report["calibration"]
    assert (got["f1"], got["threshold"], got["fp_cost"], got["fp_cost_low"], got["fp_cost_high"]) == (
        0.0,
        0.0,
        None,
        None,
        None,
    )
    json.dumps(report, allow_nan=False)
    assert (
        "    F = 0: no fp_cost is defined (a threshold of 0 charges nothing for a false positive); calibrate on a run "
        "that finds some relations"
    ) in format_report(report).splitlines()


def test_a_positive_only_run_has_no_calibration() -> None:
    """Its micro-F1 is not the official metric's operating point (no NO-RELATION pair to state a relation on)."""
    report = summarize(baseline_run("lexical", TaskOptions(**FIXTURE)))
    assert report["calibration"] is None and "calibration" not in format_report(report)


def test_a_run_that_recorded_no_costs_is_calibrated_at_the_default_fn_cost() -> None:
    run = baseline_run("lexical", TaskOptions(**FIXTURE, negatives="all", fn_cost=3))
    older = Run(run.name, run.path, run.source, [dataclasses.replace(r, costs=None) for r in run.rollouts], run.config)
    got = summarize(older)["calibration"]
    assert (got["fn_cost"], got["fn_cost_recorded"], got["run_fp_cost"], got["run_threshold"]) == (
        1.0,
        False,
        None,
        None,
    )
    assert got["fp_cost"] == pytest.approx(fp_cost_for_f1(got["f1"], 1.0), abs=1e-15)
    assert "with fn_cost 1 (the default: the run recorded no valid costs) (no recipe value" in format_report(
        summarize(older)
    )


def test_an_extraction_run_and_a_comparison_print_the_calibration() -> None:
    run = baseline_run("lexical", TaskOptions(**FIXTURE, mode="extraction"))
    report = summarize_extraction(run, resamples=0)
    got = report["calibration"]
    assert (got["f1"], got["f1_low"], got["fp_cost_low"], got["fn_cost"]) == (report["micro_f1"], None, None, 1.0)
    assert got["fp_cost"] == pytest.approx(fp_cost_for_f1(report["micro_f1"]), abs=1e-15)
    assert f"  calibration: micro-F1 F = {report['micro_f1']:.3f}; F* (the F1" in format_extraction_report(report)
    pair = [summarize(baseline_run(b, TaskOptions(**FIXTURE, negatives="all"))) for b in ("majority", "lexical")]
    lines = format_comparison(pair).splitlines()
    i = lines.index(
        "Calibration (the fp_cost = F(1+fn_cost)/(2-F) at F = F*, or the run's F, that puts the utility's threshold "
        "at micro-F1's F*/2)"
    )
    assert lines[i + 1 : i + 3] == [
        "  [1] F 0.000, threshold 0.000: no fp_cost defined (F = 0)",
        f"  [2] F 0.533, threshold 0.267: fp_cost {fp_cost_for_f1(8 / 15):.3f} at fn_cost 1",
    ]


def test_costs_recorded_before_the_reward_grid_are_read_as_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of scorer version 3 (before the 1/64 reward grid) recorded and ran fp_cost 0.35 and fn_cost 1.3: the
    header, the calibration line and --json show 0.35, 1.3 and the threshold 0.35 / 2.65 = 0.132, never today's grid
    points (0.34375, 1.296875: threshold 0.130). Official TP 2, FP 2, FN 2: F = 1/2, fp_cost = 0.5 * 2.3 / 1.5."""
    reward = {
        "kind": "utility",
        "fp_cost": 0.35,
        "fn_cost": 1.3,
        "weights": {"accuracy": 0.0, "utility": 1.0, "format": 0.1},
        "threshold": 0.35 / 2.65,
    }
    versions = versions_record(scorer="3", reward=reward)
    tasks = [
        ("T1", "T2", ["INHIBITOR", "SUBSTRATE"], "INHIBITOR"),
        ("T3", "T2", ["SUBSTRATE"], "SUBSTRATE"),
        ("T4", "T5", ["AGONIST"], "ANTAGONIST"),
        ("T6", "T5", ["NO-RELATION"], "INHIBITOR"),
        ("T7", "T5", ["NO-RELATION"], "NO-RELATION"),
    ]
    lines = [episode(trace(a1, a2, gold, label, with_nr=True, versions=versions)) for a1, a2, gold, label in tasks]
    run_dir = write_run(tmp_path / "v3", lines, negatives="all")
    assert cli_main(["report", "--bootstrap", "0", str(run_dir)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert header_reward("\n".join(text)) == (
        "  reward: utility (TP 1, FP -0.35, FN -1.3; states a relation when p > 0.132), weights accuracy 0, utility 1, "
        "format 0.1"
    )
    i = text.index(
        "  calibration: micro-F1 F = 0.500; F* (the F1 at the best vote-share threshold) needs >= 4 rollouts per task, "
        "and F understates it; micro-F1 gains from stating a relation that is right with p > F/2 = 0.250"
    )
    assert text[i + 1] == (
        "    the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at the run F: 0.767 with fn_cost 1.3 "
        "(no recipe value from this run: 5 tasks (needs >= 200); 1 rollout per task (needs the recipe's group size, "
        "8); no F interval (--bootstrap 0, or fewer than 2 abstracts); probe as docs/training/before-you-train.md "
        "shows); this run's fp_cost 0.35 puts it at 0.132"
    )
    assert cli_main(["report", "--bootstrap", "0", "--json", str(run_dir)]) == 0
    payload = json.loads(capsys.readouterr().out)
    got = payload["calibration"]
    assert (got["fn_cost"], got["run_fp_cost"], got["run_threshold"], got["fp_cost"]) == (
        1.3,
        0.35,
        threshold(0.35, 1.3),
        fp_cost_for_f1(0.5, 1.3),
    )
    assert payload["run"]["versions"]["reward"] == header_reward("\n".join(text)).removeprefix("  reward: ")
