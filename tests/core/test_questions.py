"""Tests of drugprot.core.questions: the Question record and the selection of tasks by the knobs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotDataError
from drugprot.core.extraction import ExtractionGold
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.schema import Entity
from drugprot.core.sources import LoadStats, load_documents
from tests.core.sources.util import copy_tsv, rows, write_rows

TAG = re.compile(r"<(/?)(chemical|gene)>")


def marked_spans(prompt: str) -> tuple[str, dict[str, tuple[int, int]]]:
    """The abstract of a pair prompt with its tags removed, and where each tagged span lies in that text."""
    marked = prompt.split("\n", 1)[1].split("\n\nChemical: ", 1)[0]
    plain, opened, spans, last = [], {}, {}, 0
    for match in TAG.finditer(marked):
        plain.append(marked[last : match.start()])
        last = match.end()
        at = sum(map(len, plain))
        if match.group(1):
            spans[match.group(2)] = (opened.pop(match.group(2)), at)
        else:
            opened[match.group(2)] = at
    plain.append(marked[last:])
    return "".join(plain), spans


@pytest.mark.parametrize(
    ("knobs", "count"),
    [({}, 27), ({"negatives": 1}, 38), ({"negatives": 2}, 41), ({"negatives": "all"}, 42), ({"mode": "extraction"}, 9)],
)
def test_question_counts_per_mode(fixture_jsonl: Path, knobs: dict, count: int) -> None:
    questions = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl), **knobs))
    assert len(questions) == count
    assert {q.mode for q in questions} == {knobs.get("mode", "pair")}


def test_the_first_pair_question(fixture_jsonl: Path) -> None:
    q = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl)))[0]
    assert (q.key, q.pmid, q.arg1, q.arg2) == ("90000001:T1:T2", "90000001", "T1", "T2")
    assert q.chemical == Entity("T1", "CHEMICAL", "Lorvastatin", 0, 11)
    assert q.gene == Entity("T2", "GENE-Y", "CYP3A4", 58, 64)
    assert (q.labels, q.answers, q.with_no_relation, q.gold) == (("INHIBITOR", "SUBSTRATE"), ("E", "K"), False, None)


def test_pair_questions_carry_the_mentions_their_prompt_marks(fixture_jsonl: Path) -> None:
    questions = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl), negatives="all"))
    texts = {doc.pmid: doc.text for doc in load_documents("train", fixture_jsonl)}
    for q in questions:
        assert q.chemical is not None and q.gene is not None and q.gold is None
        assert q.text == texts[q.pmid]
        assert q.chemical.text == q.text[q.chemical.start : q.chemical.end] and q.chemical.is_chemical
        assert q.gene.text == q.text[q.gene.start : q.gene.end] and q.gene.is_gene
        assert q.key == f"{q.pmid}:{q.chemical.id}:{q.gene.id}" == f"{q.pmid}:{q.arg1}:{q.arg2}"
        plain, spans = marked_spans(q.prompt)
        assert plain == q.text, q.key
        assert spans == {"chemical": (q.chemical.start, q.chemical.end), "gene": (q.gene.start, q.gene.end)}, q.key
        assert f'Chemical: "{q.chemical.text}"' in q.prompt and f'Gene/protein: "{q.gene.text}"' in q.prompt


def test_extraction_questions_have_the_gold_and_no_mentions(fixture_jsonl: Path) -> None:
    questions = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl), mode="extraction"))
    documents = load_documents("train", fixture_jsonl)
    assert [q.key for q in questions] == [q.pmid for q in questions] == [doc.pmid for doc in documents]
    assert [len(q.gold.relations) for q in questions if q.gold is not None] == [4, 3, 2, 0, 5, 4, 4, 3, 3]
    for q, doc in zip(questions, documents, strict=True):
        assert (q.chemical, q.gene, q.labels, q.answers, q.arg1, q.arg2) == (None, None, (), (), "", "")
        assert q.text == doc.text and q.with_no_relation is False
        assert q.gold == ExtractionGold(
            chemicals=frozenset(e.id for e in doc.entities if e.is_chemical),
            genes=frozenset(e.id for e in doc.entities if e.is_gene),
            relations=frozenset((r.arg1, r.arg2, r.type) for r in doc.relations),
        )


def test_options_shuffle_and_limit(fixture_jsonl: Path) -> None:
    base = TaskOptions(split="train", data_path=str(fixture_jsonl))
    keys = [q.key for q in load_questions(base)]
    shuffled = [q.key for q in load_questions(TaskOptions(**{**base.__dict__, "shuffle": True, "seed": 3}))]
    again = [q.key for q in load_questions(TaskOptions(**{**base.__dict__, "shuffle": True, "seed": 3}))]
    assert shuffled == again and sorted(shuffled) == sorted(keys) and shuffled != keys
    assert [q.key for q in load_questions(TaskOptions(**{**base.__dict__, "num_tasks": 4}))] == keys[:4]


@pytest.mark.parametrize(("negatives", "total", "no_relation"), [(0, 27, 0), (1, 38, 11), (2, 41, 14), ("all", 42, 15)])
def test_negatives_add_no_relation_tasks(fixture_jsonl: Path, negatives, total, no_relation) -> None:
    options = TaskOptions(split="train", data_path=str(fixture_jsonl), negatives=negatives)
    questions = load_questions(options)
    negative = [q for q in questions if q.labels == ("NO-RELATION",)]
    assert (len(questions), len(negative)) == (total, no_relation)
    assert all(q.with_no_relation is (negatives != 0) for q in questions)
    assert all(("N. NO-RELATION" in q.prompt) is (negatives != 0) for q in questions)
    assert [q.key for q in questions][:27] != [] and all(q.answers == ("N",) for q in negative)
    # gold pairs are never offered as negatives, and the same seed gives the same sample
    assert not {q.key for q in negative} & {q.key for q in questions if q.labels != ("NO-RELATION",)}
    assert [q.key for q in load_questions(options)] == [q.key for q in questions]


def test_options_that_select_no_task(fixture_jsonl: Path, tmp_path: Path) -> None:
    data = [r for r in rows(fixture_jsonl) if r["pmid"] == "90000004"]  # the abstract without a relation
    assert data and data[0]["relations"] == []
    path = write_rows(tmp_path / "no-relations.jsonl", data)
    with pytest.raises(DrugprotDataError) as err:
        load_questions(TaskOptions(split="train", data_path=str(path)))
    assert str(err.value) == (
        "these options select no task: no abstract has a gold relation; pass data with relations "
        f"(the official training or development files) (source {path}, field relations)"
    )
    for negatives in (2, "all"):  # its same-sentence candidate pairs are tasks
        assert {
            q.labels for q in load_questions(TaskOptions(split="train", data_path=str(path), negatives=negatives))
        } == {("NO-RELATION",)}
    data[0]["entities"] = []
    bare = write_rows(tmp_path / "no-mentions.jsonl", data)
    for negatives in (2, "all"):
        with pytest.raises(
            DrugprotDataError, match="no abstract has a gold relation and no same-sentence candidate pair; pass data"
        ):
            load_questions(TaskOptions(split="train", data_path=str(bare), negatives=negatives))


def test_validate_source_builds_once_and_notices_changed_files(fixture_jsonl: Path, tmp_path: Path) -> None:
    import os

    from drugprot.core.questions import validate_source

    path = write_rows(tmp_path / "data.jsonl", rows(fixture_jsonl))
    options = TaskOptions(split="train", data_path=str(path))
    validate_source(options)
    st = path.stat()
    changed = path.read_text(encoding="utf-8").replace("Lorvastatin", "Lorvastatim")  # same size
    with path.open("r+", encoding="utf-8") as fh:  # same inode
        fh.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    stats = LoadStats()
    kept = load_questions(options, stats=stats)  # the questions built at validation: the file was not re-read
    assert kept[0].chemical.text == "Lorvastatin" and (stats.documents, stats.relations) == (9, 28)
    assert load_questions(options)[0].chemical.text == "Lorvastatim"  # taken once; the next load reads the file
    validate_source(options)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert load_questions(options)[0].chemical.text == "Lorvastatim"


def test_validate_source_raises_the_data_errors(fixture_tsv: Path, tmp_path: Path) -> None:
    from drugprot.core.questions import validate_source

    tsv = copy_tsv(fixture_tsv, tmp_path)
    (tsv / "drugprot_training_relations.tsv").unlink()
    with pytest.raises(DrugprotDataError) as err:
        validate_source(TaskOptions(split="train", data_path=str(tsv)))
    assert str(err.value) == (
        f"missing drugprot_training_relations.tsv beside drugprot_training_abstracs.tsv (source {tsv}, field data_path)"
    )
