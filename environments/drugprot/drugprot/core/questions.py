"""Framework-free task building shared by both verifiers adapters: options in, prompted questions out.

``TaskOptions`` holds every knob a user can set (the v1 ``DrugprotConfig`` and the v0
``load_environment`` kwargs map onto it one to one) and is the one place knobs are validated: a bad
value raises ``DrugprotConfigError`` when the options are built. ``load_questions`` loads the split,
builds the pair tasks, applies the deterministic shuffle/limit and renders the prompts.

``validate_source`` is what the adapters run when their config is validated, before any run starts:
for a local ``data_path`` it loads, validates and builds the questions right away (so every data error
surfaces then) and keeps them for the next ``load_questions`` with the same options, as long as the
files are unchanged. The hub is checked when the questions are loaded.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from drugprot.core._gc import gc_paused
from drugprot.core.data import SPLITS, LoadStats, hub_source, load_documents, source_files
from drugprot.core.errors import DrugprotConfigError, DrugprotDataError
from drugprot.core.extraction import MODES, ExtractionQuestion, Mode, extraction_questions
from drugprot.core.labels import letter_of
from drugprot.core.prompts import system_prompt, user_prompt
from drugprot.core.scoring import Weights
from drugprot.core.tasks import Negatives, PairTask, build_tasks, parse_negatives


@dataclass(frozen=True)
class TaskOptions:
    """Every user-facing knob of the environment, with its default."""

    split: str = "validation"
    data_path: str | None = None
    revision: str | None = None
    """Git revision of the hub dataset (commit sha, branch or tag); None is its default branch, which can
    move: pinning a commit sha is what makes a hub run reproducible. Only without ``data_path``."""
    num_tasks: int | None = None
    """Keep the first N tasks (after shuffling); None keeps the whole split."""
    shuffle: bool = False
    seed: int = 0
    """Seeds the shuffle and the negative sampling."""
    negatives: Negatives = 0
    mark_entities: bool = True
    weights: Weights = field(default_factory=Weights)
    mode: Mode = "pair"
    """``pair``: one task per chemical-gene pair; ``extraction``: one task per abstract
    (``drugprot.core.extraction``)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise DrugprotConfigError(f"unknown mode {self.mode!r}; expected one of {', '.join(MODES)}", knob="mode")
        if self.split not in SPLITS:
            raise DrugprotConfigError(
                f"unknown split {self.split!r}; expected one of {', '.join(SPLITS)}", knob="split"
            )
        if self.data_path is not None and (not isinstance(self.data_path, str) or not self.data_path.strip()):
            raise DrugprotConfigError(
                f"data_path must be a file or directory path, or unset for the hub; got {self.data_path!r}",
                knob="data_path",
            )
        if self.revision is not None and (not isinstance(self.revision, str) or not self.revision.strip()):
            raise DrugprotConfigError(
                f"revision must be a commit sha, branch or tag of the hub dataset, or unset for its default "
                f"branch; got {self.revision!r}",
                knob="revision",
            )
        if self.revision is not None and self.data_path is not None:
            raise DrugprotConfigError(
                f"revision {self.revision!r} selects a version of the hub dataset, but data_path "
                f"{self.data_path!r} loads local data; unset one of them (a local file is versioned by its "
                "contents)",
                knob="revision",
            )
        if self.num_tasks is not None and (not _is_int(self.num_tasks) or self.num_tasks < 1):
            raise DrugprotConfigError(
                f"num_tasks must be a positive integer, or unset for the whole split; got {self.num_tasks!r}",
                knob="num_tasks",
            )
        if not _is_int(self.seed):
            raise DrugprotConfigError(f"seed must be an integer, got {self.seed!r}", knob="seed")
        for knob in ("shuffle", "mark_entities"):
            if not isinstance(getattr(self, knob), bool):
                raise DrugprotConfigError(f"{knob} must be true or false, got {getattr(self, knob)!r}", knob=knob)
        for knob, value in (("accuracy_weight", self.weights.accuracy), ("format_weight", self.weights.format)):
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise DrugprotConfigError(f"{knob} must be a finite number, got {value!r}", knob=knob)
        object.__setattr__(self, "negatives", parse_negatives(self.negatives))  # "2" -> 2, " ALL" -> "all"
        if self.mode == "extraction" and self.negatives != 0:
            raise DrugprotConfigError(
                "negatives is a pair-mode knob: extraction mode asks for every relation of an abstract, so every "
                f"same-sentence pair is already a candidate; leave negatives at 0 (got {self.negatives!r})",
                knob="negatives",
            )
        if self.mode == "extraction" and not self.mark_entities:
            raise DrugprotConfigError(
                "extraction mode needs mark_entities=true: the answer cites the marked mention ids",
                knob="mark_entities",
            )

    @property
    def with_no_relation(self) -> bool:
        return self.negatives != 0

    @property
    def source(self) -> str:
        """What the options load, for messages: the data path, or the hub dataset and split."""
        return self.data_path if self.data_path is not None else hub_source(self.split, self.revision)

    @classmethod
    def from_knobs(
        cls,
        *,
        split: str,
        data_path: str | None,
        revision: str | None,
        num_tasks: int | None,
        shuffle: bool,
        seed: int,
        negatives: Negatives,
        mark_entities: bool,
        accuracy_weight: float,
        format_weight: float,
        mode: Mode = "pair",
    ) -> TaskOptions:
        """Options from the flat knobs both adapters expose (v1 ``DrugprotConfig``, v0 ``load_environment``).

        Raises:
            DrugprotConfigError: a knob has a value the environment cannot use (names the knob).
        """
        return cls(
            split=split,
            data_path=data_path,
            revision=revision,
            num_tasks=num_tasks,
            shuffle=shuffle,
            seed=seed,
            negatives=negatives,
            mark_entities=mark_entities,
            weights=Weights(accuracy=accuracy_weight, format=format_weight),
            mode=mode,
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


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
_prepared: dict[tuple[object, ...], tuple[list[Question] | list[ExtractionQuestion], LoadStats]] = {}


def _fingerprint(options: TaskOptions, data_path: str) -> tuple[object, ...]:
    """The options and the identity of every file they read (path, inode, size, mtime): a changed file misses."""
    files = []
    for path in source_files(options.split, data_path):
        st = Path(path).stat()
        files.append((str(Path(path).resolve()), st.st_ino, st.st_size, st.st_mtime_ns))
    return (options, tuple(files))


def _build_questions(
    options: TaskOptions, path_hint: str, stats: LoadStats
) -> list[Question] | list[ExtractionQuestion]:
    documents = load_documents(
        options.split, options.data_path, stats=stats, path_hint=path_hint, revision=options.revision
    )
    if options.mode == "extraction":
        return select_tasks(extraction_questions(documents, source=options.source), options)
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
) -> list[Question] | list[ExtractionQuestion]:
    """Load the split named by ``options`` and return its questions (``ExtractionQuestion`` in extraction mode).

    ``path_hint`` is how the caller's user sets ``data_path`` (``{path}`` stands for the file), quoted
    in the hub error.

    Raises:
        DrugprotDataError / DrugprotHubError: from ``drugprot.core.data.load_documents``, or no task selected.
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
