"""``drugprot report RUN_DIR [RUN_DIR ...]``: the DrugProt numbers of ``vf-eval`` runs, not just mean reward.

Reads a run directory written by the verifiers v1 CLI (``traces.jsonl``: one episode per line, each with
``traces[]``; ``vf-eval`` on 0.4, ``eval`` on 0.3.1) or by the legacy 0.3.x ``vf-eval`` (``results.jsonl``
plus ``metadata.json``), and reports, per run:

- tasks (one per chemical-gene mention pair) and rollouts;
- accuracy: mean over rollouts, mean@k (per-task mean, then mean over tasks), pass@k (any rollout right)
  and majority-vote accuracy (one vote per valid answer; see ``majority_label`` for ties);
- the official DrugProt metric (``drugprot.metrics``): micro P/R/F1 over the 13 relation types, pairs
  multi-label, NO-RELATION never a scored class, macro-F1, per-class P/R/F1/support, once with every
  rollout as one prediction for its pair ("rollouts pooled") and once with the majority answer per task
  (what ``--export-tsv`` writes, so the official scorer can reproduce it);
- the confusion matrix (text; a PNG with ``--plot``), invalid-reply rate and reasons, format rate, tokens.

The gold set of the micro-F1 is the gold relations of the *evaluated* pairs. What that measures depends on
the setting, which the report states (``setting_note``): positive-only runs (``negatives=0``) are not
comparable with BioCreative VII; ``negatives=all`` on a whole split is. ``docs/evaluation.md`` explains
every number.

A prediction comes from the trace's ``info["drugprot"]`` record (written by the taskset's scorer). A trace
without one (an older run) or whose scoring failed is re-scored from its last assistant message with
``drugprot.scoring.score_reply``, and the report says how many. Lines that are not valid JSON (a crash
mid-write) or not DrugProt rollouts are counted and reported, never fatal.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.data import load_documents
from drugprot.errors import DrugprotError
from drugprot.labels import NO_RELATION, RELATION_NAMES, letter_of, options
from drugprot.metrics import (
    RelationRow,
    Scores,
    confusion_matrix,
    prf,
    score_relations,
    write_entities_tsv,
    write_predictions_tsv,
)
from drugprot.schema import Document
from drugprot.scoring import INFO_KEY, SCORING_ERROR, score_reply
from drugprot.tasks import parse_negatives

INVALID = "INVALID"
"""Confusion-matrix column of rollouts without a valid answer."""
ROLLOUT_ERROR = "rollout_error"
"""Invalid reason of a rollout that failed before any reply (provider error, timeout ...)."""
V1_FILE, LEGACY_FILE = "traces.jsonl", "results.jsonl"
_LABEL_ORDER = {name: i for i, name in enumerate((*RELATION_NAMES, NO_RELATION.name))}
_KNOWN_LABELS = frozenset(_LABEL_ORDER)
_MAX_EXAMPLES = 5


class ReportError(DrugprotError, ValueError):
    """A run cannot be reported (missing files, no DrugProt rollouts, conflicting options)."""


# ------------------------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class Rollout:
    """One scored reply to one task (a chemical-gene mention pair)."""

    pmid: str
    arg1: str
    """Chemical mention id (``T3``)."""
    arg2: str
    """Gene mention id."""
    labels: tuple[str, ...]
    """Gold official names of the pair (``("NO-RELATION",)`` for a negative)."""
    with_no_relation: bool
    label: str | None
    """Predicted official name (``NO-RELATION`` for N); None when the reply gave no valid answer."""
    invalid_reason: str | None = None
    format_reason: str | None = None
    reward: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    truncated: bool = False
    """The model stopped at its token limit (``finish_reason == "length"``)."""
    rescored: bool = False
    """The prediction was re-computed from the reply (no usable ``info["drugprot"]`` record)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.pmid, self.arg1, self.arg2)

    @property
    def correct(self) -> bool:
        return self.label is not None and self.label in self.labels


@dataclass(frozen=True, slots=True)
class RunConfig:
    """What the run's saved config says about the setting; None where unknown."""

    model: str | None = None
    split: str | None = None
    data_path: str | None = None
    negatives: str | None = None
    """``"0"``, ``"k"`` or ``"all"``."""
    limit: str | None = None
    """How the tasks were limited (``-n 3``, ``num_tasks=50`` ...); ``""`` when they were not, None if unknown."""


@dataclass
class Run:
    """The rollouts of one run plus what reading it skipped."""

    name: str
    path: str
    source: str
    rollouts: list[Rollout]
    config: RunConfig = field(default_factory=RunConfig)
    lines: int = 0
    corrupt: list[str] = field(default_factory=list)
    """``file:line: reason`` of every line (or trace) that could not be read as a DrugProt rollout."""
    documents: list[Document] | None = None
    """The evaluated abstracts, when known (baselines); ``--export-gold`` writes their entities."""


class _BadRecord(Exception):
    """A line or trace that is not a readable DrugProt rollout (counted, never fatal)."""


# ------------------------------------------------------------------------------------------------ reading


def find_run_file(path: str | os.PathLike[str]) -> Path:
    """The ``traces.jsonl`` or ``results.jsonl`` of a run dir (or the file itself).

    A directory holding neither is searched below; exactly one run must be found there.

    Raises:
        ReportError: the path does not exist, or holds no run or several runs (the message lists them).
    """
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise ReportError(f"{path}: no such run directory or file")
    for name in (V1_FILE, LEGACY_FILE):
        if (path / name).is_file():
            return path / name
    found = sorted(p for name in (V1_FILE, LEGACY_FILE) for p in path.rglob(name))
    if len(found) == 1:
        return found[0]
    if not found:
        raise ReportError(f"{path}: no {V1_FILE} (verifiers v1) or {LEGACY_FILE} (legacy vf-eval) in this directory")
    listing = "\n  ".join(str(p.parent) for p in found)
    raise ReportError(f"{path} holds {len(found)} runs; pass one (or several) of:\n  {listing}")


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read one run (a run dir, or its ``traces.jsonl``/``results.jsonl``).

    Raises:
        ReportError: no run file, or no DrugProt rollout in it (the message gives the first bad lines).
    """
    file = find_run_file(path)
    legacy = file.name == LEGACY_FILE or _looks_legacy(file)
    run = Run(
        name=file.parent.name,
        path=str(file.parent),
        source="legacy vf-eval results.jsonl" if legacy else "verifiers v1 traces.jsonl",
        rollouts=[],
        config=_legacy_config(file.parent) if legacy else _v1_config(file.parent),
    )
    for line_no, obj, error in _jsonl(file):
        run.lines += 1
        where = f"{file.name}:{line_no}"
        if error is not None:
            run.corrupt.append(f"{where}: {error}")
            continue
        records = [obj] if legacy else _traces(obj)
        if records is None:
            run.corrupt.append(f"{where}: not an episode (no traces list)")
            continue
        for index, record in enumerate(records):
            here = where if legacy or len(records) == 1 else f"{where} trace {index}"
            try:
                run.rollouts.append(_legacy_rollout(record) if legacy else _v1_rollout(record, obj))
            except _BadRecord as exc:
                run.corrupt.append(f"{here}: {exc}")
    if not run.rollouts:
        detail = "; ".join(run.corrupt[:3]) or "the file is empty"
        raise ReportError(f"{file}: no DrugProt rollouts ({run.lines} lines; {detail})")
    return run


def _jsonl(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """``(line number, object, None)`` per non-blank line, or ``(n, None, reason)`` for a corrupt one."""
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                yield line_no, json.loads(raw), None
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                yield line_no, None, f"invalid JSON ({type(exc).__name__}: {exc}); truncated write?"


def _looks_legacy(file: Path) -> bool:
    return (file.parent / "metadata.json").is_file() and file.name != V1_FILE


def _traces(obj: Any) -> list[Any] | None:
    """The traces of an episode line (a bare trace line counts as one), or None if it is neither."""
    if isinstance(obj, Mapping):
        if isinstance(obj.get("traces"), list):
            return obj["traces"]
        if "nodes" in obj:
            return [obj]
    return None


def _task_fields(data: Any, prefix: str) -> tuple[str, str, str, tuple[str, ...], bool]:
    """``pmid, arg1, arg2, labels, with_no_relation`` of a task record; ``_BadRecord`` names the field."""
    if not isinstance(data, Mapping):
        raise _BadRecord(f"no {prefix} object: not a DrugProt rollout")
    values = []
    for name in ("pmid", "arg1", "arg2"):
        value = data.get(name)
        if not isinstance(value, str | int) or isinstance(value, bool) or str(value) == "":
            raise _BadRecord(f"field {prefix}.{name} missing or not a string: not a DrugProt rollout")
        values.append(str(value))
    labels = data.get("labels")
    if not isinstance(labels, list | tuple) or not labels or not all(x in _KNOWN_LABELS for x in labels):
        raise _BadRecord(f"field {prefix}.labels must be a non-empty list of DrugProt type names, got {labels!r}")
    return values[0], values[1], values[2], tuple(labels), bool(data.get("with_no_relation", False))


def _record(info: Any) -> Mapping[str, Any] | None:
    """The usable prediction record in ``info``, or None (missing, malformed, or a scoring error)."""
    record = info.get(INFO_KEY) if isinstance(info, Mapping) else None
    if not isinstance(record, Mapping) or "label" not in record:
        return None
    label, reason = record.get("label"), record.get("invalid_reason")
    if label is not None and label not in _KNOWN_LABELS:
        return None
    if label is None and (not isinstance(reason, str) or reason.startswith(SCORING_ERROR)):
        return None
    return record


def _text(content: Any) -> str | None:
    """Message content as text (a list of parts: its text parts joined)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return str(content)


def _prediction(
    record: Mapping[str, Any] | None,
    reply: Mapping[str, Any] | None,
    labels: tuple[str, ...],
    with_no_relation: bool,
    error: str | None,
) -> tuple[str | None, str | None, str | None, bool]:
    """``(label, invalid_reason, format_reason, rescored)`` from the record, else by re-scoring the reply."""
    if record is not None:
        return record.get("label"), record.get("invalid_reason"), record.get("format_reason"), False
    if reply is None and error is not None:  # nothing to re-score: the rollout failed before replying
        reason = f"{ROLLOUT_ERROR}: {error}"
        return None, reason, reason, False
    content = _text(reply.get("content")) if reply else None
    reasoning = reply.get("reasoning_content") if reply else None
    score = score_reply(
        content, reasoning if isinstance(reasoning, str) else None, labels, with_no_relation=with_no_relation
    )
    return score.label, score.invalid_reason, score.format_reason, True


def _int(value: Any) -> int | None:
    """An integer count from a JSON value, or None (missing, bool, NaN)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return int(value) if number and math.isfinite(value) else None


def _v1_rollout(trace: Any, episode: Mapping[str, Any]) -> Rollout:
    if not isinstance(trace, Mapping):
        raise _BadRecord("trace is not an object")
    task = trace.get("task") if isinstance(trace.get("task"), Mapping) else episode.get("task")
    data = task.get("data") if isinstance(task, Mapping) else None
    pmid, arg1, arg2, labels, with_nr = _task_fields(data, "task.data")
    errors = [e for e in trace.get("errors") or [] if isinstance(e, Mapping)]
    scoring_failed = any(e.get("type") == "TaskError" for e in errors)
    record = None if scoring_failed else _record(trace.get("info"))
    replies = [
        n["message"]
        for n in trace.get("nodes") or []
        if isinstance(n, Mapping)
        and isinstance(n.get("message"), Mapping)
        and n["message"].get("role") == "assistant"
        and n.get("sampled", True)
    ]
    error = str(errors[-1].get("type", "error")) if errors else None
    label, reason, fmt, rescored = _prediction(record, replies[-1] if replies else None, labels, with_nr, error)
    calls = [c for c in trace.get("calls") or [] if isinstance(c, Mapping)]
    usages = [c.get("usage") for c in calls if isinstance(c.get("usage"), Mapping)]
    input_tokens, output_tokens = _int(trace.get("num_input_tokens")), _int(trace.get("num_output_tokens"))
    if input_tokens is None and usages:
        input_tokens = sum(_int(u.get("prompt_tokens")) or 0 for u in usages)
    if output_tokens is None and usages:
        output_tokens = sum(_int(u.get("completion_tokens")) or 0 for u in usages)
    return Rollout(
        pmid,
        arg1,
        arg2,
        labels,
        with_nr,
        label,
        reason,
        fmt,
        reward=_v1_reward(trace),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        truncated=bool(calls) and calls[-1].get("finish_reason") == "length",
        rescored=rescored,
    )


def _v1_reward(trace: Mapping[str, Any]) -> float | None:
    """The trace's reward: its ``reward`` if saved, else the weighted sum of its ``rewards``."""
    reward = trace.get("reward")
    if isinstance(reward, int | float) and not isinstance(reward, bool):
        return float(reward)
    rewards = trace.get("rewards")
    if not isinstance(rewards, Mapping) or not rewards:
        return None
    total = 0.0
    for value in rewards.values():
        if isinstance(value, Mapping) and isinstance(value.get("score"), int | float):
            total += float(value["score"]) * float(value.get("weight", 1.0) or 0.0)
    return total


def _legacy_rollout(row: Any) -> Rollout:
    if not isinstance(row, Mapping):
        raise _BadRecord("row is not an object")
    info = row.get("info")
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except json.JSONDecodeError as exc:
            raise _BadRecord(f"field info is not JSON ({exc})") from exc
    pmid, arg1, arg2, labels, with_nr = _task_fields(info, "info")
    replies = _legacy_replies(row.get("completion"))
    error = row.get("error")
    if isinstance(error, Mapping):
        error = error.get("type") or error.get("error") or "error"
    label, reason, fmt, rescored = _prediction(
        _record(info), replies[-1] if replies else None, labels, with_nr, str(error) if error else None
    )
    usage = row.get("token_usage") if isinstance(row.get("token_usage"), Mapping) else {}
    reward = row.get("reward")
    return Rollout(
        pmid,
        arg1,
        arg2,
        labels,
        with_nr,
        label,
        reason,
        fmt,
        reward=float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None,
        input_tokens=_int(usage.get("input_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        truncated=bool(row.get("is_truncated")),
        rescored=rescored,
    )


def _legacy_replies(completion: Any) -> list[Mapping[str, Any]]:
    """The assistant messages of a legacy ``completion`` (a message list, or a plain string)."""
    if isinstance(completion, str):
        return [{"content": completion}]
    if isinstance(completion, list):
        return [m for m in completion if isinstance(m, Mapping) and m.get("role") == "assistant"]
    return []


def _json_file(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, Mapping) else {}


def _negatives(value: Any) -> str | None:
    try:
        return None if value is None else str(parse_negatives(value))
    except ValueError:
        return str(value)


def _v1_config(run_dir: Path) -> RunConfig:
    """The setting from ``configs/resolved/eval.json`` (verifiers 0.4 and 0.3.1 layouts)."""
    config = _json_file(run_dir / "configs" / "resolved" / "eval.json")
    if not config:
        return RunConfig()
    env = config.get("env") if isinstance(config.get("env"), Mapping) else {}
    taskset = env.get("taskset") if isinstance(env.get("taskset"), Mapping) else {}
    select = config.get("select") if isinstance(config.get("select"), Mapping) else {}
    limits = []
    if isinstance(select.get("limit"), int):
        limits.append(f"-n {select['limit']}")
    if isinstance(config.get("num_tasks"), int) and config["num_tasks"] >= 0:  # 0.3.1's -n
        limits.append(f"-n {config['num_tasks']}")
    if isinstance(taskset.get("num_tasks"), int):
        limits.append(f"num_tasks={taskset['num_tasks']}")
    if select.get("skip"):
        limits.append(f"skip={select['skip']}")
    for kind in ("include", "exclude"):
        chosen = select.get(kind) if isinstance(select.get(kind), Mapping) else {}
        if any(chosen.values()):
            limits.append(f"select.{kind}")
    return RunConfig(
        model=str(config["model"]) if config.get("model") else None,
        split=taskset.get("split"),
        data_path=taskset.get("data_path"),
        negatives=_negatives(taskset.get("negatives", 0)),
        limit=", ".join(limits),
    )


def _legacy_config(run_dir: Path) -> RunConfig:
    """The setting from a legacy run's ``metadata.json`` (``env_args``, ``num_examples``)."""
    meta = _json_file(run_dir / "metadata.json")
    if not meta:
        return RunConfig()
    args = meta.get("env_args") if isinstance(meta.get("env_args"), Mapping) else {}
    return RunConfig(
        model=str(meta["model"]) if meta.get("model") else None,
        split=args.get("split", "validation"),
        data_path=args.get("data_path"),
        negatives=_negatives(args.get("negatives", 0)),
        # The legacy metadata records how many examples ran, not whether -n cut the split short.
        limit=f"num_tasks={args['num_tasks']}" if isinstance(args.get("num_tasks"), int) else None,
    )


# ------------------------------------------------------------------------------------------------ metrics


def group_by_task(rollouts: Iterable[Rollout]) -> dict[tuple[str, str, str], list[Rollout]]:
    """Rollouts per task key ``(pmid, arg1, arg2)``, tasks in first-seen order."""
    groups: dict[tuple[str, str, str], list[Rollout]] = {}
    for rollout in rollouts:
        groups.setdefault(rollout.key, []).append(rollout)
    return groups


def majority_label(rollouts: Sequence[Rollout]) -> str | None:
    """The task's majority answer: the valid label given most often (invalid replies do not vote).

    Ties go to the label that comes first in the official order (A-M, then N = NO-RELATION), so the
    choice never depends on the order rollouts finished in. None when no rollout gave a valid answer.
    """
    votes = Counter(r.label for r in rollouts if r.label is not None)
    if not votes:
        return None
    return min(votes, key=lambda label: (-votes[label], _LABEL_ORDER[label]))


def _rows(
    items: Iterable[tuple[str, tuple[str, str, str], tuple[str, ...], str | None]],
) -> tuple[list[RelationRow], list[RelationRow]]:
    """Gold and predicted official rows of ``(replica, key, gold labels, predicted label)`` items.

    ``replica`` keeps several predictions for one pair apart (one replica per rollout), so pooling k
    rollouts scores like k copies of the evaluated pairs.
    """
    gold: list[RelationRow] = []
    pred: list[RelationRow] = []
    for replica, (pmid, arg1, arg2), labels, label in items:
        doc = f"{pmid}#{replica}" if replica else pmid
        gold.extend((doc, arg1, arg2, g) for g in labels)
        if label is not None:
            pred.append((doc, arg1, arg2, label))
    return gold, pred


def pooled_scores(rollouts: Sequence[Rollout]) -> Scores:
    """The official metric with every rollout one prediction for its pair (k rollouts = k copies of the gold)."""
    items = []
    for group in group_by_task(rollouts).values():
        items += [(str(i), r.key, r.labels, r.label) for i, r in enumerate(group)]
    return score_relations(*_rows(items))


def majority_scores(rollouts: Sequence[Rollout]) -> Scores:
    """The official metric on one prediction per task, the majority answer (what ``--export-tsv`` writes)."""
    items = [("", key, group[0].labels, majority_label(group)) for key, group in group_by_task(rollouts).items()]
    return score_relations(*_rows(items))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _option_labels(rollouts: Sequence[Rollout]) -> list[str]:
    """Confusion-matrix labels: the options offered (A-M, plus N when any task offered or used it)."""
    with_nr = any(r.with_no_relation or NO_RELATION.name in (r.label, *r.labels) for r in rollouts)
    return [o.name for o in options(with_nr)]


def _no_relation_scores(rollouts: Sequence[Rollout]) -> dict[str, float | int] | None:
    """P/R/F1 of the N answer (not an official class), for runs with NO-RELATION tasks; else None."""
    if not any(r.with_no_relation for r in rollouts):
        return None
    gold = [NO_RELATION.name in r.labels for r in rollouts]
    pred = [r.label == NO_RELATION.name for r in rollouts]
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    p, r, f = prf(tp, sum(pred) - tp, sum(gold) - tp)
    return {
        "letter": NO_RELATION.letter,
        "precision": p,
        "recall": r,
        "f1": f,
        "support": sum(gold),
        "predicted": sum(pred),
    }


def setting_of(rollouts: Sequence[Rollout], config: RunConfig) -> dict[str, Any]:
    """What the micro-F1 means for this run: mode, negatives, and whether it is comparable with BioCreative VII.

    ``comparable_with_official`` is True only for ``negatives=all`` over a whole split (no task limit);
    None when the run's config was not found.
    """
    with_nr = any(r.with_no_relation for r in rollouts)
    if not with_nr:
        return {
            "mode": "positive-only",
            "negatives": config.negatives or "0",
            "comparable_with_official": False,
            "note": "positive-only: every evaluated pair is a gold pair, so precision and recall differ only "
            "through invalid answers (FN, no FP) and wrong types (FP and FN); on a multi-label pair "
            "one answer can find only one of its gold relations. NOT comparable with BioCreative VII.",
        }
    negatives = config.negatives
    if negatives is None or (negatives == "all" and config.limit is None):
        comparable = None
        verdict = (
            "comparability unknown (the saved config does not say whether the tasks were limited): it "
            "needs negatives=all on a whole split."
        )
    elif negatives == "all" and not config.limit:
        comparable = True
        data = (
            f"every task of {config.data_path} (a whole split only if that file is one)"
            if config.data_path
            else f"the whole {config.split or '?'} split"
        )
        verdict = (
            f"negatives=all over {data}: comparable with the official metric (the published anchors are on "
            "the hidden test set; the validation split is the official development set)."
        )
    else:
        comparable = False
        why = f"negatives={negatives}" if negatives != "all" else f"tasks limited ({config.limit})"
        verdict = f"{why}: NOT comparable with BioCreative VII; only negatives=all on a whole split is."
    return {
        "mode": "negatives",
        "negatives": negatives,
        "comparable_with_official": comparable,
        "note": "with NO-RELATION candidates: a type answered on a no-relation pair is a false positive; an N or "
        "invalid answer on a gold pair is a false negative; N itself is never scored. " + verdict,
    }


def _class_dict(scores: Scores) -> dict[str, dict[str, Any]]:
    return {
        c.label: {
            "letter": letter_of(c.label),
            "precision": c.precision,
            "recall": c.recall,
            "f1": c.f1,
            "support": c.support,
            "predicted": c.predicted,
            "tp": c.tp,
            "fp": c.fp,
            "fn": c.fn,
        }
        for c in scores.per_class
    }


def summarize(run: Run) -> dict[str, Any]:
    """Every number of the report for one run, as a JSON-ready dict (the ``--json`` output).

    Raises:
        ReportError: the run has no rollouts.
    """
    rollouts = run.rollouts
    if not rollouts:
        raise ReportError(f"{run.path}: no rollouts to report")
    groups = group_by_task(rollouts)
    per_task = [_mean([float(r.correct) for r in group]) for group in groups.values()]
    majority = {key: majority_label(group) for key, group in groups.items()}
    ks = [len(group) for group in groups.values()]
    pooled, voted = pooled_scores(rollouts), majority_scores(rollouts)
    labels = _option_labels(rollouts)
    matrix = confusion_matrix([r.labels for r in rollouts], [r.label or INVALID for r in rollouts], [*labels, INVALID])
    invalid = [r for r in rollouts if r.label is None]
    with_tokens = [r for r in rollouts if r.output_tokens is not None]
    rewards = [r.reward for r in rollouts if r.reward is not None]
    n = len(rollouts)
    return {
        "run": {
            "name": run.name,
            "path": run.path,
            "source": run.source,
            "model": run.config.model,
            "split": run.config.split,
            "data_path": run.config.data_path,
            "limit": run.config.limit,
        },
        "setting": setting_of(rollouts, run.config),
        "n_tasks": len(groups),
        "n_rollouts": n,
        "rollouts_per_task": {"min": min(ks), "max": max(ks)},
        "accuracy": _mean([float(r.correct) for r in rollouts]),
        "mean_at_k": _mean(per_task),
        "pass_at_k": _mean([float(score > 0) for score in per_task]),
        "majority_accuracy": _mean([float(majority[key] in group[0].labels) for key, group in groups.items()]),
        "mean_reward": _mean(rewards) if rewards else None,
        "micro_precision": pooled.precision,
        "micro_recall": pooled.recall,
        "micro_f1": pooled.f1,
        "micro_counts": {"tp": pooled.tp, "fp": pooled.fp, "fn": pooled.fn},
        "macro_precision": pooled.macro_precision,
        "macro_recall": pooled.macro_recall,
        "macro_f1": pooled.macro_f1,
        "macro_f1_supported": pooled.supported_macro_f1,
        "majority": {
            "micro_precision": voted.precision,
            "micro_recall": voted.recall,
            "micro_f1": voted.f1,
            "micro_counts": {"tp": voted.tp, "fp": voted.fp, "fn": voted.fn},
            "macro_f1": voted.macro_f1,
            "macro_f1_supported": voted.supported_macro_f1,
        },
        "per_class": _class_dict(pooled),
        "no_relation": _no_relation_scores(rollouts),
        "confusion": {"labels": labels, "columns": [*labels, INVALID], "matrix": matrix[: len(labels)]},
        "invalid_rate": len(invalid) / n,
        "invalid_reasons": dict(Counter(r.invalid_reason or "?" for r in invalid).most_common()),
        "format_rate": sum(r.format_reason is None for r in rollouts) / n,
        "format_reasons": dict(Counter(r.format_reason for r in rollouts if r.format_reason).most_common()),
        "tokens": {
            "rollouts_with_usage": len(with_tokens),
            "mean_input": _mean([float(r.input_tokens or 0) for r in with_tokens]) if with_tokens else None,
            "mean_output": _mean([float(r.output_tokens or 0) for r in with_tokens]) if with_tokens else None,
            "max_output": max((r.output_tokens or 0 for r in with_tokens), default=None),
            "total_input": sum(r.input_tokens or 0 for r in with_tokens),
            "total_output": sum(r.output_tokens or 0 for r in with_tokens),
            "truncated": sum(r.truncated for r in rollouts),
        },
        "lines": {"read": run.lines, "corrupt": len(run.corrupt), "corrupt_examples": run.corrupt[:_MAX_EXAMPLES]},
        "rescored": sum(r.rescored for r in rollouts),
    }


# ------------------------------------------------------------------------------------------------ export


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
    return sorted(rows, key=lambda row: (row[0], _id_key(row[1]), _id_key(row[2]), _LABEL_ORDER[row[3]]))


def export_tsv(run: Run, path: str | os.PathLike[str]) -> int:
    """Write the run's majority predictions in the official TSV format; returns the number of rows."""
    return write_predictions_tsv(path, prediction_rows(run.rollouts))


def export_gold(run: Run, directory: str | os.PathLike[str], documents: Sequence[Document] | None = None) -> list[Path]:
    """Write the official scorer's gold inputs for the evaluated pairs to ``directory``.

    ``gold_relations.tsv`` (the gold relations of the evaluated pairs: the report's gold set),
    ``pmids.txt`` and, when ``documents`` are given, ``entities.tsv`` (their mentions, genes typed ``GENE``
    as the scorer expects). Returns the paths written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_predictions_tsv(out / "gold_relations.tsv", gold_rows(run.rollouts))
    pmids = sorted({r.pmid for r in run.rollouts})
    (out / "pmids.txt").write_text("".join(f"{p}\n" for p in pmids), encoding="utf-8")
    written = [out / "gold_relations.tsv", out / "pmids.txt"]
    if documents is not None:
        wanted = set(pmids)
        write_entities_tsv(out / "entities.tsv", [doc for doc in documents if doc.pmid in wanted])
        written.append(out / "entities.tsv")
    return written


def run_documents(run: Run, data_path: str | None = None) -> list[Document] | None:
    """The run's abstracts: the run's own, else loaded from ``data_path`` or the run's saved local data path.

    None when neither names a local file (the hub is never contacted for this).
    """
    if run.documents is not None:
        return run.documents
    path = data_path or run.config.data_path
    return None if path is None else load_documents(run.config.split or "validation", path)


# ------------------------------------------------------------------------------------------------ text


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _counts(counter: Mapping[str, int]) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in counter.items()) or "none"


def _header(report: Mapping[str, Any]) -> list[str]:
    run, k = report["run"], report["rollouts_per_task"]
    per = str(k["min"]) if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    data = f"data {run['data_path']}" if run["data_path"] else f"split {run['split'] or '?'}"
    facts = [
        f"model {run['model'] or '?'}",
        data,
        f"negatives {report['setting']['negatives'] or '?'}",
        f"limit {run['limit'] or ('none' if run['limit'] == '' else '?')}",
    ]
    lines = [
        f"drugprot report: {run['name']} ({run['source']})",
        f"  {run['path']}",
        "  " + " | ".join(facts),
        f"  {report['n_tasks']} tasks, {report['n_rollouts']} rollouts ({per} per task)",
        f"  setting: {report['setting']['note']}",
    ]
    if report["lines"]["corrupt"]:
        lines.append(
            f"  skipped {report['lines']['corrupt']} of {report['lines']['read']} lines/traces "
            "(corrupt or not DrugProt):"
        )
        lines += [f"    {example}" for example in report["lines"]["corrupt_examples"]]
    if report["rescored"]:
        lines.append(
            f"  re-scored {report['rescored']} rollouts from their last assistant message "
            "(no usable info['drugprot'] record: older run or scoring error)"
        )
    return lines


def format_report(report: Mapping[str, Any]) -> str:
    """The human-readable report of one run."""
    k = report["rollouts_per_task"]["max"]
    maj = report["majority"]
    out = _header(report)
    out += [
        "",
        "Accuracy (a reply is right when it names one of the pair's gold types)",
        *(
            f"  {name:<27}{_pct(value)}"
            for name, value in (
                ("mean over rollouts", report["accuracy"]),
                (f"mean@{k} (per task)", report["mean_at_k"]),
                (f"pass@{k}", report["pass_at_k"]),
                ("majority vote (per task)", report["majority_accuracy"]),
                ("mean reward", report["mean_reward"]),
            )
        ),
        "",
        "Official DrugProt metric (13 types, multi-label pairs, NO-RELATION never scored)",
        "                              P      R      F1      TP     FP     FN",
    ]
    for name, scores in (("micro, rollouts pooled", report), ("micro, majority per task", maj)):
        c = scores["micro_counts"]
        out.append(
            f"  {name:<26}{_pct(scores['micro_precision']):>7}{_pct(scores['micro_recall']):>7}"
            f"{_pct(scores['micro_f1']):>7}{c['tp']:>7}{c['fp']:>7}{c['fn']:>7}"
        )
    supported = sum(1 for c in report["per_class"].values() if c["support"])
    out += [
        f"  macro-F1 over the 13 types {_pct(report['macro_f1'])}; over the {supported} types with gold support "
        f"{_pct(report['macro_f1_supported'])}",
        "",
        "Per class (rollouts pooled)",
        f"     {'type':<24}{'P':>7}{'R':>7}{'F1':>7}{'support':>9}{'predicted':>11}",
    ]
    rows = list(report["per_class"].items())
    if report["no_relation"] is not None:
        rows.append(("NO-RELATION (not scored)", report["no_relation"]))
    for name, c in rows:
        p = _pct(c["precision"]) if c["predicted"] else "-"
        r = _pct(c["recall"]) if c["support"] else "-"
        f = _pct(c["f1"]) if c["predicted"] or c["support"] else "-"
        out.append(f"  {c['letter']}  {name:<24}{p:>7}{r:>7}{f:>7}{c['support']:>9}{c['predicted']:>11}")
    out.append("  (- = undefined: no prediction or no gold of that type; macro-F1 counts it as 0)")
    out += ["", *format_confusion(report["confusion"]), ""]
    n = report["n_rollouts"]
    invalid = round(report["invalid_rate"] * n)
    reasons, fmt_reasons = _counts(report["invalid_reasons"]), _counts(report["format_reasons"])
    out.append(f"Invalid replies: {invalid} of {n} ({report['invalid_rate']:.1%}): {reasons}")
    fmt_ok = round(report["format_rate"] * n)
    out.append(f"Format ok: {fmt_ok} of {n} ({report['format_rate']:.1%}); not ok: {fmt_reasons}")
    out.append(format_tokens(report["tokens"]))
    return "\n".join(out)


def format_confusion(confusion: Mapping[str, Any]) -> list[str]:
    """The confusion matrix as text: rows gold (first gold type of a multi-label pair), columns predicted."""
    columns = [letter_of(name) if name != INVALID else "inv" for name in confusion["columns"]]
    lines = [
        "Confusion matrix (rows gold, columns predicted, inv = no valid answer; a right answer on a "
        "multi-label pair counts on its diagonal, a wrong one in the row of its first gold type)",
        "      " + "".join(f"{c:>4}" for c in columns),
    ]
    for name, row in zip(confusion["labels"], confusion["matrix"], strict=True):
        cells = "".join(f"{(str(v) if v else '.'):>4}" for v in row)
        lines.append(f"  {letter_of(name):<4}{cells}   {sum(row):>4}  {name}")
    return lines


def format_tokens(tokens: Mapping[str, Any]) -> str:
    if not tokens["rollouts_with_usage"]:
        return f"Tokens: no usage recorded; {tokens['truncated']} rollouts stopped at max_tokens"
    return (
        f"Tokens per rollout: input {tokens['mean_input']:.1f}, output {tokens['mean_output']:.1f} "
        f"(max {tokens['max_output']}); total {tokens['total_input']:,} in, {tokens['total_output']:,} out; "
        f"{tokens['truncated']} rollouts stopped at max_tokens (finish_reason=length)"
    )


def format_comparison(
    reports: Sequence[Mapping[str, Any]], task_keys: Sequence[set[tuple[str, str, str]]] | None = None
) -> str:
    """Several runs side by side: headline numbers and per-class F1, one column per run.

    ``task_keys`` (each run's task keys) adds a warning when the runs did not evaluate the same tasks.
    """
    cols = [f"[{i}]" for i in range(1, len(reports) + 1)]
    out = ["drugprot report: comparison"]
    for col, report in zip(cols, reports, strict=True):
        run = report["run"]
        out.append(
            f"  {col} {run['name']} ({run['model'] or '?'}, split {run['split'] or '?'}, negatives "
            f"{report['setting']['negatives'] or '?'}, limit {run['limit'] or 'none'}) {run['path']}"
        )
        if report["lines"]["corrupt"] or report["rescored"]:
            out.append(
                f"      skipped {report['lines']['corrupt']} corrupt lines/traces; "
                f"re-scored {report['rescored']} rollouts"
            )
    if task_keys and len({frozenset(keys) for keys in task_keys}) > 1:
        shared = set.intersection(*(set(keys) for keys in task_keys))
        out.append(
            f"  note: the runs cover different tasks ({', '.join(str(len(k)) for k in task_keys)}; "
            f"{len(shared)} shared): compare with care"
        )
    modes = {report["setting"]["mode"] for report in reports}
    if len(modes) > 1:
        out.append("  note: positive-only and negatives runs mixed: their micro-F1 measure different things")
    rows: list[tuple[str, list[str]]] = [
        ("tasks", [str(r["n_tasks"]) for r in reports]),
        ("rollouts", [str(r["n_rollouts"]) for r in reports]),
        ("accuracy", [_pct(r["accuracy"]) for r in reports]),
        ("pass@k", [_pct(r["pass_at_k"]) for r in reports]),
        ("majority accuracy", [_pct(r["majority_accuracy"]) for r in reports]),
        ("micro precision", [_pct(r["micro_precision"]) for r in reports]),
        ("micro recall", [_pct(r["micro_recall"]) for r in reports]),
        ("micro F1", [_pct(r["micro_f1"]) for r in reports]),
        ("micro F1 (majority)", [_pct(r["majority"]["micro_f1"]) for r in reports]),
        ("macro F1 (13 types)", [_pct(r["macro_f1"]) for r in reports]),
        ("invalid rate", [_pct(r["invalid_rate"]) for r in reports]),
        (
            "mean output tokens",
            [f"{r['tokens']['mean_output']:.1f}" if r["tokens"]["mean_output"] is not None else "-" for r in reports],
        ),
        ("comparable w/ official", [str(r["setting"]["comparable_with_official"]).lower() for r in reports]),
    ]
    for name in RELATION_NAMES:
        rows.append((f"F1 {letter_of(name)} {name}", [_pct(r["per_class"][name]["f1"]) for r in reports]))
    width = max(len(name) for name, _ in rows) + 2
    out += ["", " " * (width + 2) + "".join(f"{c:>9}" for c in cols)]
    out += [f"  {name:<{width}}" + "".join(f"{v:>9}" for v in values) for name, values in rows]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------ plot


def plot_confusion(reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write the confusion matrices (one panel per run) as a PNG.

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ReportError(
            "--plot needs matplotlib: pip install 'drugprot[report]' (or pip install matplotlib)"
        ) from exc
    fig, axes = plt.subplots(1, len(reports), figsize=(6.5 * len(reports), 6), squeeze=False)
    for ax, report in zip(axes[0], reports, strict=True):
        confusion = report["confusion"]
        matrix = confusion["matrix"]
        ax.imshow(matrix, cmap="Blues")
        columns = [letter_of(c) if c != INVALID else "inv" for c in confusion["columns"]]
        ax.set_xticks(range(len(columns)), columns)
        ax.set_yticks(range(len(confusion["labels"])), [letter_of(c) for c in confusion["labels"]])
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(
            f"{report['run']['name']}\nmicro-F1 {report['micro_f1']:.3f}, accuracy {report['accuracy']:.3f}", fontsize=9
        )
        peak = max((v for row in matrix for v in row), default=0)
        for i, row in enumerate(matrix):
            for j, value in enumerate(row):
                if value:
                    ax.text(
                        j,
                        i,
                        str(value),
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if value > peak / 2 else "black",
                    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------ CLI


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """The output options shared by ``drugprot report`` and ``drugprot baseline``."""
    parser.add_argument(
        "--json", action="store_true", help='print one JSON object (several runs: {"runs": [...]}) instead of text'
    )
    parser.add_argument("--plot", metavar="PATH", help="write the confusion matrix as a PNG (needs matplotlib)")
    parser.add_argument(
        "--export-tsv",
        metavar="PATH",
        help="write one prediction per task (majority over rollouts) in the official TSV format",
    )
    parser.add_argument(
        "--export-gold",
        metavar="DIR",
        help="write the official scorer's gold inputs to DIR: gold_relations.tsv (gold of the "
        "evaluated pairs), pmids.txt and, when the abstracts are known, entities.tsv",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_DIR",
        help="a vf-eval run directory (traces.jsonl, or legacy results.jsonl + metadata.json)",
    )
    add_output_arguments(parser)
    parser.add_argument(
        "--data-path",
        help="the run's data file or TSV directory, for --export-gold's entities.tsv "
        "(default: the data path saved in the run's config)",
    )


def emit(runs: Sequence[Run], args: argparse.Namespace) -> int:
    """Print the report(s) of ``runs`` and write the requested files; returns the exit code."""
    if (args.export_tsv or args.export_gold) and len(runs) != 1:
        raise ReportError("--export-tsv and --export-gold take exactly one run")
    reports = [summarize(run) for run in runs]
    if args.plot:
        plot_confusion(reports, args.plot)
    written = []
    if args.export_tsv:
        written.append(f"wrote {export_tsv(runs[0], args.export_tsv)} predictions to {args.export_tsv}")
    if args.export_gold:
        documents = run_documents(runs[0], getattr(args, "data_path", None))
        written.append("wrote " + ", ".join(str(p) for p in export_gold(runs[0], args.export_gold, documents)))
        if documents is None:
            written.append("entities.tsv not written: pass --data-path (the run's data file or TSV directory)")
    if args.json:
        payload: Any = reports[0] if len(reports) == 1 else {"runs": reports}
        print(json.dumps(payload, indent=2))
    elif len(reports) == 1:
        print(format_report(reports[0]))
    else:
        print(format_comparison(reports, [{r.key for r in run.rollouts} for run in runs]))
    if args.plot:
        written.append(f"wrote the confusion matrix to {args.plot}")
    for line in written:
        print(line, file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return emit([load_run(path) for path in args.runs], args)
    except (DrugprotError, OSError) as exc:
        print(f"drugprot report: error: {exc}", file=sys.stderr)
        return 2


__all__ = [
    "INVALID",
    "ReportError",
    "Rollout",
    "Run",
    "RunConfig",
    "export_gold",
    "export_tsv",
    "find_run_file",
    "format_comparison",
    "format_report",
    "gold_rows",
    "group_by_task",
    "load_run",
    "majority_label",
    "majority_scores",
    "plot_confusion",
    "pooled_scores",
    "prediction_rows",
    "run_documents",
    "setting_of",
    "summarize",
]
