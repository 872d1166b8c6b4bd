"""drugprot.core.sources.tsv: the official BioCreative VII TSV directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drugprot.core.errors import DrugprotDataError
from drugprot.core.sources import load_documents
from tests.core.sources.util import CORRUPTIONS, PROPERTY, copy_tsv, corrupt, loads_or_data_error


def test_tsv_split_subfolders(fixture_tsv: Path, tmp_path: Path) -> None:
    root = tmp_path / "drugprot-gs-training-development"
    shutil.copytree(fixture_tsv, root / "training")
    dev = root / "development"
    dev.mkdir()
    for src in fixture_tsv.iterdir():
        lines = [ln for ln in src.read_text(encoding="utf-8").splitlines(keepends=True) if ln.startswith("90000002")]
        (dev / src.name.replace("training", "development")).write_text("".join(lines), encoding="utf-8")
    assert len(load_documents("train", root)) == 9
    assert [d.pmid for d in load_documents("validation", root)] == ["90000002"]


def test_bad_tsv_line_names_file_and_line(fixture_tsv: Path, tmp_path: Path) -> None:
    bad = tmp_path / "tsv"
    shutil.copytree(fixture_tsv, bad)
    rel = bad / "drugprot_training_relations.tsv"
    rel.write_text(rel.read_text(encoding="utf-8") + "90000002\tINHIBITOR\tT7\tArg2:T8\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=r"drugprot_training_relations.tsv:29.*pmid 90000002.*field arg1"):
        load_documents("train", bad)


def test_tsv_field_above_the_csv_limit_loads(fixture_tsv: Path, tmp_path: Path) -> None:
    tsv = copy_tsv(fixture_tsv, tmp_path)
    abstracts = tsv / "drugprot_training_abstracs.tsv"
    lines = abstracts.read_text(encoding="utf-8").split("\n")
    pmid, title, abstract = lines[0].split("\t")
    long_abstract = abstract + " More text." * 20_000  # 220k characters; csv's default field limit is 131,072
    lines[0] = "\t".join((pmid, title, long_abstract))
    abstracts.write_text("\n".join(lines), encoding="utf-8")
    doc = {d.pmid: d for d in load_documents("train", tsv)}[pmid]
    assert doc.abstract == long_abstract and len(doc.text) == len(title) + 1 + len(long_abstract)


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"], ids=["crlf", "cr-only"])
def test_crlf_and_cr_only_tsv_load_the_same(fixture_tsv: Path, tmp_path: Path, newline: bytes) -> None:
    tsv = copy_tsv(fixture_tsv, tmp_path)
    for path in tsv.iterdir():
        path.write_bytes(path.read_bytes().replace(b"\n", newline))
    assert load_documents("train", tsv) == load_documents("train", fixture_tsv)


@pytest.mark.parametrize(
    ("file", "column", "message", "field"),
    [
        ("abstracs", 0, "empty pmid in the first column", "pmid"),
        ("entities", 0, "empty pmid in the first column", "pmid"),
        ("entities", 1, "empty entity id in the second column", "id"),
        ("relations", 3, "expected Arg2:T<n>, got 'Arg2:'", "arg2"),
    ],
)
def test_empty_tsv_identifiers_name_file_and_line(fixture_tsv: Path, tmp_path: Path, file, column, message, field):
    tsv = copy_tsv(fixture_tsv, tmp_path)
    path = tsv / f"drugprot_training_{file}.tsv"
    lines = path.read_text(encoding="utf-8").split("\n")
    cells = lines[1].split("\t")
    cells[column] = "Arg2:" if file == "relations" else ""
    lines[1] = "\t".join(cells)
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=f"^{message}") as err:
        load_documents("train", tsv)
    assert (err.value.source, err.value.field) == (f"{path}:2", field)


def test_random_corruption_of_a_tsv_file_loads_or_is_a_data_error(fixture_tsv: Path, tmp_path: Path) -> None:
    root = tmp_path / "tsv"
    names = sorted(p.name for p in fixture_tsv.iterdir())
    originals = {name: (fixture_tsv / name).read_bytes() for name in names}

    @PROPERTY
    @given(which=st.sampled_from(names), operations=CORRUPTIONS)
    def check(which: str, operations: list[tuple[str, int, bytes]]) -> None:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for name, content in originals.items():
            (root / name).write_bytes(corrupt(content, operations) if name == which else content)
        loads_or_data_error("train", root)

    check()
