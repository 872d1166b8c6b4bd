"""The step-0 forecast of a run: what a GRPO run on these tasks would drop, what its steps would teach, and what
differences an eval of this size can resolve.

* **Zero-advantage share.** GRPO's advantage is a rollout's reward minus its group's mean: a group whose rewards are
  all equal has advantage 0 everywhere and prime-rl drops it (its filter tests the advantage for exact zero). A
  probe run with the recipe's reward and its group size (``rollouts_per_example``, prime-rl's ``group_size``) as
  rollouts per task forecasts that share at step 0: the tasks whose recorded rewards are all equal, compared exactly
  (the rewards are dyadic, so equal rewards are equal floats: ``drugprot.core.rewards``).
* **Tokens per step that teach.** The recorded prompt + completion tokens of the rollouts in groups that teach, per
  rollout of the run, times the recipe's ``batch_size`` (``RECIPE_BATCH_SIZE``): what a step spends on rollouts
  that carry a gradient.
* **Power.** The standard error of the run's micro-F1 over abstracts (the bootstrap interval's width over
  ``2 · 1.96``); two evals of this size on independent draws differ by ``√2 · SE`` in sd, so the difference a
  two-sided 5% test detects with 80% power is ``(1.96 + 0.84) · √2 · SE`` (a paired comparison on the same tasks
  detects less: this is its upper bound), and the eval size that detects ``TARGET_DELTA`` scales the tasks by the
  square of the ratio (SE falls as one over the square root of the abstracts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

RECIPE_BATCH_SIZE = 128
"""Rollouts per step of the recipe (``configs/drugprot.toml``'s ``orchestrator.batch_size``; tests/test_configs.py
checks the two agree)."""
Z_TEST, Z_POWER = 1.959963984540054, 0.8416212335729143
"""The normal quantiles of a two-sided 5% test and of 80% power."""
TARGET_DELTA = 0.02
"""The ΔF1 whose eval size the forecast gives (the differences between recipes are 0.006–0.03)."""


def zero_advantage(groups: Sequence[Sequence[float | None]]) -> dict[str, Any]:
    """Of the tasks with 2 rollouts or more, how many have rewards all equal (exactly), with the share; None fields
    when some rollout recorded no reward or no task has 2 rollouts (the forecast then says why)."""
    multi = [g for g in groups if len(g) >= 2]
    if not multi:
        return {"tasks": 0, "equal": None, "share": None, "unavailable": "needs >= 2 rollouts per task"}
    if any(r is None for g in multi for r in g):
        return {"tasks": len(multi), "equal": None, "share": None, "unavailable": "some rollouts recorded no reward"}
    equal = sum(all(r == g[0] for r in g) for g in multi)
    return {"tasks": len(multi), "equal": equal, "share": equal / len(multi), "unavailable": None}


def teaching_tokens(groups: Sequence[Sequence[tuple[float | None, int | None, int | None]]]) -> dict[str, Any] | None:
    """Per rollout ``(reward, prompt tokens, completion tokens)`` by task: the mean tokens per rollout, those of
    rollouts in groups that teach (rewards not all equal) per rollout of the run, and per recipe step; None when
    some rollout recorded no tokens or no reward."""
    rows = [r for g in groups for r in g]
    if not rows or any(None in r for r in rows):
        return None
    teach = sum(p + c for g in groups if len({r for r, _, _ in g}) > 1 for _, p, c in g)  # type: ignore[operator]
    total = sum(p + c for _, p, c in rows)  # type: ignore[operator]
    per_rollout = teach / len(rows)
    return {
        "mean_per_rollout": total / len(rows),
        "teaching_per_rollout": per_rollout,
        "batch_size": RECIPE_BATCH_SIZE,
        "teaching_per_step": per_rollout * RECIPE_BATCH_SIZE,
    }


def power(interval: Mapping[str, Any] | None, tasks: int) -> dict[str, Any] | None:
    """The ΔF1 an eval of ``tasks`` tasks detects with 80% power and the tasks that detect ``TARGET_DELTA``, from
    the run's micro-F1 interval over abstracts (None without one)."""
    if interval is None or interval.get("low") is None:
        return None
    se = (interval["high"] - interval["low"]) / (2 * Z_TEST)
    detects = (Z_TEST + Z_POWER) * math.sqrt(2) * se
    return {
        "se": se,
        "tasks": tasks,
        "detects_80": detects,
        "target_delta": TARGET_DELTA,
        "tasks_for_target": math.ceil(tasks * (detects / TARGET_DELTA) ** 2) if se > 0 else None,
    }


def forecast_summary(
    groups: Sequence[Sequence[tuple[float | None, int | None, int | None]]],
    interval: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The ``forecast`` of a report: per task its rollouts' ``(reward, prompt tokens, completion tokens)``, and the
    run's micro-F1 interval over abstracts (``intervals["micro_f1"]``, or None). The tokens that teach only where the
    zero-advantage share is known (groups of 2 or more rollouts, every reward recorded)."""
    ks = [len(g) for g in groups]
    zero = zero_advantage([[r for r, _, _ in g] for g in groups])
    return {
        "group_size": min(ks) if ks and min(ks) == max(ks) else None,
        "rollouts_per_task": {"min": min(ks, default=0), "max": max(ks, default=0)},
        "zero_advantage": zero,
        "tokens": teaching_tokens(groups) if zero["share"] is not None else None,
        "power": power(interval, len(groups)),
    }


def _count(n: float) -> str:
    return f"{n:,.0f}"


def forecast_lines(forecast: Mapping[str, Any] | None) -> list[str]:
    """The report's forecast lines (none without a ``forecast``)."""
    if forecast is None:
        return []
    z, tokens, p = forecast["zero_advantage"], forecast["tokens"], forecast["power"]
    k = forecast["rollouts_per_task"]
    size = f"{k['min']}" if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    if z["share"] is None:
        head = f"  step-0 forecast: zero-advantage share unknown ({z['unavailable']}; run with the recipe's group size)"
    else:
        head = (
            f"  step-0 forecast (groups of {size} rollouts, the recorded rewards): {z['equal']} of {z['tasks']} tasks "
            f"({z['share']:.1%}) earn equal rewards on every rollout: zero advantage, dropped by prime-rl"
        )
    out = [head]
    if tokens is not None:
        out.append(
            f"    tokens that teach: {_count(tokens['teaching_per_rollout'])} of {_count(tokens['mean_per_rollout'])} "
            f"prompt+completion tokens per rollout; {_count(tokens['teaching_per_step'])} per step of "
            f"{tokens['batch_size']} rollouts (the recipe's batch_size)"
        )
    if p is not None:
        need = "" if p["tasks_for_target"] is None else f"; ΔF1 {p['target_delta']:g} needs {p['tasks_for_target']:,}"
        out.append(
            f"    power: SE of micro-F1 {p['se']:.4f} over abstracts; two evals of {p['tasks']:,} tasks detect "
            f"ΔF1 {p['detects_80']:.3f} with 80% power (5% two-sided){need}"
        )
    return out
