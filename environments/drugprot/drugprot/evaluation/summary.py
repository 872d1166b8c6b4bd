"""The pieces of a run's report summary that both modes share: what made the run, intervals over abstracts and
their JSON, the candidate ceiling, errored rollouts, per-class and official-metric fields, tokens, what reading
the run file found. Each mode's own ``summarize`` builds on them: ``drugprot.modes.pair.summary``,
``drugprot.modes.extraction.summary``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from drugprot.core.labels import letter_of
from drugprot.core.metrics import Scores
from drugprot.evaluation.records import MOSTLY_ERRORED, UNKNOWN, VERSION_NAMES, ExtractionRollout, Rollout, Run
from drugprot.evaluation.stats import Bootstrap, bootstrap_metrics, by_abstract


def run_versions(rollouts: Sequence[Rollout | ExtractionRollout]) -> dict[str, str]:
    """What made a run's rollouts (``VERSION_NAMES``): each value as recorded, ``unknown`` when no rollout
    recorded it, or the distinct values joined by `` + `` when its rollouts differ (``unknown`` among them
    for rollouts without a record)."""
    seen: list[dict[str, None]] = [{} for _ in VERSION_NAMES]
    for rollout in rollouts:
        for values, value in zip(seen, rollout.versions or (UNKNOWN,) * len(VERSION_NAMES), strict=True):
            values[value] = None
    return {name: " + ".join(values) or UNKNOWN for name, values in zip(VERSION_NAMES, seen, strict=True)}


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


def micro_f1_interval(intervals: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The report's ``intervals["micro_f1"]`` (``low``/``high``), or None when the report has no intervals."""
    return intervals.get("micro_f1") if intervals is not None and "unavailable" not in intervals else None


def bootstrap_dict(result: Bootstrap, *, tasks: int, together: str) -> dict[str, Any]:
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
