"""End to end: the real v1 eval CLI runs drugprot on the fixture against a local streaming OpenAI server.

``vf-eval drugprot -m trinity-mini --client.base-url http://127.0.0.1:<port>/v1`` (``eval`` on verifiers
0.3.x) goes through verifiers' null harness, interception server and scoring; the server answers each task
with a scripted reply, and the rewards are read back from the run's ``traces.jsonl``.
"""

from __future__ import annotations

import pytest

from .conftest import FixtureRun
from .e2e import read_episodes, trace_results

# Rewards per reply shape: (accuracy, format). The shared run (tests/conftest.py fixture_run) gives each of the
# fixture's 27 tasks one of these shapes.
SHAPES = {
    "correct": (1.0, 1.0),
    "wrong": (0.0, 1.0),
    "separate-reasoning": (1.0, 1.0),
    "no-think": (0.0, 0.0),  # no completed reasoning: no answer
    "unterminated": (0.0, 0.0),
    "two-boxes": (1.0, 0.0),
    "no-box": (0.0, 0.0),
}


def test_vf_eval_drugprot_end_to_end(fixture_run: FixtureRun) -> None:
    questions = fixture_run.questions
    assert len(questions) == 27
    assert set(fixture_run.shapes.values()) == set(SHAPES)  # every shape goes through the real CLI
    expected = {key: (name, *SHAPES[name]) for key, name in fixture_run.shapes.items()}
    run_dir, requests = fixture_run.run_dir, fixture_run.requests

    assert len(requests) == 27
    assert {r["model"] for r in requests} == {"trinity-mini"}
    first = requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0]["content"] == questions[0].system_prompt

    results = trace_results(read_episodes(run_dir))
    assert sorted(r.task_key for r in results) == sorted(expected)
    by_key = {r.task_key: r for r in results}
    for key, (name, acc, fmt) in expected.items():
        r = by_key[key]
        assert r.ok, (key, name, r.errors)
        assert (r.rewards["accuracy"], r.rewards["format"]) == (acc, fmt), (key, name)
        assert r.weights == {"accuracy": 1.0, "format": 0.1}
        assert r.reward == pytest.approx(acc + 0.1 * fmt), (key, name)
        invalid = name in ("no-think", "unterminated", "no-box")
        assert (r.info["drugprot"]["letter"] is None) is invalid, (key, name)
    assert sum(r.rewards["accuracy"] for r in results) == sum(e[1] for e in expected.values()) == 19.0
    assert sum(r.rewards["format"] for r in results) == sum(e[2] for e in expected.values()) == 22.0
    # task data travels on the trace for the report: ids and all gold labels of the multi-label pair
    multi = by_key["90000001:T1:T2"]
    assert (multi.task_data["pmid"], multi.task_data["arg1"], multi.task_data["arg2"]) == ("90000001", "T1", "T2")
    assert multi.task_data["labels"] == ["INHIBITOR", "SUBSTRATE"]
