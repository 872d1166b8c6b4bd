"""``vf-gepa`` on drugprot end to end, student and teacher both real local servers (``drugprot.tools.serve``).

The student answers each task's gold letter under the system prompt the teacher proposes and a wrong letter
under drugprot's own, so GEPA must adopt the proposal. A ``vf-eval`` run with the result
(``--env.taskset.system-prompt best_system_prompt.txt``, how a ``vf-gepa`` result is used) records the system
prompt it sent, and ``drugprot report`` shows it beside the prompt version.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.versions import digest
from drugprot.tools.serve import OpenAIServer, Reply, fixed_responder, last_user_text
from tests.conftest import FIXTURE_JSONL
from tests.e2e import API_KEY_VAR, _child_env, _run, read_episodes, run_vf_eval, script_path, verifiers_version

PROPOSED = "You are a careful curator: name the one relation the abstract states, as one boxed letter."
KNOBS = ["--env.taskset.split", "train", "--env.taskset.data-path", str(FIXTURE_JSONL)]


@pytest.mark.skipif(verifiers_version() < (0, 4), reason="vf-gepa is verifiers 0.4's console script")
def test_vf_gepa_adopts_the_teachers_prompt_and_a_run_with_it_records_it(tmp_path: Path) -> None:
    gold = {q.prompt: q.answers[0] for q in load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL)))}

    def student(body: dict[str, Any]) -> Reply:
        system = next((m.get("content") for m in body["messages"] if m.get("role") == "system"), None)
        letter = gold[last_user_text(body)] if system == PROPOSED else "Z"
        return Reply(f"<think>The abstract says so.</think>\\boxed{{{letter}}}")

    teacher = fixed_responder(f"```\n{PROPOSED}\n```")
    with OpenAIServer(student) as model, OpenAIServer(teacher) as reflection:
        argv = [str(script_path("vf-gepa")), "drugprot", "-m", "trinity-mini", "-n", "6", "--num-train", "3"]
        argv += ["--num-val", "3", "--max-total-rollouts", "24", "-o", str(tmp_path / "gepa")]
        argv += ["--client.base-url", model.base_url, "--client.api-key-var", API_KEY_VAR]
        argv += ["--reflection-model", "teacher", "--reflection-client.base-url", reflection.base_url]
        argv += ["--reflection-client.api-key-var", API_KEY_VAR, *KNOBS]
        _run(argv, env=_child_env("sk-local", None), cwd=tmp_path, timeout=400)
        (best,) = (tmp_path / "gepa").glob("*/best_system_prompt.txt")
        assert best.read_text(encoding="utf-8").strip() == PROPOSED
        run_dir = run_vf_eval(
            "drugprot", model.base_url, tmp_path / "outputs", n=4, api_key="sk-local",
            extra_args=[*KNOBS, "--env.taskset.system-prompt", str(best)],
        )  # fmt: skip
    traces = [t for e in read_episodes(run_dir) for t in e["traces"]]
    assert {t["rewards"]["accuracy"]["score"] for t in traces} == {1.0}  # the student saw the proposed prompt
    sent = best.read_text(encoding="utf-8")
    assert {t["info"]["drugprot"]["prompts"]["system"] for t in traces} == {digest(sent)}
    assert {t["info"]["drugprot"]["prompts"]["standard_system"] for t in traces} == {False}
    done = subprocess.run(
        [str(script_path("drugprot")), "report", str(run_dir)], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"prompt 1 · system {digest(sent)} |" in done.stdout, done.stdout
