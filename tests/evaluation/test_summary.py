"""``drugprot.evaluation.summary``: hand-computed figures of hand-written runs (official metric, votes, errors)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from drugprot.evaluation.records import INVALID, GoldPair, Rollout, RunConfig, ScoredAnswer
from drugprot.evaluation.runs import load_run
from drugprot.evaluation.summary import errored_summary, majority_label, setting_of, summarize, task_counts
from tests.evaluation.traces import (
    PMID,
    close,
    episode,
    multilabel_run,
    rollouts_run,
    trace,
    versions_record,
    write_run,
)


def test_multilabel_micro_macro_and_per_class_are_the_hand_computed_ones(tmp_path: Path) -> None:
    got = summarize(load_run(multilabel_run(tmp_path)))
    # TP = 2 (E on T1:T2, K on T3:T2); FP = 2 (I on T4:T5, E on the negative T6:T5);
    # FN = 5 (K on T1:T2, F on T4:T5, D on T8:T9, B and D on T10:T9). N is never scored.
    assert got["micro_counts"] == {"tp": 2, "fp": 2, "fn": 5}
    assert close(got["micro_precision"], Fraction(2, 4))
    assert close(got["micro_recall"], Fraction(2, 7))
    assert close(got["micro_f1"], Fraction(4, 11))
    # F1: E 2/3 (P 1/2, R 1), K 2/3 (P 1, R 1/2), every other type 0; 13 types, 5 with gold support.
    assert close(got["macro_f1"], Fraction(4, 39))
    assert close(got["macro_f1_supported"], Fraction(4, 15))
    per = got["per_class"]
    assert (per["INHIBITOR"]["precision"], per["INHIBITOR"]["recall"]) == (0.5, 1.0)
    assert close(per["INHIBITOR"]["f1"], Fraction(2, 3))
    assert (per["INHIBITOR"]["support"], per["INHIBITOR"]["predicted"]) == (1, 2)
    assert (per["SUBSTRATE"]["precision"], per["SUBSTRATE"]["recall"], per["SUBSTRATE"]["support"]) == (1.0, 0.5, 2)
    assert (per["ANTAGONIST"]["f1"], per["ANTAGONIST"]["support"], per["ANTAGONIST"]["predicted"]) == (0.0, 0, 1)
    assert {name: c["support"] for name, c in per.items() if c["support"]} == {
        "INDIRECT-UPREGULATOR": 1,
        "ACTIVATOR": 2,
        "INHIBITOR": 1,
        "AGONIST": 1,
        "SUBSTRATE": 2,
    }
    # Accuracy: T1:T2 (E is gold), T3:T2 and the NO-RELATION T7:T5 are right.
    assert close(got["accuracy"], Fraction(3, 7))
    assert got["no_relation"] == {
        "letter": "N",
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "support": 2,
        "predicted": 2,
    }
    assert close(got["invalid_rate"], Fraction(1, 7))
    assert got["invalid_reasons"] == {"no_boxed_answer": 1}
    assert (got["n_tasks"], got["n_rollouts"], got["rescored"]) == (7, 7, 0)
    assert got["setting"]["mode"] == "negatives" and got["setting"]["comparable_with_official"] is True


def test_multilabel_confusion_matrix(tmp_path: Path) -> None:
    confusion = summarize(load_run(multilabel_run(tmp_path)))["confusion"]
    labels, columns, matrix = confusion["labels"], confusion["columns"], confusion["matrix"]
    assert labels[-1] == "NO-RELATION" and columns[-1] == INVALID and len(matrix) == 14
    cells = {(labels[i], columns[j]): v for i, row in enumerate(matrix) for j, v in enumerate(row) if v}
    assert cells == {
        ("INHIBITOR", "INHIBITOR"): 1,  # right on a multi-label pair: its diagonal
        ("SUBSTRATE", "SUBSTRATE"): 1,
        ("AGONIST", "ANTAGONIST"): 1,
        ("NO-RELATION", "INHIBITOR"): 1,
        ("NO-RELATION", "NO-RELATION"): 1,
        ("ACTIVATOR", INVALID): 1,
        ("INDIRECT-UPREGULATOR", "NO-RELATION"): 1,  # wrong on {B, D}: the row of its first type, B
    }


def test_accuracy_over_rollouts_and_majority_vote(tmp_path: Path) -> None:
    got = summarize(load_run(rollouts_run(tmp_path)))
    assert got["rollouts_per_task"] == {"min": 3, "max": 3}
    assert close(got["accuracy"], Fraction(5, 9))
    assert close(got["mean_at_k"], Fraction(5, 9))
    assert got["pass_at_k"] == 1.0
    # Majority: a -> E (2 votes, right); b -> E vs K tie -> E (first in A-M order, wrong); c -> A/B/C tie -> A.
    assert close(got["majority_accuracy"], Fraction(2, 3))
    # Pooled: every rollout scores its own copy of the pair. TP 5, FP 3, FN 7.
    assert got["micro_counts"] == {"tp": 5, "fp": 3, "fn": 7}
    assert close(got["micro_f1"], Fraction(10, 20))
    assert got["majority"]["micro_counts"] == {"tp": 2, "fp": 1, "fn": 2}
    assert close(got["majority"]["micro_f1"], Fraction(4, 7))
    assert got["setting"]["mode"] == "positive-only" and got["setting"]["comparable_with_official"] is False


def test_majority_ties_follow_the_official_label_order() -> None:
    def rollout(label: str | None) -> Rollout:
        return Rollout(PMID, "T1", "T2", ("SUBSTRATE",), False, label)

    assert majority_label([rollout("SUBSTRATE"), rollout("INHIBITOR")]) == "INHIBITOR"
    assert majority_label([rollout("INHIBITOR"), rollout("SUBSTRATE")]) == "INHIBITOR"
    assert majority_label([rollout(None), rollout(None), rollout("PART-OF")]) == "PART-OF"
    assert majority_label([rollout(None)]) is None


def test_an_error_with_an_answer_is_not_an_errored_rollout() -> None:
    answered = Rollout(PMID, "T1", "T2", ("INHIBITOR",), False, "INHIBITOR", error="TaskError")
    unanswered = Rollout(PMID, "T1", "T2", ("INHIBITOR",), False, None, error="TaskError")
    no_error = Rollout(PMID, "T1", "T2", ("INHIBITOR",), False, None, "no_boxed_answer")
    assert [r.errored for r in (answered, unanswered, no_error)] == [False, True, False]
    assert errored_summary([answered, unanswered, no_error])["failed"] is False
    assert errored_summary([answered, unanswered, unanswered])["failed"] is True


def test_rollouts_that_differ_show_every_value(tmp_path: Path) -> None:
    run_dir = write_run(
        tmp_path / "mixed",
        [
            episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", versions=versions_record(scorer="1"))),
            episode(trace("T3", "T4", ["AGONIST"], "AGONIST", versions=versions_record(scorer="2"))),
            episode(trace("T5", "T6", ["AGONIST"], "AGONIST")),
        ],
    )
    assert summarize(load_run(run_dir))["run"]["versions"] == {
        "env": "0.1.0 + unknown",
        "prompt": "1 + unknown",
        "scorer": "1 + 2 + unknown",
        "data": "hub, default branch (unpinned) + unknown",
        "reward": "accuracy (recorded before the reward knob) + unknown",
    }


def test_task_counts_resample_whole_tasks_and_sum_to_the_pooled_counts(tmp_path: Path) -> None:
    run = load_run(rollouts_run(tmp_path))
    keys, counts = task_counts(run.rollouts)
    assert keys == [(PMID, "T1", "T2"), (PMID, "T3", "T2"), (PMID, "T4", "T5")]
    # rollouts and right rollouts per task: a 2 of 3, b 1 of 3, c 2 of 3 (both of its types are gold).
    assert counts[:, :2].tolist() == [[3, 2], [3, 1], [3, 2]]
    total = counts.sum(axis=0)
    got = summarize(run)
    assert (total[2:15].sum(), total[15:28].sum(), total[28:41].sum()) == (5, 3, 7)
    assert got["micro_counts"] == {"tp": 5, "fp": 3, "fn": 7}


NEGATIVE = Rollout.of(GoldPair(PMID, "T1", "T2", ("NO-RELATION",), True), ScoredAnswer("NO-RELATION"))


SETTINGS = [
        (RunConfig(negatives="all", limit="", split="validation"), True,
         "negatives=all over the whole validation split: comparable with the official metric (the published anchors "
         "are on the hidden test set; the validation split is the official development set)."),
        (RunConfig(negatives="all", limit="", data_label="lab set"), True,
         "negatives=all over every task of lab set (a whole split only if that data is one): comparable with the "
         "official metric (the published anchors are on the hidden test set; the validation split is the official "
         "development set)."),
        (RunConfig(negatives="all", limit="-n 5"), False,
         "tasks limited (-n 5): NOT comparable with BioCreative VII; only negatives=all on a whole split is."),
        (RunConfig(negatives="2", limit=""), False,
         "negatives=2: NOT comparable with BioCreative VII; only negatives=all on a whole split is."),
        (RunConfig(negatives="all"), None,
         "comparability unknown (the saved config does not say whether the tasks were limited): it needs "
         "negatives=all on a whole split."),
        (RunConfig(), None,
         "comparability unknown (the saved config does not say whether the tasks were limited): it needs "
         "negatives=all on a whole split."),
]  # fmt: skip
"""(the run's saved setting, comparable_with_official, the note's verdict) for a run with NO-RELATION tasks."""


@pytest.mark.parametrize(("config", "comparable", "verdict"), SETTINGS)
def test_the_setting_says_when_the_micro_f1_is_comparable(
    config: RunConfig, comparable: bool | None, verdict: str
) -> None:
    setting = setting_of([NEGATIVE], config)
    assert (setting["mode"], setting["negatives"], setting["comparable_with_official"]) == (
        "negatives",
        config.negatives,
        comparable,
    )
    assert setting["note"] == (
        "with NO-RELATION candidates: a type answered on a no-relation pair is a false positive; an N or invalid "
        "answer on a gold pair is a false negative; N itself is never scored. " + verdict
    )


def test_a_positive_only_run_is_never_comparable() -> None:
    positive = Rollout.of(GoldPair(PMID, "T1", "T2", ("INHIBITOR",), False), ScoredAnswer("INHIBITOR"))
    setting = setting_of([positive], RunConfig(negatives="all", limit=""))
    assert (setting["mode"], setting["negatives"], setting["comparable_with_official"]) == (
        "positive-only",
        "all",
        False,
    )
    assert setting_of([positive], RunConfig())["negatives"] == "0"
