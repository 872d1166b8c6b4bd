"""prime-rl's own advantage computation, in torch float32, on every reward a group of drugprot rollouts can tie on.

At prime-rl ``559b447``, ``src/prime_rl/orchestrator/algo/grpo.py`` ``GRPOAlgorithm.score_group``::

    27        rewards = torch.tensor([trace.reward for trace in traces], dtype=torch.float32)
    30            advantages = rewards - rewards.mean()

and ``src/prime_rl/orchestrator/train_sink.py`` ``_prune_zero_advantages`` line 50 drops a token only when
``advantage == 0.0`` (``filter_zero_advantages``, on by default). Where prime-rl is installed its source is checked
to still hold these two lines; the tests run them (this stage has torch; ``tests/core/test_group_means.py`` proves
the same property with exact rationals where torch is absent).
"""

from __future__ import annotations

import inspect

import pytest

from drugprot.core.rewards import GROUP_SIZES
from tests.reward_values import OLD_REWARDS, SETTINGS, extraction_rewards, pair_rewards, reward_of

PRIME_RL_LINES = (
    "rewards = torch.tensor([trace.reward for trace in traces], dtype=torch.float32)",
    "advantages = rewards - rewards.mean()",
)


def advantages(rewards: list[float]) -> list[float]:
    """prime-rl ``559b447`` ``grpo.py`` lines 27 and 30 (no length penalty: the recipe sets none). torch is imported
    here, not at collection, so every interpreter collects the same tests (scripts/suite_figures.py counts them)."""
    torch = pytest.importorskip("torch")
    tensor = torch.tensor(rewards, dtype=torch.float32)
    return (tensor - tensor.mean()).tolist()


def leaks(reward: float) -> list[int]:
    """The group sizes (1..256) at which a group of equal ``reward`` gets a non-zero advantage."""
    return [n for n in range(1, GROUP_SIZES + 1) if any(a != 0.0 for a in advantages([reward] * n))]


def test_the_lines_are_prime_rl_s() -> None:
    """Where prime-rl is importable, its ``score_group`` still computes the advantage with these two lines."""
    grpo = pytest.importorskip("prime_rl.orchestrator.algo.grpo")
    source = inspect.getsource(grpo.GRPOAlgorithm.score_group)
    assert all(line in source for line in PRIME_RL_LINES)


def test_today_s_rewards_leak_in_torch() -> None:
    """The default utility's single-answer rewards before the grid (format weight 0.1): all five leak at some
    group size; 8 rewards of 0.1 (the right N on a NO-RELATION pair) get advantages of about -7.45e-9."""
    for reward in OLD_REWARDS:
        assert leaks(reward), reward
    assert advantages([0.1] * 8)[0] != 0.0


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_tied_pair_group_gets_exactly_zero(setting: str) -> None:
    rewards = sorted(pair_rewards(reward_of(setting)))
    assert {reward: leaks(reward) for reward in rewards} == dict.fromkeys(rewards, [])


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s != "weights"])
def test_every_tied_extraction_group_gets_exactly_zero(setting: str) -> None:
    """Seeded random extraction outcomes (each count 0 to 60) under the presets' weights."""
    rewards = sorted(extraction_rewards(reward_of(setting), count=300))
    assert {reward: leaks(reward) for reward in rewards} == dict.fromkeys(rewards, [])


def test_a_mixed_group_keeps_its_signal() -> None:
    """Exactness does not zero a group that can teach: one right reply among seven wrong ones."""
    got = advantages([1.125] + [-1.375] * 7)
    assert got[0] == 2.1875 and got[1:] == [-0.3125] * 7
