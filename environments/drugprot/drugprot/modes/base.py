"""What a task mode is to the report: the ``Mode`` interface, and the typed look-ups of the registry.

A mode (pair: one task per chemical-gene pair; extraction: one task per abstract) owns everything that depends on
what a task is. ``Mode`` extends ``drugprot.modes.task.TaskMode`` (what the environment asks: the knobs it refuses,
building, prompting and scoring tasks, which mode a task's data is: ``claims``) with the report side of its runs:
how a rollout is read from a run file (``task_of``, ``rollout``), where a run keeps its rollouts (``records``), what
the report summarises and renders (``summarize``, ``format_report``, ``format_comparison``), how two runs are paired
(``same_tasks``, ``task_counts``, ``majority_right``), what ``--export-tsv`` and ``--export-gold`` write
(``prediction_rows``, ``gold_rows``), what makes its micro-F1 comparable with BioCreative VII (``comparability``: a
``comparability.Rules``) and what a model-free baseline's run is (``baseline_run``). The generic code (``decode``,
``runs``, ``report``, ``compare``, ``export``, ``comparability``) asks the mode and holds no branch on it.

``register_mode`` adds a mode (a test's toy mode too; ``unregister_mode`` takes it away) to the one registry
(``drugprot.modes.registry``); ``drugprot.modes.builtin`` registers pair and extraction. A rollout's mode is the
most recently registered mode that ``claims`` its task data: pair, registered first, claims every task, so it is the
fallback.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from drugprot.evaluation.comparability import Rules
from drugprot.modes import registry
from drugprot.modes.registry import register_mode, unregister_mode
from drugprot.modes.task import TaskMode

__all__ = [
    "Mode",
    "get_mode",
    "mode_of_reports",
    "mode_of_rollout",
    "mode_of_task",
    "register_mode",
    "registered_modes",
    "unregister_mode",
]


class Mode(TaskMode):
    """One task mode: what the environment asks (``TaskMode``) and the report side of its runs (see the module
    docstring). ``name`` is also ``Run.mode``."""

    rollout_type: ClassVar[type]
    """The class of its rollouts (``records.Rollout``, ``records.ExtractionRollout``)."""
    chart_unit: ClassVar[str]
    """The per-class chart's title: which mode and what its gold support counts."""
    plot_refusal: ClassVar[str | None] = None
    """Why ``--plot`` (a confusion matrix) is refused for this mode; None when it has one."""
    comparability: ClassVar[Rules]

    # --- reading a run file (which mode a task's data is: ``TaskMode.claims``)

    @abstractmethod
    def task_of(self, data: dict[str, Any], prefix: str) -> Any:
        """The task's identity and gold from its data (``prefix`` names the field in errors).

        Raises:
            BadRecord / UnidentifiedTask: a field of the wrong shape, or a task that cannot be identified.
        """

    @abstractmethod
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
    ) -> Any:
        """The rollout of ``task``: the scored answer recorded in ``info`` when ``trusted`` (a failed scorer's
        record is not) and usable, else ``reply`` re-scored; ``accuracy`` reads the recorded accuracy reward (only
        a mode that checks it calls it); ``facts``: reward, tokens, error, versions ..."""

    @abstractmethod
    def owns_report(self, report: Mapping[str, Any]) -> bool:
        """Whether ``report`` (a ``summarize`` result) is of this mode."""

    @abstractmethod
    def records(self, run: Any) -> list[Any]:
        """The run's rollouts of this mode (the list ``runs.load_run`` appends to)."""

    @abstractmethod
    def task_gold(self, rollout: Any) -> tuple[str, tuple[str, ...]]:
        """``(the task named in words, its gold as strings)``: rollouts of one task that disagree on it are a gold
        conflict (``runs.gold_conflicts``)."""

    # --- the report

    @abstractmethod
    def summarize(self, run: Any, *, resamples: int, seed: int) -> dict[str, Any]:
        """The run's report (``--json``'s object)."""

    @abstractmethod
    def format_report(self, report: Mapping[str, Any]) -> str:
        """The text report of one run."""

    @abstractmethod
    def format_comparison(
        self, reports: Sequence[Mapping[str, Any]], runs: Sequence[Any], comparisons: Sequence[Mapping[str, Any]]
    ) -> str:
        """The text report of several runs side by side, with the paired comparisons against the first."""

    # --- the paired comparison of two runs (``compare.compare_runs``)

    @abstractmethod
    def same_tasks(self, first: Any, second: Any) -> str | None:
        """None when two runs can be paired task by task; else why not (then nothing below is asked)."""

    def task_counts(self, run: Any) -> tuple[list[Any], Any]:
        """``(task keys, per-task count rows)`` for the paired bootstrap and tests (``stats.by_abstract``)."""
        raise NotImplementedError(f"{self.name} mode pairs no runs: its same_tasks never returns None")

    def majority_right(self, run: Any) -> dict[Any, bool]:
        """Per task key: whether its majority answer is right."""
        raise NotImplementedError(f"{self.name} mode pairs no runs: its same_tasks never returns None")

    def abstract_of(self, key: Any) -> str:
        """The PMID of a task key (the unit the comparison resamples)."""
        raise NotImplementedError(f"{self.name} mode pairs no runs: its same_tasks never returns None")

    def intervals(self, delta: Any, *, tasks: int) -> dict[str, Any]:
        """The ``intervals`` of a paired comparison from its bootstrap result."""
        raise NotImplementedError(f"{self.name} mode pairs no runs: its same_tasks never returns None")

    # --- what the official scorer reads (``export``)

    @abstractmethod
    def prediction_rows(self, run: Any) -> list[tuple[str, str, str, str]]:
        """The run's majority predictions as official rows, sorted."""

    @abstractmethod
    def gold_rows(self, run: Any) -> list[tuple[str, str, str, str]]:
        """The gold relations of what the run evaluated, as official rows, sorted."""

    # --- model-free baselines (``drugprot baseline``)

    def baseline_run(
        self,
        baseline: str,
        rule: Callable[..., Any],
        options: Any,
        documents: list[Any],
        *,
        versions: Any,
        costs: tuple[float, float] | None,
    ) -> Any:
        """The run of ``baseline`` over the tasks ``options`` select: ``rule(text, chemical, gene, *,
        with_no_relation)`` is its answer (a ``BaselineAnswer``) for one mention pair; each reply is scored like a
        model's. ``versions`` and ``costs``: what every rollout records."""
        raise NotImplementedError(f"{self.name} mode has no model-free baselines")

    def pmids(self, run: Any) -> list[str]:
        """The evaluated abstracts, sorted."""
        return sorted({r.pmid for r in self.records(run)})


def _mode(mode: registry.Registered) -> Mode:
    if not isinstance(mode, Mode):
        raise TypeError(f"the registered mode {mode.name!r} has no report side (it is no drugprot.modes.base.Mode)")
    return mode


def registered_modes() -> tuple[Mode, ...]:
    """The modes in the order they were registered (pair, extraction, then any other)."""
    return tuple(_mode(mode) for mode in registry.registered())


def get_mode(name: str) -> Mode:
    """The mode named ``name``.

    Raises:
        KeyError: no such mode, naming the known ones.
    """
    return _mode(registry.lookup(name))


def mode_of_task(data: dict[str, Any]) -> Mode:
    """The mode of a task's data: the most recently registered mode that claims it."""
    return _mode(registry.claiming(data))


def mode_of_reports(reports: Sequence[Mapping[str, Any]]) -> Mode:
    """The mode of reports: the most recently registered mode that owns any of them."""
    return next(mode for mode in reversed(registered_modes()) if any(mode.owns_report(r) for r in reports))


def mode_of_rollout(rollout: Any) -> Mode:
    """The mode whose rollouts are of ``rollout``'s class."""
    return next(mode for mode in reversed(registered_modes()) if isinstance(rollout, mode.rollout_type))
