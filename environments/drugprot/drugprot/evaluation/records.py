"""The report's records: a rollout (its pair, its scored answer), a skipped record, a run and its saved setting."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drugprot.core.errors import DrugprotError

if TYPE_CHECKING:  # annotations only: ``drugprot curves`` imports this module through plots.py
    from drugprot.core.extraction import ExtractionGold
    from drugprot.core.schema import Document
    from drugprot.core.scoring import ExtractionScore, Score

Triple = tuple[str, str, str]
"""``(chemical id, gene id, official type name)``: one relation of an extraction answer."""

INVALID = "INVALID"
"""Confusion-matrix column of rollouts without a valid answer."""
ROLLOUT_ERROR = "rollout_error"
"""Invalid reason of a rollout that failed before any reply (provider error, timeout ...)."""
V1_FILE, LEGACY_FILE = "traces.jsonl", "results.jsonl"
MOSTLY_ERRORED = 0.5
"""A run is flagged as failed when more than this fraction of its rollouts errored without an answer."""
EXIT_FAILED_RUN = 3
"""Exit code of ``drugprot report`` for a flagged run (2: the runs cannot be read; 0: reported)."""
UNKNOWN = "unknown"
"""How the report shows a version a run did not record (runs made before ``drugprot.core.versions``)."""
VERSION_NAMES = ("env", "prompt", "scorer", "data", "reward")
"""The entries of ``run_versions``, as the report names them."""

Versions = tuple[str, str, str, str, str]
"""A rollout's env, prompt and scorer versions, its data and its reward, as ``VERSION_NAMES`` names them."""


def version_lines(versions: Mapping[str, str]) -> list[str]:
    """The report header's lines for a run's ``run_versions``: the versions and the data on one line, the reward
    (``drugprot.core.rewards.describe``) on the next; ``unknown`` for what the run did not record."""
    shown = {name: versions.get(name) or UNKNOWN for name in VERSION_NAMES}
    reward = shown.pop("reward")
    return ["  versions: " + " | ".join(f"{name} {value}" for name, value in shown.items()), f"  reward: {reward}"]


class ReportError(DrugprotError, ValueError):
    """A run cannot be reported (missing files, no DrugProt rollouts, conflicting options)."""


@dataclass(frozen=True, slots=True)
class GoldPair:
    """The task a rollout answered: one chemical-gene mention pair and its gold types."""

    pmid: str
    arg1: str
    """Chemical mention id (``T3``)."""
    arg2: str
    """Gene mention id."""
    labels: tuple[str, ...]
    """Gold official names of the pair (``("NO-RELATION",)`` for a negative)."""
    with_no_relation: bool


@dataclass(frozen=True, slots=True)
class ScoredAnswer:
    """What a rollout answered, as the scorer judged it."""

    label: str | None
    """Predicted official name (``NO-RELATION`` for N); None when the reply gave no valid answer."""
    invalid_reason: str | None = None
    format_reason: str | None = None
    rescored: bool = False
    """Computed by the report from the reply (no usable ``info["drugprot"]`` record), not read from the run."""

    @classmethod
    def of(cls, score: Score, *, rescored: bool) -> ScoredAnswer:
        """The answer ``drugprot.core.scoring`` gave a reply."""
        return cls(score.label, score.invalid_reason, score.format_reason, rescored)


@dataclass(frozen=True, slots=True)
class Rollout:
    """One scored reply to one task (a chemical-gene mention pair); built with ``Rollout.of``."""

    pmid: str
    arg1: str
    """Chemical mention id (``T3``)."""
    arg2: str
    """Gene mention id."""
    labels: tuple[str, ...]
    """Gold official names of the pair (``("NO-RELATION",)`` for a negative)."""
    with_no_relation: bool
    label: str | None
    """Predicted official name (``NO-RELATION`` for N); None when the reply gave no valid answer."""
    invalid_reason: str | None = None
    format_reason: str | None = None
    reward: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    truncated: bool = False
    """The model stopped at its token limit (``finish_reason == "length"``)."""
    rescored: bool = False
    """The prediction was re-computed from the reply (no usable ``info["drugprot"]`` record)."""
    error: str | None = None
    """Type of the rollout's last recorded error (``ProviderError``, ``TaskError`` ...), or None."""
    error_message: str | None = None
    """Its message, shortened."""
    versions: Versions | None = None
    """What made the rollout, as ``run_versions`` shows it: env, prompt and scorer versions and the data
    (``drugprot.core.versions``); None for a rollout recorded without them (an older run)."""
    costs: tuple[float, float] | None = None
    """The utility's ``(fp_cost, fn_cost)`` the rollout was scored with (its versions record); None: unrecorded."""
    ceiling: tuple[int, int, int | None] | None = None
    """Its abstract's gold relations, how many are on candidate pairs and how many one answer per candidate pair
    can reach (``drugprot.core.candidates.Ceiling``; the last None for a run that recorded only two); None when
    the task data did not record it (an older run)."""

    @classmethod
    def of(
        cls,
        pair: GoldPair,
        answer: ScoredAnswer,
        *,
        reward: float | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        truncated: bool = False,
        error: str | None = None,
        error_message: str | None = None,
        versions: Versions | None = None,
        costs: tuple[float, float] | None = None,
        ceiling: tuple[int, int, int | None] | None = None,
    ) -> Rollout:
        """The rollout of ``answer`` to ``pair`` (every reader of a run and every baseline builds it here)."""
        return cls(
            pair.pmid,
            pair.arg1,
            pair.arg2,
            pair.labels,
            pair.with_no_relation,
            answer.label,
            answer.invalid_reason,
            answer.format_reason,
            reward=reward,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            truncated=truncated,
            rescored=answer.rescored,
            error=error,
            error_message=error_message,
            versions=versions,
            costs=costs,
            ceiling=ceiling,
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.pmid, self.arg1, self.arg2)

    @property
    def correct(self) -> bool:
        return self.label is not None and self.label in self.labels

    @property
    def errored(self) -> bool:
        """The rollout recorded an error and gave no valid answer: a failure of the run, not of the model."""
        return self.error is not None and self.label is None


@dataclass(frozen=True, slots=True)
class ExtractionAnswer:
    """What an extraction-mode rollout answered, as the scorer judged it (``ExtractionScore``)."""

    relations: tuple[Triple, ...]
    """The scored triples: distinct, a chemical id of the abstract first and a gene id second; () without an answer."""
    accuracy: float
    """The rollout's accuracy reward: the abstract's F1 over triples (``drugprot.core.scoring.score_extraction``)."""
    malformed: int = 0
    unknown_id: int = 0
    wrong_type: int = 0
    duplicate: int = 0
    invalid_reason: str | None = None
    """Why the reply gave no relations block (``no_relations_block``, ``reasoning_incomplete`` ...); None if it did."""
    format_reason: str | None = None
    rescored: bool = False
    """Computed by the report from the reply (no usable ``info["drugprot"]`` record), not read from the run."""

    @classmethod
    def of(cls, score: ExtractionScore, *, rescored: bool) -> ExtractionAnswer:
        """The answer ``drugprot.core.scoring.score_extraction`` gave a reply."""
        return cls(
            score.relations,
            score.accuracy,
            score.malformed,
            score.unknown_id,
            score.wrong_type,
            score.duplicate,
            score.invalid_reason,
            score.format_reason,
            rescored,
        )


@dataclass(frozen=True, slots=True)
class ExtractionRollout:
    """One scored reply to an extraction task (one abstract: list every relation)."""

    pmid: str
    gold: ExtractionGold
    answer: ExtractionAnswer
    reward: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    truncated: bool = False
    error: str | None = None
    """Type of the rollout's last recorded error, or None (as ``Rollout.error``)."""
    error_message: str | None = None
    versions: Versions | None = None
    costs: tuple[float, float] | None = None
    """As ``Rollout.costs``."""
    ceiling: tuple[int, int, int | None] | None = None
    """As ``Rollout.ceiling``."""

    @property
    def key(self) -> str:
        """The task's key: the abstract's PMID."""
        return self.pmid

    @property
    def answered(self) -> bool:
        """The reply gave a relations block (``none`` included)."""
        return self.answer.invalid_reason is None

    @property
    def exact(self) -> bool:
        """The reply listed exactly the abstract's gold triples."""
        return self.answered and set(self.answer.relations) == self.gold.relations

    @property
    def rescored(self) -> bool:
        return self.answer.rescored

    @property
    def errored(self) -> bool:
        """The rollout recorded an error and gave no answer: a failure of the run, not of the model."""
        return self.error is not None and not self.answered


@dataclass(frozen=True, slots=True)
class Skip:
    """A record (a line, or one trace of an episode line) that gave no rollout, and why."""

    file: str
    line: int
    trace: int | None
    """Index of the trace in an episode line of several traces; None for a whole line."""
    reason: str
    unidentified: bool = False
    """A rollout whose task cannot be identified (no pmid, arg1 or arg2), not a malformed line."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" + ("" if self.trace is None else f" trace {self.trace}")
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class RunConfig:
    """What the run's saved config says about the setting; None where unknown."""

    model: str | None = None
    split: str | None = None
    data_path: str | None = None
    data_label: str | None = None
    """How the run names its data (the ``data_label`` knob, e.g. the demo's bundled synthetic sample)."""
    negatives: str | None = None
    """``"0"``, ``"k"`` or ``"all"``."""
    limit: str | None = None
    """How the tasks were limited (``-n 3``, ``num_tasks=50`` ...); ``""`` when they were not, None if unknown."""
    requested: tuple[int, int] | None = None
    """``(tasks, rollouts per task)`` the run asked for (``-n`` and ``-r``) when its config names both; None when it
    ran a whole split or does not say. A run that wrote fewer rollouts stopped early (``runs.run_warnings``)."""


@dataclass
class Run:
    """The rollouts of one run plus what reading it skipped.

    Every record read is exactly one of: a rollout, a ``corrupt`` skip, an ``unidentified`` skip. A line is
    one record, except an episode line of several traces, which is one record per trace.
    """

    name: str
    path: str
    source: str
    rollouts: list[Rollout]
    """The rollouts of a pair-mode run (and of any mode that keeps them here, ``Mode.records``)."""
    config: RunConfig = field(default_factory=RunConfig)
    lines: int = 0
    """Non-blank lines read."""
    corrupt: list[Skip] = field(default_factory=list)
    """Records that could not be read as a DrugProt rollout (bad JSON, a field of the wrong type ...)."""
    unidentified: list[Skip] = field(default_factory=list)
    """Rollouts whose task cannot be identified (empty or missing pmid, arg1 or arg2): counted, not scored."""
    blank: int = 0
    """Blank lines (ignored)."""
    documents: list[Document] | None = None
    """The evaluated abstracts, when known (baselines); ``--export-gold`` writes their entities."""
    extraction: list[ExtractionRollout] = field(default_factory=list)
    """The rollouts of an extraction-mode run (one task per abstract); ``rollouts`` is then empty. A run holds
    rollouts of one mode only (``runs.load_run`` refuses a file that mixes them)."""
    cut_off: bool = False
    """The file's last line has no line end and does not read as a record: the writer stopped mid-line (a killed or
    still running eval). A whole last record without only its final newline is not cut off."""
    mode: str = "pair"
    """The task mode of the run's rollouts (``drugprot.modes``: ``runs.load_run`` sets it from what it read)."""
    warnings: list[str] = field(default_factory=list)
    """What makes the run's figures doubtful though it can be reported (``runs.run_warnings``): rollouts missing,
    rollouts of one task that disagree on its gold."""
