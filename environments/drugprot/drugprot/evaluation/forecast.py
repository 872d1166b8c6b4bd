"""The step-0 forecast of a run: what a GRPO run on these tasks would drop, what its steps would teach, and what
differences an eval of this size can resolve.

* **Zero-advantage share.** GRPO's advantage is a rollout's reward minus its group's mean: a group whose rewards are
  all equal has advantage 0 everywhere and prime-rl drops it (its filter tests the advantage for exact zero). A
  probe run with the recipe's reward and its group size (``rollouts_per_example``, prime-rl's ``group_size``) as
  rollouts per task forecasts that share at step 0: the tasks whose recorded rewards are all equal, compared exactly
  (the rewards are dyadic, so equal rewards are equal floats: ``drugprot.core.rewards``). A task with a rollout
  that recorded no reward (a failed episode) is left out and counted; the share at each smaller group size comes
  from subsets of the recorded rollouts (one sampling temperature: the probe's).
* **Tokens per step that teach.** The recorded prompt + completion tokens of the rollouts in groups that teach, per
  rollout of the run, times the recipe's ``batch_size`` (``RECIPE_BATCH_SIZE``): what a step spends on rollouts
  that carry a gradient.
* **Power.** The standard error of the run's micro-F1 over abstracts (the bootstrap interval's width over
  ``2 · 1.96``). Two evals of this size on *independent* draws of tasks differ by ``√2 · SE`` in sd, so the
  difference a two-sided 5% test detects with 80% power is ``(1.96 + 0.84) · √2 · SE``: the line says it is that
  comparison's. Two runs on the *same* tasks (in-training evals, ``drugprot report A B``) are compared paired: the
  comparison prints its own ``(1.96 + 0.84) · SE_Δ`` from the paired interval it computes (``paired_power``), on
  real data 0.3–0.8 of the independent figure (an outside re-check). The eval size that detects ``TARGET_DELTA``
  is extrapolated by abstracts (the SE falls as one over the square root of the abstracts, at the run's rollouts
  per task, not of the tasks), with a 90% interval from the SE's own uncertainty (its square is read as a
  chi-square with abstracts − 1 degrees of freedom: ``need_interval``), and flagged when it exceeds the validation
  split's abstracts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

from drugprot.core.sources.hub import SPLIT_SIZES

RECIPE_BATCH_SIZE = 128
"""Rollouts per step of the recipe (``configs/drugprot.toml``'s ``orchestrator.batch_size``; tests/test_configs.py
checks the two agree)."""
VALIDATION_ABSTRACTS: int = SPLIT_SIZES["validation"]["abstracts"]  # type: ignore[assignment]
"""The validation split's abstracts: an eval size beyond them is flagged."""
RECIPE_GROUP_SIZE = 8
"""Rollouts per task of the recipe (``orchestrator.group_size``; tests/test_configs.py checks the two agree): the
forecast's zero-advantage share and the calibration's F* are the recipe's at this many rollouts per task."""
Z_TEST, Z_POWER = 1.959963984540054, 0.8416212335729143
"""The normal quantiles of a two-sided 5% test and of 80% power."""
TARGET_DELTA = 0.02
"""The ΔF1 whose eval size the forecast gives (the differences between recipes are 0.006–0.03)."""


def _choose(n: int, k: int) -> int:
    return math.comb(n, k)


def zero_advantage(groups: Sequence[Sequence[float | None]]) -> dict[str, Any]:
    """Of the tasks with 2 rollouts or more and every reward recorded, how many have rewards all equal (exactly),
    with the share and ``left_out`` (tasks with a rollout that recorded no reward: a failed episode); and
    ``by_group_size``, the share at each smaller group size the recorded rollouts can show (2, 4, ...: the chance
    that that many of a task's rollouts, drawn without replacement, are all equal). None fields, with the reason,
    when no task qualifies."""
    multi = [g for g in groups if len(g) >= 2]
    if not multi:
        return {"tasks": 0, "equal": None, "share": None, "unavailable": "needs >= 2 rollouts per task", "left_out": 0}
    complete = [g for g in multi if all(r is not None for r in g)]
    left_out = len(multi) - len(complete)
    if not complete:
        return {"tasks": 0, "equal": None, "share": None, "left_out": left_out,
                "unavailable": "every task has a rollout that recorded no reward"}  # fmt: skip
    equal = sum(all(r == g[0] for r in g) for g in complete)
    smallest = min(len(g) for g in complete)
    sizes = [k for k in (2, 4, 8, 16, 32) if k < smallest]
    by_size = [
        {
            "group_size": k,
            "share": sum(sum(_choose(c, k) for c in Counter(g).values()) / _choose(len(g), k) for g in complete)
            / len(complete),
        }  # fmt: skip
        for k in sizes
    ]
    return {"tasks": len(complete), "equal": equal, "share": equal / len(complete), "unavailable": None,
            "left_out": left_out, "by_group_size": by_size}  # fmt: skip


def teaching_tokens(groups: Sequence[Sequence[tuple[float | None, int | None, int | None]]]) -> dict[str, Any] | None:
    """Per rollout ``(reward, prompt tokens, completion tokens)`` by task: the mean tokens per rollout, those of
    rollouts in groups that teach (rewards not all equal) per rollout of the run, and per recipe step, over the
    tasks whose every rollout recorded its reward and tokens (the others left out, as ``zero_advantage`` leaves
    them); None when no task did."""
    kept = [g for g in groups if g and all(None not in r for r in g)]
    rows = [r for g in kept for r in g]
    if not rows:
        return None
    teach = sum(p + c for g in kept if len({r for r, _, _ in g}) > 1 for _, p, c in g)  # type: ignore[operator]
    total = sum(p + c for _, p, c in rows)  # type: ignore[operator]
    per_rollout = teach / len(rows)
    return {
        "mean_per_rollout": total / len(rows),
        "teaching_per_rollout": per_rollout,
        "batch_size": RECIPE_BATCH_SIZE,
        "teaching_per_step": per_rollout * RECIPE_BATCH_SIZE,
    }


NEED_LEVEL = 0.90
"""The level of the interval of the eval size that detects ``TARGET_DELTA`` (5%–95%)."""


EXACT_BELOW = 30
"""Degrees of freedom below which the chi-square quantile is found exactly (bisection on its series CDF)."""


def _chi2_cdf(x: float, df: int) -> float:
    """The chi-square CDF: the regularised lower incomplete gamma P(df/2, x/2) by its series (exact to float)."""
    a, y = df / 2, x / 2
    if y <= 0:
        return 0.0
    term = total = 1 / a
    n = 0
    while term > total * 1e-16:
        n += 1
        term *= y / (a + n)
        total += term
    return min(1.0, math.exp(a * math.log(y) - y - math.lgamma(a)) * total)


def _chi2_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of a chi-square with ``df`` degrees of freedom: exact (bisection on ``_chi2_cdf``) below
    ``EXACT_BELOW``, Wilson–Hilferty from there (within 0.1%); the report does not import scipy.stats (2.6 s of
    CPU), and the tests check this against it."""
    if df < EXACT_BELOW:
        low, high = 0.0, df + 20 * math.sqrt(2 * df) + 20
        for _ in range(100):
            mid = (low + high) / 2
            low, high = (mid, high) if _chi2_cdf(mid, df) < p else (low, mid)
        return (low + high) / 2
    z = NormalDist().inv_cdf(p)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def need_interval(need: float, abstracts: int, level: float = NEED_LEVEL) -> tuple[float, float]:
    """The ``level`` interval of an eval size ``need`` (proportional to the SE squared) estimated from ``abstracts``
    abstracts: the squared SE read as ``σ² · χ²(abstracts − 1) / (abstracts − 1)``; inf when the lower chi-square
    quantile is 0 (too few abstracts to bound it)."""
    df = max(abstracts - 1, 1)
    low_q, high_q = _chi2_quantile((1 - level) / 2, df), _chi2_quantile((1 + level) / 2, df)
    return need * df / high_q, (need * df / low_q if low_q > 0 else math.inf)


def _bound(n: float) -> int | None:
    """An upper bound as JSON takes it: None where unbounded."""
    return None if math.isinf(n) else math.ceil(n)


def power(
    interval: Mapping[str, Any] | None, tasks: int, abstracts: int | None = None, rollouts_per_task: int = 1
) -> dict[str, Any] | None:
    """The ΔF1 two independent evals of ``tasks`` tasks detect with 80% power, and the eval that detects
    ``TARGET_DELTA``: its abstracts (the run's ``abstracts`` scaled by the squared ratio), its tasks at the run's
    tasks per abstract and ``rollouts_per_task``, the ``NEED_LEVEL`` interval of both, and whether it exceeds the
    validation split's abstracts; from the run's micro-F1 interval over abstracts (None without one)."""
    if interval is None or interval.get("low") is None:
        return None
    se = (interval["high"] - interval["low"]) / (2 * Z_TEST)
    detects = (Z_TEST + Z_POWER) * math.sqrt(2) * se
    out: dict[str, Any] = {
        "comparison": "two independent evals",
        "se": se,
        "tasks": tasks,
        "abstracts": abstracts,
        "rollouts_per_task": rollouts_per_task,
        "detects_80": detects,
        "target_delta": TARGET_DELTA,
        "tasks_for_target": None,
        "split_abstracts": VALIDATION_ABSTRACTS,
    }
    if se > 0 and abstracts:
        ratio = (detects / TARGET_DELTA) ** 2
        low, high = need_interval(abstracts * ratio, abstracts)
        per_abstract = tasks / abstracts
        out |= {
            "abstracts_for_target": math.ceil(abstracts * ratio),
            "abstracts_for_target_90": [math.ceil(low), _bound(high)],
            "tasks_for_target": math.ceil(abstracts * ratio * per_abstract),
            "tasks_for_target_90": [math.ceil(low * per_abstract), _bound(high * per_abstract)],
            "exceeds_split": abstracts * ratio > VALIDATION_ABSTRACTS,
        }
    return out


def paired_power(interval: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ΔF1 a paired comparison of two runs on the same tasks detects with 80% power (5% two-sided), from its
    paired bootstrap interval of the micro-F1 difference: ``(1.96 + 0.84) · SE_Δ``, ``SE_Δ`` the width over
    ``2 · 1.96`` (None without an interval)."""
    if interval is None or interval.get("low") is None:
        return None
    se = (interval["high"] - interval["low"]) / (2 * Z_TEST)
    return {"comparison": "paired, the same tasks", "se": se, "detects_80": (Z_TEST + Z_POWER) * se}


NEGATIVE_SHARES = (0.5, 0.3)
"""NO-RELATION shares of the task mix the forecast gives the zero-advantage share at (the levers the sandbox tried)."""


def by_negative_share(rewards: Sequence[Sequence[float | None]], negative: Sequence[bool]) -> dict[str, Any] | None:
    """The zero-advantage share of the gold pairs and of the NO-RELATION pairs (tasks with every reward recorded),
    the probe's NO-RELATION share, and the share of a task mix at each of ``NEGATIVE_SHARES`` (every gold pair kept,
    NO-RELATION pairs sampled); None without tasks of both kinds."""
    kinds: dict[bool, list[bool]] = {True: [], False: []}
    for group, is_negative in zip(rewards, negative, strict=True):
        if len(group) >= 2 and all(r is not None for r in group):
            kinds[is_negative].append(all(r == group[0] for r in group))
    if not kinds[True] or not kinds[False]:
        return None
    z_negative, z_positive = (sum(kinds[k]) / len(kinds[k]) for k in (True, False))
    return {
        "positive": z_positive,
        "negative": z_negative,
        "negative_share": len(kinds[True]) / (len(kinds[True]) + len(kinds[False])),
        "at": [{"negative_share": s, "share": s * z_negative + (1 - s) * z_positive} for s in NEGATIVE_SHARES],
    }


def forecast_summary(
    groups: Sequence[Sequence[tuple[float | None, int | None, int | None]]],
    interval: Mapping[str, Any] | None,
    abstracts: int | None = None,
    negative: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """The ``forecast`` of a report: per task its rollouts' ``(reward, prompt tokens, completion tokens)``, the run's
    micro-F1 interval over abstracts (``intervals["micro_f1"]``, or None) and the abstracts it resampled; in pair
    mode ``negative`` (per task: a NO-RELATION pair) adds the share by kind and at other NO-RELATION shares. The
    tokens that teach only where the zero-advantage share is known (groups of 2 or more rollouts, rewards recorded)."""
    ks = [len(g) for g in groups]
    rewards = [[r for r, _, _ in g] for g in groups]
    zero = zero_advantage(rewards)
    if negative is not None and zero["share"] is not None:
        zero["by_negative_share"] = by_negative_share(rewards, negative)
    return {
        "group_size": min(ks) if ks and min(ks) == max(ks) else None,
        "rollouts_per_task": {"min": min(ks, default=0), "max": max(ks, default=0)},
        "zero_advantage": zero,
        "tokens": teaching_tokens(groups) if zero["share"] is not None else None,
        "power": power(interval, len(groups), abstracts, min(ks, default=1)),
    }


def _count(n: float) -> str:
    return f"{n:,.0f}"


def _tasks_text(n: float | None) -> str:
    return "unbounded" if n is None else _count(n)


def power_lines(p: Mapping[str, Any]) -> list[str]:
    """The forecast's power lines: the independent-eval figure, labelled so, and the eval size for ``TARGET_DELTA``."""
    head = (
        f"    power, two independent evals (different tasks): SE of micro-F1 {p['se']:.4f} over "
        f"{p['abstracts'] if p.get('abstracts') else '?'} abstracts; two evals of {p['tasks']:,} tasks detect ΔF1 "
        f"{p['detects_80']:.3f} with 80% power (5% two-sided)"
    )
    out = [head]
    if p.get("abstracts_for_target") is not None:
        low, high = p["tasks_for_target_90"]
        flag = f"; more than the validation split's {p['split_abstracts']:,} abstracts" if p["exceeds_split"] else ""
        k = p["rollouts_per_task"]
        out.append(
            f"      ΔF1 {p['target_delta']:g} needs ~{p['abstracts_for_target']:,} abstracts, "
            f"~{p['tasks_for_target']:,} tasks at {k} rollout{'s' if k != 1 else ''} per task ({NEED_LEVEL:.0%} "
            f"interval {_tasks_text(low)}-{_tasks_text(high)} tasks, from the SE's own uncertainty){flag}"
        )
    out.append(
        "      two runs on the same tasks (drugprot report A B) are compared paired: that report prints the ΔF1 "
        "its paired interval detects"
    )
    return out


def paired_power_line(p: Mapping[str, Any] | None) -> list[str]:
    """The comparison's power line (none without a paired interval)."""
    if p is None:
        return []
    return [
        f"  power (paired, these tasks): SE of delta micro F1 {p['se']:.4f} from the paired interval; detects ΔF1 "
        f"{p['detects_80']:.3f} with 80% power (5% two-sided)"
    ]


def forecast_lines(forecast: Mapping[str, Any] | None) -> list[str]:
    """The report's forecast lines (none without a ``forecast``)."""
    if forecast is None:
        return []
    z, tokens, p = forecast["zero_advantage"], forecast["tokens"], forecast["power"]
    k = forecast["rollouts_per_task"]
    size = f"{k['min']}" if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    left = z.get("left_out", 0)
    without = f"; {left:,} task{'s' if left != 1 else ''} left out: a rollout recorded no reward" if left else ""
    if z["share"] is None:
        head = f"  step-0 forecast: zero-advantage share unknown ({z['unavailable']}; run with the recipe's group size)"
    else:
        head = (
            f"  step-0 forecast (groups of {size} rollouts, the recorded rewards{without}): {z['equal']} of "
            f"{z['tasks']} tasks ({z['share']:.1%}) earn equal rewards on every rollout: zero advantage, dropped by "
            "prime-rl"
        )
    out = [head]
    if z.get("by_group_size"):
        shares = ", ".join(f"{row['group_size']}: {row['share']:.1%}" for row in z["by_group_size"])
        out.append(
            f"    at a smaller group size (subsets of the recorded rollouts) {shares}; all at the probe's one sampling "
            "temperature (another temperature needs another probe)"
        )
    kinds = z.get("by_negative_share")
    if kinds:
        at = ", ".join(f"{row['negative_share']:g}: {row['share']:.1%}" for row in kinds["at"])
        out.append(
            f"    gold pairs {kinds['positive']:.1%}, NO-RELATION pairs {kinds['negative']:.1%} (this probe's "
            f"NO-RELATION share {kinds['negative_share']:.2f}); at a NO-RELATION share of {at}"
        )
    if tokens is not None:
        out.append(
            f"    tokens that teach: {_count(tokens['teaching_per_rollout'])} of {_count(tokens['mean_per_rollout'])} "
            f"prompt+completion tokens per rollout; {_count(tokens['teaching_per_step'])} per step of "
            f"{tokens['batch_size']} rollouts (the recipe's batch_size)"
        )
    if p is not None:
        out += power_lines(p)
    return out
