"""Tests of drugprot.core.official_tsv: writing and reading the official BioCreative VII TSV files."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotDataError
from drugprot.core.metrics import score_relations
from drugprot.core.official_tsv import read_relations_tsv, write_entities_tsv, write_predictions_tsv
from tests.core.test_metrics import EX_GOLD, EX_PAIRS, EX_PRED, OFFICIAL_EX_PRINTED, make_doc, printed


def test_tsv_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "pred.tsv"
    rows = [*EX_PRED, ("100", "Arg1:T2", "Arg2:T4", "PART-OF")]
    assert write_predictions_tsv(path, rows) == len(rows) - 1  # the NO-RELATION row is not written
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "100\tINHIBITOR\tArg1:T1\tArg2:T3"
    assert text.splitlines()[-1] == "100\tPART-OF\tArg1:T2\tArg2:T4"
    back = read_relations_tsv(path)
    assert back == [row for row in EX_PRED if row[3] != "NO-RELATION"] + [("100", "T2", "T4", "PART-OF")]
    assert printed(score_relations(EX_GOLD, back[:-1], pairs=EX_PAIRS)) == OFFICIAL_EX_PRINTED


def test_read_tolerates_blank_lines_crlf_and_no_relation(tmp_path: Path) -> None:
    path = tmp_path / "rel.tsv"
    path.write_bytes(b"1\tINHIBITOR\tArg1:T1\tArg2:T2\r\n\r\n  \n2\tNO-RELATION\tArg1:T3\tArg2:T4\n")
    assert read_relations_tsv(path) == [("1", "T1", "T2", "INHIBITOR"), ("2", "T3", "T4", "NO-RELATION")]


def test_read_unreadable_and_non_utf8_files_are_data_errors(tmp_path: Path) -> None:
    path = tmp_path / "pred.tsv"
    path.write_bytes(b"\xef\xbb\xbf1\tINHIBITOR\tArg1:T1\tArg2:T2\n")  # a byte-order mark is fine
    assert read_relations_tsv(path) == [("1", "T1", "T2", "INHIBITOR")]
    path.write_bytes(b"1\tINHIBITOR\tArg1:T1\tArg2:T2\n2\tINHIBITOR\tArg1:T\xe9\tArg2:T2\n")
    with pytest.raises(DrugprotDataError) as err:
        read_relations_tsv(path)
    assert err.value.source == f"{path}:2" and "byte 0xe9 at byte 19 of the line is not UTF-8" in str(err.value)
    with pytest.raises(DrugprotDataError, match="cannot read the file") as err:
        read_relations_tsv(tmp_path / "missing.tsv")
    assert err.value.source == str(tmp_path / "missing.tsv")


def test_read_lenient_relation_types(tmp_path: Path) -> None:
    path = tmp_path / "pred.tsv"
    path.write_text("1\tINHIBITOR\tArg1:T1\tArg2:T2\n1\twhatever\tArg1:T1\tArg2:T3\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="whatever"):
        read_relations_tsv(path)
    rows = read_relations_tsv(path, strict=False)
    assert rows[1] == ("1", "T1", "T3", "whatever")
    s = score_relations([("1", "T1", "T2", "INHIBITOR")], rows)
    assert (s.tp, s.fp, s.fn, s.unscored_predictions) == (1, 0, 0, 1)
    path.write_text("1\t\tArg1:T1\tArg2:T3\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="empty relation"):
        read_relations_tsv(path, strict=False)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("1\tINHIBITOR\tArg1:T1", "columns"),
        ("1\tINHIBITOR\tArg1:T1\tArg2:T2\textra", "columns"),
        ("1 2\tINHIBITOR\tArg1:T1\tArg2:T2", "pmid"),
        ("\tINHIBITOR\tArg1:T1\tArg2:T2", "pmid"),
        ("1\tinhibitor\tArg1:T1\tArg2:T2", "relation"),
        ("1\tSUBSTRATE-PRODUCT-OF\tArg1:T1\tArg2:T2", "relation"),
        ("1\tINHIBITOR\tT1\tArg2:T2", "arg1"),
        ("1\tINHIBITOR\tArg1:\tArg2:T2", "arg1"),
        ("1\tINHIBITOR\tArg1:T1\tArg1:T2", "arg2"),
        ("1\tINHIBITOR\tArg1:T1\tArg2:T 2", "arg2"),
    ],
)
def test_read_bad_lines(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("1\tINHIBITOR\tArg1:T1\tArg2:T2\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError) as info:
        read_relations_tsv(path)
    assert info.value.source == f"{path}:3"
    assert info.value.field == field
    assert f"{path}:3" in str(info.value) and f"field {field}" in str(info.value)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (("1", "T1", "T2", "SOMETHING"), "relation"),
        (("1", "T1", "", "INHIBITOR"), "arg2"),
        (("1\t2", "T1", "T2", "INHIBITOR"), "pmid"),
        (("1", "T1", "T2"), "row"),
    ],
)
def test_write_bad_rows(tmp_path: Path, row: tuple, field: str) -> None:
    with pytest.raises(DrugprotDataError) as info:
        write_predictions_tsv(tmp_path / "out.tsv", [row])
    assert info.value.field == field and info.value.source == str(tmp_path / "out.tsv")


def test_entities_tsv_writes_chemicals_and_genes_typed_for_the_official_scorer(tmp_path: Path) -> None:
    docs = [
        make_doc("100", [("T3", "GENE-Y"), ("T1", "CHEMICAL"), ("T4", "GENE-N"), ("T2", "CHEMICAL")]),
        make_doc("300", [("T1", "CHEMICAL"), ("T2", "GENE")]),
        make_doc("400", [("T1", "CHEMICAL")]),
    ]
    path = tmp_path / "ents.tsv"
    assert write_entities_tsv(path, docs) == 7
    assert path.read_text(encoding="utf-8").splitlines() == [  # GENE-Y/GENE-N written as GENE, in entity order
        "100\tT3\tGENE\t0\t3\tmT3",
        "100\tT1\tCHEMICAL\t4\t7\tmT1",
        "100\tT4\tGENE\t8\t11\tmT4",
        "100\tT2\tCHEMICAL\t12\t15\tmT2",
        "300\tT1\tCHEMICAL\t0\t3\tmT1",
        "300\tT2\tGENE\t4\t7\tmT2",
        "400\tT1\tCHEMICAL\t0\t3\tmT1",
    ]
