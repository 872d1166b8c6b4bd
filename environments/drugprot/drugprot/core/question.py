"""The one record of a prompted task (``Question``) and the deterministic selection of tasks (``select_tasks``).

Every task mode's builder (``drugprot.modes.task.TaskMode.questions``) returns ``Question``s;
``drugprot.core.questions`` loads the split and asks the mode named by the ``mode`` knob.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TypeVar

from drugprot.core.candidates import Ceiling
from drugprot.core.errors import DrugprotDataError
from drugprot.core.extraction import ExtractionGold
from drugprot.core.labels import letter_of
from drugprot.core.options import TaskOptions
from drugprot.core.schema import Entity


@dataclass(frozen=True, slots=True)
class Question:
    """One prompted task of either mode: what the model sees, the gold it is scored against, and the abstract
    with the mentions it is about (what baselines and the demo read, instead of re-deriving them).

    The v1 task data (``drugprot.envs.taskset.task_data``) and the v0 dataset row
    (``drugprot.envs.legacy.dataset_row``) are built from it, one function each.
    """

    key: str
    """The task's stable id: ``pmid:arg1:arg2`` (pair mode, the official TSV's PMID/Arg1/Arg2) or the PMID."""
    pmid: str
    system_prompt: str
    prompt: str
    text: str
    """The abstract's text (title and body), which every mention's ``[start, end)`` offsets index."""
    mode: str
    """The task mode that built it (``drugprot.modes.task.TaskMode.name``): it makes the task's data and scores it."""
    chemical: Entity | None = None
    """Pair mode: the chemical mention (id, type, surface text, offsets into ``text``)."""
    gene: Entity | None = None
    """Pair mode: the gene/protein mention."""
    labels: tuple[str, ...] = ()
    """Pair mode: official names of all gold types of the pair (``NO-RELATION`` for a negative)."""
    with_no_relation: bool = False
    """Pair mode: whether ``N. NO-RELATION`` is an option."""
    gold: ExtractionGold | None = None
    """Extraction mode: the abstract's cited mention ids and gold triples."""
    ceiling: Ceiling | None = None
    """The abstract's gold relations and how many are on candidate pairs (``drugprot.core.candidates``)."""

    @property
    def arg1(self) -> str:
        """Pair mode: the chemical mention's id (the official TSV's ``Arg1:T#``); empty in extraction mode."""
        return self.chemical.id if self.chemical is not None else ""

    @property
    def arg2(self) -> str:
        """Pair mode: the gene mention's id (``Arg2:T#``); empty in extraction mode."""
        return self.gene.id if self.gene is not None else ""

    @property
    def answers(self) -> tuple[str, ...]:
        """Pair mode: the gold option letters."""
        return tuple(letter_of(name) for name in self.labels)


_T = TypeVar("_T")


def select_tasks(tasks: list[_T], options: TaskOptions) -> list[_T]:
    """Apply the deterministic shuffle (seeded) and the ``num_tasks`` limit.

    Raises:
        DrugprotDataError: the options select no task (the data has no gold relation and, with
            ``negatives``, no candidate pair either).
    """
    if not tasks:
        raise DrugprotDataError(
            "these options select no task: no abstract has a gold relation"
            + (" and no same-sentence candidate pair" if options.negatives != 0 else "")
            + "; pass data with relations (the official training or development files)",
            source=options.source,
            field="relations",
        )
    if options.shuffle:
        tasks = list(tasks)
        random.Random(options.seed).shuffle(tasks)
    return tasks if options.num_tasks is None else tasks[: options.num_tasks]
