"""Rebuilds ``synthetic-prime-rl-run/metrics.jsonl``, a SYNTHETIC prime-rl training log for trying ``drugprot curves``.

No model was trained to make it: the numbers come from a seeded random walk toward a plateau, shaped like a short
RL run on drugprot (accuracy rising from ~0.3, format rising to ~1, completions shortening). The lines have the
layout prime-rl 559b447's file monitor writes (``drugprot.evaluation.curves`` documents it): per step the trainer's
line (loss, learning rate) and the orchestrator's train line (``train/agg/effective/agent/...``), and every
``EVAL_EVERY`` steps an eval line for ``drugprot-validation`` whose ``step`` is a float, as prime-rl writes it.

Run ``python -m drugprot.tools.sample.build_metrics`` after editing; ``tests/tools/sample/test_build_metrics.py`` checks
that the committed file is what this script writes and what ``drugprot curves`` reads from it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

RUN_DIR = Path(__file__).with_name("synthetic-prime-rl-run")
METRICS = RUN_DIR / "metrics.jsonl"
STEPS = 60
EVAL_EVERY = 10
T0 = 1_764_763_200.0  # a fixed clock, so the file is the same at every rebuild
_TRAIN = "train/agg/effective/agent"
_EVAL = "eval/drugprot-validation/effective/agent"


def _episode(prefix: str, accuracy: float, fmt: float, tokens: float) -> dict[str, float]:
    """The orchestrator's mean episode metrics of drugprot (reward = accuracy + 0.1 x format)."""
    return {
        f"{prefix}/reward/mean": round(accuracy + 0.1 * fmt, 4),
        f"{prefix}/rewards/accuracy/mean": round(accuracy, 4),
        f"{prefix}/rewards/format/mean": round(fmt, 4),
        f"{prefix}/metrics/answered/mean": round(min(1.0, fmt + 0.02), 4),
        f"{prefix}/num_output_tokens/mean": round(tokens, 1),
    }


def metrics_lines(steps: int = STEPS, seed: int = 0) -> list[dict[str, Any]]:
    """The file's lines, in the order prime-rl appends them."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = []
    for step in range(steps):
        progress = 1 - 0.93**step  # 0 at step 0, near 1 by the last steps
        accuracy = min(1.0, max(0.0, 0.3 + 0.35 * progress + rng.gauss(0, 0.04)))
        fmt = min(1.0, max(0.0, 0.8 + 0.2 * progress + rng.gauss(0, 0.02)))
        tokens = 900 - 420 * progress + rng.gauss(0, 25)
        time = T0 + 60 * step
        lines.append({"step": step, "time": time, "loss/mean": round(0.02 * rng.random(), 5), "optim/lr": 1e-6})
        lines.append({"step": step, "time": time + 1, **_episode(_TRAIN, accuracy, fmt, tokens)})
        if step % EVAL_EVERY == 0 or step == steps - 1:
            eval_accuracy = min(1.0, max(0.0, 0.28 + 0.3 * progress + rng.gauss(0, 0.02)))
            eval_fmt = min(1.0, 0.82 + 0.18 * progress)
            eval_line = _episode(_EVAL, eval_accuracy, eval_fmt, tokens + 30)
            lines.append({"step": float(step), "time": time + 2, **eval_line})
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
