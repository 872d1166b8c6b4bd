"""The sandbox's one-pass regime (``evidence.rl_sim --one-pass``): the recipe's steps and batch, each step's tasks
not drawn before; its levers (group size, sampling temperature) and the overlap-corrected test of its tables."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from drugprot.core.rewards import Costs
from evidence import rl_sim, sim_report
from evidence.shared import corrected_test, load
from evidence.sim_data import probabilities

FIXTURE = str(Path(__file__).parent / "fixtures" / "drugprot_fixture.jsonl")
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "drugprot.toml"


def test_one_pass_settings_are_the_recipes_shape() -> None:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    settings = rl_sim.one_pass_settings()
    assert settings.one_pass
    assert settings.steps == config["max_steps"] == 100
    assert settings.pair_prompts * rl_sim.GROUP == config["orchestrator"]["batch_size"] == 128
    assert config["orchestrator"]["group_size"] == rl_sim.GROUP
    assert rl_sim.RECIPE_TEMPERATURE == config["orchestrator"]["train"]["sampling"]["temperature"] == 0.7


def test_one_pass_hands_out_every_task_once_before_any_twice() -> None:
    draw = rl_sim.OnePass(range(10), seed=3)
    first = [draw.take(4), draw.take(4)]
    assert draw.passes == 1 and len(set(np.concatenate(first).tolist())) == 8
    third = draw.take(4)  # the last 2 of the first pass, then 2 of a second
    assert draw.passes == 2
    assert sorted([*np.concatenate(first).tolist(), *third[:2].tolist()]) == list(range(10))


def test_a_group_size_keeps_the_batch_of_rollouts() -> None:
    settings = rl_sim.one_pass_settings()
    for group, tasks in ((4, 32), (8, 16), (16, 8)):
        recipe = rl_sim.Recipe("g", "pair", "utility", group=group)
        assert rl_sim.prompts_of(recipe, settings) == tasks
        assert tasks * group == 128


def test_a_step_draws_its_tasks_from_the_one_pass_order_and_samples_at_the_recipes_temperature() -> None:
    data = rl_sim.prepare(load(FIXTURE))
    tasks = data.tasks(data.train, "all")
    settings = rl_sim.Settings(pair_prompts=2, one_pass=True)
    recipe = rl_sim.Recipe("t", "pair", "utility", group=4, temperature=1.4)
    assert rl_sim.scale_of(recipe) == pytest.approx(0.5)
    draw = rl_sim.OnePass(tasks, seed=0)
    order = draw.order.tolist()
    w = np.random.default_rng(0).normal(size=(14, data.x.shape[1]))
    grad, logged = rl_sim.pair_step(w, data, recipe, Costs(), tasks, settings, np.random.default_rng(1), draw)
    assert draw.at == 4 and logged["rollouts"] == 16.0  # 2 x 8 rollouts: 4 tasks x groups of 4
    # the same step by hand: the four tasks next in the order, logits halved (T 1.4 against the recipe's 0.7)
    rng = np.random.default_rng(1)
    chosen = np.array(order[:4])
    p = probabilities(w * 0.5, data.x[chosen], True)
    actions = rl_sim.sample(np.repeat(p[:, None], 4, axis=1), rng)
    rewards = data.table(True, reward=rl_sim.Reward("utility", Costs()))[data.key[chosen][:, None], actions]
    advantages = rewards - rewards.mean(axis=1, keepdims=True)
    onehot = np.eye(14)[actions]
    expected = 0.5 * np.einsum("kg,kga,kf->af", advantages, onehot - p[:, None], data.x[chosen]) / 16
    assert np.array_equal(grad, expected)


def test_the_overlap_corrected_test_widens_the_naive_interval() -> None:
    """Nadeau and Bengio: var of the mean difference (1/J + n_test/n_train) s^2; 70/30 splits: n_test/n_train 3/7."""
    diffs = [0.01, -0.02, 0.03, 0.0, 0.01]
    got = corrected_test(diffs)
    s2 = np.var(diffs, ddof=1)
    se = np.sqrt((1 / 5 + 3 / 7) * s2)
    assert got["mean"] == pytest.approx(0.006)
    assert got["high"] - got["mean"] == pytest.approx(2.7764451051977987 * se)  # t(0.975, 4)
    assert got["p"] == pytest.approx(0.6983570482182075)
    assert corrected_test([0.02])["n"] == 1 and np.isnan(corrected_test([0.02])["p"])


@pytest.fixture(scope="module")
def one_pass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one-pass")
    args = ["--data-path", FIXTURE, "--out", str(out), "--one-pass", "--steps", "3", "--eval-every", "3"]
    assert rl_sim.main([*args, "--classes", "cues", "--splits", "2"]) == 0
    return out


def test_a_one_pass_run_draws_each_task_once_and_tables_the_levers(one_pass: Path) -> None:
    summary = json.loads((one_pass / "summary.json").read_text())
    assert summary["settings"]["one_pass"] and summary["settings"]["steps"] == 3
    runs = {(r["recipe"], r["split"]): r for r in summary["runs"]}
    assert {name for name, _ in runs} == set(rl_sim.ONE_PASS_RECIPES)
    for (name, _), run in runs.items():
        if name != "pair-utility-gate":
            drawn = 3 * 128 // run["group"]  # the fixture's pool is small: a pass ends, the next begins
            assert (run["tasks_drawn"], run["passes"]) == (drawn, -(-drawn // run["task_pool"]))
    block = summary["classes"]["cues"]
    assert "fstar_probe" in block and "noise_floor" in block["one_pass"]
    rows = {r["recipe"]: r for r in block["one_pass"]["rows"]}
    reference = {s: runs[("pair-utility-all", s)] for s in (0, 1)}
    g4 = {s: runs[("pair-utility-g4", s)] for s in (0, 1)}
    ratio = [(g4[s]["is_trainable"] / 4) / (reference[s]["is_trainable"] / 8) for s in (0, 1)]
    assert rows["pair-utility-g4"]["ratio"]["mean"] == pytest.approx(np.mean(ratio))
    assert "adopt" in rows["pair-utility-g4"] and "adopt" not in rows["pair-utility-all-seed1"]
    assert summary["adopted"] == [
        name for name in sim_report.LEVER_NAMES if rows[name]["adopt"]
    ]  # one class: its verdict is the recipe's


def test_one_pass_refuses_the_pool_sampler_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        rl_sim.main(["--data-path", FIXTURE, "--out", str(tmp_path / "o"), "--one-pass", "--recipes",
                     "pair-utility-pool"])  # fmt: skip
    assert exc.value.code == 2
    assert "--one-pass runs the uniform sampler" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
