"""End to end: the real v1 eval CLI runs drugprot on the fixture against a local streaming OpenAI server.

``vf-eval drugprot -m trinity-mini --client.base-url http://127.0.0.1:<port>/v1`` (``eval`` on verifiers
0.3.x) goes through verifiers' null harness, interception server and scoring; the server answers each task
with a scripted reply, and the rewards are read back from the run's ``traces.jsonl``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from drugprot.errors import DrugprotDataError
from drugprot.questions import TaskOptions, load_questions, validate_source
from drugprot.serve import OpenAIServer, Reply, scripted_responder

from .conftest import FIXTURE_JSONL
from .e2e import read_episodes, run_vf_eval, script_path, trace_results, v1_cli_name, verifiers_version

THINK = "<think>The abstract describes the chemical acting on the gene product.</think>"

# Reply shapes cycled over the fixture's 27 tasks: (name, reply builder(gold letter, wrong letter), acc, fmt)
SHAPES = [
    ("correct", lambda g, w: Reply(f"{THINK}\n\\boxed{{{g}}}"), 1.0, 1.0),
    ("wrong", lambda g, w: Reply(f"{THINK}\n\\boxed{{{w}}}"), 0.0, 1.0),
    ("separate-reasoning", lambda g, w: Reply(f"\\boxed{{{g}}}", reasoning_content="It inhibits."), 1.0, 1.0),
    ("no-think", lambda g, w: Reply(f"The answer is \\boxed{{{g}}}."), 1.0, 0.0),
    ("unterminated", lambda g, w: Reply(f"<think>Let me think about \\boxed{{{g}}}"), 0.0, 0.0),
    ("two-boxes", lambda g, w: Reply(f"{THINK}\\boxed{{{w}}} no, \\boxed{{{g}}}"), 1.0, 0.0),
    ("no-box", lambda g, w: Reply(f"{THINK}The answer is {g}."), 0.0, 0.0),
]


def test_vf_eval_drugprot_end_to_end(tmp_path: Path) -> None:
    options = TaskOptions(split="train", data_path=str(FIXTURE_JSONL))
    questions = load_questions(options)
    assert len(questions) == 27
    script, expected = {}, {}
    for i, q in enumerate(questions):
        name, build, acc, fmt = SHAPES[i % len(SHAPES)]
        gold = q.answers[0]
        wrong = "A" if gold != "A" else "B"
        script[q.prompt] = build(gold, wrong)
        expected[q.key] = (name, acc, fmt)

    with OpenAIServer(scripted_responder(script)) as server:
        run_dir = run_vf_eval(
            "drugprot",
            server.base_url,
            tmp_path / "outputs",
            model="trinity-mini",
            n=27,
            extra_args=["--env.taskset.data-path", str(FIXTURE_JSONL), "--env.taskset.split", "train"],
        )
        requests = server.chat_requests

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
        invalid = name in ("unterminated", "no-box")
        assert (r.info["drugprot"]["letter"] is None) is invalid, (key, name)
    assert sum(r.rewards["accuracy"] for r in results) == sum(e[1] for e in expected.values()) == 16.0
    assert sum(r.rewards["format"] for r in results) == sum(e[2] for e in expected.values()) == 12.0
    # task data travels on the trace for the report: ids and all gold labels of the multi-label pair
    multi = by_key["90000001:T1:T2"]
    assert (multi.task_data["pmid"], multi.task_data["arg1"], multi.task_data["arg2"]) == ("90000001", "T1", "T2")
    assert multi.task_data["labels"] == ["INHIBITOR", "SUBSTRATE"]


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
