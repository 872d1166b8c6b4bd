"""What ``--export-tsv`` and ``--export-gold`` write for an extraction-mode run: the majority triples of each
abstract, and the gold relations of the evaluated abstracts."""

from __future__ import annotations

from collections.abc import Sequence

from drugprot.core.metrics import RelationRow
from drugprot.core.official_tsv import sorted_rows
from drugprot.evaluation.records import ExtractionRollout
from drugprot.modes.extraction.summary import group_by_abstract, voted_relations


def prediction_rows(rollouts: Sequence[ExtractionRollout]) -> list[RelationRow]:
    """The official rows of each abstract's majority triples (``voted_relations``), sorted by PMID, ids, type."""
    groups = group_by_abstract(rollouts)
    return sorted_rows([(pmid, *triple) for pmid, group in groups.items() for triple in voted_relations(group)])


def gold_rows(rollouts: Sequence[ExtractionRollout]) -> list[RelationRow]:
    """The gold relations of the evaluated abstracts, as official rows (the report's gold set)."""
    return sorted_rows(list({(r.pmid, *triple) for r in rollouts for triple in r.gold.relations}))
