"""The official scorer's inputs: a run's majority predictions as an official TSV, and the gold of what it evaluated.

What the rows are is the run's mode's (``Mode.prediction_rows``, ``Mode.gold_rows``: the majority answer per pair,
or the majority triples per abstract)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from drugprot.core.official_tsv import write_entities_tsv, write_predictions_tsv
from drugprot.core.outputs import write_text_atomic
from drugprot.core.schema import Document
from drugprot.evaluation.records import Run
from drugprot.modes.base import get_mode
from drugprot.modes.pair.export import prediction_rows

__all__ = ["export_gold", "export_tsv", "prediction_rows"]


def export_tsv(run: Run, path: str | os.PathLike[str]) -> int:
    """Write the run's majority predictions in the official TSV format; returns the number of rows."""
    return write_predictions_tsv(path, get_mode(run.mode).prediction_rows(run))


def export_gold(run: Run, directory: str | os.PathLike[str], documents: Sequence[Document] | None = None) -> list[Path]:
    """Write the official scorer's gold inputs for the evaluated pairs to ``directory``.

    ``gold_relations.tsv`` (the gold relations of the evaluated pairs: the report's gold set),
    ``pmids.txt`` and, when ``documents`` are given, ``entities.tsv`` (their mentions, genes typed ``GENE``
    as the scorer expects). Returns the paths written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    mode = get_mode(run.mode)
    gold, pmids = mode.gold_rows(run), mode.pmids(run)
    write_predictions_tsv(out / "gold_relations.tsv", gold)
    write_text_atomic(out / "pmids.txt", "".join(f"{p}\n" for p in pmids))
    written = [out / "gold_relations.tsv", out / "pmids.txt"]
    if documents is not None:
        wanted = set(pmids)
        write_entities_tsv(out / "entities.tsv", [doc for doc in documents if doc.pmid in wanted])
        written.append(out / "entities.tsv")
    return written
