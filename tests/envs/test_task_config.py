"""The task config carries the utility's costs (``DrugprotTaskConfig``), so every path that builds tasks from the
config scores with the knobs it was given: ``vf-replay`` rebuilds each task from the saved trace's data and the
replay's config, and re-scores with the replay's ``fp_cost``/``fn_cost``, recording them in each trace."""

from __future__ import annotations

import pytest

from drugprot.core.options import TaskOptions
from drugprot.core.rewards import Costs
from drugprot.core.scoring import INFO_KEY
from drugprot.core.versions import record
from drugprot.envs.taskset import DrugprotConfig, DrugprotTask, DrugprotTaskConfig
from tests.core.test_parsing import GOLD
from tests.envs.traces import make_task, make_trace


def test_the_config_folds_the_cost_knobs_into_the_task_config() -> None:
    config = DrugprotConfig(id="drugprot", fp_cost=0.35, fn_cost=2.0)
    assert isinstance(config.task, DrugprotTaskConfig)
    assert (config.task.fp_cost, config.task.fn_cost) == (0.34375, 2.0)  # 0.35 on the reward grid: 22/64
    assert (DrugprotConfig(id="drugprot").task.fp_cost, DrugprotConfig(id="drugprot").task.fn_cost) == (0.5, 1.0)
    # a saved config (eval.json) round-trips, and a knob given over it wins (vf-replay's layering)
    saved = DrugprotConfig(id="drugprot").model_dump(mode="json")
    again = DrugprotConfig.model_validate(saved | {"fp_cost": 0.35})
    assert (again.task.fp_cost, again.fp_cost) == (0.34375, 0.34375)


async def test_a_task_scores_with_its_config_costs_and_records_them() -> None:
    """A task made at fp_cost 0.5 (its data) re-scored under a config at 0.35 (run as 0.34375, on the reward grid),
    as ``vf-replay`` does it."""
    default = make_task(GOLD)  # data and config at the defaults
    made = DrugprotTask(default.data.model_copy(update={"versions": record(TaskOptions())}), default.config)
    rescored = DrugprotTask(made.data, DrugprotConfig(id="drugprot", fp_cost=0.35).task)
    wrong = "<think>t</think>\\boxed{A}"  # a false positive and two false negatives on the two-type GOLD pair
    traces = [make_trace(task, wrong, None) for task in (made, rescored)]
    for task, trace in zip((made, rescored), traces, strict=True):
        await task.score(trace)
    assert traces[0].rewards["utility"].score == pytest.approx(-0.5 - 2.0)
    assert traces[1].rewards["utility"].score == -0.34375 - 2.0
    assert traces[0].info[INFO_KEY]["versions"]["reward"]["fp_cost"] == 0.5
    assert traces[1].info[INFO_KEY]["versions"]["reward"] == made.data.versions["reward"] | {
        "fp_cost": 0.34375,
        "threshold": Costs(0.34375, 1.0).threshold,
    }
    assert made.data.versions["reward"]["fp_cost"] == 0.5  # the task data's shared record is unchanged


async def test_a_task_without_a_drugprot_task_config_scores_with_its_data_costs() -> None:
    import verifiers.v1 as vf

    made = make_task(GOLD, fp_cost=0.25)
    plain = DrugprotTask(made.data, vf.TaskConfig())
    trace = make_trace(plain, "<think>t</think>\\boxed{A}", None)
    await plain.score(trace)
    assert trace.rewards["utility"].score == pytest.approx(-0.25 - 2.0)


async def test_a_rescored_task_records_the_weights_it_was_scored_with() -> None:
    default = make_task(GOLD)
    made = DrugprotTask(default.data.model_copy(update={"versions": record(TaskOptions())}), default.config)
    rescored = DrugprotTask(made.data, DrugprotConfig(id="drugprot", reward="accuracy").task)
    trace = make_trace(rescored, "<think>t</think>\\boxed{E}", None)
    await rescored.score(trace)
    assert {name: reward.weight for name, reward in trace.rewards.items()} == {
        "accuracy": 1.0,
        "utility": 0.0,
        "format": 0.125,
    }
    assert trace.info[INFO_KEY]["versions"]["reward"]["weights"] == {"accuracy": 1.0, "utility": 0.0, "format": 0.125}
    assert trace.info[INFO_KEY]["versions"]["reward"]["kind"] == "utility"  # the kind recorded by the source run
