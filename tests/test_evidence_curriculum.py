"""prime-rl's curriculum in the sandbox (``evidence.curriculum``, ``evidence.sim_curriculum``).

The pool sampler draws what prime-rl's own ``DifficultyPoolSampler`` draws on the same stream of group rewards (where
prime-rl imports; skipped otherwise), its pools sit on the default reward's own scale, the ``advantage_range`` gate
drops groups without a learning signal, and a gated step keeps generating until its batch is admitted.
"""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pytest

from drugprot.core.rewards import Reward
from evidence import curriculum, rl_sim, sim_curriculum
from evidence.shared import load, score_pair

FIXTURE = str(Path(__file__).parent / "fixtures" / "drugprot_fixture.jsonl")


def _stream(n: int = 300) -> list[list[float]]:
    r = random.Random(7)
    values = [1.1, -0.9, -1.4, 0.1, -0.4]
    return [[r.choice(values) for _ in range(8)] if r.random() < 0.5 else [r.choice(values)] * 8 for _ in range(n)]


@pytest.mark.skipif(importlib.util.find_spec("prime_rl") is None, reason="prime-rl is not installed in this venv")
@pytest.mark.parametrize("pools", [curriculum.utility_pools(0.1), curriculum.PRIME_RL_DEFAULT_POOLS])
def test_the_pool_sampler_draws_what_prime_rls_sampler_draws(pools: dict) -> None:
    stream = _stream()
    assert curriculum.sandbox_draws(pools, 3, stream, 2) == curriculum.prime_rl_draws(pools, 3, stream, 2)


def test_an_unseen_task_weighs_one_and_an_observed_one_its_pools_weight() -> None:
    sampler = curriculum.PoolSampler([0, 1, 2], {"low": (0.25, 0.2), "high": (1.0, 0.0)}, seed=0)
    sampler.observe(0, [0.25, 0.25])  # the threshold is the pool's inclusive maximum
    sampler.observe(1, [1.0, 2.0])  # above every threshold: the last pool
    assert [sampler.task_pool(k) for k in (0, 1, 2)] == ["low", "high", None]
    assert sampler.weights() == [0.2, 0.0, 1.0]
    assert {next(sampler) for _ in range(200)} == {0, 2}


def test_the_utility_pools_separate_solved_groups_on_the_rewards_own_scale() -> None:
    reward = Reward("utility")
    pools = curriculum.utility_pools(0.1)
    sampler = curriculum.PoolSampler(range(5), pools)
    answers = [("NO-RELATION", ("NO-RELATION",)), ("INHIBITOR", ("INHIBITOR",)), ("NO-RELATION", ("INHIBITOR",)),
               ("AGONIST", ("INHIBITOR",)), ("INHIBITOR", ("NO-RELATION",))]  # fmt: skip
    for key, (answer, gold) in enumerate(answers):
        sampler.observe(key, [reward.value(score_pair(answer, gold, with_no_relation=True))] * 8)
    assert [sampler.task_pool(k) for k in range(5)] == [
        "solved-negative",  # 0.1
        "solved-positive",  # 1.1
        "missed",  # -0.9
        "missed",  # -1.4
        "learning-negative",  # -0.4: a type on a NO-RELATION pair in every rollout
    ]
    sampler.observe(0, [0.1] * 7 + [-0.4])
    sampler.observe(1, [1.1] * 7 + [-0.9])
    assert [sampler.task_pool(k) for k in (0, 1)] == ["learning-negative", "learning-positive"]


def test_the_gate_drops_groups_whose_advantages_are_all_zero() -> None:
    assert curriculum.admits([1.0] * 8) is False
    # 8 x 0.1 sums to 0.7999999999999999: the naive advantages are +-1e-17, not 0, so the default [0, 0] range admits
    # the group; the sandbox rejects within 1e-9
    assert curriculum.admits([0.1] * 8) is True
    assert curriculum.admits([0.1] * 8, -1e-9, 1e-9) is False
    assert curriculum.admits([0.1] * 7 + [-0.4]) is True
    assert curriculum.admits([0.5, 0.7], reject_min=-0.1, reject_max=0.1) is False
    assert curriculum.admits([]) is True


def test_a_gated_step_keeps_generating_and_trains_only_on_admitted_groups() -> None:
    data = rl_sim.prepare(load(FIXTURE))
    settings = rl_sim.Settings(pair_prompts=4)
    tasks = data.tasks(data.train, "all")
    recipe = rl_sim.BY_NAME["pair-utility-gate"]
    always = np.zeros((14, data.x.shape[1]))
    always[4, 0] = 100.0  # INHIBITOR everywhere: every group's rewards are equal, none is admitted
    grad, logged = sim_curriculum.curriculum_pair_step(always, data, recipe, rl_sim.Costs(), tasks, settings,
                                                       np.random.default_rng(0), None)  # fmt: skip
    assert not grad.any()
    assert logged["is_admitted"] == 0.0
    assert logged["rollouts"] == sim_curriculum.MAX_GENERATION * 4 * 8
    grad, logged = sim_curriculum.curriculum_pair_step(np.zeros_like(always), data, recipe, rl_sim.Costs(), tasks,
                                                       settings, np.random.default_rng(0), None)  # fmt: skip
    assert grad.any() and logged["is_admitted"] > 0
    assert logged["rollouts"] == 8 * 4 / logged["is_admitted"]  # generated until 4 groups were admitted


def test_rollouts_to_a_target_use_the_smoothed_held_out_f1() -> None:
    from evidence.sim_report import rollouts_to

    progress = [(0, 0, 0.1), (20, 100, 0.5), (40, 200, 0.2), (60, 300, 0.5), (80, 400, 0.5)]
    assert rollouts_to(progress, 0.39) == 300.0  # (0.5 + 0.2 + 0.5) / 3 = 0.4: the one before is 0.27
    assert rollouts_to(progress, 0.41) is None
    assert rollouts_to(progress, 0.26) == 200.0  # (0.1 + 0.5 + 0.2) / 3


def test_the_waste_is_the_zero_advantage_share_per_phase_of_the_run(tmp_path: Path) -> None:
    from evidence.sim_report import waste

    run = tmp_path / "pair-utility-all-split0"
    run.mkdir()
    agent = "train/agg/effective/agent"
    lines = [{"step": s, f"{agent}/is_trainable/mean": 0.5 if s < 2 else 0.25,
              f"{agent}/zero_advantage/negative/mean": 0.9} for s in range(20)]  # fmt: skip
    (run / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    found = waste([run])
    assert {p: s["mean"] for p, s in found["rollouts in zero-advantage groups"].items()} == {
        "first": 0.5,
        "middle": 0.75,
        "last": 0.75,
    }
    assert found["NO-RELATION pairs: zero-advantage groups"]["middle"]["mean"] == pytest.approx(0.9)
    assert "positive pairs: zero-advantage groups" not in found
