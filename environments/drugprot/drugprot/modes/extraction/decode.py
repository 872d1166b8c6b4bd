"""Reading an extraction-mode rollout (one task per abstract) from a run file: its gold and its scored answer.

A rollout is an extraction rollout when its task data (v1 ``task.data``, legacy ``info``) carries the
``extraction`` gold record (``ExtractionGold.as_record()``). Its answer is the ``info["drugprot"]`` record the
scorer wrote (``ExtractionScore.as_info()``) with the recorded accuracy reward, when both are there and
consistent with the gold; otherwise the reply is re-scored with ``drugprot.core.scoring.score_extraction``, so a
malformed record never loses the rollout. A record made by scorer version 1 or 2 (or none recorded) that rejected
lines as ``wrong_entity_type`` is re-scored too: those versions rejected a line with its arguments swapped, which
the current scorer reads as the relation, so reward, report and export agree on every run. A gold record of the
wrong shape is a ``BadRecord`` naming the field.
"""

from __future__ import annotations

from typing import Any

from drugprot.core.extraction import ExtractionGold
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.scoring import INFO_KEY, SCORING_ERROR, score_extraction
from drugprot.core.versions import from_info as versions_from_info
from drugprot.evaluation.records import ROLLOUT_ERROR, ExtractionAnswer, Triple
from drugprot.evaluation.typed_json import BadRecord, describe, identity, shorten

_TYPES = frozenset(RELATION_NAMES)
_COUNTS = (("malformed", "malformed"), ("unknown_id", "unknown_id"), ("wrong_entity_type", "wrong_type"),
           ("duplicate", "duplicate"))  # fmt: skip
"""(key in the info record, ``ExtractionAnswer`` field) of the rejected-line counts."""


_SWAP_REJECTED = (None, "1", "2")
"""Scorer versions (None: unrecorded) whose ``wrong_entity_type`` count may hold swapped lines that now score."""


def _is_triple(item: Any, gold: ExtractionGold) -> bool:
    """``[chemical id, gene id, type name]`` with the ids among ``gold``'s mentions (strings first: JSON lists and
    objects are unhashable)."""
    return (
        isinstance(item, list)
        and len(item) == 3
        and all(isinstance(x, str) for x in item)
        and item[0] in gold.chemicals
        and item[1] in gold.genes
        and item[2] in _TYPES
    )


def _ids(record: dict[str, Any], key: str, path: str) -> frozenset[str]:
    values = record.get(key)
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise BadRecord(f"field {path}.{key} is {describe(values)}, expected a list of mention ids")
    return frozenset(values)


def extraction_gold(data: dict[str, Any], prefix: str) -> tuple[str, ExtractionGold]:
    """The PMID and the gold of an extraction task's data.

    Raises:
        UnidentifiedTask: the pmid is missing or empty.
        BadRecord: the gold record is not ``{"chemicals": [...], "genes": [...], "relations": [[c, g, type]]}``
            with every relation a chemical id, a gene id and an official type name.
    """
    pmid = identity(data, "pmid", f"{prefix}.pmid")
    record, path = data.get("extraction"), f"{prefix}.extraction"
    if not isinstance(record, dict):
        raise BadRecord(f"field {path} is {describe(record)}, expected an object with chemicals, genes, relations")
    chemicals, genes = _ids(record, "chemicals", path), _ids(record, "genes", path)
    relations = record.get("relations")
    if not isinstance(relations, list):
        raise BadRecord(f"field {path}.relations is {describe(relations)}, expected a list of [chemical, gene, type]")
    triples = set()
    for i, item in enumerate(relations):
        if not _is_triple(item, ExtractionGold(chemicals, genes, frozenset())):
            shown = (
                "[" + ", ".join(repr(shorten(x, 40)) for x in item) + "]"
                if isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)
                else describe(item)
            )
            raise BadRecord(
                f"field {path}.relations[{i}] is {shown}, expected [chemical id, gene id, DrugProt type] with the ids "
                "among the record's chemicals and genes"
            )
        triples.add((item[0], item[1], item[2]))
    return pmid, ExtractionGold(chemicals, genes, frozenset(triples))


def _triples(value: Any, gold: ExtractionGold) -> tuple[Triple, ...] | None:
    """Distinct scored triples of a record's ``relations`` (a chemical and a gene of ``gold``), else None."""
    if not isinstance(value, list):
        return None
    out: dict[Triple, None] = {}
    for item in value:
        if not _is_triple(item, gold) or tuple(item) in out:
            return None
        out[(item[0], item[1], item[2])] = None
    return tuple(out)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def extraction_record(
    info: dict[str, Any] | None, accuracy: float | None, gold: ExtractionGold
) -> ExtractionAnswer | None:
    """The answer of the usable extraction record in ``info`` with the recorded ``accuracy``.

    None when there is none to trust: no record, a pair-mode or malformed one, a scoring error, no recorded
    accuracy, or counts that disagree with its relations and the gold. The reply is then re-scored.
    """
    record = info.get(INFO_KEY) if info is not None else None
    if not isinstance(record, dict) or record.get("mode") != "extraction":
        return None
    if accuracy is None or not 0.0 <= accuracy <= 1.0:
        return None
    relations = _triples(record.get("relations"), gold)
    counts = [_count(record.get(key)) for key, _ in _COUNTS]
    reason, fmt = record.get("invalid_reason"), record.get("format_reason")
    if relations is None or None in counts or not all(x is None or isinstance(x, str) for x in (reason, fmt)):
        return None
    if (reason is not None and (relations or reason.startswith(SCORING_ERROR))) or (fmt or "").startswith(
        SCORING_ERROR
    ):
        return None
    tp = sum(1 for triple in relations if triple in gold.relations)
    if [record.get("tp"), record.get("fp"), record.get("fn")] != [tp, len(relations) - tp, len(gold.relations) - tp]:
        return None
    malformed, unknown, wrong, duplicate = (c or 0 for c in counts)
    if wrong and (versions_from_info(record) or {}).get("scorer") in _SWAP_REJECTED:
        return None
    return ExtractionAnswer(
        relations,
        accuracy,
        malformed,
        unknown,
        wrong,
        duplicate,
        None if reason is None else shorten(reason),
        None if fmt is None else shorten(fmt),
    )


def extraction_answer(
    record: ExtractionAnswer | None,
    reply: tuple[str | None, str | None] | None,
    gold: ExtractionGold,
    error: str | None,
) -> ExtractionAnswer:
    """The record's answer, else the reply re-scored (none when the rollout failed before replying)."""
    if record is not None:
        return record
    if reply is None and error is not None:  # nothing to re-score: the rollout failed before replying
        reason = f"{ROLLOUT_ERROR}: {error}"
        return ExtractionAnswer((), 0.0, invalid_reason=reason, format_reason=reason)
    content, reasoning = reply if reply is not None else (None, None)
    return ExtractionAnswer.of(score_extraction(content, reasoning, gold), rescored=True)
