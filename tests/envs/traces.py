"""Build a v1 DrugProt task and a one-reply trace by hand, to score replies through ``await task.score``."""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.types import AssistantMessage, UserMessage

from drugprot.envs.taskset import DrugprotConfig, DrugprotData, DrugprotTask


def make_task(labels: list[str], with_no_relation: bool = False, **knobs: Any) -> DrugprotTask:
    """A pair task built by hand, with the task config (reward weights) and utility costs of ``knobs``."""
    config = DrugprotConfig(id="drugprot", **knobs)
    data = DrugprotData(
        prompt="q",
        system_prompt="s",
        pmid="1",
        arg1="T1",
        arg2="T2",
        labels=labels,
        chemical="c",
        gene="g",
        with_no_relation=with_no_relation,
        fp_cost=config.options().fp_cost,  # the cost in effect (derived when f1_target is set)
        fn_cost=config.fn_cost,
    )
    return DrugprotTask(data, config.task)


def make_trace(task: DrugprotTask, content: str | None, reasoning: str | None) -> vf.Trace:
    return vf.Trace(
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        task=vf.TraceTask(type="DrugprotTask", data=task.data),
        nodes=[
            MessageNode(parent=None, message=UserMessage(content="q"), sampled=False),
            MessageNode(parent=0, message=AssistantMessage(content=content, reasoning_content=reasoning), sampled=True),
        ],
    )
