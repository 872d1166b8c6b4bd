"""Framework-free task building shared by both verifiers adapters: options in, prompted questions out.

``TaskOptions`` holds every knob a user can set (the v1 ``DrugprotConfig`` and the v0
``load_environment`` kwargs map onto it one to one); ``load_questions`` loads the split, builds the
pair tasks, applies the deterministic shuffle/limit and renders the prompts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from drugprot._gc import gc_paused
from drugprot.data import LoadStats, load_documents
from drugprot.labels import letter_of
from drugprot.prompts import system_prompt, user_prompt
from drugprot.scoring import Weights
from drugprot.tasks import Negatives, PairTask, build_tasks, parse_negatives


@dataclass(frozen=True)
class TaskOptions:
    """Every user-facing knob of the environment, with its default."""

    split: str = "validation"
    data_path: str | None = None
    num_tasks: int | None = None
    """Keep the first N tasks (after shuffling); None keeps the whole split."""
    shuffle: bool = False
    seed: int = 0
    """Seeds the shuffle and the negative sampling."""
    negatives: Negatives = 0
    mark_entities: bool = True
    weights: Weights = field(default_factory=Weights)

    @property
    def with_no_relation(self) -> bool:
        return parse_negatives(self.negatives) != 0

    @classmethod
    def from_knobs(
        cls,
        *,
        split: str,
        data_path: str | None,
        num_tasks: int | None,
        shuffle: bool,
        seed: int,
        negatives: Negatives,
        mark_entities: bool,
        accuracy_weight: float,
        format_weight: float,
    ) -> TaskOptions:
        """Options from the flat knobs both adapters expose (v1 ``DrugprotConfig``, v0 ``load_environment``)."""
        return cls(
            split=split,
            data_path=data_path,
            num_tasks=num_tasks,
            shuffle=shuffle,
            seed=seed,
            negatives=negatives,
            mark_entities=mark_entities,
            weights=Weights(accuracy=accuracy_weight, format=format_weight),
        )


@dataclass(frozen=True, slots=True)
class Question:
    """One prompted task: what the model sees and the gold it is scored against."""

    key: str
    pmid: str
    arg1: str
    arg2: str
    chemical: str
    gene: str
    labels: tuple[str, ...]
    """Official names of all gold types of the pair."""
    system_prompt: str
    prompt: str
    with_no_relation: bool

    @property
    def answers(self) -> tuple[str, ...]:
        """Gold option letters."""
        return tuple(letter_of(name) for name in self.labels)


def question_for(task: PairTask, *, mark_entities: bool = True, with_no_relation: bool = False) -> Question:
    """Render one pair task into a ``Question``."""
    return Question(
        key=task.key,
        pmid=task.pmid,
        arg1=task.chemical.id,
        arg2=task.gene.id,
        chemical=task.chemical.text,
        gene=task.gene.text,
        labels=task.labels,
        system_prompt=system_prompt(with_no_relation),
        prompt=user_prompt(task, mark_entities=mark_entities, with_no_relation=with_no_relation),
        with_no_relation=with_no_relation,
    )


def select_tasks(tasks: list[PairTask], options: TaskOptions) -> list[PairTask]:
    """Apply the deterministic shuffle (seeded) and the ``num_tasks`` limit."""
    if options.num_tasks is not None and options.num_tasks < 0:
        raise ValueError(f"num_tasks must be >= 0 or None, got {options.num_tasks}")
    if options.shuffle:
        tasks = list(tasks)
        random.Random(options.seed).shuffle(tasks)
    return tasks if options.num_tasks is None else tasks[: options.num_tasks]


def load_questions(
    options: TaskOptions, *, path_hint: str = "data_path", stats: LoadStats | None = None
) -> list[Question]:
    """Load the split named by ``options`` and return its questions.

    Raises:
        DrugprotDataError / DrugprotHubError: from ``drugprot.data.load_documents``.
        ValueError: a bad ``negatives`` or ``num_tasks``.
    """
    negatives = parse_negatives(options.negatives)
    documents = load_documents(options.split, options.data_path, stats=stats, path_hint=path_hint)
    tasks = select_tasks(build_tasks(documents, negatives=negatives, seed=options.seed), options)
    with_nr = negatives != 0
    with gc_paused():  # see drugprot._gc (not around load_documents: the hub download stays collected)
        return [question_for(t, mark_entities=options.mark_entities, with_no_relation=with_nr) for t in tasks]
