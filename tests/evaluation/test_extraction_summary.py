"""``drugprot.modes.extraction.summary``: the report of an extraction run, figures computed by hand.

``HAND_RUN`` (tests/evaluation/extraction_traces.py): abstract 100 (gold T1-T2 INHIBITOR, T3-T4 SUBSTRATE) and
abstract 200 (no relation), three rollouts each:

    100  r1  T1-T2 E, T3-T4 K           TP 2              accuracy 1    format ok
    100  r2  T1-T2 E, T3-T4 E, T9-T4 E  TP 1 FP 1 FN 1    accuracy 1/2  unknown id (a rejected line)
    100  r3  no relations block         FN 2              accuracy 0    no answer
    200  s1  none                                         accuracy 1    format ok
    200  s2  T1-T2 A                    FP 1              accuracy 0    format ok
    200  s3  none, but no reasoning                       accuracy 0    no answer

Pooled (each rollout a copy of its abstract): TP 3, FP 2, FN 3. Majority per abstract (a strict majority of
the answering rollouts): 100 keeps T1-T2 E (2 of 2 votes) and drops T3-T4 K and T3-T4 E (1 of 2 each), so TP 1,
FN 1; 200 keeps nothing (T1-T2 A has 1 of 2 votes).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from drugprot.core.labels import RELATION_NAMES
from drugprot.evaluation.records import ExtractionAnswer, ExtractionRollout, RunConfig
from drugprot.evaluation.runs import load_run
from drugprot.evaluation.stats import FN, FP, TP
from drugprot.modes.extraction.summary import (
    extraction_setting,
    group_by_abstract,
    pooled_scores,
    summarize_extraction,
    task_counts,
    voted_relations,
)
from tests.evaluation.extraction_traces import (
    GOLD_100,
    block,
    episode,
    extraction_trace,
    hand_run,
    legacy_hand_run,
    write_v1_run,
)
from tests.evaluation.traces import close


def test_hand_run_figures(tmp_path: Path) -> None:
    got = summarize_extraction(load_run(hand_run(tmp_path / "run")))
    assert (got["n_tasks"], got["n_rollouts"], got["rollouts_per_task"], got["gold_relations"]) == (
        2, 6, {"min": 3, "max": 3}, 2
    )  # fmt: skip
    assert got["micro_counts"] == {"tp": 3, "fp": 2, "fn": 3}
    assert close(got["micro_precision"], Fraction(3, 5)) and close(got["micro_recall"], Fraction(1, 2))
    assert close(got["micro_f1"], Fraction(6, 11))
    # INHIBITOR: support 3 (one per copy of 100), predicted 3, TP 2 -> F1 4/6; SUBSTRATE: support 3, TP 1 -> 2/4;
    # INDIRECT-DOWNREGULATOR: one FP, no support -> 0.
    per = got["per_class"]
    assert (per["INHIBITOR"]["support"], per["INHIBITOR"]["predicted"], per["INHIBITOR"]["tp"]) == (3, 3, 2)
    assert close(per["INHIBITOR"]["f1"], Fraction(2, 3)) and close(per["SUBSTRATE"]["f1"], Fraction(1, 2))
    assert (per["INDIRECT-DOWNREGULATOR"]["fp"], per["INDIRECT-DOWNREGULATOR"]["f1"]) == (1, 0.0)
    assert close(got["macro_f1"], (Fraction(2, 3) + Fraction(1, 2)) / 13)
    assert close(got["macro_f1_supported"], (Fraction(2, 3) + Fraction(1, 2)) / 2)
    majority = got["majority"]
    assert majority["micro_counts"] == {"tp": 1, "fp": 0, "fn": 1}
    assert (majority["micro_precision"], majority["micro_recall"]) == (1.0, 0.5)
    assert close(majority["micro_f1"], Fraction(2, 3))
    assert close(got["accuracy"], Fraction(5, 12)) and close(got["mean_at_k"], Fraction(5, 12))
    assert close(got["exact_match"], Fraction(1, 3)) and got["majority_exact_match"] == 0.5
    assert close(got["mean_reward"], Fraction(23, 48))  # (1.125 + 0.5 + 0 + 1.125 + 0.125 + 0) / 6
    assert got["quality"] == {
        "rejected_lines": {"malformed": 0, "unknown_id": 1, "wrong_entity_type": 0, "duplicate": 0},
        "rollouts_with_rejected_lines": 1,
        "no_answer": 2,
        "no_block": 1,
        "reasoning_incomplete": 1,
        "no_answer_reasons": {"no_relations_block": 1, "reasoning_incomplete": 1},
        "predicted_relations": 5,
    }
    assert close(got["invalid_rate"], Fraction(1, 3)) and got["format_rate"] == 0.5
    assert got["format_reasons"] == {"unknown_id": 1, "no_relations_block": 1, "reasoning_incomplete": 1}
    # 2 of the 3,500 abstracts of the hub's train split: a run that stopped early, never comparable.
    assert got["setting"]["mode"] == "extraction" and got["setting"]["comparable_with_official"] is False
    assert got["setting"]["note"].endswith(
        "NOT comparable with BioCreative VII: INCOMPLETE RUN: 2 of the 3,500 abstracts of "
        "hub:OpenMed/drugprot-parquet[train] (one extraction task per abstract) (comparable needs a whole official "
        "split, every task (no limit) and, in pair mode, negatives=all with every gold relation a candidate)."
    )
    assert (got["rescored"], got["errored"]["rollouts"], got["intervals"]) == (0, 0, None)
    assert got["tokens"]["total_input"] == 5400 and got["lines"]["records"] == 6


def test_the_legacy_results_give_the_same_figures(tmp_path: Path) -> None:
    v1 = summarize_extraction(load_run(hand_run(tmp_path / "v1")), resamples=50, seed=3)
    legacy_run = load_run(legacy_hand_run(tmp_path / "legacy"))
    assert legacy_run.source == "legacy vf-eval results.jsonl" and legacy_run.mode == "extraction"
    legacy = summarize_extraction(legacy_run, resamples=50, seed=3)
    differ = {"run", "setting"}  # the legacy metadata does not say whether the abstracts were limited
    assert {k: v for k, v in legacy.items() if k not in differ} == {k: v for k, v in v1.items() if k not in differ}
    assert legacy["setting"]["comparable_with_official"] is False  # 2 abstracts of the 3,500: never comparable


def test_majority_is_a_strict_majority_of_the_answering_rollouts() -> None:
    def rollout(*triples: tuple[str, str, str], answered: bool = True) -> ExtractionRollout:
        reason = None if answered else "no_relations_block"
        return ExtractionRollout("100", GOLD_100, ExtractionAnswer(tuple(triples), 0.0, invalid_reason=reason))

    e, k = ("T1", "T2", "INHIBITOR"), ("T3", "T4", "SUBSTRATE")
    assert voted_relations([rollout(e, k), rollout(e), rollout(k)]) == (e, k)  # 2 of 3 each
    assert voted_relations([rollout(e, k), rollout(e)]) == (e,)  # k: 1 of 2 is no majority
    assert voted_relations([rollout(k), rollout(answered=False), rollout(answered=False)]) == (k,)  # 1 of 1 answering
    assert voted_relations([rollout(answered=False)]) == ()
    assert voted_relations([]) == ()


def test_abstract_rows_sum_to_the_pooled_counts_and_the_intervals_resample_abstracts(tmp_path: Path) -> None:
    run = load_run(hand_run(tmp_path / "run"))
    keys, rows = task_counts(run.extraction)
    assert keys == ["100", "200"]
    assert rows[:, :2].tolist() == [[3.0, 1.5], [3.0, 1.0]]  # rollouts, summed accuracy reward
    pooled = pooled_scores(run.extraction)
    total = rows.sum(axis=0)
    assert total[TP].tolist() == [c.tp for c in pooled.per_class]
    assert total[FP].tolist() == [c.fp for c in pooled.per_class]
    assert total[FN].tolist() == [c.fn for c in pooled.per_class]
    for (pmid, group), row in zip(group_by_abstract(run.extraction).items(), rows, strict=True):
        assert np.array_equal(row, task_counts(group)[1][0]), pmid
    got = summarize_extraction(run, resamples=200, seed=0)["intervals"]
    assert (got["abstracts"], got["tasks"], got["resamples"], got["seed"]) == (2, 2, 200, 0)
    assert got["method"] == "percentile bootstrap over abstracts"
    assert got["unit"] == "abstract: all rollouts of an abstract together"
    assert close(got["micro_f1"]["estimate"], Fraction(6, 11)) and close(got["accuracy"]["estimate"], Fraction(5, 12))
    assert got["micro_f1"]["low"] <= got["micro_f1"]["estimate"] <= got["micro_f1"]["high"]
    one = write_v1_run(tmp_path / "one", [episode(extraction_trace("100", GOLD_100, block("none")))])
    assert summarize_extraction(load_run(one), resamples=10)["intervals"] == {
        "unavailable": "a bootstrap over abstracts needs at least 2 abstracts; this run has 1"
    }


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda t: t["info"].pop("drugprot"), "no record (an older run)"),
        (lambda t: t["info"]["drugprot"].update(tp=2), "counts that disagree with the relations"),
        (lambda t: t["info"]["drugprot"].update(relations=[["T2", "T1", "INHIBITOR"]]), "a gene in the chemical slot"),
        (lambda t: t["info"]["drugprot"].update(relations=[["T1", "T2", "NO-RELATION"]]), "not a scored type"),
        (lambda t: t["info"]["drugprot"].update(mode="pair"), "a pair-mode record"),
        (lambda t: t["rewards"].pop("accuracy"), "no recorded accuracy"),
        (lambda t: t["errors"].append({"type": "TaskError", "message": "scorer failed"}), "the scorer failed"),
    ],
)
def test_an_untrusted_record_is_rescored_from_the_reply(tmp_path: Path, change, why: str) -> None:
    trace = extraction_trace("100", GOLD_100, block("T1 | T2 | E", "T3 | T4 | E", "T9 | T4 | E"))
    change(trace)
    (rollout,) = load_run(write_v1_run(tmp_path / "run", [episode(trace)])).extraction
    assert rollout.rescored, why
    assert rollout.answer == ExtractionAnswer(
        (("T1", "T2", "INHIBITOR"), ("T3", "T4", "INHIBITOR")), 0.5, unknown_id=1, format_reason="unknown_id",
        rescored=True,
    )  # fmt: skip


def test_a_rollout_that_failed_before_replying_is_errored(tmp_path: Path) -> None:
    failed = extraction_trace("100", GOLD_100, None, errors=[{"type": "ProviderError", "message": "401"}])
    ok = extraction_trace("200", GOLD_100, block("T1 | T2 | E", "T3 | T4 | K"))
    got = summarize_extraction(load_run(write_v1_run(tmp_path / "run", [episode(failed), episode(ok)])))
    assert got["errored"] | {"example": None} == {
        "failed": False, "rollouts": 1, "rate": 0.5, "types": {"ProviderError": 1}, "example": None
    }  # fmt: skip
    assert got["quality"]["no_answer_reasons"] == {"rollout_error: ProviderError": 1}
    assert got["micro_counts"] == {"tp": 2, "fp": 0, "fn": 2} and got["rescored"] == 0


def test_every_type_is_in_the_per_class_table(tmp_path: Path) -> None:
    assert list(summarize_extraction(load_run(hand_run(tmp_path / "run")))["per_class"]) == list(RELATION_NAMES)


@pytest.mark.parametrize(
    ("split", "abstracts", "comparable"),
    [("train", 3500, True), ("validation", 750, True), ("validation", 3, False), ("train", 749, False)],
)
def test_an_extraction_run_of_a_hub_split_is_comparable_only_whole(
    split: str, abstracts: int, comparable: bool
) -> None:
    setting = extraction_setting(RunConfig(split=split, limit=""), abstracts=abstracts)
    assert setting["comparable_with_official"] is comparable
    whole = {"train": "3,500", "validation": "750"}[split]
    assert (
        f"INCOMPLETE RUN: {abstracts} of the {whole} abstracts of hub:OpenMed/drugprot-parquet[{split}]"
        in (setting["note"])
    ) is not comparable
