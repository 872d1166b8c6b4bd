"""Tests of drugprot.core.options: the knob table, TaskOptions and the checks of every knob."""

from __future__ import annotations

import pytest

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import KNOBS, TaskOptions, knob_names, parse_negatives
from drugprot.core.scoring import Weights


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
        ({"accuracy_weight": float("nan")}, "accuracy_weight", "accuracy_weight must be a finite number, got nan"),
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
        "split", "data_path", "revision", "num_tasks", "shuffle", "seed", "accuracy_weight", "format_weight",
        "mark_entities", "negatives", "mode", "data_label",
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
    ):
        assert getattr(options, name) == defaults[name], name
    assert options.weights == Weights(accuracy=defaults["accuracy_weight"], format=defaults["format_weight"])
    assert (options.with_no_relation, options.source) == (False, "hub:OpenMed/drugprot-parquet[validation]")


def test_from_knobs_folds_the_weights_and_ignores_adapter_only_knobs() -> None:
    options = TaskOptions.from_knobs(
        {"format_weight": 0.5, "data_label": "x", "train_split": "train", "negatives": "2"}
    )
    assert (options.weights, options.negatives, options.with_no_relation) == (Weights(1.0, 0.5), 2, True)
    assert TaskOptions.from_knobs({"data_path": "d.jsonl"}).source == "d.jsonl"
    with pytest.raises(DrugprotConfigError) as err:
        TaskOptions.from_knobs({"negative": 1})
    assert (str(err.value), err.value.knob) == (
        "unknown knob 'negative'; the knobs are " + ", ".join(knob_names("v0")),
        "negative",
    )
