"""Rebuilds ``synthetic-prime-rl-run/metrics.jsonl``, a SYNTHETIC prime-rl training log for trying ``drugprot curves``.

No model was trained to make it: the numbers come from a seeded random walk toward a plateau, shaped like a short
RL run on drugprot with the default recipe (``reward = utility + 0.125 x format``, pair tasks with NO-RELATION
candidates): the share of right answers rising from ~0.3, format rising to ~1, completions shortening, fewer groups
carrying a gradient as the policy sharpens. The lines have the layout prime-rl 559b447's file monitor writes
(``drugprot.evaluation.curves`` documents it): per step the trainer's line (loss, learning rate) and the
orchestrator's train line in both scopes (``train/agg/all/agent/...`` over every rollout,
``train/agg/effective/agent/...`` over the groups whose rewards differ, the ones prime-rl's zero-advantage filter
ships) with ``progress/tasks``, and every ``EVAL_EVERY`` steps an eval line for ``drugprot-validation`` (both scopes,
the same numbers: no rollout fails) whose ``step`` is a float, as prime-rl writes it.

Each step draws ``GROUPS`` groups of ``GROUP_SIZE`` whole rollouts (a group is all-equal, one rollout repeated, with a
share that grows as the policy sharpens; the others draw each rollout), each with its official cells, and logs their
means as prime-rl's ``Stat.mean`` does (``sum / len``), so the official micro-F1 that ``drugprot curves`` computes
from the cells is that of the scope's rollouts: the reward terms as prime-rl logs them (each times its weight:
``rewards/accuracy/mean`` is 0 under the default weights), and the unweighted metrics ``correct``, ``official_tp``,
``official_fp``, ``official_fn`` and ``answered``, plus ``is_trainable`` / ``is_admitted``.

Run ``python -m drugprot.tools.sample.build_metrics`` after editing; ``tests/tools/sample/test_build_metrics.py`` checks
that the committed file is what this script writes and what ``drugprot curves`` reads from it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from drugprot.core.rewards import DEFAULT_WEIGHTS, METRIC_NAMES, Costs

RUN_DIR = Path(__file__).with_name("synthetic-prime-rl-run")
METRICS = RUN_DIR / "metrics.jsonl"
STEPS = 60
EVAL_EVERY = 10
GROUPS = 32
GROUP_SIZE = 8
TRAIN_ROLLOUTS = GROUPS * GROUP_SIZE
EVAL_ROLLOUTS = 500
POSITIVE_SHARE = 0.3
"""The share of pair tasks that are gold pairs (one gold type each); the others are NO-RELATION candidates."""
T0 = 1_764_763_200.0  # a fixed clock, so the file is the same at every rebuild
_TRAIN = "train/agg/{subset}/agent"
_EVAL = "eval/drugprot-validation/{subset}/agent"


def _rollout(rng: random.Random, skill: float, fmt: float) -> dict[str, float]:
    """One pair rollout's unweighted terms: right with probability ``skill``; a wrong answer names a wrong type half
    the time on a gold pair (FP and FN) and on a NO-RELATION candidate (FP), else no relation (FN on a gold pair)."""
    positive, right = rng.random() < POSITIVE_SHARE, rng.random() < skill
    states = not right and rng.random() < 0.5
    tp, fp, fn = (1 if positive and right else 0), int(states), (1 if positive and not right else 0)
    formatted = float(rng.random() < fmt)
    return {"correct": float(right), "official_tp": tp, "official_fp": fp, "official_fn": fn, "format": formatted,
            "answered": float(formatted or rng.random() < 0.5), "utility": Costs().utility(tp, fp, fn)}  # fmt: skip


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)  # prime-rl's Stat.mean


def _episode(prefix: str, rollouts: list[dict[str, float]], tokens: float) -> dict[str, float]:
    """The orchestrator's mean episode metrics of drugprot's rollouts (reward = utility + 0.1 x format)."""
    terms = {name: [r[name] for r in rollouts] for name in rollouts[0]}
    weighted = {name: [v * DEFAULT_WEIGHTS.of(name) for v in terms[name]] for name in ("utility", "format")}
    rewards = [u + f for u, f in zip(weighted["utility"], weighted["format"], strict=True)]
    return {
        f"{prefix}/reward/mean": _mean(rewards),
        f"{prefix}/rewards/accuracy/mean": _mean([v * DEFAULT_WEIGHTS.accuracy for v in terms["correct"]]),
        f"{prefix}/rewards/utility/mean": _mean(weighted["utility"]),
        f"{prefix}/rewards/format/mean": _mean(weighted["format"]),
        **{f"{prefix}/metrics/{name}/mean": _mean(terms[name]) for name in ("answered", *METRIC_NAMES)},
        f"{prefix}/num_output_tokens/mean": round(tokens, 1),
    }


def _reward(rollout: dict[str, float]) -> float:
    return rollout["utility"] * DEFAULT_WEIGHTS.utility + rollout["format"] * DEFAULT_WEIGHTS.format


def _train_step(rng: random.Random, skill: float, fmt: float, equal_share: float, tokens: float) -> dict[str, float]:
    """The orchestrator's train metrics of one step, both scopes: ``GROUPS`` groups, each all-equal (one rollout
    repeated) with probability ``equal_share``, else ``GROUP_SIZE`` rollouts drawn (all-equal too if they tie)."""
    groups = []
    for _ in range(GROUPS):
        if rng.random() < equal_share:
            groups.append([_rollout(rng, skill, fmt)] * GROUP_SIZE)
        else:
            groups.append([_rollout(rng, skill, fmt) for _ in range(GROUP_SIZE)])
    mixed = [group for group in groups if len({_reward(r) for r in group}) > 1]
    rollouts = [r for group in groups for r in group]
    shipped = [r for group in mixed for r in group]
    metrics = _episode(_TRAIN.format(subset="all"), rollouts, tokens)
    metrics[_TRAIN.format(subset="all") + "/is_trainable/mean"] = len(shipped) / len(rollouts)
    if shipped:  # prime-rl logs no line for an empty batch; with 32 groups a step is never empty here
        metrics |= _episode(_TRAIN.format(subset="effective"), shipped, tokens)
        metrics[_TRAIN.format(subset="effective") + "/is_trainable/mean"] = 1.0
    for subset in ("all", "effective"):
        metrics[_TRAIN.format(subset=subset) + "/is_admitted/mean"] = 1.0  # no admission gate: every rollout admitted
    return metrics | {"progress/rollouts": len(rollouts), "progress/tasks": GROUPS}


def metrics_lines(steps: int = STEPS, seed: int = 0) -> list[dict[str, Any]]:
    """The file's lines, in the order prime-rl appends them."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = []
    for step in range(steps):
        progress = 1 - 0.93**step  # 0 at step 0, near 1 by the last steps
        skill = min(1.0, max(0.0, 0.3 + 0.35 * progress + rng.gauss(0, 0.04)))
        fmt = min(1.0, max(0.0, 0.8 + 0.2 * progress + rng.gauss(0, 0.02)))
        tokens = 900 - 420 * progress + rng.gauss(0, 25)
        equal_share = min(1.0, max(0.0, 0.3 + 0.45 * progress + rng.gauss(0, 0.03)))
        time = T0 + 60 * step
        train = _train_step(rng, skill, fmt, equal_share, tokens)
        lines.append({"step": step, "time": time, "loss/mean": round(0.02 * rng.random(), 5), "optim/lr": 1e-6})
        lines.append({"step": step, "time": time + 1, **train})
        if step % EVAL_EVERY == 0 or step == steps - 1:
            eval_skill = min(1.0, max(0.0, 0.28 + 0.3 * progress + rng.gauss(0, 0.02)))
            eval_fmt = min(1.0, 0.82 + 0.18 * progress)
            rollouts = [_rollout(rng, eval_skill, eval_fmt) for _ in range(EVAL_ROLLOUTS)]
            scopes = {k: v for subset in ("all", "effective") for k, v in
                      _episode(_EVAL.format(subset=subset), rollouts, tokens + 30).items()}  # fmt: skip
            lines.append({"step": float(step), "time": time + 2, **scopes})
    return lines


def render(lines: list[dict[str, Any]]) -> str:
    """The file's text: one JSON object per line, as prime-rl's ``json.dumps(row) + "\\n"``."""
    return "".join(json.dumps(line) + "\n" for line in lines)


def main() -> None:
    RUN_DIR.mkdir(exist_ok=True)
    METRICS.write_text(render(metrics_lines()), encoding="utf-8")
    print(f"wrote {METRICS}")


if __name__ == "__main__":
    main()
