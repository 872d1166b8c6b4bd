"""Hand-written runs for the report's tests, in the real ``traces.jsonl`` layout of the verifiers v1 CLI.

An episode per line with ``traces[]``; each trace with ``task.data``, ``nodes``, ``calls``, ``rewards``, ``metrics``,
``info``, ``errors`` and token counts, trimmed to the keys the report reads plus a few it must ignore.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.labels import letter_of

PMID = "12345"


def reply_for(label: str | None, *, text: str | None = None) -> str:
    """A well-formed reply naming ``label`` (or the given raw text)."""
    if text is not None:
        return text
    return f"<think>reasoning</think>\n\\boxed{{{letter_of(label)}}}" if label else "I am not sure."


def trace(
    arg1: str,
    arg2: str,
    gold: list[str],
    label: str | None,
    *,
    with_nr: bool = False,
    reply: str | None = None,
    record: bool = True,
    invalid_reason: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    tokens: tuple[int, int] = (100, 10),
    pmid: str = PMID,
    versions: Any = None,
) -> dict[str, Any]:
    """One v1 trace of a DrugProt task; ``record=False`` leaves out ``info["drugprot"]`` (an older run);
    ``versions`` goes to ``info["drugprot"]["versions"]`` (left out when None, as before it was recorded)."""
    data = {
        "idx": 0,
        "name": f"{pmid}:{arg1}:{arg2}",
        "prompt": "...",
        "system_prompt": "...",
        "pmid": pmid,
        "arg1": arg1,
        "arg2": arg2,
        "labels": gold,
        "chemical": "x",
        "gene": "y",
        "with_no_relation": with_nr,
    }
    correct = float(label is not None and label in gold)
    info = {}
    if record:
        info["drugprot"] = {
            "letter": letter_of(label) if label else None,
            "label": label,
            "invalid_reason": invalid_reason if label is None else None,
            "format_reason": invalid_reason if label is None else None,
        }
        if versions is not None:
            info["drugprot"]["versions"] = versions
    return {
        "version": 1,
        "id": "t",
        "verifiers": {"version": "0.4.0"},
        "task": {"type": "DrugprotTask", "data": data, "key": data["name"], "hash": "h"},
        "nodes": [
            {"message": {"role": "system", "content": "..."}, "sampled": False},
            {"parent": 0, "message": {"role": "user", "content": "..."}, "sampled": False},
            {"parent": 1, "message": {"role": "assistant", "content": reply_for(label, text=reply)}, "sampled": True},
        ],
        "calls": [
            {
                "node": 2,
                "model": "m",
                "finish_reason": "stop",
                "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
            }
        ],
        "rewards": {
            "accuracy": {"score": correct, "weight": 1.0},
            "format": {"score": 1.0 if label else 0.0, "weight": 0.1},
        },
        "metrics": {"answered": float(label is not None)},
        "info": info,
        "is_completed": True,
        "ok": not errors,
        "stop_condition": "agent_completed",
        "errors": errors or [],
        "num_input_tokens": tokens[0],
        "num_output_tokens": tokens[1],
        "num_total_tokens": sum(tokens),
    }


def episode(*traces: dict[str, Any]) -> str:
    """One ``traces.jsonl`` line."""
    return json.dumps(
        {
            "id": "e",
            "env": {"id": "drugprot"},
            "task": traces[0]["task"],
            "run": {"type": "eval"},
            "ok": True,
            "errors": [],
            "traces": list(traces),
        }
    )


def write_run(directory: Path, lines: list[str], *, negatives: Any = 0, limit: int | None = None) -> Path:
    """A v1 run dir: ``traces.jsonl`` plus the resolved config the report reads the setting from."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "traces.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    config = {
        "model": "test-model",
        "env": {"taskset": {"split": "validation", "data_path": None, "negatives": negatives, "num_tasks": None}},
        "select": {"limit": limit, "skip": 0, "include": {"idx": []}, "exclude": {"idx": []}},
    }
    (directory / "configs" / "resolved").mkdir(parents=True, exist_ok=True)
    (directory / "configs" / "resolved" / "eval.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def close(value: float, fraction: Fraction) -> bool:
    return value == pytest.approx(float(fraction), abs=1e-12)


def multilabel_run(tmp_path: Path) -> Path:
    """Seven tasks with NO-RELATION offered, one rollout each (figures computed by hand in the tests)."""
    return write_run(
        tmp_path / "multilabel",
        [
            episode(trace("T1", "T2", ["INHIBITOR", "SUBSTRATE"], "INHIBITOR", with_nr=True)),  # TP E, FN K
            episode(trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE", with_nr=True)),  # TP K
            episode(trace("T4", "T5", ["AGONIST"], "ANTAGONIST", with_nr=True)),  # FP I, FN F
            episode(trace("T6", "T5", ["NO-RELATION"], "INHIBITOR", with_nr=True)),  # FP E
            episode(trace("T7", "T5", ["NO-RELATION"], "NO-RELATION", with_nr=True)),  # nothing
            episode(trace("T8", "T9", ["ACTIVATOR"], None, with_nr=True, invalid_reason="no_boxed_answer")),  # FN D
            episode(trace("T10", "T9", ["INDIRECT-UPREGULATOR", "ACTIVATOR"], "NO-RELATION", with_nr=True)),  # FN B, D
        ],
        negatives="all",
    )


def rollouts_run(tmp_path: Path, name: str = "rollouts") -> Path:
    """Three positive-only tasks x three rollouts, written out of order (as async runs finish)."""
    a, b, c = (
        ("T1", "T2", ["INHIBITOR"]),
        ("T3", "T2", ["SUBSTRATE"]),
        ("T4", "T5", ["INDIRECT-DOWNREGULATOR", "INDIRECT-UPREGULATOR"]),
    )
    return write_run(
        tmp_path / name,
        [
            episode(trace(*a, "INHIBITOR")),
            episode(trace(*b, "INHIBITOR")),
            episode(trace(*c, "INDIRECT-UPREGULATOR")),
            episode(trace(*a, "INHIBITOR")),
            episode(trace(*b, None, invalid_reason="unterminated_think")),
            episode(trace(*c, "INDIRECT-DOWNREGULATOR")),
            episode(trace(*a, "SUBSTRATE")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*c, "DIRECT-REGULATOR")),
        ],
    )


def second_run(tmp_path: Path) -> Path:
    """``rollouts_run``'s three tasks again, other answers: the majority answer is right on a and b, wrong on c."""
    a, b, c = (
        ("T1", "T2", ["INHIBITOR"]),
        ("T3", "T2", ["SUBSTRATE"]),
        ("T4", "T5", ["INDIRECT-DOWNREGULATOR", "INDIRECT-UPREGULATOR"]),
    )
    return write_run(
        tmp_path / "second",
        [
            episode(trace(*c, "ACTIVATOR")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*a, "INHIBITOR")),
            episode(trace(*c, "ACTIVATOR")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*a, "AGONIST")),
            episode(trace(*c, "INDIRECT-UPREGULATOR")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*a, "INHIBITOR")),
        ],
    )


def good_line(arg1: str = "T1") -> str:
    return episode(trace(arg1, "T2", ["INHIBITOR"], "INHIBITOR"))


def mutated(change: Any) -> str:
    """A good episode line with ``change(first trace)`` applied."""
    line = json.loads(episode(trace("T3", "T4", ["SUBSTRATE"], "SUBSTRATE")))
    change(line["traces"][0])
    return json.dumps(line)


def put(path: str, value: Any) -> Any:
    """``change`` setting the dotted ``path`` of a trace (``task.data.labels``) to ``value``."""

    def change(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            obj = obj[int(key)] if isinstance(obj, list) else obj[key]
        obj[int(last) if isinstance(obj, list) else last] = value

    return change


def provider_error(arg1: str, message: str = "upstream 401: missing API key") -> str:
    """A rollout that failed before any reply (what a run without an API key writes)."""
    failed = trace(arg1, "T2", ["INHIBITOR"], None, record=False)
    failed.update(nodes=failed["nodes"][:2], calls=[], errors=[{"type": "ProviderError", "message": message}])
    failed.update(num_input_tokens=0, num_output_tokens=0, rewards={"accuracy": None, "format": None})
    return episode(failed)


def versions_record(
    scorer: str = "2", revision: str | None = None, source: str = "hub", reward: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A versions record; without ``reward``, one made before the reward knob (scorer 2 and older)."""
    record = {"env": "0.1.0", "prompt": "1", "scorer": scorer, "data": {"source": source, "revision": revision}}
    return record if reward is None else record | {"reward": reward}


def versioned_run(directory: Path, versions: Any) -> Path:
    """Two tasks, one rollout each, every trace recording ``versions``."""
    return write_run(
        directory,
        [
            episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", versions=versions)),
            episode(trace("T3", "T4", ["AGONIST"], "ANTAGONIST", versions=versions)),
        ],
    )


def header_versions(text: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith("  versions: ")]
    return line


def header_reward(text: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith("  reward: ")]
    return line
