"""The report's calibration line: the utility's ``fp_cost`` for the operating point a run measured.

micro-F1 is maximised by stating a relation whose probability of being right exceeds ``F*/2``, ``F*`` the F1 the
model reaches at its best threshold (Lipton, Elkan and Narayanaswamy 2014); the utility ``TP - fp·FP - fn·FN``
states it above ``fp / (1 + fp + fn)`` (``drugprot.core.rewards.Costs.threshold``). The two agree at
``fp = F·(1 + fn) / (2 − F)`` at ``F = F*`` (``drugprot.core.rewards.fp_cost_for_f1``). A run with several rollouts per
task estimates ``F*`` from its vote shares (``drugprot.evaluation.fstar``; each mode builds its cells), and the
line recommends ``f1_target = F*``; the run's own micro-F1 ``F`` (every rollout one prediction) understates it, and
with one rollout per task the line says so and falls back to ``F``. Measured where the official metric is
(NO-RELATION candidates or extraction mode; a positive-only run's F1 is another quantity). The interval of the cost
is the bootstrap interval of the target over abstracts mapped through the formula (it increases with ``F``).
A target of 0 defines no cost (the threshold would be 0: no charge for a false positive).

The recommendation is a value the knobs accept, as printed (issue 43): ``f1_target`` strictly between 0 and 1,
printed with the digits that keep it so (three decimals, more below 0.001), and deriving an ``fp_cost`` within
``MAX_COST``; where no such target exists the line recommends ``fp_cost`` itself or says why none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.rewards import DEFAULT_FN_COST, MAX_COST, fp_cost_for_f1, on_grid, threshold
from drugprot.evaluation.forecast import RECIPE_GROUP_SIZE
from drugprot.evaluation.fstar import MIN_ROLLOUTS, Abstract, f_star
from drugprot.evaluation.records import ExtractionRollout, Rollout
from drugprot.evaluation.summary import micro_f1_interval

FORMULA = "F(1+fn_cost)/(2-F)"
MIN_TASKS = 200
"""Tasks a run needs before the line recommends a value: a smaller probe's F* is biased upward (+0.03 to +0.05 F1
at 40 tasks x 4 rollouts in simulation) and can be 0 (issue 51)."""
MAX_WIDTH = 0.15
"""The widest interval of the target F* (or F) the line recommends a value from (0.15 F1 around F* 0.4 spans
``fp_cost`` 0.39–0.62 at fn_cost 1; between calibrations about 0.01 F1 is at stake there: evidence/README.md)."""
AT_STAKE = (
    "at stake between calibrations (F*, F or the default cost): <= 0.01 F1 near F* 0.4, about 0.05 at F* 0.17 "
    "(the sandbox: evidence/README.md)"
)


def withheld(tasks: int, rollouts_per_task: int, low: float | None, high: float | None, name: str = "F*") -> list[str]:
    """What a run lacks for the line to recommend a value (empty: nothing): ``MIN_TASKS`` tasks, the recipe's group
    size (``RECIPE_GROUP_SIZE``) as rollouts per task (F* is the vote-share F1 at that many rollouts), and an
    interval of the target ``name`` no wider than ``MAX_WIDTH``."""
    missing = []
    if tasks < MIN_TASKS:
        missing.append(f"{tasks:,} tasks (needs >= {MIN_TASKS})")
    if rollouts_per_task < RECIPE_GROUP_SIZE:
        rollouts = "1 rollout" if rollouts_per_task == 1 else f"{rollouts_per_task} rollouts"
        missing.append(f"{rollouts} per task (needs the recipe's group size, {RECIPE_GROUP_SIZE})")
    if low is None or high is None:
        missing.append(f"no {name} interval (--bootstrap 0, or fewer than 2 abstracts)")
    elif round(high - low, 3) > MAX_WIDTH:  # as printed: a width shown as 0.150 is not above 0.15
        missing.append(f"the {name} interval {high - low:.3f} wide (needs <= {MAX_WIDTH:g})")
    return missing


def _recorded_costs(rollouts: Sequence[Rollout | ExtractionRollout]) -> tuple[float, float] | None:
    """The costs most of the run's rollouts recorded (all of them, in any run made by one config), or None. The
    reader keeps only costs within the knobs' range, as recorded (``decode.rollout_costs``), so every figure below
    is defined and every figure of the run's own costs is the run's (never moved onto today's reward grid)."""
    recorded = Counter(r.costs for r in rollouts if r.costs is not None)
    return recorded.most_common(1)[0][0] if recorded else None


def shown_target(f1: float) -> str:
    """``f1`` as the line prints it: three decimals, or three significant digits below 0.001 (0.0004 is not 0)."""
    return f"{f1:.3f}" if f1 >= 0.001 else f"{f1:.3g}"


def advice(target: float, fn: float) -> dict[str, Any]:
    """What the line recommends for ``target`` at ``fn``: ``{"knob": "f1_target" | "fp_cost" | None, "value": the
    printed text, "why": why no f1_target}``. The printed value is one the knobs accept (issue 43): ``f1_target`` in
    (0, 1) as printed (``shown_target``) deriving an ``fp_cost`` of at most ``MAX_COST`` that is not 0 on the grid;
    else (a target that prints as 1, or one so small its cost runs as 0) ``fp_cost`` itself on the reward grid
    (``on_grid``, as the knob runs it, printed exactly) when it is at most ``MAX_COST``; else nothing, saying why.
    ``target`` > 0."""
    text = shown_target(target)
    value = float(text)
    if 0 < value < 1 and 0 < on_grid(fp_cost_for_f1(value, fn)) <= MAX_COST:
        return {"knob": "f1_target", "value": text, "why": None}
    why = f"f1_target takes 0 < F < 1, and F = {text}"
    if 0 < value < 1:  # a target so small its cost runs as 0 on the grid: the knob refuses it (core.exactness)
        why = f"f1_target {text} derives an fp_cost that runs as 0 on the 1/64 reward grid"
    cost = on_grid(fp_cost_for_f1(target, fn))
    if cost <= MAX_COST:
        return {"knob": "fp_cost", "value": repr(cost), "why": why}
    return {
        "knob": None,
        "value": None,
        "why": f"{why}, and fp_cost {cost:g} is above the maximum {MAX_COST:g} at fn_cost {fn:g}: lower fn_cost",
    }


def calibration_summary(
    f1: float,
    intervals: Mapping[str, Any] | None,
    rollouts: Sequence[Rollout | ExtractionRollout],
    *,
    abstracts: Mapping[str, Abstract] | None = None,
    rollouts_per_task: int = 1,
    tasks: int = 0,
    resamples: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """The ``calibration`` of a report: the run's micro-F1 ``f1`` (rollouts pooled) with its interval (from the
    report's ``intervals``, when it has them); ``f_star`` from the mode's vote-share cells ``abstracts`` (None with
    fewer than 2 rollouts per task, or without cells); the ``target`` (F* when estimated, else F), the threshold
    ``target / 2``, and the ``fp_cost`` that puts the utility's threshold there at the run's recorded ``fn_cost``
    (the default when the run recorded none), with the cost the run itself used and the ``advice`` (a value the
    knobs accept), ``withheld`` (what the run of ``tasks`` tasks lacks for the line to recommend it; None: nothing).
    ``fp_cost`` and its interval are None when the target is 0."""
    run_costs = _recorded_costs(rollouts)
    fn = run_costs[1] if run_costs is not None else DEFAULT_FN_COST
    bounds = micro_f1_interval(intervals)
    low, high = (bounds["low"], bounds["high"]) if bounds is not None else (None, None)
    star = (
        f_star(abstracts, rollouts_per_task=rollouts_per_task, resamples=resamples, seed=seed)
        if abstracts is not None and rollouts_per_task >= 2
        else None
    )
    target, t_low, t_high = (star["f1"], star["low"], star["high"]) if star is not None else (f1, low, high)
    defined = target > 0
    return {
        "f1": f1,
        "f1_low": low,
        "f1_high": high,
        "f_star": star,
        "target": "F*" if star is not None else "F",
        "target_f1": target,
        "threshold": target / 2,
        "fn_cost": fn,
        "fn_cost_recorded": run_costs is not None,
        "formula": f"fp_cost = {FORMULA}",
        "fp_cost": fp_cost_for_f1(target, fn) if defined else None,
        "fp_cost_low": fp_cost_for_f1(t_low, fn) if defined and t_low is not None else None,
        "fp_cost_high": fp_cost_for_f1(t_high, fn) if defined and t_high is not None else None,
        "advice": advice(target, fn) if defined else None,
        "withheld": withheld(tasks, rollouts_per_task, t_low, t_high, "F*" if star is not None else "F") or None,
        "run_fp_cost": run_costs[0] if run_costs is not None else None,
        "run_threshold": threshold(*run_costs) if run_costs is not None else None,  # as recorded, not re-snapped
    }


def _bracket(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"


def _star_text(c: Mapping[str, Any]) -> str:
    """The F* clause of the head line, or the note that F* needs more rollouts."""
    star = c["f_star"]
    if star is None:
        return (
            f"; F* (the F1 at the best vote-share threshold) needs >= {MIN_ROLLOUTS} rollouts per task, and F "
            "understates it"
        )
    at = "" if star["threshold"] is None else f" at vote share >= {star['threshold']:.3f}"
    coarse = "" if star["resolved"] else f" (coarse below {MIN_ROLLOUTS} rollouts per task)"
    return (
        f"; F* (the {star['rollouts_per_task']}-rollout vote-share F1) = {star['f1']:.3f}"
        f"{_bracket(star['low'], star['high'])}{at}{coarse}"
    )


def _recipe(a: Mapping[str, Any], missing: Sequence[str] | None) -> str:
    if missing:
        return (
            f"(no recipe value from this run: {'; '.join(missing)}; probe as docs/training/before-you-train.md shows)"
        )
    if a["knob"] is None:
        return f"(no recipe value: {a['why']})"
    if a["knob"] == "fp_cost":
        return f"(recipe: fp_cost = {a['value']}; {a['why']})"
    return f"(recipe: f1_target = {a['value']})"


def calibration_lines(calibration: Mapping[str, Any] | None) -> list[str]:
    """The report's calibration lines (none for a run without a ``calibration``: positive-only)."""
    if calibration is None:
        return []
    c = calibration
    fn = f"{c['fn_cost']:g}" + ("" if c["fn_cost_recorded"] else " (the default: the run recorded no valid costs)")
    name = c["target"]
    head = (
        f"  calibration: micro-F1 F = {c['f1']:.3f}{_bracket(c['f1_low'], c['f1_high'])}{_star_text(c)}; micro-F1 "
        f"gains from stating a relation that is right with p > {name}/2 = {c['threshold']:.3f}"
    )
    if c["fp_cost"] is None:
        return [
            head,
            f"    {name} = 0: no fp_cost is defined (a threshold of 0 charges nothing for a false positive); "
            "calibrate on a run that finds some relations",
        ]
    run = (
        ""
        if c["run_fp_cost"] is None
        else f"; this run's fp_cost {c['run_fp_cost']:g} puts it at {c['run_threshold']:.3f}"
    )
    return [
        head,
        f"    the utility's threshold is there at {c['formula']}"
        f"{' at F = F*' if name == 'F*' else ' at the run F'}: {c['fp_cost']:.3f}"
        f"{_bracket(c['fp_cost_low'], c['fp_cost_high'])} with fn_cost {fn} "
        f"{_recipe(c['advice'], c.get('withheld'))}{run}",
        f"    {AT_STAKE}",
    ]


def comparison_calibration_lines(cols: Sequence[str], reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each compared run's calibration, one line per run that has one (runs side by side)."""
    out: list[str] = []
    for col, report in zip(cols, reports, strict=True):
        c = report.get("calibration")
        if c is None:
            continue
        if not out:
            out += [
                "",
                f"Calibration (the fp_cost = {FORMULA} at F = F*, or the run's F, that puts the utility's threshold "
                "at micro-F1's F*/2)",
            ]
        cost = (
            f"no fp_cost defined ({c['target']} = 0)"
            if c["fp_cost"] is None
            else f"fp_cost {c['fp_cost']:.3f}{_bracket(c['fp_cost_low'], c['fp_cost_high'])} at fn_cost "
            f"{c['fn_cost']:g}" + ("" if c["fn_cost_recorded"] else " (default)")
        )
        f1 = f"F {c['f1']:.3f}{_bracket(c['f1_low'], c['f1_high'])}"
        if c["f_star"] is not None:
            f1 += f", F* {c['f_star']['f1']:.3f}{_bracket(c['f_star']['low'], c['f_star']['high'])}"
        out.append(f"  {col} {f1}, threshold {c['threshold']:.3f}: {cost}")
    return out
