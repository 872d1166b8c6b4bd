"""``drugprot report RUN_DIR [RUN_DIR ...]``: the DrugProt numbers of ``vf-eval`` runs, not just mean reward.

Reads a run directory written by the verifiers v1 CLI (``traces.jsonl``: one episode per line, each with
``traces[]``; ``vf-eval`` on 0.4, ``eval`` on 0.3.1) or by the legacy 0.3.x ``vf-eval`` (``results.jsonl``
plus ``metadata.json``), and reports, per run:

- tasks (one per chemical-gene mention pair) and rollouts;
- accuracy: mean over rollouts, mean@k (per-task mean, then mean over tasks), pass@k (any rollout right)
  and majority-vote accuracy (one vote per valid answer; see ``majority_label`` for ties);
- the official DrugProt metric (``drugprot.core.metrics``): micro P/R/F1 over the 13 relation types, pairs
  multi-label, NO-RELATION never a scored class, macro-F1, per-class P/R/F1/support, once with every
  rollout as one prediction for its pair ("rollouts pooled") and once with the majority answer per task
  (what ``--export-tsv`` writes, so the official scorer can reproduce it);
- the confusion matrix (text; a PNG with ``--plot``), invalid-reply rate and reasons, format rate, tokens;
- what made the run (``run_versions``: env, prompt and scorer versions and the data revision recorded in
  ``info["drugprot"]["versions"]``, ``unknown`` for older runs); a comparison warns when runs differ in them.

The gold set of the micro-F1 is the gold relations of the *evaluated* pairs. What that measures depends on
the setting, which the report states (``setting_note``): positive-only runs (``negatives=0``) are not
comparable with BioCreative VII; ``negatives=all`` on a whole split is. ``docs/evaluation.md`` explains
every number.

A prediction comes from the trace's ``info["drugprot"]`` record (written by the taskset's scorer). A trace
without one (an older run) or whose scoring failed is re-scored from its last assistant message with
``drugprot.core.scoring.score_reply``, and the report says how many.

One bad line never stops the report: ``validate_record`` turns each raw JSON record into a typed ``Rollout``
or a ``Skip`` (line, reason naming the field), so bad JSON, wrong types, non-finite numbers and deep nesting
are counted and listed, never a traceback. Rollouts whose task cannot be identified are counted apart. A run
in which most rollouts errored without an answer (``errored_summary``; no API key, no route ...) is flagged
before any metric and makes the command exit ``EXIT_FAILED_RUN`` unless ``--allow-errors``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.core.errors import DrugprotError
from drugprot.core.labels import LABEL_ORDER, NO_RELATION, RELATION_NAMES, letter_of, options
from drugprot.core.metrics import RelationRow, Scores, confusion_matrix, prf, score_relations
from drugprot.core.official_tsv import write_entities_tsv, write_predictions_tsv
from drugprot.core.options import parse_negatives
from drugprot.core.schema import Document
from drugprot.core.scoring import INFO_KEY, SCORING_ERROR, score_reply
from drugprot.core.sources import load_documents
from drugprot.core.versions import from_info as versions_from_info
from drugprot.evaluation.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    LEVEL,
    METRICS,
    Bootstrap,
    bootstrap_metrics,
    count_row,
    flips,
    paired_bootstrap,
)

INVALID = "INVALID"
"""Confusion-matrix column of rollouts without a valid answer."""
ROLLOUT_ERROR = "rollout_error"
"""Invalid reason of a rollout that failed before any reply (provider error, timeout ...)."""
V1_FILE, LEGACY_FILE = "traces.jsonl", "results.jsonl"
_KNOWN_LABELS = frozenset(LABEL_ORDER)
_MAX_EXAMPLES = 10
"""Skipped records listed in the text report (``--json`` lists every one)."""
MOSTLY_ERRORED = 0.5
"""A run is flagged as failed when more than this fraction of its rollouts errored without an answer."""
EXIT_FAILED_RUN = 3
"""Exit code of ``drugprot report`` for a flagged run (2: the runs cannot be read; 0: reported)."""


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
    error: str | None = None
    """Type of the rollout's last recorded error (``ProviderError``, ``TaskError`` ...), or None."""
    error_message: str | None = None
    """Its message, shortened."""
    versions: tuple[str, str, str, str] | None = None
    """What made the rollout, as ``run_versions`` shows it: env, prompt and scorer versions and the data
    (``drugprot.core.versions``); None for a rollout recorded without them (an older run)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.pmid, self.arg1, self.arg2)

    @property
    def correct(self) -> bool:
        return self.label is not None and self.label in self.labels

    @property
    def errored(self) -> bool:
        """The rollout recorded an error and gave no valid answer: a failure of the run, not of the model."""
        return self.error is not None and self.label is None


@dataclass(frozen=True, slots=True)
class Skip:
    """A record (a line, or one trace of an episode line) that gave no rollout, and why."""

    file: str
    line: int
    trace: int | None
    """Index of the trace in an episode line of several traces; None for a whole line."""
    reason: str
    unidentified: bool = False
    """A rollout whose task cannot be identified (no pmid, arg1 or arg2), not a malformed line."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" + ("" if self.trace is None else f" trace {self.trace}")
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class RunConfig:
    """What the run's saved config says about the setting; None where unknown."""

    model: str | None = None
    split: str | None = None
    data_path: str | None = None
    data_label: str | None = None
    """How the run names its data (the ``data_label`` knob, e.g. the demo's bundled synthetic sample)."""
    negatives: str | None = None
    """``"0"``, ``"k"`` or ``"all"``."""
    limit: str | None = None
    """How the tasks were limited (``-n 3``, ``num_tasks=50`` ...); ``""`` when they were not, None if unknown."""


@dataclass
class Run:
    """The rollouts of one run plus what reading it skipped.

    Every record read is exactly one of: a rollout, a ``corrupt`` skip, an ``unidentified`` skip. A line is
    one record, except an episode line of several traces, which is one record per trace.
    """

    name: str
    path: str
    source: str
    rollouts: list[Rollout]
    config: RunConfig = field(default_factory=RunConfig)
    lines: int = 0
    """Non-blank lines read."""
    corrupt: list[Skip] = field(default_factory=list)
    """Records that could not be read as a DrugProt rollout (bad JSON, a field of the wrong type ...)."""
    unidentified: list[Skip] = field(default_factory=list)
    """Rollouts whose task cannot be identified (empty or missing pmid, arg1 or arg2): counted, not scored."""
    blank: int = 0
    """Blank lines (ignored)."""
    documents: list[Document] | None = None
    """The evaluated abstracts, when known (baselines); ``--export-gold`` writes their entities."""


class _BadRecord(Exception):
    """A record that is not a readable DrugProt rollout; the message names the field and what is wrong."""

    unidentified = False


class _Unidentified(_BadRecord):
    """A DrugProt rollout whose task cannot be identified."""

    unidentified = True


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

    A bad line never stops the reading: it becomes a ``Skip`` with its line number and reason.

    Raises:
        ReportError: no run file, or no DrugProt rollout in it (the message gives the first skipped records).
        OSError: the file cannot be read.
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
    with file.open("rb") as fh:
        for line_no, raw in enumerate(fh, 1):
            if not raw.strip():
                run.blank += 1
                continue
            run.lines += 1
            for item in read_line(raw, file=file.name, line=line_no, legacy=legacy):
                if isinstance(item, Rollout):
                    run.rollouts.append(item)
                else:
                    (run.unidentified if item.unidentified else run.corrupt).append(item)
    if not run.rollouts:
        skipped = [*run.corrupt, *run.unidentified]
        detail = "; ".join(str(s) for s in skipped[:3]) or "the file is empty"
        raise ReportError(f"{file}: no DrugProt rollouts ({run.lines} lines; {detail})")
    return run


def read_line(raw: bytes, *, file: str, line: int, legacy: bool) -> list[Rollout | Skip]:
    """The records of one line of a run file: a ``Rollout`` per readable trace, a ``Skip`` per other record.

    Never raises: bad bytes, bad JSON or a field of the wrong type anywhere the report reads is a ``Skip``
    naming the field. A legacy line is one record; a v1 episode line one record per trace (an episode
    without traces: one errored rollout when it recorded an error, else one skip).
    """
    try:
        value = decode_json(raw)
    except _BadRecord as exc:
        return [Skip(file, line, None, str(exc))]
    if legacy:
        return [validate_record(value, None, file=file, line=line, trace=None)]
    if not isinstance(value, dict):
        return [Skip(file, line, None, f"not an episode: the line is {_kind(value)}, expected an object")]
    traces = value.get("traces")
    if traces is None and "nodes" in value:  # a bare trace line
        return [validate_record(value, {}, file=file, line=line, trace=None)]
    if not isinstance(traces, list):
        return [Skip(file, line, None, "not an episode (no traces list)")]
    if not traces:
        if not value.get("errors"):
            return [Skip(file, line, None, "episode without traces and without an error")]
        return [validate_record({"errors": value["errors"]}, value, file=file, line=line, trace=None)]
    several = len(traces) > 1
    return [validate_record(t, value, file=file, line=line, trace=i if several else None) for i, t in enumerate(traces)]


def validate_record(
    value: Any, episode: dict[str, Any] | None, *, file: str, line: int, trace: int | None
) -> Rollout | Skip:
    """One raw JSON record as a typed ``Rollout``, or a ``Skip`` saying which field is wrong and how.

    ``episode`` is the v1 episode the trace came from (its ``task`` is the fallback of the trace's), or
    None for a legacy ``results.jsonl`` row. Never raises.
    """
    try:
        return _legacy_rollout(value) if episode is None else _v1_rollout(value, episode)
    except _BadRecord as exc:
        return Skip(file, line, trace, str(exc), unidentified=exc.unidentified)


def decode_json(raw: bytes | str) -> Any:
    """The JSON value of one line; ``_BadRecord`` says why it has none (never another exception)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _BadRecord(f"not UTF-8 text (byte {exc.start}: {exc.reason}); a corrupted file?") from None
    try:
        return json.loads(raw)
    except RecursionError:
        raise _BadRecord("JSON nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, or an integer literal too long to convert
        raise _BadRecord(f"invalid JSON ({type(exc).__name__}: {_short(str(exc))}); truncated write?") from None


def _looks_legacy(file: Path) -> bool:
    return (file.parent / "metadata.json").is_file() and file.name != V1_FILE


# --- typed access to JSON values: each returns the value or raises _BadRecord naming the field


_MAX_COUNT = 2**53
"""Largest token count accepted (the largest integer a JSON double holds exactly)."""
_SHORT = 80


def _short(text: str, limit: int = _SHORT) -> str:
    """``text`` cut to ``limit`` characters, with lone surrogates escaped so it can always be printed."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _kind(value: Any) -> str:
    """A short description of a JSON value for a message (never recursive: values may be deeply nested)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"the number {_short(repr(value), 24)}"
    if isinstance(value, str):
        return f"the string {_short(repr(value), 40)}"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _get(obj: dict[str, Any], key: str, path: str, kind: type | tuple[type, ...], expected: str) -> Any:
    """``obj[key]`` when it is a ``kind`` (bools never count as numbers); None when missing or null."""
    value = obj.get(key)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if value is None or (isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))):
        return value
    raise _BadRecord(f"field {path} is {_kind(value)}, expected {expected}")


def _object(obj: dict[str, Any], key: str, path: str) -> dict[str, Any] | None:
    return _get(obj, key, path, dict, "an object")


def _list(obj: dict[str, Any], key: str, path: str) -> list[Any]:
    return _get(obj, key, path, list, "a list") or []


def _objects(obj: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    """A list of objects (``errors``, ``calls``, ``nodes``, ``completion`` ...); empty when missing."""
    items = _list(obj, key, path)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _BadRecord(f"field {path}[{i}] is {_kind(item)}, expected an object")
    return items


def _string(obj: dict[str, Any], key: str, path: str) -> str | None:
    return _get(obj, key, path, str, "a string")


def _number(obj: dict[str, Any], key: str, path: str) -> float | None:
    """A finite number (an int or float, not a bool, NaN or infinity), or None when missing."""
    value = _get(obj, key, path, (int, float), "a number")
    if value is None:
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer literal beyond the float range
        number = math.inf
    if not math.isfinite(number):
        raise _BadRecord(f"field {path} is {_kind(value)}, expected a finite number")
    return number


def _count(obj: dict[str, Any], key: str, path: str) -> int | None:
    """A token count: a whole number from 0 to 2**53, or None when missing."""
    number = _number(obj, key, path)
    if number is None:
        return None
    if number < 0 or number > _MAX_COUNT or not number.is_integer():
        raise _BadRecord(f"field {path} is {_kind(obj[key])}, expected a token count (a whole number >= 0)")
    return int(number)


def _flag(obj: dict[str, Any], key: str, path: str) -> bool:
    return bool(_get(obj, key, path, bool, "true or false"))


# --- the task and the prediction


_IDENTITY = ("pmid", "arg1", "arg2")


def _task_fields(data: dict[str, Any], prefix: str) -> tuple[str, str, str, tuple[str, ...], bool]:
    """``pmid, arg1, arg2, labels, with_no_relation`` of a task record (v1 ``task.data``, legacy ``info``).

    Raises:
        _Unidentified: pmid, arg1 or arg2 is missing or empty.
        _BadRecord: not a DrugProt task, or a field of the wrong type.
    """
    if not any(key in data for key in (*_IDENTITY, "labels")):
        raise _BadRecord(f"not a DrugProt rollout: {prefix} has none of pmid, arg1, arg2, labels")
    ids = tuple(_identity(data, key, f"{prefix}.{key}") for key in _IDENTITY)
    with_nr = _flag(data, "with_no_relation", f"{prefix}.with_no_relation")
    return ids[0], ids[1], ids[2], _labels(data, f"{prefix}.labels", with_nr), with_nr


def _identity(data: dict[str, Any], key: str, path: str) -> str:
    """A pmid or mention id: a non-empty string or integer without whitespace or control characters."""
    value = data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise _Unidentified(f"task cannot be identified: field {path} is {'missing' if value is None else 'empty'}")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _BadRecord(f"field {path} is {_kind(value)}, expected a string or an integer id")
    text = str(value)
    if not all(c.isprintable() and not c.isspace() for c in text):
        raise _BadRecord(f"field {path} is {_kind(value)}: an id cannot hold whitespace or control characters")
    return text


def _labels(data: dict[str, Any], path: str, with_no_relation: bool) -> tuple[str, ...]:
    """The pair's gold official names: DrugProt types without repeats, or NO-RELATION alone."""
    labels = data.get("labels")
    expected = "expected a non-empty list of DrugProt type names"
    if not isinstance(labels, list) or not labels:
        raise _BadRecord(f"field {path} is {_kind(labels)}, {expected}")
    for i, label in enumerate(labels):
        if not isinstance(label, str) or label not in _KNOWN_LABELS:
            raise _BadRecord(f"field {path}[{i}] is {_kind(label)}, not a DrugProt type name (or NO-RELATION)")
    if len(set(labels)) != len(labels):
        raise _BadRecord(f"field {path} lists a type twice: {_short(', '.join(labels))}")
    if NO_RELATION.name in labels and (len(labels) > 1 or not with_no_relation):
        raise _BadRecord(f"field {path}: NO-RELATION must be the only label, of a task with with_no_relation true")
    return tuple(labels)


def _record(info: dict[str, Any] | None) -> tuple[str | None, str | None, str | None] | None:
    """``(label, invalid_reason, format_reason)`` of the usable prediction record in ``info``.

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
    return label, None if reason is None else _short(reason), None if fmt is None else _short(fmt)


UNKNOWN = "unknown"
"""How the report shows a version a run did not record (runs made before ``drugprot.core.versions``)."""
VERSION_NAMES = ("env", "prompt", "scorer", "data")
"""The entries of ``run_versions``, as the report names them."""


def rollout_versions(info: dict[str, Any] | None) -> tuple[str, str, str, str] | None:
    """The rollout's ``info["drugprot"]["versions"]`` for display (``VERSION_NAMES``), or None without one."""
    record = versions_from_info(info.get(INFO_KEY) if info is not None else None)
    if record is None:
        return None
    source, revision = record["data_source"], record["data_revision"]
    if source == "hub":
        data = f"hub@{_short(revision, 60)}" if revision else "hub, default branch (unpinned)"
    else:
        data = source or UNKNOWN
    env, prompt, scorer = (_short(record[k], 40) if record[k] else UNKNOWN for k in ("env", "prompt", "scorer"))
    return env, prompt, scorer, data


def run_versions(rollouts: Sequence[Rollout]) -> dict[str, str]:
    """What made a run's rollouts (``VERSION_NAMES``): each value as recorded, ``unknown`` when no rollout
    recorded it, or the distinct values joined by `` + `` when its rollouts differ (``unknown`` among them
    for rollouts without a record)."""
    seen: list[dict[str, None]] = [{} for _ in VERSION_NAMES]
    for rollout in rollouts:
        for values, value in zip(seen, rollout.versions or (UNKNOWN,) * len(VERSION_NAMES), strict=True):
            values[value] = None
    return {name: " + ".join(values) or UNKNOWN for name, values in zip(VERSION_NAMES, seen, strict=True)}


def _content(message: dict[str, Any], path: str) -> str | None:
    """Message content as text: a string, or the text parts of a list of parts joined."""
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _BadRecord(f"field {path}.content is {_kind(content)}, expected a string or a list of parts")
    parts = _objects(message, "content", f"{path}.content")
    texts = [_string(p, "text", f"{path}.content[{i}].text") for i, p in enumerate(parts) if p.get("type") == "text"]
    return "".join(t for t in texts if t is not None)


def _reply(message: dict[str, Any] | None, path: str) -> tuple[str | None, str | None] | None:
    """``(content, reasoning_content)`` of an assistant message, or None when there is none."""
    if message is None:
        return None
    return _content(message, path), _string(message, "reasoning_content", f"{path}.reasoning_content")


def _prediction(
    record: tuple[str | None, str | None, str | None] | None,
    reply: tuple[str | None, str | None] | None,
    labels: tuple[str, ...],
    with_no_relation: bool,
    error: str | None,
) -> tuple[str | None, str | None, str | None, bool]:
    """``(label, invalid_reason, format_reason, rescored)`` from the record, else by re-scoring the reply."""
    if record is not None:
        return (*record, False)
    if reply is None and error is not None:  # nothing to re-score: the rollout failed before replying
        reason = f"{ROLLOUT_ERROR}: {error}"
        return None, reason, reason, False
    content, reasoning = reply if reply is not None else (None, None)
    score = score_reply(content, reasoning, labels, with_no_relation=with_no_relation)
    return score.label, score.invalid_reason, score.format_reason, True


# --- the two formats


def _v1_rollout(trace: Any, episode: dict[str, Any]) -> Rollout:
    if not isinstance(trace, dict):
        raise _BadRecord(f"trace is {_kind(trace)}, expected an object")
    task = _object(trace, "task", "task") or _object(episode, "task", "episode task")
    data = _object(task, "data", "task.data") if task is not None else None
    if data is None:
        raise _BadRecord("no task.data object: not a DrugProt rollout")
    pmid, arg1, arg2, labels, with_nr = _task_fields(data, "task.data")
    errors = _objects(trace, "errors", "errors")
    types = [_string(e, "type", f"errors[{i}].type") or "error" for i, e in enumerate(errors)]
    messages = [_string(e, "message", f"errors[{i}].message") for i, e in enumerate(errors)]
    error, message = (_short(types[-1]), messages[-1]) if errors else (None, None)
    timed_out = _flag(trace, "is_timeout", "is_timeout")
    stop = _string(trace, "stop_condition", "stop_condition")
    if error is None and timed_out:  # a stage deadline expired: recorded as a stop, not as an error
        error = _short(stop or "timeout")
    info = _object(trace, "info", "info")
    record = None if "TaskError" in types else _record(info)  # a failed scorer's record is not trusted
    reply = None
    for i, node in enumerate(_objects(trace, "nodes", "nodes")):
        message_obj = _object(node, "message", f"nodes[{i}].message")
        sampled = _get(node, "sampled", f"nodes[{i}].sampled", bool, "true or false")
        if message_obj is not None and message_obj.get("role") == "assistant" and sampled is not False:
            reply = _reply(message_obj, f"nodes[{i}].message")
    label, reason, fmt, rescored = _prediction(record, reply, labels, with_nr, error)
    calls = _objects(trace, "calls", "calls")
    input_tokens, output_tokens = (
        _count(trace, "num_input_tokens", "num_input_tokens"),
        _count(trace, "num_output_tokens", "num_output_tokens"),
    )
    usages = [(i, u) for i, c in enumerate(calls) if (u := _object(c, "usage", f"calls[{i}].usage")) is not None]
    if input_tokens is None and usages:
        input_tokens = sum(_count(u, "prompt_tokens", f"calls[{i}].usage.prompt_tokens") or 0 for i, u in usages)
    if output_tokens is None and usages:
        output_tokens = sum(
            _count(u, "completion_tokens", f"calls[{i}].usage.completion_tokens") or 0 for i, u in usages
        )
    finish = _string(calls[-1], "finish_reason", f"calls[{len(calls) - 1}].finish_reason") if calls else None
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
        truncated=finish == "length",
        rescored=rescored,
        error=error,
        error_message=None if message is None else _short(message, 300),
        versions=rollout_versions(info),
    )


def _v1_reward(trace: dict[str, Any]) -> float | None:
    """The trace's reward: its ``reward`` if saved, else the weighted sum of its ``rewards``."""
    reward = _number(trace, "reward", "reward")
    if reward is not None:
        return reward
    rewards = _object(trace, "rewards", "rewards")
    if not rewards:
        return None
    total = 0.0
    for name, value in rewards.items():
        path = f"rewards[{_short(repr(name), 40)}]"
        if value is None:  # the scorer did not run
            continue
        if not isinstance(value, dict):
            raise _BadRecord(f"field {path} is {_kind(value)}, expected an object with score and weight")
        score, weight = _number(value, "score", f"{path}.score"), _number(value, "weight", f"{path}.weight")
        if score is not None:
            total += score * (1.0 if weight is None else weight)
    if not math.isfinite(total):
        raise _BadRecord("field rewards: the weighted sum of the rewards is not a finite number")
    return total


def _legacy_rollout(row: Any) -> Rollout:
    if not isinstance(row, dict):
        raise _BadRecord(f"row is {_kind(row)}, expected an object")
    info = row.get("info")
    if isinstance(info, str):  # datasets-saved rows carry info as a JSON string
        try:
            info = decode_json(info)
        except _BadRecord as exc:
            raise _BadRecord(f"field info is a string that is not JSON: {exc}") from None
    if not isinstance(info, dict):
        raise _BadRecord(f"field info is {_kind(info)}, expected an object: not a DrugProt rollout")
    pmid, arg1, arg2, labels, with_nr = _task_fields(info, "info")
    completion = row.get("completion")
    if isinstance(completion, str):
        reply: tuple[str | None, str | None] | None = (completion, None)
    else:
        messages = _objects(row, "completion", "completion")
        assistant = [(i, m) for i, m in enumerate(messages) if m.get("role") == "assistant"]
        reply = _reply(assistant[-1][1], f"completion[{assistant[-1][0]}]") if assistant else None
    error, message = _legacy_error(row.get("error"))
    label, reason, fmt, rescored = _prediction(_record(info), reply, labels, with_nr, error)
    usage = _object(row, "token_usage", "token_usage") or {}
    return Rollout(
        pmid,
        arg1,
        arg2,
        labels,
        with_nr,
        label,
        reason,
        fmt,
        reward=_number(row, "reward", "reward"),
        input_tokens=_count(usage, "input_tokens", "token_usage.input_tokens"),
        output_tokens=_count(usage, "output_tokens", "token_usage.output_tokens"),
        truncated=_flag(row, "is_truncated", "is_truncated"),
        rescored=rescored,
        error=error,
        error_message=message,
        versions=rollout_versions(info),
    )


def _legacy_error(value: Any) -> tuple[str | None, str | None]:
    """``(type, message)`` of a legacy row's ``error``: null, a string, or ``{"error": type, "message"}``."""
    if value is None:
        return None, None
    if isinstance(value, str):
        return (_short(value), None) if value else (None, None)
    if not isinstance(value, dict):
        raise _BadRecord(f"field error is {_kind(value)}, expected null, a string or an object")
    kind = _string(value, "error", "error.error") or _string(value, "type", "error.type") or "error"
    message = _string(value, "message", "error.message")
    return _short(kind), None if message is None else _short(message, 300)


# --- the run's saved setting (best effort: a field of an unexpected type is unknown, never an error)


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = decode_json(path.read_bytes())
    except (OSError, _BadRecord):
        return {}
    return data if isinstance(data, dict) else {}


def _config_text(value: Any) -> str | None:
    """A config string (model, split, data path), or None when missing or not a string."""
    return _short(value, 400) if isinstance(value, str) and value else None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _negatives(value: Any) -> str | None:
    try:
        return None if value is None else str(parse_negatives(value))
    except ValueError:
        return _short(str(value)) if isinstance(value, str | int | float) else None


def _v1_config(run_dir: Path) -> RunConfig:
    """The setting from ``configs/resolved/eval.json`` (verifiers 0.4 and 0.3.1 layouts)."""
    config = _json_file(run_dir / "configs" / "resolved" / "eval.json")
    if not config:
        return RunConfig()
    taskset = _mapping(_mapping(config.get("env")).get("taskset"))
    select = _mapping(config.get("select"))

    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    limits = []
    if whole(select.get("limit")):
        limits.append(f"-n {select['limit']}")
    if whole(config.get("num_tasks")) and config["num_tasks"] >= 0:  # 0.3.1's -n
        limits.append(f"-n {config['num_tasks']}")
    if whole(taskset.get("num_tasks")):
        limits.append(f"num_tasks={taskset['num_tasks']}")
    if select.get("skip"):
        limits.append(f"skip={_short(str(select['skip']), 20)}")
    for kind in ("include", "exclude"):
        if any(_mapping(select.get(kind)).values()):
            limits.append(f"select.{kind}")
    return RunConfig(
        model=_config_text(config.get("model")),
        split=_config_text(taskset.get("split")),
        data_path=_config_text(taskset.get("data_path")),
        data_label=_config_text(taskset.get("data_label")),
        negatives=_negatives(taskset.get("negatives", 0)),
        limit=", ".join(limits),
    )


def _legacy_config(run_dir: Path) -> RunConfig:
    """The setting from a legacy run's ``metadata.json`` (``env_args``, ``num_examples``)."""
    meta = _json_file(run_dir / "metadata.json")
    if not meta:
        return RunConfig()
    args = _mapping(meta.get("env_args"))
    num_tasks = args.get("num_tasks")
    return RunConfig(
        model=_config_text(meta.get("model")),
        split=_config_text(args.get("split", "validation")),
        data_path=_config_text(args.get("data_path")),
        data_label=_config_text(args.get("data_label")),
        negatives=_negatives(args.get("negatives", 0)),
        # The legacy metadata records how many examples ran, not whether -n cut the split short.
        limit=f"num_tasks={num_tasks}" if isinstance(num_tasks, int) and not isinstance(num_tasks, bool) else None,
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
    return min(votes, key=lambda label: (-votes[label], LABEL_ORDER[label]))


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


def task_counts(rollouts: Sequence[Rollout]) -> tuple[list[tuple[str, str, str]], Any]:
    """Each task's key and its ``stats.count_row`` (rollouts, right ones, official TP/FP/FN per type).

    The rows sum to the run's pooled counts: each row is ``pooled_scores`` of the task's rollouts alone.
    Returns ``(keys, array of shape (tasks, stats.WIDTH))``, tasks in first-seen order.
    """
    import numpy as np

    groups = group_by_task(rollouts)
    rows = [count_row(len(group), sum(r.correct for r in group), pooled_scores(group)) for group in groups.values()]
    return list(groups), np.array(rows)


def _intervals(rollouts: Sequence[Rollout], resamples: int, seed: int) -> dict[str, Any] | None:
    """The ``intervals`` of ``summarize``: None when disabled; a reason instead of figures when impossible."""
    if resamples <= 0:
        return None
    tasks = len(group_by_task(rollouts))
    if tasks < 2:
        return {"unavailable": f"a bootstrap over tasks needs at least 2 tasks; this run has {tasks}"}
    return _bootstrap_dict(bootstrap_metrics(task_counts(rollouts)[1], resamples=resamples, seed=seed))


def _bootstrap_dict(result: Bootstrap) -> dict[str, Any]:
    return {
        "level": result.level,
        "method": f"{result.method} bootstrap over tasks",
        "unit": "task: all rollouts of a task are resampled together",
        "tasks": result.tasks,
        "resamples": result.resamples,
        "seed": result.seed,
        **{name: {"estimate": i.estimate, "low": i.low, "high": i.high} for name, i in result.intervals.items()},
    }


def same_tasks(first: Run, second: Run) -> str | None:
    """None when two runs evaluated the same tasks in the same setting; else why they cannot be paired."""

    def tasks(run: Run) -> dict[tuple[str, str, str], tuple[tuple[str, ...], bool]]:
        return {r.key: (r.labels, r.with_no_relation) for r in run.rollouts}

    a, b = tasks(first), tasks(second)
    if a.keys() != b.keys():
        return f"the runs cover different tasks ({len(a)} and {len(b)}; {len(a.keys() & b.keys())} shared)"
    if a != b:
        changed = sum(a[key] != b[key] for key in a)
        return f"{changed} shared tasks differ in gold labels or in offering NO-RELATION (different settings)"
    settings = (first.config.negatives, second.config.negatives)
    if None not in settings and settings[0] != settings[1]:
        return f"different settings (negatives {settings[0]} and {settings[1]})"
    return None


def compare_runs(first: Run, second: Run, *, resamples: int, seed: int) -> dict[str, Any]:
    """The paired comparison of ``second`` against ``first`` (the ``comparisons`` items of ``--json``).

    Only for runs over the same tasks in the same setting (``same_tasks``); otherwise ``paired`` is False and
    ``reason`` says why. Differences are ``second - first``: the point difference of accuracy, micro-F1 and
    macro-F1 (rollouts pooled) and, unless ``resamples`` is 0, their paired percentile bootstrap intervals
    (``stats.paired_bootstrap``, tasks matched by key). ``flips`` compares the runs task by task: a task is
    right in a run when its majority answer (``majority_label``; with one rollout per task, that rollout's
    answer) is one of its gold types; ``first_only`` counts the tasks right in ``first`` and wrong in
    ``second``, ``second_only`` the reverse, with the exact McNemar p-value of those two counts.
    """
    reason = same_tasks(first, second)
    if reason is not None:
        return {"paired": False, "reason": reason}
    keys, first_counts = task_counts(first.rollouts)
    second_keys, second_counts = task_counts(second.rollouts)
    order = {key: i for i, key in enumerate(second_keys)}
    second_counts = second_counts[[order[key] for key in keys]]
    right = [_majority_right(run) for run in (first, second)]
    result = flips([right[0][key] for key in keys], [right[1][key] for key in keys])
    out: dict[str, Any] = {
        "paired": True,
        "tasks": len(keys),
        "flips": {
            "first_only": result.first_only,
            "second_only": result.second_only,
            "both": result.both,
            "neither": result.neither,
            "mcnemar_p": result.mcnemar_p,
        },
        "intervals": None,
    }
    if resamples > 0 and len(keys) >= 2:
        delta = paired_bootstrap(first_counts, second_counts, resamples=resamples, seed=seed)
        out["intervals"] = _bootstrap_dict(delta)
    elif resamples > 0:
        out["intervals"] = {"unavailable": f"a bootstrap over tasks needs at least 2 tasks; the runs share {len(keys)}"}
    return out


def _majority_right(run: Run) -> dict[tuple[str, str, str], bool]:
    return {key: majority_label(group) in group[0].labels for key, group in group_by_task(run.rollouts).items()}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _bounded_mean(values: Sequence[float]) -> float:
    """The mean of finite values, dividing first so that it stays finite (a sum of huge rewards would not)."""
    return sum(v / len(values) for v in values)


def errored_summary(rollouts: Sequence[Rollout]) -> dict[str, Any]:
    """How many rollouts errored without an answer, by error type, and whether the run failed.

    ``failed`` is True when more than ``MOSTLY_ERRORED`` of the rollouts errored (e.g. every rollout a
    provider error: no API key, no route): the figures then measure the failure, not the model.
    """
    errored = [r for r in rollouts if r.errored]
    example = next((r for r in errored if r.error_message), errored[0] if errored else None)
    rate = len(errored) / len(rollouts) if rollouts else 0.0
    return {
        "failed": rate > MOSTLY_ERRORED,
        "rollouts": len(errored),
        "rate": rate,
        "types": dict(Counter(r.error for r in errored).most_common()),
        "example": None if example is None else f"{example.error}: {example.error_message or ''}".rstrip(": "),
    }


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
        named = config.data_label or config.data_path
        data = (
            f"every task of {named} (a whole split only if that data is one)"
            if named
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


def summarize(run: Run, *, resamples: int = 0, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Every number of the report for one run, as a JSON-ready dict (the ``--json`` output).

    ``resamples`` > 0 adds ``intervals``: 95% percentile bootstrap intervals of accuracy, micro-F1 and macro-F1
    (rollouts pooled) over ``resamples`` resamples of the tasks, seeded by ``seed`` (``stats.bootstrap_metrics``);
    ``{"unavailable": reason}`` when the run has fewer than 2 tasks; None when ``resamples`` is 0.

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
    errored = errored_summary(rollouts)
    return {
        "failed": errored["failed"],
        "errored": errored,
        "run": {
            "name": run.name,
            "path": run.path,
            "source": run.source,
            "model": run.config.model,
            "split": run.config.split,
            "data_path": run.config.data_path,
            "data_label": run.config.data_label,
            "limit": run.config.limit,
            "versions": run_versions(rollouts),
        },
        "setting": setting_of(rollouts, run.config),
        "n_tasks": len(groups),
        "n_rollouts": n,
        "rollouts_per_task": {"min": min(ks), "max": max(ks)},
        "accuracy": _mean([float(r.correct) for r in rollouts]),
        "mean_at_k": _mean(per_task),
        "pass_at_k": _mean([float(score > 0) for score in per_task]),
        "majority_accuracy": _mean([float(majority[key] in group[0].labels) for key, group in groups.items()]),
        "mean_reward": _bounded_mean(rewards) if rewards else None,
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
        "intervals": _intervals(rollouts, resamples, seed),
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
        "lines": {
            "read": run.lines,
            "blank": run.blank,
            "records": n + len(run.corrupt) + len(run.unidentified),
            "corrupt": len(run.corrupt),
            "unidentified": len(run.unidentified),
            "corrupt_lines": [str(s) for s in run.corrupt],
            "unidentified_lines": [str(s) for s in run.unidentified],
        },
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
    return sorted(rows, key=lambda row: (row[0], _id_key(row[1]), _id_key(row[2]), LABEL_ORDER[row[3]]))


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


def _listed(skips: Sequence[str]) -> list[str]:
    more = len(skips) - _MAX_EXAMPLES
    return [f"    {s}" for s in skips[:_MAX_EXAMPLES]] + (
        [f"    ... and {more} more (--json lists every one)"] * (more > 0)
    )


def _skipped_lines(lines: Mapping[str, Any]) -> list[str]:
    """What reading skipped: malformed records and rollouts of unidentified tasks, each listed."""
    if not lines["corrupt"] and not lines["unidentified"]:
        return []
    rollouts = lines["records"] - lines["corrupt"] - lines["unidentified"]
    out = [
        f"  read {lines['read']} lines, {lines['records']} records: {rollouts} rollouts, {lines['corrupt']} skipped, "
        f"{lines['unidentified']} of unidentified tasks"
    ]
    if lines["corrupt"]:
        out.append(f"  skipped {lines['corrupt']} records (malformed or not DrugProt):")
        out += _listed(lines["corrupt_lines"])
    if lines["unidentified"]:
        out.append(f"  {lines['unidentified']} rollouts of a task that cannot be identified (counted, not scored):")
        out += _listed(lines["unidentified_lines"])
    return out


def format_failure(report: Mapping[str, Any]) -> list[str]:
    """The banner that opens the report of a failed run (most rollouts errored); empty for other runs."""
    errored = report["errored"]
    if not errored["failed"]:
        return []
    return [
        f"drugprot report: FAILED RUN {report['run']['name']}: {errored['rollouts']} of {report['n_rollouts']} "
        f"rollouts ({errored['rate']:.1%}) errored without an answer ({_counts(errored['types'])})",
        f"  first error: {errored['example']}",
        "  The figures below measure the failure, not the model. Check the endpoint, model name and API key "
        "(or the harness log), then re-run.",
        "",
    ]


def data_name(run: Mapping[str, Any]) -> str:
    """How a report names a run's data (``report["run"]``): its ``data_label``, else its data path, else its split."""
    named = run["data_label"] or run["data_path"]
    return f"data {named}" if named else f"split {run['split'] or '?'}"


def _header(report: Mapping[str, Any]) -> list[str]:
    run, k = report["run"], report["rollouts_per_task"]
    per = str(k["min"]) if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    facts = [
        f"model {run['model'] or '?'}",
        data_name(run),
        f"negatives {report['setting']['negatives'] or '?'}",
        f"limit {run['limit'] or ('none' if run['limit'] == '' else '?')}",
    ]
    lines = [
        f"drugprot report: {run['name']} ({run['source']})",
        f"  {run['path']}",
        "  " + " | ".join(facts),
        "  versions: " + " | ".join(f"{name} {value}" for name, value in _run_versions(report).items()),
        f"  {report['n_tasks']} tasks, {report['n_rollouts']} rollouts ({per} per task)",
        f"  setting: {report['setting']['note']}",
    ]
    lines += _skipped_lines(report["lines"])
    errored = report["errored"]
    if errored["rollouts"] and not errored["failed"]:
        lines.append(
            f"  errored: {errored['rollouts']} of {report['n_rollouts']} rollouts ({errored['rate']:.1%}) recorded an "
            f"error and gave no answer: {_counts(errored['types'])}"
        )
    if report["rescored"]:
        lines.append(
            f"  re-scored {report['rescored']} rollouts from their last assistant message "
            "(no usable info['drugprot'] record: older run or scoring error)"
        )
    return lines


def _run_versions(report: Mapping[str, Any]) -> dict[str, str]:
    """The report's ``run.versions``; all ``unknown`` for a report dict made before they were recorded."""
    versions = report["run"].get("versions") or {}
    return {name: versions.get(name) or UNKNOWN for name in VERSION_NAMES}


def versions_note(cols: Sequence[str], reports: Sequence[Mapping[str, Any]]) -> str | None:
    """The comparison's warning when the runs differ in a version or in their data (None when they do not)."""
    versions = [_run_versions(report) for report in reports]
    differ = [name for name in VERSION_NAMES if len({v[name] for v in versions}) > 1]
    if not differ:
        return None
    what = "; ".join(
        f"{name} " + ", ".join(f"{col} {v[name]}" for col, v in zip(cols, versions, strict=True)) for name in differ
    )
    return f"  note: the runs differ in {', '.join(differ)} ({what}): compare with care"


def format_report(report: Mapping[str, Any]) -> str:
    """The human-readable report of one run."""
    k = report["rollouts_per_task"]["max"]
    maj = report["majority"]
    out = format_failure(report) + _header(report)
    intervals = report.get("intervals")
    out += [
        "",
        "Accuracy (a reply is right when it names one of the pair's gold types)",
        *(
            f"  {name:<27}{_pct(value)}{ci}"
            for name, value, ci in (
                ("mean over rollouts", report["accuracy"], _ci(intervals, "accuracy")),
                (f"mean@{k} (per task)", report["mean_at_k"], ""),
                (f"pass@{k}", report["pass_at_k"], ""),
                ("majority vote (per task)", report["majority_accuracy"], ""),
                ("mean reward", report["mean_reward"], ""),
            )
        ),
        "",
        "Official DrugProt metric (13 types, multi-label pairs, NO-RELATION never scored)",
        "                              P      R      F1      TP     FP     FN"
        + ("   F1 95% interval" if _has(intervals) else ""),
    ]
    for name, scores, ci in (
        ("micro, rollouts pooled", report, _ci(intervals, "micro_f1")),
        ("micro, majority per task", maj, ""),
    ):
        c = scores["micro_counts"]
        out.append(
            f"  {name:<26}{_pct(scores['micro_precision']):>7}{_pct(scores['micro_recall']):>7}"
            f"{_pct(scores['micro_f1']):>7}{c['tp']:>7}{c['fp']:>7}{c['fn']:>7}{ci}"
        )
    supported = sum(1 for c in report["per_class"].values() if c["support"])
    out += [
        f"  macro-F1 over the 13 types {_pct(report['macro_f1'])}{_ci(intervals, 'macro_f1')}; over the "
        f"{supported} types with gold support {_pct(report['macro_f1_supported'])}",
        *format_intervals_note(intervals),
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


def _has(intervals: Mapping[str, Any] | None) -> bool:
    return intervals is not None and "unavailable" not in intervals


def _ci(intervals: Mapping[str, Any] | None, name: str, *, signed: bool = False) -> str:
    """``  [low, high]`` of one metric's interval, or "" when there is none."""
    if intervals is None or "unavailable" in intervals:
        return ""
    low, high = intervals[name]["low"], intervals[name]["high"]
    return f"  [{low:+.3f}, {high:+.3f}]" if signed else f"  [{low:.3f}, {high:.3f}]"


def format_intervals_note(intervals: Mapping[str, Any] | None) -> list[str]:
    """What the bracketed intervals are (or why there are none); nothing when they were disabled."""
    if intervals is None:
        return []
    if "unavailable" in intervals:
        return [f"  no 95% intervals: {intervals['unavailable']}"]
    return [
        f"  [low, high]: {intervals['level']:.0%} {intervals['method']} (all rollouts of a task together), "
        f"{intervals['resamples']} resamples of the {intervals['tasks']} tasks, seed {intervals['seed']} "
        "(--bootstrap N, --seed S; --bootstrap 0: none)"
    ]


def format_confusion(confusion: Mapping[str, Any]) -> list[str]:
    """The confusion matrix as text: rows gold (first gold type of a multi-label pair), columns predicted.

    Columns are as wide as the widest count or column label plus one space (at least 4), so 4- and 5-digit
    counts stay aligned under their letters.
    """
    columns = [letter_of(name) if name != INVALID else "inv" for name in confusion["columns"]]
    matrix = confusion["matrix"]
    totals = [sum(row) for row in matrix]
    width = 1 + max([3, *(len(c) for c in columns), *(len(str(v)) for row in matrix for v in row)])
    total_width = max([4, *(len(str(t)) for t in totals)])
    lines = [
        "Confusion matrix (rows gold, columns predicted, inv = no valid answer; a right answer on a "
        "multi-label pair counts on its diagonal, a wrong one in the row of its first gold type)",
        "      " + "".join(f"{c:>{width}}" for c in columns),
    ]
    for name, row, total in zip(confusion["labels"], matrix, totals, strict=True):
        cells = "".join(f"{(str(v) if v else '.'):>{width}}" for v in row)
        lines.append(f"  {letter_of(name):<4}{cells}   {total:>{total_width}}  {name}")
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
    reports: Sequence[Mapping[str, Any]],
    task_keys: Sequence[set[tuple[str, str, str]]] | None = None,
    comparisons: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """Several runs side by side: headline numbers and per-class F1, one column per run.

    ``task_keys`` (each run's task keys) adds a warning when the runs did not evaluate the same tasks.
    Each run's 95% intervals follow the table; ``comparisons`` (``compare_runs`` of run [1] with each later
    run, in order) adds the paired comparison of each later run with [1].
    """
    cols = [f"[{i}]" for i in range(1, len(reports) + 1)]
    out = [
        f"drugprot report: {col} FAILED RUN {r['run']['name']}: {r['errored']['rollouts']} of {r['n_rollouts']} "
        f"rollouts errored without an answer ({r['errored']['example']}); its figures measure the failure"
        for col, r in zip(cols, reports, strict=True)
        if r["failed"]
    ]
    out.append("drugprot report: comparison")
    for col, report in zip(cols, reports, strict=True):
        run = report["run"]
        out.append(
            f"  {col} {run['name']} ({run['model'] or '?'}, {data_name(run)}, negatives "
            f"{report['setting']['negatives'] or '?'}, limit {run['limit'] or 'none'}) {run['path']}"
        )
        lines = report["lines"]
        if lines["corrupt"] or lines["unidentified"] or report["rescored"]:
            out.append(
                f"      skipped {lines['corrupt']} malformed records and {lines['unidentified']} rollouts of "
                f"unidentified tasks; re-scored {report['rescored']} rollouts"
            )
    if task_keys and len({frozenset(keys) for keys in task_keys}) > 1:
        shared = set.intersection(*(set(keys) for keys in task_keys))
        out.append(
            f"  note: the runs cover different tasks ({', '.join(str(len(k)) for k in task_keys)}; "
            f"{len(shared)} shared): compare with care"
        )
    note = versions_note(cols, reports)
    if note is not None:
        out.append(note)
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
    out += _comparison_intervals(cols, reports)
    for col, comparison in zip(cols[1:], comparisons or (), strict=False):
        out += ["", *format_paired(cols[0], col, comparison)]
    return "\n".join(out)


def _comparison_intervals(cols: Sequence[str], reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each run's 95% intervals of accuracy, micro-F1 and macro-F1, one line per run."""
    out: list[str] = []
    for col, report in zip(cols, reports, strict=True):
        intervals = report.get("intervals")
        if intervals is None:
            continue
        if "unavailable" in intervals:
            out.append(f"  {col} no 95% intervals: {intervals['unavailable']}")
            continue
        if not out:
            out += [
                "",
                f"{intervals['level']:.0%} intervals ({intervals['method']}, all rollouts of a task together; "
                f"{intervals['resamples']} resamples, seed {intervals['seed']})",
            ]
        out.append(
            f"  {col} accuracy {_pct(report['accuracy'])}{_ci(intervals, 'accuracy')}   micro F1 "
            f"{_pct(report['micro_f1'])}{_ci(intervals, 'micro_f1')}   macro F1 {_pct(report['macro_f1'])}"
            f"{_ci(intervals, 'macro_f1')}"
        )
    return out


_DELTA_NAMES = {"accuracy": "accuracy", "micro_f1": "micro F1", "macro_f1": "macro F1 (13 types)"}


def format_paired(first: str, second: str, comparison: Mapping[str, Any]) -> list[str]:
    """The paired comparison of run ``second`` with run ``first`` (``compare_runs``), as text lines."""
    if not comparison["paired"]:
        return [f"Paired comparison {second} - {first}: none, {comparison['reason']}"]
    intervals = comparison["intervals"]
    out = [f"Paired comparison {second} - {first} over the same {comparison['tasks']} tasks (matched by task key)"]
    if intervals is not None and "unavailable" not in intervals:
        out += [
            f"  [low, high]: {intervals['level']:.0%} paired {intervals['method']}, both runs on the same "
            f"resamples; {intervals['resamples']} resamples, seed {intervals['seed']}",
            *(
                f"  delta {_DELTA_NAMES[name]:<22}{intervals[name]['estimate']:+.3f}{_ci(intervals, name, signed=True)}"
                for name in METRICS
            ),
        ]
    elif intervals is not None:
        out.append(f"  no intervals: {intervals['unavailable']}")
    f = comparison["flips"]
    out.append(
        f"  tasks by majority answer: right in {first} only {f['first_only']}, right in {second} only "
        f"{f['second_only']}, both {f['both']}, neither {f['neither']}; exact McNemar p = {f['mcnemar_p']:.3g}"
    )
    return out


# ------------------------------------------------------------------------------------------------ plot

_TITLE_CHARS = 48  # run names longer than this are shortened in plot titles and legends


def short_name(name: str, limit: int = _TITLE_CHARS) -> str:
    """``name`` cut to ``limit`` characters in the middle (``"head…tail"``), so a title never runs off its figure."""
    if len(name) <= limit:
        return name
    tail = (limit - 1) // 2
    return f"{name[: limit - 1 - tail]}…{name[len(name) - tail :]}"


def pyplot_agg() -> Any:
    """matplotlib.pyplot on the Agg backend (files only, no display).

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ReportError(
            "--plot needs matplotlib: from the drugprot repository root run "
            "uv pip install -e 'environments/drugprot[report]' (or pip install matplotlib)"
        ) from exc
    return plt


def save_png(fig: Any, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` as a PNG through a temporary file in the same directory, then close it.

    A failed write leaves no file behind (and an existing ``path`` untouched).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        fig.savefig(tmp, dpi=120, format="png", bbox_inches="tight")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        pyplot_agg().close(fig)


def _axis_label(name: str) -> str:
    return "inv  no valid answer" if name == INVALID else f"{letter_of(name)}  {name}"


def row_shares(matrix: Sequence[Sequence[int]]) -> list[list[float]]:
    """Each count as a share of its row (its gold type); an empty row is all zeros."""
    return [[value / total if (total := sum(row)) else 0.0 for value in row] for row in matrix]


def _confusion_panel(ax: Any, report: Mapping[str, Any], normalize: bool) -> Any:
    from matplotlib.colors import PowerNorm

    confusion = report["confusion"]
    matrix = confusion["matrix"]
    # Square-root colour scale: a dominant cell (NO-RELATION's diagonal, an always-INHIBITOR column) stays dark
    # without washing the small cells out to white. Row shares keep each gold type on the same 0-1 scale.
    values = row_shares(matrix) if normalize else [[float(v) for v in row] for row in matrix]
    peak = 1.0 if normalize else max((v for row in values for v in row), default=0.0) or 1.0
    norm = PowerNorm(gamma=0.5, vmin=0.0, vmax=peak)
    image = ax.imshow(values, cmap="Blues", norm=norm, aspect="auto")
    ax.set_xticks(range(len(confusion["columns"])), [_axis_label(c) for c in confusion["columns"]])
    ax.set_yticks(range(len(confusion["labels"])), [_axis_label(c) for c in confusion["labels"]])
    ax.tick_params(axis="x", labelrotation=55, labelsize=7)
    ax.tick_params(axis="y", labelsize=7)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold (first gold type of a multi-label pair)")
    ax.set_title(
        f"{short_name(report['run']['name'])}\nmicro-F1 {_pct(report['micro_f1'])}, "
        f"accuracy {_pct(report['accuracy'])}, {report['n_rollouts']} rollouts",
        fontsize=9,
    )
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            if count:
                dark = norm(values[i][j]) > 0.6
                ax.text(j, i, str(count), ha="center", va="center", fontsize=6, color="white" if dark else "black")
    return image


def confusion_figure(reports: Sequence[Mapping[str, Any]], *, normalize: bool = True) -> Any:
    """One confusion-matrix panel per run: full label names, counts in the cells, colour = share of the gold row
    (``normalize``) or the count itself."""
    plt = pyplot_agg()
    fig, axes = plt.subplots(1, len(reports), figsize=(8.5 * len(reports), 7.5), squeeze=False)
    for ax, report in zip(axes[0], reports, strict=True):
        image = _confusion_panel(ax, report, normalize)
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
        bar.set_label("share of the gold row (number = count)" if normalize else "count", fontsize=8)
    fig.tight_layout()
    return fig


def plot_confusion(
    reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, normalize: bool = True
) -> None:
    """Write the confusion matrices (one panel per run) as a PNG (``confusion_figure``).

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
    """
    save_png(confusion_figure(reports, normalize=normalize), path)


def _support_label(name: str, reports: Sequence[Mapping[str, Any]]) -> str:
    supports = "/".join(str(r["per_class"][name]["support"]) for r in reports)
    return f"{letter_of(name)}  {name}  (n={supports})"


def _class_value(scores: Mapping[str, Any], metric: str) -> float | None:
    """A per-class score as the text report shows it: undefined (None) without predictions or gold."""
    defined = {
        "precision": scores["predicted"],
        "recall": scores["support"],
        "f1": scores["predicted"] or scores["support"],
    }
    return scores[metric] if defined[metric] else None


def classes_figure(reports: Sequence[Mapping[str, Any]]) -> Any:
    """Per-class precision, recall and F1 (one panel each) with the gold support in the labels; one bar per run."""
    plt = pyplot_agg()
    names = list(RELATION_NAMES)
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.42 * len(names) + 2.2), sharey=True, squeeze=False)
    height = 0.8 / len(reports)
    colours = plt.get_cmap("tab10").colors
    for ax, (metric, title) in zip(
        axes[0], (("precision", "precision"), ("recall", "recall"), ("f1", "F1")), strict=True
    ):
        for k, report in enumerate(reports):
            ys = [i - 0.4 + height * (k + 0.5) for i in range(len(names))]
            values = [_class_value(report["per_class"][name], metric) for name in names]
            ax.barh(
                ys,
                [v or 0.0 for v in values],
                height=height,
                color=colours[k % len(colours)],
                label=f"[{k + 1}] {short_name(report['run']['name'], 36)}",
            )
            for y, v in zip(ys, values, strict=True):
                ax.text((v or 0.0) + 0.01, y, "-" if v is None else f"{v:.2f}", va="center", fontsize=6)
        ax.set_xlim(0, 1.12)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(names)), [_support_label(n, reports) for n in names], fontsize=8)
    axes[0][0].invert_yaxis()
    runs = ", ".join(f"[{k + 1}] micro-F1 {_pct(r['micro_f1'])}" for k, r in enumerate(reports))
    fig.suptitle(f"Per class, rollouts pooled (n = gold support; - = undefined): {runs}", fontsize=9)
    axes[0][2].legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def plot_classes(reports: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write the per-class precision/recall/F1 bar chart (``classes_figure``) as a PNG.

    Raises:
        ReportError: matplotlib is not installed (it is the ``drugprot[report]`` extra).
    """
    save_png(classes_figure(reports), path)


# ------------------------------------------------------------------------------------------------ CLI


def add_output_arguments(parser: argparse.ArgumentParser, seed_flags: Sequence[str] = ("--bootstrap-seed",)) -> None:
    """The output options shared by ``drugprot report`` and ``drugprot baseline``.

    ``seed_flags`` names the bootstrap seed option (``drugprot baseline`` has its own ``--seed``).
    """
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object (several runs: {"runs": [...], "comparisons": [...]}) instead of text',
    )
    parser.add_argument(
        "--bootstrap",
        type=resamples_arg,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"resamples of the tasks for the {LEVEL:.0%}% intervals and the paired comparison "
        f"(default {DEFAULT_RESAMPLES}; 0: no intervals)",
    )
    parser.add_argument(
        *seed_flags,
        dest="bootstrap_seed",
        type=int,
        default=DEFAULT_SEED,
        metavar="S",
        help=f"seed of the bootstrap (default {DEFAULT_SEED}; the same seed gives the same intervals)",
    )
    parser.add_argument(
        "--plot",
        metavar="PATH",
        help="write the confusion matrix as a PNG: label names, counts in the cells, colour = share of the gold row "
        "(needs matplotlib)",
    )
    parser.add_argument(
        "--plot-counts", action="store_true", help="colour the --plot confusion matrix by count, not by row share"
    )
    parser.add_argument(
        "--plot-classes",
        metavar="PATH",
        help="write per-class precision/recall/F1 bars with gold support as a PNG, one bar per run (needs matplotlib)",
    )
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


def resamples_arg(text: str) -> int:
    """``--bootstrap``'s value: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples >= 0 (0: no intervals), got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_DIR",
        help="a vf-eval run directory (traces.jsonl, or legacy results.jsonl + metadata.json); with several, "
        "each later run is compared with the first (paired when they cover the same tasks)",
    )
    add_output_arguments(parser, seed_flags=("--seed", "--bootstrap-seed"))
    parser.add_argument(
        "--data-path",
        help="the run's data file or TSV directory, for --export-gold's entities.tsv "
        "(default: the data path saved in the run's config)",
    )
    parser.add_argument(
        "--allow-errors",
        action="store_true",
        help=f"report a failed run (more than {MOSTLY_ERRORED:.0%}% of its rollouts errored without an answer) with "
        f"exit status 0 and write its --export-tsv/--export-gold/--plot/--plot-classes files (default: flag it, "
        f"write no files, "
        f"exit {EXIT_FAILED_RUN})",
    )
    parser.epilog = (
        f"exit status: 0 reported; 2 a run cannot be read (no run file, no DrugProt rollout, bad options); "
        f"{EXIT_FAILED_RUN} a run failed: more than {MOSTLY_ERRORED:.0%} of its rollouts errored without an answer "
        "(e.g. no API key, no route to the endpoint); its report is printed, flagged at the top, and no file is "
        "written unless --allow-errors. Malformed lines are skipped, counted and listed, never fatal."
    )


def emit(runs: Sequence[Run], args: argparse.Namespace, *, allow_errors: bool = False) -> int:
    """Print the report(s) of ``runs`` and write the requested files; returns the exit code.

    A failed run (``errored_summary``) is flagged at the top of the report; unless ``allow_errors``, no file is
    written (its predictions would look like a result) and the exit code is ``EXIT_FAILED_RUN``.
    """
    if (args.export_tsv or args.export_gold) and len(runs) != 1:
        raise ReportError("--export-tsv and --export-gold take exactly one run")
    resamples = getattr(args, "bootstrap", DEFAULT_RESAMPLES)
    seed = getattr(args, "bootstrap_seed", DEFAULT_SEED)
    reports = [summarize(run, resamples=resamples, seed=seed) for run in runs]
    comparisons = [compare_runs(runs[0], other, resamples=resamples, seed=seed) for other in runs[1:]]
    failed = [report for report in reports if report["failed"]]
    refused = bool(failed) and not allow_errors
    written = []
    if refused:
        files = [name for name in ("plot", "plot_classes", "export_tsv", "export_gold") if getattr(args, name, None)]
        if files:
            written.append(
                f"not written ({', '.join('--' + f.replace('_', '-') for f in files)}): the run failed; "
                "pass --allow-errors to write them anyway"
            )
    else:
        if args.plot:
            plot_confusion(reports, args.plot, normalize=not getattr(args, "plot_counts", False))
        if getattr(args, "plot_classes", None):
            plot_classes(reports, args.plot_classes)
        if args.export_tsv:
            written.append(f"wrote {export_tsv(runs[0], args.export_tsv)} predictions to {args.export_tsv}")
        if args.export_gold:
            documents = run_documents(runs[0], getattr(args, "data_path", None))
            written.append("wrote " + ", ".join(str(p) for p in export_gold(runs[0], args.export_gold, documents)))
            if documents is None:
                written.append("entities.tsv not written: pass --data-path (the run's data file or TSV directory)")
        if args.plot:
            written.append(f"wrote the confusion matrix to {args.plot}")
        if getattr(args, "plot_classes", None):
            written.append(f"wrote the per-class chart to {args.plot_classes}")
    if args.json:
        payload: Any = reports[0] if len(reports) == 1 else {"runs": reports, "comparisons": comparisons}
        print(json.dumps(payload, indent=2, allow_nan=False))
    elif len(reports) == 1:
        print(format_report(reports[0]))
    else:
        print(format_comparison(reports, [{r.key for r in run.rollouts} for run in runs], comparisons))
    for report in failed:
        errored = report["errored"]
        written.append(
            f"{report['run']['name']}: FAILED RUN, {errored['rollouts']} of {report['n_rollouts']} rollouts errored "
            f"without an answer ({_counts(errored['types'])})"
            + ("" if allow_errors else f"; exit {EXIT_FAILED_RUN} (--allow-errors reports it with exit 0)")
        )
    for line in written:
        print(line, file=sys.stderr)
    return EXIT_FAILED_RUN if refused else 0


def run(args: argparse.Namespace) -> int:
    try:
        return emit([load_run(path) for path in args.runs], args, allow_errors=args.allow_errors)
    except (DrugprotError, OSError) as exc:
        print(f"drugprot report: error: {exc}", file=sys.stderr)
        return 2


__all__ = [
    "EXIT_FAILED_RUN",
    "INVALID",
    "MOSTLY_ERRORED",
    "ReportError",
    "Rollout",
    "Run",
    "RunConfig",
    "Skip",
    "data_name",
    "decode_json",
    "errored_summary",
    "export_gold",
    "export_tsv",
    "find_run_file",
    "format_comparison",
    "format_failure",
    "format_report",
    "gold_rows",
    "group_by_task",
    "load_run",
    "majority_label",
    "majority_scores",
    "classes_figure",
    "confusion_figure",
    "plot_classes",
    "plot_confusion",
    "pyplot_agg",
    "row_shares",
    "save_png",
    "short_name",
    "pooled_scores",
    "prediction_rows",
    "compare_runs",
    "format_paired",
    "read_line",
    "resamples_arg",
    "run_documents",
    "same_tasks",
    "task_counts",
    "setting_of",
    "summarize",
    "validate_record",
]
