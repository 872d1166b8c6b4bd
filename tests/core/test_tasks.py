"""Tests of drugprot.core.tasks: one task per gold (chemical, gene) mention pair, plus NO-RELATION candidates."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from drugprot.core.candidates import Ceiling, ceiling_of
from drugprot.core.schema import Document, Entity, Relation
from drugprot.core.sources import load_documents
from drugprot.core.tasks import PairTask, build_tasks, positive_pairs

TEXT = "Drug X inhibits and is a substrate of CYP3A4. Drug Y blocks CYP3A4 and CYP2D6."
DOC = Document(
    pmid="7",
    title="",
    abstract=TEXT,
    text=TEXT,
    entities=(
        Entity("T1", "CHEMICAL", "Drug X", 0, 6),
        Entity("T2", "GENE-Y", "CYP3A4", 38, 44),
        Entity("T3", "CHEMICAL", "Drug Y", 46, 52),
        Entity("T4", "GENE-Y", "CYP3A4", 60, 66),
        Entity("T5", "GENE-N", "CYP2D6", 71, 77),
    ),
    relations=(
        Relation("SUBSTRATE", "T1", "T2"),
        Relation("INHIBITOR", "T1", "T2"),
        Relation("INHIBITOR", "T3", "T4"),
        Relation("SUBSTRATE", "T1", "T2"),
    ),
)


def test_positive_pairs_group_the_types_of_a_pair_in_label_order() -> None:
    assert positive_pairs(DOC) == {("T1", "T2"): ("INHIBITOR", "SUBSTRATE"), ("T3", "T4"): ("INHIBITOR",)}


def test_one_task_per_gold_pair_then_the_negatives_of_its_abstract() -> None:
    assert [(t.key, t.labels) for t in build_tasks([DOC])] == [
        ("7:T1:T2", ("INHIBITOR", "SUBSTRATE")),
        ("7:T3:T4", ("INHIBITOR",)),
    ]
    assert [(t.key, t.labels) for t in build_tasks([DOC], negatives="all")] == [
        ("7:T1:T2", ("INHIBITOR", "SUBSTRATE")),
        ("7:T3:T4", ("INHIBITOR",)),
        ("7:T3:T5", ("NO-RELATION",)),  # the one same-sentence pair without a gold relation
    ]
    task = build_tasks([DOC])[1]
    # 3 distinct gold relations (the repeated SUBSTRATE row counts once), all on same-sentence pairs; one answer per
    # pair reaches 2 of them (T1-T2 is INHIBITOR and SUBSTRATE).
    assert task == PairTask(DOC, DOC.entities[2], DOC.entities[3], ("INHIBITOR",), Ceiling(3, 3, 2))
    assert (task.pmid, task.chemical.text, task.gene.text) == ("7", "Drug Y", "CYP3A4")


# T1 (sentence 1) and T5 (sentence 2) are related across sentences; T3-T5 is a same-sentence gold pair.
CROSS = dataclasses.replace(DOC, relations=(Relation("AGONIST", "T1", "T5"), Relation("ANTAGONIST", "T3", "T5")))


def test_one_candidate_rule_a_gold_pair_across_sentences_is_no_task_in_any_setting() -> None:
    # Only same-sentence pairs are candidates, gold or not: were T1-T5 asked while NO-RELATION comes only from
    # same-sentence pairs, "two sentences" would mean "related". It stays in the abstract's gold, in the ceiling.
    for negatives in (0, 1, 3, "all"):
        tasks = build_tasks([CROSS], negatives=negatives)
        assert "7:T1:T5" not in [t.key for t in tasks], negatives
        assert {t.ceiling for t in tasks} == {Ceiling(2, 1, 1)}
    assert [(t.key, t.labels) for t in build_tasks([CROSS], negatives="all")] == [
        ("7:T3:T5", ("ANTAGONIST",)),
        ("7:T1:T2", ("NO-RELATION",)),
        ("7:T3:T4", ("NO-RELATION",)),
    ]
    assert ceiling_of(CROSS) == Ceiling(2, 1, 1) and ceiling_of(DOC) == Ceiling(3, 3, 2)
    assert ceiling_of(dataclasses.replace(DOC, relations=())) == Ceiling(0, 0, 0)
    assert ceiling_of(DOC).as_record() == [3, 3, 2]


def test_fixture_tasks(fixture_jsonl: Path) -> None:
    documents = load_documents("train", fixture_jsonl)
    tasks = build_tasks(documents)
    assert len(tasks) == 27  # 28 relations, one pair carries two types
    assert [(t.key, t.labels) for t in tasks if len(t.labels) > 1] == [("90000001:T1:T2", ("INHIBITOR", "SUBSTRATE"))]
    assert [t.key for t in tasks if t.pmid == "90000004"] == []  # the abstract with no relation
    assert tasks[0].key == "90000001:T1:T2" and tasks[-1].key == "90000009:T4:T5"
    counts = {k: len(build_tasks(documents, negatives=k, seed=0)) for k in (0, 1, 2, "all")}
    assert counts == {0: 27, 1: 38, 2: 41, "all": 42}
    # The sample is pinned (SHA-256 ranks): a change here changes every negatives=1 run's tasks.
    negatives = [t.key for t in build_tasks(documents, negatives=1, seed=0) if t.labels == ("NO-RELATION",)]
    assert negatives == [
        "90000001:T6:T7", "90000002:T1:T2", "90000003:T1:T2", "90000003:T5:T6", "90000004:T3:T4", "90000005:T3:T6",
        "90000005:T5:T4", "90000008:T1:T2", "90000008:T3:T6", "90000008:T5:T4", "90000009:T6:T7",
    ]  # fmt: skip
