"""What the environment asks of a task mode: the ``TaskMode`` interface, and the typed look-ups of the registry.

A task mode says what one task is (pair: a chemical-gene mention pair; extraction: an abstract) and owns
everything of the environment that depends on it: the knobs it refuses (``check_options``), how its tasks are
built and prompted (``questions``, ``system_prompt``), what each task carries into the v1 task data and the v0 row
(``task_fields``, ``gold_answer``), how a task's data is recognised and named (``claims``, ``key``,
``standard_system_prompt``), how a reply is scored into the reward terms and the official cells (``score``; it
never raises) and what the gold reply earns (``gold_scores_best``), and how the v0 parser reads a reply
(``reply_answer``, ``reply_format``). Both verifiers adapters (``drugprot.envs.taskset``, ``drugprot.envs.legacy``)
and the loader (``drugprot.core.questions``) ask the task's mode and hold no branch on it.

This module and each mode's ``task.py`` sit in the core layer (``tests/test_layers.py``): the environment imports
them, so they import no framework and nothing of the report. The report side of a mode is
``drugprot.modes.base.Mode``, a subclass: one object per mode is both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from drugprot.core.options import TaskOptions
from drugprot.core.question import Question
from drugprot.core.rewards import Scored
from drugprot.core.schema import Document
from drugprot.modes import registry


class TaskScore(Scored, Protocol):
    """A scored reply as the adapters record it (``Score``, ``ExtractionScore``): the reward terms, the official
    cells, whether an answer was read, and the prediction record the report reads (``as_info``)."""

    @property
    def answered(self) -> bool: ...

    def as_info(self) -> dict[str, object]: ...


class TaskMode(ABC):
    """One task mode, as the environment asks it (see the module docstring)."""

    name: ClassVar[str]
    """The ``mode`` knob's value (``--env.taskset.mode``)."""
    task_unit: ClassVar[str]
    """What one task is, in words: ``one task per chemical-gene pair``."""
    cell_bounds: ClassVar[tuple[int, int, int] | None] = None
    """The most true positives, false positives and false negatives one task's reply scores, for the exactness check
    of the reward knobs (``drugprot.core.exactness.check_exact_rewards``); None: not checked."""
    accuracy_grid: ClassVar[int] = 1
    """The accuracy term is a multiple of ``1 / accuracy_grid`` (0 or 1: 1)."""

    # --- the knobs

    def check_options(self, options: TaskOptions) -> None:
        """Refuse knob values this mode cannot use (``TaskOptions`` asks, after its own checks).

        Raises:
            DrugprotConfigError: naming the knob.
        """
        return  # the default: the mode can use every knob value

    # --- building tasks

    @abstractmethod
    def questions(self, documents: list[Document], options: TaskOptions) -> list[Question]:
        """The prompted tasks of ``documents`` that ``options`` select (``questions.select_tasks``).

        Raises:
            DrugprotDataError: the data cannot make this mode's tasks, or the options select none.
        """

    @abstractmethod
    def system_prompt(self, options: TaskOptions) -> str:
        """The system prompt of every task ``options`` build."""

    @abstractmethod
    def task_fields(self, question: Question) -> dict[str, Any]:
        """What a task carries besides its prompts, PMID, costs and ceiling: the v1 ``DrugprotData`` fields and the
        v0 row's ``info`` entries, in order (what ``score`` and the report read back)."""

    @abstractmethod
    def gold_answer(self, question: Question) -> str:
        """The v0 row's ``answer``: the gold as a reply would give it."""

    # --- a task's data (v1 ``task.data`` as a mapping, legacy ``info``)

    @abstractmethod
    def claims(self, data: Mapping[str, Any]) -> bool:
        """Whether task data is a task of this mode (the most recently registered claimant wins)."""

    @abstractmethod
    def key(self, data: Mapping[str, Any]) -> str:
        """The task's stable id (``Question.key``)."""

    @abstractmethod
    def standard_system_prompt(self, data: Mapping[str, Any]) -> str:
        """The system prompt drugprot sends this task (a rollout that sent another records it: GEPA)."""

    # --- scoring a reply

    @abstractmethod
    def score(self, content: str | None, reasoning: str | None, data: Mapping[str, Any]) -> TaskScore:
        """The reply scored against the task's gold. Never raises: a malformed gold or a scorer failure is a zero
        score with its reason."""

    @abstractmethod
    def gold_scores_best(self, data: Mapping[str, Any]) -> bool:
        """Whether the gold reply earns the most every reward term can give (``vf-validate``)."""

    @abstractmethod
    def reply_answer(self, content: str | None, reasoning: str | None, *, with_no_relation: bool) -> str | None:
        """The answer a reply gives, as text (the v0 parser's ``parse_answer``); None without one."""

    @abstractmethod
    def reply_format(
        self, content: str | None, reasoning: str | None, data: Mapping[str, Any] | None, *, with_no_relation: bool
    ) -> float:
        """The reply's format term (the v0 parser's format function); ``data``: the row's ``info`` when given."""


def _task_mode(mode: registry.Registered) -> TaskMode:
    if not isinstance(mode, TaskMode):
        raise TypeError(f"the registered mode {mode.name!r} is not a TaskMode")
    return mode


def task_mode(name: str) -> TaskMode:
    """The mode named ``name`` (the ``mode`` knob's value).

    Raises:
        KeyError: no such mode, naming the known ones.
    """
    return _task_mode(registry.lookup(name))


def task_mode_of(data: Mapping[str, Any]) -> TaskMode:
    """The mode of a task's data (``registry.claiming``)."""
    return _task_mode(registry.claiming(data))


def score_task(content: str | None, reasoning: str | None, data: Mapping[str, Any]) -> TaskScore:
    """Score one reply against a task's gold, whichever mode the task is (both adapters call this). Never raises."""
    return task_mode_of(data).score(content, reasoning, data)
