"""``python -m evidence.step_cost --summary DIR/summary.json --data-path FILE``: what a GRPO step of the recipe spends
on groups that teach, for the standard sampler and the curriculum ``evidence.curriculum_choice`` chose.

Per step of the recipe (``configs/drugprot.toml``: ``batch_size`` rollouts, ``max_completion_tokens``): tokens per
rollout = the mean prompt tokens of the recipe's taskset (system + user prompt through Tekken's BPE, as
``scripts/prompt_lengths.py --bpe`` counts them: run with ``uv run --with mistral-common``; or ``--prompt-tokens N``)
plus the completion tokens (the recipe's cap, and ``--mean-completion N`` when given: an assumed mean); rollouts
generated per trained step = ``batch_size`` times the sandbox's generated rollouts per step over its batch (1 for the
standard sampler; more where a gate drops groups and generates again); the teaching share = the sandbox's share of
generated groups with a non-zero advantage (mean over the steps and the splits of ``DIR/summary.json``, held-out runs).
Tokens on teaching groups = tokens per step × that share; the rest is generation that carries no gradient. Per F1
point: the tokens the sandbox run generated (its rollouts × tokens per rollout) over its held-out F1 gain (end − start,
in points of F1 × 100), mean tokens over mean gain across splits: the sandbox's scale, not an LLM's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import REPO, fail
from drugprot.core.errors import DrugprotError
from evidence.curriculum_choice import STANDARD

CONFIG = REPO / "configs" / "drugprot.toml"
SIDES = {"standard": f"standard ({STANDARD.name})", "curriculum": "chosen curriculum"}
SHARES = ("is_trainable", "start_f1", "end_f1")
"""The fields of a side's outcome (``curriculum_choice._outcome``) that are shares, 0..1 (``rollouts``: a count)."""


class SummaryError(DrugprotError, ValueError):
    """A ``summary.json`` that is not one ``evidence.curriculum_choice`` writes; the message names file and field."""


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_summary(summary: object, source: str) -> dict[str, Any]:
    """``summary`` when it holds every figure ``side_figures`` reads, of the kind it needs: a non-empty ``splits``
    list whose each split has a ``standard`` and a ``curriculum`` outcome with ``rollouts`` >= 1 and the ``SHARES``
    from 0 to 1, and a ``summary.chosen`` object of counts.

    Raises:
        SummaryError: the first field that is missing or wrong, named (``splits[2].curriculum.rollouts``).
    """

    def bad(field: str, value: object, expected: str) -> SummaryError:
        shown = "missing" if value is None else f"{json.dumps(value)[:40]}"
        return SummaryError(
            f"{source}: field {field} is {shown}, expected {expected}; pass the summary.json that python -m "
            "evidence.curriculum_choice writes"
        )

    if not isinstance(summary, dict):
        raise SummaryError(
            f"{source}: a JSON {type(summary).__name__}, expected an object; pass the summary.json that python -m "
            "evidence.curriculum_choice writes"
        )
    splits = summary.get("splits")
    if not isinstance(splits, list) or not splits:
        raise bad("splits", splits, "a non-empty list of splits")
    for i, split in enumerate(splits):
        for side in SIDES:
            outcome = split.get(side) if isinstance(split, dict) else None
            if not isinstance(outcome, dict):
                raise bad(f"splits[{i}].{side}", outcome, "an object")
            rollouts = outcome.get("rollouts")
            if not (_number(rollouts) and rollouts >= 1):  # type: ignore[operator]
                raise bad(f"splits[{i}].{side}.rollouts", rollouts, "a count of rollouts >= 1")
            for key in SHARES:
                value = outcome.get(key)
                if not (_number(value) and 0 <= value <= 1):  # type: ignore[operator]
                    raise bad(f"splits[{i}].{side}.{key}", value, "a share from 0 to 1")
    chosen = summary.get("summary", {}).get("chosen") if isinstance(summary.get("summary"), dict) else None
    if not isinstance(chosen, dict) or not all(
        isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in chosen.values()
    ):
        raise bad("summary.chosen", chosen, "an object of setting name -> count of splits")
    return summary


def recipe_of(config: dict[str, Any]) -> dict[str, Any]:
    """The recipe's step: rollouts per step, group size, completion cap and its taskset fields (from the TOML)."""
    orchestrator = config["orchestrator"]
    return {
        "batch_size": int(orchestrator["batch_size"]),
        "group_size": int(orchestrator["group_size"]),
        "max_completion_tokens": int(orchestrator["train"]["sampling"]["max_completion_tokens"]),
        "taskset": dict(orchestrator["train"]["source"][0]["env"]["taskset"]),
    }


def mean_prompt_tokens(taskset_fields: dict[str, Any], data_path: str) -> float:
    """Mean system + user prompt tokens of the recipe's taskset on ``data_path`` (``scripts/prompt_lengths.py``'s
    Tekken count). Raises ImportError without mistral-common and tiktoken."""
    spec = importlib.util.spec_from_file_location("prompt_lengths", REPO / "scripts" / "prompt_lengths.py")
    assert spec is not None and spec.loader is not None
    lengths = importlib.util.module_from_spec(spec)
    sys.modules["prompt_lengths"] = lengths
    spec.loader.exec_module(lengths)
    encode = lengths.tekken_encoder()
    taskset = lengths.build_taskset(**(taskset_fields | {"data_path": data_path}))
    return float(lengths.count_tokens(taskset, encode).mean)


def side_figures(summary: dict[str, Any], side: str) -> dict[str, float]:
    """Generation per trained step (relative to the standard sampler's on the same split, which generates one batch
    per step), teaching share, sandbox rollouts and held-out F1 gain of one side, means over splits."""
    splits = summary["splits"]
    runs = [split[side] for split in splits]
    return {
        "generation_factor": float(
            np.mean([r["rollouts"] / s["standard"]["rollouts"] for r, s in zip(runs, splits, strict=True)])
        ),
        "teaching_share": float(np.mean([r["is_trainable"] for r in runs])),
        "rollouts": float(np.mean([r["rollouts"] for r in runs])),
        "gain_points": float(np.mean([100 * (r["end_f1"] - r["start_f1"]) for r in runs])),
        "splits": len(runs),
    }


def cost_rows(recipe: dict[str, Any], figures: dict[str, dict[str, float]], prompt: float,
              completions: Sequence[int]) -> list[dict[str, Any]]:  # fmt: skip
    """One row per (side, completion length): tokens per step, on teaching groups and wasted; tokens per F1 point."""
    rows = []
    for completion in completions:
        per_rollout = prompt + completion
        for side, f in figures.items():
            generated = recipe["batch_size"] * f["generation_factor"]
            step = generated * per_rollout
            run = f["rollouts"] * per_rollout
            per_point = run / f["gain_points"] if f["gain_points"] > 0 else None
            rows.append({
                "side": side, "completion_tokens": completion, "tokens_per_rollout": per_rollout,
                "rollouts_per_step": generated, "tokens_per_step": step, "teaching_share": f["teaching_share"],
                "teaching_tokens_per_step": step * f["teaching_share"],
                "wasted_tokens_per_step": step * (1 - f["teaching_share"]),
                "gain_points": f["gain_points"], "sandbox_tokens_per_point": per_point,
                "sandbox_teaching_tokens_per_point": per_point * f["teaching_share"] if per_point else None,
            })  # fmt: skip
    return rows


def _m(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.2f}M"


def format_rows(rows: Sequence[dict[str, Any]], prompt: float, recipe: dict[str, Any]) -> str:
    lines = [
        f"recipe step: {recipe['batch_size']} rollouts ({recipe['batch_size'] // recipe['group_size']} groups of "
        f"{recipe['group_size']}); prompt mean {prompt:,.0f} BPE tokens",
        "| sampler | completion tokens | rollouts generated per step | tokens per step | in groups with non-zero "
        "advantage | teaching / wasted tokens per step | sandbox F1 gain (points) | sandbox tokens per F1 point "
        "(teaching) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        per_point = _m(r["sandbox_tokens_per_point"])
        lines.append(
            f"| {SIDES[r['side']]} | {r['completion_tokens']:,} | {r['rollouts_per_step']:,.0f} | "
            f"{_m(r['tokens_per_step'])} | {r['teaching_share']:.3f} | {_m(r['teaching_tokens_per_step'])} / "
            f"{_m(r['wasted_tokens_per_step'])} | {r['gain_points']:+.1f} | {per_point} "
            f"({_m(r['sandbox_teaching_tokens_per_point'])}) |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.step_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--summary", required=True, help="summary.json of python -m evidence.curriculum_choice")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data-path", help="DrugProt data: count the recipe's prompt tokens (needs mistral-common)")
    source.add_argument("--prompt-tokens", type=float, help="mean prompt tokens per rollout, counted elsewhere")
    parser.add_argument("--config", default=str(CONFIG), help="the recipe's TOML (default configs/drugprot.toml)")
    parser.add_argument("--mean-completion", type=int, help="also a row at this assumed mean completion length")
    args = parser.parse_args(argv)
    if args.prompt_tokens is not None and not (_number(args.prompt_tokens) and args.prompt_tokens > 0):
        fail(parser.prog, f"--prompt-tokens must be a finite number of tokens above 0, got {args.prompt_tokens}")
    if args.mean_completion is not None and args.mean_completion < 1:
        fail(parser.prog, f"--mean-completion must be a whole number of tokens >= 1, got {args.mean_completion}")
    try:
        summary = json.loads(Path(args.summary).read_text(encoding="utf-8"))
        config = tomllib.loads(Path(args.config).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(parser.prog, f"cannot read {exc}; pass the summary.json of evidence.curriculum_choice and a recipe TOML")
    try:
        summary = check_summary(summary, f"--summary {args.summary}")
    except SummaryError as exc:
        fail(parser.prog, exc)
    try:
        recipe = recipe_of(config)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        fail(parser.prog, f"--config {args.config}: not a prime-rl recipe like configs/drugprot.toml ({exc!r} missing "
             "or malformed in orchestrator.batch_size, group_size, train.sampling or train.source)")  # fmt: skip
    if args.data_path is not None:
        try:
            prompt = mean_prompt_tokens(recipe["taskset"], args.data_path)
        except ImportError as exc:
            fail(parser.prog, f"--data-path needs mistral-common and tiktoken ({exc}); uv run --with mistral-common")
    else:
        prompt = args.prompt_tokens
    figures = {side: side_figures(summary, side) for side in SIDES}
    completions = [recipe["max_completion_tokens"], *([args.mean_completion] if args.mean_completion else [])]
    rows = cost_rows(recipe, figures, prompt, completions)
    chosen = summary["summary"]["chosen"]
    print(f"chosen curriculum per split: {', '.join(f'{name} {count}' for name, count in chosen.items())}")
    print(format_rows(rows, prompt, recipe))
    return 0


if __name__ == "__main__":
    sys.exit(main())
