"""The official scorer's inputs: majority predictions as an official TSV, and the gold of the evaluated pairs
(extraction runs: the majority triples of each abstract, and the gold relations of the evaluated abstracts)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from drugprot.core.labels import LABEL_ORDER, NO_RELATION
from drugprot.core.metrics import RelationRow
from drugprot.core.official_tsv import write_entities_tsv, write_predictions_tsv
from drugprot.core.outputs import write_text_atomic
from drugprot.core.schema import Document
from drugprot.evaluation.extraction_summary import group_by_abstract, voted_relations
from drugprot.evaluation.records import ExtractionRollout, Rollout, Run
from drugprot.evaluation.summary import group_by_task, majority_label


def _id_key(entity_id: str) -> tuple[str, int, str]:
    """Natural order of mention ids: ``T2`` before ``T10``."""
    match = re.fullmatch(r"(\D*)(\d+)(.*)", entity_id)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else (entity_id, -1, "")


def prediction_rows(rollouts: Sequence[Rollout]) -> list[RelationRow]:
    """One official row per task with a positive majority answer, sorted by PMID then mention ids.

    NO-RELATION answers and tasks without any valid answer give no row (the official format lists
    relations only).
    """
    rows = []
    for (pmid, arg1, arg2), group in group_by_task(rollouts).items():
        label = majority_label(group)
        if label is not None and label != NO_RELATION.name:
            rows.append((pmid, arg1, arg2, label))
    return sorted(rows, key=lambda row: (row[0], _id_key(row[1]), _id_key(row[2])))


def gold_rows(rollouts: Sequence[Rollout]) -> list[RelationRow]:
    """The gold relations of the evaluated pairs, as official rows (the report's gold set)."""
    rows = {(r.pmid, r.arg1, r.arg2, g) for r in rollouts for g in r.labels if g != NO_RELATION.name}
    return sorted(rows, key=lambda row: (row[0], _id_key(row[1]), _id_key(row[2]), LABEL_ORDER[row[3]]))


def _sorted_rows(rows: Sequence[RelationRow]) -> list[RelationRow]:
    return sorted(rows, key=lambda row: (row[0], _id_key(row[1]), _id_key(row[2]), LABEL_ORDER[row[3]]))


def extraction_prediction_rows(rollouts: Sequence[ExtractionRollout]) -> list[RelationRow]:
    """The official rows of each abstract's majority triples (``voted_relations``), sorted by PMID, ids, type."""
    groups = group_by_abstract(rollouts)
    return _sorted_rows([(pmid, *triple) for pmid, group in groups.items() for triple in voted_relations(group)])


def extraction_gold_rows(rollouts: Sequence[ExtractionRollout]) -> list[RelationRow]:
    """The gold relations of the evaluated abstracts, as official rows (the report's gold set)."""
    return _sorted_rows(list({(r.pmid, *triple) for r in rollouts for triple in r.gold.relations}))


def export_tsv(run: Run, path: str | os.PathLike[str]) -> int:
    """Write the run's majority predictions in the official TSV format; returns the number of rows."""
    if run.extraction:
        return write_predictions_tsv(path, extraction_prediction_rows(run.extraction))
    return write_predictions_tsv(path, prediction_rows(run.rollouts))


def export_gold(run: Run, directory: str | os.PathLike[str], documents: Sequence[Document] | None = None) -> list[Path]:
    """Write the official scorer's gold inputs for the evaluated pairs to ``directory``.

    ``gold_relations.tsv`` (the gold relations of the evaluated pairs: the report's gold set),
    ``pmids.txt`` and, when ``documents`` are given, ``entities.tsv`` (their mentions, genes typed ``GENE``
    as the scorer expects). Returns the paths written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    if run.extraction:
        gold, pmids = extraction_gold_rows(run.extraction), sorted({r.pmid for r in run.extraction})
    else:
        gold, pmids = gold_rows(run.rollouts), sorted({r.pmid for r in run.rollouts})
    write_predictions_tsv(out / "gold_relations.tsv", gold)
    write_text_atomic(out / "pmids.txt", "".join(f"{p}\n" for p in pmids))
    written = [out / "gold_relations.tsv", out / "pmids.txt"]
    if documents is not None:
        wanted = set(pmids)
        write_entities_tsv(out / "entities.tsv", [doc for doc in documents if doc.pmid in wanted])
        written.append(out / "entities.tsv")
    return written
