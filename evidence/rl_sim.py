"""``python -m evidence.rl_sim --data-path FILE --out DIR``: GRPO on CPU with the environment's own rewards, over many
PMID splits and two policy classes.

A stand-in policy, log-linear over the features of a (chemical, gene) pair (``evidence.shared.POLICY_CLASSES``: the
lexical baseline's cues, or hashed words), is trained with GRPO: each step draws prompts from the train abstracts of
a PMID split, 8 rollouts per prompt, and pushes up the log-probability of each rollout's actions in proportion to its
group-relative advantage (reward minus the group's mean, as prime-rl's default). Every reward comes from the
environment's scoring path: a rollout is rendered as a model's reply (a boxed letter; or a ``<relations>`` block
listing the candidate pairs whose sampled action is a type), scored by ``drugprot.modes.task.score_task`` and
weighted by ``drugprot.core.rewards.Reward`` (pair replies are scored once per gold-label set and answer, then
looked up: the score of a reply depends on nothing else).

* pair recipes: a prompt is one pair task of the recipe's ``negatives`` setting; the actions are the 13 types, plus
  N when negatives are offered; the utility at the default cost, at the F1-calibrated cost of the step-0 policy
  (``fp = F (1 + fn) / (2 - F)``, F the warm start's F1 on out-of-fold decisions of the train abstracts), at the cost
  calibrated at F* (the best threshold's F1 on those decisions: ``pair-utility-fstar``, asked for by name), or at an
  adaptive cost that follows the running F1 of the training rollouts' official cells;
* extraction recipes: a prompt is one abstract; a rollout samples include + type for every same-sentence candidate.

Warm start (per split and class, the same for every recipe): a softmax regression fit on the train abstracts'
candidates, its logits divided by a temperature chosen so that the policy's sampled answer is a gold type on
``WARM_ACCURACY`` of the train gold pairs (N not offered): Trinity-Mini answered 0.53 of the positive pairs right at
step 1 of the seed run. Every ``--eval-every`` steps, on the held-out abstracts and with the same 14 answers for
every recipe (N allowed, also for the recipe trained without it): the official micro-F1 of the most probable answer
on every same-sentence candidate (greedy) and of one sampled answer per candidate, the N / ``none`` share and the
recipe's mean reward. Each run writes a prime-rl-shaped ``metrics.jsonl`` (``drugprot.evaluation.curves``):

* per step, in prime-rl's two scopes (``drugprot curves`` reads both): ``train/agg/all/agent/...`` over every
  rollout of the step and ``train/agg/effective/agent/...`` over the groups prime-rl ships (a non-zero advantage;
  gated, also admitted), each with ``metrics/{official_tp,official_fp,official_fn,correct}/mean`` (the official cells
  and the raw accuracy term, unweighted), ``reward/mean``, the unweighted terms ``rewards/{accuracy,utility}/mean``
  (utility at the cost in effect) and ``is_trainable/mean`` (under ``all`` the share of rollouts in groups with a
  non-zero advantage; 1.0 under ``effective``, as in prime-rl with its zero-advantage filter); under ``all`` only,
  ``progress/tasks`` aside, the zero-advantage share of groups per task kind
  ``.../zero_advantage/{positive,negative,abstract}/mean`` and the utility's cost in effect
  ``.../metrics/fp_cost/mean``. A step whose every group is all-equal (an empty batch) logs no ``effective`` line and
  writes prime-rl's warning to ``orchestrator.log`` (``empty_batch_line``); unlike prime-rl, the sandbox still logs
  its ``all`` line there and runs on after ten in a row;
* per evaluation, under ``eval/heldout/all/agent/`` and (the same numbers: no sandbox rollout fails)
  ``eval/heldout/effective/agent/``, ``metrics/{official_f1,official_f1_sampled,none_share,recipe_reward,
  official_tp,official_fp,official_fn}/mean`` (the cells are per held-out candidate, so ``2TP/(2TP+FP+FN)`` of
  their means is the greedy F1), and for the recipe trained without N ``official_f1_without_n``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import (
    REPO,
    add_overwrite,
    check_run_folders,
    load_data,
    positive_int,
    too_small,
    write_json,
)
from drugprot.core.rewards import Costs, Reward, Weights, utility
from drugprot.core.schema import Document
from drugprot.evaluation.fstar import Abstract, f_star, shares
from evidence import sim_report
from evidence.shared import (
    ACTIONS,
    N_INDEX,
    POLICY_CLASSES,
    calibrated_fp,
    check_held_out,
    check_splits,
    single_thread,
)
from evidence.sim_curriculum import curriculum_pair_step, new_sampler
from evidence.sim_data import (
    Corpus,
    Data,
    _trainable,
    prepare,
    probabilities,
    sample,
    scoped_means,
    step0_cost,
    warm_start,
)

GROUP = 8
TAIL = 4
"""A run's end figures are the mean of its last ``1/TAIL`` of evaluations."""
RUNNING = 0.9
"""Decay of the running official cells the adaptive cost follows (about the last 10 steps)."""
ALL = "train/agg/all/agent"
"""prime-rl's ``all`` scope: every rollout of the step."""
AGENT = "train/agg/effective/agent"
"""prime-rl's ``effective`` scope: the rollouts shipped to the trainer (the groups with a non-zero advantage)."""
EVAL = "eval/heldout/effective/agent"
REWARD_KEY = f"{EVAL}/metrics/recipe_reward/mean"
F1_KEY = f"{EVAL}/metrics/official_f1/mean"
SAMPLED_KEY = f"{EVAL}/metrics/official_f1_sampled/mean"
NONE_KEY = f"{EVAL}/metrics/none_share/mean"
NO_N_KEY = f"{EVAL}/metrics/official_f1_without_n/mean"
TRAINABLE_KEY = f"{ALL}/is_trainable/mean"
LOG = "orchestrator.log"
"""The run's empty-batch warnings in prime-rl's words (``empty_batch_line``), where ``drugprot curves`` finds them."""
CELLS = ("official_tp", "official_fp", "official_fn", "correct")
UTILITY_ONLY = Weights(accuracy=0.0, utility=1.0, format=0.0)
"""The utility term alone (unweighted), logged as ``rewards/utility/mean`` beside ``rewards/accuracy/mean``."""


@dataclass(frozen=True)
class Recipe:
    name: str
    mode: str
    reward: str
    negatives: int | str = "all"
    cost: str = "default"
    """``default`` (the knob's), ``calibrated`` (the step-0 F1 of the train folds), ``fstar`` (F*, the best
    threshold's F1 on the train folds) or ``adaptive``."""
    sampler: str = "uniform"
    """``uniform`` (the sandbox's standard: prompts drawn without replacement per step) or ``pool`` (prime-rl's
    ``difficulty_pool`` on the reward's scale, ``evidence.curriculum.utility_pools``)."""
    gate: bool = False
    """prime-rl's ``advantage_range`` gate at its default ``[0, 0]``: fill the batch with admitted groups."""
    pool_weight: float = 0.1
    negative_share: float | None = None
    """The NO-RELATION share of the pair task mix: None keeps every task of ``negatives``; a share keeps every gold
    pair and a seeded sample of the NO-RELATION candidates of that share (``task_mix``)."""
    group: int = GROUP
    """Rollouts per task (prime-rl's ``group_size``); a step's rollouts stay ``Settings.pair_prompts x GROUP``
    (prime-rl's ``batch_size``), so a group of 4 draws twice the tasks of a group of 8."""
    temperature: float | None = None
    """The sampling temperature of the training rollouts (pair mode). The warm start stands for the policy at the
    recipe's temperature (``configs/drugprot.toml``: ``RECIPE_TEMPERATURE``); at temperature T its logits are scaled
    by ``RECIPE_TEMPERATURE / T`` (and so is the gradient of the log-probability). None: the recipe's."""
    seed: int = 0
    """Times ``SEED_STRIDE``, added to the run's seed (its split number): the same recipe at another seed (the
    noise floor)."""


RECIPES = (
    Recipe("pair-accuracy-neg0", "pair", "accuracy", 0),
    Recipe("pair-accuracy-neg1", "pair", "accuracy", 1),
    Recipe("pair-accuracy-neg2", "pair", "accuracy", 2),
    Recipe("pair-accuracy-all", "pair", "accuracy", "all"),
    Recipe("pair-utility-all", "pair", "utility", "all"),
    Recipe("pair-utility-calibrated", "pair", "utility", "all", "calibrated"),
    Recipe("pair-utility-adaptive", "pair", "utility", "all", "adaptive"),
    Recipe("pair-utility-fstar", "pair", "utility", "all", "fstar"),
    Recipe("pair-utility-gate", "pair", "utility", "all", gate=True),
    Recipe("pair-utility-pool", "pair", "utility", "all", sampler="pool"),
    Recipe("pair-utility-pool-gate", "pair", "utility", "all", sampler="pool", gate=True),
    Recipe("pair-utility-probe", "pair", "utility", "all", "probe"),
    Recipe("pair-utility-all-seed1", "pair", "utility", "all", seed=1),
    Recipe("pair-utility-t1.0", "pair", "utility", "all", temperature=1.0),
    Recipe("pair-utility-g4", "pair", "utility", "all", group=4),
    Recipe("pair-utility-g16", "pair", "utility", "all", group=16),
    Recipe("pair-utility-neg50", "pair", "utility", "all", negative_share=0.5),
    Recipe("pair-utility-neg30", "pair", "utility", "all", negative_share=0.3),
    Recipe("extraction-accuracy", "extraction", "accuracy"),
    Recipe("extraction-utility", "extraction", "utility"),
)
BY_NAME = {r.name: r for r in RECIPES}
LEVERS = ("pair-utility-all-seed1", "pair-utility-t1.0", "pair-utility-g4", "pair-utility-g16", "pair-utility-neg50",
          "pair-utility-neg30")  # fmt: skip
"""The one-pass levers on the all-equal share (and the noise floor: the default recipe at a second seed)."""
DEFAULT_RECIPES = tuple(
    r.name
    for r in RECIPES
    if r.mode == "pair"
    and r.sampler == "uniform"
    and not r.gate
    and r.cost not in ("fstar", "probe")
    and r.name not in LEVERS
)
"""The default command's recipes (about 6 CPU minutes for 10 splits x 2 classes on the real sample); the extraction
recipes cost about 5x a pair recipe's CPU each and are asked for by name."""
ONE_PASS_RECIPES = ("pair-utility-all", "pair-utility-calibrated", "pair-utility-fstar", "pair-utility-probe",
                    "pair-utility-gate", *LEVERS)  # fmt: skip
"""``--one-pass``'s default recipes: the reference, the three calibrations, prime-rl's admission gate and the levers."""
SEED_STRIDE = 1000
PROBE_PAIRS = 500
"""The step-0 probe of ``pair-utility-probe``: whole train abstracts (seeded order) until this many candidate pairs,
``GROUP`` rollouts each (the documented probe: docs/training/before-you-train.md)."""


def _recipe_shape() -> dict[str, Any]:
    """``configs/drugprot.toml``'s run shape: steps, rollouts per step, group size and training temperature."""
    config = tomllib.loads((REPO / "configs" / "drugprot.toml").read_text(encoding="utf-8"))
    orchestrator = config["orchestrator"]
    return {
        "steps": int(config["max_steps"]),
        "batch_size": int(orchestrator["batch_size"]),
        "group_size": int(orchestrator["group_size"]),
        "temperature": float(orchestrator["train"]["sampling"]["temperature"]),
    }


RECIPE_SHAPE = _recipe_shape()
RECIPE_TEMPERATURE = RECIPE_SHAPE["temperature"]


@dataclass(frozen=True)
class Settings:
    steps: int = 600
    eval_every: int = 20
    pair_prompts: int = 32
    """Pair tasks per step (x 8 rollouts)."""
    documents: int = 4
    """Abstracts per step in extraction mode (x 8 rollouts)."""
    lr: float = 0.05
    one_pass: bool = False
    """Draw each step's tasks from those not yet drawn (a seeded permutation of the train tasks, walked once; a
    second pass only when a run needs more tasks than the split has), as the recipe's run does on the full train
    split; False: the sandbox's standard, each step a fresh draw without replacement from every train task."""


def one_pass_settings() -> Settings:
    """The recipe's shape (``configs/drugprot.toml``): its steps, its batch of ``batch_size / group_size`` tasks x
    ``GROUP``, one pass; an evaluation every 5 steps (21 in a run, the end figure the mean of the last 5)."""
    return Settings(
        steps=RECIPE_SHAPE["steps"],
        eval_every=5,
        pair_prompts=RECIPE_SHAPE["batch_size"] // RECIPE_SHAPE["group_size"],
        one_pass=True,
    )


class OnePass:
    """Tasks in a seeded order, each handed out once; reshuffled (``passes`` counts) only when all were handed out."""

    def __init__(self, tasks: Sequence[int], seed: int) -> None:
        self.tasks = np.asarray(tasks, dtype=int)
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(self.tasks)
        self.at = 0
        self.passes = 1

    def take(self, n: int) -> np.ndarray:
        """The next ``n`` tasks not yet handed out (a new pass starts when the order runs out)."""
        out: list[int] = []
        while len(out) < n:
            if self.at == len(self.order):
                self.order, self.at, self.passes = self.rng.permutation(self.tasks), 0, self.passes + 1
            k = min(n - len(out), len(self.order) - self.at)
            out += self.order[self.at : self.at + k].tolist()
            self.at += k
        return np.array(out, dtype=int)

    def __next__(self) -> int:
        return int(self.take(1)[0])

    def observe(self, key: int, rewards: list[float]) -> None:
        """A pool sampler's hook (``curriculum_pair_step``): one pass learns nothing from rewards."""


def scale_of(recipe: Recipe) -> float:
    """The factor on the warm-start policy's logits at the recipe's sampling temperature."""
    return 1.0 if recipe.temperature is None else RECIPE_TEMPERATURE / recipe.temperature


def prompts_of(recipe: Recipe, settings: Settings) -> int:
    """Tasks per step: the batch's rollouts (``pair_prompts x GROUP``) over the recipe's group size."""
    return settings.pair_prompts * GROUP // recipe.group


def pair_step(
    w: np.ndarray,
    data: Data,
    recipe: Recipe,
    costs: Costs,
    tasks: list[int],
    settings: Settings,
    rng: np.random.Generator,
    one_pass: OnePass | None = None,
) -> tuple[np.ndarray, dict[str, float]]:
    """One GRPO step on pair tasks: the gradient and the step's logged means. ``one_pass``: the tasks come from it
    (tasks not yet drawn) instead of a fresh draw from ``tasks``."""
    with_n = recipe.negatives != 0
    prompts = prompts_of(recipe, settings)
    if one_pass is not None:
        chosen = one_pass.take(prompts)
    else:
        chosen = rng.choice(tasks, size=min(prompts, len(tasks)), replace=False)
    x = data.x[chosen]
    scale = scale_of(recipe)
    p = probabilities(w * scale, x, with_n)
    actions = sample(np.repeat(p[:, None], recipe.group, axis=1), rng)  # (prompts, group)
    keys = data.key[chosen][:, None]
    rewards = data.table(with_n, reward=Reward(recipe.reward, costs))[keys, actions]
    advantages = rewards - rewards.mean(axis=1, keepdims=True)
    onehot = np.eye(len(ACTIONS))[actions]  # (prompts, group, 14)
    grad = scale * np.einsum("kg,kga,kf->af", advantages, onehot - p[:, None], x) / actions.size
    arrays = {name: data.table(with_n, cell=name)[keys, actions] for name in CELLS}
    arrays["utility"] = data.table(with_n, reward=Reward("utility", costs, UTILITY_ONLY))[keys, actions]
    trainable = _trainable(rewards)
    positive = np.array([bool(data.rows[i].gold) for i in chosen])
    logged = scoped_means(arrays | {"reward": rewards}, trainable)
    for kind, mask in (("positive", positive), ("negative", ~positive)):
        if mask.any():
            logged[f"zero_advantage/{kind}"] = float(1 - trainable[mask].mean())
    logged |= zero_advantage_by_reward(rewards, trainable)
    logged["rollouts"] = float(actions.size)
    return grad, logged


def zero_advantage_by_reward(rewards: np.ndarray, trainable: np.ndarray) -> dict[str, float]:
    """The share of groups (rows of ``rewards``) whose rewards are all equal, per common reward, keyed
    ``zero_advantage/at/<reward>``: whether prime-rl's float32 advantage of such a group is exactly 0 (and the group
    dropped) depends on that value (``evidence.step_time``)."""
    common = np.round(rewards[~trainable, 0], 6)
    values, counts = np.unique(common, return_counts=True)
    return {f"zero_advantage/at/{v:g}": float(c / len(rewards)) for v, c in zip(values, counts, strict=True)}


def extraction_step(
    w: np.ndarray,
    data: Data,
    recipe: Recipe,
    costs: Costs,
    by_pmid: dict[str, list[int]],
    settings: Settings,
    rng: np.random.Generator,
) -> tuple[np.ndarray, dict[str, float]]:
    """One GRPO step on abstracts: the gradient and the step's logged means."""
    pmids = rng.choice(sorted(by_pmid), size=min(settings.documents, len(by_pmid)), replace=False)
    reward = Reward(recipe.reward, costs)
    documents = {d.pmid: d for d in data.train}
    grad = np.zeros_like(w)
    rewards = np.zeros((len(pmids), GROUP))
    cells = np.zeros((len(pmids), GROUP, len(CELLS) + 1))
    for k, pmid in enumerate(pmids):
        indices = by_pmid[pmid]
        x = data.x[indices]
        p = probabilities(w, x, True)
        actions = sample(np.repeat(p[None], GROUP, axis=0), rng)  # (GROUP, candidates)
        for g in range(GROUP):
            triples = [
                (data.rows[i].chemical, data.rows[i].gene, ACTIONS[a])
                for i, a in zip(indices, actions[g], strict=True)
                if a != N_INDEX
            ]
            score = data.document_score(triples, documents[pmid])
            rewards[k, g] = reward.value(score)
            cells[k, g] = (score.tp, score.fp, score.fn, score.accuracy, utility(score, costs))
        if indices:
            onehot = np.eye(len(ACTIONS))[actions]  # (GROUP, candidates, 14)
            grad += np.einsum("g,gca,cf->af", rewards[k] - rewards[k].mean(), onehot - p[None], x)
    trainable = _trainable(rewards)
    arrays = {name: cells[..., j] for j, name in enumerate((*CELLS, "utility"))}
    logged = scoped_means(arrays | {"reward": rewards}, trainable)
    logged["zero_advantage/abstract"] = float(1 - trainable.mean())
    return grad / rewards.size, logged


def _f1_of(data: Data, indices: list[int], chosen: np.ndarray) -> float:
    rows = [(data.rows[i].document.pmid, data.rows[i].chemical, data.rows[i].gene, ACTIONS[a]) for i, a in
            zip(indices, chosen, strict=True) if a != N_INDEX]  # fmt: skip
    return data.held_out_f1(rows).f1


def evaluate(w: np.ndarray, data: Data, recipe: Recipe, costs: Costs, rng: np.random.Generator) -> dict[str, float]:
    """Held-out official F1 (greedy and sampled; 14 answers for every recipe), cells, mean reward, N / none share."""
    by_pmid = data.candidates(data.test)
    indices = [i for d in data.test for i in by_pmid[d.pmid]]
    p = probabilities(w, data.x[indices], True)
    greedy = p.argmax(axis=1)
    rows = [(data.rows[i].document.pmid, data.rows[i].chemical, data.rows[i].gene, ACTIONS[a]) for i, a in
            zip(indices, greedy, strict=True) if a != N_INDEX]  # fmt: skip
    cells = data.held_out_f1(rows)
    n = max(len(indices), 1)
    out = {
        F1_KEY: cells.f1,
        SAMPLED_KEY: _f1_of(
            data,
            indices,
            sample(p if scale_of(recipe) == 1.0 else probabilities(w * scale_of(recipe), data.x[indices], True), rng),
        ),
        f"{EVAL}/metrics/official_tp/mean": cells.tp / n,
        f"{EVAL}/metrics/official_fp/mean": cells.fp / n,
        f"{EVAL}/metrics/official_fn/mean": cells.fn / n,
    }
    if recipe.mode == "pair":
        with_n = recipe.negatives != 0
        tasks = data.tasks(data.test, recipe.negatives)
        answers = probabilities(w, data.x[tasks], with_n).argmax(axis=1)
        table = data.table(with_n, reward=Reward(recipe.reward, costs))
        out[REWARD_KEY] = float(table[data.key[tasks], answers].mean())
        out[NONE_KEY] = float((greedy == N_INDEX).mean()) if indices else 0.0
        if not with_n:
            out[NO_N_KEY] = _f1_of(data, indices, p[:, :N_INDEX].argmax(axis=1))
    else:
        reward, values, empty = Reward(recipe.reward, costs), [], 0
        stated = {(r[0], r[1], r[2]): r[3] for r in rows}
        for document in data.test:
            triples = [(c, g, t) for (pmid, c, g), t in stated.items() if pmid == document.pmid]
            values.append(reward.value(data.document_score(triples, document)))
            empty += not triples
        out[REWARD_KEY] = float(np.mean(values))
        out[NONE_KEY] = empty / max(len(data.test), 1)
    return out


def train(
    data: Data,
    w0: np.ndarray,
    recipe: Recipe,
    seed: int,
    settings: Settings,
    out: Path,
    costs: Costs,
) -> dict[str, Any]:
    """One GRPO run at ``costs`` (the adaptive recipe starts there); writes ``out/metrics.jsonl`` and returns its
    first evaluation and the mean of its last quarter of evaluations (one held-out evaluation is noisy)."""
    seed += SEED_STRIDE * recipe.seed
    rng, eval_rng = np.random.default_rng(seed), np.random.default_rng(10_000 + seed)
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    pair = recipe.mode == "pair"
    tasks = task_mix(data, data.tasks(data.train, recipe.negatives), recipe.negative_share, seed) if pair else []
    by_pmid = data.candidates(data.train) if recipe.mode == "extraction" else {}
    out.mkdir(parents=True, exist_ok=True)
    evals, running, trainable, progress, rollouts = [], np.zeros(3), [], [], 0.0
    one_pass = OnePass(tasks, 20_000 + seed) if pair and settings.one_pass else None
    sampler = new_sampler(recipe, tasks, seed) if recipe.mode == "pair" else None
    if sampler is not None and one_pass is not None:
        raise ValueError(f"{recipe.name}: the pool sampler revisits tasks; --one-pass runs the uniform sampler")
    prompts = min(settings.pair_prompts, len(tasks)) if recipe.mode == "pair" else min(settings.documents, len(by_pmid))
    per_step = float(GROUP * prompts)
    start = time.time()
    streak = 0
    with (out / "metrics.jsonl").open("w", encoding="utf-8") as log, (out / LOG).open("w", encoding="utf-8") as warn:
        for step in range(settings.steps + 1):
            line: dict[str, Any] = {"step": step, "time": round(time.time() - start, 3)}
            if step % settings.eval_every == 0 or step == settings.steps:
                evals.append({"step": step, **evaluate(w, data, recipe, costs, eval_rng)})
                progress.append((step, rollouts, evals[-1][F1_KEY]))
                line.update(_eval_keys(evals[-1]))
            if step < settings.steps:
                if recipe.mode == "pair" and (recipe.gate or sampler is not None):
                    grad, logged = curriculum_pair_step(w, data, recipe, costs, tasks, settings, rng,
                                                        sampler or one_pass)  # fmt: skip
                elif recipe.mode == "pair":
                    grad, logged = pair_step(w, data, recipe, costs, tasks, settings, rng, one_pass)
                else:
                    grad, logged = extraction_step(w, data, recipe, costs, by_pmid, settings, rng)
                m = 0.9 * m + 0.1 * grad
                v = 0.999 * v + 0.001 * grad**2
                w += settings.lr * (m / (1 - 0.9 ** (step + 1))) / (np.sqrt(v / (1 - 0.999 ** (step + 1))) + 1e-8)
                drawn = int(logged.get("rollouts", per_step))
                line.update(_step_keys(logged, drawn // GROUP, costs))
                streak = 0 if logged["effective"] else streak + 1
                warn.write(empty_batch_line(step, drawn, streak) if streak else "")
                trainable.append(logged["is_trainable"])
                rollouts += logged.get("rollouts", per_step)
                running = RUNNING * running + (1 - RUNNING) * np.array([logged[c] for c in CELLS[:3]])
                if recipe.cost == "adaptive":
                    tp, fp, fn = running / (1 - RUNNING ** (step + 1))
                    costs = Costs(calibrated_fp(2 * tp / max(2 * tp + fp + fn, 1e-9), costs.fn), costs.fn)
            log.write(json.dumps(line) + "\n")
    tail = evals[-max(1, len(evals) // TAIL) :]
    last = {key: float(np.mean([e[key] for e in tail])) for key in evals[-1] if key != "step"}
    return {
        "recipe": recipe.name,
        "policy_class": data.policy_class,
        "split": data.split,
        "seed": seed,
        "first": evals[0],
        "last": last | {"from_step": tail[0]["step"]},
        "is_trainable": float(np.mean(trainable)) if trainable else None,
        "end_fp_cost": costs.fp,
        "progress": progress,
        "rollouts": rollouts,
        "group": recipe.group,
        "passes": one_pass.passes if one_pass is not None else None,
        "tasks_drawn": one_pass.at + (one_pass.passes - 1) * len(tasks) if one_pass is not None else None,
        "task_pool": len(tasks),
    }


def task_mix(data: Data, tasks: list[int], negative_share: float | None, seed: int) -> list[int]:
    """``tasks`` with NO-RELATION candidates sampled (seeded) to ``negative_share`` of the mix, every gold pair kept, in
    their order; all of ``tasks`` when the share is None or needs more NO-RELATION candidates than there are."""
    if negative_share is None:
        return tasks
    positive = [i for i in tasks if data.rows[i].gold]
    negative = [i for i in tasks if not data.rows[i].gold]
    want = round(negative_share / (1 - negative_share) * len(positive))
    if want >= len(negative):
        return tasks
    kept = set(np.random.default_rng(seed).choice(negative, size=want, replace=False).tolist())
    return [i for i in tasks if data.rows[i].gold or i in kept]


def _step_keys(logged: dict[str, Any], groups: int, costs: Costs) -> dict[str, Any]:
    """A training step's keys in prime-rl's two scopes (``scoped_means``): ``all`` (``ALL``) over every rollout,
    ``effective`` (``AGENT``) over the groups shipped, none for an empty batch; the sandbox's diagnostics
    (zero-advantage shares, rollouts generated, the cost in effect) and ``progress/tasks`` (the groups drawn, as
    prime-rl counts them) go with ``all``, which the sandbox logs at every step, an empty one too (prime-rl logs
    nothing for an empty batch; ``empty_batch_line``)."""
    keys: dict[str, Any] = {"progress/tasks": groups}
    for scope, values in ((ALL, logged), (AGENT, logged["effective"])):
        if not values:
            continue
        keys |= {f"{scope}/reward/mean": values["reward"], f"{scope}/is_trainable/mean": values["is_trainable"]}
        keys[f"{scope}/rewards/accuracy/mean"] = values["correct"]
        keys[f"{scope}/rewards/utility/mean"] = values["utility"]
        keys |= {f"{scope}/metrics/{name}/mean": values[name] for name in CELLS}
        if "is_admitted" in values:
            keys[f"{scope}/is_admitted/mean"] = values["is_admitted"]
    keys |= {f"{ALL}/{k}/mean": value for k, value in logged.items() if k.startswith("zero_advantage/")}
    if "is_admitted" in logged:
        keys[f"{ALL}/rollouts_generated"] = logged["rollouts"]
    keys[f"{ALL}/metrics/fp_cost/mean"] = costs.fp
    return keys


def _eval_keys(evaluation: dict[str, Any]) -> dict[str, Any]:
    """An evaluation's keys in prime-rl's two eval scopes: ``all`` rollouts and ``effective`` (those without an
    error): the same numbers, as the sandbox's rollouts never fail."""
    scored = {key: value for key, value in evaluation.items() if key.startswith(EVAL)}
    return scored | {key.replace(EVAL, EVAL.replace("/effective/", "/all/"), 1): v for key, v in scored.items()}


def empty_batch_line(step: int, rollouts: int, streak: int) -> str:
    """prime-rl 559b447's warning for an empty batch (``orchestrator.py`` 641-646), which the sandbox writes to
    ``orchestrator.log`` beside its ``metrics.jsonl``; ``drugprot curves`` counts it. The sandbox runs on where
    prime-rl stops at ten in a row."""
    return (
        f"WARNING Step {step}: empty train batch after {rollouts} finalized episodes (consecutive empty batches: "
        f"{streak}/10)\n"
    )


def run_unit(
    documents: Sequence[Document],
    recipes: Sequence[Recipe],
    policy_class: str,
    split: int,
    settings: Settings,
    out: Path,
    corpus: Corpus | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every recipe on one split for one policy class (one warm start, one calibration): the runs and the
    calibration record."""
    with single_thread():
        corpus = corpus or Corpus.of(documents, [policy_class])
        default = Costs()
        data = prepare(documents, split, policy_class, corpus)
        w0, tau = warm_start(data)
        f0, fp0, fstar, fp_star = step0_cost(corpus, data, default)
        fixed = {"default": default.fp, "calibrated": fp0, "adaptive": fp0, "fstar": fp_star}
        probe = None
        if any(r.cost == "probe" for r in recipes):
            probe = probe_fstar(data, split)
            fixed["probe"] = calibrated_fp(probe["f1"], default.fn)
        results = []
        for recipe in recipes:
            costs = Costs(fixed[recipe.cost], default.fn)
            results.append(train(data, w0, recipe, split, settings, out / policy_class / f"{recipe.name}-split{split}",
                                 costs))  # fmt: skip
    record = {"policy_class": policy_class, "split": split, "temperature": tau, "step0_f1_train_folds": f0,
              "fp_calibrated": fp0, "fstar_train_folds": fstar, "fp_fstar": fp_star}  # fmt: skip
    if probe is not None:
        record |= {"fstar_probe": probe["f1"], "fp_probe": fixed["probe"], "probe_pairs": probe["pairs"],
                   "fstar_probe_width": probe["width"]}  # fmt: skip
    return results, record


def probe_fstar(data: Data, seed: int, pairs: int = PROBE_PAIRS) -> dict[str, Any]:
    """The shipped F* estimator on a step-0 probe: whole train abstracts in a seeded order until ``pairs`` candidate
    pairs (the tasks of ``negatives="all"``; at most half the train abstracts, for a small data file), ``GROUP``
    sampled answers each (N offered) of a warm start fit on the other train abstracts (the probed model has not seen
    the probed abstracts, as Trinity-Mini has not), their vote-share cells (``drugprot.modes.pair.summary.vote_cells``'
    rule) through ``drugprot.evaluation.fstar.f_star``, with the width of its 95% interval over abstracts (1,000
    resamples, as the report)."""
    by_pmid = data.candidates(data.train)
    rng = np.random.default_rng(30_000 + seed)
    probed: list[str] = []
    chosen: list[int] = []
    for pmid in rng.permutation(sorted(by_pmid)).tolist():
        if len(chosen) >= pairs or len(probed) >= len(by_pmid) // 2:  # the other half at least fits the probed model
            break
        probed.append(pmid)
        chosen += by_pmid[pmid]
    rest = [d for d in data.train if d.pmid not in set(probed)]
    w, _ = warm_start(Data(rest, data.test, data.rows, data.x, data.index, data.split, data.policy_class))
    p = probabilities(w, data.x[chosen], True)
    actions = sample(np.repeat(p[:, None], GROUP, axis=1), rng)  # (pairs, GROUP)
    stated: dict[str, list[tuple[float, bool]]] = {pmid: [] for pmid in probed}
    gold = dict.fromkeys(probed, 0)
    for i, row_actions in zip(chosen, actions, strict=True):
        row = data.rows[i]
        votes = Counter(ACTIONS[a] for a in row_actions if a != N_INDEX)
        pmid = row.document.pmid
        stated[pmid].extend((share, label in row.gold) for label, share in shares(votes, GROUP).items())
        gold[pmid] += len(row.gold)
    cells = {pmid: Abstract(tuple(stated[pmid]), gold[pmid]) for pmid in probed}
    star = f_star(cells, rollouts_per_task=GROUP, resamples=1000, seed=0)  # the report's default bootstrap
    return {"f1": star["f1"], "pairs": len(chosen), "width": star["high"] - star["low"]}


def run_all(
    documents: Sequence[Document],
    recipes: Sequence[Recipe],
    classes: Sequence[str],
    splits: int,
    settings: Settings,
    out: Path,
    jobs: int = 1,
) -> dict[str, Any]:
    """Every (policy class, split, recipe) run, ``jobs`` (class, split) units at a time; the same results, in the
    same order, for any ``jobs``."""
    units = [(c, s) for c in classes for s in range(splits)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done = list(pool.map(run_unit, *zip(*[(documents, recipes, c, s, settings, out) for c, s in units],
                                                 strict=True)))  # fmt: skip
    else:
        corpus = Corpus.of(documents, classes)
        done = [run_unit(documents, recipes, c, s, settings, out, corpus) for c, s in units]
    return {"runs": [r for runs, _ in done for r in runs], "calibration": [cal for _, cal in done]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.rl_sim", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="a data file or TSV directory drugprot loads")
    parser.add_argument("--out", required=True, help="directory for one prime-rl style run directory per run")
    parser.add_argument(
        "--splits", type=positive_int, default=10, help="PMID splits (the run's seed is its split number)"
    )
    parser.add_argument("--steps", type=positive_int, help=f"default {Settings.steps} (--one-pass: the recipe's)")
    parser.add_argument("--eval-every", type=positive_int, help=f"default {Settings.eval_every} (--one-pass: 5)")
    parser.add_argument(
        "--recipes", nargs="+", choices=list(BY_NAME), help="default: the standard recipes (--one-pass: its own)"
    )
    parser.add_argument(
        "--one-pass",
        action="store_true",
        help="the recipe's regime (configs/drugprot.toml): its steps and batch, each step's tasks not yet drawn; "
        "--steps/--eval-every override",
    )
    parser.add_argument("--classes", nargs="+", choices=POLICY_CLASSES, default=list(POLICY_CLASSES))
    parser.add_argument(
        "--jobs", type=positive_int, default=1, help="processes, one (class, split) each (same results)"
    )
    parser.add_argument(
        "--smoke", "--quick", action="store_true", help="4 steps, one split, cues, every recipe: a test-sized run"
    )
    add_overwrite(parser)
    args = parser.parse_args(argv)
    base = one_pass_settings() if args.one_pass else Settings()
    if args.smoke:
        settings, splits, classes = replace(base, steps=4, eval_every=2), 1, ["cues"]
    else:
        steps, every = args.steps or base.steps, args.eval_every or base.eval_every
        settings, splits, classes = replace(base, steps=steps, eval_every=every), args.splits, args.classes
    names = args.recipes or (ONE_PASS_RECIPES if args.one_pass else DEFAULT_RECIPES)
    if args.smoke:
        recipes = [r for r in RECIPES if not (args.one_pass and r.sampler == "pool")]
    else:
        recipes = [BY_NAME[name] for name in names]
    if args.one_pass and any(r.sampler == "pool" for r in recipes):
        parser.error("--one-pass runs the uniform sampler: the pool recipes revisit tasks (leave them out)")
    what = "the RL sandbox"
    documents = load_data(parser.prog, args.data_path, min_abstracts=2, relations=True, what=what)
    check_held_out(parser.prog, args.data_path, documents, what=what)
    check_splits(parser.prog, splits, documents, what=what)  # before the folder list: one name per split
    runs = [f"{c}/{recipe.name}-split{split}" for c in classes for split in range(splits) for recipe in recipes]
    check_run_folders(parser.prog, "--out", args.out, runs, inputs=[args.data_path], overwrite=args.overwrite)
    out = Path(args.out)
    with too_small(parser.prog, what):
        result = run_all(documents, recipes, classes, splits, settings, out, args.jobs)
    cpu = sum(
        u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )
    report = sim_report.summarise(result["runs"], result["calibration"], recipes)
    print(sim_report.format_report(report))
    print(f"costs: default fp={Costs().fp:g} fn={Costs().fn:g}; {cpu:.1f} CPU seconds")
    summary = {"settings": vars(settings) | {"splits": splits, "classes": classes}, "cpu_seconds": cpu}
    out.mkdir(parents=True, exist_ok=True)  # checked writable before any work (check_run_folders)
    write_json(summary | report | result, str(out / "summary.json"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
