"""The forecast's power figures against simulation: the ΔF1 the report prints as detectable with 80% power is
detected about 80% of the time, for two independent evals (``forecast.power``) and for a paired comparison on the
same tasks (``forecast.paired_power``), each from the interval the report computes (``stats``). Seeded: the same
numbers every run, a few seconds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from drugprot.evaluation.forecast import (
    TARGET_DELTA,
    Z_POWER,
    Z_TEST,
    _chi2_quantile,
    need_interval,
    paired_power,
    paired_power_line,
    power,
)
from drugprot.evaluation.stats import FN, FP, TP, WIDTH, bootstrap_metrics, paired_bootstrap

ABSTRACTS = 300
"""Abstracts per simulated eval (about 5,000 pairs)."""
POSITIVE, RECALL, FALSE_ALARM = 0.3, 0.55, 0.12
"""The stand-in policy: a candidate pair is gold with probability 0.3; a gold pair is found with probability 0.55,
a NO-RELATION pair stated with probability 0.12 (micro-F1 about 0.54)."""
DRAWS = 600
"""Simulated pairs of evals: a Monte Carlo sd of the power of 1.6 points at 80%."""


def _abstracts(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per abstract of ``n`` drawn from the population: its gold pairs and its NO-RELATION pairs."""
    pairs = rng.integers(5, 31, size=n)
    gold = rng.binomial(pairs, POSITIVE)
    return gold, pairs - gold


def _rows(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """Count rows as ``stats`` reads them (one type carries every count: micro-F1 needs only the sums)."""
    rows = np.zeros((len(tp), WIDTH))
    rows[:, 0] = rows[:, 1] = 1
    rows[:, TP.start], rows[:, FP.start], rows[:, FN.start] = tp, fp, fn
    return rows


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    return 2 * tp.sum(axis=-1) / (2 * tp.sum(axis=-1) + fp.sum(axis=-1) + fn.sum(axis=-1))


def _population_f1(recall: float) -> float:
    tp, fn, fp = POSITIVE * recall, POSITIVE * (1 - recall), (1 - POSITIVE) * FALSE_ALARM
    return 2 * tp / (2 * tp + fp + fn)


def _recall_for(f1: float) -> float:
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if _population_f1(mid) < f1 else (low, mid)
    return (low + high) / 2


def _eval(rng: np.random.Generator, recall: float, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    gold, negative = _abstracts(rng, math.prod(shape))
    gold, negative = gold.reshape(shape), negative.reshape(shape)
    tp = rng.binomial(gold, recall)
    return tp, rng.binomial(negative, FALSE_ALARM), gold - tp


def test_the_independent_evals_detectable_delta_is_detected_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(51)
    pilot = _eval(rng, RECALL, (ABSTRACTS,))
    interval = bootstrap_metrics(_rows(*pilot), resamples=1000, seed=0).intervals["micro_f1"]
    printed = power({"low": interval.low, "high": interval.high}, tasks=ABSTRACTS * 18, abstracts=ABSTRACTS)
    assert printed is not None and printed["comparison"] == "two independent evals"
    better = _recall_for(_population_f1(RECALL) + printed["detects_80"])
    a, b = _f1(*_eval(rng, RECALL, (DRAWS, ABSTRACTS))), _f1(*_eval(rng, better, (DRAWS, ABSTRACTS)))
    detected = np.abs(b - a) > Z_TEST * math.sqrt(2) * printed["se"]  # the two-sided 5% test the line assumes
    assert detected.mean() == pytest.approx(0.80, abs=0.10)
    # the same test on the paired figure would be overconfident: independent evals differ by sqrt(2) SE
    assert (np.abs(b - a) > Z_TEST * printed["se"]).mean() > detected.mean()


def test_the_paired_comparisons_detectable_delta_is_detected_80_percent_of_the_time() -> None:
    """Two runs on the same abstracts: B finds a gold pair A found with probability 0.9 and one A missed with
    probability ``lift`` (chosen so that the population difference is the printed detectable ΔF1)."""
    rng = np.random.default_rng(52)

    def paired(lift: float, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        tp, fp, fn = _eval(rng, RECALL, shape)
        kept, gained = rng.binomial(tp, 0.9), rng.binomial(fn, lift)
        return _f1(tp, fp, fn), _f1(kept + gained, fp, (tp - kept) + (fn - gained))

    def lift_for(delta: float) -> float:
        target = _recall_for(_population_f1(RECALL) + delta)  # B's recall: 0.9 RECALL + lift (1 - RECALL)
        return (target - 0.9 * RECALL) / (1 - RECALL)

    lift = lift_for(0.02)
    for _ in range(3):  # the paired SE depends a little on the lift: settle the detectable ΔF1 and the lift together
        tp, fp, fn = _eval(rng, RECALL, (ABSTRACTS,))
        kept, gained = rng.binomial(tp, 0.9), rng.binomial(fn, lift)
        first, second = _rows(tp, fp, fn), _rows(kept + gained, fp, (tp - kept) + (fn - gained))
        interval = paired_bootstrap(first, second, resamples=1000, seed=0).intervals["micro_f1"]
        printed = paired_power({"low": interval.low, "high": interval.high})
        assert printed is not None
        lift = lift_for(printed["detects_80"])
    a, b = paired(lift, (DRAWS, ABSTRACTS))
    detected = np.abs(b - a) > Z_TEST * printed["se"]
    assert detected.mean() == pytest.approx(0.80, abs=0.10)
    independent = power({"low": 0.5 - 2 * Z_TEST * 0.01, "high": 0.5}, tasks=1, abstracts=1)
    assert independent is not None and printed["detects_80"] < independent["detects_80"]  # pairing detects less
    assert paired_power_line(printed) == [
        f"  power (paired, these tasks): SE of delta micro F1 {printed['se']:.4f} from the paired interval; detects "
        f"ΔF1 {printed['detects_80']:.3f} with 80% power (5% two-sided)"
    ]


def test_the_eval_size_is_extrapolated_by_abstracts_with_an_interval_and_flagged_beyond_the_split() -> None:
    se = 0.03
    interval = {"low": 0.4 - Z_TEST * se, "high": 0.4 + Z_TEST * se}
    p = power(interval, tasks=400, abstracts=25, rollouts_per_task=8)
    assert p is not None
    ratio = ((Z_TEST + Z_POWER) * math.sqrt(2) * se / TARGET_DELTA) ** 2
    assert p["abstracts_for_target"] == math.ceil(25 * ratio)
    assert p["tasks_for_target"] == math.ceil(25 * ratio * 16)  # 16 tasks per abstract, at 8 rollouts per task
    low = 25 * ratio * 24 / chi2.ppf(0.95, 24)
    high = 25 * ratio * 24 / chi2.ppf(0.05, 24)
    assert p["abstracts_for_target_90"][0] == pytest.approx(low, rel=0.01)
    assert p["abstracts_for_target_90"][1] == pytest.approx(high, rel=0.01)
    assert p["exceeds_split"] and p["split_abstracts"] == 750  # ~1,110 abstracts: more than validation has
    assert not power({"low": 0.39, "high": 0.41}, tasks=400, abstracts=25)["exceeds_split"]


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 29, 30, 39, 200, 5000])
@pytest.mark.parametrize("p", [0.05, 0.95])
def test_the_chi_square_quantile_is_scipys(df: int, p: float) -> None:
    assert _chi2_quantile(p, df) == pytest.approx(chi2.ppf(p, df), rel=1e-9 if df < 30 else 1e-3)


def test_two_abstracts_bound_nearly_nothing_and_the_interval_narrows_with_abstracts() -> None:
    widths = [need_interval(100.0, n) for n in (2, 10, 100, 1000)]
    expected = [chi2.ppf(0.95, n - 1) / chi2.ppf(0.05, n - 1) for n in (2, 10, 100, 1000)]
    assert [high / low for low, high in widths] == pytest.approx(expected, rel=0.002)
    assert expected[0] > 900 and expected[-1] < 1.2  # 2 abstracts bound nearly nothing, 1,000 within 20%
