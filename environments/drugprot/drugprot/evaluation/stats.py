"""Uncertainty of a run's headline numbers and paired comparison of two runs over the same tasks.

The unit of resampling is the task (one chemical-gene mention pair): all rollouts of a task are resampled
together, because they share the pair and are not independent. A task's contribution to accuracy and to the
official metric is a row of counts (``count_row``): rollouts, right rollouts, and per relation type the
official TP/FP/FN of its rollouts (each rollout one prediction for its pair, as ``report.pooled_scores``
scores them). Every count of the official metric is a sum over tasks, because a task's cells (its pair x a
type) belong to no other task. So the metric of a resample is computed *exactly* from the sum of its rows,
a task drawn twice counting as two copies of the pair, which is what a bootstrap resample means (scoring the
resample's relation rows with ``score_relations`` would merge the copies as duplicate rows). micro-F1 and
macro-F1 are therefore recomputed on each resample, never averaged over tasks.

The intervals are percentile bootstrap intervals. The resamples of task indices are drawn from a
``numpy.random.Generator`` seeded by the caller (the same seed gives the same interval), and one statistic sums
the drawn tasks' rows and evaluates all three metrics at once. The result is exactly that of
``scipy.stats.bootstrap(method="percentile")`` with the same generator (the tests check it); the loop is
written out here because importing ``scipy.stats`` costs about 2.6 s of CPU, fifteen times the 1,000 resamples
of a 6,000-task run. Percentile, not BCa: BCa's jackknife needs one leave-one-out evaluation per task, and on
these bounded, often degenerate statistics (a micro-F1 that is 0 on every resample) it warns and returns NaN
where the percentile interval is simply ``[0, 0]``.

The paired comparison resamples the shared tasks once per draw and evaluates both runs on the same draw, so
the interval of the difference keeps the correlation between the runs (two runs on the same tasks vary
together; independent intervals would overstate the uncertainty of the difference). ``flips`` counts the
tasks that one run gets right and the other wrong, with the exact McNemar test on those counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from drugprot.core.labels import RELATION_NAMES
from drugprot.core.metrics import Scores

METRICS = ("accuracy", "micro_f1", "macro_f1")
"""The statistics given an interval, in this order in every array below."""
DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples of ``drugprot report`` (``--bootstrap``); 0 disables the intervals."""
DEFAULT_SEED = 0
"""Seed of the bootstrap's generator (``drugprot report --bootstrap-seed``)."""
LEVEL = 0.95
"""Confidence level of every interval."""
METHOD = "percentile"
BATCH = 100
"""Resamples evaluated per call of the statistic (memory: BATCH x tasks multiplicities)."""

_TYPES = len(RELATION_NAMES)
ROLLOUTS, CORRECT = 0, 1
TP = slice(2, 2 + _TYPES)
FP = slice(2 + _TYPES, 2 + 2 * _TYPES)
FN = slice(2 + 2 * _TYPES, 2 + 3 * _TYPES)
WIDTH = 2 + 3 * _TYPES
"""Length of a task's count row: rollouts, right rollouts, then TP, FP and FN per type (official order)."""

Counts = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate and its two-sided percentile bootstrap interval."""

    estimate: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """Intervals of ``METRICS`` from one set of resamples (of one run, or of a difference of two runs)."""

    intervals: dict[str, Interval]
    """Keyed by the names in ``METRICS``."""
    tasks: int
    """Tasks resampled (the size of every resample)."""
    resamples: int
    seed: int
    level: float = LEVEL
    method: str = METHOD


@dataclass(frozen=True, slots=True)
class Flips:
    """Per-task agreement of two runs on the same tasks (a task is right or wrong in each run)."""

    first_only: int
    """Tasks right in the first run and wrong in the second."""
    second_only: int
    """Tasks wrong in the first run and right in the second."""
    both: int
    neither: int
    mcnemar_p: float
    """Two-sided exact McNemar p-value: binomial test of ``first_only`` among the flipped tasks, p = 1/2 (1.0
    when no task flipped)."""


def count_row(rollouts: int, correct: float, scores: Scores) -> Counts:
    """One task's row of counts: its rollouts, its right rollouts, and the official TP/FP/FN per type.

    ``scores`` is the official metric of the task's rollouts alone (each rollout one prediction for the pair).
    For an extraction task (an abstract), ``correct`` is the sum of its rollouts' accuracy rewards (each the
    abstract's F1, in [0, 1]), so "accuracy" is their mean.

    Raises:
        ValueError: no rollouts, or more right rollouts than rollouts.
    """
    if rollouts < 1 or not 0 <= correct <= rollouts:
        raise ValueError(f"a task needs at least one rollout and 0..rollouts right ones, got {correct}/{rollouts}")
    row = np.zeros(WIDTH)
    row[ROLLOUTS], row[CORRECT] = rollouts, correct
    row[TP] = [c.tp for c in scores.per_class]
    row[FP] = [c.fp for c in scores.per_class]
    row[FN] = [c.fn for c in scores.per_class]
    return row


def _f1(tp: Counts, fp: Counts, fn: Counts) -> Counts:
    """``2TP / (2TP + FP + FN)``, 0 where the denominator is 0 (``metrics.prf``), elementwise."""
    denominator = 2 * tp + fp + fn
    return np.divide(2 * tp, denominator, out=np.zeros_like(denominator), where=denominator > 0)


def metric_values(totals: Counts) -> Counts:
    """``METRICS`` of summed count rows: shape ``(..., WIDTH)`` -> ``(3, ...)``.

    accuracy = right rollouts / rollouts; micro-F1 from the TP/FP/FN summed over the types; macro-F1 the mean
    over the 13 types of each type's F1 (0 for a type with no gold and no prediction), as ``score_relations``.
    """
    tp, fp, fn = totals[..., TP], totals[..., FP], totals[..., FN]
    rollouts = totals[..., ROLLOUTS]
    accuracy = np.divide(totals[..., CORRECT], rollouts, out=np.zeros_like(rollouts), where=rollouts > 0)
    micro = _f1(tp.sum(axis=-1), fp.sum(axis=-1), fn.sum(axis=-1))
    macro = _f1(tp, fp, fn).mean(axis=-1)
    return np.stack([accuracy, micro, macro])


def multiplicities(indices: npt.NDArray[np.integer], n: int) -> Counts:
    """How often each of ``n`` tasks was drawn in each resample: ``(..., m)`` indices -> ``(..., n)`` counts."""
    rows = indices.reshape(-1, indices.shape[-1])
    offsets = (np.arange(rows.shape[0]) * n)[:, None]
    counts = np.bincount((rows + offsets).ravel(), minlength=rows.shape[0] * n).reshape(rows.shape[0], n)
    return counts.reshape(*indices.shape[:-1], n).astype(np.float64)


def _validate(counts: Counts, resamples: int) -> None:
    if counts.ndim != 2 or counts.shape[1] != WIDTH:
        raise ValueError(f"expected a (tasks, {WIDTH}) array of count rows, got shape {counts.shape}")
    if counts.shape[0] < 2:
        raise ValueError(f"a bootstrap needs at least 2 tasks, got {counts.shape[0]}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def _percentile_bootstrap(
    n: int, statistic: Callable[[Counts], Counts], estimate: Counts, *, resamples: int, seed: int, level: float
) -> Bootstrap:
    """Percentile intervals of a ``(..., n) multiplicities -> (3, ...)`` statistic over ``n`` tasks.

    Draws ``resamples`` resamples of ``n`` task indices from ``numpy.random.default_rng(seed)``, ``BATCH`` at a
    time, and takes the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles (linear interpolation) of the
    statistic: exactly what ``scipy.stats.bootstrap(..., method="percentile", batch=BATCH, vectorized=True)``
    returns for the same generator (tested), without importing ``scipy.stats`` (2.6 s of CPU, 15 times the
    1,000 resamples of a 6,000-task run).
    """
    rng = np.random.default_rng(seed)
    values = []
    for start in range(0, resamples, BATCH):
        indices = rng.integers(0, n, size=(min(BATCH, resamples - start), n))
        values.append(statistic(multiplicities(indices, n)))
    distribution = np.concatenate(values, axis=-1)
    alpha = (1 - level) / 2
    low, high = np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)], axis=-1)
    intervals = {name: Interval(float(estimate[i]), float(low[i]), float(high[i])) for i, name in enumerate(METRICS)}
    return Bootstrap(intervals, tasks=n, resamples=resamples, seed=seed, level=level)


def bootstrap_metrics(counts: Counts, *, resamples: int, seed: int, level: float = LEVEL) -> Bootstrap:
    """Percentile bootstrap intervals of accuracy, micro-F1 and macro-F1 over tasks.

    Args:
        counts: one ``count_row`` per task, shape ``(tasks, WIDTH)``.
        resamples: number of resamples of the tasks (with replacement, each of the run's size).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same intervals.
        level: confidence level.

    Raises:
        ValueError: fewer than 2 tasks, fewer than 1 resample, or counts of the wrong shape.
    """
    _validate(counts, resamples)
    return _percentile_bootstrap(
        counts.shape[0],
        lambda weights: metric_values(weights @ counts),
        metric_values(counts.sum(axis=0)),
        resamples=resamples,
        seed=seed,
        level=level,
    )


def paired_bootstrap(first: Counts, second: Counts, *, resamples: int, seed: int, level: float = LEVEL) -> Bootstrap:
    """Percentile bootstrap intervals of ``second - first`` for each metric, both runs on the same resamples.

    Args:
        first, second: the two runs' count rows, row i of both for the same task.
        resamples, seed, level: as in ``bootstrap_metrics``.

    Raises:
        ValueError: the arrays differ in shape, or as in ``bootstrap_metrics``.
    """
    if first.shape != second.shape:
        raise ValueError(f"paired runs need one row per shared task in each, got {first.shape} and {second.shape}")
    _validate(first, resamples)
    return _percentile_bootstrap(
        first.shape[0],
        lambda weights: metric_values(weights @ second) - metric_values(weights @ first),
        metric_values(second.sum(axis=0)) - metric_values(first.sum(axis=0)),
        resamples=resamples,
        seed=seed,
        level=level,
    )


def mcnemar_p(first_only: int, second_only: int) -> float:
    """Two-sided exact McNemar p-value of the discordant counts: P(a split at least this uneven | p = 1/2).

    The exact binomial test with p = 1/2 (``scipy.stats.binomtest(first_only, first_only + second_only)``,
    which the tests check it against), computed exactly with integers; 1.0 when no task flipped.
    """
    n, k = first_only + second_only, min(first_only, second_only)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / 2**n)


def flips(first: Sequence[bool], second: Sequence[bool]) -> Flips:
    """How many tasks each run gets right that the other gets wrong, and the exact McNemar p-value.

    ``first[i]`` and ``second[i]`` say whether task i is right in each run (the report uses the task's
    majority answer, ``report.majority_label``; with one rollout per task, that rollout).

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(first) != len(second):
        raise ValueError(f"paired runs need one flag per shared task in each, got {len(first)} and {len(second)}")
    first_only = sum(a and not b for a, b in zip(first, second, strict=True))
    second_only = sum(b and not a for a, b in zip(first, second, strict=True))
    both = sum(a and b for a, b in zip(first, second, strict=True))
    flipped = first_only + second_only
    p = mcnemar_p(first_only, second_only)
    return Flips(first_only, second_only, both, len(first) - flipped - both, p)


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "LEVEL",
    "METRICS",
    "WIDTH",
    "Bootstrap",
    "Flips",
    "Interval",
    "bootstrap_metrics",
    "count_row",
    "flips",
    "mcnemar_p",
    "metric_values",
    "multiplicities",
    "paired_bootstrap",
]
