"""Tests of drugprot.core.questions: the Question record and the selection of tasks by the knobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotDataError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.sources import LoadStats
from tests.core.test_sources import copy_tsv, rows, write_rows


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
