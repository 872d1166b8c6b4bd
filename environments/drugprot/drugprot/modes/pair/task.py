"""Pair mode's tasks, as the environment asks them: one task per chemical-gene mention pair, answered with one
letter (a relation type ``A``-``M``, or ``N``: NO-RELATION when the ``negatives`` knob adds candidates).

The candidate pairs are ``drugprot.core.tasks.build_tasks`` (gold pairs, and NO-RELATION candidates of the same
sentence), the prompts ``drugprot.core.prompts``, the reply rules ``drugprot.core.parsing`` and the score
``drugprot.core.scoring.score_reply`` (through the ``SCORES`` cache). ``PairTasks`` is the ``TaskMode``; the
report side adds to it in ``drugprot.modes.pair.mode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from drugprot.core._gc import gc_paused
from drugprot.core.labels import letter_of
from drugprot.core.options import TaskOptions
from drugprot.core.parsing import parse_reply
from drugprot.core.prompts import system_prompt, user_prompt
from drugprot.core.question import Question, select_tasks
from drugprot.core.schema import Document
from drugprot.core.scoring import SCORES, Score, score_reply
from drugprot.core.tasks import PairTask, build_tasks
from drugprot.modes.task import TaskMode


def question_for(task: PairTask, *, mark_entities: bool = True, with_no_relation: bool = False) -> Question:
    """Render one pair task into a ``Question``."""
    return Question(
        key=task.key,
        pmid=task.pmid,
        system_prompt=system_prompt(with_no_relation),
        prompt=user_prompt(task, mark_entities=mark_entities, with_no_relation=with_no_relation),
        text=task.document.text,
        mode="pair",
        chemical=task.chemical,
        gene=task.gene,
        labels=task.labels,
        with_no_relation=with_no_relation,
        ceiling=task.ceiling,
    )


def _labels(data: Mapping[str, Any]) -> list[str]:
    return list(data.get("labels") or [])


def _with_no_relation(data: Mapping[str, Any]) -> bool:
    return bool(data.get("with_no_relation", False))


MAX_PAIR_TYPES = 3
"""The most gold relation types one chemical-gene pair carries, for the reward's exactness check (the 350-abstract
training sample's pairs carry at most 2)."""


class PairTasks(TaskMode):
    name: ClassVar[str] = "pair"
    task_unit: ClassVar[str] = "one task per chemical-gene pair"
    cell_bounds: ClassVar[tuple[int, int, int] | None] = (1, 1, MAX_PAIR_TYPES)
    """A reply names one type: at most one TP or one FP, and FN for each gold type it misses."""

    def questions(self, documents: list[Document], options: TaskOptions) -> list[Question]:
        tasks = select_tasks(build_tasks(documents, negatives=options.negatives, seed=options.seed), options)
        with_nr, marked = options.with_no_relation, options.mark_entities
        with gc_paused():  # see drugprot.core._gc (not around load_documents: the hub download stays collected)
            return [question_for(t, mark_entities=marked, with_no_relation=with_nr) for t in tasks]

    def system_prompt(self, options: TaskOptions) -> str:
        return system_prompt(options.with_no_relation)

    def task_fields(self, question: Question) -> dict[str, Any]:
        assert question.chemical is not None and question.gene is not None  # a pair question has both mentions
        return {
            "arg1": question.arg1,
            "arg2": question.arg2,
            "labels": list(question.labels),
            "chemical": question.chemical.text,
            "gene": question.gene.text,
            "with_no_relation": question.with_no_relation,
        }

    def gold_answer(self, question: Question) -> str:
        return ",".join(question.answers)  # comma-separated for a multi-label pair

    def claims(self, data: Mapping[str, Any]) -> bool:
        return True  # the fallback: a task no other mode claims is read as a pair (and refused if it is not one)

    def key(self, data: Mapping[str, Any]) -> str:
        return f"{data.get('pmid')}:{data.get('arg1')}:{data.get('arg2')}"

    def standard_system_prompt(self, data: Mapping[str, Any]) -> str:
        return system_prompt(_with_no_relation(data))

    def score(self, content: str | None, reasoning: str | None, data: Mapping[str, Any]) -> Score:
        return SCORES.score(content, reasoning, _labels(data), with_no_relation=_with_no_relation(data))

    def gold_scores_best(self, data: Mapping[str, Any]) -> bool:
        """The first gold letter scores accuracy 1, format 1 and the best utility one letter can earn:
        ``1 - fn_cost × (k - 1)`` on a pair with ``k`` gold types (one answer names one type; the others stay false
        negatives, as in the official metric), 0 for N on a NO-RELATION pair; that is, one true positive (none for
        N) and no false positive."""
        labels, with_nr = _labels(data), _with_no_relation(data)
        reply = f"<think>gold</think>\\boxed{{{letter_of(labels[0])}}}"
        score = score_reply(reply, None, labels, with_no_relation=with_nr)
        gold_types = score.tp + score.fn  # the pair's gold relation types (NO-RELATION is none)
        cells = (score.tp, score.fp) == (min(gold_types, 1), 0)
        return score.accuracy == 1.0 and score.format == 1.0 and cells

    def reply_answer(self, content: str | None, reasoning: str | None, *, with_no_relation: bool) -> str | None:
        return parse_reply(content, reasoning, with_no_relation=with_no_relation).letter

    def reply_format(
        self, content: str | None, reasoning: str | None, data: Mapping[str, Any] | None, *, with_no_relation: bool
    ) -> float:
        return float(parse_reply(content, reasoning, with_no_relation=with_no_relation).format_ok)
