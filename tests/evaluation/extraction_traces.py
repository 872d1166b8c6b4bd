"""Hand-written extraction-mode runs (one task per abstract) for the report's tests, in the real layouts: the v1
``traces.jsonl`` (``task.data.extraction``) and the legacy ``results.jsonl`` (``info.extraction``).

Each reply is scored by ``drugprot.core.scoring.score_extraction``, as the taskset's scorer does, and its record
(``ExtractionScore.as_info()``) and rewards are written as the run would write them.

``HAND_RUN``: two abstracts, three rollouts each; the figures the tests assert are computed by hand there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from drugprot.core.extraction import ExtractionGold
from drugprot.core.rewards import PRESETS, Reward, accuracy_term
from drugprot.core.scoring import score_extraction

THINK = "<think>The text says how each chemical acts on each gene product.</think>\n"

GOLD_100 = ExtractionGold(
    frozenset({"T1", "T3"}),
    frozenset({"T2", "T4"}),
    frozenset({("T1", "T2", "INHIBITOR"), ("T3", "T4", "SUBSTRATE")}),
)
GOLD_200 = ExtractionGold(frozenset({"T1"}), frozenset({"T2"}), frozenset())
"""Abstract 200 states no relation."""


def block(*lines: str) -> str:
    return THINK + "<relations>\n" + "\n".join(lines) + "\n</relations>"


HAND_RUN: list[tuple[str, ExtractionGold, str]] = [
    ("100", GOLD_100, block("T1 | T2 | E", "T3 | T4 | K")),  # exact: TP 2, accuracy 1
    ("200", GOLD_200, block("none")),  # exact: accuracy 1
    ("100", GOLD_100, block("T1 | T2 | E", "T3 | T4 | E", "T9 | T4 | E")),  # TP 1 FP 1 FN 1, unknown id: 1/2
    ("200", GOLD_200, block("T1 | T2 | A")),  # FP 1: accuracy 0
    ("100", GOLD_100, THINK + "E and K."),  # no relations block: FN 2
    ("200", GOLD_200, "<relations>\nnone\n</relations>"),  # no reasoning: no answer
]
"""(pmid, gold, reply) in the order the rollouts finished."""


def extraction_trace(
    pmid: str,
    gold: ExtractionGold,
    reply: str | None,
    *,
    record: bool = True,
    errors: list[dict[str, Any]] | None = None,
    tokens: tuple[int, int] = (900, 60),
) -> dict[str, Any]:
    """One v1 trace of an extraction task; ``record=False`` leaves out ``info["drugprot"]``; ``reply=None``: the
    rollout failed before replying."""
    data = {
        "idx": 0,
        "name": pmid,
        "prompt": "...",
        "system_prompt": "...",
        "pmid": pmid,
        "arg1": "",
        "arg2": "",
        "labels": [],
        "chemical": "",
        "gene": "",
        "with_no_relation": False,
        "versions": None,
        "extraction": gold.as_record(),
        "ceiling": [len(gold.relations), len(gold.relations)],  # every gold relation a candidate
    }
    score = score_extraction(reply, None, gold)
    nodes = [
        {"message": {"role": "system", "content": "..."}, "sampled": False},
        {"parent": 0, "message": {"role": "user", "content": "..."}, "sampled": False},
    ]
    if reply is not None:
        nodes.append({"parent": 1, "message": {"role": "assistant", "content": reply}, "sampled": True})
    return {
        "version": 1,
        "task": {"type": "DrugprotTask", "data": data, "key": pmid, "hash": "h"},
        "nodes": nodes,
        "calls": [{"node": 2, "model": "m", "finish_reason": "stop"}] if reply is not None else [],
        "rewards": {
            "accuracy": {"score": accuracy_term(score), "weight": 1.0},
            "format": {"score": score.format, "weight": PRESETS["accuracy"].format},
        }
        if reply is not None
        else {"accuracy": None, "format": None},
        "metrics": {"answered": float(score.answered)},
        "info": {"drugprot": score.as_info()} if record and reply is not None else {},
        "ok": not errors,
        "errors": errors or [],
        "num_input_tokens": tokens[0] if reply is not None else 0,
        "num_output_tokens": tokens[1] if reply is not None else 0,
    }


def episode(trace: dict[str, Any]) -> str:
    """One ``traces.jsonl`` line."""
    return json.dumps({"id": "e", "task": trace["task"], "ok": True, "errors": [], "traces": [trace]})


def write_v1_run(directory: Path, lines: list[str], *, limit: int | None = None) -> Path:
    """A v1 run dir of extraction traces plus the resolved config (``mode`` extraction)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "traces.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    config = {
        "model": "test-model",
        "env": {"taskset": {"split": "train", "data_path": None, "mode": "extraction", "num_tasks": None}},
        "select": {"limit": limit, "skip": 0, "include": {"idx": []}, "exclude": {"idx": []}},
    }
    (directory / "configs" / "resolved").mkdir(parents=True, exist_ok=True)
    (directory / "configs" / "resolved" / "eval.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def hand_run(directory: Path) -> Path:
    """``HAND_RUN`` as a v1 run dir."""
    return write_v1_run(directory, [episode(extraction_trace(*item)) for item in HAND_RUN])


def legacy_row(pmid: str, gold: ExtractionGold, reply: str) -> dict[str, Any]:
    """One legacy ``results.jsonl`` row of an extraction task, as the legacy ``vf-eval -s`` saves it."""
    score = score_extraction(reply, None, gold)
    return {
        "example_id": 0,
        "prompt": [{"role": "user", "content": "..."}],
        "completion": [{"role": "assistant", "content": reply}],
        "answer": "...",
        "task": "default",
        "info": {
            "key": pmid,
            "pmid": pmid,
            "extraction": gold.as_record(),
            "ceiling": [len(gold.relations), len(gold.relations)],
            "drugprot": score.as_info(),
        },
        "reward": Reward("accuracy").value(score),  # a run of the seed recipe's reward (accuracy + 1/8 x format)
        "accuracy": accuracy_term(score),
        "format": score.format,
        "answered": float(score.answered),
        "token_usage": {"input_tokens": 900, "output_tokens": 60},
    }


def legacy_hand_run(directory: Path) -> Path:
    """``HAND_RUN`` as a legacy run dir (``results.jsonl`` + ``metadata.json``)."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = [legacy_row(*item) for item in HAND_RUN]
    (directory / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    meta = {"env_id": "drugprot", "model": "test-model", "env_args": {"split": "train", "mode": "extraction"}}
    (directory / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return directory
