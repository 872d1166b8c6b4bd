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
import importlib.util
import json
import math
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import REPO, check_outputs, fail, load_data
from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import write_text_atomic

SUMMARY = REPO / "evidence" / "step_time.json"
ONE_PASS = REPO / "evidence" / "step_time_one_pass.json"
"""The same measure on a one-pass sandbox run (``evidence.rl_sim --one-pass``: the recipe's regime, each task drawn
once); the block gives the trainer-busy hours after the fix over the two phase mappings."""
NOT_COUNTED = (
    "the adapter broadcast every step (2.3 GB written by the trainer, loaded by vLLM), the checkpoints (~111 GB at "
    "steps 50 and 100), packing loss, the evals, and generation, which likely dominates the step once the trainer "
    "ships only the groups that teach"
)
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
MIN_STEPS = 3
"""The fewest training steps a sandbox run needs: one in each phase (``phase_shares``: first 10 %, middle, last
10 %)."""
TOKENIZER_MODULES = {"mistral_common": "mistral-common", "tiktoken": "tiktoken"}
"""What ``--data-path`` counts prompt tokens with (``scripts/prompt_lengths.py``'s Tekken count): module, package."""


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


def sandbox_runs(sim: Path) -> list[Path]:
    """The ``metrics.jsonl`` of every ``RECIPE`` run under an ``evidence.rl_sim --out`` folder, sorted."""
    return sorted(sim.glob(f"*/{RECIPE}-split*/metrics.jsonl"))


def _share(value: Any) -> bool:
    """True for a share: a real number from 0 to 1 (NaN, infinities, strings and booleans are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def read_run(path: Path) -> list[dict[str, Any]]:
    """The lines of one sandbox run's ``metrics.jsonl``, checked: every line a JSON object whose trainable share and
    ``AT_PREFIX`` shares are numbers from 0 to 1, at least one ``AT_PREFIX`` share in the run, and at least
    ``MIN_STEPS`` training steps (so no phase is empty and no mean is NaN).

    Raises:
        OSError: the file cannot be read.
        ValueError: what is wrong, naming the file and line.
    """
    lines: list[dict[str, Any]] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{path} line {number}: not JSON ({type(exc).__name__})") from None
        if not isinstance(value, dict):
            raise ValueError(f"{path} line {number}: not a JSON object")
        for key, share in value.items():
            if (key == TRAINABLE_KEY or key.startswith(AT_PREFIX)) and not _share(share):
                shown = repr(share) if len(repr(share)) <= 40 else repr(share)[:37] + "..."
                raise ValueError(f"{path} line {number}: {key} is {shown}, expected a share from 0 to 1")
        lines.append(value)
    if not any(key.startswith(AT_PREFIX) for line in lines for key in line):
        raise ValueError(f"{path}: no {AT_PREFIX}* keys; rerun evidence.rl_sim (it logs them since issue 41)")
    steps = sum(TRAINABLE_KEY in line for line in lines)
    if steps < MIN_STEPS:
        raise ValueError(
            f"{path}: {steps} training step{'s' if steps != 1 else ''}, fewer than the {MIN_STEPS} that put one in "
            "each phase (first 10 %, middle 80 %, last 10 %); rerun evidence.rl_sim with more --steps"
        )
    return lines


def read_sandbox(sim: Path) -> list[list[dict[str, Any]]]:
    """Every ``RECIPE`` run under ``sim``, each read by ``read_run``.

    Raises:
        FileNotFoundError: no such run under ``sim``.
        OSError, ValueError: as ``read_run``.
    """
    runs = sandbox_runs(sim)
    if not runs:
        raise FileNotFoundError(f"--sim {sim}: no */{RECIPE}-split*/metrics.jsonl; run evidence.rl_sim first")
    return [read_run(path) for path in runs]


def measure(sim: Path, prompt_tokens: float, command: str) -> dict[str, Any]:
    """The summary the block is rendered from: per phase, mean and sd over the sandbox runs (``read_sandbox``)."""
    return summarize(read_sandbox(sim), prompt_tokens, command)


def summarize(sandbox: Sequence[Sequence[dict[str, Any]]], prompt_tokens: float, command: str) -> dict[str, Any]:
    """The summary of runs read by ``read_sandbox``: per phase, mean and sd over the runs."""
    per_run = [phase_shares(lines) for lines in sandbox]
    phases: dict[str, dict[str, dict[str, float]]] = {}
    for phase, _, _ in PHASES:
        for key in ("zero", "leaked"):
            values = [r[phase][key] for r in per_run]
            sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
            phases.setdefault(phase, {})[key] = {"mean": float(np.mean(values)), "sd": sd}
    return {
        "command": command,
        "recipe": RECIPE,
        "runs": len(sandbox),
        "prompt_tokens": prompt_tokens,
        "phases": phases,
    }


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
        "Multi-pass (the sandbox's standard: 600 steps of 32 tasks x 8 over the same train tasks, mapped onto the "
        "recipe's 100 steps by phase), before and after the fix:",
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
            f"| {completion:,} | **default run, {int(config['max_steps'])} steps: trainer-busy hours** | | | | "
            f"**{h['before']:.2f} h / {h['after']:.2f} h** |"
        )
    return "\n".join(lines)


def after_hours(summary: dict[str, Any], config: dict[str, Any], rate: dict[str, Any]) -> dict[int, float]:
    """Per completion length, the default run's trainer-busy hours after the fix (every all-equal group dropped)."""
    hours: dict[int, float] = {}
    for r in rows(summary, config, rate):
        hours[r["completion"]] = hours.get(r["completion"], 0.0) + r["steps"] * r["after"]["seconds"] / 3600
    return hours


def one_pass_lines(
    one_pass: dict[str, Any], multi: dict[str, Any], config: dict[str, Any], rate: dict[str, Any]
) -> list[str]:
    """The one-pass mapping's shares and seconds after the fix, and the range of trainer-busy hours over the two
    mappings, with what the figure does not count."""
    lines = [
        "",
        f"One pass (the recipe's regime: `evidence.rl_sim --one-pass`, {one_pass['runs']} runs of "
        f"`{one_pass['recipe']}`, each task drawn once; `{one_pass['command']}`), after the fix:",
        "",
        "| completion | phase (steps of 100) | rollouts in all-equal groups | shipped after | trainer s/step after |",
        "|---|---|---|---|---|",
    ]
    for r in rows(one_pass, config, rate):
        lines.append(
            f"| {r['completion']:,} | {r['phase']} ({r['steps']}) | {r['zero']:.3f} ± {r['zero_sd']:.3f} | "
            f"{r['after']['shipped']:.3f} | {r['after']['seconds']:,.0f} |"
        )
    one, many = after_hours(one_pass, config, rate), after_hours(multi, config, rate)
    ranges = "; ".join(
        f"{c:,}-token completions {min(one[c], many[c]):.2f}–{max(one[c], many[c]):.2f} h"
        for c in sorted(one, reverse=True)
    )
    lines += [
        "",
        f"**Trainer-busy hours after the fix, default run of {int(config['max_steps'])} steps: {ranges}** (one-pass "
        "and multi-pass phase mappings). Not counted: " + NOT_COUNTED + ".",
    ]
    return lines


def splice(text: str, block: str) -> str:
    """``text`` with the part between the step-time markers replaced by ``block``.

    Raises:
        ValueError: ``text`` has not exactly one ``BEGIN`` marker followed by one ``END`` marker.
    """
    begins, ends = text.count(BEGIN), text.count(END)
    if begins != 1 or ends != 1 or text.index(END) < text.index(BEGIN):
        found = f"{begins} {BEGIN} and {ends} {END}" if begins != 1 or ends != 1 else f"{END} before {BEGIN}"
        raise ValueError(f"expected one {BEGIN} line and, after it, one {END} line; found {found}")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def current_block() -> str:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    summary = json.loads(SUMMARY.read_text(encoding="utf-8"))
    result = json.loads(TRAINER.read_text(encoding="utf-8"))
    block = render(summary, config, result)
    if ONE_PASS.exists():
        one_pass = json.loads(ONE_PASS.read_text(encoding="utf-8"))
        rate = trainer_rate(result, int(config["seq_len"]))
        block += "\n" + "\n".join(one_pass_lines(one_pass, summary, config, rate))
    return block


def token_count_problem(value: float) -> str | None:
    """Why ``value`` is not a mean prompt length (a finite number of tokens above 0), or None when it is one."""
    return None if math.isfinite(value) and value > 0 else f"{value!r} is not a finite number of tokens above 0"


def missing_tokenizer() -> str | None:
    """The package of the first of ``TOKENIZER_MODULES`` that is not installed, or None."""
    return next((pkg for name, pkg in TOKENIZER_MODULES.items() if importlib.util.find_spec(name) is None), None)


def _measure(args: argparse.Namespace, prog: str) -> int:
    """``measure``: every input and output checked before any work (one line, exit 2), then the sandbox read and
    checked, then the prompt tokens counted (the slow part), then the summary written."""
    if args.prompt_tokens is not None and (problem := token_count_problem(args.prompt_tokens)):
        fail(prog, f"--prompt-tokens: {problem}; pass the mean prompt tokens per rollout")
    sim = Path(args.sim)
    inputs = [CONFIG, args.data_path, sim, *sandbox_runs(sim)]
    check_outputs(prog, [("--json", args.json)], inputs=inputs, overwrite=args.overwrite)  # an input: never
    if args.data_path is not None and (missing := missing_tokenizer()):
        fail(
            prog,
            f"--data-path counts prompt tokens with mistral-common's Tekken and tiktoken, and {missing} is not "
            "installed: run it with `uv run --with mistral-common`, or pass --prompt-tokens N",
        )
    try:
        sandbox = read_sandbox(sim)
    except (OSError, ValueError) as exc:
        fail(prog, str(exc))
    prompt = args.prompt_tokens
    if prompt is None:
        from evidence.step_cost import mean_prompt_tokens, recipe_of

        recipe = recipe_of(tomllib.loads(CONFIG.read_text(encoding="utf-8")))
        load_data(prog, args.data_path, split=recipe["taskset"]["split"])  # one line for missing or bad data
        try:
            prompt = mean_prompt_tokens(recipe["taskset"], args.data_path)
        except (DrugprotError, ValueError) as exc:
            fail(prog, f"--data-path {args.data_path}: {exc}")
        if problem := token_count_problem(prompt):
            fail(prog, f"--data-path {args.data_path}: the mean prompt length {problem}; is the data empty?")
    source = "--data-path D" if args.data_path else f"--prompt-tokens {args.prompt_tokens:g}"
    shown = Path(args.json).name if Path(args.json).is_absolute() else args.json
    command = f"python -m evidence.step_time measure --sim SIM {source} --json {shown}"
    text = json.dumps(summarize(sandbox, round(prompt, 1), command), indent=2, allow_nan=False)
    write_text_atomic(Path(args.json), text + "\n")
    print(text)
    return 0


def _read_page(prog: str, flag: str, path: Path) -> str:
    """The page ``--write``/``--check`` names, or one line and exit 2 when it is missing, unreadable or not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(prog, f"{flag} {path}: no such file; name the page that holds the block ({README.relative_to(REPO)})")
    except UnicodeDecodeError as exc:
        fail(prog, f"{flag} {path}: not UTF-8 text (byte {exc.start}); name the page that holds the block")
    except OSError as exc:
        fail(prog, f"{flag} {path}: cannot be read ({exc.strerror or type(exc).__name__})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.step_time", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="the sandbox's shares per phase and the prompt tokens -> --json")
    m.add_argument("--sim", required=True, help="an evidence.rl_sim --out directory with pair-utility-all runs")
    src = m.add_mutually_exclusive_group(required=True)
    src.add_argument("--data-path", help="count the recipe's prompt tokens here (needs mistral-common)")
    src.add_argument("--prompt-tokens", type=float, help="mean prompt tokens per rollout, counted elsewhere")
    m.add_argument("--json", required=True, help="write the summary here")
    m.add_argument(
        "--overwrite", action="store_true", help="replace an existing --json file (never an input of the command)"
    )
    r = sub.add_parser("render", help="print the docs block; --write or --check docs/training/step-time.md")
    how = r.add_mutually_exclusive_group()
    how.add_argument("--write", help="replace the block in this file")
    how.add_argument("--check", help="exit 1 when this file's block differs")
    args = parser.parse_args(argv)
    prog = "python -m evidence.step_time"
    if args.cmd == "measure":
        return _measure(args, prog)
    flag, page = ("--write", args.write) if args.write else ("--check", args.check)
    if args.write:  # the page is rewritten in place; the files the block is rendered from never
        check_outputs(prog, [("--write", args.write)], inputs=[SUMMARY, CONFIG, TRAINER], overwrite=True)
    text = _read_page(prog, flag, Path(page)) if page else None
    block = current_block()
    if text is not None:
        try:
            new = splice(text, block)
        except ValueError as exc:
            fail(prog, f"{flag} {page}: {exc}")
        if args.check:
            if new != text:
                print(f"{prog}: {page}: the step-time block is stale; rerun with --write", file=sys.stderr)
                return 1
            return 0
        write_text_atomic(Path(page), new)
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
