"""The report of extraction runs as text: one run (``format_extraction_report``) or several side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.evaluation.render import (
    ci_text,
    counts_text,
    data_name,
    format_failure,
    format_tokens,
    has_intervals,
    pct,
    skipped_lines,
    versions_note,
)

_DELTA_NAMES = {"accuracy": "mean accuracy", "micro_f1": "micro F1", "macro_f1": "macro F1 (13 types)"}


def _limit(run: Mapping[str, Any]) -> str:
    return run["limit"] or ("none" if run["limit"] == "" else "?")


def _header(report: Mapping[str, Any]) -> list[str]:
    run, k = report["run"], report["rollouts_per_task"]
    per = str(k["min"]) if k["min"] == k["max"] else f"{k['min']}-{k['max']}"
    facts = [f"model {run['model'] or '?'}", data_name(run), "mode extraction", f"limit {_limit(run)}"]
    versions = run.get("versions") or {}
    lines = [
        f"drugprot report: {run['name']} ({run['source']})",
        f"  {run['path']}",
        "  " + " | ".join(facts),
        "  versions: " + " | ".join(f"{name} {value}" for name, value in versions.items()),
        f"  {report['n_tasks']} abstracts, {report['n_rollouts']} rollouts ({per} per abstract), "
        f"{report['gold_relations']} gold relations",
        f"  setting: {report['setting']['note']}",
        *skipped_lines(report["lines"]),
    ]
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


def intervals_note(intervals: Mapping[str, Any] | None) -> list[str]:
    """What the bracketed intervals are (or why there are none); nothing when they were disabled."""
    if intervals is None:
        return []
    if "unavailable" in intervals:
        return [f"  no 95% intervals: {intervals['unavailable']}"]
    return [
        f"  [low, high]: {intervals['level']:.0%} {intervals['method']} (all rollouts of an abstract together), "
        f"{intervals['resamples']} resamples of the {intervals['tasks']} abstracts, seed {intervals['seed']} "
        "(--bootstrap N, --seed S; --bootstrap 0: none)"
    ]


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
        "                              P      R      F1      TP     FP     FN"
        + ("   F1 95% interval" if has_intervals(intervals) else ""),
    ]
    for name, scores, ci in (
        ("micro, rollouts pooled", report, ci_text(intervals, "micro_f1")),
        ("micro, majority/abstract", report["majority"], ""),
    ):
        c = scores["micro_counts"]
        out.append(
            f"  {name:<26}{pct(scores['micro_precision']):>7}{pct(scores['micro_recall']):>7}"
            f"{pct(scores['micro_f1']):>7}{c['tp']:>7}{c['fp']:>7}{c['fn']:>7}{ci}"
        )
    supported = sum(1 for c in report["per_class"].values() if c["support"])
    out += [
        f"  macro-F1 over the 13 types {pct(report['macro_f1'])}{ci_text(intervals, 'macro_f1')}; over the "
        f"{supported} types with gold support {pct(report['macro_f1_supported'])}",
        "  majority/abstract: the triples listed by more than half of an abstract's answering rollouts (--export-tsv)",
        *intervals_note(intervals),
        "",
        "Per class (rollouts pooled)",
        f"     {'type':<24}{'P':>7}{'R':>7}{'F1':>7}{'support':>9}{'predicted':>11}",
    ]
    for name, c in report["per_class"].items():
        p = pct(c["precision"]) if c["predicted"] else "-"
        r = pct(c["recall"]) if c["support"] else "-"
        f = pct(c["f1"]) if c["predicted"] or c["support"] else "-"
        out.append(f"  {c['letter']}  {name:<24}{p:>7}{r:>7}{f:>7}{c['support']:>9}{c['predicted']:>11}")
    out.append("  (- = undefined: no prediction or no gold of that type; macro-F1 counts it as 0)")
    out += ["", *_quality_lines(report), format_tokens(report["tokens"])]
    return "\n".join(out)


def format_extraction_comparison(
    reports: Sequence[Mapping[str, Any]], comparisons: Sequence[Mapping[str, Any]] | None = None
) -> str:
    """Several extraction runs side by side, each run's intervals, and the paired comparison of each with [1]."""
    cols = [f"[{i}]" for i in range(1, len(reports) + 1)]
    out = [
        f"drugprot report: {col} FAILED RUN {r['run']['name']}: {r['errored']['rollouts']} of {r['n_rollouts']} "
        f"rollouts errored without an answer ({r['errored']['example']}); its figures measure the failure"
        for col, r in zip(cols, reports, strict=True)
        if r["failed"]
    ]
    out.append("drugprot report: comparison of extraction runs")
    for col, report in zip(cols, reports, strict=True):
        run = report["run"]
        out.append(
            f"  {col} {run['name']} ({run['model'] or '?'}, {data_name(run)}, mode extraction, limit "
            f"{run['limit'] or 'none'}) {run['path']}"
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
        ("comparable w/ official", [str(r["setting"]["comparable_with_official"]).lower() for r in reports]),
    ]
    rows += [
        (f"F1 {letter_of(name)} {name}", [pct(r["per_class"][name]["f1"]) for r in reports]) for name in RELATION_NAMES
    ]
    width = max(len(name) for name, _ in rows) + 2
    out += ["", " " * (width + 2) + "".join(f"{c:>9}" for c in cols)]
    out += [f"  {name:<{width}}" + "".join(f"{v:>9}" for v in values) for name, values in rows]
    shown = False
    for col, report in zip(cols, reports, strict=True):
        intervals = report.get("intervals")
        if intervals is None:
            continue
        if "unavailable" in intervals:
            out.append(f"  {col} no 95% intervals: {intervals['unavailable']}")
            continue
        if not shown:
            out += ["", f"{intervals['level']:.0%} intervals ({intervals['method']}, {intervals['resamples']} "
                    f"resamples, seed {intervals['seed']})"]  # fmt: skip
            shown = True
        out.append(
            f"  {col} mean accuracy {pct(report['accuracy'])}{ci_text(intervals, 'accuracy')}   micro F1 "
            f"{pct(report['micro_f1'])}{ci_text(intervals, 'micro_f1')}   macro F1 {pct(report['macro_f1'])}"
            f"{ci_text(intervals, 'macro_f1')}"
        )
    for col, comparison in zip(cols[1:], comparisons or (), strict=False):
        out += ["", *_paired(cols[0], col, comparison)]
    return "\n".join(out)


def _paired(first: str, second: str, comparison: Mapping[str, Any]) -> list[str]:
    from drugprot.evaluation.stats import METRICS  # here, not above: stats loads numpy

    if not comparison["paired"]:
        return [f"Paired comparison {second} - {first}: none, {comparison['reason']}"]
    intervals = comparison["intervals"]
    out = [f"Paired comparison {second} - {first} over the same {comparison['tasks']} abstracts (matched by PMID)"]
    if intervals is not None and "unavailable" not in intervals:
        out.append(
            f"  [low, high]: {intervals['level']:.0%} paired {intervals['method']}, both runs on the same "
            f"resamples; {intervals['resamples']} resamples, seed {intervals['seed']}"
        )
        out += [
            f"  delta {_DELTA_NAMES[name]:<22}{intervals[name]['estimate']:+.3f}{ci_text(intervals, name, signed=True)}"
            for name in METRICS
        ]
    elif intervals is not None:
        out.append(f"  no intervals: {intervals['unavailable']}")
    f = comparison["flips"]
    out.append(
        f"  abstracts whose majority triples are exactly the gold: in {first} only {f['first_only']}, in {second} "
        f"only {f['second_only']}, both {f['both']}, neither {f['neither']}; exact McNemar p = {f['mcnemar_p']:.3g}"
    )
    return out
