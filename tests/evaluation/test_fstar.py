"""F* from vote shares, the step-0 forecast, and a calibration line that only advises values the knobs accept.

F* is checked against an independent computation: each cell's vote share as an exact fraction, every distinct share
tried as a threshold, the stated rows scored by the official metric (``score_relations``), the best F1 kept.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from drugprot.core.labels import NO_RELATION, RELATION_NAMES
from drugprot.core.metrics import score_relations
from drugprot.core.options import TaskOptions
from drugprot.core.rewards import PRESETS, fp_cost_for_f1, on_grid
from drugprot.evaluation.baselines import baseline_run
from drugprot.evaluation.calibration import advice, calibration_lines, calibration_summary
from drugprot.evaluation.forecast import RECIPE_BATCH_SIZE, Z_POWER, Z_TEST, forecast_summary
from drugprot.evaluation.records import Run
from drugprot.modes.extraction.summary import summarize_extraction
from drugprot.modes.pair.render import format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main
from tests.evaluation.extraction_traces import hand_run
from tests.evaluation.traces import episode, trace, versions_record, write_run
from tests.fixtures import FIXTURE_JSONL

FIXTURE = {"split": "train", "data_path": str(FIXTURE_JSONL)}
FORMAT = PRESETS["utility"].format  # the format weight, from the one source of truth


def sampled_run(k: int, seed: int = 0) -> Run:
    """The lexical baseline's pair run on the fixture with every candidate, each task answered ``k`` times: the
    lexical answer, another type, N or no answer, drawn with a seeded generator; reward 1 + format for a right
    answer, the format weight for a wrong valid one, 0 without an answer; 100 prompt and 10·(i+1) completion tokens."""
    run = baseline_run("lexical", TaskOptions(**FIXTURE, negatives="all"))
    rng = random.Random(seed)
    rollouts = []
    for r in run.rollouts:
        for i in range(k):
            label = rng.choice([r.label, r.label, rng.choice(RELATION_NAMES), NO_RELATION.name, None])
            right = label is not None and label in r.labels
            reward = (1.0 + FORMAT) if right else (FORMAT if label is not None else 0.0)
            rollouts.append(
                dataclasses.replace(r, label=label, reward=reward, input_tokens=100, output_tokens=10 * (i + 1))
            )
    return Run(run.name, run.path, run.source, rollouts, run.config)


def independent_f_star(cells: dict[tuple[str, str, str, str], Fraction], gold: list[tuple[str, str, str, str]]):
    """The best official micro-F1 over the rules "state every cell whose share is >= t", t every distinct share."""
    best = (0.0, None)
    for t in sorted(set(cells.values())):
        f1 = score_relations(gold, [cell for cell, share in cells.items() if share >= t]).f1
        best = max(best, (f1, t))  # ties: the higher threshold, as the report
    return best


def test_f_star_of_a_pair_run_equals_the_best_threshold_on_its_vote_shares() -> None:
    run = sampled_run(4)
    by_task = defaultdict(list)
    for r in run.rollouts:
        by_task[r.key].append(r)
    cells = {}
    gold = []
    for (pmid, arg1, arg2), group in by_task.items():
        gold += [(pmid, arg1, arg2, t) for t in group[0].labels if t != NO_RELATION.name]
        for t in RELATION_NAMES:  # N is never a cell
            stated = sum(r.label == t for r in group)
            if stated:
                cells[(pmid, arg1, arg2, t)] = Fraction(stated, len(group))
    f1, threshold = independent_f_star(cells, gold)
    report = summarize(run, resamples=200, seed=0)
    star = report["calibration"]["f_star"]
    assert (star["f1"], star["threshold"], star["rollouts_per_task"], star["resolved"]) == (
        pytest.approx(f1, abs=1e-15),
        float(threshold),
        4,
        True,
    )
    assert [s["threshold"] for s in star["sweep"]] == [0.25, 0.5, 0.75, 1.0]
    assert star["low"] <= star["f1"] <= star["high"]
    assert f1 > report["micro_f1"]  # the run's F understates F*
    c = report["calibration"]
    assert (c["target"], c["target_f1"], c["threshold"]) == ("F*", star["f1"], star["f1"] / 2)
    assert c["fp_cost"] == fp_cost_for_f1(star["f1"], 1.0)
    line = next(x for x in format_report(report).splitlines() if x.startswith("    the utility's threshold"))
    assert f"(recipe: f1_target = {f1:.3f})" in line
    json.dumps(report, allow_nan=False)


def test_f_star_of_an_extraction_run_uses_each_abstracts_share_of_rollouts_stating_a_relation(tmp_path: Path) -> None:
    from drugprot.evaluation.runs import load_run

    run = load_run(str(hand_run(tmp_path / "hand")))
    groups = defaultdict(list)
    for r in run.extraction:
        groups[r.pmid].append(r)
    cells, gold = {}, []
    for pmid, group in groups.items():
        gold += [(pmid, *triple) for triple in group[0].gold.relations]
        for triple in {t for r in group for t in r.answer.relations}:
            cells[(pmid, *triple)] = Fraction(sum(triple in r.answer.relations for r in group), len(group))
    f1, threshold = independent_f_star(cells, gold)
    star = summarize_extraction(run, resamples=0)["calibration"]["f_star"]
    assert (star["f1"], star["threshold"], star["low"]) == (pytest.approx(f1, abs=1e-15), float(threshold), None)
    assert (f1, threshold) == (pytest.approx(2 / 3, abs=1e-15), Fraction(2, 3))


def test_with_one_rollout_per_task_the_line_asks_for_four_and_falls_back_to_f() -> None:
    report = summarize(sampled_run(1), resamples=0)
    c = report["calibration"]
    assert (c["f_star"], c["target"], c["target_f1"]) == (None, "F", report["micro_f1"])
    head = format_report(report).splitlines()
    assert any(
        "F* (the F1 at the best vote-share threshold) needs >= 4 rollouts per task, and F understates it" in x
        for x in head
    )


def test_the_zero_advantage_forecast_counts_the_tasks_whose_rewards_are_all_equal() -> None:
    run = sampled_run(8, seed=3)
    by_task = defaultdict(list)
    for r in run.rollouts:
        by_task[r.key].append(r)
    equal = sum(len({r.reward for r in group}) == 1 for group in by_task.values())
    teach = sum(r.input_tokens + r.output_tokens for g in by_task.values() if len({r.reward for r in g}) > 1 for r in g)
    report = summarize(run, resamples=300, seed=0)
    f = report["forecast"]
    assert f["zero_advantage"] == {
        "tasks": len(by_task),
        "equal": equal,
        "share": equal / len(by_task),
        "unavailable": None,
    }
    assert 0 < equal < len(by_task)
    assert f["tokens"] == {
        "mean_per_rollout": 100 + 45,  # 100 prompt + 10..80 completion
        "teaching_per_rollout": teach / len(run.rollouts),
        "batch_size": RECIPE_BATCH_SIZE,
        "teaching_per_step": teach / len(run.rollouts) * RECIPE_BATCH_SIZE,
    }
    bounds = report["intervals"]["micro_f1"]
    se = (bounds["high"] - bounds["low"]) / (2 * 1.959963984540054)
    detects = (Z_TEST + Z_POWER) * math.sqrt(2) * se
    assert f["power"] == {
        "se": se,
        "tasks": len(by_task),
        "detects_80": detects,
        "target_delta": 0.02,
        "tasks_for_target": math.ceil(len(by_task) * (detects / 0.02) ** 2),
    }


def test_a_forecast_without_rewards_or_groups_says_why() -> None:
    assert forecast_summary([[(None, 1, 2), (1.0, 1, 2)]], None)["zero_advantage"] == {
        "tasks": 1,
        "equal": None,
        "share": None,
        "unavailable": "some rollouts recorded no reward",
    }
    single = forecast_summary([[(1.0, 1, 2)], [(0.0, 1, 2)]], None)
    assert single["zero_advantage"]["unavailable"] == "needs >= 2 rollouts per task"
    assert single["power"] is None


@pytest.mark.parametrize(
    ("target", "fn", "expected"),
    [
        (1.0, 1.0, {"knob": "fp_cost", "value": "2.0", "why": "f1_target takes 0 < F < 1, and F = 1.000"}),
        (0.9996, 1.0, {"knob": "fp_cost", "value": "2.0", "why": "f1_target takes 0 < F < 1, and F = 1.000"}),
        (0.9996, 100.0, {"knob": "fp_cost", "value": "100.921875", "why": "f1_target takes 0 < F < 1, and F = 1.000"}),
        (  # its cost runs as 0 on the grid: f1_target 0.0004 is refused, fp_cost 0 is the same setting
            0.0004,
            1.0,
            {
                "knob": "fp_cost",
                "value": "0.0",
                "why": "f1_target 0.0004 derives an fp_cost that runs as 0 on the 1/64 reward grid",
            },
        ),
        (0.38, 1.0, {"knob": "f1_target", "value": "0.380", "why": None}),
        (0.999, 1000.0, {"knob": "f1_target", "value": "0.999", "why": None}),
        (
            1.0,
            1000.0,
            {
                "knob": None,
                "value": None,
                "why": "f1_target takes 0 < F < 1, and F = 1.000, and fp_cost 1001 is above the maximum 1000 at "
                "fn_cost 1000: lower fn_cost",
            },
        ),
    ],
)
def test_the_line_advises_only_values_the_knobs_accept(target: float, fn: float, expected: dict) -> None:
    got = advice(target, fn)
    assert got == expected
    if got["knob"] == "f1_target":  # the printed value, given to the knob, is accepted
        options = TaskOptions(**FIXTURE, f1_target=float(got["value"]), fn_cost=fn)
        assert options.fp_cost == on_grid(fp_cost_for_f1(float(got["value"]), fn))
    elif got["knob"] == "fp_cost":
        assert TaskOptions(**FIXTURE, fp_cost=float(got["value"]), fn_cost=fn).fp_cost == float(got["value"])


def test_the_line_at_f_one_recommends_the_cost_itself() -> None:
    lines = calibration_lines(calibration_summary(1.0, None, []))
    assert lines[1] == (
        "    the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at the run F: 2.000 with fn_cost 1 (the "
        "default: the run recorded no valid costs) (recipe: fp_cost = 2.0; f1_target takes 0 < F < 1, and F = 1.000)"
    )
    assert (
        "(recipe: fp_cost = 0.0; f1_target 0.0004 derives an fp_cost that runs as 0 on the 1/64 reward grid)"
        in (calibration_lines(calibration_summary(0.0004, None, []))[1])
    )


@pytest.mark.parametrize("reward", [{"fp_cost": 0.5, "fn_cost": 5000}, {"fp_cost": 1e308, "fn_cost": 1}])
def test_a_recorded_cost_the_knob_refuses_is_read_as_unknown_and_the_run_is_reported(
    tmp_path: Path, reward: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 43: the reader applies the knob's check, so the calibration line never meets a cost it cannot use."""
    record = versions_record(reward={"kind": "utility", "weights": dict(PRESETS["utility"].as_dict()), **reward})
    run_dir = write_run(
        tmp_path / "run",
        [
            episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", with_nr=True, versions=record)),
            episode(trace("T3", "T4", ["NO-RELATION"], "AGONIST", with_nr=True, versions=record)),
        ],
        negatives="all",
    )
    assert cli_main(["report", str(run_dir), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  reward: unknown" in out
    assert (
        "    the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at the run F: 1.000 with fn_cost 1 (the "
        "default: the run recorded no valid costs) (recipe: f1_target = 0.667)"
    ) in out


def test_one_rollout_per_task_forecasts_no_tokens_but_gives_the_power() -> None:
    report = summarize(sampled_run(1), resamples=100, seed=0)
    f = report["forecast"]
    assert (f["zero_advantage"]["unavailable"], f["tokens"], f["power"]["tasks"]) == (
        "needs >= 2 rollouts per task",
        None,
        report["n_tasks"],
    )
