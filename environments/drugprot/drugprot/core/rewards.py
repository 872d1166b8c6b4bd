"""What a reply earns: the reward terms of a scored reply, and the reward RL optimises (``Reward``).

A scored reply (``drugprot.core.scoring.Score`` in pair mode, ``ExtractionScore`` in extraction mode) carries the
official metric's cells of its task: true positives, false positives and false negatives over (pair, relation
type) cells, NO-RELATION never scored. Every reward term is a function of a scored reply alone, so one ``Reward``
serves both modes, both verifiers stacks, the baselines and the report:

* ``accuracy``: pair mode, 1 when the reply names one of the pair's gold types (N on a NO-RELATION pair included);
  extraction mode, the per-document F1 (``ExtractionScore.accuracy``). The rewards of the seed recipe.
* ``utility``: the corpus micro-F1's cost structure, decided per task from that task's reply and gold alone::

      utility = TP - fp_cost * FP - fn_cost * FN

  Every false positive costs ``fp_cost`` wherever it occurs, every false negative ``fn_cost``, a true negative
  (N on a NO-RELATION pair, no line for an unrelated pair) is 0, and a multi-label pair counts per type, as the
  official metric does. A reply that states a relation it believes with probability ``p`` gains in expectation iff
  ``p > fp_cost / (1 + fp_cost + fn_cost)`` (``Costs.threshold``); micro-F1 is maximised by stating relations
  above ``F*/2``, half the best F1 the model can reach (Lipton, Elkan and Narayanaswamy 2014), so the costs are
  chosen for the model's operating point (docs/reward.md, "The reward").

  Defaults ``fp_cost=0.5``, ``fn_cost=1``: threshold ``0.5 / 2.5 = 0.2``, the cost calibrated at micro-F1 0.4.
  Measured by ``python -m evidence.decision`` on the real 350-abstract training sample over 10 PMID splits (constants
  chosen on training folds): a softmax-regression stand-in right on 58 % of held-out gold pairs (Trinity-Mini's seed
  run: 0.53 at step 1) reaches held-out official F1 0.398 ± 0.022 with the default cost's decisions, 0.006 below the
  oracle threshold read off the held-out pairs; a weaker stand-in (F1 ≈ 0.17) does better with its calibrated cost.
  A recipe for a much weaker model (F1 near 0.3, threshold near 0.15) would set ``fp_cost`` about 0.35: the cost
  calibrated at micro-F1 ``F`` is ``fp_cost_for_f1(F, fn_cost)`` (the defaults are F = 0.4), which the ``f1_target``
  knob sets from the calibration line ``drugprot report`` prints for a run in the official setting.
* ``format``: 1 for completed reasoning and exactly one answer (``drugprot.core.parsing``), unchanged.

Every cost and weight lies on the reward grid, a multiple of ``1/REWARD_GRID`` (``on_grid``: a value given off it
moves to the nearest multiple, by at most 1/128; ``Costs`` and ``Weights`` snap what they are given, and the run
records the snapped value), and so does the accuracy term (the per-document F1 of extraction mode, snapped), so
every reward is a dyadic rational with few significant bits. That is what prime-rl needs to drop a group that
cannot teach: it computes the advantage as ``rewards - rewards.mean()`` in torch float32 and drops only tokens whose
advantage is exactly 0.0, and the float32 mean of ``n`` equal rewards is exactly that reward only when every
partial sum ``k·r`` (k ≤ n) is exact in float32 (``exact_group_means``). With a reward of 0.1 it is not: 8 × 0.1
has a mean of 0.10000000894, an advantage of −7.45e-9, and the group trains (README, "The reward").

In extraction mode a line that names an unknown mention id or two mentions of one entity type counts as a false
positive of the utility: the official scorer ignores such lines, so counting them is stricter than the metric and
a reply can only lose by them.

A reply that gives no answer scores like one that states no relation (every gold cell a false negative) and earns
no format term; a scoring error (``SCORING_ERROR``) has no cells and scores 0 on every term.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal, Protocol

from drugprot.core.errors import DrugprotConfigError, DrugprotLookupError

RewardKind = Literal["accuracy", "utility"]
REWARD_KINDS: Final[tuple[str, ...]] = ("accuracy", "utility")
"""The values of the ``reward`` knob: which term carries the main weight."""
DEFAULT_REWARD: Final = "utility"

DEFAULT_FP_COST: Final = 0.5
DEFAULT_FN_COST: Final = 1.0

REWARD_GRID: Final = 64
"""Every cost and weight, and the accuracy term, is a multiple of ``1 / REWARD_GRID`` (``on_grid``)."""
GROUP_SIZES: Final = 256
"""The largest group of equal rewards whose float32 mean ``exact_group_means`` guarantees (prime-rl's groups are
``rollouts_per_example``, 8 to 32 in practice)."""


def on_grid(value: float) -> float:
    """``value`` moved to the nearest multiple of ``1 / REWARD_GRID`` (ties to even), by at most
    ``1 / (2 · REWARD_GRID)`` = 1/128: 0.1 → 0.09375, 0.35 → 0.34375, 0.5 → 0.5. ``value`` is finite."""
    return round(value * REWARD_GRID) / REWARD_GRID


def exact_group_means(reward: float, sizes: int = GROUP_SIZES) -> bool:
    """Whether the float32 mean of ``n`` copies of ``reward`` is exactly ``reward`` for every ``n`` up to ``sizes``,
    whatever the order of the summation: ``reward`` is a float32 and every partial sum ``k · reward`` (k ≤ sizes) is
    one too, so each addition is exact and ``n · reward / n`` is ``reward``. prime-rl then gives an all-equal
    group advantages of exactly 0.0 and drops it (``orchestrator/algo/grpo.py``, ``orchestrator/train_sink.py``).

    A float32 is ``m · 2^e`` with an odd ``m`` below 2^24 (e from -149, the subnormals, to 104), so the condition
    is on the odd part of ``k · m``: ``max_odd(k ≤ sizes) · m < 2^24``.

    A NaN or infinite reward has no exact group mean: False (prime-rl's advantage ``r - mean`` is NaN, never 0.0, so
    such a group is never dropped)."""
    if not math.isfinite(reward):
        return False
    if reward == 0:
        return True
    odd, denominator = abs(float(reward)).as_integer_ratio()  # in lowest terms: odd numerator, 2^-exponent
    while odd % 2 == 0:
        odd //= 2
    largest_odd_k = sizes if sizes % 2 else sizes - 1
    return largest_odd_k * odd < 2**24 and denominator <= 2**149 and abs(reward) * sizes < 2.0**127


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """The weight of each reward term: ``reward = Σ term × weight`` over ``REWARD_NAMES``. Each weight is checked
    (``check_reward_knob``, naming its knob) and put on the reward grid (``on_grid``)."""

    accuracy: float
    utility: float
    format: float

    def __post_init__(self) -> None:
        for name in ("accuracy", "utility", "format"):  # REWARD_NAMES, defined from these fields below
            object.__setattr__(self, name, check_reward_knob(weight_knob(name), getattr(self, name)))

    def of(self, reward: str) -> float:
        """The weight of the reward named ``reward`` (one of :data:`REWARD_NAMES`).

        Raises:
            DrugprotLookupError: no reward has that name (a ``KeyError``).
        """
        if reward not in REWARD_NAMES:
            raise DrugprotLookupError(f"no reward named {reward!r}; the weighted rewards are {', '.join(REWARD_NAMES)}")
        return float(getattr(self, reward))

    def as_dict(self) -> dict[str, float]:
        return {name: self.of(name) for name in REWARD_NAMES}


def weight_knob(reward: str) -> str:
    """The knob that sets a reward's weight (``--env.taskset.<knob>``, ``load_environment(<knob>=...)``)."""
    return f"{reward}_weight"


class Scored(Protocol):
    """What a reward reads from a scored reply (``Score`` and ``ExtractionScore`` both provide it)."""

    @property
    def accuracy(self) -> float: ...
    @property
    def format(self) -> float: ...
    @property
    def tp(self) -> int: ...
    @property
    def fp(self) -> int: ...
    @property
    def fn(self) -> int: ...


MAX_COST: Final = 1000.0
"""The largest ``fp_cost`` and ``fn_cost`` (the least is 0)."""
MAX_WEIGHT: Final = 1000.0
"""The largest weight in magnitude: a weight knob lies in ``[-MAX_WEIGHT, MAX_WEIGHT]``.

Why these bounds: a reply has fewer than 10^7 lines (the parser's input is capped well below 10 MB), so a term is
at most ``1 + MAX_COST · 10^7 = 1e10`` in magnitude, a reward at most ``3 · MAX_WEIGHT · 1e10 = 3e13``, and a
report's sums of squares over 10^9 rollouts stay below ``1e36``: every reward and every report figure is a finite
float. A value outside them (``1e308``, an integer too large for a float) would make ``cost · FP`` or the weighted
sum overflow to ``inf`` and the mean reward ``nan``.
"""


def shown_value(value: object) -> str:
    """``repr(value)`` for a message, at most 40 characters (an integer of 5,000 digits has no ``repr``)."""
    try:
        text = repr(value)
    except ValueError:  # int too large to convert to a string
        return f"an integer of more than {sys.get_int_max_str_digits()} digits"
    return text if len(text) <= 40 else text[:37] + "..."


def checked_reward_knob(name: str, value: object) -> float:
    """``value`` as a float when it is a valid value of the reward knob ``name``, as given (not snapped: a
    recorded cost is read as recorded).

    A knob is a real number (an int or a float, never a boolean: ``fn_cost = false`` in a TOML is refused, not read
    as 0), finite, from 0 to ``MAX_COST`` for a cost and from ``-MAX_WEIGHT`` to ``MAX_WEIGHT`` for a weight.

    Raises:
        DrugprotConfigError: ``<name> must be a real number from <low> to <high>, got <value>``, naming the knob.
    """
    low, high = (-MAX_WEIGHT, MAX_WEIGHT) if name.endswith("_weight") else (0.0, MAX_COST)
    real = isinstance(value, int | float) and not isinstance(value, bool)
    if not (real and low <= value <= high):  # type: ignore[operator]  # False for nan; exact for a huge int
        raise DrugprotConfigError(
            f"{name} must be a real number from {low:g} to {high:g}, got {shown_value(value)}", knob=name
        )
    return float(value)  # type: ignore[arg-type]


def check_reward_knob(name: str, value: object) -> float:
    """The one validation of a reward knob (``fp_cost``, ``fn_cost`` and the ``*_weight`` knobs), for both stacks:
    the v1 ``DrugprotConfig`` checks each field's raw value here before pydantic converts it, and ``TaskOptions``
    (the v0 adapter's route) through ``Costs`` and ``Weights``. Returns the value on the reward grid (``on_grid``):
    ``fp_cost = 0.35`` runs, and is recorded, as 0.34375.

    Raises:
        DrugprotConfigError: as ``checked_reward_knob``.
    """
    return on_grid(checked_reward_knob(name, value))


REWARD_NAMES: Final = tuple(f.name for f in fields(Weights))
"""The weighted rewards by name, in order: the v1 ``@vf.reward`` methods and the v0 rubric functions."""
PRESETS: Final[Mapping[str, Weights]] = {
    "utility": Weights(accuracy=0.0, utility=1.0, format=0.125),
    "accuracy": Weights(accuracy=1.0, utility=0.0, format=0.125),
}
"""The weights each value of the ``reward`` knob selects; a weight knob set explicitly overrides its entry. The format
weight is 1/8 (0.1 before scorer version 4, which left groups of equal rewards in prime-rl's batches)."""
DEFAULT_WEIGHTS: Final = PRESETS[DEFAULT_REWARD]


def fp_cost_for_f1(f1: float, fn_cost: float = DEFAULT_FN_COST) -> float:
    """The ``fp_cost`` that puts the utility's threshold ``fp / (1 + fp + fn)`` at ``F / 2``, micro-F1's optimal
    threshold at micro-F1 ``F``: ``fp = F * (1 + fn) / (2 - F)``. 0.35 at F 0.3, 0.5 at 0.4, 0.86 at 0.6
    (``fn_cost`` 1): the utility then states a relation exactly when stating it raises the expected micro-F1 of a
    model at that operating point. ``F`` 0 gives 0 (no cost: micro-F1 0 has no threshold to match).

    Raises:
        DrugprotConfigError: ``f1`` not a number in [0, 1], or ``fn_cost`` not a valid cost (``check_reward_knob``).
    """
    fn = checked_reward_knob("fn_cost", fn_cost)
    if isinstance(f1, bool) or not isinstance(f1, int | float) or not 0 <= f1 <= 1:  # NaN fails the comparison
        raise DrugprotConfigError(f"a micro-F1 must be a number in [0, 1], got {shown_value(f1)}", knob="f1_target")
    return f1 * (1.0 + fn) / (2.0 - f1)


@dataclass(frozen=True, slots=True)
class Costs:
    """The utility's constants: a true positive earns 1, a false positive costs ``fp``, a false negative ``fn``; both
    checked and put on the reward grid (``check_reward_knob``)."""

    fp: float = DEFAULT_FP_COST
    fn: float = DEFAULT_FN_COST

    def __post_init__(self) -> None:
        object.__setattr__(self, "fp", check_reward_knob("fp_cost", self.fp))
        object.__setattr__(self, "fn", check_reward_knob("fn_cost", self.fn))

    @property
    def threshold(self) -> float:
        """The probability above which stating a relation raises the expected utility: ``fp / (1 + fp + fn)``."""
        return threshold(self.fp, self.fn)

    def utility(self, tp: int, fp: int, fn: int) -> float:
        """``tp - fp_cost * fp - fn_cost * fn``."""
        return tp - self.fp * fp - self.fn * fn


def threshold(fp_cost: float, fn_cost: float) -> float:
    """``fp / (1 + fp + fn)``: the probability above which stating a relation raises the expected utility."""
    return fp_cost / (1.0 + fp_cost + fn_cost)


def accuracy_term(score: Scored) -> float:
    """The accuracy reward of a scored reply: its accuracy on the reward grid (pair mode's 0 or 1 as it is;
    extraction mode's per-document F1 moved by at most 1/128, 2/3 → 0.671875). The ``correct`` metric keeps the
    exact value."""
    return on_grid(score.accuracy)


def false_positives(score: Scored) -> int:
    """The false positives the utility charges: the official ones, plus (extraction) lines that cite an unknown
    mention id or two mentions of one type, which the official scorer ignores."""
    return score.fp + getattr(score, "unknown_id", 0) + getattr(score, "wrong_type", 0)


def utility(score: Scored, costs: Costs) -> float:
    """The utility term of a scored reply (see the module docstring)."""
    return costs.utility(score.tp, false_positives(score), score.fn)


METRIC_NAMES: Final = ("correct", "official_tp", "official_fp", "official_fn")
"""The unweighted metrics every rollout records, whatever the reward weights (the v1 ``@vf.metric`` methods and the
v0 rubric's zero-weight functions; prime-rl logs each as ``<prefix>/metrics/<name>/mean``): ``correct``, the raw
accuracy term (0..1), and the official metric's cells of the task. The official micro-F1 of a set of rollouts is
``2·TP / (2·TP + FP + FN)`` over these cells' sums, or over their means (one denominator), so a step's mean
metrics give its rollouts' micro-F1 exactly (``drugprot.evaluation.curves``)."""


def recorded_metrics(score: Scored) -> dict[str, float]:
    """The ``METRIC_NAMES`` of a scored reply: its accuracy term and its official TP, FP and FN (the official
    scorer's cells: in extraction mode the lines it ignores are not false positives here, unlike the utility's).
    A scoring error has no cells: every metric 0 (its reason is in the rollout's prediction record)."""
    return {
        "correct": float(score.accuracy),
        "official_tp": float(score.tp),
        "official_fp": float(score.fp),
        "official_fn": float(score.fn),
    }


def _number(value: float) -> str:
    """A cost or weight in full (a value on the reward grid has at most 16 significant digits: 1.078125, not
    1.07812), without a trailing ``.0``."""
    text = repr(float(value))
    return text.removesuffix(".0")


def _penalty(cost: float) -> str:
    """A cost as the reward of its cell: ``-0.5``, and ``0`` (not ``-0``) for no cost."""
    return "0" if cost == 0 else f"-{_number(cost)}"


@dataclass(frozen=True, slots=True)
class Reward:
    """The reward of a run: its kind (the ``reward`` knob), the utility's costs and the weight of every term.

    ``weights`` None takes the kind's preset (``PRESETS``). Built from the validated knobs by
    ``TaskOptions.make_reward()``; the one object the v1 taskset, the v0 rubric, the baselines and the report use.
    """

    kind: str = DEFAULT_REWARD
    costs: Costs = field(default_factory=Costs)
    weights: Weights | None = None
    f1_target: float | None = None
    """The micro-F1 ``costs.fp`` was derived from (``fp_cost_for_f1``; the ``f1_target`` knob), or None."""

    def __post_init__(self) -> None:
        if self.kind not in REWARD_KINDS:
            raise DrugprotConfigError(
                f"unknown reward {self.kind!r}; expected one of {', '.join(REWARD_KINDS)}", knob="reward"
            )
        if self.weights is None:
            object.__setattr__(self, "weights", PRESETS[self.kind])

    @property
    def weighting(self) -> Weights:
        """The weights in effect (the preset when none were given)."""
        assert self.weights is not None  # set in __post_init__
        return self.weights

    def terms(self, score: Scored) -> dict[str, float]:
        """Every reward term of a scored reply, by name (``REWARD_NAMES``), unweighted."""
        return {"accuracy": accuracy_term(score), "utility": utility(score, self.costs), "format": score.format}

    def value(self, score: Scored) -> float:
        """The reward of a scored reply: the weighted sum of its terms."""
        weights = self.weighting
        return sum(term * weights.of(name) for name, term in self.terms(score).items())

    def record(self) -> dict[str, Any]:
        """A JSON-ready record (``info["drugprot"]["versions"]["reward"]``); ``f1_target`` only when one was set."""
        record: dict[str, Any] = {
            "kind": self.kind,
            "fp_cost": self.costs.fp,
            "fn_cost": self.costs.fn,
            "weights": self.weighting.as_dict(),
            "threshold": self.costs.threshold,
        }
        return record if self.f1_target is None else record | {"f1_target": self.f1_target}

    def describe(self) -> str:
        """One line: the kind, the utility's constants and decision threshold, and the weights."""
        return describe(self.record())


def describe(record: Mapping[str, Any]) -> str:
    """One line for a ``Reward.record()``, e.g. ``utility (TP 1, FP -0.5, FN -1; states a relation when
    p > 0.200), weights accuracy 0, utility 1, format 0.1``.

    Raises:
        DrugprotLookupError: the record lacks a field or has one of the wrong type (``describe_recorded`` reads
            untrusted records).
    """
    kind, fp, fn, weights = record["kind"], record["fp_cost"], record["fn_cost"], record["weights"]
    if not isinstance(kind, str) or not isinstance(weights, Mapping):
        raise DrugprotLookupError(f"not a reward record: {record!r}")
    fp, fn = checked_reward_knob("fp_cost", fp), checked_reward_knob("fn_cost", fn)  # as recorded, not snapped
    target = record.get("f1_target")
    head = kind
    if weights.get("utility"):
        head += (
            f" (TP 1, FP {_penalty(fp)}, FN {_penalty(fn)}; states a relation when "
            f"p > {threshold(fp, fn):.3f}"
            + (f"; fp_cost from f1_target {_number(target)}" if isinstance(target, int | float) else "")
            + ")"
        )
    shown = ", ".join(f"{name} {_number(float(weights[name]))}" for name in REWARD_NAMES)
    return f"{head}, weights {shown}"


_SETTING = re.compile(r"((?:FP|FN) -?|(?:accuracy|utility|format) )(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)")


def grid_setting(line: str) -> str:
    """A reward line (``describe``) as the reward it runs: every cost and weight moved onto the reward grid, the
    threshold and ``f1_target`` (derived from them) left out. Two runs whose recorded lines differ but whose grid
    settings are equal ran one reward (``fp_cost`` 0.34 and 0.35 both run as 0.34375)."""
    text = re.sub(r"; states a relation when p > [\d.]+|; fp_cost from f1_target [\d.e+-]+", "", line)
    return _SETTING.sub(lambda m: m[1] + _number(on_grid(float(m[2]))), text)


BEFORE_THE_KNOB: Final = "accuracy (recorded before the reward knob)"
"""How the report names the reward of a run whose versions record has no reward: every scorer before version 3
had only the accuracy and format rewards (their weights were not recorded)."""


def describe_recorded(versions: Mapping[str, Any] | None) -> str | None:
    """The reward line of a rollout's ``info["drugprot"]["versions"]`` record: ``describe`` of its ``reward``,
    ``BEFORE_THE_KNOB`` for a record without one, None without a record (unknown) or for a malformed reward."""
    if not isinstance(versions, Mapping):
        return None
    recorded = versions.get("reward")
    if recorded is None:
        return BEFORE_THE_KNOB
    if not isinstance(recorded, Mapping):
        return None
    try:
        return describe(recorded)
    except (KeyError, TypeError, ValueError):
        return None
