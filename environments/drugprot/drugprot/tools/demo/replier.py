"""The demo's "model": the lexical baseline answering a run's questions, looked up by their prompt.

The server loads the same data with the same options as the ``vf-eval`` run it serves, so every prompt it is
sent is the prompt of one of its ``Question`` records, which carries the abstract and the two mentions' spans.

``SamplingReplier`` draws its answer at a temperature instead (``drugprot serve --temperature T``): a softmax over the
options of the run's setting where the lexical answer scores 1 and every other option 0, so the lexical answer has
probability ``e^(1/T) / (e^(1/T) + options − 1)`` (0.81 of 14 options at T 0.25, 0.36 at T 0.5). A prompt that is
none of the run's questions is drawn the same way around its fallback answer (NO-RELATION when the run offers it).
The n-th request with a prompt draws from a generator seeded by ``(seed, prompt, n)``, so the answers each prompt
gets, as a multiset, are the same whatever order concurrent requests arrive in: a ``-r 4`` run has non-trivial vote
shares and the same report every time. The counts ``n`` are kept per question of the run, and for at most
:data:`MAX_UNKNOWN_PROMPTS` other prompts, by digest (the least recently asked forgotten first).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from drugprot.core.labels import options as label_options
from drugprot.core.options import TaskOptions
from drugprot.core.question import Question
from drugprot.core.questions import load_questions
from drugprot.evaluation.baselines import BaselineAnswer, fallback_label, lexical_label, reply_text
from drugprot.tools.serve import Reply, last_user_text

MAX_UNKNOWN_PROMPTS = 10_000
"""How many prompts that are none of the run's questions ``SamplingReplier`` keeps a count for (32-byte digests)."""


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

    def answer(self, prompt: str) -> tuple[BaselineAnswer, bool]:
        """The lexical answer to one user prompt, and whether N is among its options: the question's, or for a prompt
        that is none of the run's questions, the run's setting (its answer is the setting's fallback)."""
        question = self._by_prompt.get(prompt)
        if question is None:
            label = fallback_label(self._with_no_relation)
            why = f"the prompt is not one of this run's questions, so {label}"
            return BaselineAnswer(label, why), self._with_no_relation
        chemical, gene = question.chemical, question.gene
        assert chemical is not None and gene is not None  # only pair questions are kept
        prediction = lexical_label(
            question.text,
            (chemical.start, chemical.end),
            (gene.start, gene.end),
            with_no_relation=question.with_no_relation,
        )
        return prediction, question.with_no_relation

    def reply(self, prompt: str) -> str:
        """The reply to one user prompt, in the think/boxed format."""
        return reply_text(self.answer(prompt)[0])

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        return Reply(content=self.reply(last_user_text(body)))


class SamplingReplier(LexicalReplier):
    """The lexical baseline's answer drawn at ``temperature`` (see the module docstring), seeded by ``seed``."""

    def __init__(self, questions: Iterable[Question], *, with_no_relation: bool, temperature: float, seed: int) -> None:
        super().__init__(questions, with_no_relation=with_no_relation)
        self.temperature, self.seed = temperature, seed
        self._seen: Counter[str] = Counter()  # keyed by the question's own prompt string: no copy of the request's
        self._unknown: OrderedDict[bytes, int] = OrderedDict()  # digest -> count, least recently asked first
        self._lock = threading.Lock()

    def draw(self, lexical: str, with_no_relation: bool, rng: random.Random) -> str:
        """An option drawn from the softmax that scores ``lexical`` 1 and every other option 0, in log space: each
        weight is ``e^((score − max score)/T)``, so the lexical answer weighs 1 at any T (the others underflow to 0
        at a small T: the lexical answer, as at T 0).

        Raises:
            ValueError: ``lexical`` is not among the options of ``with_no_relation`` (a caller's bug).
        """
        names = [o.name for o in label_options(with_no_relation)]
        if lexical not in names:
            raise ValueError(f"{lexical} is not an option of this setting ({', '.join(names)})")
        scores = [1.0 if name == lexical else 0.0 for name in names]
        top = max(scores)
        weights = [math.exp((score - top) / self.temperature) for score in scores]
        return rng.choices(names, weights)[0]

    def count(self, prompt: str) -> int:
        """How many times ``prompt`` was asked before (and count this time)."""
        question = self._by_prompt.get(prompt)
        with self._lock:
            if question is not None:
                n = self._seen[question.prompt]
                self._seen[question.prompt] = n + 1
                return n
            key = hashlib.sha256(prompt.encode()).digest()
            n = self._unknown.pop(key, 0)
            self._unknown[key] = n + 1
            if len(self._unknown) > MAX_UNKNOWN_PROMPTS:
                self._unknown.popitem(last=False)
            return n

    def reply(self, prompt: str) -> str:
        n = self.count(prompt)
        seeded = hashlib.sha256(f"{self.seed}\0{n}\0".encode())
        seeded.update(prompt.encode())  # the digest of (seed, n, prompt), without a copy of them joined
        rng = random.Random(int.from_bytes(seeded.digest()[:8], "big"))
        answer, with_no_relation = self.answer(prompt)
        label = self.draw(answer.label, with_no_relation, rng)
        why = answer.rationale if label == answer.label else f"sampled at T {self.temperature:g} over the cue"
        return reply_text(BaselineAnswer(label, why))


def lexical_replier(options: TaskOptions, *, temperature: float = 0.0, seed: int = 0) -> LexicalReplier:
    """The lexical baseline for the run that ``options`` describe (every question of its split, before the limit);
    with ``temperature`` > 0, its answers drawn at that temperature (``SamplingReplier``), seeded by ``seed``.

    Raises:
        DrugprotDataError / DrugprotHubError: the data does not load (``drugprot.core.questions.load_questions``).
    """
    everything = dataclasses.replace(options, num_tasks=None, shuffle=False)
    questions = load_questions(everything)
    if temperature > 0:
        return SamplingReplier(questions, with_no_relation=options.with_no_relation, temperature=temperature, seed=seed)
    return LexicalReplier(questions, with_no_relation=options.with_no_relation)
