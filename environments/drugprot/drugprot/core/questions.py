"""Framework-free task building shared by both verifiers adapters: options in, prompted questions out.

``Question`` is the one record of a task (either mode) that every consumer reads. ``load_questions`` loads
the split named by ``TaskOptions`` (``drugprot.core.options``), builds the pair tasks (or one task per
abstract), applies the deterministic shuffle/limit and renders the prompts.

``validate_source`` is what the adapters run when their config is validated, before any run starts:
for a local ``data_path`` it loads, validates and builds the questions right away (so every data error
surfaces then) and keeps them for the next ``load_questions`` with the same options, as long as the
files are unchanged. The hub is checked when the questions are loaded.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from drugprot.core import extraction
from drugprot.core._gc import gc_paused
from drugprot.core.candidates import Ceiling, ceiling_of
from drugprot.core.errors import DrugprotDataError
from drugprot.core.extraction import ExtractionGold
from drugprot.core.labels import letter_of
from drugprot.core.options import Mode, TaskOptions
from drugprot.core.prompts import system_prompt, user_prompt
from drugprot.core.schema import Document, Entity
from drugprot.core.sources import LoadStats, load_documents, source_files
from drugprot.core.tasks import PairTask, build_tasks


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
    def mode(self) -> Mode:
        return "extraction" if self.gold is not None else "pair"

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


def question_for(task: PairTask, *, mark_entities: bool = True, with_no_relation: bool = False) -> Question:
    """Render one pair task into a ``Question``."""
    return Question(
        key=task.key,
        pmid=task.pmid,
        system_prompt=system_prompt(with_no_relation),
        prompt=user_prompt(task, mark_entities=mark_entities, with_no_relation=with_no_relation),
        text=task.document.text,
        chemical=task.chemical,
        gene=task.gene,
        labels=task.labels,
        with_no_relation=with_no_relation,
        ceiling=task.ceiling,
    )


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
        gold=extraction.gold_of(document),
        ceiling=ceiling_of(document),
    )


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


# Questions built by ``validate_source``: (options, file fingerprints) -> (questions, load stats). At most one
# entry; ``load_questions`` takes it out.
_prepared: dict[tuple[object, ...], tuple[list[Question], LoadStats]] = {}


def _fingerprint(options: TaskOptions, data_path: str) -> tuple[object, ...]:
    """The options and the identity of every file they read (path, inode, size, mtime): a changed file misses."""
    files = []
    for path in source_files(options.split, data_path):
        st = Path(path).stat()
        files.append((str(Path(path).resolve()), st.st_ino, st.st_size, st.st_mtime_ns))
    return (options, tuple(files))


def _build_questions(options: TaskOptions, path_hint: str, stats: LoadStats) -> list[Question]:
    documents = load_documents(
        options.split, options.data_path, stats=stats, path_hint=path_hint, revision=options.revision
    )
    if options.mode == "extraction":
        return select_tasks([extraction_question(doc, source=options.source) for doc in documents], options)
    tasks = select_tasks(build_tasks(documents, negatives=options.negatives, seed=options.seed), options)
    with_nr = options.with_no_relation
    with gc_paused():  # see drugprot.core._gc (not around load_documents: the hub download stays collected)
        return [question_for(t, mark_entities=options.mark_entities, with_no_relation=with_nr) for t in tasks]


def validate_source(options: TaskOptions, *, path_hint: str = "data_path={path}") -> None:
    """Check, before a run, the local data ``options`` name: everything about it that needs no network.

    A local ``data_path`` is loaded, validated and built into questions now, and they are kept for the next
    ``load_questions(options)`` (which then reads nothing, unless a file changed). Without ``data_path``
    nothing is checked here: the hub checks (``HF_HUB_OFFLINE`` without a cache, reachability) run when the
    questions are loaded. They cannot run at config time, because verifiers' CLI validates a *default*
    config (no ``data_path``) while it narrows the config class, before the user's values apply.

    Raises:
        DrugprotDataError: the local data cannot be read, breaks the schema, or selects no task.
    """
    if options.data_path is None:
        return
    key = _fingerprint(options, options.data_path)
    if key in _prepared:  # the same config validated again (vf-eval validates the env config twice)
        return
    _prepared.clear()
    stats = LoadStats()
    _prepared[key] = (_build_questions(options, path_hint, stats), stats)


def load_questions(
    options: TaskOptions, *, path_hint: str = "data_path={path}", stats: LoadStats | None = None
) -> list[Question]:
    """Load the split named by ``options`` and return its questions (one per abstract in extraction mode).

    ``path_hint`` is how the caller's user sets ``data_path`` (``{path}`` stands for the file), quoted
    in the hub error.

    Raises:
        DrugprotDataError / DrugprotHubError: from ``drugprot.core.sources.load_documents``, or no task selected.
    """
    if options.data_path is not None and _prepared:
        cached = _prepared.pop(_fingerprint(options, options.data_path), None)
        if cached is not None:
            questions, loaded = cached
            if stats is not None:
                for f in dataclasses.fields(LoadStats):
                    setattr(stats, f.name, getattr(stats, f.name) + getattr(loaded, f.name))
            return questions
    return _build_questions(options, path_hint, stats if stats is not None else LoadStats())
