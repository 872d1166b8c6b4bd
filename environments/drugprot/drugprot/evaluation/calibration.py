"""The report's calibration line: the utility's ``fp_cost`` for the operating point a run measured.

micro-F1 ``F`` is maximised by stating a relation whose probability of being right exceeds ``F / 2`` (Lipton,
Elkan and Narayanaswamy 2014); the utility ``TP - fp·FP - fn·FN`` states it above ``fp / (1 + fp + fn)``
(``drugprot.core.rewards.Costs.threshold``). The two agree at ``fp = F·(1 + fn) / (2 − F)``
(``drugprot.core.rewards.fp_cost_for_f1``), so a run's official micro-F1, measured where the official metric is
(NO-RELATION candidates or extraction mode; a positive-only run's F1 is another quantity), gives the cost a recipe
sets (the ``f1_target`` knob). The interval of that cost is the bootstrap interval of ``F`` over abstracts mapped
through the formula: it increases with ``F``, so the ends of the cost's interval are those of the same resamples.
A micro-F1 of 0 defines no cost (the threshold would be 0: no charge for a false positive).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.rewards import DEFAULT_FN_COST, Costs, fp_cost_for_f1
from drugprot.evaluation.records import ExtractionRollout, Rollout

FORMULA = "F*(1+fn_cost)/(2-F)"


def _recorded_costs(rollouts: Sequence[Rollout | ExtractionRollout]) -> tuple[float, float] | None:
    """The costs most of the run's rollouts recorded (all of them, in any run made by one config), or None."""
    recorded = Counter(r.costs for r in rollouts if r.costs is not None)
    return recorded.most_common(1)[0][0] if recorded else None


def calibration_summary(
    f1: float, intervals: Mapping[str, Any] | None, rollouts: Sequence[Rollout | ExtractionRollout]
) -> dict[str, Any]:
    """The ``calibration`` of a report: the run's micro-F1 ``f1`` (rollouts pooled) with its interval (from the
    report's ``intervals``, when it has them), the threshold ``F / 2``, and the ``fp_cost`` that puts the utility's
    threshold there at the run's recorded ``fn_cost`` (the default when the run recorded none), with the cost the
    run itself used. ``fp_cost`` and its interval are None when ``F`` is 0."""
    run_costs = _recorded_costs(rollouts)
    fn = run_costs[1] if run_costs is not None else DEFAULT_FN_COST
    bounds = intervals.get("micro_f1") if intervals is not None and "unavailable" not in intervals else None
    low, high = (bounds["low"], bounds["high"]) if bounds is not None else (None, None)
    defined = f1 > 0
    return {
        "f1": f1,
        "f1_low": low,
        "f1_high": high,
        "threshold": f1 / 2,
        "fn_cost": fn,
        "fn_cost_recorded": run_costs is not None,
        "formula": f"fp_cost = {FORMULA}",
        "fp_cost": fp_cost_for_f1(f1, fn) if defined else None,
        "fp_cost_low": fp_cost_for_f1(low, fn) if defined and low is not None else None,
        "fp_cost_high": fp_cost_for_f1(high, fn) if defined and high is not None else None,
        "run_fp_cost": run_costs[0] if run_costs is not None else None,
        "run_threshold": Costs(*run_costs).threshold if run_costs is not None else None,
    }


def _bracket(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"


def calibration_lines(calibration: Mapping[str, Any] | None) -> list[str]:
    """The report's calibration lines (none for a run without a ``calibration``: positive-only)."""
    if calibration is None:
        return []
    c = calibration
    fn = f"{c['fn_cost']:g}" + ("" if c["fn_cost_recorded"] else " (the default: the run recorded no costs)")
    head = (
        f"  calibration: micro-F1 F = {c['f1']:.3f}{_bracket(c['f1_low'], c['f1_high'])}; micro-F1 gains from "
        f"stating a relation that is right with p > F/2 = {c['threshold']:.3f}"
    )
    if c["fp_cost"] is None:
        return [
            head,
            "    F = 0: no fp_cost is defined (a threshold of 0 charges nothing for a false positive); calibrate on "
            "a run that finds some relations",
        ]
    run = (
        ""
        if c["run_fp_cost"] is None
        else f"; this run's fp_cost {c['run_fp_cost']:g} puts it at {c['run_threshold']:.3f}"
    )
    return [
        head,
        f"    the utility's threshold is there at {c['formula']} = {c['fp_cost']:.3f}"
        f"{_bracket(c['fp_cost_low'], c['fp_cost_high'])} with fn_cost {fn} (recipe: f1_target = {c['f1']:.3f})"
        f"{run}",
    ]


def comparison_calibration_lines(cols: Sequence[str], reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each compared run's calibration, one line per run that has one (runs side by side)."""
    out: list[str] = []
    for col, report in zip(cols, reports, strict=True):
        c = report.get("calibration")
        if c is None:
            continue
        if not out:
            out += ["", f"Calibration (the fp_cost = {FORMULA} that puts the utility's threshold at micro-F1's F/2)"]
        cost = (
            "no fp_cost defined (F = 0)"
            if c["fp_cost"] is None
            else f"fp_cost {c['fp_cost']:.3f}{_bracket(c['fp_cost_low'], c['fp_cost_high'])} at fn_cost "
            f"{c['fn_cost']:g}" + ("" if c["fn_cost_recorded"] else " (default)")
        )
        f1 = f"F {c['f1']:.3f}{_bracket(c['f1_low'], c['f1_high'])}"
        out.append(f"  {col} {f1}, threshold {c['threshold']:.3f}: {cost}")
    return out
