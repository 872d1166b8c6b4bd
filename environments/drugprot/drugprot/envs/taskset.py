"""DrugProt as a verifiers v1 taskset: one task per chemical-gene mention pair (13 lettered options) or, with
``mode=extraction``, per abstract; what depends on the mode (building the tasks, their data, key and score) is asked
of the task's mode (``drugprot.modes.task.TaskMode``), never branched on here.

Scored through the task's mode and ``drugprot.core.rewards``: three weighted rewards, ``accuracy`` (pair: the boxed
letter is one of the pair's gold types), ``utility`` (TP - fp_cost·FP - fn_cost·FN over the official cells) and a
small ``format`` reward (closed reasoning and exactly one boxed answer); the ``reward`` knob presets their weights,
and verifiers records every term, weight 0 included; the metrics ``answered``, ``correct`` and the official
cells ``official_tp``/``official_fp``/``official_fn`` (``rewards.METRIC_NAMES``) are recorded unweighted. The knobs
are ``drugprot.core.options.KNOBS`` (``DrugprotConfig``'s fields take their defaults and help from it). The reward
weights are read once, as the validated ``TaskOptions.weights`` (the v0 adapter reads the same value), and reach
verifiers through its own ``task.rewards`` (``fold_weights``). ``DrugprotEnv`` pins drugprot's own single-turn chat
harness (``drugprot.envs.harness``, in-process) in a ``subprocess`` runtime, so ``vf-eval drugprot``
needs no extra flags; ``--env.agent.harness.id null`` selects verifiers' chat-program harness instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Set
from typing import Any, Final, Literal, Self

import pydantic
import verifiers.v1 as vf

from drugprot.core._gc import gc_paused
from drugprot.core.errors import DrugprotConfigError, DrugprotError
from drugprot.core.exactness import check_grid_knob
from drugprot.core.options import KNOBS, Negatives, TaskOptions, check_f1_target, knob_names
from drugprot.core.question import Question
from drugprot.core.questions import load_questions, validate_source
from drugprot.core.rewards import (
    DEFAULT_FN_COST,
    DEFAULT_FP_COST,
    DEFAULT_WEIGHTS,
    REWARD_NAMES,
    Costs,
    Weights,
    accuracy_term,
    check_reward_knob,
    recorded_metrics,
    utility,
    weight_knob,
)
from drugprot.core.scoring import INFO_KEY
from drugprot.core.versions import PROMPTS_KEY, VERSIONS_KEY, prompts_record, with_costs_and_weights
from drugprot.core.versions import record as versions_record
from drugprot.envs.harness import HARNESS_ID, choose_null_program
from drugprot.modes.task import TaskMode, TaskScore, task_mode, task_mode_of


class DrugprotData(vf.TaskData):
    """What a DrugProt task carries besides its prompts (everything scoring and the report need)."""

    pmid: str
    """PubMed id of the abstract."""
    arg1: str = ""
    """Entity id of the chemical mention (the official TSV's ``Arg1:T#``); pair mode only."""
    arg2: str = ""
    """Entity id of the gene/protein mention (``Arg2:T#``); pair mode only."""
    labels: list[str] = []
    """Official names of every gold relation type of the pair (``NO-RELATION`` for a negative); pair mode only."""
    chemical: str = ""
    """Surface text of the chemical mention; pair mode only."""
    gene: str = ""
    """Surface text of the gene mention; pair mode only."""
    with_no_relation: bool = False
    """Whether ``N. NO-RELATION`` is an option."""
    versions: Any = None
    """What made the task (``drugprot.core.versions.record``, a JSON object; None for a task built by hand), copied into
    every rollout's info. Typed ``Any`` so that pydantic keeps the one record all tasks of a load share instead of
    copying it per task."""
    extraction: dict[str, list[Any]] | None = None
    """Extraction mode only: the abstract's gold, ``ExtractionGold.as_record()`` (chemical ids, gene ids,
    gold triples); None in pair mode. One data class for every mode: verifiers rebuilds every task of a
    taskset from its one data type, so each mode's ``TaskMode.task_fields`` names fields of it."""
    mode_data: dict[str, Any] | None = None
    """The task record of a mode registered beside pair and extraction (``TaskMode.task_fields``), which has no
    fields of its own above; None for pair and extraction."""
    fp_cost: float = DEFAULT_FP_COST
    """The ``utility`` reward's cost of a false positive (the ``fp_cost`` knob)."""
    fn_cost: float = DEFAULT_FN_COST
    """The ``utility`` reward's cost of a false negative (the ``fn_cost`` knob)."""
    ceiling: list[int] | None = None
    """``[gold relations of the abstract, how many are on candidate pairs, how many one answer per pair reaches]``
    (``Ceiling.as_record()``), for the report's ceiling line."""


class DrugprotTaskConfig(vf.TaskConfig):
    """verifiers' task config plus the utility's costs (``DrugprotConfig`` folds the ``fp_cost`` and ``fn_cost``
    knobs in). A task scores with these costs, so every path that builds tasks from the config scores with the
    knobs it was given: ``vf-replay RUN --env.taskset.fp-cost 0.35`` re-scores the saved traces at 0.35 and records
    it in each trace. None (a task built by hand or from a plain ``TaskConfig``): the task data's costs."""

    fp_cost: float | None = None
    fn_cost: float | None = None


class DrugprotTask(vf.Task[DrugprotData]):
    """One task of any mode: what depends on the mode (its key, its score, its standard prompt, its gold check) is
    asked of the mode that claims the task's data (``drugprot.modes.task``)."""

    @functools.cached_property
    def _fields(self) -> dict[str, Any]:
        """The task data as a mapping, as the modes read it (the v0 row's ``info`` is one too); the data is frozen,
        so it is read once per task."""
        return dict(self.data)

    @functools.cached_property
    def _mode(self) -> TaskMode:
        """The mode that claims the task's data (asked once per task: eight rewards and metrics score each trace)."""
        return task_mode_of(self._fields)

    @property
    def key(self) -> str:
        return self._mode.key(self._fields)

    def _score(self, trace: vf.Trace) -> TaskScore:
        messages = trace.assistant_messages
        message = messages[-1] if messages else None
        score = self._mode.score(  # the accuracy, format and answered signals of one trace share one parse
            message.content if message else None,
            message.reasoning_content if message else None,
            self._fields,
        )
        versions = with_costs_and_weights(self.data.versions, self._costs(), self._weights())
        trace.info[INFO_KEY] = score.as_info() | {VERSIONS_KEY: versions, PROMPTS_KEY: self._prompts(trace)}
        return score

    def _costs(self) -> Costs:
        """The utility's costs: the task config's (``DrugprotTaskConfig``) where set, else the task data's."""
        fp, fn = getattr(self.config, "fp_cost", None), getattr(self.config, "fn_cost", None)
        return Costs(self.data.fp_cost if fp is None else fp, self.data.fn_cost if fn is None else fn)

    def _weights(self) -> dict[str, float] | None:
        """The reward weights of the task config (``fold_weights`` writes all three), None where it has not all."""
        weights = {}
        for name in REWARD_NAMES:
            entry = self.config.rewards.get(name)
            if entry is None or entry.weight is None:
                return None
            weights[name] = float(entry.weight)
        return weights

    def _prompts(self, trace: vf.Trace) -> dict[str, Any]:
        """What identifies the prompts the rollout sent (``versions.prompts_record``)."""
        sent: dict[str, str] = {}  # the first system and user messages of the conversation
        for message in trace.messages:
            if isinstance(getattr(message, "content", None), str):
                sent.setdefault(message.role, message.content)
        standard = self._mode.standard_system_prompt(self._fields)
        return prompts_record(sent.get("system"), sent.get("user"), standard)

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=DEFAULT_WEIGHTS.accuracy)
    async def accuracy(self, trace: vf.Trace) -> float:
        return accuracy_term(self._score(trace))

    @vf.reward(weight=DEFAULT_WEIGHTS.utility)
    async def utility(self, trace: vf.Trace) -> float:
        return utility(self._score(trace), self._costs())

    @vf.reward(weight=DEFAULT_WEIGHTS.format)
    async def format(self, trace: vf.Trace) -> float:
        return self._score(trace).format

    @vf.metric
    async def answered(self, trace: vf.Trace) -> float:
        """1 when the reply gave a valid option letter (extraction mode: a relations block)."""
        return float(self._score(trace).answered)

    # The official metric, unweighted whatever the reward weights (``rewards.METRIC_NAMES``): prime-rl logs their
    # step means, from which ``drugprot curves`` computes the step's official micro-F1, precision and recall.
    @vf.metric
    async def correct(self, trace: vf.Trace) -> float:
        """The raw accuracy term (0..1), unweighted."""
        return recorded_metrics(self._score(trace))["correct"]

    @vf.metric
    async def official_tp(self, trace: vf.Trace) -> float:
        """True positives of the official metric on this task."""
        return recorded_metrics(self._score(trace))["official_tp"]

    @vf.metric
    async def official_fp(self, trace: vf.Trace) -> float:
        """False positives of the official metric on this task."""
        return recorded_metrics(self._score(trace))["official_fp"]

    @vf.metric
    async def official_fn(self, trace: vf.Trace) -> float:
        """False negatives of the official metric on this task."""
        return recorded_metrics(self._score(trace))["official_fn"]

    async def validate(self, runtime: vf.Runtime) -> bool | None:
        """Model-free gold check: the gold reply earns the most every reward term can give (the mode's
        ``gold_scores_best``: pair, the first gold letter; extraction, the gold relations block)."""
        return self._mode.gold_scores_best(self._fields)


DATA_PATH_HINT = "--env.taskset.data-path {path}"
"""How a v1 user passes ``data_path``; quoted in the hub error."""


def fold_weights(task: vf.TaskConfig, weights: Weights, explicit: Set[str]) -> tuple[vf.TaskConfig, Weights]:
    """Fold the validated weights (``TaskOptions.weights``: the ``reward`` preset, with the weight knobs the user
    set over it) into verifiers' ``task.rewards``.

    ``explicit`` names the weight knobs the user set. A knob that was set becomes its reward's
    ``task.rewards.<name>.weight`` (other fields of an existing entry kept); an entry that sets a different weight
    is a conflict (``DrugprotConfigError``, naming both). For a knob left unset, an entry's weight wins over the
    preset; without one the preset's weight is written into a new entry, since the ``@vf.reward`` weights are the
    default preset's and prime-rl rebuilds each task from ``task``. Returns the new task config and the weights the
    rewards get (pure: ``task`` is not modified).
    """
    rewards = dict(task.rewards)
    effective: dict[str, float] = {}
    for reward in REWARD_NAMES:
        knob, value = weight_knob(reward), weights.of(reward)
        entry = rewards.get(reward)
        entry_weight = entry.weight if entry is not None else None
        if entry_weight is not None:  # on the reward grid, as the knob is
            entry_weight = check_reward_knob(knob, entry_weight)
        if knob in explicit and entry_weight is not None and entry_weight != value:
            raise DrugprotConfigError(
                f"{knob} = {value} and task.rewards.{reward}.weight = {entry_weight} both set the weight "
                f"of the {reward} reward; set only one of them (or both to the same value)",
                knob=knob,
            )
        effective[reward] = value if knob in explicit or entry_weight is None else entry_weight
    on_grid = Weights(**effective)  # an entry's own weight is checked and put on the reward grid like a knob's
    for reward in REWARD_NAMES:
        entry = rewards.get(reward) or vf.RewardFunctionConfig()
        rewards[reward] = entry.model_copy(update={"weight": on_grid.of(reward)})
    return task.model_copy(update={"rewards": rewards}), on_grid


_KNOBS: Final = {knob.name: knob for knob in KNOBS}


def _knob(name: str) -> Any:
    """The ``DrugprotConfig`` field of knob ``name``: its ``KNOBS`` default and help (``vf-eval --help`` shows it)."""
    knob = _KNOBS[name]
    return pydantic.Field(knob.default, description=knob.help)


class DrugprotConfig(vf.TasksetConfig):
    """Knobs under ``--env.taskset.<field>`` (TOML ``[env.taskset]``): the ``v1`` entries of ``KNOBS``.

    Each knob field takes its default and description from ``drugprot.core.options.KNOBS``; only its type is
    declared here. Validating the config validates every knob once (``TaskOptions.from_knobs``), then checks the
    local data (``questions.validate_source``), so ``vf-eval`` reports a bad knob or bad local data as a config
    error before it starts a run.

    Reward weights have one route, verifiers' own ``task.rewards``: validation folds the validated
    ``TaskOptions.weights`` into it (``fold_weights``), so every path that builds tasks from ``task`` scores with
    them, prime-rl's env-server included (it rebuilds each task from ``task``, not through ``load()``). After
    validation the three weight knobs read the weights in effect, whichever way they were set (a weight knob left
    unset takes the ``reward`` knob's preset). The utility's costs travel with each task's data. The v0 adapter reads
    the same ``TaskOptions.weights`` (``drugprot.envs.legacy``).
    """

    split: Literal["train", "validation"] = _knob("split")
    data_path: str | None = _knob("data_path")
    revision: str | None = _knob("revision")
    num_tasks: int | None = _knob("num_tasks")
    shuffle: bool = _knob("shuffle")
    seed: int = _knob("seed")
    reward: Literal["accuracy", "utility"] = _knob("reward")
    fp_cost: float | None = _knob("fp_cost")
    fn_cost: float = _knob("fn_cost")
    f1_target: float | None = _knob("f1_target")
    accuracy_weight: float | None = _knob("accuracy_weight")
    utility_weight: float | None = _knob("utility_weight")
    format_weight: float | None = _knob("format_weight")
    mark_entities: bool = _knob("mark_entities")
    negatives: Negatives = _knob("negatives")
    mode: str = _knob("mode")
    data_label: str | None = _knob("data_label")
    task: DrugprotTaskConfig = DrugprotTaskConfig()

    @pydantic.field_validator("fp_cost", "fn_cost", *(weight_knob(r) for r in REWARD_NAMES), mode="before")
    @classmethod
    def _reward_knob(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        """The raw value through the one reward-knob check of both stacks (``check_reward_knob``), before pydantic
        would read ``false`` as 0.0 or fail on an integer too large for a float with its own message."""
        if value is None and info.field_name != "fn_cost":
            return None  # an unset weight takes the reward preset's; an unset fp_cost the default or f1_target's
        if isinstance(value, str):  # a command line's text (vf-replay --env.taskset.fp-cost 0.35): its number
            with contextlib.suppress(ValueError):  # not a number: refused below with the one line
                value = float(value)
        return check_grid_knob(str(info.field_name), value)  # check_reward_knob, and never a value that runs as 0

    @pydantic.field_validator("f1_target", mode="before")
    @classmethod
    def _f1_target(cls, value: Any) -> Any:
        """The raw value through the one ``f1_target`` check of both stacks (``check_f1_target``), before pydantic
        would answer an integer of 5,000 digits with its own error."""
        if value is None:
            return None
        if isinstance(value, str):  # a command line's text: its number
            with contextlib.suppress(ValueError):
                value = float(value)
        return check_f1_target(value)  # a DrugprotConfigError is a ValueError: pydantic reports its one line

    @pydantic.model_validator(mode="after")
    def _validate_knobs_weights_and_data(self) -> Self:
        try:
            options = self.options()
            assert options.weights is not None  # TaskOptions resolves the preset
            explicit = {name for name in self.model_fields_set if getattr(self, name, None) is not None}
            # a new TaskConfig, never an edit of the shared default instance
            task, effective = fold_weights(self.task, options.weights, explicit)
            costs = options.make_reward().costs
            self.task = task.model_copy(update={"fp_cost": costs.fp, "fn_cost": costs.fn})
            for reward in REWARD_NAMES:
                setattr(self, weight_knob(reward), effective.of(reward))
            if self.f1_target is None:  # fp_cost reads the cost in effect; with a target it stays unset (exclusive)
                self.fp_cost = options.fp_cost
            validate_source(self.options(), path_hint=DATA_PATH_HINT)
        except DrugprotError as exc:
            if isinstance(exc, ValueError):
                raise
            raise ValueError(str(exc)) from exc  # pydantic reports only ValueErrors as validation errors
        return self

    def weights(self) -> Weights:
        """The reward weights in effect (the same ``task.rewards`` gives the tasks)."""
        return self.options().make_reward().weighting

    def options(self) -> TaskOptions:
        """The validated task options of this config (every ``KNOBS`` entry of the v1 stack)."""
        return TaskOptions.from_knobs({name: getattr(self, name) for name in knob_names("v1")})


def task_data(question: Question, versions: dict[str, Any] | None = None, costs: Costs | None = None) -> DrugprotData:
    """The v1 task data of one question (the one place it is built); ``costs``: the utility's (default: the
    defaults)."""
    costs = costs or Costs()
    common = {
        "name": question.key,
        "prompt": question.prompt,
        "system_prompt": question.system_prompt,
        "pmid": question.pmid,
        "versions": versions,
        "fp_cost": costs.fp,
        "fn_cost": costs.fn,
        "ceiling": question.ceiling.as_record() if question.ceiling is not None else None,
    }
    return DrugprotData(**common, **task_mode(question.mode).task_fields(question))


class DrugprotTaskset(vf.Taskset[DrugprotTask, DrugprotConfig]):
    def load(self) -> list[DrugprotTask]:
        options = self.config.options()
        questions = load_questions(options, path_hint=DATA_PATH_HINT)
        task_config = self.config.task  # the reward weights are in it (DrugprotConfig folds them)
        versions = versions_record(options)
        costs = options.make_reward().costs
        with gc_paused():  # see drugprot.core._gc
            return [DrugprotTask(task_data(q, versions, costs), task_config) for q in questions]


class DrugprotEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": HARNESS_ID}, runtime={"type": "subprocess"})
    """One chat turn by drugprot's in-process harness, in a local ``subprocess`` runtime (which the harness
    does not start anything in). Override with ``--env.agent.*``: ``--env.agent.harness.id null`` runs
    verifiers' chat program per rollout instead (same requests and traces; needs ``uv``), as ``drugprot-null``:
    its dependencies pinned exactly, unless the user's ``UV_EXCLUDE_NEWER`` asks for a date cutoff
    (``choose_null_program``)."""

    @pydantic.model_validator(mode="after")
    def _choose_null_program(self) -> Self:
        harness = choose_null_program(self.agent.harness, os.environ)
        if harness is not self.agent.harness:
            self.agent = self.agent.model_copy(update={"harness": harness})
        return self


class DrugprotEnv(vf.SingleAgentEnv, vf.Env[DrugprotEnvConfig]):
    """The single-agent env with DrugProt's pinned seat (see ``DrugprotEnvConfig``)."""
