"""Every number of a run's report: rollouts per task, majority vote, official scores, setting, ``summarize``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from drugprot.core.labels import LABEL_ORDER, NO_RELATION, letter_of, options
from drugprot.core.metrics import RelationRow, Scores, confusion_matrix, prf, score_relations
from drugprot.evaluation.calibration import calibration_summary
from drugprot.evaluation.records import (
    INVALID,
    MOSTLY_ERRORED,
    UNKNOWN,
    VERSION_NAMES,
    ExtractionRollout,
    ReportError,
    Rollout,
    Run,
    RunConfig,
)
from drugprot.evaluation.stats import DEFAULT_SEED, Bootstrap, bootstrap_metrics, by_abstract, count_row


def run_versions(rollouts: Sequence[Rollout | ExtractionRollout]) -> dict[str, str]:
    """What made a run's rollouts (``VERSION_NAMES``): each value as recorded, ``unknown`` when no rollout
    recorded it, or the distinct values joined by `` + `` when its rollouts differ (``unknown`` among them
    for rollouts without a record)."""
    seen: list[dict[str, None]] = [{} for _ in VERSION_NAMES]
    for rollout in rollouts:
        for values, value in zip(seen, rollout.versions or (UNKNOWN,) * len(VERSION_NAMES), strict=True):
            values[value] = None
    return {name: " + ".join(values) or UNKNOWN for name, values in zip(VERSION_NAMES, seen, strict=True)}


def group_by_task(rollouts: Iterable[Rollout]) -> dict[tuple[str, str, str], list[Rollout]]:
    """Rollouts per task key ``(pmid, arg1, arg2)``, tasks in first-seen order."""
    groups: dict[tuple[str, str, str], list[Rollout]] = {}
    for rollout in rollouts:
        groups.setdefault(rollout.key, []).append(rollout)
    return groups


def majority_label(rollouts: Sequence[Rollout]) -> str | None:
    """The task's majority answer: the valid label given most often (invalid replies do not vote).

    Ties go to the label that comes first in the official order (A-M, then N = NO-RELATION), so the
    choice never depends on the order rollouts finished in. None when no rollout gave a valid answer.
    """
    votes = Counter(r.label for r in rollouts if r.label is not None)
    if not votes:
        return None
    return min(votes, key=lambda label: (-votes[label], LABEL_ORDER[label]))


def _rows(
    items: Iterable[tuple[str, tuple[str, str, str], tuple[str, ...], str | None]],
) -> tuple[list[RelationRow], list[RelationRow]]:
    """Gold and predicted official rows of ``(replica, key, gold labels, predicted label)`` items.

    ``replica`` keeps several predictions for one pair apart (one replica per rollout), so pooling k
    rollouts scores like k copies of the evaluated pairs.
    """
    gold: list[RelationRow] = []
    pred: list[RelationRow] = []
    for replica, (pmid, arg1, arg2), labels, label in items:
        doc = f"{pmid}#{replica}" if replica else pmid
        gold.extend((doc, arg1, arg2, g) for g in labels)
        if label is not None:
            pred.append((doc, arg1, arg2, label))
    return gold, pred


def pooled_scores(rollouts: Sequence[Rollout]) -> Scores:
    """The official metric with every rollout one prediction for its pair (k rollouts = k copies of the gold)."""
    items = []
    for group in group_by_task(rollouts).values():
        items += [(str(i), r.key, r.labels, r.label) for i, r in enumerate(group)]
    return score_relations(*_rows(items))


def majority_scores(rollouts: Sequence[Rollout]) -> Scores:
    """The official metric on one prediction per task, the majority answer (what ``--export-tsv`` writes)."""
    items = [("", key, group[0].labels, majority_label(group)) for key, group in group_by_task(rollouts).items()]
    return score_relations(*_rows(items))


def task_counts(rollouts: Sequence[Rollout]) -> tuple[list[tuple[str, str, str]], Any]:
    """Each task's key and its ``stats.count_row`` (rollouts, right ones, official TP/FP/FN per type).

    The rows sum to the run's pooled counts: each row is ``pooled_scores`` of the task's rollouts alone.
    Returns ``(keys, array of shape (tasks, stats.WIDTH))``, tasks in key order: the bootstrap resamples rows by
    index, so an order that followed the rollouts' finishing order would change the intervals from run to run.
    """
    import numpy as np

    groups = dict(sorted(group_by_task(rollouts).items()))
    rows = [count_row(len(group), sum(r.correct for r in group), pooled_scores(group)) for group in groups.values()]
    return list(groups), np.array(rows)


def intervals_over_abstracts(
    pmids: Sequence[str], counts: Any, *, together: str, resamples: int, seed: int
) -> dict[str, Any]:
    """The ``intervals`` of a run, either mode: the tasks' count rows (``pmids[i]``: the abstract of row ``i``)
    summed per abstract and bootstrapped over abstracts; a reason instead of figures when there are fewer than 2."""
    abstracts, summed = by_abstract(pmids, counts)
    if len(abstracts) < 2:
        return {"unavailable": f"a bootstrap over abstracts needs at least 2 abstracts; this run has {len(abstracts)}"}
    result = bootstrap_metrics(summed, resamples=resamples, seed=seed)
    return bootstrap_dict(result, tasks=len(pmids), together=together)


def _intervals(rollouts: Sequence[Rollout], resamples: int, seed: int) -> dict[str, Any] | None:
    """The ``intervals`` of ``summarize``: None when disabled; a reason instead of figures when impossible."""
    if resamples <= 0:
        return None
    keys, counts = task_counts(rollouts)
    pmids = [key[0] for key in keys]
    return intervals_over_abstracts(pmids, counts, together=PAIRS_TOGETHER, resamples=resamples, seed=seed)


PAIRS_TOGETHER = "all pairs and rollouts of an abstract together"
"""How pair mode's bootstrap resamples (``bootstrap_dict``'s ``together``)."""


def bootstrap_dict(result: Bootstrap, *, tasks: int, together: str = PAIRS_TOGETHER) -> dict[str, Any]:
    """The JSON of a bootstrap over abstracts: its settings (``tasks``: the tasks in those abstracts; ``together``:
    what is resampled with an abstract) and the interval of each of ``stats.METRICS``."""
    return {
        "level": result.level,
        "method": f"{result.method} bootstrap over abstracts",
        "unit": f"abstract: {together}",
        "together": together,
        "abstracts": result.units,
        "tasks": tasks,
        "resamples": result.resamples,
        "seed": result.seed,
        **{name: {"estimate": i.estimate, "low": i.low, "high": i.high} for name, i in result.intervals.items()},
    }


CANDIDATE_RULE = "same-sentence chemical-gene mention pairs, gold or not"
"""The candidate rule (``drugprot.core.candidates``), as the report names it."""


def ceiling_summary(
    rollouts: Sequence[Rollout | ExtractionRollout], in_tasks: int | None, *, one_answer_per_pair: bool = False
) -> dict[str, Any]:
    """The ``ceiling`` of a report: the evaluated abstracts' gold relations, how many are on candidate pairs, how
    many can never be predicted (``never_predicted``: not on a candidate), how many a run can reach
    (``reachable``) and the recall and F1 a perfect run would reach, and ``in_tasks``: the gold relations of the
    run's own tasks (pair mode; fewer than the candidates when the tasks were limited).

    ``one_answer_per_pair`` (pair mode): one answer names one type, so of a multi-label pair only one gold type is
    reachable; ``second_types`` counts the others (None when the run did not record them: ``reachable`` then
    counts them, an upper bound). Extraction mode reaches every candidate relation (``second_types`` 0).
    ``known`` is False when some rollout's task did not record its abstract's ceiling (an older run)."""
    per_abstract: dict[str, tuple[int, int, int | None] | None] = {}
    for rollout in rollouts:
        per_abstract.setdefault(rollout.pmid, rollout.ceiling)
    out: dict[str, Any] = {"rule": CANDIDATE_RULE, "abstracts": len(per_abstract), "in_tasks": in_tasks}
    recorded = [value for value in per_abstract.values() if value is not None]
    if len(recorded) < len(per_abstract):
        return out | {"known": False}
    gold = sum(value[0] for value in recorded)
    candidates = sum(value[1] for value in recorded)
    second: int | None = 0
    if one_answer_per_pair:
        per_pair = [value[2] if len(value) > 2 else None for value in recorded]
        second = None if None in per_pair else candidates - sum(p for p in per_pair if p is not None)
    reachable = candidates - (second or 0)
    return out | {
        "known": True,
        "gold_relations": gold,
        "candidates": candidates,
        "never_predicted": gold - candidates,
        "second_types": second,
        "reachable": reachable,
        "max_recall": reachable / gold if gold else None,
        "max_f1": 2 * reachable / (reachable + gold) if gold else None,
    }


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def bounded_mean(values: Sequence[float]) -> float:
    """The mean of finite values, dividing first so that it stays finite (a sum of huge rewards would not)."""
    return sum(v / len(values) for v in values)


def errored_summary(rollouts: Sequence[Rollout | ExtractionRollout]) -> dict[str, Any]:
    """How many rollouts errored without an answer, by error type, and whether the run failed.

    ``failed`` is True when more than ``MOSTLY_ERRORED`` of the rollouts errored (e.g. every rollout a
    provider error: no API key, no route): the figures then measure the failure, not the model.
    """
    errored = [r for r in rollouts if r.errored]
    example = next((r for r in errored if r.error_message), errored[0] if errored else None)
    rate = len(errored) / len(rollouts) if rollouts else 0.0
    return {
        "failed": rate > MOSTLY_ERRORED,
        "rollouts": len(errored),
        "rate": rate,
        "types": dict(Counter(r.error for r in errored).most_common()),
        "example": None if example is None else f"{example.error}: {example.error_message or ''}".rstrip(": "),
    }


def _option_labels(rollouts: Sequence[Rollout]) -> list[str]:
    """Confusion-matrix labels: the options offered (A-M, plus N when any task offered or used it)."""
    with_nr = any(r.with_no_relation or NO_RELATION.name in (r.label, *r.labels) for r in rollouts)
    return [o.name for o in options(with_nr)]


def _no_relation_scores(rollouts: Sequence[Rollout]) -> dict[str, float | int] | None:
    """P/R/F1 of the N answer (not an official class), for runs with NO-RELATION tasks; else None."""
    if not any(r.with_no_relation for r in rollouts):
        return None
    gold = [NO_RELATION.name in r.labels for r in rollouts]
    pred = [r.label == NO_RELATION.name for r in rollouts]
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    p, r, f = prf(tp, sum(pred) - tp, sum(gold) - tp)
    return {
        "letter": NO_RELATION.letter,
        "precision": p,
        "recall": r,
        "f1": f,
        "support": sum(gold),
        "predicted": sum(pred),
    }


def setting_of(rollouts: Sequence[Rollout], config: RunConfig, ceiling: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the micro-F1 means for this run: mode, negatives, and whether it is comparable with BioCreative VII
    (``comparability.verdict``: True only for ``negatives=all`` over a whole official split with every gold
    relation a candidate; None when the run does not record enough to tell). ``ceiling``: the run's
    ``ceiling_summary`` (computed from ``rollouts`` when not given)."""
    from drugprot.evaluation.comparability import verdict
    from drugprot.modes.pair.comparability import RULES

    with_nr = any(r.with_no_relation for r in rollouts)
    if not with_nr:
        return {
            "mode": "positive-only",
            "negatives": config.negatives or "0",
            "comparable_with_official": False,
            "note": "positive-only: every evaluated pair is a gold pair, so precision and recall differ only "
            "through invalid answers (FN, no FP) and wrong types (FP and FN); on a multi-label pair "
            "one answer can find only one of its gold relations. NOT comparable with BioCreative VII.",
        }
    ceiling = ceiling if ceiling is not None else ceiling_summary(rollouts, None)
    comparable, why = verdict(config, rules=RULES, abstracts=len({r.pmid for r in rollouts}), ceiling=ceiling)
    return {
        "mode": "negatives",
        "negatives": config.negatives,
        "comparable_with_official": comparable,
        "note": "with NO-RELATION candidates: a type answered on a no-relation pair is a false positive; an N or "
        "invalid answer on a gold pair is a false negative; N itself is never scored. " + why[0].upper() + why[1:],
    }


def class_dict(scores: Scores) -> dict[str, dict[str, Any]]:
    return {
        c.label: {
            "letter": letter_of(c.label),
            "precision": c.precision,
            "recall": c.recall,
            "f1": c.f1,
            "support": c.support,
            "predicted": c.predicted,
            "tp": c.tp,
            "fp": c.fp,
            "fn": c.fn,
        }
        for c in scores.per_class
    }


def official_fields(pooled: Scores, voted: Scores) -> dict[str, Any]:
    """The official metric's entries of a summary: micro and macro scores with rollouts pooled, and the micro and
    macro-F1 of the majority answers (``majority``)."""
    return {
        "micro_precision": pooled.precision,
        "micro_recall": pooled.recall,
        "micro_f1": pooled.f1,
        "micro_counts": {"tp": pooled.tp, "fp": pooled.fp, "fn": pooled.fn},
        "macro_precision": pooled.macro_precision,
        "macro_recall": pooled.macro_recall,
        "macro_f1": pooled.macro_f1,
        "macro_f1_supported": pooled.supported_macro_f1,
        "majority": {
            "micro_precision": voted.precision,
            "micro_recall": voted.recall,
            "micro_f1": voted.f1,
            "micro_counts": {"tp": voted.tp, "fp": voted.fp, "fn": voted.fn},
            "macro_f1": voted.macro_f1,
            "macro_f1_supported": voted.supported_macro_f1,
        },
    }


def summarize(run: Run, *, resamples: int = 0, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Every number of the report for one run, as a JSON-ready dict (the ``--json`` output).

    ``resamples`` > 0 adds ``intervals``: 95% percentile bootstrap intervals of accuracy, micro-F1 and macro-F1
    (rollouts pooled) over ``resamples`` resamples of the abstracts (all pairs and rollouts of an abstract
    together), seeded by ``seed`` (``stats.bootstrap_metrics``); ``{"unavailable": reason}`` when the run has
    fewer than 2 abstracts; None when ``resamples`` is 0.

    Raises:
        ReportError: the run has no rollouts.
    """
    rollouts = run.rollouts
    if not rollouts:
        raise ReportError(f"{run.path}: no rollouts to report")
    groups = group_by_task(rollouts)
    per_task = [mean([float(r.correct) for r in group]) for group in groups.values()]
    majority = {key: majority_label(group) for key, group in groups.items()}
    ks = [len(group) for group in groups.values()]
    pooled, voted = pooled_scores(rollouts), majority_scores(rollouts)
    labels = _option_labels(rollouts)
    matrix = confusion_matrix([r.labels for r in rollouts], [r.label or INVALID for r in rollouts], [*labels, INVALID])
    invalid = [r for r in rollouts if r.label is None]
    rewards = [r.reward for r in rollouts if r.reward is not None]
    n = len(rollouts)
    errored = errored_summary(rollouts)
    in_tasks = sum(len(set(g[0].labels) - {NO_RELATION.name}) for g in groups.values())
    ceiling = ceiling_summary(rollouts, in_tasks, one_answer_per_pair=True)
    intervals = _intervals(rollouts, resamples, seed)
    negatives = any(r.with_no_relation for r in rollouts)  # the official metric's setting: calibrate here only
    return {
        "failed": errored["failed"],
        "errored": errored,
        "warnings": list(run.warnings),
        "run": {
            "name": run.name,
            "path": run.path,
            "source": run.source,
            "model": run.config.model,
            "split": run.config.split,
            "data_path": run.config.data_path,
            "data_label": run.config.data_label,
            "limit": run.config.limit,
            "versions": run_versions(rollouts),
        },
        "setting": setting_of(rollouts, run.config, ceiling),
        "n_tasks": len(groups),
        "n_rollouts": n,
        "rollouts_per_task": {"min": min(ks), "max": max(ks)},
        "accuracy": mean([float(r.correct) for r in rollouts]),
        "mean_at_k": mean(per_task),
        "pass_at_k": mean([float(score > 0) for score in per_task]),
        "majority_accuracy": mean([float(majority[key] in group[0].labels) for key, group in groups.items()]),
        "mean_reward": bounded_mean(rewards) if rewards else None,
        **official_fields(pooled, voted),
        "intervals": intervals,
        "calibration": calibration_summary(pooled.f1, intervals, rollouts) if negatives else None,
        "ceiling": ceiling,
        "per_class": class_dict(pooled),
        "no_relation": _no_relation_scores(rollouts),
        "confusion": {"labels": labels, "columns": [*labels, INVALID], "matrix": matrix[: len(labels)]},
        "invalid_rate": len(invalid) / n,
        "invalid_reasons": dict(Counter(r.invalid_reason or "?" for r in invalid).most_common()),
        "format_rate": sum(r.format_reason is None for r in rollouts) / n,
        "format_reasons": dict(Counter(r.format_reason for r in rollouts if r.format_reason).most_common()),
        "tokens": tokens_summary(rollouts),
        "lines": lines_summary(run, n),
        "rescored": sum(r.rescored for r in rollouts),
    }


def tokens_summary(rollouts: Sequence[Rollout | ExtractionRollout]) -> dict[str, Any]:
    """Token usage of a run's rollouts (the ``tokens`` of ``summarize``)."""
    with_tokens = [r for r in rollouts if r.output_tokens is not None]
    return {
        "rollouts_with_usage": len(with_tokens),
        "mean_input": mean([float(r.input_tokens or 0) for r in with_tokens]) if with_tokens else None,
        "mean_output": mean([float(r.output_tokens or 0) for r in with_tokens]) if with_tokens else None,
        "max_output": max((r.output_tokens or 0 for r in with_tokens), default=None),
        "total_input": sum(r.input_tokens or 0 for r in with_tokens),
        "total_output": sum(r.output_tokens or 0 for r in with_tokens),
        "truncated": sum(r.truncated for r in rollouts),
    }


def lines_summary(run: Run, rollouts: int) -> dict[str, Any]:
    """What reading the run file found (the ``lines`` of ``summarize``): ``rollouts`` of the run's records."""
    return {
        "read": run.lines,
        "blank": run.blank,
        "records": rollouts + len(run.corrupt) + len(run.unidentified),
        "corrupt": len(run.corrupt),
        "unidentified": len(run.unidentified),
        "corrupt_lines": [str(s) for s in run.corrupt],
        "unidentified_lines": [str(s) for s in run.unidentified],
    }
