"""Every number of an extraction-mode run (one task per abstract): the official metric over triples, per class,
answer quality, rewards, and 95% intervals resampling abstracts.

The official metric is ``drugprot.core.metrics.score_relations`` on official rows, as in pair mode: each
rollout's scored triples ``(chemical id, gene id, type)`` are its predictions for its abstract, the abstract's
gold triples the gold. Every chemical-gene pair of the abstract is a cell of the metric (a triple the model lists
that the gold lacks is a false positive, a gold triple it does not list a false negative), which is the official
task's matching. Two aggregates, as in pair mode:

- **rollouts pooled**: each rollout is a copy of its abstract (k rollouts = k copies of the gold), so the figures
  are those of the average rollout;
- **majority per abstract**: one prediction per abstract, the triples listed by more than half of its rollouts
  that gave an answer (``voted_relations``: a strict majority, so a triple on exactly half of them is left out;
  replies without a relations block do not vote; with one rollout per abstract, its answer). This is what
  ``--export-tsv`` writes, so the official scorer reproduces it.

Intervals (``stats.bootstrap_metrics``) resample abstracts, all rollouts of an abstract together, in sorted PMID
order (``stats.by_abstract``): an abstract's cells belong to it alone, so its count row (``task_counts``) sums
exactly into the run's pooled counts. There
"accuracy" is the mean accuracy reward, the per-abstract F1 of ``drugprot.core.scoring.score_extraction``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from drugprot.core.extraction import NO_BLOCK
from drugprot.core.metrics import RelationRow, Scores, score_relations
from drugprot.core.parsing import REASONING_INCOMPLETE
from drugprot.evaluation.calibration import calibration_summary
from drugprot.evaluation.forecast import forecast_summary
from drugprot.evaluation.fstar import Abstract, shares
from drugprot.evaluation.records import ExtractionRollout, ReportError, Run, RunConfig, Triple
from drugprot.evaluation.stats import DEFAULT_SEED, count_row
from drugprot.evaluation.summary import (
    bootstrap_dict,
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

EXTRACTION = "extraction"
"""``setting.mode`` of an extraction run's report (pair runs: ``positive-only`` or ``negatives``)."""


def group_by_abstract(rollouts: Iterable[ExtractionRollout]) -> dict[str, list[ExtractionRollout]]:
    """Rollouts per abstract (PMID), abstracts in first-seen order."""
    groups: dict[str, list[ExtractionRollout]] = {}
    for rollout in rollouts:
        groups.setdefault(rollout.pmid, []).append(rollout)
    return groups


def voted_relations(rollouts: Sequence[ExtractionRollout]) -> tuple[Triple, ...]:
    """An abstract's majority prediction: the triples listed by more than half of its answering rollouts, sorted.

    Rollouts without a relations block do not vote; () when none answered.
    """
    answered = [r for r in rollouts if r.answered]
    votes = Counter(triple for r in answered for triple in r.answer.relations)
    return tuple(sorted(triple for triple, n in votes.items() if 2 * n > len(answered)))


def _rows(pmid: str, triples: Iterable[Triple]) -> list[RelationRow]:
    return [(pmid, chemical, gene, kind) for chemical, gene, kind in triples]


def pooled_scores(rollouts: Sequence[ExtractionRollout]) -> Scores:
    """The official metric with every rollout one prediction for a copy of its abstract."""
    gold: list[RelationRow] = []
    pred: list[RelationRow] = []
    for pmid, group in group_by_abstract(rollouts).items():
        for i, rollout in enumerate(group):
            replica = f"{pmid}#{i}"
            gold += _rows(replica, rollout.gold.relations)
            pred += _rows(replica, rollout.answer.relations)
    return score_relations(gold, pred)


def majority_scores(rollouts: Sequence[ExtractionRollout]) -> Scores:
    """The official metric on one prediction per abstract, ``voted_relations`` (what ``--export-tsv`` writes)."""
    gold: list[RelationRow] = []
    pred: list[RelationRow] = []
    for pmid, group in group_by_abstract(rollouts).items():
        gold += _rows(pmid, group[0].gold.relations)
        pred += _rows(pmid, voted_relations(group))
    return score_relations(gold, pred)


def majority_exact(rollouts: Sequence[ExtractionRollout]) -> dict[str, bool]:
    """Per abstract: whether its majority prediction is exactly its gold (and some rollout answered)."""
    return {
        pmid: any(r.answered for r in group) and set(voted_relations(group)) == group[0].gold.relations
        for pmid, group in group_by_abstract(rollouts).items()
    }


def task_counts(rollouts: Sequence[ExtractionRollout]) -> tuple[list[str], Any]:
    """Each abstract's PMID and its ``stats.count_row`` (rollouts, summed accuracy reward, official TP/FP/FN per
    type of its rollouts pooled); the rows sum to the run's pooled counts."""
    import numpy as np

    groups = dict(sorted(group_by_abstract(rollouts).items()))  # key order: intervals independent of finishing order
    rows = [
        count_row(len(group), sum(r.answer.accuracy for r in group), pooled_scores(group)) for group in groups.values()
    ]
    return list(groups), np.array(rows)


def vote_cells(rollouts: Sequence[ExtractionRollout]) -> dict[str, Abstract]:
    """Per abstract, the F* cells (``drugprot.evaluation.fstar``): each triple some rollout listed, with the share of
    the abstract's rollouts listing it, and the abstract's gold triples."""
    out = {}
    for pmid, group in group_by_abstract(rollouts).items():
        gold = group[0].gold.relations
        votes = Counter(triple for r in group for triple in set(r.answer.relations))
        out[pmid] = Abstract(tuple((s, t in gold) for t, s in shares(votes, len(group)).items()), len(gold))
    return out


def forecast_of(rollouts: Sequence[ExtractionRollout], intervals: dict[str, Any] | None) -> dict[str, Any]:
    """The report's ``forecast`` (``drugprot.evaluation.forecast``): each abstract's rollouts' reward and tokens."""
    groups = [[(r.reward, r.input_tokens, r.output_tokens) for r in g] for g in group_by_abstract(rollouts).values()]
    resampled = intervals.get("abstracts") if intervals is not None and "unavailable" not in intervals else None
    return forecast_summary(groups, micro_f1_interval(intervals), resampled)


ROLLOUTS_TOGETHER = "all rollouts of an abstract together"
"""How extraction mode's bootstrap resamples (``summary.bootstrap_dict``'s ``together``)."""


def abstracts_bootstrap(result: Any) -> dict[str, Any]:
    """``summary.bootstrap_dict`` of an extraction run's bootstrap (a task is an abstract)."""
    return bootstrap_dict(result, tasks=result.units, together=ROLLOUTS_TOGETHER)


def _intervals(rollouts: Sequence[ExtractionRollout], resamples: int, seed: int) -> dict[str, Any] | None:
    if resamples <= 0:
        return None
    pmids, counts = task_counts(rollouts)  # one task per abstract
    return intervals_over_abstracts(pmids, counts, together=ROLLOUTS_TOGETHER, resamples=resamples, seed=seed)


def extraction_setting(config: RunConfig, abstracts: int = 0, ceiling: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the micro-F1 of an extraction run means, and whether it is comparable with BioCreative VII
    (``comparability.verdict``: only every abstract of an official split is; None when the run does not record
    enough to tell)."""
    from drugprot.evaluation.comparability import verdict
    from drugprot.modes.extraction.comparability import RULES

    comparable, why = verdict(config, rules=RULES, abstracts=abstracts, ceiling=ceiling or {})
    return {
        "mode": EXTRACTION,
        "negatives": None,
        "comparable_with_official": comparable,
        "note": "extraction: one task per abstract, the model lists every relation; every chemical-gene pair of "
        "the abstract is scored (a listed triple not in the gold is a false positive, an unlisted gold triple a "
        "false negative; no relation is the absence of a line). " + why[0].upper() + why[1:],
    }


def quality(rollouts: Sequence[ExtractionRollout]) -> dict[str, Any]:
    """Answer quality: rejected lines by kind (never scored), and rollouts without an answer by reason."""
    answers = [r.answer for r in rollouts]
    lines = {
        "malformed": sum(a.malformed for a in answers),
        "unknown_id": sum(a.unknown_id for a in answers),
        "wrong_entity_type": sum(a.wrong_type for a in answers),
        "duplicate": sum(a.duplicate for a in answers),
    }
    unanswered = [a.invalid_reason or "?" for a in answers if a.invalid_reason is not None]
    return {
        "rejected_lines": lines,
        "rollouts_with_rejected_lines": sum(
            a.malformed + a.unknown_id + a.wrong_type + a.duplicate > 0 for a in answers
        ),
        "no_answer": len(unanswered),
        "no_block": unanswered.count(NO_BLOCK),
        "reasoning_incomplete": unanswered.count(REASONING_INCOMPLETE),
        "no_answer_reasons": dict(Counter(unanswered).most_common()),
        "predicted_relations": sum(len(a.relations) for a in answers),
    }


def summarize_extraction(run: Run, *, resamples: int = 0, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Every number of the report of an extraction run, as a JSON-ready dict (the ``--json`` output).

    Raises:
        ReportError: the run has no extraction rollouts.
    """
    rollouts = run.extraction
    if not rollouts:
        raise ReportError(f"{run.path}: no extraction rollouts to report")
    groups = group_by_abstract(rollouts)
    ks = [len(group) for group in groups.values()]
    pooled, voted = pooled_scores(rollouts), majority_scores(rollouts)
    exact = majority_exact(rollouts)
    rewards = [r.reward for r in rollouts if r.reward is not None]
    n = len(rollouts)
    errored = errored_summary(rollouts)
    intervals = _intervals(rollouts, resamples, seed)
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
        "setting": extraction_setting(run.config, len(groups)),
        "n_tasks": len(groups),
        "n_rollouts": n,
        "rollouts_per_task": {"min": min(ks), "max": max(ks)},
        "gold_relations": sum(len(group[0].gold.relations) for group in groups.values()),
        "accuracy": mean([r.answer.accuracy for r in rollouts]),
        "mean_at_k": mean([mean([r.answer.accuracy for r in group]) for group in groups.values()]),
        "exact_match": mean([float(r.exact) for r in rollouts]),
        "majority_exact_match": mean([float(right) for right in exact.values()]),
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
        ),
        "forecast": forecast_of(rollouts, intervals),
        "ceiling": ceiling_summary(rollouts, None),
        "per_class": class_dict(pooled),
        "quality": quality(rollouts),
        "invalid_rate": sum(not r.answered for r in rollouts) / n,
        "format_rate": sum(r.answer.format_reason is None for r in rollouts) / n,
        "format_reasons": dict(
            Counter(r.answer.format_reason for r in rollouts if r.answer.format_reason).most_common()
        ),
        "tokens": tokens_summary(rollouts),
        "lines": lines_summary(run, n),
        "rescored": sum(r.rescored for r in rollouts),
    }
