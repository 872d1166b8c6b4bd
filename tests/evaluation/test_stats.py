"""``drugprot.evaluation.stats``: bootstrap intervals over abstracts and the paired comparison, against hand-computed
cases.

The exact bootstrap distribution of a tiny run is enumerated here (every ordered resample of 4 tasks, 4**4 of
them, equally likely) with fractions; the percentile interval of many seeded resamples must land on its 2.5%
and 97.5% quantiles, which sit on atoms far from any jump of the distribution so that no draw can move them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest

from drugprot.core.labels import RELATION_NAMES
from drugprot.core.metrics import score_relations
from drugprot.evaluation import stats

Task = tuple[str, tuple[str, ...], tuple[str | None, ...]]
"""(pair id, gold types, one predicted type per rollout; None = no valid answer)."""

# Four positive-only tasks, one rollout each: right, right, wrong type, no answer.
TASKS: list[Task] = [
    ("t1", ("INHIBITOR",), ("INHIBITOR",)),  # TP E
    ("t2", ("SUBSTRATE",), ("SUBSTRATE",)),  # TP K
    ("t3", ("AGONIST",), ("ANTAGONIST",)),  # FP I, FN F
    ("t4", ("ACTIVATOR",), (None,)),  # FN D
]


def rows_of(tasks: Sequence[Task], copy: str = "") -> tuple[list, list]:
    """Official gold and predicted rows, each rollout its own replica of the pair (as the report pools them)."""
    gold, pred = [], []
    for pair, labels, answers in tasks:
        for r, answer in enumerate(answers):
            doc = f"{pair}#{copy}#{r}"
            gold += [(doc, "T1", "T2", g) for g in labels]
            if answer is not None:
                pred.append((doc, "T1", "T2", answer))
    return gold, pred


def counts_of(tasks: Sequence[Task]) -> np.ndarray:
    rows = []
    for task in tasks:
        answers, labels = task[2], task[1]
        rows.append(stats.count_row(len(answers), sum(a in labels for a in answers), score_relations(*rows_of([task]))))
    return np.array(rows)


def quantiles(values: list[Fraction]) -> tuple[Fraction, Fraction]:
    """The 2.5% and 97.5% quantiles of equally likely values, checked to sit far from a jump of the CDF."""
    ordered = sorted(values)
    n = len(ordered)
    out = []
    for q in (Fraction(1, 40), Fraction(39, 40)):
        atom = ordered[int(q * n)]
        below = Fraction(sum(v < atom for v in ordered), n)
        upto = Fraction(sum(v <= atom for v in ordered), n)
        assert below + Fraction(1, 100) < q < upto - Fraction(1, 100), "a quantile too close to a jump"
        out.append(atom)
    return out[0], out[1]


def exact_distribution(statistic: Callable[[list[int]], Fraction], n: int = 4) -> list[Fraction]:
    """The statistic over every ordered resample of ``n`` tasks."""
    return [statistic(list(draw)) for draw in itertools.product(range(n), repeat=n)]


def accuracy_by_hand(draw: list[int]) -> Fraction:
    return Fraction(sum(i in (0, 1) for i in draw), len(draw))


def micro_f1_by_hand(draw: list[int]) -> Fraction:
    tp = sum(i in (0, 1) for i in draw)
    fp = sum(i == 2 for i in draw)
    fn = sum(i in (2, 3) for i in draw)
    return Fraction(2 * tp, 2 * tp + fp + fn) if tp + fp + fn else Fraction(0)


def macro_f1_by_hand(draw: list[int]) -> Fraction:
    # E (t1) and K (t2): F1 1 when drawn; F (t3's gold) and I (t3's answer) and D (t4) F1 0; 13 types.
    return Fraction((0 in draw) + (1 in draw), 13)


def test_count_row_layout() -> None:
    row = stats.count_row(
        3, 2, score_relations(*rows_of([("p", ("INHIBITOR",), ("INHIBITOR", "INHIBITOR", "AGONIST"))]))
    )
    assert row.shape == (stats.WIDTH,) == (41,)
    inhibitor, agonist = RELATION_NAMES.index("INHIBITOR"), RELATION_NAMES.index("AGONIST")
    assert (row[0], row[1]) == (3, 2)
    assert {i: v for i, v in enumerate(row[2:15]) if v} == {inhibitor: 2}
    assert {i: v for i, v in enumerate(row[15:28]) if v} == {agonist: 1}
    assert {i: v for i, v in enumerate(row[28:41]) if v} == {inhibitor: 1}
    with pytest.raises(ValueError, match="at least one rollout"):
        stats.count_row(0, 0, score_relations([], []))
    with pytest.raises(ValueError, match="0..rollouts right"):
        stats.count_row(1, 2, score_relations([], []))


@pytest.mark.parametrize("draw", [[0, 1, 2, 3], [0, 0, 0, 0], [2, 3, 3, 2], [3, 3, 3, 3], [1, 2, 1, 0]])
def test_the_metrics_of_a_resample_are_the_official_metric_of_its_copies(draw: list[int]) -> None:
    counts = counts_of(TASKS)
    weights = stats.multiplicities(np.array(draw), len(TASKS))
    accuracy, micro, macro = stats.metric_values(weights @ counts)
    # Score the resample itself: each drawn task a distinct copy of its pair.
    resample = [(f"{TASKS[i][0]}@{j}", TASKS[i][1], TASKS[i][2]) for j, i in enumerate(draw)]
    official = score_relations(*rows_of(resample))
    assert (micro, macro) == pytest.approx((official.f1, official.macro_f1), abs=1e-12)
    assert (accuracy, micro, macro) == pytest.approx(
        tuple(float(f(draw)) for f in (accuracy_by_hand, micro_f1_by_hand, macro_f1_by_hand)), abs=1e-12
    )


def test_multiplicities_count_each_task_per_resample() -> None:
    got = stats.multiplicities(np.array([[0, 0, 2], [1, 2, 1]]), 4)
    assert got.tolist() == [[2, 0, 1, 0], [0, 2, 1, 0]]


def test_intervals_are_the_quantiles_of_the_exact_bootstrap_distribution() -> None:
    result = stats.bootstrap_metrics(counts_of(TASKS), resamples=4000, seed=7)
    assert (result.units, result.resamples, result.seed, result.level, result.method) == (
        4,
        4000,
        7,
        0.95,
        "percentile",
    )
    for name, by_hand in (
        ("accuracy", accuracy_by_hand),
        ("micro_f1", micro_f1_by_hand),
        ("macro_f1", macro_f1_by_hand),
    ):
        low, high = quantiles(exact_distribution(by_hand))
        got = result.intervals[name]
        assert (got.low, got.high) == pytest.approx((float(low), float(high)), abs=1e-12), name
        assert got.estimate == pytest.approx(float(by_hand([0, 1, 2, 3])), abs=1e-12)
    # The same by hand: no t1 and no t2 in 4 draws has probability (1/2)**4 = 1/16 > 2.5%, and so has only t1
    # and t2: accuracy and micro-F1 span [0, 1]; macro-F1 (F1 1 for each of E, K drawn, over 13) [0, 2/13].
    assert (result.intervals["accuracy"].low, result.intervals["accuracy"].high) == (0.0, 1.0)
    assert (result.intervals["micro_f1"].low, result.intervals["micro_f1"].high) == (0.0, 1.0)
    assert result.intervals["micro_f1"].estimate == pytest.approx(4 / 7)  # TP 2, FP 1, FN 2
    assert (result.intervals["macro_f1"].low, result.intervals["macro_f1"].high) == pytest.approx((0, 2 / 13))


def test_all_rollouts_of_a_task_are_resampled_together() -> None:
    # Two tasks of 3 rollouts: one always right, one always wrong. Resampling rollouts one by one would give
    # accuracies between the extremes; resampling tasks gives only 0, 1/2 and 1, each resample's 6 rollouts
    # being 2 whole tasks.
    tasks: list[Task] = [
        ("a", ("INHIBITOR",), ("INHIBITOR",) * 3),
        ("b", ("SUBSTRATE",), ("AGONIST",) * 3),
    ]
    result = stats.bootstrap_metrics(counts_of(tasks), resamples=2000, seed=1)
    # P(both draws b) = P(both a) = 1/4 > 2.5%: the interval is [0, 1], the endpoints exactly the atoms.
    assert (result.intervals["accuracy"].low, result.intervals["accuracy"].high) == (0.0, 1.0)
    counts = counts_of(tasks)
    assert counts[:, 0].tolist() == [3, 3] and counts[:, 1].tolist() == [3, 0]


def test_the_seed_fixes_the_intervals() -> None:
    rng = np.random.default_rng(3)
    tasks: list[Task] = [
        (f"p{i}", ("INHIBITOR",), (str(rng.choice(["INHIBITOR", "AGONIST", "SUBSTRATE"])),)) for i in range(60)
    ]
    counts = counts_of(tasks)
    first = stats.bootstrap_metrics(counts, resamples=300, seed=11)
    assert stats.bootstrap_metrics(counts, resamples=300, seed=11) == first
    other = stats.bootstrap_metrics(counts, resamples=300, seed=12)
    assert other.intervals["micro_f1"] != first.intervals["micro_f1"]
    interval = first.intervals["accuracy"]
    assert interval.low < interval.estimate < interval.high


def test_a_paired_difference_resamples_both_runs_together() -> None:
    first = counts_of([(p, g, (None,)) for p, g, _ in TASKS])  # every task wrong
    second = counts_of([(p, g, (g[0],) if p == "t1" else (None,)) for p, g, _ in TASKS])  # t1 right
    result = stats.paired_bootstrap(first, second, resamples=4000, seed=5)
    # delta accuracy = (times t1 is drawn) / 4, Binomial(4, 1/4) / 4: P(0) = 81/256, P(<=2) = 243/256,
    # P(<=3) = 255/256, so the 2.5% and 97.5% quantiles are 0 and 3/4.
    assert quantiles(exact_distribution(lambda draw: Fraction(draw.count(0), 4))) == (0, Fraction(3, 4))
    delta = result.intervals["accuracy"]
    assert (delta.estimate, delta.low, delta.high) == (0.25, 0.0, 0.75)
    # micro-F1 of the second run: 1 on any resample that draws t1 (TP) ... and no FP; 2TP / (2TP + FN).
    micro = exact_distribution(
        lambda draw: Fraction(2 * draw.count(0), 2 * draw.count(0) + (4 - draw.count(0))) if 0 in draw else Fraction(0)
    )
    low, high = quantiles(micro)
    assert (result.intervals["micro_f1"].low, result.intervals["micro_f1"].high) == pytest.approx(
        (float(low), float(high)), abs=1e-12
    )
    assert result.intervals["micro_f1"].estimate == pytest.approx(2 / 5)


def test_identical_runs_differ_by_exactly_zero() -> None:
    counts = counts_of(TASKS)
    result = stats.paired_bootstrap(counts, counts.copy(), resamples=200, seed=0)
    assert {name: (i.estimate, i.low, i.high) for name, i in result.intervals.items()} == {
        name: (0.0, 0.0, 0.0) for name in stats.METRICS
    }


def test_flips_and_the_sign_flip_test_with_one_task_per_abstract() -> None:
    first = [True, False, False, False, False, False, True, True, False]
    second = [False, True, True, True, True, True, True, False, False]
    got = stats.flips(first, second)
    # right in first only: tasks 0 and 7; in second only: 1-5; both: 6; neither: 8.
    assert (got.first_only, got.second_only, got.both, got.neither, got.clusters) == (2, 5, 1, 1, 9)
    # One task per cluster: the two-sided exact binomial test of 2 of 7 at p = 1/2: 2 * (1 + 7 + 21) / 128.
    assert got.p == pytest.approx(58 / 128, abs=1e-12)
    assert stats.flips([True, False], [True, False]) == stats.Flips(0, 0, 1, 1, 1.0, 2)


@pytest.mark.parametrize(("first_only", "second_only"), [(0, 1), (1, 1), (2, 5), (5, 2), (0, 12), (40, 47), (75, 560)])
def test_with_one_task_per_abstract_the_sign_flip_test_is_mcnemars(first_only: int, second_only: int) -> None:
    from scipy.stats import binomtest

    expected = binomtest(first_only, first_only + second_only, 0.5).pvalue
    got = stats.flips([True] * first_only + [False] * second_only, [False] * first_only + [True] * second_only)
    assert got.p == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_the_sign_flip_test_flips_whole_abstracts() -> None:
    # Abstract "a": 3 tasks right in the second run only (difference +3); "b": 1 task right in the first only
    # (-1); "c": one task right in the second only (+1). Observed total +3. The 8 sign assignments of +-3 +-1 +-1
    # give totals 5, 3, 3, 1, -1, -3, -3, -5, so 6 of 8 reach |3|: p = 3/4. Task by task (McNemar, 4 of 5
    # flips one way) it would be 2 * 6 / 32 = 0.375.
    first = [False, False, False, True, False]
    second = [True, True, True, False, True]
    got = stats.flips(first, second, ["a", "a", "a", "b", "c"])
    assert (got.first_only, got.second_only, got.clusters) == (1, 4, 3)
    assert got.p == pytest.approx(6 / 8, abs=1e-12)
    assert stats.flips(first, second).p == pytest.approx(2 * (1 + 5) / 32, abs=1e-12)
    # The abstracts' order does not matter; an abstract whose tasks cancel out (+1 -1) adds nothing.
    assert stats.flips(first[::-1], second[::-1], ["c", "b", "a", "a", "a"]).p == got.p
    assert stats.sign_flip_p([3, -1, 1, 0]) == stats.sign_flip_p([1, 3, -1]) == got.p
    assert stats.sign_flip_p([]) == stats.sign_flip_p([0, 0]) == 1.0


# Three abstracts of one task each: the same right answer in both runs (a), and two gold relations the first run
# misses and the second finds (b, c).
FIRST = [("a", ("INHIBITOR",), ("INHIBITOR",)), ("b", ("SUBSTRATE",), (None,)), ("c", ("ACTIVATOR",), (None,))]
SECOND = [
    ("a", ("INHIBITOR",), ("INHIBITOR",)),
    ("b", ("SUBSTRATE",), ("SUBSTRATE",)),
    ("c", ("ACTIVATOR",), ("ACTIVATOR",)),
]


def test_the_paired_permutation_test_enumerates_every_swap_of_whole_abstracts() -> None:
    # micro-F1: first TP 1, FN 2 -> 2/4; second TP 3 -> 1; observed difference +1/2. Swapping a changes nothing;
    # keeping b and c gives +1/2, swapping both -1/2, swapping one of them 0 (both runs TP 2, FN 1). So 4 of the
    # 8 assignments reach |1/2|: p = 1/2, for accuracy (1/3 -> 1) and macro-F1 alike.
    got = stats.paired_permutation(counts_of(FIRST), counts_of(SECOND), permutations=8, seed=3)
    assert got == stats.PermutationTest(
        {"accuracy": 0.5, "micro_f1": 0.5, "macro_f1": 0.5}, units=3, permutations=8, exact=True, seed=3
    )
    same = stats.paired_permutation(counts_of(FIRST), counts_of(FIRST), permutations=8, seed=0)
    assert same.p == {name: 1.0 for name in stats.METRICS}  # no difference: every assignment is as extreme


def test_a_random_sign_flip_p_is_seeded_and_never_below_one_over_permutations_plus_one() -> None:
    """With fewer permutations than ``2**abstracts`` the p-value is ``(b + 1) / (permutations + 1)``."""
    right = np.random.default_rng(7).random(12) < 0.3  # the first run finds about 3 of 12 relations
    first = counts_of([(f"t{i}", ("INHIBITOR",), ("INHIBITOR" if r else None,)) for i, r in enumerate(right)])
    second = counts_of([(f"t{i}", ("INHIBITOR",), ("INHIBITOR",)) for i in range(12)])
    got = stats.paired_permutation(first, second, permutations=200, seed=1)
    assert (got.exact, got.permutations, got.units) == (False, 200, 12)
    assert got == stats.paired_permutation(first, second, permutations=200, seed=1)
    signs = np.random.default_rng(1).integers(0, 2, size=(200, 12)).astype(float)
    a, b = signs @ second + (1 - signs) @ first, signs @ first + (1 - signs) @ second
    observed = abs(stats.metric_values(second.sum(axis=0))[1] - stats.metric_values(first.sum(axis=0))[1])
    extreme = int((np.abs(stats.metric_values(a)[1] - stats.metric_values(b)[1]) >= observed - 1e-12).sum())
    assert got.p["micro_f1"] == (extreme + 1) / 201 >= 1 / 201


def test_by_abstract_sums_the_rows_of_each_abstract_in_sorted_order() -> None:
    counts = counts_of(TASKS)
    order, summed = stats.by_abstract(["p2", "p1", "p2", "p3"], counts)
    assert order == ["p1", "p2", "p3"]
    assert summed.tolist() == [counts[1].tolist(), (counts[0] + counts[2]).tolist(), counts[3].tolist()]
    # The order of the task rows does not change the result (a run file's line order).
    again = stats.by_abstract(["p3", "p2", "p2", "p1"], counts[[3, 2, 0, 1]])
    assert again[0] == order and again[1].tolist() == summed.tolist()
    with pytest.raises(ValueError, match="one abstract key per task row"):
        stats.by_abstract(["p1"], counts)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.bootstrap_metrics(counts_of(TASKS[:1]), resamples=10, seed=0), "at least 2 abstracts, got 1"),
        (lambda: stats.bootstrap_metrics(counts_of(TASKS), resamples=0, seed=0), "resamples must be from 1 to 100,000"),
        (
            lambda: stats.paired_bootstrap(counts_of(TASKS), counts_of(TASKS), resamples=100_001, seed=0),
            "resamples must be from 1 to 100,000, got 100001",
        ),
        (lambda: stats.bootstrap_metrics(np.zeros((4, 3)), resamples=10, seed=0), r"\(tasks, 41\) array"),
        (
            lambda: stats.paired_bootstrap(counts_of(TASKS), counts_of(TASKS[:3]), resamples=10, seed=0),
            "one row per shared abstract",
        ),
        (lambda: stats.flips([True], [True, False]), "one flag per shared task"),
        (
            lambda: stats.paired_permutation(counts_of(TASKS), counts_of(TASKS[:3])),
            "one row per shared abstract",
        ),
        (lambda: stats.paired_permutation(counts_of(TASKS), counts_of(TASKS), permutations=0), "permutations >= 1"),
    ],
)
def test_bad_arguments_are_value_errors(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_the_intervals_are_scipys_percentile_bootstrap() -> None:
    from scipy.stats import bootstrap

    rng = np.random.default_rng(2)
    first = rng.integers(0, 3, size=(57, stats.WIDTH)).astype(float)
    first[:, 0], first[:, 1] = 2, rng.integers(0, 3, 57)
    second = first[rng.permutation(57)]

    def scipy_interval(statistic: Callable[[np.ndarray], np.ndarray]) -> list[float]:
        result = bootstrap(
            (np.arange(57),),
            lambda idx, axis=-1: statistic(stats.multiplicities(idx, 57)),
            n_resamples=1050,
            batch=stats.BATCH,
            vectorized=True,
            method="percentile",
            rng=np.random.default_rng(9),
        )
        low, high = result.confidence_interval
        return [float(x) for pair in zip(low, high, strict=True) for x in pair]

    ours = stats.bootstrap_metrics(first, resamples=1050, seed=9)
    # Equal up to rounding: scipy interpolates its percentiles with its own code.
    assert [x for i in ours.intervals.values() for x in (i.low, i.high)] == pytest.approx(
        scipy_interval(lambda w: stats.metric_values(w @ first)), abs=1e-12
    )
    paired = stats.paired_bootstrap(first, second, resamples=1050, seed=9)
    assert [x for i in paired.intervals.values() for x in (i.low, i.high)] == pytest.approx(
        scipy_interval(lambda w: stats.metric_values(w @ second) - stats.metric_values(w @ first)), abs=1e-12
    )


def test_the_bootstraps_keep_one_array_of_resampled_values_and_nothing_that_grows_besides() -> None:
    """At the most resamples (``MAX_RESAMPLES``) the peak memory of a bootstrap is its distribution (8 bytes per
    resample and statistic, filled in place and sorted in place) plus one batch: no copy of the distribution, no list of
    batches. F*'s bootstrap the same, with one statistic."""
    import tracemalloc

    from drugprot.evaluation.fstar import Abstract, f_star

    counts = counts_of(TASKS)
    abstracts = {f"p{i}": Abstract(stated=[(0.5, True), (1.0, False), (0.25, True)], gold=2) for i in range(4)}
    stats.bootstrap_metrics(counts, resamples=10, seed=0)  # imports and caches outside the measurement
    f_star(abstracts, rollouts_per_task=4, resamples=10, seed=0)
    batch = 256 * 1024
    for run, kept in (
        (lambda: stats.bootstrap_metrics(counts, resamples=stats.MAX_RESAMPLES, seed=0), 3 * 8 * stats.MAX_RESAMPLES),
        (
            lambda: f_star(abstracts, rollouts_per_task=4, resamples=stats.MAX_RESAMPLES, seed=0),
            8 * stats.MAX_RESAMPLES,
        ),
    ):
        tracemalloc.start()
        try:
            run()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert kept <= peak <= kept + batch
    with pytest.raises(ValueError, match="resamples must be from 1 to 100,000, got 100001"):
        f_star(abstracts, rollouts_per_task=4, resamples=stats.MAX_RESAMPLES + 1, seed=0)
