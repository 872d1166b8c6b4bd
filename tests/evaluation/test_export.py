"""``drugprot.evaluation.export``: the official TSV of majority predictions and the gold of the evaluated pairs."""

from __future__ import annotations

from pathlib import Path

from drugprot.core.metrics import score_relations
from drugprot.core.official_tsv import read_relations_tsv
from drugprot.core.sources import load_documents
from drugprot.evaluation.export import export_gold, export_tsv, prediction_rows
from drugprot.evaluation.records import GoldPair, Rollout, Run, ScoredAnswer
from drugprot.evaluation.runs import load_run
from drugprot.tools.cli import main as cli_main
from tests.evaluation.extraction_traces import hand_run
from tests.evaluation.traces import (
    PMID,
    multilabel_run,
    rollouts_run,
)


def test_export_tsv_official_rows_and_round_trip(tmp_path: Path) -> None:
    run = load_run(rollouts_run(tmp_path))
    path = tmp_path / "pred.tsv"
    assert export_tsv(run, path) == 3
    assert path.read_text(encoding="utf-8") == (
        f"{PMID}\tINHIBITOR\tArg1:T1\tArg2:T2\n"
        f"{PMID}\tINHIBITOR\tArg1:T3\tArg2:T2\n"
        f"{PMID}\tINDIRECT-DOWNREGULATOR\tArg1:T4\tArg2:T5\n"
    )
    assert read_relations_tsv(path) == prediction_rows(run.rollouts)


def test_export_skips_no_relation_and_invalid_and_sorts_ids_naturally(tmp_path: Path) -> None:
    run = load_run(multilabel_run(tmp_path))
    path = tmp_path / "pred.tsv"
    assert cli_main(["report", str(run.path), "--export-tsv", str(path), "--export-gold", str(tmp_path / "gold")]) == 0
    assert path.read_text(encoding="utf-8") == (
        f"{PMID}\tINHIBITOR\tArg1:T1\tArg2:T2\n"
        f"{PMID}\tSUBSTRATE\tArg1:T3\tArg2:T2\n"
        f"{PMID}\tANTAGONIST\tArg1:T4\tArg2:T5\n"
        f"{PMID}\tINHIBITOR\tArg1:T6\tArg2:T5\n"
    )
    assert read_relations_tsv(path) == prediction_rows(run.rollouts)
    gold = read_relations_tsv(tmp_path / "gold" / "gold_relations.tsv")
    assert gold == [
        (PMID, "T1", "T2", "INHIBITOR"),
        (PMID, "T1", "T2", "SUBSTRATE"),
        (PMID, "T3", "T2", "SUBSTRATE"),
        (PMID, "T4", "T5", "AGONIST"),
        (PMID, "T8", "T9", "ACTIVATOR"),
        (PMID, "T10", "T9", "INDIRECT-UPREGULATOR"),
        (PMID, "T10", "T9", "ACTIVATOR"),
    ]
    assert (tmp_path / "gold" / "pmids.txt").read_text(encoding="utf-8") == f"{PMID}\n"
    # The exported predictions against the exported gold give the report's majority figures.
    scores = score_relations(gold, read_relations_tsv(path))
    assert (scores.tp, scores.fp, scores.fn) == (2, 2, 5)


def test_the_gold_export_writes_the_evaluated_abstracts_only(tmp_path: Path, fixture_jsonl: Path) -> None:
    documents = load_documents("train", fixture_jsonl)
    first = documents[0]
    pair = GoldPair(first.pmid, "T1", "T2", ("INHIBITOR", "SUBSTRATE"), False)
    run = Run("r", str(tmp_path), "test", [Rollout.of(pair, ScoredAnswer("INHIBITOR"))])
    written = export_gold(run, tmp_path / "gold", documents)
    assert written == [tmp_path / "gold" / name for name in ("gold_relations.tsv", "pmids.txt", "entities.tsv")]
    assert read_relations_tsv(written[0]) == [
        (first.pmid, "T1", "T2", "INHIBITOR"),
        (first.pmid, "T1", "T2", "SUBSTRATE"),
    ]
    assert written[1].read_text(encoding="utf-8") == f"{first.pmid}\n"
    entities = written[2].read_text(encoding="utf-8").splitlines()
    assert len(entities) == len(first.entities) and {line.split("\t")[0] for line in entities} == {first.pmid}
    bare = tmp_path / "no-abstracts"  # without the abstracts: no entities.tsv
    assert export_gold(run, bare) == [bare / "gold_relations.tsv", bare / "pmids.txt"]


def test_an_extraction_run_exports_its_majority_triples_and_the_gold_of_its_abstracts(tmp_path: Path) -> None:
    """``HAND_RUN``: abstract 100's majority keeps T1-T2 INHIBITOR only; 200 has no relation and none voted."""
    run = load_run(hand_run(tmp_path / "run"))
    assert export_tsv(run, tmp_path / "pred.tsv") == 1
    assert (tmp_path / "pred.tsv").read_text(encoding="utf-8") == "100\tINHIBITOR\tArg1:T1\tArg2:T2\n"
    written = export_gold(run, tmp_path / "gold")
    assert [p.name for p in written] == ["gold_relations.tsv", "pmids.txt"]
    assert (tmp_path / "gold" / "gold_relations.tsv").read_text(encoding="utf-8") == (
        "100\tINHIBITOR\tArg1:T1\tArg2:T2\n100\tSUBSTRATE\tArg1:T3\tArg2:T4\n"
    )
    assert (tmp_path / "gold" / "pmids.txt").read_text(encoding="utf-8") == "100\n200\n"
    scores = score_relations(read_relations_tsv(written[0]), read_relations_tsv(tmp_path / "pred.tsv"))
    assert (scores.tp, scores.fp, scores.fn) == (1, 0, 1)  # the report's majority counts
