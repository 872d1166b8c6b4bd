"""Every number of a pair-mode run's report (one task per chemical-gene pair): rollouts per task, the majority
vote, the official metric with rollouts pooled and by majority answer, the NO-RELATION answer's scores, the setting
(positive-only or with negatives, comparable with BioCreative VII or not), and ``summarize``, the ``--json`` report.
What extraction mode shares with it (ceiling, errors, tokens, intervals over abstracts) is
``drugprot.evaluation.summary``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from drugprot.core.labels import LABEL_ORDER, NO_RELATION, options
from drugprot.core.metrics import RelationRow, Scores, confusion_matrix, prf, score_relations
from drugprot.evaluation import summary as shared
from drugprot.evaluation.calibration import calibration_summary
from drugprot.evaluation.comparability import verdict
from drugprot.evaluation.forecast import forecast_summary
from drugprot.evaluation.fstar import Abstract, shares
from drugprot.evaluation.records import INVALID, ReportError, Rollout, Run, RunConfig
from drugprot.evaluation.stats import DEFAULT_SEED, Bootstrap, count_row
from drugprot.evaluation.summary import (
    bounded_mean,
    ceiling_summary,
    class_dict,
    errored_summary,
    intervals_over_abstracts,
    lines_summary,
    mean,
    micro_f1_interval,
    official_fields,
    run_versions,
    tokens_summary,
)
from drugprot.modes.pair.comparability import RULES


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


def vote_cells(rollouts: Sequence[Rollout]) -> dict[str, Abstract]:
    """Per abstract, the F* cells of its pairs (``drugprot.evaluation.fstar``): each (pair, type) some rollout of the
    pair stated, with the share of the pair's rollouts stating it, and the pair's gold types; N is never a cell."""
    stated: dict[str, list[tuple[float, bool]]] = {}
    gold: Counter[str] = Counter()
    for (pmid, _, _), group in group_by_task(rollouts).items():
        types = set(group[0].labels) - {NO_RELATION.name}
        votes = Counter(r.label for r in group if r.label is not None and r.label != NO_RELATION.name)
        stated.setdefault(pmid, []).extend(
            (share, label in types) for label, share in shares(votes, len(group)).items()
        )
        gold[pmid] += len(types)
    return {pmid: Abstract(tuple(cells), gold[pmid]) for pmid, cells in stated.items()}


def forecast_of(rollouts: Sequence[Rollout], intervals: dict[str, Any] | None) -> dict[str, Any]:
    """The report's ``forecast`` (``drugprot.evaluation.forecast``): each pair's rollouts' reward and tokens."""
    by_task = group_by_task(rollouts).values()
    groups = [[(r.reward, r.input_tokens, r.output_tokens) for r in g] for g in by_task]
    negative = [not (set(g[0].labels) - {NO_RELATION.name}) for g in by_task]
    resampled = intervals.get("abstracts") if intervals is not None and "unavailable" not in intervals else None
    return forecast_summary(groups, micro_f1_interval(intervals), resampled, negative)


PAIRS_TOGETHER = "all pairs and rollouts of an abstract together"
"""How pair mode's bootstrap resamples (``summary.bootstrap_dict``'s ``together``)."""


def bootstrap_dict(result: Bootstrap, *, tasks: int) -> dict[str, Any]:
    """``summary.bootstrap_dict`` of a pair-mode bootstrap over abstracts (``tasks``: the pairs in them)."""
    return shared.bootstrap_dict(result, tasks=tasks, together=PAIRS_TOGETHER)


def _intervals(rollouts: Sequence[Rollout], resamples: int, seed: int) -> dict[str, Any] | None:
    """The ``intervals`` of ``summarize``: None when disabled; a reason instead of figures when impossible."""
    if resamples <= 0:
        return None
    keys, counts = task_counts(rollouts)
    pmids = [key[0] for key in keys]
    return intervals_over_abstracts(pmids, counts, together=PAIRS_TOGETHER, resamples=resamples, seed=seed)


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
        "calibration": calibration_summary(
            pooled.f1,
            intervals,
            rollouts,
            abstracts=vote_cells(rollouts),
            rollouts_per_task=min(ks),
            tasks=len(groups),
            resamples=resamples,
            seed=seed,
        )
        if negatives
        else None,
        "forecast": forecast_of(rollouts, intervals),
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
