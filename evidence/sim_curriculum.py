"""prime-rl's curriculum in the GRPO sandbox: a pair step that draws its prompts from a
``evidence.curriculum.PoolSampler`` and / or keeps generating until its batch is full of groups the
``advantage_range`` gate admits, as prime-rl's orchestrator does
(rejected groups cost their generation and teach nothing)."""

from __future__ import annotations

from typing import Any

import numpy as np

from drugprot.core.rewards import Costs, Reward, Weights
from evidence.curriculum import PoolSampler, admits, utility_pools
from evidence.sim_data import Data, _trainable, probabilities, sample, scoped_means

GROUP = 8
MAX_GENERATION = 8
"""A gated step stops after generating this many batches' worth of groups, admitted or not."""
CELLS = ("official_tp", "official_fp", "official_fn", "correct")


def new_sampler(recipe: Any, tasks: list[int], seed: int) -> PoolSampler | None:
    """The recipe's task sampler: None for the sandbox's standard (uniform draws without replacement per step)."""
    return PoolSampler(tasks, utility_pools(recipe.pool_weight), seed) if recipe.sampler == "pool" else None


def curriculum_pair_step(
    w: np.ndarray,
    data: Data,
    recipe: Any,
    costs: Costs,
    tasks: list[int],
    settings: Any,
    rng: np.random.Generator,
    sampler: PoolSampler | None,
) -> tuple[np.ndarray, dict[str, float]]:
    """One GRPO step: draw groups (from ``sampler`` or uniformly), keep the admitted ones until the batch is full (or
    ``MAX_GENERATION`` batches were generated); the gradient over the admitted groups, logged means over all."""
    with_n = recipe.negatives != 0
    table = data.table(with_n, reward=Reward(recipe.reward, costs))
    want = min(settings.pair_prompts, len(tasks))
    rows: list[np.ndarray] = []
    acts: list[np.ndarray] = []
    keep: list[np.ndarray] = []
    admitted = generated = 0
    while admitted < want and generated < MAX_GENERATION * want:
        need = want - admitted
        if sampler is not None:
            batch = np.array([next(sampler) for _ in range(need)])
        else:
            batch = rng.choice(tasks, size=need, replace=False)
        p = probabilities(w, data.x[batch], with_n)
        actions = sample(np.repeat(p[:, None], GROUP, axis=1), rng)
        rewards = table[data.key[batch][:, None], actions]
        ok = np.ones(len(batch), dtype=bool)
        for k, row in enumerate(batch):
            if sampler is not None:
                sampler.observe(int(row), rewards[k].tolist())
            if recipe.gate:
                ok[k] = admits(rewards[k].tolist(), -1e-9, 1e-9)  # float noise of r - mean counts as zero
        rows.append(batch)
        acts.append(actions)
        keep.append(ok)
        admitted += int(ok.sum())
        generated += len(batch)
    batch, actions, ok = np.concatenate(rows), np.concatenate(acts), np.concatenate(keep)
    keys = data.key[batch][:, None]
    rewards = table[keys, actions]
    x, p = data.x[batch[ok]], probabilities(w, data.x[batch[ok]], with_n)
    advantages = rewards[ok] - rewards[ok].mean(axis=1, keepdims=True)
    onehot = np.eye(p.shape[1])[actions[ok]]
    grad = np.einsum("kg,kga,kf->af", advantages, onehot - p[:, None], x) / max(advantages.size, 1)
    arrays = {name: data.table(with_n, cell=name)[keys, actions] for name in CELLS}
    only = Reward("utility", costs, Weights(accuracy=0.0, utility=1.0, format=0.0))
    arrays["utility"] = data.table(with_n, reward=only)[keys, actions]
    trainable = _trainable(rewards)
    positive = np.array([bool(data.rows[i].gold) for i in batch])
    logged = scoped_means(arrays | {"reward": rewards}, trainable, kept=ok & trainable)  # shipped: admitted, trainable
    logged |= {"is_admitted": float(ok.mean()), "rollouts": float(generated * GROUP)}
    if logged["effective"]:
        logged["effective"]["is_admitted"] = 1.0
    for kind, mask in (("positive", positive), ("negative", ~positive)):
        if mask.any():
            logged[f"zero_advantage/{kind}"] = float(1 - trainable[mask].mean())
    return grad, logged
