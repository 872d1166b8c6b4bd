"""Tests of drugprot.core.rewards: the reward terms of a scored reply, the utility's cost structure, the presets of
the ``reward`` knob and the one ``Reward`` object both stacks, the baselines and the report use."""

from __future__ import annotations

import pytest

from drugprot.core.errors import DrugprotConfigError, DrugprotLookupError
from drugprot.core.extraction import ExtractionGold
from drugprot.core.rewards import (
    DEFAULT_WEIGHTS,
    METRIC_NAMES,
    PRESETS,
    REWARD_KINDS,
    REWARD_NAMES,
    Costs,
    Reward,
    Weights,
    describe,
    fp_cost_for_f1,
    recorded_metrics,
    threshold,
    weight_knob,
)
from drugprot.core.scoring import score_extraction, score_reply

T = "<think>The text says the chemical inhibits the enzyme.</think>"
INHIBITOR, SUBSTRATE, NR = ("INHIBITOR",), ("INHIBITOR", "SUBSTRATE"), ("NO-RELATION",)


def test_the_terms_the_kinds_and_the_presets() -> None:
    assert REWARD_NAMES == ("accuracy", "utility", "format")
    assert [weight_knob(name) for name in REWARD_NAMES] == ["accuracy_weight", "utility_weight", "format_weight"]
    assert REWARD_KINDS == ("accuracy", "utility")
    assert {
        "utility": Weights(accuracy=0.0, utility=1.0, format=0.125),
        "accuracy": Weights(accuracy=1.0, utility=0.0, format=0.125),
    } == PRESETS
    assert DEFAULT_WEIGHTS == PRESETS["utility"] == Reward().weighting
    assert Reward("accuracy").weighting == PRESETS["accuracy"]
    assert [Weights(accuracy=0.75, utility=0.25, format=0.5).of(name) for name in REWARD_NAMES] == [0.75, 0.25, 0.5]
    # a weight off the 1/64 grid is put on it: 0.7 -> 45/64, 0.2 -> 13/64, 0.3 -> 19/64
    assert Weights(accuracy=0.7, utility=0.2, format=0.3) == Weights(accuracy=45 / 64, utility=13 / 64, format=19 / 64)


def test_an_unknown_reward_name_is_a_lookup_error() -> None:
    with pytest.raises(DrugprotLookupError) as err:
        DEFAULT_WEIGHTS.of("answered")
    assert err.value.args[0] == "no reward named 'answered'; the weighted rewards are accuracy, utility, format"


def test_an_unknown_reward_kind_is_a_config_error() -> None:
    with pytest.raises(DrugprotConfigError) as err:
        Reward("f1")
    assert (str(err.value), err.value.knob) == ("unknown reward 'f1'; expected one of accuracy, utility", "reward")


def test_the_threshold_is_fp_over_one_plus_fp_plus_fn() -> None:
    assert Costs().threshold == 0.5 / 2.5
    assert round(Costs().threshold, 4) == 0.2
    assert Costs(1.0, 1.0).threshold == 1 / 3  # FP and FN cost as much as a TP gains: state it when p > 1/3
    assert Costs(0.0, 5.0).threshold == 0.0


# (gold labels, with NO-RELATION, reply, (tp, fp, fn), utility at FP 0.5 / FN 1, accuracy, format)
PAIR_TABLE = [
    pytest.param(INHIBITOR, False, T + "\\boxed{E}", (1, 0, 0), 1.0, 1.0, 1.0, id="right"),
    pytest.param(INHIBITOR, False, T + "\\boxed{A}", (0, 1, 1), -1.5, 0.0, 1.0, id="wrong-type"),
    pytest.param(SUBSTRATE, False, T + "\\boxed{E}", (1, 0, 1), 0.0, 1.0, 1.0, id="multi-label-one-of-two"),
    pytest.param(SUBSTRATE, False, T + "\\boxed{A}", (0, 1, 2), -2.5, 0.0, 1.0, id="multi-label-wrong"),
    pytest.param(INHIBITOR, True, T + "\\boxed{N}", (0, 0, 1), -1.0, 0.0, 1.0, id="N-on-a-gold-pair"),
    pytest.param(NR, True, T + "\\boxed{N}", (0, 0, 0), 0.0, 1.0, 1.0, id="N-on-a-no-relation-pair"),
    pytest.param(NR, True, T + "\\boxed{E}", (0, 1, 0), -0.5, 0.0, 1.0, id="type-on-a-no-relation-pair"),
    pytest.param(INHIBITOR, False, T + "E", (0, 0, 1), -1.0, 0.0, 0.0, id="invalid-on-a-gold-pair"),
    pytest.param(NR, True, "<think>unfinished", (0, 0, 0), 0.0, 0.0, 0.0, id="invalid-on-a-no-relation-pair"),
]


@pytest.mark.parametrize(("gold", "with_nr", "reply", "cells", "utility", "accuracy", "fmt"), PAIR_TABLE)
def test_pair_utility(gold, with_nr, reply, cells, utility, accuracy, fmt) -> None:
    score = score_reply(reply, None, gold, with_no_relation=with_nr)
    assert (score.tp, score.fp, score.fn) == cells
    terms = Reward().terms(score)
    assert terms == {"accuracy": accuracy, "utility": pytest.approx(utility), "format": fmt}
    assert Reward().value(score) == utility + 0.125 * fmt  # the default: reward utility (exact: dyadic terms)
    assert Reward("accuracy").value(score) == accuracy + 0.125 * fmt  # the seed recipe's reward


def test_a_scoring_error_scores_zero_on_every_term() -> None:
    score = score_reply(12345, None, INHIBITOR)  # type: ignore[arg-type]
    assert score.invalid_reason is not None and score.invalid_reason.startswith("scoring_error")
    assert Reward().terms(score) == {"accuracy": 0.0, "utility": 0.0, "format": 0.0}
    broken = score_extraction(12345, None, GOLD)  # type: ignore[arg-type]
    assert Reward().terms(broken) == {"accuracy": 0.0, "utility": 0.0, "format": 0.0}


def test_the_costs_and_weights_are_the_reward_s() -> None:
    wrong = score_reply(T + "\\boxed{A}", None, INHIBITOR)
    assert Reward(costs=Costs(0.5, 2.0)).terms(wrong)["utility"] == -2.5
    weights = Weights(accuracy=0.5, utility=2.0, format=1.0)
    assert Reward("accuracy", Costs(0.5, 2.0), weights).value(wrong) == 0.5 * 0 + 2.0 * -2.5 + 1.0 * 1


# An abstract's gold: T1-T2 INHIBITOR and SUBSTRATE, T3-T4 SUBSTRATE (chemicals T1, T3; genes T2, T4).
GOLD = ExtractionGold(
    frozenset({"T1", "T3"}),
    frozenset({"T2", "T4"}),
    frozenset({("T1", "T2", "INHIBITOR"), ("T1", "T2", "SUBSTRATE"), ("T3", "T4", "SUBSTRATE")}),
)
EMPTY = ExtractionGold(frozenset({"T1"}), frozenset({"T2"}), frozenset())
ALL = ("T1 | T2 | INHIBITOR", "T1 | T2 | SUBSTRATE", "T3 | T4 | SUBSTRATE")


def block(*lines: str) -> str:
    return T + "<relations>\n" + "\n".join(lines) + "\n</relations>"


# (gold, reply, (tp, fp, fn, unknown_id, wrong_type), utility at FP 0.5 / FN 1)
EXTRACTION_TABLE = [
    pytest.param(GOLD, block(*ALL), (3, 0, 0, 0, 0), 3.0, id="all-gold"),
    pytest.param(GOLD, block(ALL[0]), (1, 0, 2, 0, 0), -1.0, id="one-of-three"),
    pytest.param(GOLD, block(ALL[0], "T3 | T2 | AGONIST"), (1, 1, 2, 0, 0), -1.5, id="one-right-one-wrong"),
    pytest.param(GOLD, block(*ALL, "T9 | T2 | INHIBITOR"), (3, 0, 0, 1, 0), 2.5, id="unknown-id-is-a-FP"),
    pytest.param(GOLD, block(*ALL, "T2 | T4 | INHIBITOR"), (3, 0, 0, 0, 1), 2.5, id="wrong-type-is-a-FP"),
    pytest.param(GOLD, block("none"), (0, 0, 3, 0, 0), -3.0, id="none-on-three"),
    pytest.param(GOLD, T + "nothing", (0, 0, 3, 0, 0), -3.0, id="no-block"),
    pytest.param(EMPTY, block("none"), (0, 0, 0, 0, 0), 0.0, id="empty-gold-none"),
    pytest.param(EMPTY, block("T1 | T2 | AGONIST"), (0, 1, 0, 0, 0), -0.5, id="empty-gold-one-line"),
]


@pytest.mark.parametrize(("gold", "reply", "counts", "utility"), EXTRACTION_TABLE)
def test_extraction_utility(gold, reply, counts, utility) -> None:
    score = score_extraction(reply, None, gold)
    assert (score.tp, score.fp, score.fn, score.unknown_id, score.wrong_type) == counts
    assert Reward().terms(score)["utility"] == utility
    assert Reward().value(score) == utility + 0.125 * score.format


def test_every_false_positive_costs_the_same_wherever_it_occurs() -> None:
    """Unlike the per-document F1 (the accuracy term), one spurious line costs fp_cost on an empty abstract and on
    a dense one alike."""
    extra = "T3 | T2 | AGONIST"
    dense = [score_extraction(block(*ALL, *more), None, GOLD) for more in ((), (extra,))]
    empty = [score_extraction(block(*lines), None, EMPTY) for lines in (("none",), ("T1 | T2 | AGONIST",))]
    # the accuracy term is the F1 on the 1/64 grid: 6/7 -> 55/64
    for reward, drop_dense, drop_empty in (("utility", 0.5, 0.5), ("accuracy", 1 - 55 / 64, 1.0)):
        r = Reward(reward)
        assert r.value(dense[0]) - r.value(dense[1]) == drop_dense
        assert r.value(empty[0]) - r.value(empty[1]) == drop_empty


def test_the_record_and_its_line() -> None:
    assert Reward().record() == {
        "kind": "utility",
        "fp_cost": 0.5,
        "fn_cost": 1.0,
        "weights": {"accuracy": 0.0, "utility": 1.0, "format": 0.125},
        "threshold": 0.5 / 2.5,
    }
    assert Reward().describe() == (
        "utility (TP 1, FP -0.5, FN -1; states a relation when p > 0.200), weights accuracy 0, utility 1, format 0.125"
    )
    assert Reward("accuracy").describe() == "accuracy, weights accuracy 1, utility 0, format 0.125"
    mixed = Reward("accuracy", Costs(0.3, 2.0), Weights(accuracy=1.0, utility=0.5, format=0.0))  # 0.3 -> 19/64
    line = "accuracy (TP 1, FP -0.296875, FN -2; states a relation when p > 0.090), weights accuracy 1, utility 0.5, "
    line += "format 0"
    assert describe(mixed.record()) == mixed.describe() == line
    # a run recorded before the grid is described as recorded: its cost is not snapped
    old = {"kind": "utility", "fp_cost": 0.35, "fn_cost": 1.0, "weights": {"accuracy": 0, "utility": 1, "format": 0.1}}
    assert describe(old) == (
        "utility (TP 1, FP -0.35, FN -1; states a relation when p > 0.149), weights accuracy 0, utility 1, format 0.1"
    )
    free = Reward(costs=Costs(0.0, 0.0))  # --fp-cost 0 --fn-cost 0: a cell that costs nothing reads 0, not -0
    assert free.describe() == (
        "utility (TP 1, FP 0, FN 0; states a relation when p > 0.000), weights accuracy 0, utility 1, format 0.125"
    )


# ------------------------------------------------------------------------------------------------ recorded metrics


def test_every_rollout_records_its_accuracy_and_official_cells_unweighted() -> None:
    """``recorded_metrics``: the raw accuracy term and the official TP/FP/FN, named ``METRIC_NAMES``, whatever the
    reward weights (they take none)."""
    assert METRIC_NAMES == ("correct", "official_tp", "official_fp", "official_fn")
    pairs = {
        "right type of a two-type pair": (score_reply(T + "\\boxed{E}", None, SUBSTRATE), (1.0, 1.0, 0.0, 1.0)),
        "wrong type": (score_reply(T + "\\boxed{A}", None, SUBSTRATE), (0.0, 0.0, 1.0, 2.0)),
        "no answer": (score_reply(T + "E", None, INHIBITOR), (0.0, 0.0, 0.0, 1.0)),
        "N on a negative": (score_reply(T + "\\boxed{N}", None, NR, with_no_relation=True), (1.0, 0.0, 0.0, 0.0)),
        "a type on a negative": (score_reply(T + "\\boxed{E}", None, NR, with_no_relation=True), (0.0, 0.0, 1.0, 0.0)),
    }
    for what, (score, expected) in pairs.items():
        assert recorded_metrics(score) == dict(zip(METRIC_NAMES, expected, strict=True)), what
    # extraction: the per-document F1 and the official cells; a line the official scorer ignores (an unknown id) is
    # a false positive of the utility only
    one_of_three = score_extraction(block(ALL[0], "T3 | T2 | AGONIST", "T9 | T2 | INHIBITOR"), None, GOLD)
    assert recorded_metrics(one_of_three) == {"correct": 0.4, "official_tp": 1.0, "official_fp": 1.0,
                                              "official_fn": 2.0}  # fmt: skip
    assert Reward().terms(one_of_three)["utility"] == 1 - 0.5 * 2 - 2


def test_a_scoring_error_records_zero_metrics() -> None:
    for broken in (score_reply(12345, None, INHIBITOR), score_extraction(12345, None, GOLD)):  # type: ignore[arg-type]
        assert broken.invalid_reason is not None and broken.invalid_reason.startswith("scoring_error")
        assert recorded_metrics(broken) == dict.fromkeys(METRIC_NAMES, 0.0)


@pytest.mark.parametrize(("f1", "fp_cost"), [(0.3, 0.353), (0.4, 0.5), (0.6, 0.857), (0.0, 0.0)])
def test_the_cost_calibrated_at_an_f1_puts_the_threshold_at_half_of_it(f1: float, fp_cost: float) -> None:
    """micro-F1 F is maximised by stating relations with p > F/2; ``fp_cost_for_f1`` is the cost whose threshold
    ``fp / (1 + fp + fn)`` is there (fn_cost 1): 0.35 at F 0.3, 0.5 at 0.4, 0.86 at 0.6."""
    derived = fp_cost_for_f1(f1)
    assert round(derived, 3) == fp_cost
    assert threshold(derived, 1.0) == pytest.approx(f1 / 2, abs=1e-15)
    assert threshold(fp_cost_for_f1(f1, 2.5), 2.5) == pytest.approx(f1 / 2, abs=1e-15)
    # the run's cost is on the 1/64 grid (at most 1/128 away), its threshold at most 1/256 from F/2 (fn_cost 1)
    assert abs(Costs(derived, 1.0).fp - derived) <= 1 / 128
    assert abs(Costs(derived, 1.0).threshold - f1 / 2) <= 1 / 256


@pytest.mark.parametrize(("f1", "fn_cost", "knob"), [(1.5, 1.0, "f1_target"), (float("nan"), 1.0, "f1_target"),
                                                     (0.4, -1.0, "fn_cost")])  # fmt: skip
def test_the_calibrated_cost_refuses_what_is_no_f1_or_no_cost(f1: float, fn_cost: float, knob: str) -> None:
    with pytest.raises(DrugprotConfigError) as err:
        fp_cost_for_f1(f1, fn_cost)
    assert err.value.knob == knob
