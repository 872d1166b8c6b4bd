"""The v1 taskset: verifiers finds it by the package's exports, and it scores replies exactly as the core does
(the parser table through ``await task.score``)."""

from __future__ import annotations

import pytest
from verifiers.v1.utils.loaders import env_config_type, environment_class, task_type, taskset_class, taskset_config_type

import drugprot
from drugprot.envs.taskset import (
    INFO_KEY,
    DrugprotConfig,
    DrugprotData,
    DrugprotEnv,
    DrugprotEnvConfig,
    DrugprotTask,
    DrugprotTaskset,
)
from tests.core.test_parsing import CASES, GOLD, NR_CASES, T
from tests.envs.traces import make_task, make_trace


def test_verifiers_resolves_the_id_drugprot_to_the_package_exports() -> None:
    """``vf-eval drugprot`` imports the package ``drugprot`` and takes the one subclass of each role that its
    ``__all__`` exports; the lazy public names are those same classes."""
    assert taskset_class("drugprot") is drugprot.DrugprotTaskset is DrugprotTaskset
    assert environment_class("drugprot") is drugprot.DrugprotEnv is DrugprotEnv
    assert taskset_config_type("drugprot") is drugprot.DrugprotConfig is DrugprotConfig
    assert env_config_type("drugprot") is DrugprotEnvConfig
    assert task_type("drugprot") is drugprot.DrugprotTask is DrugprotTask
    assert drugprot.DrugprotData is DrugprotData


@pytest.mark.parametrize(("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES)
async def test_reply_through_verifiers(content, reasoning, letter, accuracy, fmt, invalid, fmt_reason) -> None:
    task = make_task(GOLD)
    trace = make_trace(task, content, reasoning)
    await task.score(trace)
    assert trace.errors == []
    assert trace.rewards["accuracy"].score == accuracy
    assert trace.rewards["format"].score == fmt
    assert trace.rewards["accuracy"].weight == 1.0
    assert trace.rewards["format"].weight == 0.1
    assert trace.reward == pytest.approx(accuracy * 1.0 + fmt * 0.1)
    assert trace.metrics["answered"] == float(letter is not None)
    assert trace.info[INFO_KEY] == {
        "letter": letter,
        "label": {
            "E": "INHIBITOR",
            "K": "SUBSTRATE",
            "A": "INDIRECT-DOWNREGULATOR",
            "L": "SUBSTRATE_PRODUCT-OF",
            "B": "INDIRECT-UPREGULATOR",
            "M": "PART-OF",
            None: None,
        }[letter],
        "invalid_reason": invalid,
        "format_reason": fmt_reason,
        "versions": None,  # what the task data carries (a task built by hand: nothing)
    }


@pytest.mark.parametrize(("content", "letter", "accuracy", "fmt"), NR_CASES)
async def test_no_relation_option(content, letter, accuracy, fmt) -> None:
    task = make_task(["NO-RELATION"], with_no_relation=True)
    trace = make_trace(task, content, None)
    await task.score(trace)
    assert (
        trace.info[INFO_KEY]["letter"],
        trace.rewards["accuracy"].score,
        trace.rewards["format"].score,
    ) == (letter, accuracy, fmt)


async def test_weights_come_from_config() -> None:
    config = DrugprotConfig(id="drugprot", accuracy_weight=0.7, format_weight=0.3).task
    task = DrugprotTask(make_task(GOLD).data, config)
    trace = make_trace(task, T + "\\boxed{E} \\boxed{E}", None)  # accurate, bad format
    await task.score(trace)
    assert trace.rewards["accuracy"].weight == 0.7
    assert trace.rewards["format"].weight == 0.3
    assert trace.reward == pytest.approx(0.7)
