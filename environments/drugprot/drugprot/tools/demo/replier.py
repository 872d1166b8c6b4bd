"""The demo's "model": the lexical baseline answering a run's questions, looked up by their prompt.

The server loads the same data with the same options as the ``vf-eval`` run it serves, so every prompt it is
sent is the prompt of one of its ``Question`` records, which carries the abstract and the two mentions' spans.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from drugprot.core.options import TaskOptions
from drugprot.core.question import Question
from drugprot.core.questions import load_questions
from drugprot.evaluation.baselines import BaselineAnswer, fallback_label, lexical_label, reply_text
from drugprot.tools.serve import Reply, last_user_text


class LexicalReplier:
    """A ``drugprot.tools.serve`` responder: the lexical baseline's reply to the question whose prompt is the
    request's last user message.

    A prompt that is none of the questions' (another run's, or not a DrugProt prompt) gets the fallback answer of
    the run's setting (NO-RELATION when offered, else the majority type), saying why. Several questions with one
    prompt (unmarked mentions of the same names) get the first one's answer: the prompt cannot tell them apart.
    """

    def __init__(self, questions: Iterable[Question], *, with_no_relation: bool) -> None:
        # Pair questions only: an extraction-mode question names no pair. Marked prompts are unique per pair;
        # without marks two mentions of the same names give one prompt, which is answered as the first one.
        self._by_prompt: dict[str, Question] = {}
        for question in questions:
            if question.chemical is not None and question.gene is not None:
                self._by_prompt.setdefault(question.prompt, question)
        self._with_no_relation = with_no_relation

    def __len__(self) -> int:
        """How many prompts it knows."""
        return len(self._by_prompt)

    def reply(self, prompt: str) -> str:
        """The reply to one user prompt, in the think/boxed format."""
        question = self._by_prompt.get(prompt)
        if question is None:
            label = fallback_label(self._with_no_relation)
            return reply_text(BaselineAnswer(label, f"the prompt is not one of this run's questions, so {label}"))
        chemical, gene = question.chemical, question.gene
        assert chemical is not None and gene is not None  # only pair questions are kept
        prediction = lexical_label(
            question.text,
            (chemical.start, chemical.end),
            (gene.start, gene.end),
            with_no_relation=question.with_no_relation,
        )
        return reply_text(prediction)

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        return Reply(content=self.reply(last_user_text(body)))


def lexical_replier(options: TaskOptions) -> LexicalReplier:
    """The lexical baseline for the run that ``options`` describe (every question of its split, before the limit).

    Raises:
        DrugprotDataError / DrugprotHubError: the data does not load (``drugprot.core.questions.load_questions``).
    """
    everything = dataclasses.replace(options, num_tasks=None, shuffle=False)
    return LexicalReplier(load_questions(everything), with_no_relation=options.with_no_relation)
