"""Every reward a group of rollouts can tie on, for the tests of prime-rl's zero-advantage filter.

prime-rl ``559b447`` computes a group's advantages in torch float32 (``src/prime_rl/orchestrator/algo/grpo.py``
lines 27 and 30)::

    rewards = torch.tensor([trace.reward for trace in traces], dtype=torch.float32)
    advantages = rewards - rewards.mean()

and ``filter_zero_advantages`` (on by default, ``packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py``
line 270) drops a token only when its advantage is exactly ``0.0`` (``src/prime_rl/orchestrator/train_sink.py``
line 50: ``if trainable and advantage == 0.0 and weight != 0.0``). So a group of equal rewards leaves the batch
only when the float32 mean of the group is exactly its reward.

``pair_rewards`` scores every pair-mode reply kind against every kind of gold through the real scorer;
``extraction_rewards`` draws seeded random extraction outcomes. ``SETTINGS`` are the reward knobs they are scored
under: the default, both presets, costs off the grid, two ``f1_target`` calibrations and weights off the grid.
``OLD_REWARDS`` are the default utility's rewards before scorer version 4 (format weight 0.1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from drugprot.core.options import TaskOptions
from drugprot.core.rewards import Reward
from drugprot.core.scoring import score_reply

SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "accuracy": {"reward": "accuracy"},
    "costs": {"fp_cost": 0.35, "fn_cost": 2.0},  # runs as 22/64 and 2
    "f1_target 0.3": {"f1_target": 0.3},  # derived 0.3529 runs as 23/64
    "f1_target 0.6, fn_cost 1.5": {"f1_target": 0.6, "fn_cost": 1.5},  # derived 1.0714 runs as 69/64
    "weights": {"reward": "accuracy", "utility_weight": 0.7, "format_weight": 0.2, "fp_cost": 0.1},
}
"""Reward knobs (``TaskOptions.from_knobs``) by name."""

OLD_REWARDS = (1.1, 0.1, -0.4, -0.9, -1.4)
"""The single-answer rewards of the default utility before the grid (utility + 0.1 format): a right type, N on a
NO-RELATION pair, a type on a NO-RELATION pair, N on a gold pair, a wrong type."""

T = "<think>The text says the chemical inhibits the enzyme.</think>"
REPLIES = (
    T + "\\boxed{E}",  # INHIBITOR (letter E)
    T + "\\boxed{K}",  # SUBSTRATE
    T + "\\boxed{A}",  # another type
    T + "\\boxed{N}",  # NO-RELATION
    T + "\\boxed{E} or \\boxed{K}",  # two answers: no answer, format 0
    T + "E",  # no boxed answer
    "<think>unfinished",  # reasoning never closed
    "\\boxed{E}",  # an answer without reasoning
)
GOLDS = (
    ("INHIBITOR",),
    ("INHIBITOR", "SUBSTRATE"),
    ("INHIBITOR", "SUBSTRATE", "AGONIST"),
    ("NO-RELATION",),
)


def reward_of(setting: str) -> Reward:
    return TaskOptions.from_knobs(SETTINGS[setting]).make_reward()


def pair_rewards(reward: Reward) -> set[float]:
    """Every reward ``reward`` gives a pair-mode reply: each reply kind on each gold, with and without the
    NO-RELATION option."""
    values = set()
    for gold in GOLDS:
        for with_no_relation in (False, True):
            if gold == ("NO-RELATION",) and not with_no_relation:
                continue
            for reply in REPLIES:
                values.add(reward.value(score_reply(reply, None, gold, with_no_relation=with_no_relation)))
    return values


@dataclass(frozen=True)
class Outcome:
    """An extraction-mode scored reply (``rewards.Scored``): its official cells and the per-document F1."""

    tp: int
    fp: int
    fn: int
    format: float
    unknown_id: int = 0

    @property
    def accuracy(self) -> float:
        cells = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / cells if cells else 1.0


def extraction_rewards(reward: Reward, count: int = 2000, most: int = 60, seed: int = 0) -> set[float]:
    """The rewards of ``count`` seeded random extraction outcomes (each count from 0 to ``most``)."""
    rng = random.Random(seed)
    values = set()
    for _ in range(count):
        tp, fp, fn, unknown = (rng.randint(0, most) for _ in range(4))
        values.add(reward.value(Outcome(tp, fp, fn, float(rng.random() < 0.8), unknown)))
    return values
