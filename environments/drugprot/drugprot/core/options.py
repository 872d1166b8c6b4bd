"""The environment's knobs: one table (``KNOBS``) and the one place their values are validated (``TaskOptions``).

Both adapters expose the same knobs under the same names and defaults: the v1 ``DrugprotConfig`` fields
(``--env.taskset.<knob>``) and the v0 ``load_environment`` keyword arguments (``-a '{...}'``); the package README's knob
table lists them. ``tests/envs/test_knobs.py`` checks all three against ``KNOBS``. Each adapter turns its
values into ``TaskOptions`` with ``TaskOptions.from_knobs``; a bad value raises ``DrugprotConfigError``
naming the knob, whichever stack it came through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.exactness import check_exact_rewards, check_f1_target_on_grid, check_grid_knob, check_nonzero_on_grid
from drugprot.core.rewards import (
    DEFAULT_FN_COST,
    DEFAULT_FP_COST,
    DEFAULT_REWARD,
    MAX_COST,
    PRESETS,
    REWARD_KINDS,
    REWARD_NAMES,
    Costs,
    Reward,
    Weights,
    checked_reward_knob,
    fp_cost_for_f1,
    on_grid,
    shown_value,
    weight_knob,
)
from drugprot.core.sources import SPLITS, hub_source
from drugprot.modes import registry

Negatives = int | Literal["all"]


@dataclass(frozen=True, slots=True)
class Knob:
    """One user-facing knob: its name, default and one-line meaning, and which stacks expose it."""

    name: str
    default: Any
    help: str
    stacks: tuple[str, ...] = ("v1", "v0")
    """``v1`` (``DrugprotConfig`` field), ``v0`` (``load_environment`` keyword argument)."""
    selects: bool = True
    """False for a knob that is only recorded with the run (``data_label``): it is not a task option."""


KNOBS: tuple[Knob, ...] = (
    Knob("split", "validation", "the split to evaluate: `train` (3,500 abstracts) or `validation` (750)"),
    Knob("data_path", None, "local parquet/jsonl/json file or BioCreative TSV directory; unset: the hub"),
    Knob("revision", None, "hub dataset revision (commit sha, branch or tag); unset: its default branch"),
    Knob("num_tasks", None, "keep the first N tasks (after shuffling); unset keeps the whole split"),
    Knob("shuffle", False, "shuffle the tasks deterministically with `seed`"),
    Knob("seed", 0, "seed of the shuffle and of negative sampling"),
    Knob("reward", DEFAULT_REWARD, "`utility` (TP 1, FP -fp_cost, FN -fn_cost) or `accuracy`: presets the weights"),
    Knob(
        "fp_cost",
        None,
        f"what the `utility` reward charges a false positive; unset: {DEFAULT_FP_COST:g}, or from `f1_target`",
    ),
    Knob("fn_cost", DEFAULT_FN_COST, "what the `utility` reward charges a false negative"),
    Knob(
        "f1_target",
        None,
        "micro-F1 F in (0, 1) the model reaches: sets `fp_cost` = F·(1+fn_cost)/(2−F); not with `fp_cost`",
    ),
    Knob(weight_knob("accuracy"), None, "weight of the `accuracy` reward; unset: the `reward` preset's (0 or 1)"),
    Knob(weight_knob("utility"), None, "weight of the `utility` reward; unset: the `reward` preset's (1 or 0)"),
    Knob(weight_knob("format"), None, "weight of the `format` reward; unset: the `reward` preset's (0.125)"),
    Knob("mark_entities", True, "mark the pair's two mentions with <chemical>/<gene> tags"),
    Knob("negatives", 0, "NO-RELATION candidates: 0, k per gold pair, or `all` same-sentence pairs"),
    Knob("mode", "pair", "`pair`: one task per chemical-gene pair; `extraction`: one task per abstract"),
    Knob("data_label", None, "how reports name the data; selects nothing", selects=False),
    Knob("train_split", "train", "legacy only: the split of the env's training dataset", stacks=("v0",)),
)
"""Every knob, in the order the adapters and the README list them."""


def knob_names(stack: str) -> tuple[str, ...]:
    """The knobs ``stack`` (``v1`` or ``v0``) exposes, in table order."""
    return tuple(k.name for k in KNOBS if stack in k.stacks)


def parse_negatives(value: object) -> Negatives:
    """Normalise the ``negatives`` knob (an int, a digit string, or ``"all"``).

    Raises:
        DrugprotConfigError: anything else, with the accepted forms in the message.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "all":
            return "all"
        if text.isascii() and text.isdigit():
            return int(text)
    raise DrugprotConfigError(f"negatives must be a non-negative integer or 'all', got {value!r}", knob="negatives")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_int_or_none(knob: str, value: object, unset: str) -> None:
    if value is not None and (not _is_int(value) or value < 1):  # type: ignore[operator]
        raise DrugprotConfigError(f"{knob} must be a positive integer, or unset for {unset}; got {value!r}", knob=knob)


@dataclass(frozen=True)
class TaskOptions:
    """The validated values of every knob that selects or renders tasks (``KNOBS`` with ``selects``)."""

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
    """Normalised: an int or ``"all"`` (``parse_negatives``); every reader takes it from here."""
    mark_entities: bool = True
    reward: str = DEFAULT_REWARD
    """The ``reward`` knob: ``utility`` or ``accuracy`` (``drugprot.core.rewards.REWARD_KINDS``), a preset of the
    weights (``PRESETS``)."""
    fp_cost: float | None = None
    """None: derived from ``f1_target`` when set, else ``DEFAULT_FP_COST``. Always a float on the reward grid
    (``rewards.on_grid``) once built, as is ``fn_cost``."""
    fn_cost: float = DEFAULT_FN_COST
    f1_target: float | None = None
    """The micro-F1 the utility is calibrated for (``resolve_fp_cost``); None: ``fp_cost`` as given."""
    weights: Weights | None = None
    """The reward weights; None (and, through ``from_knobs``, every weight knob left unset) takes the ``reward``
    preset's. Always a ``Weights`` once built."""
    mode: str = "pair"
    """The task mode (``drugprot.modes``): ``pair``, one task per chemical-gene pair; ``extraction``, one task per
    abstract; or another registered mode. The mode refuses the knob values it cannot use
    (``TaskMode.check_options``)."""

    def __post_init__(self) -> None:
        if self.mode not in registry.mode_names():
            raise DrugprotConfigError(
                f"unknown mode {self.mode!r}; expected one of {', '.join(registry.mode_names())}", knob="mode"
            )
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
        _positive_int_or_none("num_tasks", self.num_tasks, "the whole split")
        if not _is_int(self.seed):
            raise DrugprotConfigError(f"seed must be an integer, got {self.seed!r}", knob="seed")
        for knob in ("shuffle", "mark_entities"):
            if not isinstance(getattr(self, knob), bool):
                raise DrugprotConfigError(f"{knob} must be true or false, got {getattr(self, knob)!r}", knob=knob)
        if self.reward not in REWARD_KINDS:
            raise DrugprotConfigError(
                f"unknown reward {self.reward!r}; expected one of {', '.join(REWARD_KINDS)}", knob="reward"
            )
        object.__setattr__(self, "fp_cost", resolve_fp_cost(self.fp_cost, self.fn_cost, self.f1_target))
        costs = Costs(self.fp_cost, self.fn_cost)  # raises DrugprotConfigError naming fp_cost or fn_cost
        for knob in ("fp_cost", "fn_cost"):  # in range (Costs checked): refused when it would run as 0
            check_nonzero_on_grid(knob, float(getattr(self, knob)))
        object.__setattr__(self, "fp_cost", costs.fp)  # on the reward grid, as the run records them
        object.__setattr__(self, "fn_cost", costs.fn)
        if self.weights is None:
            object.__setattr__(self, "weights", PRESETS[self.reward])
        # a Weights is checked and on the reward grid (``check_reward_knob``), like the costs
        object.__setattr__(self, "negatives", parse_negatives(self.negatives))  # "2" -> 2, " ALL" -> "all"
        mode = registry.lookup(self.mode)
        mode.check_options(self)
        check_exact_rewards(self.weights, costs, mode.cell_bounds, mode.accuracy_grid, self.mode)

    def make_reward(self) -> Reward:
        """The run's reward (``drugprot.core.rewards.Reward``): its kind, costs and weights."""
        assert self.fp_cost is not None  # resolved in __post_init__
        return Reward(self.reward, Costs(self.fp_cost, self.fn_cost), self.weights, self.f1_target)

    @property
    def with_no_relation(self) -> bool:
        """Whether ``N. NO-RELATION`` is an option (pair mode with negative candidates)."""
        return self.negatives != 0

    @property
    def source(self) -> str:
        """What the options load, for messages: the data path, or the hub dataset and split."""
        return self.data_path if self.data_path is not None else hub_source(self.split, self.revision)

    @classmethod
    def from_knobs(cls, knobs: Mapping[str, Any]) -> TaskOptions:
        """Options from knob values by name (any subset of ``KNOBS``; the rest keep their defaults).

        Knobs that select nothing (``data_label``) and adapter-only knobs (``train_split``) are accepted and
        ignored here: the adapter that has them reads them itself.

        Raises:
            DrugprotConfigError: an unknown knob name, or a knob with a value the environment cannot use.
        """
        known = {k.name: k for k in KNOBS}
        unknown = sorted(set(knobs) - set(known))
        if unknown:
            raise DrugprotConfigError(f"unknown knob {unknown[0]!r}; the knobs are {', '.join(known)}", knob=unknown[0])
        values = {name: value for name, value in knobs.items() if known[name].selects and name != "train_split"}
        exclusive_costs(values.get("fp_cost"), values.get("f1_target"))
        set_weights = {reward: values.pop(weight_knob(reward), None) for reward in REWARD_NAMES}
        kind = values.get("reward", DEFAULT_REWARD)
        preset = PRESETS.get(kind) if isinstance(kind, str) else None
        if preset is None:  # an unknown reward: __post_init__ names it
            return cls(**values)
        weights = {r: preset.of(r) if set_weights[r] is None else set_weights[r] for r in REWARD_NAMES}
        for reward, value in set_weights.items():  # a weight knob that would run as 0 is refused, naming it
            if value is not None:
                check_grid_knob(weight_knob(reward), value)
        return cls(**values, weights=Weights(**weights))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def exclusive_costs(fp_cost: object, f1_target: object) -> None:
    """The knobs ``fp_cost`` and ``f1_target`` set the same cost: a recipe sets at most one of them.

    Raises:
        DrugprotConfigError: both set (not None), naming both.
    """
    if fp_cost is not None and f1_target is not None:
        raise DrugprotConfigError(
            f"f1_target ({shown_value(f1_target)}) and fp_cost ({shown_value(fp_cost)}) both set the utility's "
            "false-positive cost; set one of them (f1_target derives fp_cost = F(1+fn_cost)/(2-F))",
            knob="f1_target",
        )


def check_f1_target(value: object) -> float:
    """The one check of the ``f1_target`` knob, for both stacks (the v1 config checks the raw value here before
    pydantic converts it): a real number strictly between 0 and 1.

    Raises:
        DrugprotConfigError: ``f1_target must be a micro-F1 strictly between 0 and 1 (...), got <value>``, the value
            shown in at most 40 characters (an integer of 5,000 digits included).
    """
    if not _is_number(value) or not 0 < value < 1:  # type: ignore[operator]  # NaN fails the comparison
        raise DrugprotConfigError(
            "f1_target must be a micro-F1 strictly between 0 and 1 (F*, the best F1 the model reaches: the report's "
            f"calibration line), got {shown_value(value)}",
            knob="f1_target",
        )
    return float(value)  # type: ignore[arg-type]


def resolve_fp_cost(fp_cost: float | None, fn_cost: float, f1_target: float | None) -> float:
    """The ``fp_cost`` in effect: ``fp_cost_for_f1(f1_target, fn_cost)`` with a target, on the reward grid
    (``on_grid``: the derived 0.352941 at F 0.3 runs as 0.359375), else ``fp_cost``, else the default. An
    ``fp_cost`` on the same grid point as the target's is the same setting (a ``dataclasses.replace`` of built
    options carries both); a different one is refused as at the knobs (``exclusive_costs``).

    Raises:
        DrugprotConfigError: ``f1_target`` not a number in the open interval (0, 1), one that derives a cost above
            ``MAX_COST`` (both naming ``f1_target``), or an ``fp_cost`` that contradicts it.
    """
    if f1_target is None:
        return DEFAULT_FP_COST if fp_cost is None else fp_cost
    check_f1_target(f1_target)
    try:
        fn = checked_reward_knob("fn_cost", fn_cost)
    except DrugprotConfigError:
        return DEFAULT_FP_COST if fp_cost is None else fp_cost  # Costs names fn_cost
    check_f1_target_on_grid(f1_target, fn)
    derived = fp_cost_for_f1(f1_target, fn)
    if on_grid(derived) > MAX_COST:
        raise DrugprotConfigError(
            f"f1_target {f1_target:g} with fn_cost {fn:g} derives fp_cost {derived:.6g}, above the largest cost "
            f"{MAX_COST:g}; lower f1_target or fn_cost",
            knob="f1_target",
        )
    if fp_cost is not None and (not _is_number(fp_cost) or on_grid(fp_cost) != on_grid(derived)):
        exclusive_costs(fp_cost, f1_target)
    return on_grid(derived)
