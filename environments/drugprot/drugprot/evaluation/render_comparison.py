"""The report as text for several runs: the runs side by side and the paired comparison of each with the first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation.calibration import comparison_calibration_lines
from drugprot.evaluation.render import (
    ci_text,
    class_f1_text,
    comparable_text,
    comparison_intervals,
    data_name,
    failed_run_lines,
    limit_text,
    pct,
    table_lines,
    versions_note,
)


def format_comparison(
    reports: Sequence[Mapping[str, Any]],
    task_keys: Sequence[set[tuple[str, str, str]]] | None = None,
    comparisons: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """Several runs side by side: headline numbers and per-class F1, one column per run.

    ``task_keys`` (each run's task keys) adds a warning when the runs did not evaluate the same tasks.
    Each run's 95% intervals follow the table; ``comparisons`` (``compare_runs`` of run [1] with each later
    run, in order) adds the paired comparison of each later run with [1].
    """
    cols = [f"[{i}]" for i in range(1, len(reports) + 1)]
    out = failed_run_lines(cols, reports)
    out.append("drugprot report: comparison")
    for col, report in zip(cols, reports, strict=True):
        run = report["run"]
        out.append(
            f"  {col} {run['name']} ({run['model'] or '?'}, {data_name(run)}, negatives "
            f"{report['setting']['negatives'] or '?'}, limit {limit_text(run)}) {run['path']}"
        )
        lines = report["lines"]
        if lines["corrupt"] or lines["unidentified"] or report["rescored"]:
            out.append(
                f"      skipped {lines['corrupt']} malformed records and {lines['unidentified']} rollouts of "
                f"unidentified tasks; re-scored {report['rescored']} rollouts"
            )
    if task_keys and len({frozenset(keys) for keys in task_keys}) > 1:
        shared = set.intersection(*(set(keys) for keys in task_keys))
        out.append(
            f"  note: the runs cover different tasks ({', '.join(str(len(k)) for k in task_keys)}; "
            f"{len(shared)} shared): compare with care"
        )
    note = versions_note(cols, reports)
    if note is not None:
        out.append(note)
    modes = {report["setting"]["mode"] for report in reports}
    if len(modes) > 1:
        out.append("  note: positive-only and negatives runs mixed: their micro-F1 measure different things")
    rows: list[tuple[str, list[str]]] = [
        ("tasks", [str(r["n_tasks"]) for r in reports]),
        ("rollouts", [str(r["n_rollouts"]) for r in reports]),
        ("accuracy", [pct(r["accuracy"]) for r in reports]),
        ("pass@k", [pct(r["pass_at_k"]) for r in reports]),
        ("majority accuracy", [pct(r["majority_accuracy"]) for r in reports]),
        ("micro precision", [pct(r["micro_precision"]) for r in reports]),
        ("micro recall", [pct(r["micro_recall"]) for r in reports]),
        ("micro F1", [pct(r["micro_f1"]) for r in reports]),
        ("micro F1 (majority)", [pct(r["majority"]["micro_f1"]) for r in reports]),
        ("macro F1 (13 types)", [pct(r["macro_f1"]) for r in reports]),
        ("invalid rate", [pct(r["invalid_rate"]) for r in reports]),
        (
            "mean output tokens",
            [f"{r['tokens']['mean_output']:.1f}" if r["tokens"]["mean_output"] is not None else "-" for r in reports],
        ),
        ("comparable w/ official", [comparable_text(r["setting"]["comparable_with_official"]) for r in reports]),
    ]
    for name in RELATION_NAMES:
        rows.append((f"F1 {letter_of(name)} {name}", [class_f1_text(r["per_class"][name]) for r in reports]))
    out += table_lines(cols, rows)
    out += comparison_intervals(cols, reports)
    out += comparison_calibration_lines(cols, reports)
    for col, comparison in zip(cols[1:], comparisons or (), strict=False):
        out += ["", *format_paired(cols[0], col, comparison)]
    return "\n".join(out)


def format_paired(
    first: str,
    second: str,
    comparison: Mapping[str, Any],
    *,
    units: str = "tasks",
    matched_by: str = "task key",
    accuracy: str = "accuracy",
    flips: tuple[str, str] = ("tasks by majority answer", "right in"),
    accuracy_test: str = "accuracy test",
) -> list[str]:
    """The paired comparison of run ``second`` with run ``first`` (``compare_runs``), as text lines. The wording
    names the paired ``units`` (matched by ``matched_by``), the ``accuracy`` metric, and what a flip is: its
    ``(lead, side)`` read as "lead: side [1] only n, side [2] only m, ...", and the name of its test
    (``accuracy_test``: the flips test accuracy, never F1). Each difference carries the p-value of the paired
    sign-flip test of that difference (``comparison["tests"]``)."""
    from drugprot.evaluation.stats import METRICS  # here, not above: stats loads numpy, which plots never need

    if not comparison["paired"]:
        return [f"Paired comparison {second} - {first}: none, {comparison['reason']}"]
    intervals = comparison["intervals"]
    abstracts = comparison.get("abstracts", comparison["tasks"])
    within = f" of {abstracts} abstracts" if units != "abstracts" else ""
    out = [
        f"Paired comparison {second} - {first} over the same {comparison['tasks']} {units}{within} "
        f"(matched by {matched_by})"
    ]
    tests = comparison.get("tests")
    names = {"accuracy": accuracy, "micro_f1": "micro F1", "macro_f1": "macro F1 (13 types)"}

    def p_text(name: str) -> str:
        if tests is None:
            return ""
        floor = 1 / (tests["permutations"] + 1)  # a Monte Carlo p-value's smallest: no assignment as extreme
        if not tests["exact"] and tests[name] <= floor * (1 + 1e-9):
            return f"  p <= {floor:.2g}"
        return f"  p = {tests[name]:.3g}"

    test_line = []
    if tests is not None:
        flipped = (
            f"all {tests['permutations']} sign assignments (exact)"
            if tests["exact"]
            else f"{tests['permutations']} random sign assignments, seed {tests['seed']}"
        )
        test_line.append(
            f"  p: {tests['method']} of that difference itself (an abstract's rows swapped between the runs), {flipped}"
        )
    if intervals is not None and "unavailable" not in intervals:
        out += [
            f"  [low, high]: {intervals['level']:.0%} paired {intervals['method']} ({intervals['together']}), "
            f"both runs on the same resamples; {intervals['resamples']} resamples, seed {intervals['seed']}",
            *test_line,
            *(
                f"  delta {names[name]:<22}{intervals[name]['estimate']:+.3f}{ci_text(intervals, name, signed=True)}"
                f"{p_text(name)}"
                for name in METRICS
            ),
        ]
    else:
        if intervals is not None:
            out.append(f"  no intervals: {intervals['unavailable']}")
        out += test_line
        if tests is not None:
            out.append("  " + ", ".join(f"delta {names[name]}{p_text(name)}" for name in METRICS))
    f, (lead, side) = comparison["flips"], flips
    out.append(
        f"  {accuracy_test} ({lead}): {side} {first} only {f['first_only']}, {side} {second} only "
        f"{f['second_only']}, both {f['both']}, neither {f['neither']}"
    )
    out.append(f"  paired {accuracy_test}: {f['test']}, {abstracts} abstracts: p = {f['p']:.3g}")
    return out
