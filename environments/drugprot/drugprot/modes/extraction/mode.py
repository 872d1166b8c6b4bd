"""Extraction mode's object: ``ExtractionTasks`` (what the environment asks, ``task.py``) with the report side of its
runs (``drugprot.modes.base.Mode``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drugprot.core.options import TaskOptions
from drugprot.core.schema import Document
from drugprot.evaluation.records import ExtractionRollout, Run, Versions
from drugprot.modes.base import Mode
from drugprot.modes.extraction import baseline, compare, decode, export, render, summary
from drugprot.modes.extraction.comparability import RULES
from drugprot.modes.extraction.task import ExtractionTasks


class ExtractionMode(ExtractionTasks, Mode):
    rollout_type = ExtractionRollout
    chart_unit = "extraction mode (one task per abstract): gold triples"
    plot_refusal = (
        "--plot draws the confusion matrix of pair-mode answers; an extraction run has none (use --plot-classes "
        "for its per-class chart)"
    )
    comparability = RULES

    def task_of(self, data: dict[str, Any], prefix: str) -> Any:
        return decode.extraction_gold(data, prefix)

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
    ) -> ExtractionRollout:
        pmid, gold = task
        record = decode.extraction_record(info, accuracy(), gold) if trusted else None
        return ExtractionRollout(pmid, gold, decode.extraction_answer(record, reply, gold, error), **facts)

    def owns_report(self, report: Mapping[str, Any]) -> bool:
        return "gold_relations" in report  # only an extraction summary has it

    def records(self, run: Run) -> list[Any]:
        return run.extraction

    def task_gold(self, rollout: ExtractionRollout) -> tuple[str, tuple[str, ...]]:
        relations = tuple(sorted("/".join(triple) for triple in rollout.gold.relations))
        return f"pmid {rollout.pmid}", relations or ("no relation",)

    def summarize(self, run: Run, *, resamples: int, seed: int) -> dict[str, Any]:
        return summary.summarize_extraction(run, resamples=resamples, seed=seed)

    def format_report(self, report: Mapping[str, Any]) -> str:
        return render.format_extraction_report(report)

    def format_comparison(
        self, reports: Sequence[Mapping[str, Any]], runs: Sequence[Run], comparisons: Sequence[Mapping[str, Any]]
    ) -> str:
        return render.format_extraction_comparison(reports, comparisons)

    def same_tasks(self, first: Run, second: Run) -> str | None:
        return compare.same_abstracts(first, second)

    def task_counts(self, run: Run) -> tuple[list[Any], Any]:
        return summary.task_counts(run.extraction)

    def majority_right(self, run: Run) -> dict[Any, bool]:
        return summary.majority_exact(run.extraction)

    def abstract_of(self, key: Any) -> str:
        return key

    def intervals(self, delta: Any, *, tasks: int) -> dict[str, Any]:
        return summary.abstracts_bootstrap(delta)

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
        return export.prediction_rows(run.extraction)

    def gold_rows(self, run: Run) -> list[tuple[str, str, str, str]]:
        return export.gold_rows(run.extraction)


EXTRACTION = ExtractionMode()
