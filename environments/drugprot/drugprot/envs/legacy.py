"""DrugProt for the verifiers v0 (legacy) stack: ``load_environment(**kwargs) -> vf.SingleTurnEnv``.

verifiers 0.3.x ships the legacy stack next to v1 (its ``vf-eval`` is the legacy CLI); 0.4.0 removed it.
This adapter holds no domain logic and no branch on the mode: datasets come from
``drugprot.core.questions.load_questions`` (the builder the v1 taskset uses), a row's fields, the parser's reading
and every score from the task's mode (``drugprot.modes.task.TaskMode``), the reward terms from
``drugprot.core.rewards``.

- Knobs are the v1 ``DrugprotConfig`` fields as keyword arguments (``vf-eval drugprot -a '{...}'``), with
  the same names, defaults and meaning: ``split`` is the split ``vf-eval`` evaluates (the env's
  ``eval_dataset``). One extra knob, ``train_split``, picks the env's training ``dataset``.
- Datasets are builders: ``vf-eval`` builds only the eval split, and only when it starts the run. The
  whole split is loaded and then ``vf-eval -n`` selects from it (legacy builders take no size).
  ``load_environment`` itself validates every knob and the eval split's data (``questions.validate_source``:
  a local file is read and built now, and the builder reuses the result), so a bad knob or bad data fails
  the call, before ``vf-eval`` starts any rollout.
- The parser reads the last assistant message's ``content`` *and* ``reasoning_content`` (the legacy
  OpenAI client fills it from a provider's ``reasoning``/``reasoning_content`` field).
- Rewards ``accuracy``, ``utility`` and ``format`` are the terms of ``TaskOptions.make_reward()`` with its weights
  (the ``reward`` preset, with the weight knobs set over it: the one reading of the weights, which the v1
  ``DrugprotConfig`` folds into verifiers' ``task.rewards``); ``answered``, ``correct`` and the official cells
  ``official_tp``/``official_fp``/``official_fn`` are zero-weight metrics. The
  prediction record (``letter``, ``label``, ``invalid_reason``, ``format_reason``) goes to
  ``state["info"]["drugprot"]``, with the run's ``versions`` (``drugprot.core.versions``), which the legacy
  ``results.jsonl`` keeps per rollout as ``info.drugprot`` (the v1 path keeps the same record in
  ``trace.info["drugprot"]``).

Importing this module never imports verifiers: the legacy names are imported inside ``load_environment``,
so ``drugprot`` (and the v1 loader, which reads every name in ``drugprot.__all__``) works on 0.4.
"""

from __future__ import annotations

import importlib.util
import inspect
import shlex
from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import TYPE_CHECKING, Any

from drugprot.core.errors import DrugprotError
from drugprot.core.options import Negatives, TaskOptions, knob_names
from drugprot.core.question import Question
from drugprot.core.questions import load_questions, validate_source
from drugprot.core.rewards import (
    DEFAULT_FN_COST,
    DEFAULT_REWARD,
    METRIC_NAMES,
    Reward,
    accuracy_term,
    recorded_metrics,
    utility,
)
from drugprot.core.scoring import INFO_KEY
from drugprot.core.versions import VERSIONS_KEY
from drugprot.core.versions import record as versions_record
from drugprot.modes.task import TaskScore, score_task, task_mode

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = [
    "DATA_PATH_HINT",
    "LegacyVerifiersUnavailable",
    "dataset_row",
    "last_reply",
    "make_rubric",
    "load_environment",
    "v1_flags",
]


DATA_PATH_HINT = """-a '{"data_path": "{path}"}'"""
"""How a legacy ``vf-eval`` user passes ``data_path`` (``{path}``: the file); quoted in the hub error."""


class LegacyVerifiersUnavailable(DrugprotError, ImportError):
    """The installed verifiers has no legacy (v0) stack: use the v1 taskset instead."""


# ------------------------------------------------------------------------------------------------ rows


def dataset_row(question: Question) -> dict[str, Any]:
    """One legacy dataset row (the one place it is built): the chat prompt (system + user, as the v1 taskset
    sends it), the gold as a reply gives it as ``answer`` (``TaskMode.gold_answer``: pair, the gold letters,
    comma-separated for a multi-label pair; extraction, the gold relations block) and the task's record as ``info``
    (its key and PMID, the mode's ``task_fields``, its ceiling)."""
    mode = task_mode(question.mode)
    return {
        "prompt": [
            {"role": "system", "content": question.system_prompt},
            {"role": "user", "content": question.prompt},
        ],
        "answer": mode.gold_answer(question),
        "info": {
            "key": question.key,
            "pmid": question.pmid,
            **mode.task_fields(question),
            "ceiling": question.ceiling.as_record() if question.ceiling is not None else None,
        },
    }


def _builder(options: TaskOptions) -> Callable[[], Dataset]:
    """A legacy ``DatasetBuilder``: the split's questions as a ``datasets.Dataset``, built when called."""

    def build() -> Dataset:
        from datasets import Dataset

        questions = load_questions(options, path_hint=DATA_PATH_HINT)
        return Dataset.from_list([dataset_row(q) for q in questions])

    return build


# ------------------------------------------------------------------------------- parser and rubric


def _field(message: Any, name: str) -> Any:
    """A message field, for the legacy stack's pydantic messages and for plain dicts alike."""
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


def _text(content: Any) -> str | None:
    """Message content as text: a string as is, a list of parts as its text parts joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [_field(part, "text") for part in content if _field(part, "type") == "text"]
        return "".join(p for p in parts if isinstance(p, str))
    return str(content)


def last_reply(completion: Any) -> tuple[str | None, str | None]:
    """``(content, reasoning_content)`` of the last assistant message of a legacy completion.

    A plain-string completion is all content. ``reasoning_content`` is what the legacy OpenAI client
    read from the provider's ``reasoning``/``reasoning_content``/``reasoning_details`` field.
    """
    if isinstance(completion, str):
        return completion, None
    messages = [m for m in completion or [] if _field(m, "role") == "assistant"]
    if not messages:
        return None, None
    reasoning = _field(messages[-1], "reasoning_content")
    return _text(_field(messages[-1], "content")), reasoning if isinstance(reasoning, str) else None


def _score(completion: Any, info: Mapping[str, Any] | None, versions: Mapping[str, Any] | None = None) -> TaskScore:
    """Score a completion against the row's gold and record the prediction and ``versions`` in ``info[INFO_KEY]``
    (without ``versions``, a record already there is kept: the parser's format function scores without them)."""
    info = info if info is not None else {}
    score = score_task(*last_reply(completion), info)  # accuracy, format and answered of one rollout share one parse
    if isinstance(info, dict):
        previous = info.get(INFO_KEY)
        if versions is not None:
            kept = dict(versions)
        else:
            kept = previous.get(VERSIONS_KEY) if isinstance(previous, Mapping) else None
        info[INFO_KEY] = score.as_info() | {VERSIONS_KEY: kept}
    return score


@cache
def _parser_class() -> type:
    """``DrugprotParser``, a subclass of the legacy ``vf.Parser`` (defined on first use)."""
    vf = _legacy_verifiers()

    class DrugprotParser(vf.Parser):
        """The core's think/boxed parsing, seeing ``reasoning_content`` as well as ``content``.

        ``parse``/``parse_answer`` return the answer as the mode reads it (``TaskMode.reply_answer``: the option
        letter, or in extraction mode the block's well-formed lines as ``T3 | T7 | INHIBITOR`` lines), None
        without one; the format function is the mode's ``reply_format``, with the row's gold (``info``) when given.
        """

        def __init__(self, with_no_relation: bool = False, mode: str = "pair") -> None:
            super().__init__()
            self.with_no_relation = with_no_relation
            self.mode = mode
            self._task_mode = task_mode(mode)

        def reply(self, completion: Any) -> tuple[str | None, str | None]:
            """``(content, reasoning_content)`` of the last assistant message."""
            return last_reply(completion)

        def _read(self, content: str | None, reasoning: str | None) -> str | None:
            return self._task_mode.reply_answer(content, reasoning, with_no_relation=self.with_no_relation)

        def parse(self, text: str) -> str | None:
            return self._read(text, None)

        def parse_answer(self, completion: Any) -> str | None:
            return self._read(*self.reply(completion))

        def get_format_reward_func(self) -> Callable[..., float]:
            def format_reward_func(completion: Any, info: dict[str, Any] | None = None, **kwargs: Any) -> float:
                content, reasoning = self.reply(completion)
                return self._task_mode.reply_format(content, reasoning, info, with_no_relation=self.with_no_relation)

            return format_reward_func

    return DrugprotParser


def _reward_functions(reward: Reward, versions: Mapping[str, Any] | None) -> tuple[Callable[..., float], ...]:
    """The rubric's functions (the reward terms, ``REWARD_NAMES`` order, then ``answered``); their ``__name__`` is
    the key in ``state["metrics"]`` and results. Each records the prediction and ``versions`` in the rollout's
    ``info``."""

    def accuracy(completion: Any, info: dict[str, Any]) -> float:
        return accuracy_term(_score(completion, info, versions))

    def utility_(completion: Any, info: dict[str, Any]) -> float:
        return utility(_score(completion, info, versions), reward.costs)

    utility_.__name__ = utility_.__qualname__ = "utility"

    def format(completion: Any, info: dict[str, Any]) -> float:
        return _score(completion, info, versions).format

    def answered(completion: Any, info: dict[str, Any]) -> float:
        """1 when the reply gave a valid option letter, or a relations block (a diagnostic, weight 0)."""
        return float(_score(completion, info, versions).answered)

    return accuracy, utility_, format, answered


def _metric_functions(versions: Mapping[str, Any] | None) -> tuple[Callable[..., float], ...]:
    """The rubric's zero-weight official metrics, one per ``rewards.METRIC_NAMES`` entry (its ``__name__``):
    ``correct`` and the official cells, the values of ``rewards.recorded_metrics``."""

    def metric(name: str) -> Callable[..., float]:
        def recorded(completion: Any, info: dict[str, Any]) -> float:
            return recorded_metrics(_score(completion, info, versions))[name]

        recorded.__name__ = recorded.__qualname__ = name
        return recorded

    return tuple(metric(name) for name in METRIC_NAMES)


def make_rubric(parser: Any, reward: Reward | None = None, versions: Mapping[str, Any] | None = None) -> Any:
    """The legacy ``vf.Rubric``: ``accuracy``, ``utility`` and ``format`` with ``reward``'s weights (default: the
    default ``Reward``); ``answered`` and the official metrics ``correct``, ``official_tp``, ``official_fp``,
    ``official_fn`` (``rewards.METRIC_NAMES``) at weight 0, recorded whatever the weights.

    Each reward function's weight is looked up by its name in the reward's weights (``Weights.of``), as the v1
    taskset's ``task.rewards`` entries are: one table of weights for both stacks. ``versions``
    (``drugprot.core.versions.record``) is recorded in every rollout's ``info["drugprot"]``.
    """
    vf = _legacy_verifiers()
    reward = reward or Reward()
    *funcs, answered = _reward_functions(reward, versions)
    rubric = vf.Rubric(funcs=funcs, weights=[reward.weighting.of(f.__name__) for f in funcs], parser=parser)
    for metric in (answered, *_metric_functions(versions)):
        rubric.add_metric(metric)
    return rubric


# ---------------------------------------------------------------------------------------- loading


def _verifiers_version() -> str:
    try:
        return version("verifiers")
    except PackageNotFoundError:
        return "(not installed)"


def v1_flags(**knobs: Any) -> str:
    """The v1 ``vf-eval`` flags equivalent to legacy ``-a`` knobs (``--env.taskset.<knob> <value>``, shell-quoted)."""
    return " ".join(f"--env.taskset.{key.replace('_', '-')} {shlex.quote(str(value))}" for key, value in knobs.items())


def _unavailable_message(knobs: Mapping[str, Any]) -> str:
    flags = v1_flags(**knobs) or "--env.taskset.split validation"
    return (
        f"drugprot.load_environment() builds the verifiers v0 (legacy) SingleTurnEnv, but verifiers "
        f"{_verifiers_version()} has no legacy stack (it was removed in verifiers 0.4.0). Use the v1 taskset, "
        f"which takes the same knobs as --env.taskset.<knob> flags:\n"
        f"  vf-eval drugprot -m arcee/trinity-mini {flags}\n"
        f"(or `vf-eval @ configs/eval/trinity-mini.toml`; from Python: drugprot.DrugprotTaskset). "
        f"For the legacy `vf-eval drugprot -m trinity-mini -a '{{...}}'`, install "
        f"'verifiers>=0.3.1.dev59,<0.4'."
    )


def _legacy_verifiers(knobs: Mapping[str, Any] | None = None) -> ModuleType:
    """``verifiers.legacy``, or ``LegacyVerifiersUnavailable`` pointing to the v1 path."""
    try:
        spec = importlib.util.find_spec("verifiers.legacy")
    except ModuleNotFoundError:  # verifiers itself is missing
        spec = None
    if spec is None:
        raise LegacyVerifiersUnavailable(_unavailable_message(knobs or {}))
    import verifiers.legacy as vf

    return vf


def load_environment(
    split: str = "validation",
    train_split: str = "train",
    data_path: str | None = None,
    revision: str | None = None,
    num_tasks: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
    reward: str = DEFAULT_REWARD,
    fp_cost: float | None = None,
    fn_cost: float = DEFAULT_FN_COST,
    f1_target: float | None = None,
    accuracy_weight: float | None = None,
    utility_weight: float | None = None,
    format_weight: float | None = None,
    mark_entities: bool = True,
    negatives: Negatives = 0,
    mode: str = "pair",
    data_label: str | None = None,
) -> Any:
    """The DrugProt legacy ``vf.SingleTurnEnv`` (verifiers 0.3.x): ``vf-eval drugprot -a '{...}'``.

    Args:
        split: the split ``vf-eval`` evaluates (the env's ``eval_dataset``): ``train`` or ``validation``.
        train_split: the split of the env's training ``dataset`` (legacy trainers).
        data_path: local parquet/jsonl file or BioCreative TSV directory; unset loads the hub dataset.
        revision: the hub dataset's revision (commit sha, branch or tag); unset is its default branch. A
            pinned sha makes the run reproducible. Not with ``data_path``.
        num_tasks: keep the first N tasks of each split (after shuffling); None keeps all.
        shuffle: shuffle the tasks deterministically with ``seed``.
        seed: seed of the shuffle and of negative sampling.
        reward: ``"utility"`` (TP 1, FP -fp_cost, FN -fn_cost) or ``"accuracy"``: presets the weights.
        fp_cost: what the ``utility`` reward charges a false positive; unset: 0.5, or derived from ``f1_target``.
        fn_cost: what the ``utility`` reward charges a false negative.
        f1_target: F* (in (0, 1)), the micro-F1 the model reaches at its best threshold (the report's calibration
            line on a multi-rollout probe): sets ``fp_cost`` to F·(1+fn_cost)/(2−F), where the utility's threshold is
            micro-F1's F*/2; not with ``fp_cost``.
        accuracy_weight: weight of the ``accuracy`` reward; unset: the ``reward`` preset's (0 or 1).
        utility_weight: weight of the ``utility`` reward; unset: the ``reward`` preset's (1 or 0).
        format_weight: weight of the ``format`` reward; unset: the ``reward`` preset's (0.125).
        mark_entities: tag the pair's two mentions in the text.
        negatives: NO-RELATION candidates: 0, k per gold pair, or ``"all"``.
        mode: ``"pair"`` (one task per chemical-gene pair) or ``"extraction"`` (one task per abstract).
        data_label: how ``drugprot report`` names the data (kept in the run's ``env_args``); selects nothing.

    Raises:
        LegacyVerifiersUnavailable: verifiers >= 0.4 (no legacy stack); the message gives the v1 command.
        DrugprotConfigError: a bad knob (a ``ValueError``; names the knob).
        DrugprotDataError: the eval split's local data cannot be read, breaks the schema or selects no task.
        DrugprotHubError: no ``data_path`` while the hub is switched off and nothing is cached.
    """
    arguments = dict(locals())  # the keyword arguments by name: the v0 knobs of ``drugprot.core.options.KNOBS``
    given = {name: arguments[name] for name in knob_names("v0")}
    defaults = inspect.signature(load_environment).parameters
    vf = _legacy_verifiers({k: v for k, v in given.items() if k in knob_names("v1") and v != defaults[k].default})

    def options(for_split: str) -> TaskOptions:
        return TaskOptions.from_knobs(given | {"split": for_split})

    eval_options, train_options = options(split), options(train_split)
    validate_source(eval_options, path_hint=DATA_PATH_HINT)
    parser = _parser_class()(with_no_relation=eval_options.with_no_relation, mode=eval_options.mode)
    return vf.SingleTurnEnv(
        dataset=_builder(train_options),
        eval_dataset=_builder(eval_options),
        system_prompt=task_mode(eval_options.mode).system_prompt(eval_options),
        parser=parser,
        rubric=make_rubric(parser, eval_options.make_reward(), versions_record(eval_options)),
    )
