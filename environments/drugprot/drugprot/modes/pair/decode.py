"""Reading a pair-mode rollout (one task per chemical-gene pair) from a run file: its gold pair and its answer.

A task's data (v1 ``task.data``, legacy ``info``) names the pair (``pmid``, ``arg1``, ``arg2``) and its gold types
(``labels``). Its answer is the ``info["drugprot"]`` record the scorer wrote (``Score.as_info()``) when it is usable;
otherwise the reply is re-scored with ``drugprot.core.scoring.score_reply``, so a malformed record never loses the
rollout. A field of the wrong shape is a ``BadRecord`` naming it.
"""

from __future__ import annotations

from typing import Any

from drugprot.core.labels import LABEL_ORDER, NO_RELATION
from drugprot.core.scoring import INFO_KEY, SCORING_ERROR, score_reply
from drugprot.evaluation.records import ROLLOUT_ERROR, GoldPair, ScoredAnswer
from drugprot.evaluation.typed_json import BadRecord, describe, get_flag, identity, shorten

_KNOWN_LABELS = frozenset(LABEL_ORDER)


_IDENTITY = ("pmid", "arg1", "arg2")


def gold_pair(data: dict[str, Any], prefix: str) -> GoldPair:
    """The pair and gold types of a task record (v1 ``task.data``, legacy ``info``).

    Raises:
        UnidentifiedTask: pmid, arg1 or arg2 is missing or empty.
        BadRecord: not a DrugProt task, or a field of the wrong type.
    """
    if not any(key in data for key in (*_IDENTITY, "labels")):
        raise BadRecord(f"not a DrugProt rollout: {prefix} has none of pmid, arg1, arg2, labels")
    ids = tuple(identity(data, key, f"{prefix}.{key}") for key in _IDENTITY)
    with_nr = get_flag(data, "with_no_relation", f"{prefix}.with_no_relation")
    return GoldPair(ids[0], ids[1], ids[2], _labels(data, f"{prefix}.labels", with_nr), with_nr)


def _labels(data: dict[str, Any], path: str, with_no_relation: bool) -> tuple[str, ...]:
    """The pair's gold official names: DrugProt types without repeats, or NO-RELATION alone."""
    labels = data.get("labels")
    expected = "expected a non-empty list of DrugProt type names"
    if not isinstance(labels, list) or not labels:
        raise BadRecord(f"field {path} is {describe(labels)}, {expected}")
    for i, label in enumerate(labels):
        if not isinstance(label, str) or label not in _KNOWN_LABELS:
            raise BadRecord(f"field {path}[{i}] is {describe(label)}, not a DrugProt type name (or NO-RELATION)")
    if len(set(labels)) != len(labels):
        raise BadRecord(f"field {path} lists a type twice: {shorten(', '.join(labels))}")
    if NO_RELATION.name in labels and (len(labels) > 1 or not with_no_relation):
        raise BadRecord(f"field {path}: NO-RELATION must be the only label, of a task with with_no_relation true")
    return tuple(labels)


def record_of(info: dict[str, Any] | None) -> ScoredAnswer | None:
    """The answer of the usable prediction record in ``info``.

    None when there is none to trust (missing, of unexpected shape, or a scoring error): the reply is then
    re-scored, so a malformed record never loses the rollout.
    """
    record = info.get(INFO_KEY) if info is not None else None
    if not isinstance(record, dict) or "label" not in record:
        return None
    label, reason, fmt = record.get("label"), record.get("invalid_reason"), record.get("format_reason")
    if label is not None and not (isinstance(label, str) and label in _KNOWN_LABELS):
        return None
    if not all(x is None or isinstance(x, str) for x in (reason, fmt)):
        return None
    if label is None and (reason is None or reason.startswith(SCORING_ERROR)):
        return None
    return ScoredAnswer(label, None if reason is None else shorten(reason), None if fmt is None else shorten(fmt))


def answer_of(
    record: ScoredAnswer | None,
    reply: tuple[str | None, str | None] | None,
    pair: GoldPair,
    error: str | None,
) -> ScoredAnswer:
    """The record's answer, else the reply re-scored (none when the rollout failed before replying)."""
    if record is not None:
        return record
    if reply is None and error is not None:  # nothing to re-score: the rollout failed before replying
        reason = f"{ROLLOUT_ERROR}: {error}"
        return ScoredAnswer(None, reason, reason)
    content, reasoning = reply if reply is not None else (None, None)
    score = score_reply(content, reasoning, pair.labels, with_no_relation=pair.with_no_relation)
    return ScoredAnswer.of(score, rescored=True)
