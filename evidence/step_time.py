"""``python -m evidence.step_time``: the trainer's seconds per step of ``configs/drugprot.toml`` in each phase of a
run, before and after prime-rl drops every group whose rewards are all equal (issue 41).

Per step: ``batch_size`` rollouts of (mean prompt tokens + completion tokens) each; the shipped share is the share of
rollouts prime-rl sends to the trainer: its ``filter_zero_advantages`` drops the tokens of a rollout whose advantage
is exactly 0.0, and the advantage is ``rewards - rewards.mean()`` in torch float32 (``orchestrator/algo/grpo.py`` at
559b447). "Before" is today's rewards: an all-equal group of 8 at 1.1, -1.0 or 0.0 gets exactly 0.0 and is dropped,
one at 0.1, -0.4, -0.9 or -1.4 gets 7.5e-9 to 1.2e-7 (``LEAKS``) and is shipped; "after" drops every all-equal group.
The shares are the CPU GRPO sandbox's (``evidence.rl_sim``, pair utility with ``negatives = "all"``, the recipe, per
run's first 10 %, middle 80 % and last 10 % of steps, mean over the PMID splits; its per-step
``zero_advantage/at/<reward>`` gives each all-equal group's reward). Trainer seconds per step = shipped tokens / the
measured micro-batch throughput + the measured optimizer step (``bench.trainer_step``'s result on the H200 for the
shipped trainer setting, at the recipe's ``seq_len``); hours of the default run = its ``max_steps`` split 10 / 80 / 10
% over the phases.

"Before" needs a sandbox run with the rewards from before the fix (the committed ``evidence/step_time.json`` is one,
from the tree of commit 7db16fe): with the fixed rewards no all-equal group is at a value of ``LEAKS``, so its
"before" equals its "after".

Two steps, so the docs block (docs/training/step-time.md) is generated from committed numbers and checked by a test:

    uv run python -m evidence.rl_sim --data-path $D --out SIM --classes cues --recipes pair-utility-all --jobs 2
    uv run --with mistral-common python -m evidence.step_time measure --sim SIM --data-path $D \\
        --json evidence/step_time.json
    uv run python -m evidence.step_time render --write docs/training/step-time.md  # --check: exit 1 when stale
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import REPO, fail
from drugprot.core.outputs import OutputError, OutputSpec, check_outputs, write_text_atomic

SUMMARY = REPO / "evidence" / "step_time.json"
CONFIG = REPO / "configs" / "drugprot.toml"
TRAINER = REPO / "bench" / "results" / "trainer_step_packed2048.json"
README = REPO / "docs" / "training" / "step-time.md"
RECIPE = "pair-utility-all"
AGENT = "train/agg/all/agent"  # the sandbox's zero-advantage diagnostics are over all rollouts (evidence.rl_sim)
TRAINABLE_KEY = f"{AGENT}/is_trainable/mean"
AT_PREFIX = f"{AGENT}/zero_advantage/at/"
# Today's rewards whose all-equal group of 8 prime-rl 559b447's float32 advantage does not zero exactly (measured in
# torch: tests/tools/adapters/test_bench_trainer_step_cpu.py checks it); every other all-equal group is dropped.
LEAKS = ("0.1", "-0.4", "-0.9", "-1.4")
PHASES = (("first", "first 10 %", 0.1), ("middle", "middle 80 %", 0.8), ("last", "last 10 %", 0.1))
PHASE_KEYS = tuple(key for key, _, _ in PHASES)
BEGIN, END = "<!-- step-time -->", "<!-- /step-time -->"


def phase_shares(metrics_lines: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """One run's first 10 % / middle / last 10 % of steps: the share of rollouts in all-equal groups (``zero``) and
    in all-equal groups at a reward in ``LEAKS`` (``leaked``), means over the phase's steps."""
    steps = [line for line in metrics_lines if TRAINABLE_KEY in line]
    tenth = max(1, len(steps) // 10)
    out = {}
    for phase, part in (("first", steps[:tenth]), ("middle", steps[tenth:-tenth]), ("last", steps[-tenth:])):
        zero = [1 - line[TRAINABLE_KEY] for line in part]
        leaked = [sum(line.get(AT_PREFIX + v + "/mean", 0.0) for v in LEAKS) for line in part]
        out[phase] = {"zero": float(np.mean(zero)), "leaked": float(np.mean(leaked))}
    return out


def measure(sim: Path, prompt_tokens: float, command: str) -> dict[str, Any]:
    """The summary the block is rendered from: per phase, mean and sd over the sandbox runs."""
    runs = sorted(sim.glob(f"*/{RECIPE}-split*/metrics.jsonl"))
    if not runs:
        raise FileNotFoundError(f"--sim {sim}: no */{RECIPE}-split*/metrics.jsonl; run evidence.rl_sim first")
    per_run = [phase_shares([json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x]) for p in runs]
    if not any(k.startswith(AT_PREFIX) for k in json.loads(runs[0].read_text(encoding="utf-8").splitlines()[1])):
        raise ValueError(f"--sim {sim}: no {AT_PREFIX}* keys; rerun evidence.rl_sim (it logs them since issue 41)")
    phases: dict[str, dict[str, dict[str, float]]] = {}
    for phase, _, _ in PHASES:
        for key in ("zero", "leaked"):
            values = [r[phase][key] for r in per_run]
            sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
            phases.setdefault(phase, {})[key] = {"mean": float(np.mean(values)), "sd": sd}
    return {"command": command, "recipe": RECIPE, "runs": len(runs), "prompt_tokens": prompt_tokens, "phases": phases}


def trainer_rate(result: dict[str, Any], seq_len: int) -> dict[str, Any]:
    """The result's row at ``seq_len``: micro-batch tokens/s and optimizer seconds."""
    rows = [r for r in result["runs"] if r["seq_len"] == seq_len and not r["oom"]]
    if not rows:
        raise ValueError(f"the trainer result has no row at seq_len {seq_len}")
    row = rows[0]
    if "micro_batch_tokens_per_s" not in row:  # a result from before the split: its whole step's rate
        return {"tokens_per_s": row["tokens_per_s"], "optimizer_s": 0.0, "split": False}
    return {"tokens_per_s": row["micro_batch_tokens_per_s"], "optimizer_s": row["optimizer_s"], "split": True}


def rows(summary: dict[str, Any], config: dict[str, Any], rate: dict[str, Any]) -> list[dict[str, Any]]:
    """Per completion length (the recipe's cap, the seed run's mean of 830) and phase, before and after."""
    orchestrator = config["orchestrator"]
    batch = int(orchestrator["batch_size"])
    steps = int(config["max_steps"])
    out = []
    for completion in (int(orchestrator["train"]["sampling"]["max_completion_tokens"]), 830):
        per_rollout = summary["prompt_tokens"] + completion
        for phase, label, part in PHASES:
            zero = summary["phases"][phase]["zero"]["mean"]
            leaked = summary["phases"][phase]["leaked"]["mean"]
            row: dict[str, Any] = {"completion": completion, "phase": label, "steps": round(steps * part),
                                   "zero": zero, "zero_sd": summary["phases"][phase]["zero"]["sd"]}  # fmt: skip
            for side, shipped in (("before", 1 - zero + leaked), ("after", 1 - zero)):
                tokens = batch * shipped * per_rollout
                seconds = tokens / rate["tokens_per_s"] + rate["optimizer_s"]
                row[side] = {"shipped": shipped, "tokens": tokens, "seconds": seconds}
            out.append(row)
    return out


def render(summary: dict[str, Any], config: dict[str, Any], result: dict[str, Any]) -> str:
    seq_len = int(config["seq_len"])
    rate = trainer_rate(result, seq_len)
    table = rows(summary, config, rate)
    lines = [
        f"Sandbox: {summary['runs']} runs of `{summary['recipe']}` (`{summary['command']}`); prompt mean "
        f"{summary['prompt_tokens']:,.0f} BPE tokens; trainer at `seq_len` {seq_len:,}: {rate['tokens_per_s']:,.0f} "
        + (
            f"tokens/s per micro-batch + {rate['optimizer_s']:.2f} s optimizer step"
            if rate["split"]
            else f"tokens/s over a step of {result['runs'][0]['micro_batches']} micro-batches and its optimizer step"
        )
        + f" (`{result['command']}`, {result['machine']['gpu']}).",
        "",
        "| completion | phase (steps of 100) | rollouts in all-equal groups | shipped before / after | tokens per step "
        "before / after | trainer s/step before / after |",
        "|---|---|---|---|---|---|",
    ]
    hours: dict[int, dict[str, float]] = {}
    for r in table:
        h = hours.setdefault(r["completion"], {"before": 0.0, "after": 0.0})
        for side in h:
            h[side] += r["steps"] * r[side]["seconds"] / 3600
        b, a = r["before"], r["after"]
        lines.append(
            f"| {r['completion']:,} | {r['phase']} ({r['steps']}) | {r['zero']:.3f} ± {r['zero_sd']:.3f} | "
            f"{b['shipped']:.3f} / {a['shipped']:.3f} | {b['tokens'] / 1e3:,.0f}k / {a['tokens'] / 1e3:,.0f}k | "
            f"{b['seconds']:,.0f} / {a['seconds']:,.0f} |"
        )
    for completion, h in hours.items():
        lines.append(
            f"| {completion:,} | **default run, {int(config['max_steps'])} steps: trainer hours** | | | | "
            f"**{h['before']:.2f} h / {h['after']:.2f} h** |"
        )
    return "\n".join(lines)


def splice(text: str, block: str) -> str:
    """``text`` with the part between the step-time markers replaced by ``block``."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError(f"expected one {BEGIN} ... {END} pair")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def current_block() -> str:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    summary = json.loads(SUMMARY.read_text(encoding="utf-8"))
    result = json.loads(TRAINER.read_text(encoding="utf-8"))
    return render(summary, config, result)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.step_time", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="the sandbox's shares per phase and the prompt tokens -> --json")
    m.add_argument("--sim", required=True, help="an evidence.rl_sim --out directory with pair-utility-all runs")
    src = m.add_mutually_exclusive_group(required=True)
    src.add_argument("--data-path", help="count the recipe's prompt tokens here (needs mistral-common)")
    src.add_argument("--prompt-tokens", type=float, help="mean prompt tokens per rollout, counted elsewhere")
    m.add_argument("--json", required=True, help="write the summary here")
    m.add_argument("--overwrite", action="store_true", help="replace an existing --json file")
    r = sub.add_parser("render", help="print the docs block; --write or --check docs/training/step-time.md")
    how = r.add_mutually_exclusive_group()
    how.add_argument("--write", help="replace the block in this file")
    how.add_argument("--check", help="exit 1 when this file's block differs")
    args = parser.parse_args(argv)
    prog = "python -m evidence.step_time"
    if args.cmd == "measure":
        try:
            check_outputs([OutputSpec.of("--json", args.json)], [], overwrite=args.overwrite)
        except OutputError as exc:
            fail(prog, str(exc))
        prompt = args.prompt_tokens
        if prompt is None:
            from evidence.step_cost import mean_prompt_tokens, recipe_of

            recipe = recipe_of(tomllib.loads(CONFIG.read_text(encoding="utf-8")))
            prompt = mean_prompt_tokens(recipe["taskset"], args.data_path)
        source = "--data-path D" if args.data_path else f"--prompt-tokens {args.prompt_tokens:g}"
        shown = Path(args.json).name if Path(args.json).is_absolute() else args.json
        command = f"python -m evidence.step_time measure --sim SIM {source} --json {shown}"
        try:
            summary = measure(Path(args.sim), round(prompt, 1), command)
        except (OSError, ValueError) as exc:
            fail(prog, str(exc))
        write_text_atomic(Path(args.json), json.dumps(summary, indent=2) + "\n")
        print(json.dumps(summary, indent=2))
        return 0
    block = current_block()
    if args.write or args.check:
        path = Path(args.write or args.check)
        text = path.read_text(encoding="utf-8")
        new = splice(text, block)
        if args.check:
            if new != text:
                print(f"{prog}: {path}: the step-time block is stale; rerun with --write", file=sys.stderr)
                return 1
            return 0
        write_text_atomic(path, new)
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
