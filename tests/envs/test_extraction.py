"""Extraction mode through the adapters: the v1 taskset's tasks and ``task.score``, the v0 rows and rubric
(identical rewards), and a real ``vf-eval`` in extraction mode (both stacks) against a local server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from drugprot.core import extraction
from drugprot.core.extraction import (
    ExtractionGold,
    answer_block,
)
from drugprot.core.options import TaskOptions
from drugprot.core.question import Question
from drugprot.core.questions import load_questions
from drugprot.core.rewards import Costs, Reward, accuracy_term, on_grid, utility
from drugprot.core.scoring import INFO_KEY, score_extraction
from tests.conftest import FIXTURE_JSONL
from tests.core.test_extraction import FIXTURE_VERSIONS, TABLE, THINK, reply


def v1_tasks(**knobs: Any) -> list[Any]:
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset

    return DrugprotTaskset(DrugprotConfig(id="drugprot", split="train", data_path=str(FIXTURE_JSONL), **knobs)).load()


def test_v1_taskset_in_extraction_mode() -> None:
    tasks = v1_tasks(mode="extraction")
    questions = load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL), mode="extraction"))
    assert [t.key for t in tasks] == [q.key for q in questions]
    assert [(t.data.prompt, t.data.system_prompt) for t in tasks] == [(q.prompt, q.system_prompt) for q in questions]
    assert [ExtractionGold.from_record(t.data.extraction) for t in tasks] == [q.gold for q in questions]
    assert all(asyncio.run(t.validate(None)) for t in tasks)  # the gold answer scores full marks
    # the data survives the wire (verifiers rebuilds tasks from the dumped data)
    from drugprot.envs.taskset import DrugprotData

    assert DrugprotData.model_validate(tasks[0].data.model_dump()) == tasks[0].data
    assert v1_tasks()[0].key == "90000001:T1:T2"  # pair mode stays the default


@pytest.mark.parametrize(("pmid", "content", "reasoning", "accuracy", "fmt", "counts", "rejected", "invalid",
                          "fmt_reason"), TABLE)  # fmt: skip
async def test_v1_task_score(pmid, content, reasoning, accuracy, fmt, counts, rejected, invalid, fmt_reason) -> None:
    from tests.envs.traces import make_trace

    knobs = {"reward": "accuracy", "accuracy_weight": 0.5, "format_weight": 0.25}
    (task,) = [t for t in v1_tasks(mode="extraction", **knobs) if t.key == pmid]
    trace = make_trace(task, content, reasoning)
    await task.score(trace)
    assert trace.errors == []
    assert trace.rewards["accuracy"].score == on_grid(accuracy)  # the per-document F1 on the 1/64 grid
    assert trace.metrics["correct"] == pytest.approx(accuracy, abs=1e-12)  # the metric keeps it exact
    assert (trace.rewards["format"].score, trace.metrics["answered"]) == (fmt, float(invalid is None))
    weights = {name: reward.weight for name, reward in trace.rewards.items()}
    assert weights == {"accuracy": 0.5, "utility": 0.0, "format": 0.25}
    assert trace.reward == on_grid(accuracy) * 0.5 + fmt * 0.25
    # the utility term is recorded all the same: TP - 0.5 x (FP + unknown-id and wrong-type lines) - FN
    (tp, fp, fn), (_, unknown_id, wrong_type, _) = counts, rejected
    assert trace.rewards["utility"].score == pytest.approx(tp - 0.5 * (fp + unknown_id + wrong_type) - fn)
    info = trace.info[INFO_KEY]
    assert (info["mode"], info["tp"], info["fp"], info["fn"], info["format_reason"]) == ("extraction", *counts,
                                                                                           fmt_reason)  # fmt: skip


HAS_LEGACY = __import__("importlib").util.find_spec("verifiers.legacy") is not None


legacy_only = pytest.mark.skipif(not HAS_LEGACY, reason="verifiers >= 0.4 has no legacy (v0) stack")


@legacy_only
def test_legacy_rows_match_v1() -> None:
    from drugprot.envs.legacy import load_environment

    env = load_environment(split="train", data_path=str(FIXTURE_JSONL), mode="extraction")
    rows = env.get_eval_dataset().to_list()
    tasks = v1_tasks(mode="extraction")
    assert env.system_prompt == extraction.system_prompt()
    assert [(r["info"]["key"], r["prompt"][1]["content"], r["info"]["extraction"]) for r in rows] == [
        (t.key, t.data.prompt, t.data.extraction) for t in tasks
    ]
    assert rows[3]["answer"] == "<relations>\nnone\n</relations>"
    completion = [{"role": "assistant", "content": reply("T1 | T2 | e", "x")}]
    assert env.parser.parse_answer(completion) == "T1 | T2 | INHIBITOR"


@legacy_only
@pytest.mark.parametrize(("pmid", "content", "reasoning", "accuracy", "fmt", "counts", "rejected", "invalid",
                          "fmt_reason"), TABLE)  # fmt: skip
def test_v0_and_v1_score_identically(pmid, content, reasoning, accuracy, fmt, counts, rejected, invalid,
                                     fmt_reason) -> None:  # fmt: skip
    from drugprot.envs.legacy import load_environment
    from tests.envs.test_legacy import _scripted_client
    from tests.envs.traces import make_trace

    env = load_environment(split="train", data_path=str(FIXTURE_JSONL), mode="extraction")
    (row,) = [r for r in env.get_eval_dataset() if r["info"]["key"] == pmid]
    output = asyncio.run(env.run_rollout(row, _scripted_client(content, reasoning), "scripted-model", {}))
    (task,) = [t for t in v1_tasks(mode="extraction") if t.key == pmid]
    trace = make_trace(task, content, reasoning)
    asyncio.run(task.score(trace))
    (tp, fp, fn), (_, unknown_id, wrong_type, _) = counts, rejected
    utility = tp - 0.5 * (fp + unknown_id + wrong_type) - fn  # the default reward: utility + 1/8 x format
    assert output["reward"] == trace.reward == utility + 0.125 * fmt
    assert (output["accuracy"], output["utility"], output["format"], output["answered"]) == (
        trace.rewards["accuracy"].score, trace.rewards["utility"].score, trace.rewards["format"].score,
        trace.metrics["answered"]
    )  # fmt: skip
    # the same record; v1 also records the prompts it sent (the v0 rows carry drugprot's own prompts)
    assert output["info"][INFO_KEY] == {k: v for k, v in trace.info[INFO_KEY].items() if k != "prompts"}


def e2e_replies() -> tuple[list[Question], dict[str, Any]]:
    """The fixture's extraction questions and one scripted reply per abstract (perfect unless said)."""
    from drugprot.tools.serve import Reply

    questions = load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL), mode="extraction"))
    replies = {q.key: Reply(THINK + answer_block(sorted(q.gold.relations))) for q in questions}
    replies["90000001"] = Reply(reply("T1 | T2 | E", "T3 | T4 | K"))  # F1 2/3
    replies["90000002"] = Reply(reply("T3 | T4 | I", "T9 | T4 | I"))  # one right of three, an unknown id: 1/2
    replies["90000004"] = Reply(reply("T1 | T2 | E"))  # a relation where there is none: 0
    replies["90000005"] = Reply("<relations>\nT1 | T2 | I\n</relations>")  # no reasoning: 0
    replies["90000009"] = Reply(answer_block(sorted(questions[8].gold.relations)), reasoning_content="It binds.")
    return questions, replies


E2E_ACCURACY = [0.6667, 0.5, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]


"""Accuracy of ``e2e_replies`` by abstract, in PMID order."""


def test_vf_eval_in_extraction_mode(tmp_path: Path) -> None:
    """A real ``vf-eval drugprot --env.taskset.mode extraction`` (``eval`` on 0.3.x) against a local server:
    every trace records the reward and the prediction record of its abstract's scripted reply."""
    from drugprot.tools.serve import OpenAIServer, scripted_responder
    from tests.e2e import read_episodes, run_vf_eval, trace_results

    questions, replies = e2e_replies()
    gold = {q.key: q.gold for q in questions}
    expected = {key: score_extraction(r.content, r.reasoning_content, gold[key]) for key, r in replies.items()}
    with OpenAIServer(scripted_responder({q.prompt: replies[q.key] for q in questions})) as server:
        extra = ["--env.taskset.data-path", str(FIXTURE_JSONL), "--env.taskset.split", "train",
                 "--env.taskset.mode", "extraction"]  # fmt: skip
        run_dir = run_vf_eval("drugprot", server.base_url, tmp_path / "outputs", n=9, timeout=900, extra_args=extra)
        requests = server.chat_requests
    assert requests[0]["messages"][0] == {"role": "system", "content": extraction.system_prompt()}
    results = {r.task_key: r for r in trace_results(read_episodes(run_dir))}
    assert sorted(results) == sorted(replies)
    for key, score in expected.items():
        r = results[key]
        assert r.ok, (key, r.errors)
        assert (r.rewards["accuracy"], r.rewards["utility"], r.rewards["format"], r.metrics["answered"]) == (
            accuracy_term(score), utility(score, Costs()), score.format, float(score.answered)
        ), key  # fmt: skip
        assert r.reward == Reward().value(score)  # the default: utility + 1/8 x format
        recorded = {name: value for name, value in r.info[INFO_KEY].items() if name != "prompts"}
        assert recorded == score.as_info() | {"versions": FIXTURE_VERSIONS}, key
        assert r.info[INFO_KEY]["prompts"]["standard_system"] is True, key  # drugprot's own system prompt was sent
        assert r.task_data["extraction"] == gold[key].as_record()
    assert [round(expected[k].accuracy, 4) for k in sorted(expected)] == E2E_ACCURACY
    assert results["90000002"].info[INFO_KEY]["unknown_id"] == 1


@legacy_only
def test_legacy_vf_eval_in_extraction_mode(tmp_path: Path) -> None:
    """The legacy ``vf-eval drugprot -m trinity-mini -a '{"mode": "extraction", ...}' -s`` (verifiers 0.3.x) on
    the same replies: the same rewards and prediction records, read back from ``results.jsonl``."""
    from drugprot.tools.serve import OpenAIServer, scripted_responder
    from tests.e2e import read_legacy_results, run_legacy_vf_eval, write_endpoints_toml

    questions, replies = e2e_replies()
    gold = {q.key: q.gold for q in questions}
    expected = {key: score_extraction(r.content, r.reasoning_content, gold[key]) for key, r in replies.items()}
    with OpenAIServer(scripted_responder({q.prompt: replies[q.key] for q in questions})) as server:
        write_endpoints_toml(tmp_path, "trinity-mini", "trinity-mini", server.base_url)
        run_dir = run_legacy_vf_eval(
            "drugprot", "trinity-mini", tmp_path, tmp_path / "outputs", n=9, timeout=900,
            env_args={"split": "train", "data_path": str(FIXTURE_JSONL), "mode": "extraction"},
        )  # fmt: skip
    rows, _ = read_legacy_results(run_dir)
    assert sorted(row["info"]["key"] for row in rows) == sorted(replies)
    for row in rows:
        score = expected[row["info"]["key"]]
        # the accuracy reward: the per-document F1 on the 1/64 grid, as on v1
        assert (row["reward"], row["accuracy"], row["utility"], row["format"], row["answered"]) == (
            pytest.approx(Reward().value(score)), on_grid(score.accuracy), utility(score, Costs()), score.format,
            float(score.answered)
        )  # fmt: skip
        assert row["info"][INFO_KEY] == score.as_info() | {"versions": FIXTURE_VERSIONS}
