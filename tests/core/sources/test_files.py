"""drugprot.core.sources.files: parquet, jsonl and json files, damaged or not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given

from drugprot.core.errors import DrugprotDataError
from drugprot.core.sources import load_documents
from tests.core.sources.util import CORRUPTIONS, PROPERTY, corrupt, loads_or_data_error, rows


def test_corrupt_parquet(fixture_jsonl: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = tmp_path / "good.parquet"
    pq.write_table(pa.Table.from_pylist(rows(fixture_jsonl)), good)
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DrugprotDataError, match=r"^not a readable parquet file \(.*\); re-download or re-export it"):
        load_documents("train", truncated)
    not_parquet = tmp_path / "text.parquet"
    not_parquet.write_text("pmid,text\n1,x\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="not a readable parquet file") as err:
        load_documents("train", not_parquet)
    assert err.value.source == str(not_parquet)


def test_truncated_and_malformed_json(fixture_jsonl: Path, tmp_path: Path) -> None:
    text = json.dumps(rows(fixture_jsonl))
    truncated = tmp_path / "truncated.json"
    truncated.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=r"^invalid JSON at line 1 column \d+: .*; the text ends early") as err:
        load_documents("train", truncated)
    assert err.value.source == f"{truncated}:1"
    not_a_list = tmp_path / "object.json"
    not_a_list.write_text('{"pmid": "1"}', encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="a .json file must hold a list of rows, got dict"):
        load_documents("train", not_a_list)
    lines = fixture_jsonl.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:3] + [lines[3][:100]]), encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=r"^invalid JSON at column \d+: .*; the text ends early") as err:
        load_documents("train", cut)
    assert err.value.source == f"{cut}:4"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_pathological_json(tmp_path: Path, suffix: str) -> None:
    deep = tmp_path / f"deep{suffix}"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="JSON nested too deeply"):
        load_documents("train", deep)
    big_int = tmp_path / f"int{suffix}"
    big_int.write_text('[{"pmid": ' + "9" * 5000 + "}]", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="^invalid JSON: Exceeds the limit"):
        load_documents("train", big_int)


def test_unreadable_file_is_a_data_error(tmp_path: Path) -> None:
    mem = Path("/proc/self/mem")  # a regular file whose first read fails with EIO, even for root
    if not mem.is_file():
        pytest.skip("needs Linux /proc")
    link = tmp_path / "unreadable.jsonl"
    link.symlink_to(mem)
    with pytest.raises(DrugprotDataError, match=r"^cannot read the file: Input/output error") as err:
        load_documents("train", link)
    assert (err.value.source, err.value.field) == (str(link), "data_path")


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
def test_random_corruption_of_a_file_loads_or_is_a_data_error(fixture_jsonl: Path, tmp_path: Path, suffix: str) -> None:
    clean = tmp_path / f"clean{suffix}"
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        pq.write_table(pa.Table.from_pylist(rows(fixture_jsonl)), clean)
    elif suffix == ".json":
        clean.write_text(json.dumps(rows(fixture_jsonl), ensure_ascii=False, indent=1), encoding="utf-8")
    else:
        shutil.copyfile(fixture_jsonl, clean)
    data = clean.read_bytes()

    @PROPERTY
    @given(operations=CORRUPTIONS)
    def check(operations: list[tuple[str, int, bytes]]) -> None:
        path = clean.with_name(f"corrupt{suffix}")
        path.write_bytes(corrupt(data, operations))
        loads_or_data_error("train", path)

    check()
