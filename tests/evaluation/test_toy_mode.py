"""A third task mode, defined in this file only, goes through every code path pair and extraction use.

The toy "name" mode: one task per gold chemical-gene pair of an abstract (its first gold type), answered with the
relation type's full name (not a letter). It is registered with ``drugprot.modes.register_mode`` and taken away
after each test. Through the environment: the ``mode`` knob accepts it and it refuses the knob values it cannot use
(``TaskOptions``, ``DrugprotConfig``), ``DrugprotTaskset.load`` builds and prompts its tasks from the fixture
(``TaskMode.questions``, ``task_fields``: its gold travels in ``DrugprotData.mode_data``), verifiers scores each
reply through the task (``TaskMode.score``: the reward terms, the official cells, the recorded prediction) and checks
the gold reply (``validate``), and the v0 row carries what the mode scores. Through the report: ``drugprot report``
reads the scored traces (the mode claims the rollouts), summarises and renders the run, and writes
``--export-tsv`` and ``--export-gold`` through the mode's rows, with the comparability sentence of
``evaluation.comparability.verdict`` under the mode's rules. No file outside this one changes for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.official_tsv import sorted_rows
from drugprot.core.options import TaskOptions
from drugprot.core.question import Question, select_tasks
from drugprot.core.questions import load_questions
from drugprot.core.schema import Document
from drugprot.envs.legacy import dataset_row
from drugprot.envs.taskset import INFO_KEY, DrugprotConfig, DrugprotTaskset
from drugprot.evaluation.comparability import verdict
from drugprot.evaluation.records import Run, RunConfig
from drugprot.evaluation.typed_json import BadRecord
from drugprot.modes.base import Mode, get_mode, register_mode, registered_modes, unregister_mode
from drugprot.modes.builtin import EXTRACTION, PAIR
from drugprot.modes.task import score_task, task_mode_of
from drugprot.tools.cli import main as cli_main
from tests.envs.traces import make_trace
from tests.evaluation.traces import episode, write_run
from tests.fixtures import FIXTURE_JSONL

SYSTEM = "Name the relation type (its full name, e.g. INHIBITOR) between the marked chemical and gene."


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


def answer_of(reply: str | None) -> str | None:
    """The relation type a reply names (its whole text, case-insensitive), None when it names none."""
    answer = (reply or "").strip().upper()
    return answer if answer in RELATION_NAMES else None


@dataclass(frozen=True)
class NameScore:
    """A scored name reply: the reward terms and the official cells of the pair's one gold type."""

    answer: str | None
    gold: str

    @property
    def accuracy(self) -> float:
        return float(self.answer == self.gold)

    @property
    def format(self) -> float:
        return float(self.answer is not None)

    @property
    def answered(self) -> bool:
        return self.answer is not None

    @property
    def tp(self) -> int:
        return int(self.answer == self.gold)

    @property
    def fp(self) -> int:
        return int(self.answer is not None and self.answer != self.gold)

    @property
    def fn(self) -> int:
        return 1 - self.tp

    def as_info(self) -> dict[str, object]:
        return {"answer": self.answer}


class NameMode(Mode):
    name = "name"
    task_unit = "one task per gold relation, answered by name"
    rollout_type = NameRollout
    chart_unit = "name mode: gold relations"
    comparability = NameRules()

    # --- the environment's side (``TaskMode``)
    def check_options(self, options: TaskOptions) -> None:
        if options.negatives != 0:
            raise DrugprotConfigError("name mode asks only gold pairs; leave negatives at 0", knob="negatives")

    def questions(self, documents: list[Document], options: TaskOptions) -> list[Question]:
        questions = []
        for document in documents:
            entities = {entity.id: entity for entity in document.entities}
            firsts: dict[tuple[str, str], str] = {}
            for relation in document.relations:
                firsts.setdefault((relation.arg1, relation.arg2), relation.type)
            for (arg1, arg2), gold in firsts.items():
                chemical, gene = entities[arg1], entities[arg2]
                questions.append(
                    Question(
                        key=f"{document.pmid}:{arg1}:{arg2}",
                        pmid=document.pmid,
                        system_prompt=SYSTEM,
                        prompt=f"{document.text}\n\nchemical: {chemical.text}; gene: {gene.text}",
                        text=document.text,
                        mode=self.name,
                        chemical=chemical,
                        gene=gene,
                        labels=(gold,),
                    )
                )
        return select_tasks(questions, options)

    def system_prompt(self, options: TaskOptions) -> str:
        return SYSTEM

    def task_fields(self, question: Question) -> dict[str, Any]:
        task = {"pmid": question.pmid, "arg1": question.arg1, "arg2": question.arg2, "gold": question.labels[0]}
        return {"mode_data": {"name_task": task}}

    def gold_answer(self, question: Question) -> str:
        return question.labels[0]

    def claims(self, data: Mapping[str, Any]) -> bool:
        return isinstance(data.get("mode_data"), dict) and "name_task" in data["mode_data"]

    def key(self, data: Mapping[str, Any]) -> str:
        task = data["mode_data"]["name_task"]
        return f"{task['pmid']}:{task['arg1']}:{task['arg2']}"

    def standard_system_prompt(self, data: Mapping[str, Any]) -> str:
        return SYSTEM

    def score(self, content: str | None, reasoning: str | None, data: Mapping[str, Any]) -> NameScore:
        return NameScore(answer_of(content), data["mode_data"]["name_task"]["gold"])

    def gold_scores_best(self, data: Mapping[str, Any]) -> bool:
        score = self.score(data["mode_data"]["name_task"]["gold"], None, data)
        return (score.accuracy, score.format, score.tp, score.fp, score.fn) == (1.0, 1.0, 1, 0, 0)

    def reply_answer(self, content: str | None, reasoning: str | None, *, with_no_relation: bool) -> str | None:
        return answer_of(content)

    def reply_format(
        self, content: str | None, reasoning: str | None, data: Mapping[str, Any] | None, *, with_no_relation: bool
    ) -> float:
        return float(answer_of(content) is not None)

    # --- the report's side (``Mode``): reading a run file
    def task_of(self, data: dict[str, Any], prefix: str) -> Any:
        task = data["mode_data"]["name_task"]
        if not isinstance(task, dict) or not all(
            isinstance(task.get(k), str) for k in ("pmid", "arg1", "arg2", "gold")
        ):
            raise BadRecord(f"field {prefix}.mode_data.name_task is not a name task")
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
        record = (info or {}).get(INFO_KEY) if trusted else None
        answer = record["answer"] if isinstance(record, dict) else answer_of(reply[0] if reply else None)
        return NameRollout(**task, answer=answer, **facts)

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


@pytest.mark.parametrize("name", [None, "", "pair ", " name", "na me", "name\n", 5, ["pair"]])
def test_a_mode_name_the_knob_could_not_give_is_refused_with_a_typed_error(name: object) -> None:
    from drugprot.core.errors import DrugprotArgumentError

    class Unnamed(NameMode):
        pass

    mode = Unnamed()
    mode.name = name  # type: ignore[assignment]
    with pytest.raises(DrugprotArgumentError) as raised:
        register_mode(mode)
    assert str(raised.value) == (
        "a mode name must be a non-empty string without whitespace or control characters (what the mode knob gives), "
        f"got {name!r}"
    )
    assert registered_modes() == (PAIR, EXTRACTION)  # nothing registered
    with pytest.raises(DrugprotConfigError) as unknown:  # the unknown-mode message still prints every known name
        TaskOptions(mode="name")
    assert str(unknown.value) == "unknown mode 'name'; expected one of pair, extraction"
    with pytest.raises(KeyError, match=r"^\"no task mode \['pair'\] \(known: pair, extraction\)\"$"):
        get_mode(["pair"])  # type: ignore[arg-type]


REPLIES = {"90000001:T3:T4": "AGONIST", "90000002:T7:T8": "no idea"}
"""The toy run's wrong replies: every other task is answered with its gold type's name."""


async def name_run(directory: Path) -> Path:
    """The fixture's first two abstracts as name tasks built by the environment (``mode="name"``, 6 tasks), each
    answered once (``REPLIES``, else right) and scored by verifiers through the task, written as ``vf-eval`` writes
    a run (one episode per line, each trace's ``to_record()``)."""
    config = DrugprotConfig(id="drugprot", mode="name", data_path=str(FIXTURE_JSONL), split="train", num_tasks=6)
    lines = []
    for task in DrugprotTaskset(config).load():
        trace = make_trace(task, REPLIES.get(task.key, task.data.mode_data["name_task"]["gold"]), None)
        await task.score(trace)
        lines.append(episode(trace.to_record()))
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


def test_the_mode_knob_names_a_third_mode_which_refuses_the_knobs_it_cannot_use(name_mode: NameMode) -> None:
    assert TaskOptions(mode="name").mode == "name"
    with pytest.raises(DrugprotConfigError, match="name mode asks only gold pairs") as refused:
        TaskOptions(mode="name", negatives=1)
    assert refused.value.knob == "negatives"
    with pytest.raises(ValueError, match="name mode asks only gold pairs; leave negatives at 0"):
        DrugprotConfig(id="drugprot", mode="name", negatives=1)
    unregister_mode("name")
    with pytest.raises(DrugprotConfigError, match="unknown mode 'name'; expected one of pair, extraction"):
        TaskOptions(mode="name")
    register_mode(name_mode)


async def test_the_environment_builds_prompts_scores_and_validates_a_third_mode(name_mode: NameMode) -> None:
    config = DrugprotConfig(id="drugprot", mode="name", data_path=str(FIXTURE_JSONL), split="train", num_tasks=6)
    tasks = DrugprotTaskset(config).load()
    assert [task.key for task in tasks] == [
        "90000001:T1:T2",
        "90000001:T3:T4",
        "90000001:T5:T4",
        "90000002:T3:T4",
        "90000002:T5:T6",
        "90000002:T7:T8",
    ]
    first = tasks[0]
    assert (first.data.system_prompt, first.data.mode_data, first.data.labels) == (
        SYSTEM,
        {"name_task": {"pmid": "90000001", "arg1": "T1", "arg2": "T2", "gold": "SUBSTRATE"}},
        [],  # pair mode's fields stay empty: the mode's gold is its own record
    )
    assert task_mode_of(dict(first.data)) is name_mode
    assert [await task.validate(None) for task in tasks] == [True] * 6  # type: ignore[arg-type]

    wrong = make_trace(tasks[1], "agonist", None)  # 90000001:T3:T4 is SUBSTRATE
    await tasks[1].score(wrong)
    assert {name: reward.score for name, reward in wrong.rewards.items()} == {
        "accuracy": 0.0,
        "utility": -1.5,  # one false positive (0.5) and one false negative (1)
        "format": 1.0,
    }
    assert wrong.reward == -1.5 + 0.125
    assert {k: wrong.metrics[k] for k in ("answered", "correct", "official_tp", "official_fp", "official_fn")} == {
        "answered": 1.0,
        "correct": 0.0,
        "official_tp": 0.0,
        "official_fp": 1.0,
        "official_fn": 1.0,
    }
    assert wrong.info[INFO_KEY]["answer"] == "AGONIST"
    assert wrong.info[INFO_KEY]["prompts"]["standard_system"] is False  # the hand-made trace sent no system prompt

    questions = load_questions(TaskOptions(mode="name", data_path=str(FIXTURE_JSONL), split="train", num_tasks=6))
    row = dataset_row(questions[0])  # the v0 row: the mode's gold as ``answer``, its record in ``info``
    assert (row["answer"], row["info"]) == (
        "SUBSTRATE",
        {
            "key": "90000001:T1:T2",
            "pmid": "90000001",
            "mode_data": {"name_task": {"pmid": "90000001", "arg1": "T1", "arg2": "T2", "gold": "SUBSTRATE"}},
            "ceiling": None,
        },
    )
    assert score_task("substrate", None, row["info"]).as_info() == {"answer": "SUBSTRATE"}


async def test_a_third_mode_runs_through_reading_the_report_and_the_export(
    name_mode: NameMode, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = await name_run(tmp_path / "run")
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


async def test_a_third_mode_renders_its_own_text_report(
    name_mode: NameMode, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = await name_run(tmp_path / "run")
    assert cli_main(["report", str(run_dir)]) == 0
    assert capsys.readouterr().out == f"name mode: run, 6 tasks, accuracy 0.667, 1 unanswered\n  {NOTE}\n"
