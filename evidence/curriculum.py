"""prime-rl's curriculum at the pinned commit, modelled for the GRPO sandbox (``evidence.rl_sim``).

prime-rl (``src/prime_rl/orchestrator/curriculum/``, configs in ``prime_rl.configs.orchestrator``) gives each train
source a task sampler and admission gates:

* ``difficulty_pool`` (``DifficultyPoolSampler``): each task's weight is the ``weight`` of the pool its last observed
  group mean reward falls in (pools ordered by ``threshold``, each the inclusive maximum of its pool, the last one
  the catch-all); a task never observed has weight 1; every draw is ``random.Random(seed).choices(tasks,
  weights=..., k=1)`` over the whole taskset (with replacement); ``observe`` records the mean reward of a finished
  group. Its default pools (0.25 / 0.75 / 1.0) assume rewards in [0, 1].
* ``advantage_range`` (``AdvRangeGate``): a finished group trains only if not all of its advantages lie in
  ``[reject_min, reject_max]`` (default ``[0, 0]``: groups with no learning signal are dropped); the orchestrator
  keeps generating until the batch is full of admitted rollouts, so rejected groups still cost their generation.

``PoolSampler`` is a line-for-line port of ``DifficultyPoolSampler``'s choice rule on the same ``random.Random``
stream (``tests/test_evidence_curriculum.py`` feeds one stream of group rewards to both where prime-rl imports), and
``admits`` is ``AdvRangeGate.admit`` on a group's rewards (advantage = reward − group mean, prime-rl's default).
This module needs only the standard library.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Final

from drugprot.core.rewards import DEFAULT_WEIGHTS

Pools = Mapping[str, tuple[float, float]]
"""name -> (threshold: inclusive maximum group mean reward, weight)."""

PRIME_RL_DEFAULT_POOLS: Final[Pools] = {"hard": (0.25, 0.2), "normal": (0.75, 1.0), "easy": (1.0, 0.2)}
"""prime-rl's ``default_difficulty_pools()`` at the pin: for rewards in [0, 1]."""


def utility_pools(weight: float) -> dict[str, tuple[float, float]]:
    """Pools on the default pair reward's own scale (utility 1, fp 0.5, fn 1, + 1/8 format), where a group whose 8
    rewards are equal has one of the single-answer rewards as its mean: 1.125 (a gold pair answered right), 0.125 (a
    NO-RELATION pair answered N), -0.375 (a type on a NO-RELATION pair), -0.875 (N on a gold pair), -1.375 (a wrong
    type on a gold pair); the format weight is ``DEFAULT_WEIGHTS.format``. Pools at and below -0.875 (a gold pair the
    policy misses in every rollout), exactly 0.125 and exactly 1.125 (solved) get ``weight``; the groups in between,
    which can disagree, weight 1."""
    fmt = DEFAULT_WEIGHTS.format
    return {
        "missed": (-1.0 + fmt, weight),
        "learning-negative": (fmt - 1e-4, 1.0),
        "solved-negative": (fmt, weight),
        "learning-positive": (1.0 + fmt - 1e-4, 1.0),
        "solved-positive": (1.0 + fmt, weight),
    }


class PoolSampler:
    """``DifficultyPoolSampler``'s choice rule over task keys (see the module docstring)."""

    def __init__(self, keys: Sequence[int], pools: Pools, seed: int = 42) -> None:
        if len(set(keys)) != len(keys):
            raise ValueError("task keys must be unique")
        self.keys = tuple(keys)
        self.rng = random.Random(seed)
        self.pools = dict(pools)
        self.ordered = sorted(self.pools.items(), key=lambda item: item[1][0])
        self.task_rewards: dict[int, float] = {}
        self._cumulative: list[float] | None = None

    def task_pool(self, key: int) -> str | None:
        score = self.task_rewards.get(key)
        if score is None:
            return None
        for name, (threshold, _) in self.ordered:
            if score <= threshold:
                return name
        return self.ordered[-1][0]

    def weights(self) -> list[float]:
        return [1.0 if (pool := self.task_pool(k)) is None else self.pools[pool][1] for k in self.keys]

    def __next__(self) -> int:
        if self._cumulative is None:  # random.choices(weights=w) is choices(cum_weights=accumulate(w)): same draws
            self._cumulative = list(accumulate(self.weights()))
        if not self._cumulative[-1]:
            raise RuntimeError("no task in a pool with positive weight")
        return self.rng.choices(self.keys, cum_weights=self._cumulative, k=1)[0]

    def observe(self, key: int, rewards: Sequence[float]) -> None:
        if rewards:
            self.task_rewards[key] = sum(rewards) / len(rewards)
            self._cumulative = None


def admits(rewards: Sequence[float], reject_min: float = 0.0, reject_max: float = 0.0) -> bool:
    """``AdvRangeGate.admit`` on one group: False when every advantage (reward − group mean) lies in the range."""
    if not rewards:
        return True
    mean = sum(rewards) / len(rewards)
    return not all(reject_min <= r - mean <= reject_max for r in rewards)


def prime_rl_draws(pools: Pools, seed: int, stream: Sequence[Sequence[float]], draws_per_group: int = 1) -> list[int]:
    """The task indices prime-rl's own ``DifficultyPoolSampler`` draws over ``len(stream)`` rounds: each round draws
    ``draws_per_group`` tasks, then observes, for the last one drawn, a group whose rewards are that round's entry of
    ``stream``. Raises ``ImportError`` where prime-rl is not installed."""
    from types import SimpleNamespace

    from prime_rl.configs.orchestrator import DifficultyPoolConfig, DifficultyPoolSamplerConfig
    from prime_rl.orchestrator.curriculum import DifficultyPoolSampler

    config = DifficultyPoolSamplerConfig(
        pools={name: DifficultyPoolConfig(threshold=t, weight=w) for name, (t, w) in pools.items()}, seed=seed
    )
    tasks = [SimpleNamespace(key=str(i)) for i in range(_TASKS)]
    sampler = DifficultyPoolSampler(config, tasks)
    return _rounds(lambda: int(next(sampler).key), lambda key, rewards: sampler.observe(_group(key, rewards)), stream,
                   draws_per_group)  # fmt: skip


def sandbox_draws(pools: Pools, seed: int, stream: Sequence[Sequence[float]], draws_per_group: int = 1) -> list[int]:
    """``prime_rl_draws`` with ``PoolSampler``."""
    sampler = PoolSampler(range(_TASKS), pools, seed)
    return _rounds(lambda: next(sampler), sampler.observe, stream, draws_per_group)


_TASKS = 50


def _rounds(draw, observe, stream: Sequence[Sequence[float]], per: int) -> list[int]:  # noqa: ANN001
    drawn: list[int] = []
    for rewards in stream:
        drawn += [draw() for _ in range(per)]
        observe(drawn[-1], list(rewards))
    return drawn


def _group(key: int, rewards: Sequence[float]) -> list[object]:
    from types import SimpleNamespace

    task = SimpleNamespace(key=str(key))
    trace = [SimpleNamespace(reward=r, has_error=False, agent=SimpleNamespace(trainable=True)) for r in rewards]
    return [SimpleNamespace(task=task, traces=[t]) for t in trace]
