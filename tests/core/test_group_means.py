"""Groups that cannot teach leave prime-rl's batch: every reward a group can tie on has an exact float32 mean.

prime-rl ``559b447`` (``src/prime_rl/orchestrator/algo/grpo.py`` lines 27 and 30) computes a group's advantages as
``rewards - rewards.mean()`` in torch float32, and its ``filter_zero_advantages`` drops a token only when its
advantage is exactly 0.0 (``src/prime_rl/orchestrator/train_sink.py`` line 50). The property checked here, with
exact rationals, holds whatever the order torch sums in: the reward is a float32 and so is every partial sum
``k · reward`` (k ≤ 256), so every addition is exact and ``n · reward / n`` is the reward.
``tests/tools/adapters/test_prime_rl_advantages.py`` runs prime-rl's own two lines in torch over the same values.
"""

from __future__ import annotations

import math
import struct

import pytest

from drugprot.core.rewards import GROUP_SIZES, REWARD_GRID, exact_group_means, on_grid
from tests.reward_values import OLD_REWARDS, SETTINGS, extraction_rewards, pair_rewards, reward_of


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (round half to even), as ``torch.tensor(..., float32)`` does."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def exact_by_enumeration(reward: float, sizes: int = GROUP_SIZES) -> bool:
    """The property by brute force: the reward is a float32, and so is the reward times every k up to ``sizes``
    (each product is exact in float64: 24 significant bits times 9)."""
    r32 = float32(reward)
    return r32 == reward and all(abs(k * r32) < 2.0**128 and float32(k * r32) == k * r32 for k in range(1, sizes + 1))


def sequential_float32_advantage(reward: float, n: int) -> float:
    """prime-rl's ``rewards - rewards.mean()`` for a group of ``n`` equal rewards, summed left to right in float32
    (one summation order of the many torch may use: enough to show a leak)."""
    r = float32(reward)
    total = 0.0
    for _ in range(n):
        total = float32(total + r)
    return float32(r - float32(total / n))


def test_today_s_rewards_leak() -> None:
    """The default utility's rewards before the grid (format weight 0.1): a group of 8 right N answers on a
    NO-RELATION pair (0.1 each) gets advantages of -7.45e-9, not 0, and trains."""
    for reward in OLD_REWARDS:
        assert not exact_group_means(reward), reward
        assert not exact_by_enumeration(reward), reward
    assert sequential_float32_advantage(0.1, 8) == pytest.approx(-7.450580596923828e-09, abs=0)
    assert {reward: any(sequential_float32_advantage(reward, n) for n in range(1, 257)) for reward in OLD_REWARDS} == {
        1.1: True, 0.1: True, -0.4: True, -0.9: True, -1.4: True
    }  # fmt: skip


def test_the_new_rewards_of_the_same_replies_are_exact() -> None:
    """The same five replies under scorer version 4 (format weight 1/8): every group mean is exact."""
    new = (1.125, 0.125, -0.375, -0.875, -1.375)
    for reward in new:
        assert exact_group_means(reward) and exact_by_enumeration(reward)
        assert all(sequential_float32_advantage(reward, n) == 0.0 for n in range(1, 257))


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_pair_reward_has_exact_group_means(setting: str) -> None:
    """Every reward pair mode can give (each reply kind on each gold, with and without NO-RELATION), under the
    default, both presets, costs off the grid, two ``f1_target`` calibrations and weights off the grid."""
    rewards = pair_rewards(reward_of(setting))
    assert len(rewards) >= 4
    for reward in rewards:
        assert (reward * REWARD_GRID**2).is_integer(), reward  # a multiple of 1/4096: weight x term, both on 1/64
        assert exact_group_means(reward) and exact_by_enumeration(reward), reward


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s != "weights"])
def test_every_extraction_reward_of_the_presets_has_exact_group_means(setting: str) -> None:
    """1,000 seeded random extraction outcomes (each count 0 to 60) under every setting with the presets' weights
    (1, 0 and 1/8): every reward is a multiple of 1/64 below 1,024 in magnitude, so exact."""
    rewards = extraction_rewards(reward_of(setting), count=1000)
    for reward in rewards:
        assert (reward * REWARD_GRID).is_integer() and abs(reward) < 1024, reward
        assert exact_group_means(reward) and exact_by_enumeration(reward), reward


def test_weights_off_the_eighths_are_exact_below_16() -> None:
    """Weights that are not multiples of 1/8 (0.7 -> 45/64) make the reward a multiple of 1/4096: its group means
    are exact up to a magnitude of 16 (an odd numerator below 2^24 / 255), which covers every pair-mode reward
    above; a larger extraction reward may not be, and ``exact_group_means`` says which."""
    rewards = extraction_rewards(reward_of("weights"))
    small = [r for r in rewards if abs(r) <= 16]
    assert len(small) > 100
    assert all(exact_group_means(r) and exact_by_enumeration(r) for r in small)
    large = [r for r in rewards if not exact_group_means(r)]
    assert large and min(abs(r) for r in large) > 16
    assert all(not exact_by_enumeration(r) for r in large[:50])  # the two checks agree


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.1, 0.09375),
        (0.35, 0.34375),
        (0.6 / 1.7, 23 / 64),
        (0.5, 0.5),
        (1 / 128, 0.0),
        (3 / 128, 1 / 32),
        (-0.2, -13 / 64),
    ],  # fmt: skip
)
def test_on_grid_moves_a_value_by_at_most_1_128(value: float, expected: float) -> None:
    assert on_grid(value) == expected and abs(on_grid(value) - value) <= 1 / 128


def test_exact_group_means_agrees_with_enumeration() -> None:
    """The closed form (odd numerator times the largest odd group size below 2^24) against brute force."""
    values = [k / 4096 for k in range(-70000, 70000, 331)] + [0.1, 1e-30, 3.0 * 2**100, 65793.0, 65795.0, 2.0**-140]
    for value in values:
        assert exact_group_means(value) == exact_by_enumeration(value), value


def test_multiples_of_1_q_are_exact_up_to_2_16_over_q() -> None:
    """The bound the config-time check uses (``drugprot.core.exactness.EXACT_NUMERATOR``): every ``m / Q`` with
    ``|m| <= 2^16`` has exact group means for every group of up to 256 (its odd part times 255 is below 2^24), for
    every grid ``Q`` the knobs can give (1/64 weights times 1/64 costs: up to 4096); just past the bound, one fails.
    At ``Q`` 4096 that is ``|reward| <= 16`` (weights off the eighths), at 64 ``|reward| <= 1024``."""
    from drugprot.core.exactness import EXACT_NUMERATOR

    assert EXACT_NUMERATOR == 2**16
    for q in (1, 8, 64, 512, 4096):
        assert all(exact_group_means(m / q) for m in range(-EXACT_NUMERATOR, EXACT_NUMERATOR + 1)), q
        assert not exact_group_means(65795 / q), q  # odd, and 65795 x 255 > 2^24
    sample = range(-EXACT_NUMERATOR, EXACT_NUMERATOR + 1, 997)
    assert all(exact_by_enumeration(m / 4096) for m in sample)


@pytest.mark.parametrize("reward", [math.nan, math.inf, -math.inf])
def test_a_non_finite_reward_has_no_exact_group_mean(reward: float) -> None:
    """The documented answer for any value, not an exception: prime-rl's ``r - mean`` of such a group is NaN (inf -
    inf, or NaN itself), never 0.0, so the group is never dropped."""
    assert exact_group_means(reward) is False
    assert math.isnan(sequential_float32_advantage(reward, 8))


def test_pair_rewards_at_costs_up_to_4_stay_within_16_only_with_weights_up_to_1() -> None:
    """docs/reward.md's claim, every pair-mode reply on golds of up to 3 types: with weights from 0 to 1 (on and off
    the eighths) and both costs 4, |reward| <= 16; a weight above 1 passes it."""
    import itertools

    from drugprot.core.rewards import Costs, Reward, Weights

    for accuracy, utility, fmt in itertools.product((0.0, 45 / 64, 1.0), repeat=3):
        reward = Reward("utility", Costs(4.0, 4.0), Weights(accuracy=accuracy, utility=utility, format=fmt))
        assert max(abs(r) for r in pair_rewards(reward)) <= 16, (accuracy, utility, fmt)
    heavy = Reward("utility", Costs(4.0, 4.0), Weights(accuracy=0.0, utility=147 / 64, format=0.125))
    assert max(abs(r) for r in pair_rewards(heavy)) == 36.625  # a wrong type on 3 golds: 147/64 x -(4 + 3 x 4) + 1/8


def test_the_docs_float32_advantage_of_a_0_1_group_is_prime_rl_s() -> None:
    """docs/evidence.md gives a group of 8 rewards of 0.1 advantages of −7.45e-9 (float32, as prime-rl computes
    them), not the float64 ±1e-17."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "evidence.md").read_text(encoding="utf-8")
    advantage = sequential_float32_advantage(0.1, 8)
    assert f"{advantage:.3g}" == "-7.45e-09" and "advantages are −7.45e-9" in page
    assert f"{float32(0.1) - advantage:.11f}" == "0.10000000894" and "average to 0.10000000894" in page
    assert "±1e-17" not in page
