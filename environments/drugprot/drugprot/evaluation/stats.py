"""Uncertainty of a run's headline numbers and paired comparison of two runs over the same tasks.

The unit of resampling is the abstract: all tasks of an abstract (its chemical-gene pairs in pair mode) and all
their rollouts are resampled together, because they share its text, its mentions and the model's reading of it
and are not independent. Resampling pairs as if independent gives intervals about half as wide as they should be
on the real 350-abstract sample (lexical baseline, negatives=all: micro-F1 width 0.032 instead of 0.063). A task's
contribution to accuracy and to the official metric is a row of counts (``count_row``): rollouts, right rollouts,
and per relation type the official TP/FP/FN of its rollouts (each rollout one prediction for its pair, as
``report.pooled_scores`` scores them). Every count of the official metric is a sum over tasks, because a task's
cells (its pair x a type) belong to no other task, and an abstract's row is the sum of its tasks' rows
(``by_abstract``). So the metric of a resample is computed *exactly* from the sum of its rows,
an abstract drawn twice counting as two copies of its pairs, which is what a bootstrap resample means (scoring the
resample's relation rows with ``score_relations`` would merge the copies as duplicate rows). micro-F1 and
macro-F1 are therefore recomputed on each resample, never averaged over tasks.

The intervals are percentile bootstrap intervals. Abstracts are taken in sorted PMID order (``by_abstract``), so
the intervals do not depend on the order of the lines of a run file. The resamples of abstract indices are drawn from a
``numpy.random.Generator`` seeded by the caller (the same seed gives the same interval), and one statistic sums
the drawn tasks' rows and evaluates all three metrics at once. The result is exactly that of
``scipy.stats.bootstrap(method="percentile")`` with the same generator (the tests check it); the loop is
written out here because importing ``scipy.stats`` costs about 2.6 s of CPU, fifteen times the 1,000 resamples
of a 6,000-task run. Percentile, not BCa: BCa's jackknife needs one leave-one-out evaluation per unit, and on
these bounded, often degenerate statistics (a micro-F1 that is 0 on every resample) it warns and returns NaN
where the percentile interval is simply ``[0, 0]``.

The paired comparison resamples the shared abstracts once per draw and evaluates both runs on the same draw, so
the interval of the difference keeps the correlation between the runs (two runs on the same tasks vary
together; independent intervals would overstate the uncertainty of the difference). Each difference gets its own
test, ``paired_permutation``: the paired sign-flip (permutation) test over abstracts of that very difference, the
micro-F1 difference recomputed from the swapped runs' summed rows (exact over every swap when there are few
abstracts, seeded Monte Carlo otherwise). ``flips`` counts the tasks that one run gets right and the other wrong,
and tests them with the exact sign-flip test over abstracts (``sign_flip_p``): a test of per-task accuracy, never
of F1 (an always-N policy is right on every NO-RELATION pair and has F1 0), valid when the tasks of an abstract
are correlated, where McNemar's test, which treats every task as independent, is not; with one task per abstract
the two are the same test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drugprot.core.labels import RELATION_NAMES
from drugprot.core.metrics import Scores
from drugprot.evaluation.resampling import (
    BATCH,
    MAX_RESAMPLES,
    check_resamples,
    multiplicities,
    percentile_bounds,
    resampled,
)

METRICS = ("accuracy", "micro_f1", "macro_f1")
"""The statistics given an interval, in this order in every array below."""
DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples of ``drugprot report`` (``--bootstrap``); 0 disables the intervals."""
DEFAULT_SEED = 0
"""Seed of the bootstrap's generator (``drugprot report --bootstrap-seed``)."""
LEVEL = 0.95
"""Confidence level of every interval."""
METHOD = "percentile"

_TYPES = len(RELATION_NAMES)
ROLLOUTS, CORRECT = 0, 1
TP = slice(2, 2 + _TYPES)
FP = slice(2 + _TYPES, 2 + 2 * _TYPES)
FN = slice(2 + 2 * _TYPES, 2 + 3 * _TYPES)
WIDTH = 2 + 3 * _TYPES
"""Length of a task's count row: rollouts, right rollouts, then TP, FP and FN per type (official order)."""

if TYPE_CHECKING:  # numpy is imported where a statistic is computed: ``import drugprot`` (the CLI) does not load it
    import numpy as np
    import numpy.typing as npt

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
    units: int
    """Units resampled (abstracts; the size of every resample)."""
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
    p: float
    """Two-sided p-value of the exact sign-flip test over clusters (``sign_flip_p``); 1.0 when no task flipped."""
    clusters: int
    """Clusters (abstracts) of the test, those whose tasks flipped and those whose did not."""


def count_row(rollouts: int, correct: float, scores: Scores) -> Counts:
    """One task's row of counts: its rollouts, its right rollouts, and the official TP/FP/FN per type.

    ``scores`` is the official metric of the task's rollouts alone (each rollout one prediction for the pair).
    For an extraction task (an abstract), ``correct`` is the sum of its rollouts' accuracy rewards (each the
    abstract's F1, in [0, 1]), so "accuracy" is their mean.

    Raises:
        ValueError: no rollouts, or more right rollouts than rollouts.
    """
    import numpy as np

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
    import numpy as np

    denominator = 2 * tp + fp + fn
    return np.divide(2 * tp, denominator, out=np.zeros_like(denominator), where=denominator > 0)


def metric_values(totals: Counts) -> Counts:
    """``METRICS`` of summed count rows: shape ``(..., WIDTH)`` -> ``(3, ...)``.

    accuracy = right rollouts / rollouts; micro-F1 from the TP/FP/FN summed over the types; macro-F1 the mean
    over the 13 types of each type's F1 (0 for a type with no gold and no prediction), as ``score_relations``.
    """
    import numpy as np

    tp, fp, fn = totals[..., TP], totals[..., FP], totals[..., FN]
    rollouts = totals[..., ROLLOUTS]
    accuracy = np.divide(totals[..., CORRECT], rollouts, out=np.zeros_like(rollouts), where=rollouts > 0)
    micro = _f1(tp.sum(axis=-1), fp.sum(axis=-1), fn.sum(axis=-1))
    macro = _f1(tp, fp, fn).mean(axis=-1)
    return np.stack([accuracy, micro, macro])


def by_abstract(keys: Sequence[str], counts: Counts) -> tuple[list[str], Counts]:
    """Sum the count rows of the tasks of each abstract: the units the bootstrap resamples.

    Args:
        keys: each task's abstract (its PMID), one per row of ``counts``.
        counts: one ``count_row`` per task, shape ``(tasks, WIDTH)``.

    Returns:
        The distinct abstracts in sorted order (so the result never depends on the order of a run's lines) and
        their summed rows, shape ``(abstracts, WIDTH)``.

    Raises:
        ValueError: ``keys`` and ``counts`` differ in length.
    """
    import numpy as np

    if len(keys) != counts.shape[0]:
        raise ValueError(f"one abstract key per task row is needed, got {len(keys)} keys and {counts.shape[0]} rows")
    order = sorted(set(keys))
    index = {key: i for i, key in enumerate(order)}
    summed = np.zeros((len(order), counts.shape[1]))
    np.add.at(summed, [index[key] for key in keys], counts)
    return order, summed


def _validate(counts: Counts, resamples: int) -> None:
    if counts.ndim != 2 or counts.shape[1] != WIDTH:
        raise ValueError(f"expected a (tasks, {WIDTH}) array of count rows, got shape {counts.shape}")
    if counts.shape[0] < 2:
        raise ValueError(f"a bootstrap needs at least 2 abstracts, got {counts.shape[0]}")
    check_resamples(resamples)


def _percentile_bootstrap(
    n: int, statistic: Callable[[Counts], Counts], estimate: Counts, *, resamples: int, seed: int, level: float
) -> Bootstrap:
    """Percentile intervals of a ``(..., n) multiplicities -> (3, ...)`` statistic over ``n`` units (abstracts).

    Draws ``resamples`` resamples of ``n`` unit indices (``resampled``) and takes the ``(1 - level) / 2`` and
    ``(1 + level) / 2`` percentiles (``percentile_bounds``) of the statistic: exactly what
    ``scipy.stats.bootstrap(..., method="percentile", batch=BATCH, vectorized=True)`` returns for the same
    generator (tested), without importing ``scipy.stats`` (2.6 s of CPU, 15 times the 1,000 resamples of a
    6,000-task run).
    """
    distribution = resampled(n, statistic, rows=len(METRICS), resamples=resamples, seed=seed)
    low, high = percentile_bounds(distribution, level)
    intervals = {name: Interval(float(estimate[i]), float(low[i]), float(high[i])) for i, name in enumerate(METRICS)}
    return Bootstrap(intervals, units=n, resamples=resamples, seed=seed, level=level)


def bootstrap_metrics(counts: Counts, *, resamples: int, seed: int, level: float = LEVEL) -> Bootstrap:
    """Percentile bootstrap intervals of accuracy, micro-F1 and macro-F1 over abstracts.

    Args:
        counts: one summed row per abstract (``by_abstract``), shape ``(abstracts, WIDTH)``.
        resamples: number of resamples of the abstracts (with replacement, each of the run's size).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same intervals.
        level: confidence level.

    Raises:
        ValueError: fewer than 2 abstracts, resamples outside ``1..MAX_RESAMPLES``, or counts of the wrong shape.
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
        first, second: the two runs' summed rows per abstract, row i of both for the same abstract.
        resamples, seed, level: as in ``bootstrap_metrics``.

    Raises:
        ValueError: the arrays differ in shape, or as in ``bootstrap_metrics``.
    """
    if first.shape != second.shape:
        raise ValueError(f"paired runs need one row per shared abstract in each, got {first.shape} and {second.shape}")
    _validate(first, resamples)
    return _percentile_bootstrap(
        first.shape[0],
        lambda weights: metric_values(weights @ second) - metric_values(weights @ first),
        metric_values(second.sum(axis=0)) - metric_values(first.sum(axis=0)),
        resamples=resamples,
        seed=seed,
        level=level,
    )


PERMUTATIONS = 10_000
"""Random sign flips of ``paired_permutation`` (exact enumeration instead when ``2**abstracts`` is no larger)."""
TEST_METHOD = "paired sign-flip (permutation) test over abstracts"


@dataclass(frozen=True, slots=True)
class PermutationTest:
    """Two-sided p-values of the difference of each of ``METRICS`` between two runs on the same abstracts."""

    p: dict[str, float]
    """Keyed by the names in ``METRICS``."""
    units: int
    """Abstracts (the units whose two runs' rows are swapped)."""
    permutations: int
    """Sign assignments evaluated: all ``2**units`` when ``exact``, else this many random ones."""
    exact: bool
    seed: int


def _signs(n: int, permutations: int, seed: int) -> tuple[Counts, bool]:
    """The sign assignments (1: keep an abstract's rows, 0: swap them between the runs), one row each: every one of
    the ``2**n`` when that is at most ``permutations``, else ``permutations`` drawn from ``default_rng(seed)``."""
    import numpy as np

    if n < 63 and 2**n <= permutations:
        codes = np.arange(2**n)[:, None]
        return ((codes >> np.arange(n)) & 1).astype(np.float64), True
    return np.random.default_rng(seed).integers(0, 2, size=(permutations, n)).astype(np.float64), False


def paired_permutation(
    first: Counts, second: Counts, *, permutations: int = PERMUTATIONS, seed: int = DEFAULT_SEED
) -> PermutationTest:
    """The paired sign-flip (permutation) test over abstracts of ``second - first`` for each of ``METRICS``.

    Under the null hypothesis the two runs are exchangeable within each abstract: swapping an abstract's two rows
    (all its tasks and rollouts together) leaves the distribution of the difference unchanged, however correlated
    its tasks are. Each sign assignment swaps some abstracts and recomputes every metric from the summed rows
    (micro-F1 and macro-F1 exactly, as ``metric_values``, never a per-task proxy), so the test printed under a
    difference of F1 tests that difference. The p-value is the share of assignments whose difference is at least
    as far from 0 as the observed one (a relative tolerance of 1e-9 counts ties): exact over all ``2**n``
    assignments when there are at most ``permutations``; otherwise ``(b + 1) / (permutations + 1)`` with ``b`` of
    ``permutations`` random assignments from ``default_rng(seed)`` at least as extreme, a Monte Carlo p-value
    that is still a valid test (never below ``1 / (permutations + 1)``) and the same for the same seed.

    Raises:
        ValueError: the arrays differ in shape, are not count rows, or ``permutations`` < 1.
    """
    import numpy as np

    if first.shape != second.shape:
        raise ValueError(f"paired runs need one row per shared abstract in each, got {first.shape} and {second.shape}")
    if first.ndim != 2 or first.shape[1] != WIDTH or permutations < 1:
        raise ValueError(f"expected (abstracts, {WIDTH}) count rows and permutations >= 1, got {first.shape}")
    n = first.shape[0]
    observed = np.abs(metric_values(second.sum(axis=0)) - metric_values(first.sum(axis=0)))
    signs, exact = _signs(n, permutations, seed)
    extreme = np.zeros(len(METRICS))
    for start in range(0, signs.shape[0], BATCH):
        keep = signs[start : start + BATCH]
        a = keep @ second + (1 - keep) @ first
        b = keep @ first + (1 - keep) @ second
        delta = np.abs(metric_values(a) - metric_values(b))  # (METRICS, batch)
        extreme += (delta >= observed[:, None] * (1 - 1e-9) - 1e-12).sum(axis=1)
    count = signs.shape[0]
    p = extreme / count if exact else (extreme + 1) / (count + 1)
    return PermutationTest(
        {name: float(min(1.0, p[i])) for i, name in enumerate(METRICS)},
        units=n,
        permutations=count,
        exact=exact,
        seed=seed,
    )


def sign_flip_p(differences: Sequence[int]) -> float:
    """Two-sided p-value of the exact sign-flip test of paired integer differences, one per cluster (abstract).

    Under the null hypothesis the two runs are exchangeable within each abstract, so each abstract's difference
    (tasks right in the second run only, minus those right in the first only) is as likely positive as negative,
    whatever the correlation between its tasks. The p-value is the probability, over all ``2**n`` sign
    assignments, of a total at least as far from 0 as the observed one: the paired permutation test with
    abstracts as units, computed exactly (the distribution of the signed total is built one cluster at a time,
    at most ``2 * sum(|d|) + 1`` values; milliseconds for thousands of abstracts). With one task per abstract
    (differences of -1, 0 or 1) it is the two-sided exact McNemar test (tested against scipy's binomial test).
    1.0 when every difference is 0.
    """
    import numpy as np

    sizes = [abs(int(d)) for d in differences if d]
    observed = abs(sum(int(d) for d in differences))
    if not sizes:
        return 1.0
    # dist[i]: probability that the signed total of the clusters so far is i - reach.
    dist, reach = np.ones(1), 0
    for size in sizes:
        grown = np.zeros(2 * (reach + size) + 1)
        grown[: 2 * reach + 1] += dist / 2  # this cluster's difference negative
        grown[2 * size :] += dist / 2  # positive
        dist, reach = grown, reach + size
    totals = np.abs(np.arange(-reach, reach + 1))
    return float(min(1.0, dist[totals >= observed].sum()))


def flips(first: Sequence[bool], second: Sequence[bool], clusters: Sequence[str] | None = None) -> Flips:
    """How many tasks each run gets right that the other gets wrong, and the sign-flip test over clusters.

    ``first[i]`` and ``second[i]`` say whether task i is right in each run (the report uses the task's
    majority answer, ``report.majority_label``; with one rollout per task, that rollout). ``clusters[i]`` is
    task i's abstract (its PMID); without it every task is its own cluster (extraction mode, where a task is an
    abstract), and the test is McNemar's.

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(first) != len(second) or (clusters is not None and len(clusters) != len(first)):
        raise ValueError(
            f"paired runs need one flag per shared task in each, got {len(first)} and {len(second)}"
            + ("" if clusters is None else f" and {len(clusters)} abstract keys")
        )
    first_only = sum(a and not b for a, b in zip(first, second, strict=True))
    second_only = sum(b and not a for a, b in zip(first, second, strict=True))
    both = sum(a and b for a, b in zip(first, second, strict=True))
    flipped = first_only + second_only
    keys = clusters if clusters is not None else [str(i) for i in range(len(first))]
    differences: dict[str, int] = {}
    for key, a, b in zip(keys, first, second, strict=True):
        differences[key] = differences.get(key, 0) + int(bool(b)) - int(bool(a))
    p = sign_flip_p([differences[key] for key in sorted(differences)])
    return Flips(first_only, second_only, both, len(first) - flipped - both, p, len(differences))


__all__ = [
    "BATCH",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "LEVEL",
    "MAX_RESAMPLES",
    "METRICS",
    "WIDTH",
    "Bootstrap",
    "Flips",
    "Interval",
    "PERMUTATIONS",
    "PermutationTest",
    "bootstrap_metrics",
    "by_abstract",
    "count_row",
    "flips",
    "metric_values",
    "multiplicities",
    "paired_bootstrap",
    "paired_permutation",
    "sign_flip_p",
]
