"""The tables of ``evidence.rl_sim``: per policy class and recipe, the spread over PMID splits of the held-out official
F1 (greedy and sampled) at the start and the end of training; paired differences to the default recipe; the
step-0 calibration; whether the adaptive cost beats the calibrated fixed one beyond the split-to-split spread; and
whether the two policy classes rank the recipes alike."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from bench.common import fail
from drugprot.evaluation.curves import CurvesError, MetricsLineError, find_metrics_file, parse_line
from evidence.shared import calibrated_fp, corrected_test, show, spread

F1 = "eval/heldout/effective/agent/metrics/official_f1/mean"
SAMPLED = "eval/heldout/effective/agent/metrics/official_f1_sampled/mean"
NONE = "eval/heldout/effective/agent/metrics/none_share/mean"
NO_N = "eval/heldout/effective/agent/metrics/official_f1_without_n/mean"
REFERENCE = "pair-utility-all"
"""The default recipe's reward (utility at the default costs, ``negatives="all"``): every other is compared to it."""


def _by_split(runs: Sequence[dict[str, Any]], recipe: str, policy_class: str) -> dict[int, dict[str, Any]]:
    return {r["split"]: r for r in runs if r["recipe"] == recipe and r["policy_class"] == policy_class}


def _paired(a: dict[int, dict[str, Any]], b: dict[int, dict[str, Any]], key: str) -> dict[str, Any] | None:
    common = sorted(set(a) & set(b))
    if not common:
        return None
    diff = [a[s]["last"][key] - b[s]["last"][key] for s in common]
    return spread(diff) | {"ahead": sum(d > 0 for d in diff)}


NOISE = "pair-utility-all-seed1"
"""The reference recipe at a second seed: the difference between the two is the sandbox's seed-noise floor."""
LEVER_NAMES = ("pair-utility-t1.0", "pair-utility-g4", "pair-utility-g16", "pair-utility-neg50", "pair-utility-neg30")
"""The settings the recipe could adopt (``rl_sim.LEVERS`` without the noise floor); a lever is adopted only when it
passes in every policy class."""
ADOPT_RATIO = 1.5
"""A lever the recipe adopts gives at least this many times the reference's teaching groups per generated rollout
with no measurable F1 loss (the overlap-corrected 95% interval of its end-F1 difference reaches 0)."""


def teaching_per_rollout(run: dict[str, Any]) -> float:
    """Groups with a non-zero advantage per generated rollout: the share of trainable groups over the group size
    (every group of a run has its recipe's size, gated runs count every generated group)."""
    return run["is_trainable"] / run["group"]


def one_pass_block(runs: Sequence[dict[str, Any]], policy_class: str, recipes: Sequence[Any]) -> dict[str, Any]:
    """The one-pass regime's levers: per recipe, the share of rollouts in all-equal groups ``z``, teaching groups per
    generated rollout (and its ratio to the reference's, per split), the end-F1 difference to the reference with the
    overlap-corrected test (``corrected_test``), and whether the recipe adopts it; the seed-noise floor beside it."""
    reference = _by_split(runs, REFERENCE, policy_class)
    out: dict[str, Any] = {"rows": []}
    noise = _by_split(runs, NOISE, policy_class)
    if noise and reference:
        common = sorted(set(noise) & set(reference))
        diffs = [noise[s]["last"][F1] - reference[s]["last"][F1] for s in common]
        out["noise_floor"] = spread(diffs) | {"ahead": sum(d > 0 for d in diffs), "test": corrected_test(diffs)}
    for recipe in recipes:
        by = _by_split(runs, recipe.name, policy_class)
        if not by:
            continue
        common = sorted(set(by) & set(reference))
        row: dict[str, Any] = {
            "recipe": recipe.name,
            "z": spread([1 - by[s]["is_trainable"] for s in sorted(by)]),
            "teaching": spread([teaching_per_rollout(by[s]) for s in sorted(by)]),
            "rollouts": spread([by[s]["rollouts"] for s in sorted(by)]),
            "tasks_drawn": spread([by[s]["tasks_drawn"] for s in sorted(by)]),
            "task_pool": spread([by[s]["task_pool"] for s in sorted(by)]),
        }
        if recipe.name != REFERENCE and common:
            ratio = [teaching_per_rollout(by[s]) / teaching_per_rollout(reference[s]) for s in common]
            diffs = [by[s]["last"][F1] - reference[s]["last"][F1] for s in common]
            test = corrected_test(diffs)
            row["ratio"] = spread(ratio)
            row["minus_reference"] = spread(diffs) | {"ahead": sum(d > 0 for d in diffs), "test": test}
            if recipe.name in LEVER_NAMES:
                row["adopt"] = bool(row["ratio"]["mean"] >= ADOPT_RATIO and test["high"] >= 0)
        out["rows"].append(row)
    return out


def _test(t: dict[str, float]) -> str:
    return f"[{t['low']:+.3f}, {t['high']:+.3f}] p={t['p']:.2f}"


def one_pass_lines(o: dict[str, Any]) -> list[str]:
    lines = [
        "  one pass (the recipe's steps and batch; each step's tasks not drawn before): drawn = tasks drawn of the "
        "train tasks (mean); z = share of rollouts in all-equal groups; teaching = groups with a non-zero advantage "
        f"per generated rollout; d F1 = end F1 - {REFERENCE} (greedy), its 95% interval and p from the paired t-test "
        "over splits corrected for their overlap (Nadeau-Bengio)",
    ]
    if "noise_floor" in o:
        n = o["noise_floor"]
        lines.append(
            f"  seed-noise floor ({NOISE} - {REFERENCE}, the same recipe at two seeds): d F1 {show(n)} "
            f"[{n['ahead']}/{n['n']} ahead] {_test(n['test'])}"
        )
    lines.append(
        f"  {'recipe':<26}{'drawn':>14}{'z':>32}{'teaching':>36}{'x reference':>28}{'d F1':>34}{'95%, p':>26}  adopt"
    )
    for r in o["rows"]:
        drawn = f"{r['tasks_drawn']['mean']:,.0f}/{r['task_pool']['mean']:,.0f}"
        head = f"  {r['recipe']:<26}{drawn:>14}{show(r['z']):>32}{show(r['teaching'], 4):>36}"
        if "ratio" not in r:
            lines.append(f"{head}{'(reference)':>28}")
            continue
        d = r["minus_reference"]
        lines.append(
            f"{head}{show(r['ratio'], 2):>28}{show(d):>34}{_test(d['test']):>26}  "
            + ({True: "passes", False: "no"}.get(r.get("adopt"), ""))  # type: ignore[arg-type]
        )
    return lines


SMOOTH = 3
"""Rollouts to a target: the first evaluation at which the mean F1 of it and the previous ``SMOOTH - 1`` reaches it."""


def rollouts_to(progress: Sequence[Sequence[float]], target: float) -> float | None:
    """Rollouts generated before the first evaluation whose smoothed held-out F1 reaches ``target`` (None: never)."""
    for i in range(len(progress)):
        window = [p[2] for p in progress[max(0, i - SMOOTH + 1) : i + 1]]
        if len(window) == SMOOTH and sum(window) / SMOOTH >= target:
            return float(progress[i][1])
    return None


def _to_target(mine: dict[int, dict[str, Any]], reference: dict[int, dict[str, Any]]) -> dict[str, Any] | None:
    """Per split, rollouts to the reference recipe's end F1 (its last-quarter mean) and the reference's own."""
    common = sorted(set(mine) & set(reference))
    if not common or "progress" not in mine[common[0]]:
        return None
    pairs = [(rollouts_to(mine[s]["progress"], reference[s]["last"][F1]),
              rollouts_to(reference[s]["progress"], reference[s]["last"][F1])) for s in common]  # fmt: skip
    reached = [(a, b) for a, b in pairs if a is not None and b is not None]
    out: dict[str, Any] = {"reached": sum(a is not None for a, _ in pairs), "n": len(pairs)}
    if reached:
        out["rollouts"] = spread([a for a, _ in reached])
        out["reference_rollouts"] = spread([b for _, b in reached])
        out["speedup"] = spread([b / a for a, b in reached if a > 0])
    out["total_rollouts"] = spread([mine[s]["rollouts"] for s in common])
    return out


def summarise(
    runs: Sequence[dict[str, Any]], calibration: Sequence[dict[str, Any]], recipes: Sequence[Any]
) -> dict[str, Any]:
    classes = list(dict.fromkeys(r["policy_class"] for r in runs))
    out: dict[str, Any] = {"classes": {}}
    for policy_class in classes:
        table = []
        reference = _by_split(runs, REFERENCE, policy_class)
        for recipe in recipes:
            mine = _by_split(runs, recipe.name, policy_class)
            if not mine:
                continue
            ordered = [mine[s] for s in sorted(mine)]
            row = {
                "recipe": recipe.name,
                "splits": len(ordered),
                "start_f1": spread([r["first"][F1] for r in ordered]),
                "end_f1": spread([r["last"][F1] for r in ordered]),
                "end_f1_sampled": spread([r["last"][SAMPLED] for r in ordered]),
                "end_none": spread([r["last"][NONE] for r in ordered]),
                "is_trainable": spread([r["is_trainable"] for r in ordered]),
                "end_fp_cost": spread([r["end_fp_cost"] for r in ordered]),
                "minus_reference": _paired(mine, reference, F1) if recipe.name != REFERENCE else None,
                "minus_reference_sampled": _paired(mine, reference, SAMPLED) if recipe.name != REFERENCE else None,
            }
            row["to_reference_f1"] = _to_target(mine, reference) if reference else None
            if NO_N in ordered[0]["last"]:
                row["end_f1_without_n"] = spread([r["last"][NO_N] for r in ordered])
            table.append(row)
        cal = [c for c in calibration if c["policy_class"] == policy_class]
        start = [r["first"][F1] for r in runs if r["policy_class"] == policy_class and r["recipe"] == recipes[0].name]
        block: dict[str, Any] = {
            "table": table,
            "step0_f1_train_folds": spread([c["step0_f1_train_folds"] for c in cal]),
            "fp_calibrated": spread([c["fp_calibrated"] for c in cal]),
            "temperature": spread([c["temperature"] for c in cal]),
            "step0_f1_held_out": spread(start),
            "fp_from_held_out_step0": spread([calibrated_fp(f) for f in start]),
        }
        if cal and "fstar_train_folds" in cal[0]:
            block["fstar_train_folds"] = spread([c["fstar_train_folds"] for c in cal])
            block["fp_fstar"] = spread([c["fp_fstar"] for c in cal])
        adaptive = _by_split(runs, "pair-utility-adaptive", policy_class)
        fixed = _by_split(runs, "pair-utility-calibrated", policy_class)
        if adaptive and fixed:
            diff = _paired(adaptive, fixed, F1)
            spread_fixed = spread([r["last"][F1] for r in fixed.values()])["sd"]
            block["adaptive_vs_calibrated"] = diff | {
                "split_sd_of_calibrated": spread_fixed,
                "beyond_spread": bool(diff is not None and diff["mean"] > spread_fixed),
            }
        if cal and "fstar_probe" in cal[0]:
            block["fstar_probe"] = spread([c["fstar_probe"] for c in cal])
            block["fp_probe"] = spread([c["fp_probe"] for c in cal])
            block["probe_pairs"] = spread([c["probe_pairs"] for c in cal])
            block["fstar_probe_width"] = spread([c["fstar_probe_width"] for c in cal])
        if any(r.get("passes") for r in runs if r["policy_class"] == policy_class):
            block["one_pass"] = one_pass_block(runs, policy_class, recipes)
        out["classes"][policy_class] = block
    passing = [b["one_pass"] for b in out["classes"].values() if "one_pass" in b]
    if passing:
        levers = [r["recipe"] for r in passing[0]["rows"] if "adopt" in r]
        out["adopted"] = [
            name
            for name in levers
            if all(any(r["recipe"] == name and r.get("adopt") for r in o["rows"]) for o in passing)
        ]
    if len(classes) == 2:
        names = [t["recipe"] for t in out["classes"][classes[0]]["table"]]
        means = [[t["end_f1"]["mean"] for t in out["classes"][c]["table"]] for c in classes]
        if len(names) > 2 and all(len(m) == len(names) for m in means):
            out["rank_agreement"] = float(spearmanr(means[0], means[1]).statistic)
    return out


def _diff(d: dict[str, Any] | None) -> str:
    return "(reference)" if d is None else f"{show(d)} [{d['ahead']}/{d['n']} ahead]"


def format_report(report: dict[str, Any]) -> str:
    out: list[str] = []
    for policy_class, block in report["classes"].items():
        out += [
            f"policy class '{policy_class}': warm-start temperature {show(block['temperature'])}",
            f"  step-0 F1 on the train folds {show(block['step0_f1_train_folds'])} -> calibrated fp_cost "
            f"{show(block['fp_calibrated'])}; step-0 held-out F1 {show(block['step0_f1_held_out'])} -> fp "
            f"{show(block['fp_from_held_out_step0'])}",
        ]
        if "fstar_train_folds" in block:
            out.append(
                f"  F* (best threshold's F1) on the train folds {show(block['fstar_train_folds'])} -> calibrated "
                f"fp_cost {show(block['fp_fstar'])}"
            )
        if "fstar_probe" in block:
            out.append(
                f"  F* from a step-0 probe ({show(block['probe_pairs'], 0)} train pairs x 8 rollouts, the report's "
                f"vote-share estimator) {show(block['fstar_probe'])} -> calibrated fp_cost {show(block['fp_probe'])}; "
                f"width of its 95% interval {show(block['fstar_probe_width'])}"
            )
        out.append(
            f"  {'recipe':<26}{'F1 start':>32}{'F1 end, greedy':>32}{'F1 end, sampled':>32}"
            f"{'end - ' + REFERENCE + ' (greedy)':>48}{'N/none end':>12}{'trainable':>11}"
        )
        for t in block["table"]:
            out.append(
                f"  {t['recipe']:<26}{show(t['start_f1']):>32}{show(t['end_f1']):>32}{show(t['end_f1_sampled']):>32}"
                f"{_diff(t['minus_reference']):>48}{t['end_none']['mean']:>12.3f}{t['is_trainable']['mean']:>11.3f}"
            )
            if "end_f1_without_n" in t:
                out.append(f"  {'':<26}(as trained, N not offered: F1 end {show(t['end_f1_without_n'])})")
        for t in block["table"]:
            r = t.get("to_reference_f1")
            if r and "rollouts" in r:
                out.append(
                    f"  {t['recipe']:<26}rollouts to {REFERENCE}'s end F1 (reached on {r['reached']}/{r['n']} splits): "
                    f"{show(r['rollouts'], 0)} vs {show(r['reference_rollouts'], 0)}; "
                    f"speed-up {show(r['speedup'], 2)}; "
                    f"rollouts in the run {show(r['total_rollouts'], 0)}"
                )
        if "one_pass" in block:
            out += one_pass_lines(block["one_pass"])
        if "adaptive_vs_calibrated" in block:
            a = block["adaptive_vs_calibrated"]
            verdict = "beyond" if a["beyond_spread"] else "NOT beyond"
            out.append(
                f"  adaptive - calibrated fixed cost, end F1: {show(a)} ({a['ahead']}/{a['n']} splits ahead); "
                f"{verdict} the calibrated recipe's split-to-split sd {a['split_sd_of_calibrated']:.3f}"
            )
        out.append("")
    if "adopted" in report:
        out.append(
            f"Adopted by the recipe (>= {ADOPT_RATIO:g}x the teaching groups per generated rollout, d F1 interval "
            f"reaching 0, in every policy class): {', '.join(report['adopted']) or 'none'}"
        )
    if "rank_agreement" in report:
        rho = report["rank_agreement"]
        out.append(f"Spearman of the recipes' mean end F1 between the two policy classes: {rho:.3f}")
    return "\n".join(out)


WASTE_KEYS = {
    "rollouts in zero-advantage groups": "train/agg/all/agent/is_trainable/mean",
    "positive pairs: zero-advantage groups": "train/agg/all/agent/zero_advantage/positive/mean",
    "NO-RELATION pairs: zero-advantage groups": "train/agg/all/agent/zero_advantage/negative/mean",
    "abstracts: zero-advantage groups": "train/agg/all/agent/zero_advantage/abstract/mean",
}


def metrics_lines(run: Path) -> list[dict[str, float]]:
    """The numeric metrics of each line of a run's ``metrics.jsonl``, read by ``drugprot curves``' own rule
    (``curves.parse_line``: a line that is not a metrics line is skipped, as ``drugprot curves`` skips it).

    Raises:
        CurvesError: the run has no ``metrics.jsonl``.
    """
    lines = []
    with find_metrics_file(run).open("rb") as handle:
        for raw in handle:
            if raw.strip():
                with contextlib.suppress(MetricsLineError):
                    lines.append(parse_line(raw)[1])
    return lines


def waste(run_dirs: Sequence[Path]) -> dict[str, dict[str, dict[str, float]]]:
    """Per measure (``WASTE_KEYS``): its mean over the first 10 %, the middle and the last 10 % of each run's steps,
    then the spread over runs (``is_trainable`` turned into the share of rollouts in zero-advantage groups)."""
    phases: dict[str, dict[str, list[float]]] = {name: {"first": [], "middle": [], "last": []} for name in WASTE_KEYS}
    for run in run_dirs:
        lines = metrics_lines(run)
        for name, key in WASTE_KEYS.items():
            values = [line[key] for line in lines if key in line]
            if not values:
                continue
            if key.endswith("is_trainable/mean"):
                values = [1 - v for v in values]
            tenth = max(1, len(values) // 10)
            for phase, part in (("first", values[:tenth]), ("middle", values[tenth:-tenth]), ("last", values[-tenth:])):
                if part:
                    phases[name][phase].append(sum(part) / len(part))
    return {name: {p: spread(v) for p, v in by.items() if v} for name, by in phases.items() if by["first"]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evidence.sim_report", description="zero-advantage shares of evidence.rl_sim runs, by task kind"
    )
    parser.add_argument("out", help="an rl_sim --out directory")
    args = parser.parse_args(argv)
    root = Path(args.out)
    if not root.is_dir():
        what = "a file" if root.exists() else "no such folder"
        fail(parser.prog, f"{root}: {what}; pass the --out directory of python -m evidence.rl_sim")
    classes = {p: sorted(d for d in p.iterdir() if d.is_dir()) for p in sorted(root.iterdir()) if p.is_dir()}
    if not any(classes.values()):
        fail(parser.prog, f"{root}: holds no run folder (<class>/<recipe>-split<k>/); is it an evidence.rl_sim --out?")
    for class_dir, run_dirs in classes.items():
        recipes = sorted({d.name.rsplit("-split", 1)[0] for d in run_dirs})
        for recipe in recipes:
            runs = sorted(class_dir.glob(f"{recipe}-split*"))
            try:
                shares = waste(runs)
            except (CurvesError, OSError) as exc:
                fail(parser.prog, exc)
            print(f"{class_dir.name} {recipe} ({len(runs)} runs): first 10 % / middle / last 10 % of steps")
            for name, by in shares.items():
                print(f"    {name:<42}" + "   ".join(f"{show(by[p])}" for p in ("first", "middle", "last") if p in by))
    return 0


if __name__ == "__main__":
    sys.exit(main())
