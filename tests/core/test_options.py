"""Tests of drugprot.core.options: the knob table, TaskOptions and the checks of every knob."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import KNOBS, TaskOptions, knob_names, parse_negatives
from drugprot.core.rewards import PRESETS, Costs, Reward, Weights


@pytest.mark.parametrize(("value", "expected"), [(0, 0), (3, 3), ("2", 2), ("all", "all"), (" ALL ", "all")])
def test_parse_negatives(value, expected) -> None:
    assert parse_negatives(value) == expected


@pytest.mark.parametrize("value", [-1, "some", True, 1.5, None, "²"])
def test_parse_negatives_rejects(value) -> None:
    with pytest.raises(DrugprotConfigError, match="non-negative integer or 'all'") as err:
        parse_negatives(value)
    assert err.value.knob == "negatives" and isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    ("knobs", "knob", "message"),
    [
        ({"split": "test"}, "split", "unknown split 'test'; expected one of train, validation"),
        ({"num_tasks": 0}, "num_tasks", "num_tasks must be a positive integer, or unset for the whole split; got 0"),
        ({"num_tasks": -3}, "num_tasks", "num_tasks must be a positive integer, or unset for the whole split; got -3"),
        (
            {"num_tasks": True},
            "num_tasks",
            "num_tasks must be a positive integer, or unset for the whole split; got True",
        ),
        ({"negatives": -1}, "negatives", "negatives must be a non-negative integer or 'all', got -1"),
        ({"seed": "7"}, "seed", "seed must be an integer, got '7'"),
        ({"shuffle": 1}, "shuffle", "shuffle must be true or false, got 1"),
        ({"data_path": ""}, "data_path", "data_path must be a file or directory path, or unset for the hub; got ''"),
        (
            {"accuracy_weight": float("nan")},
            "accuracy_weight",
            "accuracy_weight must be a real number from -1000 to 1000, got nan",
        ),
        ({"utility_weight": "1"}, "utility_weight", "utility_weight must be a real number from -1000 to 1000, got '1'"),
        ({"reward": "f1"}, "reward", "unknown reward 'f1'; expected one of accuracy, utility"),
        ({"reward": ["utility"]}, "reward", "unknown reward ['utility']; expected one of accuracy, utility"),
        ({"fp_cost": -0.1}, "fp_cost", "fp_cost must be a real number from 0 to 1000, got -0.1"),
        ({"fn_cost": float("inf")}, "fn_cost", "fn_cost must be a real number from 0 to 1000, got inf"),
        ({"fn_cost": True}, "fn_cost", "fn_cost must be a real number from 0 to 1000, got True"),
        (
            {"revision": " "},
            "revision",
            "revision must be a commit sha, branch or tag of the hub dataset, or unset for its default branch; got ' '",
        ),
        (
            {"revision": "3f2a9c1", "data_path": "train.jsonl"},
            "revision",
            "revision '3f2a9c1' selects a version of the hub dataset, but data_path 'train.jsonl' loads local data; "
            "unset one of them (a local file is versioned by its contents)",
        ),
    ],
)
def test_bad_knobs_are_config_errors(knobs, knob, message) -> None:
    with pytest.raises(DrugprotConfigError) as err:
        TaskOptions.from_knobs(knobs)
    assert (str(err.value), err.value.knob) == (message, knob)
    assert isinstance(err.value, ValueError)


def test_negatives_are_normalised() -> None:
    assert TaskOptions(negatives=" ALL ").negatives == "all" and TaskOptions(negatives="3").negatives == 3


def test_the_knob_table() -> None:
    assert knob_names("v1") == (
        "split", "data_path", "revision", "num_tasks", "shuffle", "seed", "reward", "fp_cost", "fn_cost", "f1_target",
        "accuracy_weight", "utility_weight", "format_weight", "mark_entities", "negatives", "mode", "data_label",
    )  # fmt: skip
    assert knob_names("v0") == (*knob_names("v1"), "train_split")


def test_task_options_defaults_are_the_table_defaults() -> None:
    options = TaskOptions()
    defaults = {knob.name: knob.default for knob in KNOBS}
    for name in (
        "split",
        "data_path",
        "revision",
        "num_tasks",
        "shuffle",
        "seed",
        "mark_entities",
        "negatives",
        "mode",
        "reward",
        "fn_cost",
        "f1_target",
    ):
        assert getattr(options, name) == defaults[name], name
    # fp_cost unset and no f1_target: the package's default cost
    assert (defaults["fp_cost"], options.fp_cost) == (None, 0.5)
    # the weight knobs default to unset: the `reward` preset's weights
    assert (defaults["accuracy_weight"], defaults["utility_weight"], defaults["format_weight"]) == (None, None, None)
    assert options.weights == Weights(accuracy=0.0, utility=1.0, format=0.125) == PRESETS["utility"]
    assert options.make_reward() == Reward("utility", Costs(0.5, 1.0), PRESETS["utility"])
    assert (options.with_no_relation, options.source) == (False, "hub:OpenMed/drugprot-parquet[validation]")


def test_from_knobs_folds_the_weights_and_ignores_adapter_only_knobs() -> None:
    options = TaskOptions.from_knobs(
        {"format_weight": 0.5, "data_label": "x", "train_split": "train", "negatives": "2"}
    )
    assert (options.weights, options.negatives, options.with_no_relation) == (
        Weights(accuracy=0.0, utility=1.0, format=0.5),
        2,
        True,
    )
    assert TaskOptions.from_knobs({"data_path": "d.jsonl"}).source == "d.jsonl"
    with pytest.raises(DrugprotConfigError) as err:
        TaskOptions.from_knobs({"negative": 1})
    assert (str(err.value), err.value.knob) == (
        "unknown knob 'negative'; the knobs are " + ", ".join(knob_names("v0")),
        "negative",
    )


@pytest.mark.parametrize(
    ("knobs", "weights"),
    [
        ({}, (0.0, 1.0, 0.125)),
        ({"reward": "utility"}, (0.0, 1.0, 0.125)),
        ({"reward": "accuracy"}, (1.0, 0.0, 0.125)),
        ({"reward": "accuracy", "utility_weight": 0.5}, (1.0, 0.5, 0.125)),
        ({"reward": "utility", "accuracy_weight": 2, "format_weight": 0}, (2.0, 1.0, 0.0)),
        ({"reward": "utility", "utility_weight": None}, (0.0, 1.0, 0.125)),  # None: unset, the preset's
        ({"format_weight": 0.1, "utility_weight": 0.7}, (0.0, 0.703125, 0.09375)),  # on the 1/64 grid: 45/64, 6/64
    ],
)
def test_the_reward_knob_presets_the_weights_and_a_set_weight_knob_wins(knobs, weights) -> None:
    options = TaskOptions.from_knobs(knobs)
    assert dataclasses.astuple(options.weights) == weights
    assert options.make_reward().weighting == options.weights


def test_the_costs_reach_the_reward() -> None:
    reward = TaskOptions.from_knobs({"fp_cost": 0.3, "fn_cost": 2}).make_reward()  # 0.3 runs as 19/64
    assert (reward.kind, reward.costs.fp, reward.costs.fn) == ("utility", 0.296875, 2.0)
    assert reward.costs.threshold == 0.296875 / 3.296875


@pytest.mark.parametrize(
    ("knobs", "fp_cost"),
    [
        ({"f1_target": 0.4}, 0.5),  # 0.4 * 2 / 1.6: the default cost is the one calibrated at F1 0.4
        ({"f1_target": 0.3}, 23 / 64),  # 0.6 / 1.7 = 0.3529 on the 1/64 grid
        ({"f1_target": 0.6, "fn_cost": 1}, 55 / 64),  # 1.2 / 1.4 = 0.8571
        ({"f1_target": 0.5, "fn_cost": 2}, 1.0),  # 1.5 / 1.5
        ({"f1_target": None, "fp_cost": 0.3}, 19 / 64),
    ],
)
def test_f1_target_derives_fp_cost_where_the_threshold_is_half_the_f1(knobs: dict[str, Any], fp_cost: float) -> None:
    options = TaskOptions.from_knobs(knobs)
    reward = options.make_reward()
    assert options.fp_cost == fp_cost and reward.costs.fp == options.fp_cost
    target = knobs.get("f1_target")
    assert reward.f1_target == target
    if target is not None:  # the derived cost moved by at most 1/128, its threshold by at most 1/256 (fn_cost <= 2)
        assert abs(reward.costs.threshold - target / 2) <= 1 / 256
        assert reward.record()["f1_target"] == target
        assert f"fp_cost from f1_target {target:g})" in reward.describe()
    else:
        assert "f1_target" not in reward.record() and "f1_target" not in reward.describe()
    # Options rebuilt from built ones (dataclasses.replace) carry the derived cost and the target: the same setting.
    assert dataclasses.replace(options, seed=3).fp_cost == options.fp_cost


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        (
            {"f1_target": 0.4, "fp_cost": 0.5},
            "f1_target (0.4) and fp_cost (0.5) both set the utility's false-positive cost; set one of them "
            "(f1_target derives fp_cost = F(1+fn_cost)/(2-F))",
        ),
        (
            {"f1_target": 0},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got 0",
        ),
        (
            {"f1_target": 1.0},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got 1.0",
        ),
        (
            {"f1_target": math.nan},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got nan",
        ),
        (
            {"f1_target": True},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got True",
        ),
        (
            {"f1_target": "0.4"},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got '0.4'",
        ),
        (
            {"f1_target": 10**5000},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got an integer of more than 4300 digits",
        ),
        (
            {"f1_target": 10**400},
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            "calibration line), got 1000000000000000000000000000000000000...",
        ),
        (
            {"f1_target": 10**400, "fp_cost": 0.5},
            "f1_target (1000000000000000000000000000000000000...) and fp_cost (0.5) both set the utility's "
            "false-positive cost; set one of them (f1_target derives fp_cost = F(1+fn_cost)/(2-F))",
        ),
        (
            {"f1_target": 0.9999, "fn_cost": 1000},
            "f1_target 0.9999 with fn_cost 1000 derives fp_cost 1000.8, above the largest cost 1000; lower "
            "f1_target or fn_cost",
        ),
    ],
    ids=[
        "with-fp-cost",
        "zero",
        "one",
        "nan",
        "bool",
        "string",
        "5000-digits",
        "400-digits",
        "400-digits-with-fp",
        "derived-above-max",
    ],  # fmt: skip
)
def test_a_bad_f1_target_is_a_config_error_naming_it(knobs: dict[str, Any], message: str) -> None:
    with pytest.raises(DrugprotConfigError) as err:
        TaskOptions.from_knobs(knobs)
    assert (str(err.value), err.value.knob) == (message, "f1_target")
    with pytest.raises(DrugprotConfigError, match="both set"):  # built directly: a contradicting cost is refused too
        TaskOptions(f1_target=0.4, fp_cost=0.3)
