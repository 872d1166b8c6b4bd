"""A third task mode, defined in this file only, goes through the code paths pair and extraction use.

The toy "name" mode: one task per gold relation of an abstract, answered with the relation type's full name (not a
letter). It is registered with ``drugprot.modes.register_mode`` and taken away after each test; its tasks are built
here from the fixture's documents, written as ``vf-eval`` writes a run, and ``drugprot report`` reads the run (the
mode claims the rollouts, scores each reply), summarises and renders it, and writes ``--export-tsv`` and
``--export-gold`` through the mode's rows, with the comparability sentence of ``evaluation.comparability.verdict``
under the mode's rules. No file outside this one changes for it.

What the mode interface does not own yet (issue 32, left): the taskset's task building and prompts, the scorer
the environment calls and the ``mode`` knob's check (``core.options``), so the toy's tasks and scoring are its own
methods, not the environment's, and ``drugprot baseline --mode`` cannot name it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.labels import RELATION_NAMES
from drugprot.core.official_tsv import sorted_rows
from drugprot.core.sources import load_documents
from drugprot.evaluation.comparability import verdict
from drugprot.evaluation.records import Run, RunConfig
from drugprot.evaluation.typed_json import BadRecord
from drugprot.modes import EXTRACTION, PAIR, Mode, get_mode, register_mode, registered_modes, unregister_mode
from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import write_run
from tests.fixtures import FIXTURE_JSONL


@dataclass(frozen=True)
class NameRollout:
    pmid: str
    arg1: str
    arg2: str
    gold: str
    answer: str | None
    reward: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    truncated: bool = False
    error: str | None = None
    error_message: str | None = None
    versions: Any = None
    costs: Any = None
    ceiling: Any = None

    @property
    def right(self) -> bool:
        return self.answer == self.gold


class NameRules:
    covers = "every gold relation of "

    def setting_gaps(self, config: RunConfig, missing: list[str], unknown: list[str]) -> None:
        missing.append("no NO-RELATION task (only gold relations are asked)")

    def hub_shortfall(self, sizes: Mapping[str, int | None], source: str, abstracts: int) -> str | None:
        return None

    def subset(self, named: str, abstracts: int) -> str | None:
        return None

    def census_gap(self, config: RunConfig, ceiling: Mapping[str, Any]) -> str | None:
        return None

    def ceiling_gaps(self, ceiling: Mapping[str, Any], missing: list[str], unknown: list[str]) -> None:
        return None


class NameMode(Mode):
    name = "name"
    task_unit = "one task per gold relation, answered by name"
    rollout_type = NameRollout
    chart_unit = "name mode: gold relations"
    comparability = NameRules()

    # task building and scoring: the toy's own (the taskset does not ask a mode yet)
    def task_data(self, pmid: str, arg1: str, arg2: str, gold: str) -> dict[str, Any]:
        return {"name_task": {"pmid": pmid, "arg1": arg1, "arg2": arg2, "gold": gold}}

    def score(self, reply: str | None) -> str | None:
        answer = (reply or "").strip().upper()
        return answer if answer in RELATION_NAMES else None

    # reading a run file
    def claims(self, data: dict[str, Any]) -> bool:
        return "name_task" in data

    def task_of(self, data: dict[str, Any], prefix: str) -> Any:
        task = data["name_task"]
        if not isinstance(task, dict) or not all(
            isinstance(task.get(k), str) for k in ("pmid", "arg1", "arg2", "gold")
        ):
            raise BadRecord(f"field {prefix}.name_task is not a name task")
        return task

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
    ) -> NameRollout:
        return NameRollout(**task, answer=self.score(reply[0] if reply else None), **facts)

    def records(self, run: Run) -> list[Any]:
        return run.rollouts

    def task_gold(self, rollout: NameRollout) -> tuple[str, tuple[str, ...]]:
        return f"pmid {rollout.pmid} {rollout.arg1}-{rollout.arg2}", (rollout.gold,)

    # the report
    def owns_report(self, report: Mapping[str, Any]) -> bool:
        return report.get("mode") == self.name

    def summarize(self, run: Run, *, resamples: int, seed: int) -> dict[str, Any]:
        rollouts: list[NameRollout] = run.rollouts  # type: ignore[assignment]
        comparable, why = verdict(
            run.config, rules=self.comparability, abstracts=len({r.pmid for r in rollouts}), ceiling={}
        )
        return {
            "mode": self.name,
            "run": {"name": run.name},
            "n_tasks": len({(r.pmid, r.arg1, r.arg2) for r in rollouts}),
            "n_rollouts": len(rollouts),
            "accuracy": sum(r.right for r in rollouts) / len(rollouts),
            "unanswered": sum(r.answer is None for r in rollouts),
            "setting": {"comparable_with_official": comparable, "note": why},
            "failed": False,
            "warnings": run.warnings,
        }

    def format_report(self, report: Mapping[str, Any]) -> str:
        return (
            f"name mode: {report['run']['name']}, {report['n_tasks']} tasks, accuracy {report['accuracy']:.3f}, "
            f"{report['unanswered']} unanswered\n  {report['setting']['note']}"
        )

    def format_comparison(
        self, reports: Sequence[Mapping[str, Any]], runs: Sequence[Any], comparisons: Sequence[Mapping[str, Any]]
    ) -> str:
        return "\n".join([*map(self.format_report, reports), *(c["reason"] for c in comparisons)])

    def same_tasks(self, first: Run, second: Run) -> str | None:
        return "name-mode runs are not paired"

    # what the official scorer reads
    def prediction_rows(self, run: Run) -> list[tuple[str, str, str, str]]:
        return sorted_rows((r.pmid, r.arg1, r.arg2, r.answer) for r in run.rollouts if r.answer is not None)

    def gold_rows(self, run: Run) -> list[tuple[str, str, str, str]]:
        return sorted_rows({(r.pmid, r.arg1, r.arg2, r.gold) for r in run.rollouts})


NAME = NameMode()
NOTE = (
    "NOT comparable with BioCreative VII: no NO-RELATION task (only gold relations are asked) (comparable needs a "
    "whole official split, every task (no limit) and, in pair mode, negatives=all with every gold relation a "
    "candidate)."
)
"""The comparability sentence ``verdict`` builds from the toy's rules for the test run (a local file, no limit)."""


@pytest.fixture
def name_mode() -> Iterator[NameMode]:
    register_mode(NAME)
    try:
        yield NAME
    finally:
        unregister_mode(NAME.name)


def name_trace(data: dict[str, Any], reply: str) -> dict[str, Any]:
    return {
        "task": {"type": "NameTask", "data": data},
        "nodes": [{"message": {"role": "assistant", "content": reply}, "sampled": True}],
        "reward": 0.5,
        "info": {},
        "errors": [],
    }


def name_run(directory: Path, mode: NameMode) -> Path:
    """The fixture's first two abstracts as name tasks (one per gold pair, its first type), each answered once:
    right, except the second task (a wrong name) and the last (no type at all)."""
    documents = load_documents("train", str(FIXTURE_JSONL))[:2]
    pairs = {(doc.pmid, rel.arg1, rel.arg2): rel.type for doc in reversed(documents) for rel in reversed(doc.relations)}
    tasks = [(*pair, gold) for pair, gold in reversed(pairs.items())]
    replies = [gold for *_, gold in tasks]
    replies[1], replies[-1] = "AGONIST", "no idea"
    lines = [
        json.dumps({"traces": [name_trace(mode.task_data(*task), reply)]})
        for task, reply in zip(tasks, replies, strict=True)
    ]
    return write_run(directory, lines, negatives=0)


def test_a_third_mode_is_registered_beside_pair_and_extraction_and_taken_away(name_mode: NameMode) -> None:
    assert registered_modes() == (PAIR, EXTRACTION, name_mode)
    assert get_mode("name") is name_mode
    unregister_mode("name")
    assert registered_modes() == (PAIR, EXTRACTION)
    with pytest.raises(KeyError, match="no task mode 'name' \\(known: pair, extraction\\)"):
        get_mode("name")
    register_mode(name_mode)
    with pytest.raises(ValueError, match="a mode named 'name' is registered already"):
        register_mode(name_mode)


def test_a_third_mode_runs_through_reading_the_report_and_the_export(
    name_mode: NameMode, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = name_run(tmp_path / "run", name_mode)
    tsv, gold = tmp_path / "predictions.tsv", tmp_path / "gold"
    code = cli_main(["report", str(run_dir), "--json", "--export-tsv", str(tsv), "--export-gold", str(gold)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {
        "mode": "name",
        "run": {"name": "run"},
        "n_tasks": 6,
        "n_rollouts": 6,
        "accuracy": 4 / 6,
        "unanswered": 1,
        "setting": {"comparable_with_official": False, "note": NOTE},
        "failed": False,
        "warnings": [],
    }
    assert tsv.read_text(encoding="utf-8") == (  # T3-T4 answered wrong (AGONIST), T7-T8 not answered
        "90000001\tSUBSTRATE\tArg1:T1\tArg2:T2\n"
        "90000001\tAGONIST\tArg1:T3\tArg2:T4\n"
        "90000001\tSUBSTRATE\tArg1:T5\tArg2:T4\n"
        "90000002\tANTAGONIST\tArg1:T3\tArg2:T4\n"
        "90000002\tAGONIST\tArg1:T5\tArg2:T6\n"
    )
    assert (gold / "gold_relations.tsv").read_text(encoding="utf-8") == (
        "90000001\tSUBSTRATE\tArg1:T1\tArg2:T2\n"
        "90000001\tSUBSTRATE\tArg1:T3\tArg2:T4\n"
        "90000001\tSUBSTRATE\tArg1:T5\tArg2:T4\n"
        "90000002\tANTAGONIST\tArg1:T3\tArg2:T4\n"
        "90000002\tAGONIST\tArg1:T5\tArg2:T6\n"
        "90000002\tINDIRECT-DOWNREGULATOR\tArg1:T7\tArg2:T8\n"
    )
    assert (gold / "pmids.txt").read_text(encoding="utf-8") == "90000001\n90000002\n"


def test_a_third_mode_renders_its_own_text_report(
    name_mode: NameMode, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = name_run(tmp_path / "run", name_mode)
    assert cli_main(["report", str(run_dir)]) == 0
    assert capsys.readouterr().out == f"name mode: run, 6 tasks, accuracy 0.667, 1 unanswered\n  {NOTE}\n"
