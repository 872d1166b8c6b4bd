"""Loading, validation and task building on the synthetic fixture (jsonl and official TSV forms)."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import pytest

from drugprot import labels, prompts
from drugprot.data import LoadStats, load_documents
from drugprot.errors import DrugprotDataError, DrugprotHubError
from drugprot.parsing import parse_reply
from drugprot.questions import TaskOptions, load_questions
from drugprot.tasks import build_tasks, parse_negatives

from .conftest import FIXTURES


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data), encoding="utf-8")
    return path


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


def test_tsv_split_subfolders(fixture_tsv: Path, tmp_path: Path) -> None:
    root = tmp_path / "drugprot-gs-training-development"
    shutil.copytree(fixture_tsv, root / "training")
    dev = root / "development"
    dev.mkdir()
    for src in fixture_tsv.iterdir():
        lines = [
            ln
            for ln in src.read_text(encoding="utf-8").splitlines(keepends=True)
            if ln.startswith("90000002")
        ]
        (dev / src.name.replace("training", "development")).write_text("".join(lines), encoding="utf-8")
    assert len(load_documents("train", root)) == 9
    assert [d.pmid for d in load_documents("validation", root)] == ["90000002"]


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


def test_repeated_names_are_mention_level(fixture_jsonl: Path) -> None:
    tasks = {t.key: t for t in build_tasks(load_documents("train", fixture_jsonl))}
    agonist = tasks["90000002:T5:T6"]  # the second "tamoxifen"/"estrogen receptor alpha" pair
    marked = prompts.marked_text(agonist)
    assert marked.count("<chemical>") == 1 and marked.count("<gene>") == 1
    assert (
        "In endometrium, however, <chemical>tamoxifen</chemical> acts as an agonist of "
        "<gene>estrogen receptor alpha</gene>." in marked
    )
    assert (
        marked.replace("<chemical>", "")
        .replace("</chemical>", "")
        .replace("<gene>", "")
        .replace("</gene>", "")
        == agonist.document.text
    )


def test_nested_mentions_stay_well_nested(fixture_jsonl: Path) -> None:
    tasks = {t.key: t for t in build_tasks(load_documents("train", fixture_jsonl))}
    assert prompts.marked_text(tasks["90000009:T3:T2"]).startswith(
        "Binding of GABA to the <gene><chemical>GABA</chemical>(A) receptor</gene>"
    )


def test_non_ascii_offsets(fixture_jsonl: Path) -> None:
    doc = {d.pmid: d for d in load_documents("train", fixture_jsonl)}["90000003"]
    assert [e.text for e in doc.entities if e.id in ("T1", "T5", "T7")] == [
        "β2-agonists",
        "Ca²⁺",
        "nifédipine",
    ]


def test_prompts_and_parser_share_the_label_table(fixture_jsonl: Path) -> None:
    question = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl), num_tasks=1))[0]
    for with_nr in (False, True):
        system, opts = prompts.system_prompt(with_nr), prompts.options_block(with_nr)
        offered = labels.options(with_nr)
        assert len(offered) == (14 if with_nr else 13)
        for label in offered:
            assert f"\n{label.letter}. {label.name}: {label.description}\n" in system + "\n"
            assert f"{label.letter}. {label.name}" in opts.splitlines()
            assert (
                parse_reply(f"<think>x</think>\\boxed{{{label.letter}}}", with_no_relation=with_nr).letter
                == label.letter
            )
            assert (
                parse_reply(f"<think>x</think>\\boxed{{{label.name}}}", with_no_relation=with_nr).letter
                == label.letter
            )
        assert ("N. NO-RELATION" in system) is with_nr
    assert question.prompt.endswith(
        prompts.options_block() + "\n\nAnswer with the letter of one option in \\boxed{}."
    )
    assert [label.letter + label.name for label in labels.RELATION_LABELS][0] == "AINDIRECT-DOWNREGULATOR"
    assert labels.RELATION_LABELS[-1].letter + labels.RELATION_LABELS[-1].name == "MPART-OF"


def test_options_shuffle_and_limit(fixture_jsonl: Path) -> None:
    base = TaskOptions(split="train", data_path=str(fixture_jsonl))
    keys = [q.key for q in load_questions(base)]
    shuffled = [q.key for q in load_questions(TaskOptions(**{**base.__dict__, "shuffle": True, "seed": 3}))]
    again = [q.key for q in load_questions(TaskOptions(**{**base.__dict__, "shuffle": True, "seed": 3}))]
    assert shuffled == again and sorted(shuffled) == sorted(keys) and shuffled != keys
    assert [q.key for q in load_questions(TaskOptions(**{**base.__dict__, "num_tasks": 4}))] == keys[:4]


def test_unmarked_prompt(fixture_jsonl: Path) -> None:
    q = load_questions(
        TaskOptions(split="train", data_path=str(fixture_jsonl), num_tasks=1, mark_entities=False)
    )[0]
    assert "<chemical>" not in q.prompt and 'between "Lorvastatin" and "CYP3A4"' in q.prompt


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (
            lambda r: r["relations"].append({"type": "INHIBITS", "arg1": "T1", "arg2": "T2"}),
            "relations[4].type",
            "unknown relation type 'INHIBITS'",
        ),
        (
            lambda r: r["relations"].append({"type": "INHIBITOR", "arg1": "T99", "arg2": "T2"}),
            "relations[4].arg1",
            "'T99', which does not exist",
        ),
        (
            lambda r: r["relations"].append({"type": "INHIBITOR", "arg1": "T2", "arg2": "T1"}),
            "relations[4].arg1",
            "arg1 must be a chemical mention",
        ),
        (lambda r: r["entities"][0].update(end=10_000), "entities[0].start", "lie outside the text"),
        (
            lambda r: r["entities"][0].update(text="Lovastatin"),
            "entities[0].text",
            "but entity T1 says 'Lovastatin'",
        ),
        (lambda r: r["entities"][0].update(type="DRUG"), "entities[0].type", "unknown entity type 'DRUG'"),
        (lambda r: r["entities"][1].pop("start"), "entities[1].start", "missing field"),
        (lambda r: r["entities"][1].update(start="58"), "entities[1].start", "expected int, got str"),
    ],
)
def test_bad_rows_name_file_pmid_field(fixture_jsonl: Path, tmp_path: Path, mutate, field, message) -> None:
    data = rows(fixture_jsonl)
    mutate(data[0])
    path = write_rows(tmp_path / "bad.jsonl", data)
    with pytest.raises(DrugprotDataError) as err:
        load_documents("train", path)
    assert err.value.pmid == "90000001" and err.value.field == field
    assert str(path) in err.value.source and "#row0" in err.value.source
    assert (
        message in str(err.value) and "pmid 90000001" in str(err.value) and f"field {field}" in str(err.value)
    )


def test_duplicate_relation_is_dropped_and_counted(fixture_jsonl: Path, tmp_path: Path) -> None:
    data = rows(fixture_jsonl)
    data[1]["relations"].append(dict(data[1]["relations"][0]))
    stats = LoadStats()
    docs = load_documents("train", write_rows(tmp_path / "dup.jsonl", data), stats=stats)
    assert (stats.relations, stats.duplicate_relations, stats.duplicates) == (
        28,
        1,
        ["90000002:ANTAGONIST:T3:T4"],
    )
    assert len(build_tasks(docs)) == 27


def test_bad_tsv_line_names_file_and_line(fixture_tsv: Path, tmp_path: Path) -> None:
    bad = tmp_path / "tsv"
    shutil.copytree(fixture_tsv, bad)
    rel = bad / "drugprot_training_relations.tsv"
    rel.write_text(rel.read_text(encoding="utf-8") + "90000002\tINHIBITOR\tT7\tArg2:T8\n", encoding="utf-8")
    with pytest.raises(
        DrugprotDataError, match=r"drugprot_training_relations.tsv:29.*pmid 90000002.*field arg1"
    ):
        load_documents("train", bad)


def test_bad_split_and_paths(tmp_path: Path) -> None:
    with pytest.raises(DrugprotDataError, match="unknown split 'test'"):
        load_documents("test", tmp_path)
    with pytest.raises(DrugprotDataError, match="no such file or directory"):
        load_documents("train", tmp_path / "missing.jsonl")
    with pytest.raises(DrugprotDataError, match="no \\*_abstracs.tsv file"):
        load_documents("train", tmp_path)
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DrugprotDataError, match="unsupported file type '.csv'"):
        load_documents("train", tmp_path / "x.csv")


def test_hub_offline_fails_fast_naming_the_local_option(monkeypatch: pytest.MonkeyPatch) -> None:
    # An endpoint on a closed local port stands in for an unreachable hub (no traffic leaves the machine).
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    start = time.monotonic()
    with pytest.raises(DrugprotHubError, match="--env.taskset.data-path") as err:
        load_questions(TaskOptions(), path_hint="--env.taskset.data-path")
    assert time.monotonic() - start < 10
    assert "OpenMed/drugprot-parquet" in str(err.value)


@pytest.mark.parametrize(("value", "expected"), [(0, 0), (3, 3), ("2", 2), ("all", "all"), (" ALL ", "all")])
def test_parse_negatives(value, expected) -> None:
    assert parse_negatives(value) == expected


@pytest.mark.parametrize("value", [-1, "some", True, 1.5, None])
def test_parse_negatives_rejects(value) -> None:
    with pytest.raises(ValueError, match="non-negative integer or 'all'"):
        parse_negatives(value)


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
