"""verifiers' own tools on drugprot, end to end through a real local model server (``drugprot.tools.serve``).

``vf-replay RUN --env.taskset.fp-cost 0.35`` re-scores a real run's saved traces offline with the costs it is
given (``DrugprotTaskConfig``), records them in every trace and keeps the source run's setting; ``drugprot report``
on the replay reads the model, split and negatives from its rollouts (``drugprot.evaluation.replays``). A run made
with ``--env.taskset.system-prompt FILE`` (how a ``vf-gepa`` result is used) records the system prompt it sent,
and ``drugprot report A B`` says the two runs' prompts differ.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from drugprot.core.rewards import Costs
from drugprot.core.scoring import score_reply
from drugprot.core.versions import digest
from drugprot.evaluation.runs import load_run
from drugprot.tools.serve import OpenAIServer, fixed_responder
from tests.conftest import FIXTURE_JSONL
from tests.e2e import _child_env, _run, read_episodes, run_vf_eval, script_path, verifiers_version

REPLY = "<think>It inhibits it.</think>\\boxed{E}"
"""Every reply: INHIBITOR, right on some pairs, a false positive on the others."""
KNOBS = ["--env.taskset.split", "train", "--env.taskset.data-path", str(FIXTURE_JSONL)]
KNOBS += ["--env.taskset.negatives", "all"]

needs_04 = pytest.mark.skipif(verifiers_version() < (0, 4), reason="vf-replay is verifiers 0.4's console script")


def _traces(run_dir: Path) -> list[dict]:
    return [trace for episode in read_episodes(run_dir) for trace in episode["traces"]]


@needs_04
def test_replay_rescores_with_the_given_costs_and_its_report_keeps_the_source_setting(tmp_path: Path) -> None:
    with OpenAIServer(fixed_responder(REPLY)) as server:
        run_dir = run_vf_eval("drugprot", server.base_url, tmp_path / "outputs", n=5, extra_args=KNOBS)
        custom = tmp_path / "optimised.txt"
        custom.write_text("Answer with one boxed letter.", encoding="utf-8")
        gepa_run = run_vf_eval(
            "drugprot", server.base_url, tmp_path / "outputs", n=5,
            extra_args=[*KNOBS, "--env.taskset.system-prompt", str(custom)],
        )  # fmt: skip
    replay = tmp_path / "replay"
    argv = [str(script_path("vf-replay")), str(run_dir), "--env.taskset.fp-cost", "0.35", "--no-rich", "-o"]
    _run([*argv, str(replay)], env=_child_env("unused", None), cwd=tmp_path, timeout=300)

    source, rescored = _traces(run_dir), _traces(replay)
    assert sorted(t["task"]["key"] for t in rescored) == sorted(t["task"]["key"] for t in source)
    false_positives = 0
    for trace in rescored:
        data = trace["task"]["data"]
        score = score_reply(REPLY, None, data["labels"], with_no_relation=data["with_no_relation"])
        false_positives += score.fp
        # 0.35 runs, and is recorded, as 22/64 = 0.34375 (the 1/64 reward grid)
        assert trace["rewards"]["utility"]["score"] == score.tp - 0.34375 * score.fp - 1.0 * score.fn
        reward = trace["info"]["drugprot"]["versions"]["reward"]
        assert (reward["fp_cost"], reward["fn_cost"], reward["threshold"]) == (0.34375, 1.0, Costs(0.35, 1.0).threshold)
        assert data["fp_cost"] == 0.5  # the task data keeps what the source run was made with
    assert false_positives > 0  # the costs were tested: some reply is a false positive
    for trace in source:
        assert trace["info"]["drugprot"]["versions"]["reward"]["fp_cost"] == 0.5
    saved = json.loads((replay / "configs" / "resolved" / "replay.json").read_text())["taskset"]
    assert (saved["fp_cost"], saved["negatives"], saved["split"], saved["task"]["fp_cost"]) == (
        0.34375,
        "all",
        "train",
        0.34375,
    )

    report = load_run(replay)
    assert report.source == "vf-replay traces.jsonl (re-scored)"
    config = report.config
    assert (config.model, config.split, config.negatives, config.data_path) == (
        "trinity-mini", "train", "all", str(FIXTURE_JSONL)
    )  # fmt: skip

    # the system prompt a run sent is in its record, and a comparison says the prompts differ
    sent = {t["info"]["drugprot"]["prompts"]["system"] for t in _traces(gepa_run)}
    assert sent == {digest("Answer with one boxed letter.")}
    assert {t["info"]["drugprot"]["prompts"]["standard_system"] for t in _traces(gepa_run)} == {False}
    assert {t["info"]["drugprot"]["prompts"]["standard_system"] for t in source} == {True}
    done = subprocess.run(
        [str(script_path("drugprot")), "report", str(run_dir), str(gepa_run)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stdout.splitlines() if "note: the runs differ in" in line]
    system = digest("Answer with one boxed letter.")
    assert notes == [f"  note: the runs differ in prompt (prompt [1] 1, [2] 1 · system {system}): compare with care"]
