"""drugprot.core.sources: the three formats load the same documents; splits, paths, encodings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotConfigError, DrugprotDataError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.sources import LoadStats, load_documents
from drugprot.core.tasks import build_tasks
from tests.core.sources.util import copy_tsv, rows
from tests.fixtures import FIXTURES


def test_fixture_counts(fixture_jsonl: Path) -> None:
    stats = LoadStats()
    docs = load_documents("train", fixture_jsonl, stats=stats)
    assert (stats.documents, stats.entities, stats.relations, stats.duplicate_relations) == (9, 65, 28, 0)
    tasks = build_tasks(docs)
    assert len(tasks) == 27  # 28 relations, one pair carries two types
    multi = [t for t in tasks if len(t.labels) > 1]
    assert [(t.key, t.labels) for t in multi] == [("90000001:T1:T2", ("INHIBITOR", "SUBSTRATE"))]
    assert [t.key for t in tasks if t.pmid == "90000004"] == []  # the abstract with no relation
    assert tasks[0].key == "90000001:T1:T2" and tasks[-1].key == "90000009:T4:T5"


def test_jsonl_and_tsv_build_identical_tasks(fixture_jsonl: Path, fixture_tsv: Path) -> None:
    from_jsonl = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl)))
    from_tsv = load_questions(TaskOptions(split="train", data_path=str(fixture_tsv)))
    assert len(from_jsonl) == 27
    assert from_jsonl == from_tsv


def test_parquet_loads_the_same(fixture_jsonl: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows(fixture_jsonl)), path)
    assert load_documents("train", path) == load_documents("train", fixture_jsonl)


def test_generator_reproduces_committed_fixture(tmp_path: Path) -> None:
    from tests.fixtures import build_fixture

    build_fixture.write(tmp_path)
    for rel in (
        "drugprot_fixture.jsonl",
        "tsv/drugprot_training_abstracs.tsv",
        "tsv/drugprot_training_entities.tsv",
        "tsv/drugprot_training_relations.tsv",
    ):
        assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel


def test_non_ascii_offsets(fixture_jsonl: Path) -> None:
    doc = {d.pmid: d for d in load_documents("train", fixture_jsonl)}["90000003"]
    assert [e.text for e in doc.entities if e.id in ("T1", "T5", "T7")] == [
        "β2-agonists",
        "Ca²⁺",
        "nifédipine",
    ]


def test_bad_split_and_paths(tmp_path: Path) -> None:
    with pytest.raises(DrugprotConfigError, match="unknown split 'test'") as err:
        load_documents("test", tmp_path)
    assert err.value.knob == "split" and isinstance(err.value, ValueError)
    with pytest.raises(DrugprotDataError, match="no such file or directory"):
        load_documents("train", tmp_path / "missing.jsonl")
    with pytest.raises(DrugprotDataError, match="no \\*_abstracs.tsv file"):
        load_documents("train", tmp_path)
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DrugprotDataError, match="unsupported file type '.csv'"):
        load_documents("train", tmp_path / "x.csv")


def test_empty_sources_say_so(fixture_tsv: Path, tmp_path: Path) -> None:
    for name, content in (("empty.jsonl", "\n\n"), ("empty.json", "[]"), ("zero.jsonl", "")):
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        with pytest.raises(DrugprotDataError, match="^no abstract: the source is empty") as err:
            load_documents("train", path)
        assert err.value.source == str(path)
    tsv = copy_tsv(fixture_tsv, tmp_path)
    (tsv / "drugprot_training_abstracs.tsv").write_text("", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="^no abstract: the abstracts file is empty"):
        load_documents("train", tsv)


def test_utf8_bom_is_accepted_in_every_format(fixture_jsonl: Path, fixture_tsv: Path, tmp_path: Path) -> None:
    expected = load_documents("train", fixture_jsonl)
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + fixture_jsonl.read_bytes())
    as_json = tmp_path / "bom.json"
    as_json.write_bytes(b"\xef\xbb\xbf" + json.dumps(rows(fixture_jsonl)).encode())
    tsv = copy_tsv(fixture_tsv, tmp_path)
    for path in tsv.iterdir():  # Excel and Windows tools write a BOM at the start of every file
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_documents("train", jsonl) == load_documents("train", as_json) == expected
    assert load_documents("train", tsv) == load_documents("train", fixture_tsv)


def test_non_utf8_byte_names_file_and_line(fixture_jsonl: Path, fixture_tsv: Path, tmp_path: Path) -> None:
    lines = fixture_jsonl.read_bytes().split(b"\n")
    lines[2] = (
        lines[2].replace(b"Lorvastatin", b"Lorvastatin\xe9", 1)
        if b"Lorvastatin" in lines[2]
        else (lines[2][:40] + b"\xe9" + lines[2][40:])
    )
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b"\n".join(lines))
    with pytest.raises(DrugprotDataError) as err:
        load_documents("train", bad)
    assert err.value.source == f"{bad}:3"
    assert str(err.value).startswith("byte 0xe9 at byte 41 of the line is not UTF-8")
    tsv = copy_tsv(fixture_tsv, tmp_path)
    entities = tsv / "drugprot_training_entities.tsv"
    text = entities.read_text(encoding="utf-8").splitlines(keepends=True)
    text[4] = text[4].replace(text[4].split("\t")[-1], "caf\u00e9\n")
    entities.write_bytes("".join(text).encode("latin-1", errors="replace"))
    with pytest.raises(DrugprotDataError, match=r"byte 0xe9 .* is not UTF-8.*convert it to UTF-8") as err:
        load_documents("train", tsv)
    assert err.value.source == f"{entities}:5"
