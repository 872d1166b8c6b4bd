"""Extraction mode's tasks, as the environment asks them: one task per abstract (abstracts without relations
included); the model lists every (chemical, gene, type) relation the abstract states, citing the marked mention ids.

The prompts, the relations block and its reading are ``drugprot.core.extraction``; the score
``drugprot.core.scoring.score_extraction`` (through the ``EXTRACTION_SCORES`` cache): the document's F1 over triples,
the official cells and the format term. ``ExtractionTasks`` is the ``TaskMode``; the report side adds to it in
``drugprot.modes.extraction.mode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from drugprot.core import extraction
from drugprot.core.candidates import ceiling_of
from drugprot.core.errors import DrugprotConfigError
from drugprot.core.extraction import ExtractionGold
from drugprot.core.options import TaskOptions
from drugprot.core.question import Question, select_tasks
from drugprot.core.rewards import REWARD_GRID
from drugprot.core.schema import Document
from drugprot.core.scoring import EXTRACTION_SCORES, SCORING_ERROR, ExtractionScore, score_extraction
from drugprot.modes.task import TaskMode


def extraction_question(document: Document, *, source: str) -> Question:
    """Render one abstract into an extraction-mode ``Question`` (abstracts without relations included).

    Raises:
        DrugprotDataError: a mention id cannot be cited (``extraction.check_ids``).
    """
    extraction.check_ids(document, source)
    return Question(
        key=document.pmid,
        pmid=document.pmid,
        system_prompt=extraction.system_prompt(),
        prompt=extraction.user_prompt(document),
        text=document.text,
        mode="extraction",
        gold=extraction.gold_of(document),
        ceiling=ceiling_of(document),
    )


def extraction_questions(documents: list[Document], options: TaskOptions) -> list[Question]:
    """One question per abstract, then the deterministic selection (``select_tasks``): the tasks of a run and of a
    model-free baseline's run alike."""
    return select_tasks([extraction_question(doc, source=options.source) for doc in documents], options)


def is_extraction(data: Mapping[str, Any]) -> bool:
    """Whether task data (v1 ``task.data``, legacy ``info``) is an extraction task's: its gold record is set."""
    return data.get("extraction") is not None


MAX_CELLS = 64
"""The most true positives, false positives and false negatives of one abstract's reply the reward's exactness check
assumes (the 350-abstract training sample's largest abstract has 38 gold relations); a longer reply can earn a reward
whose all-equal group keeps a float32 advantage of a few ulps."""


class ExtractionTasks(TaskMode):
    name: ClassVar[str] = "extraction"
    task_unit: ClassVar[str] = "one task per abstract"
    cell_bounds: ClassVar[tuple[int, int, int] | None] = (MAX_CELLS, MAX_CELLS, MAX_CELLS)
    accuracy_grid: ClassVar[int] = REWARD_GRID  # the per-document F1 on the reward grid (``accuracy_term``)

    def check_options(self, options: TaskOptions) -> None:
        if options.negatives != 0:
            raise DrugprotConfigError(
                "negatives is a pair-mode knob: extraction mode asks for every relation of an abstract, so every "
                f"same-sentence pair is already a candidate; leave negatives at 0 (got {options.negatives!r})",
                knob="negatives",
            )
        if not options.mark_entities:
            raise DrugprotConfigError(
                "extraction mode needs mark_entities=true: the answer cites the marked mention ids",
                knob="mark_entities",
            )

    def questions(self, documents: list[Document], options: TaskOptions) -> list[Question]:
        return extraction_questions(documents, options)

    def system_prompt(self, options: TaskOptions) -> str:
        return extraction.system_prompt()

    def task_fields(self, question: Question) -> dict[str, Any]:
        assert question.gold is not None  # an extraction question carries its abstract's gold
        return {"extraction": question.gold.as_record()}

    def gold_answer(self, question: Question) -> str:
        assert question.gold is not None
        return extraction.answer_block(sorted(question.gold.relations))

    def claims(self, data: Mapping[str, Any]) -> bool:
        return is_extraction(data)

    def key(self, data: Mapping[str, Any]) -> str:
        return str(data.get("pmid"))

    def standard_system_prompt(self, data: Mapping[str, Any]) -> str:
        return extraction.system_prompt()

    def score(self, content: str | None, reasoning: str | None, data: Mapping[str, Any]) -> ExtractionScore:
        try:
            gold = ExtractionGold.from_record(data.get("extraction"))
        except Exception as exc:  # a malformed gold record: a scoring error, never an exception
            reason = f"{SCORING_ERROR}: malformed extraction gold record ({type(exc).__name__}: {exc})"
            return ExtractionScore(0.0, 0.0, (), 0, 0, 0, 0, 0, 0, 0, reason, SCORING_ERROR)
        return EXTRACTION_SCORES.score(content, reasoning, gold)

    def gold_scores_best(self, data: Mapping[str, Any]) -> bool:
        """The gold block scores accuracy 1, format 1 and utility ``|gold|`` (every gold triple a true positive, no
        false positive or negative)."""
        gold = ExtractionGold.from_record(data.get("extraction"))
        found = score_extraction(f"<think>gold</think>{extraction.answer_block(sorted(gold.relations))}", None, gold)
        cells = (found.tp, found.fp, found.fn) == (len(gold.relations), 0, 0)
        return found.accuracy == 1.0 and found.format == 1.0 and cells

    def reply_answer(self, content: str | None, reasoning: str | None, *, with_no_relation: bool) -> str | None:
        """The block's well-formed lines as ``T3 | T7 | INHIBITOR`` lines (``none`` for the empty answer), or None
        without a block; the ids are checked only against a task's gold (``reply_format`` with ``data``)."""
        lines = extraction.parse_extraction(content, reasoning).lines
        return None if lines is None else "\n".join(" | ".join(t) for t in lines) or extraction.NONE_ANSWER

    def reply_format(
        self, content: str | None, reasoning: str | None, data: Mapping[str, Any] | None, *, with_no_relation: bool
    ) -> float:
        if data is not None and is_extraction(data):
            return self.score(content, reasoning, data).format
        parsed = extraction.parse_extraction(content, reasoning)
        return float(extraction.format_reason(parsed, None) is None)
