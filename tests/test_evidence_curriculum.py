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
    values = [1.125, -0.875, -1.375, 0.125, -0.375]
    return [[r.choice(values) for _ in range(8)] if r.random() < 0.5 else [r.choice(values)] * 8 for _ in range(n)]


@pytest.mark.skipif(
    importlib.util.find_spec("prime_rl") is None,
    reason="prime-rl does not import here (install it, or put a checkout at the pinned commit on the path: "
    "PYTHONPATH=<checkout>/src:<checkout>/packages/prime-rl-configs/src)",
)
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
        "solved-negative",  # 0.125
        "solved-positive",  # 1.125
        "missed",  # -0.875
        "missed",  # -1.375
        "learning-negative",  # -0.375: a type on a NO-RELATION pair in every rollout
    ]
    sampler.observe(0, [0.125] * 7 + [-0.375])
    sampler.observe(1, [1.125] * 7 + [-0.875])
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
    agent = "train/agg/all/agent"
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


# -- the choice on training abstracts (evidence.curriculum_choice) and the step's cost (evidence.step_cost) ------------


def test_the_task_mix_keeps_every_gold_pair_and_samples_no_relation_pairs_to_the_share() -> None:
    data = rl_sim.prepare(load(FIXTURE))
    tasks = data.tasks(data.train, "all")
    positive = [i for i in tasks if data.rows[i].gold]
    negative = [i for i in tasks if not data.rows[i].gold]
    assert rl_sim.task_mix(data, tasks, None, 0) == tasks
    mixed = rl_sim.task_mix(data, tasks, 0.25, 0)
    kept = [i for i in mixed if not data.rows[i].gold]
    assert [i for i in mixed if data.rows[i].gold] == positive
    assert len(kept) == round(0.25 / 0.75 * len(positive)) < len(negative)
    assert mixed == [i for i in tasks if i in set(mixed)]  # the taskset's order
    assert rl_sim.task_mix(data, tasks, 0.25, 0) == mixed  # seeded
    assert rl_sim.task_mix(data, tasks, 0.99, 0) == tasks  # more than there are: all of them


def test_the_grid_is_every_curriculum_setting_but_the_standard_sampler() -> None:
    from evidence.curriculum_choice import GRID, STANDARD

    assert [r.name for r in GRID] == [
        "uniform-neg0.5", "uniform-gate", "uniform-gate-neg0.5",
        "pool0.1", "pool0.1-neg0.5", "pool0.1-gate", "pool0.1-gate-neg0.5",
        "pool0.3", "pool0.3-neg0.5", "pool0.3-gate", "pool0.3-gate-neg0.5",
    ]  # fmt: skip
    assert all((r.mode, r.reward, r.negatives, r.cost) == ("pair", "utility", "all", "default") for r in GRID)
    assert (STANDARD.sampler, STANDARD.gate, STANDARD.negative_share) == ("uniform", False, None)


def test_the_choice_ranks_qualifying_settings_by_speed_up_then_end_f1() -> None:
    from evidence.curriculum_choice import STANDARD, choose

    def o(f1: float, speedup: float | None) -> dict:
        return {"end_f1": f1, "speedup": speedup, "rollouts_to_target": None if speedup is None else 100.0}

    inner = {STANDARD.name: o(0.40, 1.0), "fast-but-worse": o(0.385, 3.0), "fast": o(0.392, 2.0),
             "faster-never-reaches": o(0.30, None), "slow": o(0.45, 0.5)}  # fmt: skip
    assert choose(inner) == "fast"  # 0.385 is more than 0.01 below the standard's 0.40
    assert choose({STANDARD.name: o(0.40, 1.0), "a": o(0.2, None), "b": o(0.3, None)}) == "b"  # none qualifies


def test_the_choice_command_runs_on_the_fixture_and_the_cost_reads_its_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evidence import curriculum_choice, step_cost

    out = tmp_path / "choice"
    assert curriculum_choice.main(["--data-path", FIXTURE, "--out", str(out), "--smoke"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    [split] = summary["splits"]
    assert split["chosen"] in {r.name for r in curriculum_choice.GRID[:3]}
    assert (out / "split0" / "outer" / split["chosen"] / "metrics.jsonl").is_file()
    assert len(list(out.glob("split0/inner/*/metrics.jsonl"))) == 4  # the standard and 3 settings
    capsys.readouterr()
    assert step_cost.main(["--summary", str(out / "summary.json"), "--prompt-tokens", "1000"]) == 0
    printed = capsys.readouterr().out
    assert "| standard (pair-utility-all) | 2,048 | 128 |" in printed


def test_the_step_cost_splits_a_steps_tokens_by_the_teaching_share() -> None:
    import tomllib

    from evidence import step_cost

    recipe = step_cost.recipe_of(tomllib.loads(step_cost.CONFIG.read_text(encoding="utf-8")))
    assert (recipe["batch_size"], recipe["group_size"], recipe["max_completion_tokens"]) == (128, 8, 2048)
    summary = {"splits": [
        {"standard": {"rollouts": 1000, "is_trainable": 0.2, "start_f1": 0.2, "end_f1": 0.3},
         "curriculum": {"rollouts": 3000, "is_trainable": 0.6, "start_f1": 0.2, "end_f1": 0.25}},
        {"standard": {"rollouts": 1000, "is_trainable": 0.4, "start_f1": 0.2, "end_f1": 0.4},
         "curriculum": {"rollouts": 5000, "is_trainable": 0.8, "start_f1": 0.2, "end_f1": 0.35}},
    ]}  # fmt: skip
    figures = {side: step_cost.side_figures(summary, side) for side in ("standard", "curriculum")}
    assert figures["standard"] == pytest.approx(
        {"generation_factor": 1.0, "teaching_share": 0.3, "rollouts": 1000, "gain_points": 15.0, "splits": 2}
    )
    assert figures["curriculum"]["generation_factor"] == pytest.approx(4.0)
    standard, curriculum = step_cost.cost_rows(recipe, figures, 1000.0, [1000])
    assert standard["tokens_per_step"] == 128 * 2000
    assert standard["teaching_tokens_per_step"] == pytest.approx(128 * 2000 * 0.3)
    assert standard["wasted_tokens_per_step"] == pytest.approx(128 * 2000 * 0.7)
    assert standard["sandbox_tokens_per_point"] == pytest.approx(1000 * 2000 / 15)
    assert curriculum["rollouts_per_step"] == 512
    assert curriculum["teaching_tokens_per_step"] == pytest.approx(512 * 2000 * 0.7)
    assert curriculum["sandbox_tokens_per_point"] == pytest.approx(4000 * 2000 / 10)


# ------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("module", ["curriculum_choice", "rl_sim"])
def test_more_splits_than_abstracts_is_refused_before_any_work(
    module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A billion splits: one line and exit 2 once the 9 abstracts are read, before the per-split folder list (which
    ran out of memory) and before any folder is made."""
    import importlib

    main = importlib.import_module(f"evidence.{module}").main
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exited:
        main(["--data-path", FIXTURE, "--out", str(out), "--splits", "1000000000"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"python -m evidence.{module}: error: --splits 1,000,000,000: more PMID splits than the data's 9 abstracts "
        f"for the {'curriculum choice' if module == 'curriculum_choice' else 'RL sandbox'}; pass --splits 9 or fewer"
    )
    assert not out.exists()


def _outcome(**change: object) -> dict[str, object]:
    return {"rollouts": 1000, "is_trainable": 0.2, "start_f1": 0.2, "end_f1": 0.3} | change


def _summary(**standard: object) -> dict[str, object]:
    split = {"standard": _outcome(**standard), "curriculum": _outcome(rollouts=3000)}
    return {"settings": {}, "summary": {"chosen": {"pool0.1": 1}}, "splits": [split]}


@pytest.mark.parametrize(
    ("summary", "field", "shown", "expected"),
    [
        ({}, "splits", "missing", "a non-empty list of splits"),
        ({"splits": []}, "splits", "[]", "a non-empty list of splits"),
        ({"splits": [1]}, "splits[0].standard", "missing", "an object"),
        (_summary(rollouts=None), "splits[0].standard.rollouts", "missing", "a count of rollouts >= 1"),
        (_summary(rollouts=0), "splits[0].standard.rollouts", "0", "a count of rollouts >= 1"),  # divides
        (_summary(rollouts=-5), "splits[0].standard.rollouts", "-5", "a count of rollouts >= 1"),
        (_summary(is_trainable="x"), "splits[0].standard.is_trainable", '"x"', "a share from 0 to 1"),
        (_summary(end_f1=float("nan")), "splits[0].standard.end_f1", "NaN", "a share from 0 to 1"),
        (_summary(start_f1=1.5), "splits[0].standard.start_f1", "1.5", "a share from 0 to 1"),
        ({**_summary(), "summary": {}}, "summary.chosen", "missing", "an object of setting name -> count of splits"),
    ],
)
def test_step_cost_refuses_a_malformed_summary_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], summary: object, field: str, shown: str, expected: str
) -> None:
    from evidence import step_cost

    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        step_cost.main(["--summary", str(path), "--prompt-tokens", "1000"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"python -m evidence.step_cost: error: --summary {path}: field {field} is {shown}, expected {expected}; pass "
        "the summary.json that python -m evidence.curriculum_choice writes"
    ]


def test_step_cost_refuses_a_summary_that_is_not_an_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evidence import step_cost

    path = tmp_path / "summary.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        step_cost.main(["--summary", str(path), "--prompt-tokens", "1000"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"python -m evidence.step_cost: error: --summary {path}: a JSON list, expected an object; pass the "
        "summary.json that python -m evidence.curriculum_choice writes"
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--prompt-tokens", "-1"], "--prompt-tokens must be a finite number of tokens above 0, got -1.0"),
        (["--prompt-tokens", "nan"], "--prompt-tokens must be a finite number of tokens above 0, got nan"),
        (["--prompt-tokens", "inf"], "--prompt-tokens must be a finite number of tokens above 0, got inf"),
        (["--prompt-tokens", "9", "--mean-completion", "-5"],
         "--mean-completion must be a whole number of tokens >= 1, got -5"),
    ],
)  # fmt: skip
def test_step_cost_refuses_token_counts_that_are_not_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    from evidence import step_cost

    path = tmp_path / "summary.json"
    path.write_text(json.dumps(_summary()), encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        step_cost.main(["--summary", str(path), *argv])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [f"python -m evidence.step_cost: error: {message}"]
