"""The knobs have one table, ``drugprot.core.options.KNOBS``, and three places that expose them: the v1
``DrugprotConfig`` fields (``--env.taskset.<knob>``), the v0 ``load_environment`` keyword arguments
(``-a '{...}'``) and the README's knob table. Each place lists exactly the table's knobs of its stack, in the
table's order, with the table's defaults, so a knob added in one place only fails here."""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path
from typing import Any

import pydantic
import pytest
import verifiers.v1 as vf

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import KNOBS, TaskOptions, knob_names
from drugprot.core.rewards import Weights
from drugprot.envs.legacy import load_environment
from drugprot.envs.taskset import DrugprotConfig

ROOT = Path(__file__).resolve().parents[2]
ENV_README = ROOT / "environments" / "drugprot" / "README.md"
DEFAULTS = {knob.name: knob.default for knob in KNOBS}
HELP = {knob.name: knob.help for knob in KNOBS}


def v1_fields() -> dict[str, pydantic.fields.FieldInfo]:
    """``DrugprotConfig``'s own fields (not those of verifiers' ``TasksetConfig``), in declaration order."""
    return {name: f for name, f in DrugprotConfig.model_fields.items() if name not in vf.TasksetConfig.model_fields}


def readme_rows() -> list[tuple[str, str]]:
    """``(knob, default)`` of every row of the README's knob table (between its ``knobs:start``/``knobs:end``
    markers, below the header)."""
    text = ENV_README.read_text(encoding="utf-8")
    table = text.split("<!-- knobs:start -->\n", 1)[1].split("<!-- knobs:end -->", 1)[0]
    header, rule, *rows = table.strip().splitlines()
    assert (header, rule) == ("| Arg | Type | Default | Stacks | Description |", "|---|---|---|---|---|")
    return [re.fullmatch(r"\| `(\w+)` \| [^|]+ \| `([^`]*)` \| [v01, ]+ \| .+ \|", row).groups() for row in rows]  # type: ignore[union-attr]


def test_the_stacks_split_the_table() -> None:
    """Every knob is on both stacks but ``train_split`` (the legacy env's training dataset)."""
    assert knob_names("v0") == tuple(DEFAULTS)
    assert knob_names("v1") == tuple(name for name in DEFAULTS if name != "train_split")


def test_v1_config_fields_are_the_v1_knobs() -> None:
    fields = v1_fields()
    assert tuple(fields) == knob_names("v1")
    assert {name: f.default for name, f in fields.items()} == {name: DEFAULTS[name] for name in knob_names("v1")}
    assert {name: f.description for name, f in fields.items()} == {name: HELP[name] for name in knob_names("v1")}


def test_v1_defaults_are_the_default_options() -> None:
    """A config with no knob set gives ``TaskOptions()``: the field defaults select what the core's defaults do."""
    assert DrugprotConfig(id="drugprot").options() == TaskOptions()


def test_load_environment_arguments_are_the_v0_knobs() -> None:
    """Every v0 knob is a keyword argument with the table's default (``split`` first, ``train_split`` second: the
    order positional callers rely on)."""
    params = inspect.signature(load_environment).parameters
    assert set(params) == set(knob_names("v0")) and tuple(params)[:2] == ("split", "train_split")
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params.values())
    assert {name: p.default for name, p in params.items()} == DEFAULTS


def test_load_environment_documents_every_v0_knob() -> None:
    """Its docstring's ``Args:`` section names exactly the v0 knobs, in the signature's order."""
    doc = inspect.getdoc(load_environment) or ""
    args = doc.split("\nArgs:\n", 1)[1].split("\n\n", 1)[0]
    documented = re.findall(r"^    (\w+): ", args, re.MULTILINE)
    assert documented == list(inspect.signature(load_environment).parameters)


def test_readme_knob_table_is_the_table() -> None:
    assert readme_rows() == [(name, str(default)) for name, default in DEFAULTS.items()]


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"format_weight": math.nan}, "format_weight must be a real number from -1000 to 1000, got nan"),
        ({"accuracy_weight": math.inf}, "accuracy_weight must be a real number from -1000 to 1000, got inf"),
        ({"negatives": -1}, "negatives must be a non-negative integer or 'all', got -1"),
        ({"num_tasks": 0}, "num_tasks must be a positive integer, or unset for the whole split; got 0"),
        ({"mode": "extraction", "negatives": 1}, "negatives is a pair-mode knob"),
        ({"fp_cost": -0.5}, "fp_cost must be a real number from 0 to 1000, got -0.5"),
        ({"fn_cost": math.nan}, "fn_cost must be a real number from 0 to 1000, got nan"),
        ({"f1_target": 0.4, "fp_cost": 0.5}, "f1_target (0.4) and fp_cost (0.5) both set the utility's false-positive"),
        ({"f1_target": 1.2}, "f1_target must be a micro-F1 strictly between 0 and 1"),
    ],
    ids=[
        "nan-weight",
        "inf-weight",
        "negatives",
        "num-tasks",
        "extraction-negatives",
        "fp-cost",
        "fn-cost",
        "f1-target-and-fp-cost",
        "f1-target",
    ],
)
def test_v1_config_validates_through_the_core(knobs: dict[str, Any], message: str) -> None:
    """A value pydantic's types accept but the core rejects is a validation error with the core's message."""
    with pytest.raises(pydantic.ValidationError) as err:
        DrugprotConfig(id="drugprot", **knobs)
    assert message in str(err.value)


def test_weights_are_the_validated_options_weights() -> None:
    """The weights the config folds into ``task.rewards`` are ``TaskOptions.weights``: an int knob arrives as
    the float the options hold, in the config, in ``task.rewards`` and in ``weights()``."""
    config = DrugprotConfig(id="drugprot", accuracy_weight=2, format_weight=0.25)
    assert config.options().weights == config.weights() == Weights(accuracy=2.0, utility=1.0, format=0.25)
    assert {name: entry.weight for name, entry in config.task.rewards.items()} == {
        "accuracy": 2.0,
        "utility": 1.0,
        "format": 0.25,
    }
    assert config.options().make_reward().costs.threshold == 0.5 / 2.5


def test_an_unknown_reward_is_refused_on_both_stacks() -> None:
    with pytest.raises(pydantic.ValidationError) as err:
        DrugprotConfig(id="drugprot", reward="f1")
    assert "reward" in str(err.value) and "'accuracy' or 'utility'" in str(err.value)  # pydantic's Literal check
    with pytest.raises(DrugprotConfigError) as core:
        TaskOptions.from_knobs({"reward": "f1"})
    assert (str(core.value), core.value.knob) == ("unknown reward 'f1'; expected one of accuracy, utility", "reward")


def test_f1_target_sets_the_cost_the_tasks_carry() -> None:
    """``f1_target`` 0.3 derives ``fp_cost`` 0.6/1.7 = 0.3529, on the reward grid 23/64, for the reward and every
    task's data; the ``fp_cost`` field stays unset (the two are exclusive, so the validated config validates
    again), and without a target it reads the cost in effect."""
    config = DrugprotConfig(id="drugprot", f1_target=0.3)
    assert (config.fp_cost, config.f1_target) == (None, 0.3)
    assert config.options().fp_cost == config.task.fp_cost == 23 / 64
    assert config.options().make_reward().record()["f1_target"] == 0.3
    assert DrugprotConfig.model_validate(config.model_dump()).options() == config.options()
    assert DrugprotConfig(id="drugprot").fp_cost == 0.5


HOSTILE_REWARD_KNOBS = [
    {"fn_cost": False},
    {"fp_cost": 1e308},
    {"fp_cost": 10**400},
    {"utility_weight": -1e308},
    {"format_weight": True},
    {"f1_target": 10**5000},  # issue 43: was pydantic's own error on v1, a bare ValueError on v0
    {"f1_target": 10**400},
    {"f1_target": True},
]


@pytest.mark.parametrize(
    "knobs", HOSTILE_REWARD_KNOBS, ids=["bool", "1e308", "1e400", "w1e308", "wbool", "f5000", "f400", "fbool"]
)
def test_both_stacks_refuse_a_bad_reward_knob_with_the_same_line(knobs: dict[str, Any]) -> None:
    """The v1 config checks the raw value (before pydantic reads ``false`` as 0.0 or overflows on a huge int) with
    the check the v0 route (``TaskOptions``) uses: the same typed error, the same one line."""
    with pytest.raises(DrugprotConfigError) as v0:
        TaskOptions.from_knobs(knobs)
    with pytest.raises(pydantic.ValidationError) as v1:
        DrugprotConfig(id="drugprot", **knobs)
    (error,) = v1.value.errors()
    assert isinstance(error["ctx"]["error"], DrugprotConfigError)
    assert str(error["ctx"]["error"]) == str(v0.value) and "\n" not in str(v0.value)
    assert error["ctx"]["error"].knob == v0.value.knob == next(iter(knobs))
