"""The report of extraction runs as text: one run (``format_extraction_report``) or several side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation.calibration import calibration_lines, comparison_calibration_lines
from drugprot.evaluation.forecast import forecast_lines
from drugprot.evaluation.records import version_lines
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
    skipped_lines,
    table_lines,
    versions_note,
)

OUTSIDE = "outside them (across sentences: the prompt says relations hold within one)"
"""How an extraction run's ceiling line names the gold relations off the candidates."""


def _header(report: Mapping[str, Any]) -> list[str]:
    run, k = report["run"], report["rollouts_per_task"]
    per = str(k["min"]) if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    facts = [f"model {run['model'] or '?'}", data_name(run), "mode extraction", f"limit {limit_text(run)}"]
    versions = run.get("versions") or {}
    lines = [
        f"drugprot report: {run['name']} ({run['source']})",
        f"  {run['path']}",
        "  " + " | ".join(facts),
        *version_lines(versions),
        f"  {report['n_tasks']} abstracts, {report['n_rollouts']} rollouts ({per} per abstract), "
        f"{report['gold_relations']} gold relations",
        f"  setting: {report['setting']['note']}",
        ceiling_line(report, outside=OUTSIDE, one_answer_per_pair=False),
        *skipped_lines(report["lines"]),
    ]
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


def _quality_lines(report: Mapping[str, Any]) -> list[str]:
    quality, n = report["quality"], report["n_rollouts"]
    lines = quality["rejected_lines"]
    fmt_ok = round(report["format_rate"] * n)
    return [
        "Answer quality",
        f"  no answer: {quality['no_answer']} of {n} rollouts ({report['invalid_rate']:.1%}): "
        f"{counts_text(quality['no_answer_reasons'])}",
        f"  rejected lines (never scored): malformed {lines['malformed']}, unknown id {lines['unknown_id']}, wrong "
        f"entity type {lines['wrong_entity_type']}, duplicate {lines['duplicate']} "
        f"(in {quality['rollouts_with_rejected_lines']} rollouts)",
        f"  relations listed and scored: {quality['predicted_relations']} "
        f"({quality['predicted_relations'] / n:.1f} per rollout)",
        f"  format ok: {fmt_ok} of {n} ({report['format_rate']:.1%}); not ok: {counts_text(report['format_reasons'])}",
    ]


def format_extraction_report(report: Mapping[str, Any]) -> str:
    """The human-readable report of one extraction run."""
    k = report["rollouts_per_task"]["max"]
    intervals = report.get("intervals")
    out = format_failure(report) + _header(report)
    out += [
        "",
        "Rewards (accuracy = the abstract's F1 over (chemical, gene, type) triples)",
        f"  {'mean accuracy':<27}{pct(report['accuracy'])}{ci_text(intervals, 'accuracy')}",
        f"  {f'mean@{k} (per abstract)':<27}{pct(report['mean_at_k'])}",
        f"  {'exact match (rollouts)':<27}{pct(report['exact_match'])}",
        f"  {'exact match (majority)':<27}{pct(report['majority_exact_match'])}",
        f"  {'mean reward':<27}{pct(report['mean_reward'])}",
        "",
        "Official DrugProt metric (13 types, every chemical-gene pair of each abstract, NO-RELATION never scored)",
        *official_metric_lines(report, majority_row="micro, majority/abstract"),
        "  majority/abstract: the triples listed by more than half of an abstract's answering rollouts (--export-tsv)",
        *format_intervals_note(intervals),
        *calibration_lines(report.get("calibration")),
        *forecast_lines(report.get("forecast")),
        "",
        *per_class_lines(list(report["per_class"].items())),
    ]
    out += ["", *_quality_lines(report), format_tokens(report["tokens"])]
    return "\n".join(out)


def format_extraction_comparison(
    reports: Sequence[Mapping[str, Any]], comparisons: Sequence[Mapping[str, Any]] | None = None
) -> str:
    """Several extraction runs side by side, each run's intervals, and the paired comparison of each with [1]."""
    cols = [f"[{i}]" for i in range(1, len(reports) + 1)]
    out = failed_run_lines(cols, reports)
    out.append("drugprot report: comparison of extraction runs")
    for col, report in zip(cols, reports, strict=True):
        run = report["run"]
        out.append(
            f"  {col} {run['name']} ({run['model'] or '?'}, {data_name(run)}, mode extraction, limit "
            f"{limit_text(run)}) {run['path']}"
        )
    note = versions_note(cols, reports)
    if note is not None:
        out.append(note)
    rows: list[tuple[str, list[str]]] = [
        ("abstracts", [str(r["n_tasks"]) for r in reports]),
        ("rollouts", [str(r["n_rollouts"]) for r in reports]),
        ("mean accuracy", [pct(r["accuracy"]) for r in reports]),
        ("exact match", [pct(r["exact_match"]) for r in reports]),
        ("micro precision", [pct(r["micro_precision"]) for r in reports]),
        ("micro recall", [pct(r["micro_recall"]) for r in reports]),
        ("micro F1", [pct(r["micro_f1"]) for r in reports]),
        ("micro F1 (majority)", [pct(r["majority"]["micro_f1"]) for r in reports]),
        ("macro F1 (13 types)", [pct(r["macro_f1"]) for r in reports]),
        ("no-answer rate", [pct(r["invalid_rate"]) for r in reports]),
        ("comparable w/ official", [comparable_text(r["setting"]["comparable_with_official"]) for r in reports]),
    ]
    rows += [
        (f"F1 {letter_of(name)} {name}", [class_f1_text(r["per_class"][name]) for r in reports])
        for name in RELATION_NAMES
    ]
    out += table_lines(cols, rows)
    out += comparison_intervals(cols, reports, accuracy="mean accuracy")
    out += comparison_calibration_lines(cols, reports)
    for col, comparison in zip(cols[1:], comparisons or (), strict=False):
        paired = format_paired(
            cols[0],
            col,
            comparison,
            units="abstracts",
            matched_by="PMID",
            accuracy="mean accuracy",
            flips=("abstracts whose majority triples are exactly the gold", "in"),
            accuracy_test="exact-match test",
        )
        out += ["", *paired]
    return "\n".join(out)
