"""F* from vote shares, the step-0 forecast, and a calibration line that only advises values the knobs accept.

F* is checked against an independent computation: each cell's vote share as an exact fraction, every distinct share
tried as a threshold, the stated rows scored by the official metric (``score_relations``), the best F1 kept.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from drugprot.core.labels import NO_RELATION, RELATION_NAMES
from drugprot.core.metrics import score_relations
from drugprot.core.options import TaskOptions
from drugprot.core.rewards import PRESETS, fp_cost_for_f1, on_grid
from drugprot.evaluation.baselines import baseline_run
from drugprot.evaluation.calibration import advice, calibration_lines, calibration_summary
from drugprot.evaluation.forecast import RECIPE_BATCH_SIZE, Z_POWER, Z_TEST, forecast_lines, forecast_summary
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
    width = star["high"] - star["low"]
    assert c["withheld"] == [
        f"{report['n_tasks']} tasks (needs >= 200)",
        "4 rollouts per task (needs the recipe's group size, 8)",
        f"the F* interval {width:.3f} wide (needs <= 0.15)",
    ]
    assert c["advice"] == {"knob": "f1_target", "value": f"{f1:.3f}", "why": None}  # computed, not recommended
    assert f"(no recipe value from this run: {'; '.join(c['withheld'])}; probe as " in line
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
    pairs, quads = (
        sum(
            sum(math.comb(c, k) for c in Counter(r.reward for r in g).values()) / math.comb(8, k)
            for g in by_task.values()
        )
        / len(by_task)
        for k in (2, 4)
    )
    kinds = f["zero_advantage"].pop("by_negative_share")
    negative = [not set(g[0].labels) - {NO_RELATION.name} for g in by_task.values()]
    equal_by = [len({r.reward for r in g}) == 1 for g in by_task.values()]
    z_neg = sum(e for e, n in zip(equal_by, negative, strict=True) if n) / sum(negative)
    z_pos = sum(e for e, n in zip(equal_by, negative, strict=True) if not n) / (len(negative) - sum(negative))
    assert (kinds["negative"], kinds["positive"]) == (pytest.approx(z_neg), pytest.approx(z_pos))
    assert f["zero_advantage"] == {
        "tasks": len(by_task),
        "equal": equal,
        "share": equal / len(by_task),
        "unavailable": None,
        "left_out": 0,
        "by_group_size": [{"group_size": 2, "share": pairs}, {"group_size": 4, "share": quads}],
    }
    assert equal / len(by_task) < quads < pairs  # fewer rollouts agree more often
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
    abstracts = report["intervals"]["abstracts"]
    need = abstracts * (detects / 0.02) ** 2  # extrapolated by abstracts, at the run's 8 rollouts per task
    p = f["power"]
    assert {k: v for k, v in p.items() if not k.endswith("_90")} == {
        "comparison": "two independent evals",
        "se": se,
        "tasks": len(by_task),
        "abstracts": abstracts,
        "rollouts_per_task": 8,
        "detects_80": detects,
        "target_delta": 0.02,
        "abstracts_for_target": math.ceil(need),
        "tasks_for_target": math.ceil(need * len(by_task) / abstracts),
        "split_abstracts": 750,
        "exceeds_split": need > 750,
    }
    low, high = p["abstracts_for_target_90"]
    assert low < need < high  # the SE's own uncertainty, as a chi-square with abstracts - 1 degrees of freedom


def test_a_forecast_without_rewards_or_groups_says_why() -> None:
    assert forecast_summary([[(None, 1, 2), (1.0, 1, 2)]], None)["zero_advantage"] == {
        "tasks": 0,
        "equal": None,
        "share": None,
        "left_out": 1,
        "unavailable": "every task has a rollout that recorded no reward",
    }
    single = forecast_summary([[(1.0, 1, 2)], [(0.0, 1, 2)]], None)
    assert single["zero_advantage"]["unavailable"] == "needs >= 2 rollouts per task"
    assert single["power"] is None


def test_one_failed_episode_leaves_out_its_task_and_the_forecast_says_so() -> None:
    """Issue 49: one rollout without a reward among 20 tasks x 8 no longer makes the whole forecast unknown."""
    groups = [[(1.0 if i % 2 else 0.0, 10, 20)] * 8 for i in range(19)]  # 19 tasks, every one all-equal
    groups.append([(None, 10, 20), *[(1.0, 10, 20)] * 7])  # a failed episode: no reward recorded
    f = forecast_summary(groups, None)
    z = f["zero_advantage"]
    assert (z["tasks"], z["equal"], z["share"], z["left_out"], z["unavailable"]) == (19, 19, 1.0, 1, None)
    assert f["tokens"] == {"mean_per_rollout": 30, "teaching_per_rollout": 0.0, "batch_size": 128,
                           "teaching_per_step": 0.0}  # fmt: skip
    assert forecast_lines(f)[0] == (
        "  step-0 forecast (groups of 8 rollouts, the recorded rewards; 1 task left out: a rollout recorded no "
        "reward): 19 of 19 tasks (100.0%) earn equal rewards on every rollout: zero advantage, dropped by prime-rl"
    )


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


PROBE = {"tasks": 500, "rollouts_per_task": 8}
"""A run large enough for the line to recommend a value (with an interval no wider than 0.15)."""


def _narrow(f1: float) -> dict:
    return {"micro_f1": {"low": max(0.0, f1 - 0.05), "high": min(1.0, f1 + 0.05)}}


def test_the_line_at_f_one_recommends_the_cost_itself() -> None:
    lines = calibration_lines(calibration_summary(1.0, _narrow(1.0), [], **PROBE))
    assert lines[1] == (
        "    the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at the run F: 2.000 [1.810, 2.000] with "
        "fn_cost 1 (the default: the run recorded no valid costs) (recipe: fp_cost = 2.0; f1_target takes 0 < F < 1, "
        "and F = 1.000)"
    )
    assert (
        "(recipe: fp_cost = 0.0; f1_target 0.0004 derives an fp_cost that runs as 0 on the 1/64 reward grid)"
        in (calibration_lines(calibration_summary(0.0004, _narrow(0.0), [], **PROBE))[1])
    )


@pytest.mark.parametrize(
    ("tasks", "rollouts", "interval", "missing"),
    [
        (200, 8, (0.30, 0.45), []),  # the smallest probe the line takes: 200 tasks x 8, an interval 0.15 wide
        (199, 8, (0.30, 0.45), ["199 tasks (needs >= 200)"]),
        (200, 7, (0.30, 0.45), ["7 rollouts per task (needs the recipe's group size, 8)"]),
        (200, 8, (0.30, 0.4506), ["the F interval 0.151 wide (needs <= 0.15)"]),
        (200, 8, None, ["no F interval (--bootstrap 0, or fewer than 2 abstracts)"]),
        (
            40,
            4,
            (0.381, 0.745),  # the docs' old 40 x 4 probe
            [
                "40 tasks (needs >= 200)",
                "4 rollouts per task (needs the recipe's group size, 8)",
                "the F interval 0.364 wide (needs <= 0.15)",
            ],
        ),
    ],
)
def test_the_line_withholds_its_recommendation_from_a_run_too_small_to_give_it(
    tasks: int, rollouts: int, interval: tuple[float, float] | None, missing: list[str]
) -> None:
    intervals = None if interval is None else {"micro_f1": {"low": interval[0], "high": interval[1]}}
    got = calibration_summary(0.4, intervals, [], tasks=tasks, rollouts_per_task=rollouts)
    assert got["withheld"] == (missing or None)
    line = calibration_lines(got)[1]
    if missing:
        assert line.endswith(
            f"(no recipe value from this run: {'; '.join(missing)}; probe as docs/training/before-you-train.md shows)"
        )
    else:
        assert line.endswith("(recipe: f1_target = 0.400)")


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
        "default: the run recorded no valid costs) (no recipe value from this run: 2 tasks (needs >= 200); 1 "
        "rollout per task (needs the recipe's group size, 8); no F interval (--bootstrap 0, or fewer than 2 "
        "abstracts); probe as docs/training/before-you-train.md shows)"
    ) in out


def test_one_rollout_per_task_forecasts_no_tokens_but_gives_the_power() -> None:
    report = summarize(sampled_run(1), resamples=100, seed=0)
    f = report["forecast"]
    assert (f["zero_advantage"]["unavailable"], f["tokens"], f["power"]["tasks"]) == (
        "needs >= 2 rollouts per task",
        None,
        report["n_tasks"],
    )


def test_the_forecast_gives_the_zero_advantage_share_at_other_no_relation_shares() -> None:
    """Gold pairs all-equal 1 of 4, NO-RELATION pairs 3 of 4: a mix at NO-RELATION share s is s x 3/4 + (1-s) x 1/4."""
    same, mixed = [(0.1, 10, 20)] * 8, [(0.1, 10, 20)] * 7 + [(-0.4, 10, 20)]
    groups = [same, mixed, mixed, mixed, same, same, same, mixed]
    negative = [False] * 4 + [True] * 4
    z = forecast_summary(groups, None, negative=negative)["zero_advantage"]
    assert z["by_negative_share"] == {
        "positive": 0.25,
        "negative": 0.75,
        "negative_share": 0.5,
        "at": [{"negative_share": 0.5, "share": 0.5}, {"negative_share": 0.3, "share": 0.3 * 0.75 + 0.7 * 0.25}],
    }
    assert (
        "    gold pairs 25.0%, NO-RELATION pairs 75.0% (this probe's NO-RELATION share 0.50); at a NO-RELATION share "
        "of 0.5: 50.0%, 0.3: 40.0%"
    ) in forecast_lines(forecast_summary(groups, None, negative=negative))
    assert "by_negative_share" not in forecast_summary(groups, None)["zero_advantage"]  # extraction mode: no kinds
