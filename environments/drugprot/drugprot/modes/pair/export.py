"""What ``--export-tsv`` and ``--export-gold`` write for a pair-mode run: one row per task with a positive
majority answer, and the gold relations of the evaluated pairs."""

from __future__ import annotations

from collections.abc import Sequence

from drugprot.core.labels import NO_RELATION
from drugprot.core.metrics import RelationRow
from drugprot.core.official_tsv import id_key, sorted_rows
from drugprot.evaluation.records import Rollout
from drugprot.modes.pair.summary import group_by_task, majority_label


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
    return sorted(rows, key=lambda row: (row[0], id_key(row[1]), id_key(row[2])))


def gold_rows(rollouts: Sequence[Rollout]) -> list[RelationRow]:
    """The gold relations of the evaluated pairs, as official rows (the report's gold set)."""
    return sorted_rows({(r.pmid, r.arg1, r.arg2, g) for r in rollouts for g in r.labels if g != NO_RELATION.name})
