"""Reward knobs checked when a run is configured, on both stacks (``drugprot.core.exactness``): a cost, weight or
``f1_target`` that would run as 0 on the 1/64 reward grid, and a setting whose rewards can leave the range where
prime-rl's float32 group means of equal rewards are exact, are refused in one line naming the knob and the bound.

The v1 stack is ``DrugprotConfig`` (what prime-rl validates); the v0 stack's ``load_environment`` builds its options
with ``TaskOptions.from_knobs`` (checked here directly, and through ``load_environment`` where verifiers 0.3 is
installed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pydantic
import pytest

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.exactness import EXACT_NUMERATOR, reward_reach, reward_resolution, smallest_f1_target
from drugprot.core.options import TaskOptions
from drugprot.core.rewards import Costs, Weights, exact_group_means
from drugprot.envs.taskset import DrugprotConfig

FIXTURE_JSONL = Path(__file__).resolve().parents[1] / "fixtures" / "drugprot_fixture.jsonl"
HAS_LEGACY = importlib.util.find_spec("verifiers.legacy") is not None

SNAPS = "would run as 0 on the 1/64 reward grid; set 0 for none, or a magnitude above 0.0078125 (1/128), which runs as "
REFUSED: list[tuple[dict[str, Any], str, str]] = [
    ({"fp_cost": 0.005}, "fp_cost", f"fp_cost 0.005 {SNAPS}at least 0.015625"),
    ({"fn_cost": 1 / 128}, "fn_cost", f"fn_cost 0.0078125 {SNAPS}at least 0.015625"),
    ({"format_weight": -0.007}, "format_weight", f"format_weight -0.007 {SNAPS}at least 0.015625"),
    (
        {"f1_target": 0.005},
        "f1_target",
        "f1_target 0.005 with fn_cost 1 derives fp_cost 0.00501253, which would run as 0 on the 1/64 reward grid; "
        "set an f1_target above 0.0077821, or fp_cost 0 for no cost",
    ),
    (
        {"mode": "extraction", "utility_weight": 0.7, "fp_cost": 0.1},
        "utility_weight",
        "utility_weight 0.703125 is off the 1/8 grid, so rewards are multiples of 1/2048, whose float32 group means "
        "are exact only while |reward| <= 32; extraction-mode rewards reach 49.3438 here (fp_cost 0.09375, fn_cost "
        "1): put the weight on the 1/8 grid or lower the costs",
    ),
    (
        {"mode": "extraction", "fn_cost": 400},
        "fn_cost",
        "fn_cost 400 lets extraction-mode rewards reach 25632.1 (fp_cost 0.5, fn_cost 400), beyond 8192, where the "
        "float32 group means of multiples of 1/8 stop being exact; lower fn_cost",
    ),
    (  # costs up to 4, a weight above 1 and off the eighths: docs/reward.md's bound of 16 is passed
        {"utility_weight": 2.3, "fp_cost": 0.11, "fn_cost": 4},
        "utility_weight",
        "utility_weight 2.296875 is off the 1/8 grid, so rewards are multiples of 1/4096, whose float32 group means "
        "are exact only while |reward| <= 16; pair-mode rewards reach 27.9387 here (fp_cost 0.109375, fn_cost 4): "
        "put the weight on the 1/8 grid or lower the costs",
    ),
]
IDS = ["fp-cost", "fn-cost-tie", "weight", "f1-target", "extraction-weight", "extraction-cost", "pair-weight"]


@pytest.mark.parametrize(("knobs", "knob", "message"), REFUSED, ids=IDS)
def test_the_v1_config_refuses_in_one_line(knobs: dict[str, Any], knob: str, message: str) -> None:
    with pytest.raises(pydantic.ValidationError) as err:
        DrugprotConfig(id="drugprot", **knobs)
    assert err.value.error_count() == 1 and message in str(err.value)


@pytest.mark.parametrize(("knobs", "knob", "message"), REFUSED, ids=IDS)
def test_the_v0_route_refuses_with_the_same_line(knobs: dict[str, Any], knob: str, message: str) -> None:
    with pytest.raises(DrugprotConfigError) as err:
        TaskOptions.from_knobs(knobs)
    assert (str(err.value), err.value.knob) == (message, knob)


@pytest.mark.skipif(not HAS_LEGACY, reason="verifiers >= 0.4 has no legacy (v0) stack")
@pytest.mark.parametrize(("knobs", "knob", "message"), REFUSED, ids=IDS)
def test_load_environment_refuses_with_the_same_line(knobs: dict[str, Any], knob: str, message: str) -> None:
    from drugprot.envs.legacy import load_environment

    with pytest.raises(DrugprotConfigError) as err:
        load_environment(data_path=str(FIXTURE_JSONL), **knobs)
    assert (str(err.value), err.value.knob) == (message, knob)


@pytest.mark.parametrize(
    "knobs",
    [
        {},
        {"mode": "extraction"},
        {"fp_cost": 0},
        {"fp_cost": 0.0079},  # just above 1/128: runs as 1/64
        {"f1_target": 0.0078},
        {"reward": "accuracy", "utility_weight": 0.7, "format_weight": 0.2, "fp_cost": 0.1},  # tests' "weights"
        {"fn_cost": 1000, "fp_cost": 1000},  # pair mode: multiples of 1/8 up to 4,000, inside 8,192
    ],
)
def test_settings_inside_the_bounds_are_accepted(knobs: dict[str, Any]) -> None:
    DrugprotConfig(id="drugprot", **knobs)
    TaskOptions.from_knobs(knobs)


def test_the_smallest_f1_target_is_where_the_derived_cost_stops_snapping_to_0() -> None:
    bound = smallest_f1_target(1.0)
    assert bound == 2 / 257
    assert TaskOptions.from_knobs({"f1_target": bound * 1.0001}).fp_cost == 1 / 64
    with pytest.raises(DrugprotConfigError):
        TaskOptions.from_knobs({"f1_target": bound})


def test_every_reward_within_the_reach_has_exact_group_means_at_the_bound() -> None:
    """The check's promise, against ``exact_group_means``: a setting it accepts has every reward up to its reach a
    multiple of 1/Q within ``EXACT_NUMERATOR / Q``, each exact (here at the largest accepted pair-mode costs)."""
    weights, costs = Weights(accuracy=0.0, utility=1.0, format=0.125), Costs(1000.0, 1000.0)
    resolution = reward_resolution(weights, costs, accuracy_grid=1)
    assert resolution == 8 and reward_reach(weights, costs, (1, 1, 3)) == 4000.125 < EXACT_NUMERATOR / resolution
    assert all(exact_group_means(m / resolution) for m in range(-4001 * 8, 4001 * 8, 7))
