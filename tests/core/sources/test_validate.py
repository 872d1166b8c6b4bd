"""drugprot.core.sources.validate: a bad row names the file, the PMID and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotDataError
from drugprot.core.sources import LoadStats, load_documents
from drugprot.core.tasks import build_tasks
from tests.core.sources.util import rows, write_rows


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
    assert message in str(err.value) and "pmid 90000001" in str(err.value) and f"field {field}" in str(err.value)


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


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda r: r.update(pmid=""), "pmid", "empty pmid"),
        (lambda r: r.update(pmid="  "), "pmid", "empty pmid"),
        (lambda r: r["entities"][2].update(id=""), "entities[2].id", "empty entity id"),
    ],
)
def test_empty_identifiers_are_rejected(fixture_jsonl: Path, tmp_path: Path, mutate, field, message) -> None:
    data = rows(fixture_jsonl)
    mutate(data[1])
    path = write_rows(tmp_path / "ids.jsonl", data)
    with pytest.raises(DrugprotDataError, match=f"^{message}") as err:
        load_documents("train", path)
    assert (err.value.source, err.value.field) == (f"{path}#row1", field)
