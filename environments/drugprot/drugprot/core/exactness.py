"""The reward knobs checked when a run is configured: none that snaps to 0 on the reward grid, and no setting whose
all-equal groups could keep a nonzero float32 advantage in prime-rl.

**Snapping to 0.** Every cost and weight runs on the reward grid (``rewards.on_grid``, multiples of 1/64), so a
value of magnitude at most 1/128 would run as 0 without a word: ``fp_cost = 0.005`` would charge nothing. It is
refused (``check_nonzero_on_grid``), naming the knob and the smallest value that is not; 0 itself means none. An
``f1_target`` whose derived ``fp_cost`` snaps to 0 is refused the same way (``smallest_f1_target``).

**Exact group means.** prime-rl drops a group of equal rewards only when its float32 mean is exactly the reward
(``rewards.exact_group_means``). A reward that is a multiple of ``1/Q`` (``Q`` a power of 2) has exact group means
for every group of up to ``GROUP_SIZES`` = 256 while ``|reward| <= EXACT_NUMERATOR / Q``: its odd numerator times
255 stays below 2^24 (``tests/core/test_group_means.py`` checks every multiple up to that bound, and one beyond that
fails). ``Q`` follows from the knobs (``reward_resolution``): a weight off the 1/8 grid times a cost on the 1/64 grid
gives multiples of 1/4096 (exact while ``|reward| <= 16``), the presets' weights with costs on the grid multiples of
1/64 at most (exact while ``|reward| <= 1024``). The largest ``|reward|`` a setting can give (``reward_reach``) comes
from the most cells one task's reply can score, a bound each task mode states (``TaskMode.cell_bounds``). A setting
that can exceed its bound is refused in one line naming the knob and the bound (``check_exact_rewards``).
"""

from __future__ import annotations

from fractions import Fraction

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.rewards import (
    REWARD_GRID,
    Costs,
    Weights,
    checked_reward_knob,
    fp_cost_for_f1,
    on_grid,
    weight_knob,
)

EXACT_NUMERATOR = 2**16
"""A multiple ``m / Q`` of ``1/Q`` with ``|m| <= EXACT_NUMERATOR`` has exact float32 group means for every group of up
to 256 (``m``'s odd part times 255 is below 2^24); ``tests/core/test_group_means.py`` proves it for every such ``m``."""
SNAPS_TO_ZERO = 1 / (2 * REWARD_GRID)
"""A cost or weight of magnitude at most this (1/128) runs as 0 on the reward grid (``on_grid`` rounds ties to even)."""
WEIGHT_GRID = 8
"""The presets' weights (0, 1, 1/8) are multiples of 1/8; a weight off this grid refines the rewards' grid."""


def check_nonzero_on_grid(name: str, value: float) -> None:
    """Refuse a cost or weight that is not 0 but runs as 0 on the reward grid.

    Raises:
        DrugprotConfigError: naming the knob, the grid and the smallest magnitude that is not refused.
    """
    if value != 0 and abs(value) <= SNAPS_TO_ZERO:
        raise DrugprotConfigError(
            f"{name} {value:g} would run as 0 on the 1/{REWARD_GRID} reward grid; set 0 for none, or a magnitude "
            f"above {SNAPS_TO_ZERO:g} (1/{2 * REWARD_GRID}), which runs as at least {1 / REWARD_GRID:g}",
            knob=name,
        )


def check_grid_knob(name: str, value: object) -> float:
    """The one check of a cost or weight *knob* on both stacks (the v1 config's field validator, ``TaskOptions``):
    ``checked_reward_knob``'s range, then ``check_nonzero_on_grid``; the value on the reward grid.

    Raises:
        DrugprotConfigError: as either check, naming the knob.
    """
    raw = checked_reward_knob(name, value)
    check_nonzero_on_grid(name, raw)
    return on_grid(raw)


def smallest_f1_target(fn_cost: float) -> float:
    """The ``f1_target`` below or at which the derived ``fp_cost`` runs as 0: ``F(1+fn)/(2-F) <= 1/128`` exactly
    when ``F <= 2 / (128 (1 + fn) + 1)``."""
    return 2 / (2 * REWARD_GRID * (1 + fn_cost) + 1)


def check_f1_target_on_grid(f1_target: float, fn_cost: float) -> None:
    """Refuse an ``f1_target`` whose derived ``fp_cost`` runs as 0 on the reward grid.

    Raises:
        DrugprotConfigError: naming ``f1_target`` and the bound it must exceed.
    """
    derived = fp_cost_for_f1(f1_target, fn_cost)
    if abs(derived) <= SNAPS_TO_ZERO:
        raise DrugprotConfigError(
            f"f1_target {f1_target:g} with fn_cost {fn_cost:g} derives fp_cost {derived:.6g}, which would run as 0 on "
            f"the 1/{REWARD_GRID} reward grid; set an f1_target above {smallest_f1_target(fn_cost):.6g}, or fp_cost 0 "
            "for no cost",
            knob="f1_target",
        )


def _shown(value: float) -> str:
    """A value on the grid in full (2.296875, not 2.29688), without a trailing ``.0``."""
    return repr(float(value)).removesuffix(".0")


def _denominator(value: float) -> int:
    return Fraction(value).denominator


def reward_resolution(weights: Weights, costs: Costs, accuracy_grid: int) -> int:
    """The ``Q`` such that every reward is a multiple of ``1/Q``: each weighted term's weight denominator times its
    term's (the accuracy term a multiple of ``1/accuracy_grid``, the utility of the costs' denominators, the format
    term 0 or 1); every one is a power of 2 on the reward grid, so the largest is their common multiple."""
    term = {"accuracy": accuracy_grid, "utility": max(_denominator(costs.fp), _denominator(costs.fn)), "format": 1}
    return max((_denominator(w) * term[name] for name, w in weights.as_dict().items() if w), default=1)


def reward_reach(weights: Weights, costs: Costs, cells: tuple[int, int, int]) -> float:
    """The largest ``|reward|`` a task's reply can earn when it scores at most ``cells`` = (TP, FP, FN): each term's
    largest magnitude (accuracy and format at most 1, the utility ``TP`` or ``fp·FP + fn·FN``) times its weight's."""
    tp, fp, fn = cells
    utility = max(tp, costs.fp * fp + costs.fn * fn)
    return abs(weights.accuracy) + abs(weights.utility) * utility + abs(weights.format)


def check_exact_rewards(
    weights: Weights, costs: Costs, cells: tuple[int, int, int] | None, accuracy_grid: int, mode: str
) -> None:
    """Refuse a setting whose rewards can leave the exact range of float32 group means (see the module docstring);
    ``cells`` None (a mode that states no bound) checks nothing.

    Raises:
        DrugprotConfigError: one line naming the knob (a weight off the 1/8 grid, else the larger cost) and the bound.
    """
    if cells is None:
        return
    resolution = reward_resolution(weights, costs, accuracy_grid)
    bound = EXACT_NUMERATOR / resolution
    reach = reward_reach(weights, costs, cells)
    if reach <= bound:
        return
    off = [name for name, w in weights.as_dict().items() if _denominator(w) > WEIGHT_GRID]
    setting = f"fp_cost {_shown(costs.fp)}, fn_cost {_shown(costs.fn)}"
    if off:
        knob = weight_knob(off[0])
        raise DrugprotConfigError(
            f"{knob} {_shown(weights.of(off[0]))} is off the 1/{WEIGHT_GRID} grid, so rewards are multiples of 1/"
            f"{resolution}, whose float32 group means are exact only while |reward| <= {bound:g}; {mode}-mode rewards "
            f"reach {reach:g} here ({setting}): put the weight on the 1/{WEIGHT_GRID} grid or lower the costs",
            knob=knob,
        )
    _, fp, fn = cells
    knob = "fn_cost" if costs.fn * fn >= costs.fp * fp else "fp_cost"
    raise DrugprotConfigError(
        f"{knob} {_shown(getattr(costs, knob[:2]))} lets {mode}-mode rewards reach {reach:g} ({setting}), beyond "
        f"{bound:g}, where the float32 group means of multiples of 1/{resolution} stop being exact; lower {knob}",
        knob=knob,
    )


__all__ = [
    "EXACT_NUMERATOR",
    "SNAPS_TO_ZERO",
    "check_exact_rewards",
    "check_f1_target_on_grid",
    "check_grid_knob",
    "check_nonzero_on_grid",
    "reward_reach",
    "reward_resolution",
    "smallest_f1_target",
]
