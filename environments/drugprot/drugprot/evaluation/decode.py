"""One line of a run file as rollouts: the v1 ``traces.jsonl`` episode and the legacy ``results.jsonl`` row."""

from __future__ import annotations

import math
from typing import Any

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.rewards import checked_reward_knob
from drugprot.core.scoring import INFO_KEY
from drugprot.core.versions import VERSIONS_KEY
from drugprot.core.versions import from_info as versions_from_info
from drugprot.evaluation.records import UNKNOWN, ExtractionRollout, Rollout, Skip, Versions
from drugprot.evaluation.typed_json import (
    BadRecord,
    decode_json,
    describe,
    get_count,
    get_flag,
    get_number,
    get_object,
    get_objects,
    get_string,
    shorten,
    typed,
)
from drugprot.modes.base import mode_of_task


def episode_traces(value: Any) -> list[Any] | None:
    """The ``traces`` list of a v1 episode line's JSON value, or None when it is not an object with such a list
    (``"traces": 5``, ``true``, missing): the rule ``read_line`` reads episodes by, and every other reader of a run's
    episodes (``replays``) too."""
    traces = value.get("traces") if isinstance(value, dict) else None
    return traces if isinstance(traces, list) else None


def read_line(raw: bytes, *, file: str, line: int, legacy: bool) -> list[Rollout | ExtractionRollout | Skip]:
    """The records of one line of a run file: a ``Rollout`` per readable trace, a ``Skip`` per other record.

    Never raises: bad bytes, bad JSON or a field of the wrong type anywhere the report reads is a ``Skip``
    naming the field. A legacy line is one record; a v1 episode line one record per trace (an episode
    without traces: one errored rollout when it recorded an error, else one skip).
    """
    try:
        value = decode_json(raw)
    except BadRecord as exc:
        return [Skip(file, line, None, str(exc))]
    if legacy:
        return [validate_record(value, None, file=file, line=line, trace=None)]
    if not isinstance(value, dict):
        return [Skip(file, line, None, f"not an episode: the line is {describe(value)}, expected an object")]
    traces = episode_traces(value)
    if value.get("traces") is None and "nodes" in value:  # a bare trace line
        return [validate_record(value, {}, file=file, line=line, trace=None)]
    if traces is None:
        return [Skip(file, line, None, "not an episode (no traces list)")]
    if not traces:
        if not value.get("errors"):
            return [Skip(file, line, None, "episode without traces and without an error")]
        return [validate_record({"errors": value["errors"]}, value, file=file, line=line, trace=None)]
    several = len(traces) > 1
    return [validate_record(t, value, file=file, line=line, trace=i if several else None) for i, t in enumerate(traces)]


def validate_record(
    value: Any, episode: dict[str, Any] | None, *, file: str, line: int, trace: int | None
) -> Rollout | ExtractionRollout | Skip:
    """One raw JSON record as a typed ``Rollout`` (an ``ExtractionRollout`` for an extraction task), or a ``Skip``
    saying which field is wrong and how.

    ``episode`` is the v1 episode the trace came from (its ``task`` is the fallback of the trace's), or
    None for a legacy ``results.jsonl`` row. Never raises.
    """
    try:
        return _legacy_rollout(value) if episode is None else _v1_rollout(value, episode)
    except BadRecord as exc:
        return Skip(file, line, trace, str(exc), unidentified=exc.unidentified)


def ceiling_of_task(data: dict[str, Any] | None) -> tuple[int, int, int | None] | None:
    """The task data's ``ceiling`` (``[gold relations, on candidates, one per candidate pair]`` of its abstract,
    ``Ceiling.as_record``; a run made before the third count recorded two, read with None for it), or None when it
    is missing or not counts with ``0 <= one per pair <= candidates <= gold`` (best effort: the report then says
    the ceiling is unknown)."""
    value = data.get("ceiling") if data is not None else None
    if not isinstance(value, list) or len(value) not in (2, 3):
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        return None
    gold, candidates, *rest = value
    per_pair = rest[0] if rest else None
    if not 0 <= candidates <= gold or (per_pair is not None and not 0 <= per_pair <= candidates):
        return None
    return (gold, candidates, per_pair)


def rollout_costs(info: dict[str, Any] | None) -> tuple[float, float] | None:
    """The utility's ``(fp_cost, fn_cost)`` in the rollout's ``info["drugprot"]["versions"]["reward"]``
    (``Reward.record``) as recorded, or None (unknown) when it recorded none or a cost the knobs refuse. A recorded
    cost is a fact about the run: it is read as the run recorded it, never moved onto today's reward grid (a run of
    scorer version 3, before the grid, recorded and ran ``fp_cost`` 0.35, not 0.34375). The reader applies the
    knob's range check only (``checked_reward_knob``: a real number from 0 to ``MAX_COST``), so the report, which
    derives figures from these costs, never meets one it cannot use (fn_cost 5000 or fp_cost 1e308 read as
    unknown)."""
    record = info.get(INFO_KEY) if info is not None else None
    versions = record.get(VERSIONS_KEY) if isinstance(record, dict) else None
    reward = versions.get("reward") if isinstance(versions, dict) else None
    if not isinstance(reward, dict):
        return None
    try:
        return (
            checked_reward_knob("fp_cost", reward.get("fp_cost")),
            checked_reward_knob("fn_cost", reward.get("fn_cost")),
        )
    except DrugprotConfigError:
        return None


def rollout_versions(info: dict[str, Any] | None) -> Versions | None:
    """The rollout's ``info["drugprot"]["versions"]`` for display (``VERSION_NAMES``), or None without one."""
    record = versions_from_info(info.get(INFO_KEY) if info is not None else None)
    if record is None:
        return None
    source, revision = record["data_source"], record["data_revision"]
    if source == "hub":
        data = f"hub@{shorten(revision, 60)}" if revision else "hub, default branch (unpinned)"
    else:
        data = source or UNKNOWN
    env, prompt, scorer = (shorten(record[k], 40) if record[k] else UNKNOWN for k in ("env", "prompt", "scorer"))
    return env, prompt, scorer, data, shorten(record["reward"], 200) if record["reward"] else UNKNOWN


def _content(message: dict[str, Any], path: str) -> str | None:
    """Message content as text: a string, or the text parts of a list of parts joined."""
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRecord(f"field {path}.content is {describe(content)}, expected a string or a list of parts")
    parts = get_objects(message, "content", f"{path}.content")
    texts = [get_string(p, "text", f"{path}.content[{i}].text") for i, p in enumerate(parts) if p.get("type") == "text"]
    return "".join(t for t in texts if t is not None)


def _reply(message: dict[str, Any] | None, path: str) -> tuple[str | None, str | None] | None:
    """``(content, reasoning_content)`` of an assistant message, or None when there is none."""
    if message is None:
        return None
    return _content(message, path), get_string(message, "reasoning_content", f"{path}.reasoning_content")


def _v1_rollout(trace: Any, episode: dict[str, Any]) -> Rollout | ExtractionRollout:
    if not isinstance(trace, dict):
        raise BadRecord(f"trace is {describe(trace)}, expected an object")
    task = get_object(trace, "task", "task") or get_object(episode, "task", "episode task")
    data = get_object(task, "data", "task.data") if task is not None else None
    if data is None:
        raise BadRecord("no task.data object: not a DrugProt rollout")
    mode = mode_of_task(data)
    gold = mode.task_of(data, "task.data")
    errors = get_objects(trace, "errors", "errors")
    types = [get_string(e, "type", f"errors[{i}].type") or "error" for i, e in enumerate(errors)]
    messages = [get_string(e, "message", f"errors[{i}].message") for i, e in enumerate(errors)]
    error, message = (shorten(types[-1]), messages[-1]) if errors else (None, None)
    timed_out = get_flag(trace, "is_timeout", "is_timeout")
    stop = get_string(trace, "stop_condition", "stop_condition")
    if error is None and timed_out:  # a stage deadline expired: recorded as a stop, not as an error
        error = shorten(stop or "timeout")
    info = get_object(trace, "info", "info")
    trusted = "TaskError" not in types  # a failed scorer's record is not trusted
    reply = None
    for i, node in enumerate(get_objects(trace, "nodes", "nodes")):
        message_obj = get_object(node, "message", f"nodes[{i}].message")
        sampled = typed(node, "sampled", f"nodes[{i}].sampled", bool, "true or false")
        if message_obj is not None and message_obj.get("role") == "assistant" and sampled is not False:
            reply = _reply(message_obj, f"nodes[{i}].message")
    calls = get_objects(trace, "calls", "calls")
    input_tokens, output_tokens = (
        get_count(trace, "num_input_tokens", "num_input_tokens"),
        get_count(trace, "num_output_tokens", "num_output_tokens"),
    )
    usages = [(i, u) for i, c in enumerate(calls) if (u := get_object(c, "usage", f"calls[{i}].usage")) is not None]
    if input_tokens is None and usages:
        input_tokens = sum(get_count(u, "prompt_tokens", f"calls[{i}].usage.prompt_tokens") or 0 for i, u in usages)
    if output_tokens is None and usages:
        output_tokens = sum(
            get_count(u, "completion_tokens", f"calls[{i}].usage.completion_tokens") or 0 for i, u in usages
        )
    finish = get_string(calls[-1], "finish_reason", f"calls[{len(calls) - 1}].finish_reason") if calls else None
    facts: dict[str, Any] = {
        "reward": _v1_reward(trace),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "truncated": finish == "length",
        "error": error,
        "error_message": None if message is None else shorten(message, 300),
        "versions": rollout_versions(info),
        "costs": rollout_costs(info),
        "ceiling": ceiling_of_task(data),
    }
    return mode.rollout(gold, info, lambda: _v1_accuracy(trace), reply, error, facts, trusted=trusted)


def _v1_accuracy(trace: dict[str, Any]) -> float | None:
    """The trace's recorded accuracy reward (``rewards.accuracy.score``), or None when it has none."""
    accuracy = get_object(get_object(trace, "rewards", "rewards") or {}, "accuracy", "rewards.accuracy")
    return None if accuracy is None else get_number(accuracy, "score", "rewards.accuracy.score")


def _v1_reward(trace: dict[str, Any]) -> float | None:
    """The trace's reward: its ``reward`` if saved, else the weighted sum of its ``rewards``."""
    reward = get_number(trace, "reward", "reward")
    if reward is not None:
        return reward
    rewards = get_object(trace, "rewards", "rewards")
    if not rewards:
        return None
    total = 0.0
    for name, value in rewards.items():
        path = f"rewards[{shorten(repr(name), 40)}]"
        if value is None:  # the scorer did not run
            continue
        if not isinstance(value, dict):
            raise BadRecord(f"field {path} is {describe(value)}, expected an object with score and weight")
        score, weight = get_number(value, "score", f"{path}.score"), get_number(value, "weight", f"{path}.weight")
        if score is not None:
            total += score * (1.0 if weight is None else weight)
    if not math.isfinite(total):
        raise BadRecord("field rewards: the weighted sum of the rewards is not a finite number")
    return total


def _legacy_rollout(row: Any) -> Rollout | ExtractionRollout:
    if not isinstance(row, dict):
        raise BadRecord(f"row is {describe(row)}, expected an object")
    info = row.get("info")
    if isinstance(info, str):  # datasets-saved rows carry info as a JSON string
        try:
            info = decode_json(info)
        except BadRecord as exc:
            raise BadRecord(f"field info is a string that is not JSON: {exc}") from None
    if not isinstance(info, dict):
        raise BadRecord(f"field info is {describe(info)}, expected an object: not a DrugProt rollout")
    mode = mode_of_task(info)
    gold = mode.task_of(info, "info")
    completion = row.get("completion")
    if isinstance(completion, str):
        reply: tuple[str | None, str | None] | None = (completion, None)
    else:
        messages = get_objects(row, "completion", "completion")
        assistant = [(i, m) for i, m in enumerate(messages) if m.get("role") == "assistant"]
        reply = _reply(assistant[-1][1], f"completion[{assistant[-1][0]}]") if assistant else None
    error, message = _legacy_error(row.get("error"), row.get("error_chain"))
    usage = get_object(row, "token_usage", "token_usage") or {}
    facts: dict[str, Any] = {
        "reward": get_number(row, "reward", "reward"),
        "input_tokens": get_count(usage, "input_tokens", "token_usage.input_tokens"),
        "output_tokens": get_count(usage, "output_tokens", "token_usage.output_tokens"),
        "truncated": get_flag(row, "is_truncated", "is_truncated"),
        "error": error,
        "error_message": message,
        "versions": rollout_versions(info),
        "costs": rollout_costs(info),
        "ceiling": ceiling_of_task(info),
    }
    return mode.rollout(gold, info, lambda: get_number(row, "accuracy", "accuracy"), reply, error, facts, trusted=True)


def _legacy_error(value: Any, row_chain: Any = None) -> tuple[str | None, str | None]:
    """``(type, message)`` of a legacy row's ``error``: null, a string, or ``{"error": type, "message"}``.

    verifiers 0.3.1 wraps a failed model call in a bare ``ModelError`` (message ``"ModelError"``) and keeps the
    cause only in the chain, ``error.error_chain_repr`` (also the row's ``error_chain``):
    ``ModelError() -> APIConnectionError('Connection error.') -> ConnectError(...)``. A message that says no more
    than the type is replaced by that chain, less its first link, so the report names the cause.
    """
    if value is None:
        return None, None
    if isinstance(value, str):
        return (shorten(value), None) if value else (None, None)
    if not isinstance(value, dict):
        raise BadRecord(f"field error is {describe(value)}, expected null, a string or an object")
    kind = get_string(value, "error", "error.error") or get_string(value, "type", "error.type") or "error"
    message = get_string(value, "message", "error.message")
    if message in (None, "", kind):
        chain = get_string(value, "error_chain_repr", "error.error_chain_repr")
        if chain is None and isinstance(row_chain, str):
            chain = row_chain
        message = error_cause(chain, kind) or message
    return shorten(kind), None if message is None else shorten(message, 300)


def error_cause(chain: str | None, kind: str) -> str | None:
    """The cause in a legacy error chain (``"A() -> B('why') -> C(...)"``): the links after a first link that only
    repeats ``kind``; None when the chain adds nothing."""
    if not chain:
        return None
    links = chain.split(" -> ")
    if links[0] in (kind, f"{kind}()"):
        links = links[1:]
    return " -> ".join(links) or None
