"""The reward knobs (``fp_cost``, ``fn_cost`` and the three weights) have one validation,
``drugprot.core.rewards.check_reward_knob``: a real number, never a boolean, finite, a cost from 0 to ``MAX_COST``
and a weight from ``-MAX_WEIGHT`` to ``MAX_WEIGHT``. Within that range every reward is a finite float; outside it
the knob is refused with one line naming it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import TaskOptions
from drugprot.core.rewards import MAX_COST, MAX_WEIGHT, Costs, Reward, Weights, check_reward_knob

REWARD_KNOBS = ("fp_cost", "fn_cost", "accuracy_weight", "utility_weight", "format_weight")


@dataclass(frozen=True)
class Cells:
    """A scored reply as a reward reads it (``drugprot.core.rewards.Scored``)."""

    tp: int
    fp: int
    fn: int
    accuracy: float = 0.0
    format: float = 0.0


@pytest.mark.parametrize(
    ("knob", "value", "message"),
    [
        ("fn_cost", False, "fn_cost must be a real number from 0 to 1000, got False"),
        ("fp_cost", True, "fp_cost must be a real number from 0 to 1000, got True"),
        ("fp_cost", 1e308, "fp_cost must be a real number from 0 to 1000, got 1e+308"),
        ("fn_cost", 10**400, "fn_cost must be a real number from 0 to 1000, got " + "1" + "0" * 36 + "..."),
        ("fp_cost", 10**5000, "fp_cost must be a real number from 0 to 1000, got an integer of more than 4300 digits"),
        ("fp_cost", -0.0001, "fp_cost must be a real number from 0 to 1000, got -0.0001"),
        ("utility_weight", 1e308, "utility_weight must be a real number from -1000 to 1000, got 1e+308"),
        ("accuracy_weight", -1000.5, "accuracy_weight must be a real number from -1000 to 1000, got -1000.5"),
        ("format_weight", math.nan, "format_weight must be a real number from -1000 to 1000, got nan"),
        ("format_weight", "0.1", "format_weight must be a real number from -1000 to 1000, got '0.1'"),
    ],
    ids=[
        "false",
        "true",
        "1e308",
        "int-1e400",
        "int-1e5000",
        "negative-cost",
        "1e308-weight",
        "low-weight",
        "nan",
        "string",
    ],
)
def test_a_bad_reward_knob_is_refused_in_one_line_naming_it(knob: str, value: object, message: str) -> None:
    with pytest.raises(DrugprotConfigError) as err:
        check_reward_knob(knob, value)
    assert (str(err.value), err.value.knob) == (message, knob)
    with pytest.raises(DrugprotConfigError) as through_options:  # the v0 adapter's route
        TaskOptions.from_knobs({knob: value})
    assert str(through_options.value) == message


def test_the_range_ends_are_accepted_as_floats() -> None:
    assert [check_reward_knob("fp_cost", v) for v in (0, MAX_COST, 1000)] == [0.0, 1000.0, 1000.0]
    assert [check_reward_knob("utility_weight", v) for v in (-MAX_WEIGHT, 0, 7)] == [-1000.0, 0.0, 7.0]


KNOB_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.booleans(),
    st.floats(min_value=-MAX_WEIGHT, max_value=MAX_WEIGHT),
)
CELLS = st.integers(min_value=0, max_value=10**7)
"""A reply has fewer than 10^7 lines, so fewer than 10^7 false positives (``MAX_COST``'s docstring)."""


@given(
    knobs=st.tuples(*(KNOB_VALUES for _ in REWARD_KNOBS)),
    cells=st.tuples(CELLS, CELLS, CELLS),
    terms=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_no_accepted_knob_gives_a_non_finite_reward(
    knobs: tuple[object, ...], cells: tuple[int, int, int], terms: tuple[float, float]
) -> None:
    try:
        fp, fn, accuracy, utility, fmt = (check_reward_knob(k, v) for k, v in zip(REWARD_KNOBS, knobs, strict=True))
    except DrugprotConfigError as err:  # refused: then one of the values lies outside the documented range
        assert err.knob in REWARD_KNOBS
        return
    reward = Reward("utility", Costs(fp, fn), Weights(accuracy=accuracy, utility=utility, format=fmt))
    value = reward.value(Cells(*cells, *terms))
    assert math.isfinite(value) and math.isfinite(value * value * 10**9)  # a report's sum of squares stays finite
