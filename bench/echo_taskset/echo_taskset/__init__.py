"""A minimal verifiers v1 taskset: the framework's floor in drugprot's eval-pipeline benchmark.

Each task is a one-line prompt; the reward is 1 when the reply is non-empty. ``EchoEnv`` pins the same seat
as ``DrugprotEnv`` (``null`` harness, ``subprocess`` runtime), so ``vf-eval echo-taskset`` and
``vf-eval drugprot`` differ only in what the taskset does: loading, prompts and scoring.
"""

from __future__ import annotations

import verifiers.v1 as vf


class EchoData(vf.TaskData):
    number: int
    """Position of the task (also its key)."""


class EchoTask(vf.Task[EchoData]):
    @property
    def key(self) -> str:
        return str(self.data.number)

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def replied(self, trace: vf.Trace) -> float:
        return float(bool(trace.last_reply))


class EchoConfig(vf.TasksetConfig):
    num_tasks: int = 100_000
    """How many tasks ``load()`` makes (``vf-eval -n`` selects the first n)."""


class EchoTaskset(vf.Taskset[EchoTask, EchoConfig]):
    def load(self) -> list[EchoTask]:
        config = self.config.task
        return [
            EchoTask(EchoData(number=i, prompt=f"Echo task {i}: reply."), config) for i in range(self.config.num_tasks)
        ]


class EchoEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"})


class EchoEnv(vf.SingleAgentEnv, vf.Env[EchoEnvConfig]):
    """The single-agent env with drugprot's pinned seat."""


__all__ = ["EchoTaskset", "EchoEnv"]
