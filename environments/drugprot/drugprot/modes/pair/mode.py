"""Pair mode's object: ``PairTasks`` (what the environment asks, ``task.py``) with the report side of its
runs (``drugprot.modes.base.Mode``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drugprot.core.options import TaskOptions
from drugprot.core.schema import Document
from drugprot.evaluation.records import Rollout, Run, Versions
from drugprot.modes.base import Mode
from drugprot.modes.pair import baseline, compare, decode, export
from drugprot.modes.pair.comparability import RULES
from drugprot.modes.pair.render import format_comparison, format_report
from drugprot.modes.pair.summary import bootstrap_dict, summarize, task_counts
from drugprot.modes.pair.task import PairTasks


class PairMode(PairTasks, Mode):
    rollout_type = Rollout
    chart_unit = "pair mode (one task per chemical-gene pair): gold pairs"
    comparability = RULES

    def task_of(self, data: dict[str, Any], prefix: str) -> Any:
        return decode.gold_pair(data, prefix)

    def rollout(
        self,
        task: Any,
        info: dict[str, Any] | None,
        accuracy: Callable[[], float | None],
        reply: tuple[str | None, str | None] | None,
        error: str | None,
        facts: dict[str, Any],
        *,
        trusted: bool,
    ) -> Rollout:
        return Rollout.of(
            task, decode.answer_of(decode.record_of(info) if trusted else None, reply, task, error), **facts
        )

    def owns_report(self, report: Mapping[str, Any]) -> bool:
        return True  # the fallback, as in ``claims``

    def records(self, run: Run) -> list[Any]:
        return run.rollouts

    def task_gold(self, rollout: Rollout) -> tuple[str, tuple[str, ...]]:
        gold = (*sorted(rollout.labels), f"with_no_relation={rollout.with_no_relation}")
        return f"pmid {rollout.pmid} {rollout.arg1}-{rollout.arg2}", gold

    def summarize(self, run: Run, *, resamples: int, seed: int) -> dict[str, Any]:
        return summarize(run, resamples=resamples, seed=seed)

    def format_report(self, report: Mapping[str, Any]) -> str:
        return format_report(report)

    def format_comparison(
        self, reports: Sequence[Mapping[str, Any]], runs: Sequence[Run], comparisons: Sequence[Mapping[str, Any]]
    ) -> str:
        return format_comparison(reports, [{r.key for r in run.rollouts} for run in runs], comparisons)

    def same_tasks(self, first: Run, second: Run) -> str | None:
        return compare.same_tasks(first, second)

    def task_counts(self, run: Run) -> tuple[list[Any], Any]:
        return task_counts(run.rollouts)

    def majority_right(self, run: Run) -> dict[Any, bool]:
        return compare.majority_right(run)

    def abstract_of(self, key: Any) -> str:
        return key[0]

    def intervals(self, delta: Any, *, tasks: int) -> dict[str, Any]:
        return bootstrap_dict(delta, tasks=tasks)

    def baseline_run(
        self,
        baseline_name: str,
        rule: Callable[..., Any],
        options: TaskOptions,
        documents: list[Document],
        *,
        versions: Versions | None,
        costs: tuple[float, float] | None,
    ) -> Run:
        return baseline.baseline_run(baseline_name, rule, options, documents, versions=versions, costs=costs)

    def prediction_rows(self, run: Run) -> list[tuple[str, str, str, str]]:
        return export.prediction_rows(run.rollouts)

    def gold_rows(self, run: Run) -> list[tuple[str, str, str, str]]:
        return export.gold_rows(run.rollouts)


PAIR = PairMode()
