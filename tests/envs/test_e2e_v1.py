"""End to end: the real v1 eval CLI runs drugprot on the fixture against a local streaming OpenAI server.

``vf-eval drugprot -m trinity-mini --client.base-url http://127.0.0.1:<port>/v1`` (``eval`` on verifiers
0.3.x) goes through the harness, verifiers' interception server and scoring; the server answers each task
with a scripted reply, and the rewards are read back from the run's ``traces.jsonl``. The shared fixture runs
(tests/conftest.py ``fixture_runs``) are made with both harnesses: drugprot's own (``drugprot``, the pinned
default) and verifiers' ``null`` chat program.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import drugprot
from drugprot.core.errors import DrugprotDataError
from drugprot.core.options import TaskOptions
from drugprot.core.prompts import PROMPT_VERSION
from drugprot.core.questions import load_questions, validate_source
from drugprot.core.rewards import Reward
from drugprot.core.scoring import SCORER_VERSION
from drugprot.core.versions import digest
from drugprot.envs.harness import HARNESS_ID, NULL_HARNESS_ID
from drugprot.envs.null_pins import NULL_PROGRAM_PINS
from drugprot.envs.null_program import (
    PINNED_NULL_HARNESS_ID,
    declared_dependencies,
    null_program_source,
    pinned_program,
)
from drugprot.tools.serve import OpenAIServer, Reply, ResponderError
from tests.bounds import HANG_S
from tests.conftest import FIXTURE_JSONL, FixtureRun
from tests.e2e import read_episodes, run_vf_eval, script_path, trace_results, v1_cli_name, verifiers_version

HARNESSES = (HARNESS_ID, NULL_HARNESS_ID)
FIXTURE_ARGS = ["--env.taskset.data-path", str(FIXTURE_JSONL), "--env.taskset.split", "train"]

THINK = "<think>The abstract describes the chemical acting on the gene product.</think>"

# Rewards per reply shape: (accuracy, format). The shared runs (tests/conftest.py fixture_runs) give each of the
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


NULL_PACKAGES = ("openai", "httpx", "mcp", "tenacity")


def locked_versions() -> dict[str, str]:
    """The versions of the null program's main packages in its pins (this Python's markers don't matter here)."""
    pins = NULL_PROGRAM_PINS[declared_dependencies(null_program_source())]
    versions = dict(pin.split(";")[0].split("==") for pin in pins)
    return {name: versions[name] for name in NULL_PACKAGES}


def pinned_environment_versions() -> dict[str, str]:
    """What the pinned program's uv script environment holds, as the subprocess runtime made it: the program is at
    ``<scripts dir>/<sha256 of its text>.py`` and ``uv python find --script`` names that environment's Python."""
    from verifiers.v1.runtimes.subprocess import SubprocessRuntime

    program = pinned_program(null_program_source())
    path = Path(SubprocessRuntime.scripts_dir) / f"{hashlib.sha256(program.encode()).hexdigest()}.py"
    assert path.read_text() == program
    found = subprocess.run(["uv", "python", "find", "--script", str(path), "--no-config"], capture_output=True,
                           text=True, check=True, timeout=HANG_S)  # fmt: skip
    code = f"import importlib.metadata as m; print(*(m.version(p) for p in {NULL_PACKAGES!r}))"
    shown = subprocess.run([found.stdout.strip(), "-c", code], capture_output=True, text=True, check=True,
                           timeout=HANG_S)  # fmt: skip
    return dict(zip(NULL_PACKAGES, shown.stdout.split(), strict=True))


def shape_utility(name: str, gold_types: int) -> float:
    """The utility (default costs: TP 1, FP -0.5, FN -1) of a reply shape on a pair with ``gold_types`` types:
    one right type names one of them (the rest are false negatives), a wrong one is a false positive and misses
    them all, no answer misses them all."""
    if SHAPES[name][0] == 1.0:
        return 1.0 - (gold_types - 1)
    return -0.5 - gold_types if name == "wrong" else -float(gold_types)


@pytest.fixture(scope="module")
def questions() -> list[Any]:
    return load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL)))


@pytest.mark.parametrize("harness", HARNESSES)
def test_vf_eval_drugprot_end_to_end(harness: str, fixture_runs: Any) -> None:
    fixture_run: FixtureRun = fixture_runs(harness)
    questions = fixture_run.questions
    assert len(questions) == 27
    assert set(fixture_run.shapes.values()) == set(SHAPES)  # every shape goes through the real CLI
    expected = {key: (name, *SHAPES[name]) for key, name in fixture_run.shapes.items()}
    types = {q.key: len(q.labels) for q in questions}
    run_dir, requests = fixture_run.run_dir, fixture_run.requests

    assert len(requests) == 27
    assert {r["model"] for r in requests} == {"trinity-mini"}
    first = requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0]["content"] == questions[0].system_prompt

    episodes = read_episodes(run_dir)
    # null runs as drugprot-null, its chat program pinned by content (tests/e2e.py passes the children no
    # UV_EXCLUDE_NEWER of the machine's, which would keep verifiers' own program); no cutoff is recorded
    recorded = {t["agent"]["config"]["harness"]["id"] for e in episodes for t in e["traces"]}
    assert recorded == {PINNED_NULL_HARNESS_ID if harness == NULL_HARNESS_ID else harness}
    recorded_env = {json.dumps(t["agent"]["config"]["harness"]["env"]) for e in episodes for t in e["traces"]}
    assert recorded_env == {json.dumps({})}
    if harness == NULL_HARNESS_ID:
        assert pinned_environment_versions() == locked_versions()
    results = trace_results(episodes)
    assert sorted(r.task_key for r in results) == sorted(expected)
    by_key = {r.task_key: r for r in results}
    by_question = {q.key: q for q in questions}
    for key, (name, acc, fmt) in expected.items():
        r = by_key[key]
        assert r.ok, (key, name, r.errors)
        utility = shape_utility(name, types[key])
        assert (r.rewards["accuracy"], r.rewards["utility"], r.rewards["format"]) == (
            acc,
            pytest.approx(utility),
            fmt,
        ), (key, name)
        assert r.weights == {"accuracy": 0.0, "utility": 1.0, "format": 0.125}  # the default: reward utility
        assert r.reward == utility + 0.125 * fmt, (key, name)  # exact: every term on the 1/64 grid
        invalid = name in ("no-think", "unterminated", "no-box")
        assert (r.info["drugprot"]["letter"] is None) is invalid, (key, name)
        assert r.info["drugprot"]["versions"] == {  # what made the rollout, recorded by the real CLI run
            "env": drugprot.__version__,
            "prompt": PROMPT_VERSION,
            "scorer": SCORER_VERSION,
            "data": {"source": "file", "revision": None},
            "reward": Reward().record(),
            "setting": {"split": "train", "negatives": 0, "mode": "pair", "data_path": str(FIXTURE_JSONL)},
        }
        assert r.info["drugprot"]["prompts"] == {  # the prompts it sent: drugprot's own system prompt
            "system": digest(questions[0].system_prompt),
            "user": digest(by_question[key].prompt),
            "standard_system": True,
        }
    assert sum(r.rewards["accuracy"] for r in results) == sum(e[1] for e in expected.values()) == 19.0
    assert sum(r.rewards["format"] for r in results) == sum(e[2] for e in expected.values()) == 22.0
    # task data travels on the trace for the report: ids and all gold labels of the multi-label pair
    multi = by_key["90000001:T1:T2"]
    assert (multi.task_data["pmid"], multi.task_data["arg1"], multi.task_data["arg2"]) == ("90000001", "T1", "T2")
    assert multi.task_data["labels"] == ["INHIBITOR", "SUBSTRATE"]


def _message(node: dict[str, Any]) -> dict[str, Any]:
    keep = ("role", "content", "reasoning_content", "tool_calls")
    return {"sampled": node.get("sampled"), **{k: node["message"].get(k) for k in keep}}


def _call(call: dict[str, Any]) -> dict[str, Any]:
    keep = ("node", "model", "sampling", "endpoint", "finish_reason", "usage", "error")
    return {k: call.get(k) for k in keep}


def _recorded(trace: dict[str, Any]) -> dict[str, Any]:
    """What a trace records of the exchange and its scoring (ids and timings aside)."""
    keep = ("rewards", "metrics", "info", "ok", "stop_condition", "is_timeout", "errors", "is_completed")
    counts = ("num_input_tokens", "num_output_tokens", "num_total_tokens")
    return {
        "nodes": [_message(node) for node in trace["nodes"]],
        "parents": [node.get("parent") for node in trace["nodes"]],
        "calls": [_call(call) for call in trace["calls"]],
        **{k: trace.get(k) for k in (*keep, *counts)},
    }


def test_both_harnesses_send_the_same_chat_and_record_the_same_traces(fixture_runs: Any) -> None:
    """Same replies, same traces: message by message, call by call, reward by reward."""
    ours_run, null_run = fixture_runs(HARNESS_ID), fixture_runs(NULL_HARNESS_ID)
    (ours_dir, ours_requests), (null_dir, null_requests) = (
        (ours_run.run_dir, ours_run.requests),
        (null_run.run_dir, null_run.requests),
    )

    def chats(requests: list[dict]) -> list[tuple]:
        return sorted((r["model"], str(r["messages"])) for r in requests)

    assert chats(ours_requests) == chats(null_requests)
    ours = {t["task"]["key"]: t for e in read_episodes(ours_dir) for t in e["traces"]}
    null = {t["task"]["key"]: t for e in read_episodes(null_dir) for t in e["traces"]}
    assert sorted(ours) == sorted(null)
    for key in ours:
        assert [n["message"]["role"] for n in ours[key]["nodes"]] == ["system", "user", "assistant"], key
        assert _recorded(ours[key]) == _recorded(null[key]), key


class FaultyResponder:
    """Per prompt: ``flaky`` fails its first request with 503, ``bad`` always gets 400, ``slow`` answers after
    ``SLOW_S``; every other request gets a correct, well-formed reply."""

    def __init__(self, flaky: str, bad: str, slow: str) -> None:
        self.flaky, self.bad, self.slow = flaky, bad, slow
        self.seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        with self._lock:
            self.seen[prompt] = count = self.seen.get(prompt, 0) + 1
        if prompt == self.flaky and count == 1:
            raise ResponderError(503, "overloaded")
        if prompt == self.bad:
            raise ResponderError(400, "bad request", "invalid_request_error")
        if prompt == self.slow:
            time.sleep(SLOW_S)
        return Reply(f"{THINK}\\boxed{{E}}")


ROLLOUT_TIMEOUT_S = 30
"""The agent's rollout timeout in the faults run: every other rollout of that run must finish within it, so it is
generous (a loaded 2-core machine), and the slow reply outlasts it twice over."""
SLOW_S = 2.0 * ROLLOUT_TIMEOUT_S
V04 = verifiers_version() >= (0, 4)
"""verifiers 0.4 names a failed rollout's stop by its error and records an agent timeout as a timeout stop
(still scored); 0.3.x stops both as ``error``, the timeout as a ``HarnessError``."""


@pytest.mark.parametrize("harness", HARNESSES)
def test_faults_retries_and_timeouts(harness: str, questions: list[Any], tmp_path: Path) -> None:
    """A 503 is retried into a scored rollout; a 400 is the rollout's ProviderError; the agent's rollout
    timeout stops a reply that takes too long. The timeout case runs for the drugprot harness only: ``null``
    needs more than the timeout just to start its chat program on a loaded machine."""
    flaky, bad, slow = questions[:3]  # the first tasks, as vf-eval -n takes them
    responder = FaultyResponder(flaky.prompt, bad.prompt, slow.prompt)
    n = 3 if harness == HARNESS_ID else 2
    timeout = ["--env.agent.timeout.rollout", str(ROLLOUT_TIMEOUT_S)] if harness == HARNESS_ID else []
    with OpenAIServer(responder) as server:
        run_dir = run_vf_eval(
            "drugprot",
            server.base_url,
            tmp_path / "outputs",
            n=n,
            require_ok=False,
            extra_args=[*FIXTURE_ARGS, "--env.agent.harness.id", harness, *timeout],
        )
    traces = {t["task"]["key"]: t for e in read_episodes(run_dir) for t in e["traces"]}
    assert responder.seen[flaky.prompt] == 2
    assert responder.seen[bad.prompt] == 1  # the interception relays 400 as is: not retried

    retried = traces[flaky.key]
    assert (retried["ok"], retried["stop_condition"], retried["errors"]) == (True, "agent_completed", [])
    assert [(c.get("error") or {}).get("type") for c in retried["calls"]] == ["ProviderError", None]
    assert {k: v["score"] for k, v in retried["rewards"].items()} == {
        "accuracy": 1.0,
        "utility": 1.0 - (len(flaky.labels) - 1),  # one of its gold types named
        "format": 1.0,
    }

    failed = traces[bad.key]
    assert (failed["ok"], failed["stop_condition"]) == (False, "provider_error" if V04 else "error")
    assert [(e["type"], e["status_code"]) for e in failed["errors"]] == [("ProviderError", 400)]
    assert "bad request" in failed["errors"][0]["message"]

    if harness == HARNESS_ID:
        timed_out = traces[slow.key]
        assert timed_out["calls"] == []  # the call was still in flight: nothing committed
        if V04:
            stop = (timed_out["ok"], timed_out["is_timeout"], timed_out["stop_condition"])
            assert stop == (True, True, "agent_timeout")
            assert {k: v["score"] for k, v in timed_out["rewards"].items()} == {
                "accuracy": 0.0,
                "utility": -float(len(slow.labels)),  # no answer: every gold type a false negative
                "format": 0.0,
            }
        else:
            assert (timed_out["ok"], timed_out["stop_condition"]) == (False, "error")
            assert [(e["type"], e["message"]) for e in timed_out["errors"]] == [
                ("HarnessError", f"agent timeout: rollout exceeded its {ROLLOUT_TIMEOUT_S}s budget")
            ]


def box_lines(stderr: str) -> list[str]:
    """The text rows of the config-error box that pydantic_config prints (frame and padding removed)."""
    rows = [line for line in stderr.splitlines() if line.startswith("│") and line.endswith("│")]
    return [row[1:-1].strip() for row in rows]


def test_vf_eval_wrong_data_path_fails_with_our_message(tmp_path: Path) -> None:
    """A wrong ``--env.taskset.data-path`` is a config error: exit 1 before any rollout, our message printed last."""
    missing = tmp_path / "data" / "validation.parquet"
    with pytest.raises(DrugprotDataError) as expected:
        validate_source(TaskOptions(data_path=str(missing)))
    out = tmp_path / "outputs"
    argv = [str(script_path(v1_cli_name())), "drugprot", "-m", "trinity-mini", "-n", "1", "-o", str(out)]
    argv += ["--no-push", "--no-rich", "--env.taskset.data-path", str(missing)]
    if verifiers_version() < (0, 4):
        argv.append("--no-serve")
    env = {**os.environ, "COLUMNS": "2000", "NO_COLOR": "1"}  # one unwrapped row per message line
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stdout == ""
    assert proc.stderr.rstrip().splitlines()[-1].startswith("╰")  # the box closes the output
    assert box_lines(proc.stderr)[-2:] == ["--env.taskset", f"Value error, {expected.value}"]
    assert "Traceback" not in proc.stderr
    assert not list(out.glob("**/traces.jsonl"))  # no run was started
