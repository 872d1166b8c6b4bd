"""The report of pair-mode runs as text: one run (``format_report``, with its confusion matrix) or several side by
side (``format_comparison``). The pieces extraction mode shares are ``drugprot.evaluation.render``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation.calibration import calibration_lines, comparison_calibration_lines
from drugprot.evaluation.forecast import forecast_lines
from drugprot.evaluation.records import INVALID, version_lines
from drugprot.evaluation.render import (
    ceiling_line,
    ci_text,
    class_f1_text,
    comparable_text,
    comparison_intervals,
    counts_text,
    data_name,
    failed_run_lines,
    format_failure,
    format_intervals_note,
    format_paired,
    format_tokens,
    limit_text,
    official_metric_lines,
    pct,
    per_class_lines,
    report_versions,
    skipped_lines,
    table_lines,
    versions_note,
)

PAIR_OUTSIDE = "never predictable (no task asks them)"
"""How a pair-mode ceiling line names the gold relations off the candidates."""


def _header(report: Mapping[str, Any]) -> list[str]:
    run, k = report["run"], report["rollouts_per_task"]
    per = str(k["min"]) if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    facts = [
        f"model {run['model'] or '?'}",
        data_name(run),
        f"negatives {report['setting']['negatives'] or '?'}",
        f"limit {limit_text(run)}",
    ]
    lines = [
        f"drugprot report: {run['name']} ({run['source']})",
        f"  {run['path']}",
        "  " + " | ".join(facts),
        *version_lines(report_versions(report)),
        f"  {report['n_tasks']} tasks, {report['n_rollouts']} rollouts ({per} per task)",
        f"  setting: {report['setting']['note']}",
        ceiling_line(report, outside=PAIR_OUTSIDE, one_answer_per_pair=True),
    ]
    lines += skipped_lines(report["lines"])
    lines += [f"  WARNING: {warning}" for warning in report.get("warnings", [])]
    errored = report["errored"]
    if errored["rollouts"] and not errored["failed"]:
        lines.append(
            f"  errored: {errored['rollouts']} of {report['n_rollouts']} rollouts ({errored['rate']:.1%}) recorded an "
            f"error and gave no answer: {counts_text(errored['types'])}"
        )
    if report["rescored"]:
        lines.append(
            f"  re-scored {report['rescored']} rollouts from their last assistant message "
            "(no usable info['drugprot'] record: older run or scoring error)"
        )
    return lines


def format_report(report: Mapping[str, Any], *, instead_of_training_lines: str | None = None) -> str:
    """The human-readable report of one run; ``instead_of_training_lines``, when given, is the one line shown in place
    of the lines that plan RL training (calibration, step-0 forecast, power): the demo's, for a first reader."""
    k = report["rollouts_per_task"]["max"]
    out = format_failure(report) + _header(report)
    intervals = report.get("intervals")
    out += [
        "",
        "Accuracy (a reply is right when it names one of the pair's gold types)",
        *(
            f"  {name:<27}{pct(value)}{ci}"
            for name, value, ci in (
                ("mean over rollouts", report["accuracy"], ci_text(intervals, "accuracy")),
                (f"mean@{k} (per task)", report["mean_at_k"], ""),
                (f"pass@{k}", report["pass_at_k"], ""),
                ("majority vote (per task)", report["majority_accuracy"], ""),
                ("mean reward", report["mean_reward"], ""),
            )
        ),
        "",
        "Official DrugProt metric (13 types, multi-label pairs, NO-RELATION never scored)",
        *official_metric_lines(report, majority_row="micro, majority per task"),
        *format_intervals_note(intervals),
        *(
            [*calibration_lines(report.get("calibration")), *forecast_lines(report.get("forecast"))]
            if instead_of_training_lines is None
            else [instead_of_training_lines]
        ),
        "",
    ]
    rows = list(report["per_class"].items())
    if report["no_relation"] is not None:
        rows.append(("NO-RELATION (not scored)", report["no_relation"]))
    out += per_class_lines(rows)
    out += ["", *format_confusion(report["confusion"]), ""]
    n = report["n_rollouts"]
    invalid = round(report["invalid_rate"] * n)
    reasons, fmt_reasons = counts_text(report["invalid_reasons"]), counts_text(report["format_reasons"])
    out.append(f"Invalid replies: {invalid} of {n} ({report['invalid_rate']:.1%}): {reasons}")
    fmt_ok = round(report["format_rate"] * n)
    out.append(f"Format ok: {fmt_ok} of {n} ({report['format_rate']:.1%}); not ok: {fmt_reasons}")
    out.append(format_tokens(report["tokens"]))
    return "\n".join(out)


def format_confusion(confusion: Mapping[str, Any]) -> list[str]:
    """The confusion matrix as text: rows gold (first gold type of a multi-label pair), columns predicted.

    Columns are as wide as the widest count or column label plus one space (at least 4), so 4- and 5-digit
    counts stay aligned under their letters.
    """
    columns = [letter_of(name) if name != INVALID else "inv" for name in confusion["columns"]]
    matrix = confusion["matrix"]
    totals = [sum(row) for row in matrix]
    width = 1 + max([3, *(len(c) for c in columns), *(len(str(v)) for row in matrix for v in row)])
    total_width = max([4, *(len(str(t)) for t in totals)])
    lines = [
        "Confusion matrix (rows gold, columns predicted, inv = no valid answer; a right answer on a "
        "multi-label pair counts on its diagonal, a wrong one in the row of its first gold type)",
        "      " + "".join(f"{c:>{width}}" for c in columns),
    ]
    for name, row, total in zip(confusion["labels"], matrix, totals, strict=True):
        cells = "".join(f"{(str(v) if v else '.'):>{width}}" for v in row)
        lines.append(f"  {letter_of(name):<4}{cells}   {total:>{total_width}}  {name}")
    return lines


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
