"""The trainer setting to ship, from ``bench.trainer_step`` results: the fastest that keeps ≥ 10 % GPU headroom.

    python -m bench.trainer_settings RESULT.json [RESULT.json ...] [--markdown]

Each result is one setting of prime-rl's trainer (activation offload, optimizer-state offload, compile) at one or
more micro-batch lengths ``seq_len``. Their tokens/s are compared side by side, so every result must come from the
same machine and the same step shape (micro-batches per step, sample length); a result that breaks this is refused
with one line naming it. The baseline is the recipe's offloads (configs/drugprot.toml, prime-rl's defaults where it
sets none) at the recipe's ``seq_len``, eager like the benchmark's default. Another row is chosen only when it keeps
the headroom and is faster by more than the timing noise of the two rows (the spread of their own timed steps).
Compile is shown, not decided: with flash-attention absent the benchmark's attention is a stand-in kernel, and what
compile does to it is not what it does to the real one, so the recipe keeps prime-rl's compile default. Prints the
table and the prime-rl keys that set the chosen row; docs/training/gpu-sizing.md holds the table for the committed
results (a test keeps it and configs/drugprot.toml in step with this choice).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import fail
from bench.trainer_step import HEADROOM

REPO = Path(__file__).resolve().parent.parent
RECIPE = REPO / "configs" / "drugprot.toml"


@dataclass(frozen=True)
class Setting:
    """One switch position of the trainer: prime-rl 559b447's ``[trainer.model]`` defaults are all True."""

    ac_offload: bool
    optim_offload: bool
    compile: bool

    @property
    def label(self) -> str:
        off = [
            name
            for name, on in (("activation offload", self.ac_offload), ("optimizer offload", self.optim_offload))
            if not on
        ]
        text = "prime-rl's offloads" if not off else "no " + ", no ".join(off)
        return text + (", compiled" if self.compile else ", eager")

    def keys(self) -> dict[str, Any]:
        """The offload keys of ``[trainer.model]`` that differ from prime-rl's defaults (``"None"`` disables one)."""
        keys: dict[str, Any] = {}
        if not self.ac_offload:
            keys["ac_offloading"] = "None"
        if not self.optim_offload:
            keys["optim_cpu_offload"] = False
        return keys


@dataclass(frozen=True)
class Row:
    source: str
    setting: Setting
    seq_len: int
    peak_reserved_gib: float
    headroom: float
    tokens_per_s: float
    spread: float  # max/min - 1 over the row's timed steps

    def why_not(self) -> str:
        """Why this row cannot be chosen ("" when it can)."""
        if self.setting.compile:
            return "compile: shown, not decided"
        return "headroom < 10 %" if self.headroom < HEADROOM else ""


def recipe_defaults(path: Path = RECIPE) -> tuple[int, Setting]:
    """The recipe's ``seq_len`` and offloads (prime-rl's defaults for every key it leaves out), eager."""
    cfg = tomllib.loads(path.read_text())
    model = cfg.get("trainer", {}).get("model", {})
    return cfg["seq_len"], Setting(
        ac_offload=model.get("ac_offloading", {}) != "None",
        optim_offload=model.get("optim_cpu_offload", True),
        compile=False,
    )


def _shape(result: dict[str, Any]) -> tuple[Any, ...]:
    machine = result["machine"]
    micro = {run["micro_batches"] for run in result["runs"]}
    return machine.get("gpu"), machine.get("torch"), result["recipe"].get("sample_tokens"), tuple(sorted(micro))


def rows(results: Sequence[tuple[str, dict[str, Any]]]) -> list[Row]:
    """The measured rows of ``results`` (``(name, result)``); a row that ran out of memory is left out."""
    out = []
    for name, result in results:
        recipe = result["recipe"]
        setting = Setting(
            recipe["activation_offload"], recipe["optimizer"].endswith("states on CPU"), recipe["compile"]
        )
        for run in result["runs"]:
            if run["oom"] or "tokens_per_s" not in run:
                continue
            steps = run["step_s"]
            out.append(
                Row(
                    name,
                    setting,
                    run["seq_len"],
                    run["peak_reserved_gib"],
                    run["headroom"],
                    run["tokens_per_s"],
                    round(max(steps) / min(steps) - 1, 4),
                )
            )
    return out


def between_runs(table: Sequence[Row]) -> float:
    """The largest relative difference (max/min - 1) between two processes that measured the same setting at the
    same ``seq_len``: the noise a one-process comparison cannot see (0 when nothing was measured twice)."""
    groups: dict[tuple[Setting, int], list[float]] = {}
    for row in table:
        groups.setdefault((row.setting, row.seq_len), []).append(row.tokens_per_s)
    return max((round(max(v) / min(v) - 1, 4) for v in groups.values() if len(v) > 1), default=0.0)


def choose(table: Sequence[Row], seq_len: int, setting: Setting) -> tuple[Row, Row, float]:
    """``(baseline, chosen, noise)``: the baseline is ``setting`` at ``seq_len`` (its first measurement); the chosen
    row is the fastest one that may be chosen, when its lead over the baseline exceeds the noise (both rows' step
    spread and the between-process difference), else the baseline."""
    base = [row for row in table if row.setting == setting and row.seq_len == seq_len]
    if not base:
        raise ValueError(f"no result measures the recipe's setting ({setting.label}) at seq_len {seq_len}")
    baseline = base[0]
    best = max((row for row in table if not row.why_not()), key=lambda row: row.tokens_per_s, default=baseline)
    noise = max(baseline.spread, best.spread, between_runs(table))
    return baseline, best if best.tokens_per_s > baseline.tokens_per_s * (1 + noise) else baseline, noise


def markdown(table: Sequence[Row], baseline: Row, chosen: Row) -> str:
    lines = [
        "| setting | `seq_len` | peak reserved | headroom | tokens/s | vs baseline | step spread | result |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in sorted(table, key=lambda row: (-row.tokens_per_s, row.seq_len)):
        mark = " **(baseline)**" if row is baseline else ""
        mark += " **(chosen)**" if row is chosen else ""
        why = f" ({row.why_not()})" if row.why_not() else ""
        lines.append(
            f"| {row.setting.label}{mark}{why} | {row.seq_len:,} | {row.peak_reserved_gib:.1f} GiB | "
            f"{100 * row.headroom:.1f} % | {row.tokens_per_s:,.0f} | {row.tokens_per_s / baseline.tokens_per_s:.3f} | "
            f"{100 * row.spread:.1f} % | `{row.source}` |"
        )
    return "\n".join(lines)


def advice(baseline: Row, chosen: Row, noise: float) -> str:
    if chosen is baseline:
        return (
            f"keep the recipe: no row with ≥ 10 % headroom beats the baseline ({baseline.tokens_per_s:,.0f} "
            f"tokens/s) by more than the timing noise ({100 * noise:.1f} %)"
        )
    parts = [f"{key} = {json.dumps(value)}" for key, value in chosen.setting.keys().items()]
    top = [f"seq_len = {chosen.seq_len}"] if chosen.seq_len != baseline.seq_len else []
    ratio = chosen.tokens_per_s / baseline.tokens_per_s
    return (
        f"ship {chosen.setting.label} at seq_len {chosen.seq_len:,}: {ratio:.3f}x the baseline's tokens/s (noise "
        f"{100 * noise:.1f} %), {100 * chosen.headroom:.1f} % headroom; in configs/drugprot.toml: "
        + "; ".join(top + ([f"[trainer.model] {', '.join(parts)}"] if parts else []))
    )


def load(paths: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Read the results; refuses (one line, exit 2) an unreadable file, one not from ``bench.trainer_step`` or the
    full model, and one from another machine or step shape than the first."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        try:
            result = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            fail("bench.trainer_settings", f"{path}: cannot read it as JSON ({exc.__class__.__name__}: {exc})")
        if not isinstance(result, dict) or result.get("benchmark") != "trainer_step":
            fail("bench.trainer_settings", f"{path}: not a bench.trainer_step result (its 'benchmark' field)")
        if result["model"].get("config") != "Trinity-Mini" or result.get("ranks", {}).get("world", 1) != 1:
            fail("bench.trainer_settings", f"{path}: not the full model on one GPU (its 'model.config' or 'ranks')")
        if out and _shape(result) != _shape(out[0][1]):
            fail(
                "bench.trainer_settings",
                f"{path}: machine or step shape (GPU, torch, sample_tokens, micro_batches) {_shape(result)} differs "
                f"from {out[0][0]}'s {_shape(out[0][1])}; compare results measured side by side",
            )
        out.append((Path(path).name, result))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.trainer_settings", description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="bench.trainer_step --json files, one per setting")
    p.add_argument("--markdown", action="store_true", help="print only the table (the docs' block)")
    args = p.parse_args(argv)
    seq_len, setting = recipe_defaults()
    table = rows(load(args.results))
    try:
        baseline, chosen, noise = choose(table, seq_len, setting)
    except ValueError as exc:
        fail("bench.trainer_settings", exc)
    print(markdown(table, baseline, chosen))
    if not args.markdown:
        print(advice(baseline, chosen, noise))
    return 0


if __name__ == "__main__":
    sys.exit(main())
