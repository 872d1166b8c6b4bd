"""The text pieces both modes' reports share: number cells, the header's lines (failure banner, data, limit,
versions, skipped records, ceiling), the official-metric and per-class tables, intervals, the comparison table and
the paired comparison of two runs. Each mode's report is built of them: ``drugprot.modes.pair.render``,
``drugprot.modes.extraction.render``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.rewards import grid_setting
from drugprot.envs.first_contact import legacy_alias_fix
from drugprot.evaluation.records import UNKNOWN, VERSION_NAMES

_MAX_EXAMPLES = 10
"""Skipped records listed in the text report (``--json`` lists every one)."""


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def class_f1_text(c: Mapping[str, Any]) -> str:
    """A class's F1 cell: ``-`` (undefined) when the class has neither a prediction nor gold support."""
    return pct(c["f1"]) if c["predicted"] or c["support"] else "-"


def comparable_text(comparable: bool | None) -> str:
    """The comparison table's "comparable w/ official" cell: true, false, or unknown (not recorded)."""
    return "unknown" if comparable is None else str(comparable).lower()


def counts_text(counter: Mapping[str, int]) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in counter.items()) or "none"


def _listed(skips: Sequence[str]) -> list[str]:
    more = len(skips) - _MAX_EXAMPLES
    return [f"    {s}" for s in skips[:_MAX_EXAMPLES]] + (
        [f"    ... and {more} more (--json lists every one)"] * (more > 0)
    )


def skipped_lines(lines: Mapping[str, Any]) -> list[str]:
    """What reading skipped: malformed records and rollouts of unidentified tasks, each listed."""
    if not lines["corrupt"] and not lines["unidentified"]:
        return []
    rollouts = lines["records"] - lines["corrupt"] - lines["unidentified"]
    out = [
        f"  read {lines['read']} lines, {lines['records']} records: {rollouts} rollouts, {lines['corrupt']} skipped, "
        f"{lines['unidentified']} of unidentified tasks"
    ]
    if lines["corrupt"]:
        out.append(f"  skipped {lines['corrupt']} records (malformed or not DrugProt):")
        out += _listed(lines["corrupt_lines"])
    if lines["unidentified"]:
        out.append(f"  {lines['unidentified']} rollouts of a task that cannot be identified (counted, not scored):")
        out += _listed(lines["unidentified_lines"])
    return out


def format_failure(report: Mapping[str, Any]) -> list[str]:
    """The banner that opens the report of a failed run (most rollouts errored); empty for other runs."""
    errored = report["errored"]
    if not errored["failed"]:
        return []
    return [
        f"drugprot report: FAILED RUN {report['run']['name']}: {errored['rollouts']} of {report['n_rollouts']} "
        f"rollouts ({errored['rate']:.1%}) errored without an answer ({counts_text(errored['types'])})",
        f"  first error: {errored['example']}",
        "  The figures below measure the failure, not the model. Check the endpoint, model name and API key "
        "(or the harness log), then re-run.",
        *([f"  {fix}."] if (fix := legacy_alias_fix(report["run"].get("model"))) else []),
        "",
    ]


def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, with an ``s`` unless ``n`` is 1: ``1 abstract``, ``5 abstracts``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def data_name(run: Mapping[str, Any]) -> str:
    """How a report names a run's data (``report["run"]``): its ``data_label``, else its data path, else its split."""
    named = run["data_label"] or run["data_path"]
    return f"data {named}" if named else f"split {run['split'] or '?'}"


def limit_text(run: Mapping[str, Any]) -> str:
    """How a report names a run's task limit (``report["run"]["limit"]``): the limit, ``none`` when the run's config
    records none, ``?`` when the run saved no config (the same word in a report and in a comparison)."""
    return run["limit"] or ("none" if run["limit"] == "" else "?")


def ceiling_line(report: Mapping[str, Any], *, outside: str, one_answer_per_pair: bool) -> str:
    """The report's ceiling line: the evaluated abstracts' gold relations, how many are candidates, how many can
    never be predicted (``summary.ceiling_summary``). ``outside`` names those off the candidates;
    ``one_answer_per_pair``: a task answers one type, so a multi-label pair's second types are counted apart (pair
    mode; an extraction reply lists every type)."""
    c = report.get("ceiling")
    if c is None:
        return "  ceiling: not recorded in this report"
    tasks = "" if c["in_tasks"] is None else f"; {c['in_tasks']} in this run's tasks"
    if not c["known"]:
        return (
            f"  ceiling: unknown (the run's tasks do not record their abstract's gold relations: a run made before "
            f"drugprot recorded them){tasks}"
        )
    bound = f" (max recall {pct(c['max_recall'])}, max F1 {pct(c['max_f1'])})" if c["max_recall"] is not None else ""
    second = c.get("second_types", 0)
    if not one_answer_per_pair or second == 0:
        pairs = ""
    elif second is None:
        pairs = "; one answer names one type, but this run did not record its multi-label pairs (bound counts them)"
    else:
        pairs = (
            f"; {second} of them a second type of a multi-label pair, which one answer cannot name: "
            f"{c['reachable']} reachable"
        )
    return (
        f"  ceiling (candidates: {c['rule']}): {plural(c['gold_relations'], 'gold relation')} in this run's "
        f"{plural(c['abstracts'], 'abstract')}, {c['candidates']} on candidates, {c['never_predicted']} "
        f"{outside}{pairs}{bound}{tasks}"
    )


def report_versions(report: Mapping[str, Any]) -> dict[str, str]:
    """The report's ``run.versions``; all ``unknown`` for a report dict made before they were recorded."""
    versions = report["run"].get("versions") or {}
    return {name: versions.get(name) or UNKNOWN for name in VERSION_NAMES}


def versions_note(cols: Sequence[str], reports: Sequence[Mapping[str, Any]]) -> str | None:
    """The comparison's warning when the runs differ in a version or in their data (None when they do not)."""
    versions = [report_versions(report) for report in reports]
    differ = [name for name in VERSION_NAMES if len({v[name] for v in versions}) > 1]
    if not differ:
        return None
    what = "; ".join(
        f"{name} " + ", ".join(f"{col} {v[name]}" for col, v in zip(cols, versions, strict=True)) for name in differ
    )
    note = f"  note: the runs differ in {', '.join(differ)} ({what}): compare with care"
    rewards = [v["reward"] for v in versions]
    if "reward" in differ and UNKNOWN not in rewards and len({grid_setting(r) for r in rewards}) == 1:
        note += (
            "\n  note: their rewards are one setting on the 1/64 reward grid, the one they ran: "
            f"{grid_setting(rewards[0])}"
        )
    return note


def has_intervals(intervals: Mapping[str, Any] | None) -> bool:
    return intervals is not None and "unavailable" not in intervals


def ci_text(intervals: Mapping[str, Any] | None, name: str, *, signed: bool = False) -> str:
    """``  [low, high]`` of one metric's interval, or "" when there is none."""
    if intervals is None or "unavailable" in intervals:
        return ""
    low, high = intervals[name]["low"], intervals[name]["high"]
    return f"  [{low:+.3f}, {high:+.3f}]" if signed else f"  [{low:.3f}, {high:.3f}]"


def format_intervals_note(intervals: Mapping[str, Any] | None) -> list[str]:
    """What the bracketed intervals are (or why there are none); nothing when they were disabled."""
    if intervals is None:
        return []
    if "unavailable" in intervals:
        return [f"  no 95% intervals: {intervals['unavailable']}"]
    tasks = f" ({intervals['tasks']} tasks)" if intervals["tasks"] != intervals["abstracts"] else ""
    return [
        f"  [low, high]: {intervals['level']:.0%} {intervals['method']} ({intervals['together']}), "
        f"{intervals['resamples']} resamples of the {plural(intervals['abstracts'], 'abstract')}{tasks}, "
        f"seed {intervals['seed']} (--bootstrap N, --bootstrap-seed S; --bootstrap 0: none)"
    ]


def official_metric_lines(report: Mapping[str, Any], *, majority_row: str) -> list[str]:
    """The micro P/R/F1 rows (rollouts pooled; ``majority_row``: the majority answer) and the macro-F1 line."""
    intervals = report.get("intervals")
    out = [
        "                              P      R      F1      TP     FP     FN"
        + ("   F1 95% interval" if has_intervals(intervals) else "")
    ]
    for name, scores, ci in (
        ("micro, rollouts pooled", report, ci_text(intervals, "micro_f1")),
        (majority_row, report["majority"], ""),
    ):
        c = scores["micro_counts"]
        out.append(
            f"  {name:<26}{pct(scores['micro_precision']):>7}{pct(scores['micro_recall']):>7}"
            f"{pct(scores['micro_f1']):>7}{c['tp']:>7}{c['fp']:>7}{c['fn']:>7}{ci}"
        )
    supported = sum(1 for c in report["per_class"].values() if c["support"])
    out.append(
        f"  macro-F1 over the 13 types {pct(report['macro_f1'])}{ci_text(intervals, 'macro_f1')}; over the "
        f"{supported} types with gold support {pct(report['macro_f1_supported'])}"
    )
    return out


def per_class_lines(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The per-class P/R/F1 table (rollouts pooled) of ``(name, class dict)`` rows, with its footnote."""
    out = ["Per class (rollouts pooled)", f"     {'type':<24}{'P':>7}{'R':>7}{'F1':>7}{'support':>9}{'predicted':>11}"]
    for name, c in rows:
        p = pct(c["precision"]) if c["predicted"] else "-"
        r = pct(c["recall"]) if c["support"] else "-"
        f = class_f1_text(c)
        out.append(f"  {c['letter']}  {name:<24}{p:>7}{r:>7}{f:>7}{c['support']:>9}{c['predicted']:>11}")
    out.append("  (- = undefined: no prediction or no gold of that type; macro-F1 counts it as 0)")
    return out


def failed_run_lines(cols: Sequence[str], reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """The FAILED RUN banner of each compared run that failed."""
    return [
        f"drugprot report: {col} FAILED RUN {r['run']['name']}: {r['errored']['rollouts']} of {r['n_rollouts']} "
        f"rollouts errored without an answer ({r['errored']['example']}); its figures measure the failure"
        for col, r in zip(cols, reports, strict=True)
        if r["failed"]
    ]


def table_lines(cols: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """A blank line, then ``rows`` (name, one value per run) under the run columns ``cols``."""
    width = max(len(name) for name, _ in rows) + 2
    return [
        "",
        " " * (width + 2) + "".join(f"{c:>9}" for c in cols),
        *(f"  {name:<{width}}" + "".join(f"{v:>9}" for v in values) for name, values in rows),
    ]


def comparison_intervals(
    cols: Sequence[str], reports: Sequence[Mapping[str, Any]], *, accuracy: str = "accuracy"
) -> list[str]:
    """Each run's 95% intervals of accuracy (named ``accuracy``), micro-F1 and macro-F1, one line per run."""
    out: list[str] = []
    shown = False  # the heading, before the first run that has intervals
    for col, report in zip(cols, reports, strict=True):
        intervals = report.get("intervals")
        if intervals is None:
            continue
        if "unavailable" in intervals:
            out.append(f"  {col} no 95% intervals: {intervals['unavailable']}")
            continue
        if not shown:
            shown = True
            out += [
                "",
                f"{intervals['level']:.0%} intervals ({intervals['method']}, {intervals['together']}; "
                f"{intervals['resamples']} resamples, seed {intervals['seed']})",
            ]
        out.append(
            f"  {col} {accuracy} {pct(report['accuracy'])}{ci_text(intervals, 'accuracy')}   micro F1 "
            f"{pct(report['micro_f1'])}{ci_text(intervals, 'micro_f1')}   macro F1 {pct(report['macro_f1'])}"
            f"{ci_text(intervals, 'macro_f1')}"
        )
    return out


def format_tokens(tokens: Mapping[str, Any]) -> str:
    if not tokens["rollouts_with_usage"]:
        return f"Tokens: no usage recorded; {tokens['truncated']} rollouts stopped at max_tokens"
    return (
        f"Tokens per rollout: input {tokens['mean_input']:.1f}, output {tokens['mean_output']:.1f} "
        f"(max {tokens['max_output']}); total {tokens['total_input']:,} in, {tokens['total_output']:,} out; "
        f"{tokens['truncated']} rollouts stopped at max_tokens (finish_reason=length)"
    )


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
    from drugprot.evaluation.forecast import paired_power, paired_power_line
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
            *paired_power_line(paired_power(intervals.get("micro_f1"))),
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
