"""The trainer setting to ship, from ``bench.trainer_step`` results: the fastest that keeps ≥ 10 % GPU headroom.

    python -m bench.trainer_settings RESULT.json [RESULT.json ...] [--markdown] [--against-defaults]

Depth-scaled results (``bench.trainer_step --layers N``, N below the model's depth) are extrapolated: for each
setting and ``seq_len``, peak reserved memory and seconds per step are fitted against the layer count (least
squares over two or more depths of one GPU) and predicted at the full depth, with the fit's largest residual; the
choice is then made on the predictions, headroom taken on the recipe's GPU (an H200). A fit from one depth, from
mixed GPUs, or whose residual exceeds its bound (``RESIDUAL_BOUND`` of a measured value for memory,
``TIME_RESIDUAL_BOUND`` for time) is refused. Full-depth results given beside them check the predictions: memory
and tokens/s on the same GPU kind, memory alone (what the GPU kind does not change) across kinds, each labelled.
See "Depth-scaled results" below for the rest.

Each result is one setting of prime-rl's trainer (activation offload, optimizer-state offload, compile) at one or
more micro-batch lengths ``seq_len``. Their tokens/s are compared side by side, so every result must come from the
same machine and the same step shape (micro-batches per step, sample length); a result that breaks this is refused
with one line naming it. The baseline is the recipe's offloads (configs/drugprot.toml, prime-rl's defaults where it
sets none; with ``--against-defaults``, prime-rl's defaults) at the recipe's ``seq_len``, eager like the
benchmark's default. Another row is chosen only when it keeps
the headroom and is faster by more than the timing noise of the two rows (the spread of their own timed steps).
Compile is shown, not decided: with flash-attention absent the benchmark's attention is a stand-in kernel, and what
compile does to it is not what it does to the real one, so the recipe keeps prime-rl's compile default. Prints the
table and the prime-rl keys that set the chosen row; docs/training/gpu-sizing.md holds the table for the committed
depth-scaled grid (bench/results/trainer_settings_h100; a test keeps it and configs/drugprot.toml in step with this
choice).

Depth-scaled results: the parameters, AdamW's moments and the checkpointed layer inputs grow with the layer count,
and so does a step's compute per token; the embeddings, the LM head and the fixed costs do not. So two depths give a
slope and an intercept per quantity. ``node8.toml``'s per-GPU memory (FSDP over 4 ranks, EP 4: each rank a quarter
of every parameter) is predicted from the same fit as the full depth's peak less three quarters of its parameters,
labelled a prediction (EP's all-to-all buffers are not in it).

Every input is checked before any work: a malformed result (a missing or mistyped field, a non-finite, negative or
out-of-range number, a step time of 0, nesting too deep to read) is one line naming the file and the field, exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import fail
from bench.trainer_step import HEADROOM
from drugprot.core.errors import DrugprotError

REPO = Path(__file__).resolve().parent.parent
RECIPE = REPO / "configs" / "drugprot.toml"
PROG = "bench.trainer_settings"

# GPU memory as torch reports it (total_memory), for the headroom of a prediction: the recipe's GPU, the H200
# (bench/results, "gpu_total_gib"), and an 80 GB card (an H100 80GB HBM3 as bench.trainer_step records it).
RECIPE_GPU = "H200"
GPU_TOTAL_GIB: dict[str, float] = {"H200": 139.8, "80 GB": 79.18}
# The largest |residual| a depth fit may leave, as a share of the value measured at that depth. Memory is linear in
# the layer count up to the allocator's rounding (0.6 % at most over the committed H100 grid); step time also carries
# the timing noise (the same row in two processes differed by up to 5.8 % there), so its bound is wider and its
# residual joins the noise a lead must beat.
RESIDUAL_BOUND = 0.02
TIME_RESIDUAL_BOUND = 0.10
# A prediction checked against a measured full-depth row must land within this share of it, or the output says by
# how much it missed.
CHECK_BOUND = 0.03
# A node8 trainer rank holds this share of the parameters (FSDP over 4 ranks; EP 4: a quarter of the experts).
NODE8_SHARE = 0.25


class ResultError(DrugprotError, ValueError):
    """A ``bench.trainer_step`` result this command cannot read: the message names the file and the field."""


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
    layers: int = 0  # the depth measured (0: the full model)
    full_layers: int = 0
    gpu: str = ""
    step_s: float = 0.0  # median seconds per optimizer step
    parameter_gib: float = 0.0  # the model's parameters on the GPU
    sample_tokens: int | None = None
    micro_batches: int = 0
    optimizer_s: float | None = None  # the step's clipping + AdamW step, where the result splits it

    @property
    def full(self) -> bool:
        return self.layers in (0, self.full_layers)

    def why_not(self) -> str:
        """Why this row cannot be chosen ("" when it can)."""
        if self.setting.compile:
            return "compile: shown, not decided"
        return "headroom < 10 %" if self.headroom < HEADROOM else ""


PRIME_RL_DEFAULTS = Setting(ac_offload=True, optim_offload=True, compile=False)  # prime-rl 559b447, eager


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
    """The measured rows of ``results`` (``(name, result)``, each passed by ``check_result``); a row that ran out of
    memory is left out."""
    out = []
    for name, result in results:
        recipe, model, machine = result["recipe"], result["model"], result["machine"]
        setting = Setting(
            recipe["activation_offload"], recipe["optimizer"].endswith("states on CPU"), recipe["compile"]
        )
        full_layers = model.get("full_layers", 0)
        for run in result["runs"]:
            if run["oom"]:
                continue
            steps = run["step_s"]
            out.append(
                Row(
                    Path(name).name,
                    setting,
                    run["seq_len"],
                    run["peak_reserved_gib"],
                    run["headroom"],
                    run["tokens_per_s"],
                    round(max(steps) / min(steps) - 1, 4),
                    layers=model.get("layers", full_layers),
                    full_layers=full_layers,
                    gpu=machine["gpu"],
                    step_s=statistics.median(steps),
                    parameter_gib=model["parameter_bytes"] / 2**30,
                    sample_tokens=recipe.get("sample_tokens"),
                    micro_batches=run["micro_batches"],
                    optimizer_s=run.get("optimizer_s"),
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


def advice(baseline: Row, chosen: Row, noise: float, keep: str = "keep the recipe") -> str:
    if chosen is baseline:
        return (
            f"{keep}: no row with ≥ 10 % headroom beats the baseline ({baseline.tokens_per_s:,.0f} "
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


def _field(where: str, value: Any, kind: str, *, low: float | None = None, high: float | None = None) -> Any:
    """``value`` if it is of ``kind`` ("int", "number", "bool", "str") and within [low, high], else ResultError
    naming ``where`` (the file and the field)."""
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "str": isinstance(value, str) and value != "",
    }[kind]
    if value is None:
        raise ResultError(f"{where} is missing or null: expected {'an' if kind == 'int' else 'a'} {kind}")
    if not ok:
        raise ResultError(f"{where} is {json.dumps(value)[:40]}: expected {'a ' if kind != 'int' else 'an '}{kind}")
    if kind in ("int", "number"):
        if not math.isfinite(value):
            raise ResultError(f"{where} is {value}: expected a finite number")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"[{low}, {high}]" if high is not None else f">= {low}"
            raise ResultError(f"{where} is {value}: expected {bounds}")
    return value


def _dict(where: str, value: Any) -> dict[str, Any]:
    if value is None:
        raise ResultError(f"{where} is missing or null: expected an object")
    if not isinstance(value, dict):
        raise ResultError(f"{where} is {json.dumps(value)[:40]}: expected an object")
    return value


def check_result(result: Any) -> dict[str, Any]:
    """``result`` if it is a ``bench.trainer_step`` result of the full model's architecture on one GPU with every
    field this command reads well-formed; else ResultError naming the field (``machine.gpu``, ``runs[1].step_s``)."""
    result = _dict("the file", result)
    if result.get("benchmark") != "trainer_step":
        raise ResultError("not a bench.trainer_step result (its 'benchmark' field)")
    for key in ("machine", "model", "recipe", "runs"):
        if key not in result:
            raise ResultError(f"'{key}' is missing: a bench.trainer_step result has it")
    machine, model, recipe = (_dict(k, result[k]) for k in ("machine", "model", "recipe"))
    _field("machine.gpu", machine.get("gpu"), "str")
    _field("machine.torch", machine.get("torch"), "str")
    total = _field("machine.gpu_total_gib", machine.get("gpu_total_gib"), "number", low=1, high=10_000)
    if model.get("config") != "Trinity-Mini":
        raise ResultError("not the full model's architecture ('model.config' is not \"Trinity-Mini\")")
    _field("model.parameter_bytes", model.get("parameter_bytes"), "int", low=1)
    if "full_layers" in model or "layers" in model:
        full = _field("model.full_layers", model.get("full_layers"), "int", low=1, high=10_000)
        _field("model.layers", model.get("layers"), "int", low=1, high=full)
    if _field("ranks.world", _dict("ranks", result.get("ranks", {"world": 1})).get("world"), "int", low=1) != 1:
        raise ResultError("not one GPU ('ranks.world' is not 1): the settings are compared on one GPU")
    _field("recipe.activation_offload", recipe.get("activation_offload"), "bool")
    _field("recipe.optimizer", recipe.get("optimizer"), "str")
    _field("recipe.compile", recipe.get("compile"), "bool")
    if recipe.get("sample_tokens") is not None:
        _field("recipe.sample_tokens", recipe["sample_tokens"], "int", low=1)
    runs = result["runs"]
    if not isinstance(runs, list) or not runs:
        raise ResultError(f"'runs' is {json.dumps(runs)[:40]}: expected a non-empty list")
    for i, run in enumerate(runs):
        where = f"runs[{i}]"
        run = _dict(where, run)
        seq_len = _field(f"{where}.seq_len", run.get("seq_len"), "int", low=2)
        micro = _field(f"{where}.micro_batches", run.get("micro_batches"), "int", low=1)
        if _field(f"{where}.oom", run.get("oom"), "bool"):
            continue
        reserved = _field(f"{where}.peak_reserved_gib", run.get("peak_reserved_gib"), "number", low=0, high=total)
        headroom = _field(f"{where}.headroom", run.get("headroom"), "number", low=0, high=1)
        if abs(headroom - (1 - reserved / total)) > 0.002:
            raise ResultError(
                f"{where}.headroom is {headroom}: 1 - peak_reserved_gib / machine.gpu_total_gib is "
                f"{1 - reserved / total:.3f}"
            )
        steps = run.get("step_s")
        if not isinstance(steps, list) or not steps:
            raise ResultError(f"{where}.step_s is {json.dumps(steps)[:40]}: expected a non-empty list of seconds")
        for j, step in enumerate(steps):
            _field(f"{where}.step_s[{j}]", step, "number", low=0.001)
        if "optimizer_s" in run:
            _field(f"{where}.optimizer_s", run["optimizer_s"], "number", low=0, high=statistics.median(steps))
        rate = _field(f"{where}.tokens_per_s", run.get("tokens_per_s"), "number", low=0.001)
        expected = seq_len * micro / statistics.median(steps)
        if abs(rate / expected - 1) > 0.005:
            raise ResultError(
                f"{where}.tokens_per_s is {rate}: seq_len x micro_batches / median(step_s) is {expected:.1f}"
            )
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows: a measured value must be finite")


def read_result(path: str) -> dict[str, Any]:
    """One result file, checked (``check_result``); ResultError naming ``path`` and the field otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        result = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ResultError(f"{path}: nested too deeply to be a bench.trainer_step result") from None
    except (OSError, ValueError) as exc:
        raise ResultError(f"{path}: cannot read it as JSON ({exc.__class__.__name__}: {exc})") from None
    try:
        return check_result(result)
    except ResultError as exc:
        raise ResultError(f"{path}: {exc}") from None


@dataclass(frozen=True)
class Line:
    """``y = intercept + slope x layers``, least squares over the measured depths; ``residual`` the largest
    |measured - fitted| and ``relative`` the largest |measured - fitted| / measured (both 0 through two depths)."""

    intercept: float
    slope: float
    residual: float
    relative: float

    def at(self, layers: int) -> float:
        return self.intercept + self.slope * layers


def fit_line(points: Sequence[tuple[int, float]]) -> Line:
    """The least-squares line through ``(layers, value)`` points of two or more distinct depths (ValueError
    otherwise)."""
    xs = [float(x) for x, _ in points]
    if len(set(xs)) < 2:
        raise ValueError(f"a fit needs two or more depths, got {sorted(set(int(x) for x in xs))}")
    mx, my = statistics.fmean(xs), statistics.fmean(y for _, y in points)
    slope = sum((x - mx) * (y - my) for x, (_, y) in zip(xs, points, strict=True)) / sum((x - mx) ** 2 for x in xs)
    intercept = my - slope * mx
    res = [abs(y - (intercept + slope * x)) for x, (_, y) in zip(xs, points, strict=True)]
    rel = [r / y if y else math.inf for r, (_, y) in zip(res, points, strict=True)]
    return Line(intercept, slope, max(res), max(rel))


@dataclass(frozen=True)
class Prediction:
    """One setting at one ``seq_len``, measured at several depths of one GPU, predicted at the full depth."""

    setting: Setting
    seq_len: int
    gpu: str
    depths: tuple[int, ...]
    full_layers: int
    micro_batches: int
    memory: Line  # peak reserved GiB
    seconds: Line  # median seconds per optimizer step
    parameters: Line  # parameter GiB (exact: the model's own count)
    spread: float  # the largest step spread of the rows fitted
    sources: tuple[str, ...]
    refused: str = ""  # why the fit cannot be used ("" when it can)
    optimizer: Line | None = None  # seconds of the optimizer step (paid once per step, whatever its micro-batches)

    @property
    def peak_gib(self) -> float:
        return self.memory.at(self.full_layers)

    @property
    def step_s(self) -> float:
        return self.seconds.at(self.full_layers)

    @property
    def tokens_per_s(self) -> float:
        return self.seq_len * self.micro_batches / self.step_s

    def headroom(self, gpu: str = RECIPE_GPU) -> float:
        return 1 - self.peak_gib / GPU_TOTAL_GIB[gpu]

    @property
    def noise(self) -> float:
        """The timing noise of the prediction: its rows' step spread or its time fit's relative residual."""
        return max(self.spread, self.seconds.relative)

    @property
    def node8_gib(self) -> float:
        """node8's per-rank peak, predicted: the full depth's peak less the parameters the rank does not hold."""
        return self.peak_gib - (1 - NODE8_SHARE) * self.parameters.at(self.full_layers)

    def why_not(self) -> str:
        if self.refused:
            return self.refused
        if self.setting.compile:
            return "compile: shown, not decided"
        return f"headroom < 10 % on an {RECIPE_GPU}" if self.headroom() < HEADROOM else ""


def predict(table: Sequence[Row]) -> list[Prediction]:
    """A prediction for each setting and ``seq_len`` of the depth-scaled rows of ``table`` (one GPU, one model).
    A group measured at fewer than two depths, or whose fit leaves a residual above its bound, is kept with the
    reason it is refused."""
    groups: dict[tuple[Setting, int], list[Row]] = {}
    for row in table:
        groups.setdefault((row.setting, row.seq_len), []).append(row)
    out = []
    for (setting, seq_len), members in groups.items():
        members = sorted(members, key=lambda row: row.layers)
        depths = tuple(sorted({row.layers for row in members}))
        refused = ""
        optimizer = None
        if len(depths) < 2:
            refused = f"measured at {len(depths)} depth ({depths[0]} layers): a fit needs two or more"
            memory = seconds = parameters = Line(members[0].peak_reserved_gib, 0.0, 0.0, 0.0)
        else:
            memory = fit_line([(row.layers, row.peak_reserved_gib) for row in members])
            seconds = fit_line([(row.layers, row.step_s) for row in members])
            parameters = fit_line([(row.layers, row.parameter_gib) for row in members])
            if all(row.optimizer_s is not None for row in members):
                optimizer = fit_line([(row.layers, row.optimizer_s or 0.0) for row in members])
            if memory.relative > RESIDUAL_BOUND:
                refused = f"memory fit residual {100 * memory.relative:.1f} % > {100 * RESIDUAL_BOUND:.0f} %"
            elif seconds.relative > TIME_RESIDUAL_BOUND:
                refused = f"time fit residual {100 * seconds.relative:.1f} % > {100 * TIME_RESIDUAL_BOUND:.0f} %"
        out.append(
            Prediction(
                setting,
                seq_len,
                members[0].gpu,
                depths,
                members[0].full_layers,
                members[0].micro_batches,
                memory,
                seconds,
                parameters,
                max(row.spread for row in members),
                tuple(sorted({row.source for row in members})),
                refused,
                optimizer,
            )
        )
    return sorted(out, key=lambda pred: (pred.seq_len, -pred.tokens_per_s if not pred.refused else 0))


def split_depths(results: Sequence[tuple[str, dict[str, Any]]]) -> tuple[list[tuple[str, dict[str, Any]]], ...]:
    """``(depth_scaled, full_depth)``: results below the model's depth, one GPU and step shape among them (the
    fit's inputs; ResultError naming the first from another), and full-depth ones (the fit's checks)."""
    scaled = [(p, r) for p, r in results if r["model"].get("layers", 0) not in (0, r["model"].get("full_layers"))]
    full = [(p, r) for p, r in results if (p, r) not in scaled]
    check_shapes(scaled)
    return scaled, full


def choose_predicted(
    preds: Sequence[Prediction], seq_len: int, setting: Setting
) -> tuple[Prediction, Prediction, float]:
    """``(baseline, chosen, noise)`` over predictions: the baseline is ``setting`` at ``seq_len``; a setting may be
    chosen when it has ≥ 10 % predicted headroom on the recipe's GPU at every ``seq_len`` it was fitted at (the
    recipe's variants run it at theirs) and beats the baseline at ``seq_len`` by more than the noise (both
    predictions' step spread and time-fit residual)."""
    base = [pred for pred in preds if pred.setting == setting and pred.seq_len == seq_len]
    if not base:
        raise ValueError(f"no depth-scaled result measures the recipe's setting ({setting.label}) at seq_len {seq_len}")
    baseline = base[0]
    if baseline.refused:
        raise ValueError(
            f"the recipe's setting ({setting.label}) at seq_len {seq_len} cannot be predicted: {baseline.refused}"
        )

    def keeps_headroom(s: Setting) -> bool:
        return all(not p.why_not() for p in preds if p.setting == s)

    fair = [p for p in preds if p.seq_len == seq_len and not p.why_not() and keeps_headroom(p.setting)]
    best = max(fair, key=lambda p: p.tokens_per_s, default=baseline)
    noise = max(baseline.noise, best.noise)
    return baseline, best if best.tokens_per_s > baseline.tokens_per_s * (1 + noise) else baseline, noise


def _pm(value: float, residual: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}" + (f" ± {residual:,.{digits}f}" if residual >= 10**-digits / 2 else "")


def _headroom_cell(pred: Prediction, gpu: str) -> str:
    room = pred.headroom(gpu)
    if room < 0:
        return f"does not fit ({pred.peak_gib - GPU_TOTAL_GIB[gpu]:.1f} GiB over)"
    return f"{100 * room:.1f} %"


def markdown_predicted(preds: Sequence[Prediction], baseline: Prediction, chosen: Prediction) -> str:
    """The predictions as a table: each figure at the full depth with the fit's largest residual (±, omitted when it
    rounds to 0), the optimizer step's share of the step, and how many processes the fit read."""
    full = baseline.full_layers
    lines = [
        f"| setting | `seq_len` | depths (processes) | peak reserved at {full} layers | headroom, {RECIPE_GPU} | "
        "headroom, 80 GB | s/step | of which optimizer | tokens/s | vs baseline |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in preds:
        mark = (" **(baseline)**" if p is baseline else "") + (" **(chosen)**" if p is chosen else "")
        why = f" ({p.why_not()})" if p.why_not() else ""
        if p.refused:
            figures = "— | — | — | — | — | — | —"
        else:
            opt = "—" if p.optimizer is None else _pm(p.optimizer.at(full), p.optimizer.residual, 2)
            figures = (
                f"{_pm(p.peak_gib, p.memory.residual)} GiB | {_headroom_cell(p, RECIPE_GPU)} | "
                f"{_headroom_cell(p, '80 GB')} | {_pm(p.step_s, p.seconds.residual, 2)} | {opt} | "
                f"{p.tokens_per_s:,.0f} | {p.tokens_per_s / baseline.tokens_per_s:.3f}"
            )
        depths = f"{', '.join(map(str, p.depths))} ({len(p.sources)})"
        lines.append(f"| {p.setting.label}{mark}{why} | {p.seq_len:,} | {depths} | {figures} |")
    return "\n".join(lines)


def self_check(preds: Sequence[Prediction], full: Sequence[Row]) -> list[str]:
    """Each full-depth row against the prediction of its setting and ``seq_len``: memory and tokens/s where it was
    measured on the fit's GPU kind, memory alone across kinds (labelled); within ``CHECK_BOUND`` or how far not."""
    lines = []
    for row in full:
        match = [p for p in preds if p.setting == row.setting and p.seq_len == row.seq_len and not p.refused]
        if not match:
            continue
        p = match[0]
        same = row.gpu == p.gpu
        checks = [("peak reserved", p.peak_gib, row.peak_reserved_gib, "GiB")]
        if same:
            checks.append(("tokens/s", p.tokens_per_s, row.tokens_per_s, ""))
        shape = (
            ""
            if row.sample_tokens == 2048
            else (f", samples of {row.sample_tokens} tokens" if row.sample_tokens else ", one sample per micro-batch")
        )
        kind = "same GPU" if same else f"cross-kind, memory only: measured on {row.gpu}"
        parts = []
        for name, predicted, measured, unit in checks:
            miss = predicted / measured - 1
            verdict = (
                "within 3 %"
                if abs(miss) <= CHECK_BOUND
                else f"MISSED the 3 % bound by {100 * (abs(miss) - CHECK_BOUND):.1f} points"
            )
            unit = f" {unit}" if unit else ""
            parts.append(
                f"{name} predicted {predicted:,.1f}{unit}, measured {measured:,.1f}{unit} "
                f"({100 * miss:+.1f} %, {verdict})"
            )
        lines.append(
            f"check `{row.source}` ({p.setting.label}, seq_len {row.seq_len:,}; {kind}{shape}): " + "; ".join(parts)
        )
    return lines


def advice_predicted(baseline: Prediction, chosen: Prediction, noise: float, keep: str = "keep the recipe") -> str:
    head = f"predicted at {baseline.full_layers} layers from {baseline.gpu}: "
    if chosen is baseline:
        return head + (
            f"{keep}: no setting with ≥ 10 % headroom on an {RECIPE_GPU} beats the baseline "
            f"({baseline.tokens_per_s:,.0f} tokens/s) by more than the timing noise ({100 * noise:.1f} %)"
        )
    parts = [f"{key} = {json.dumps(value)}" for key, value in chosen.setting.keys().items()]
    return head + (
        f"ship {chosen.setting.label}: {chosen.tokens_per_s / baseline.tokens_per_s:.3f}x the baseline's tokens/s "
        f"(noise {100 * noise:.1f} %), {100 * chosen.headroom():.1f} % headroom on an {RECIPE_GPU}; in "
        f"configs/drugprot.toml: [trainer.model] {', '.join(parts)}"
    )


def node8_line(pred: Prediction) -> str:
    return (
        f"node8.toml per trainer GPU ({pred.setting.label}, seq_len {pred.seq_len:,}), a prediction from the same "
        f"fit, not a measurement: {pred.node8_gib:.1f} GiB (the full depth's {pred.peak_gib:.1f} GiB less three "
        f"quarters of its {pred.parameters.at(pred.full_layers):.1f} GiB of parameters: FSDP over 4 ranks, EP 4), "
        "before EP's all-to-all buffers"
    )


def load(paths: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Read and check every result before any work; refuses (one line, exit 2) an unreadable or malformed file, one
    not from ``bench.trainer_step`` or the full model's architecture on one GPU, and, among results of the full
    depth alone, one from another machine or step shape than the first (``load_depths`` sorts depth-scaled ones)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        try:
            out.append((path, read_result(path)))
        except ResultError as exc:
            fail(PROG, exc)
    return out


def check_shapes(results: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """Results compared side by side share one machine and step shape; ResultError naming the first that does not."""
    for path, result in results[1:]:
        if _shape(result) != _shape(results[0][1]):
            raise ResultError(
                f"{path}: machine or step shape (GPU, torch, sample_tokens, micro_batches) {_shape(result)} differs "
                f"from {results[0][0]}'s {_shape(results[0][1])}; compare results measured side by side"
            )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=f"python -m {PROG}", description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="bench.trainer_step --json files, one per setting (and depth)")
    p.add_argument("--markdown", action="store_true", help="print only the table (the docs' block)")
    p.add_argument(
        "--against-defaults",
        action="store_true",
        help="take prime-rl's defaults (both offloads on, eager) as the baseline, not configs/drugprot.toml's setting",
    )
    args = p.parse_args(argv)
    seq_len, setting = recipe_defaults()
    keep = "keep the recipe"
    if args.against_defaults:
        setting, keep = PRIME_RL_DEFAULTS, "keep prime-rl's defaults"
    results = load(args.results)
    try:
        scaled, full = split_depths(results)
        if not scaled:
            check_shapes(results)
            table = rows(results)
            baseline, chosen, noise = choose(table, seq_len, setting)
        else:
            preds = predict(rows(scaled))
            pbase, pchosen, noise = choose_predicted(preds, seq_len, setting)
    except (ResultError, ValueError) as exc:
        fail(PROG, exc)
    if not scaled:
        print(markdown(table, baseline, chosen))
        if not args.markdown:
            print(advice(baseline, chosen, noise, keep))
        return 0
    print(markdown_predicted(preds, pbase, pchosen))
    if not args.markdown:
        for line in self_check(preds, rows(full)):
            print(line)
        print(node8_line(pchosen))
        print(advice_predicted(pbase, pchosen, noise, keep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
