"""Shared fixtures: the synthetic DrugProt fixture (``fixtures/``) in both real formats, and one real
``vf-eval`` run over it (:func:`fixture_run`) that every test reading a v1 run shares.

Also marks the slowest tests ``slow`` (see :data:`SLOW_TESTS`): each one runs a real CLI in a subprocess
(``vf-eval``, ``vf-validate``, ``drugprot demo``, a benchmark's quick mode, a wheel install). ``scripts/test.sh``
and CI run them; ``-m "not slow"`` leaves them out of a quick local loop.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from drugprot.tools.serve import Reply
from tests.fixtures import FIXTURE_JSONL, FIXTURE_TSV

REAL_SAMPLE_VAR = "DRUGPROT_REAL_SAMPLE"
"""Names the real 350-abstract training sample (never shipped): its tests and transcript blocks run only with it."""
SHARED_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "drugprot-train350.jsonl"
"""Where the sample lies for CI and a developer's checkout: ``shared/`` beside the repository. Found there, it is used
(the variable set for every test and every subprocess they start); ``DRUGPROT_REAL_SAMPLE=`` (empty) opts out."""
if REAL_SAMPLE_VAR not in os.environ and SHARED_SAMPLE.is_file():
    os.environ[REAL_SAMPLE_VAR] = str(SHARED_SAMPLE)

THINK = "<think>The abstract states how the chemical acts on the gene product.</think>\n"

FIXTURE_RUN_REPLIES: dict[str, tuple[str, Reply]] = {
    "90000001:T1:T2": ("correct", Reply(THINK + "\\boxed{K}")),  # gold {E, K}: right, finds SUBSTRATE only
    "90000001:T3:T4": ("wrong", Reply(THINK + "\\boxed{E}")),  # gold K
    "90000002:T5:T6": ("wrong", Reply(THINK + "\\boxed{I}")),  # gold F
    "90000003:T3:T4": ("no-box", Reply(THINK + "The answer is B.")),  # invalid
    "90000005:T1:T2": ("unterminated", Reply("<think>It blocks the receptor, so \\boxed{I}")),  # cut off: invalid
    "90000005:T3:T4": ("no-think", Reply("The answer is \\boxed{I}.")),  # gold I, but no reasoning: no answer
    "90000006:T1:T2": ("no-think", Reply("\\boxed{B}")),  # gold B, but no reasoning: no answer
    "90000006:T4:T6": ("two-boxes", Reply(THINK + "\\boxed{B} no, \\boxed{A}")),  # gold A: right (last box)
    "90000007:T6:T7": ("wrong", Reply(THINK + "\\boxed{K}")),  # gold L
    "90000008:T5:T6": ("wrong", Reply(THINK + "\\boxed{F}")),  # gold H
    "90000009:T4:T5": (
        "separate-reasoning",
        Reply("\\boxed{C}", reasoning_content="It binds the benzodiazepine site."),
    ),
}
"""The replies of the shared run (:func:`fixture_run`) that differ from ``THINK`` + the pair's first gold
letter (shape ``correct``): task key -> (reply shape, reply). The fixture's train split has 27 tasks."""


@dataclass(frozen=True)
class FixtureRun:
    """A finished ``vf-eval drugprot -n 27`` over the fixture's train split, and what it was sent."""

    run_dir: Path
    questions: list[Any]  # drugprot.core.question.Question, in task order
    replies: dict[str, Reply]  # task key -> the reply the server gave
    shapes: dict[str, str]  # task key -> reply shape (see FIXTURE_RUN_REPLIES)
    requests: list[dict[str, Any]]  # the chat-completions request bodies the server received


def make_fixture_run(harness: str, out: Path) -> FixtureRun:
    """One real v1 ``vf-eval`` (``eval`` on verifiers 0.3.x) with ``harness`` against a local
    :class:`OpenAIServer` that answers each task as ``FIXTURE_RUN_REPLIES`` says."""
    from drugprot.core.options import TaskOptions
    from drugprot.core.questions import load_questions
    from drugprot.tools.serve import OpenAIServer, scripted_responder

    from .e2e import run_vf_eval

    questions = load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL)))
    default = {q.key: ("correct", Reply(THINK + f"\\boxed{{{q.answers[0]}}}")) for q in questions}
    chosen = {q.key: FIXTURE_RUN_REPLIES.get(q.key, default[q.key]) for q in questions}
    script = {q.prompt: chosen[q.key][1] for q in questions}
    with OpenAIServer(scripted_responder(script)) as server:
        extra = ["--env.taskset.data-path", str(FIXTURE_JSONL), "--env.taskset.split", "train"]
        extra += ["--env.agent.harness.id", harness]
        run_dir = run_vf_eval("drugprot", server.base_url, out, n=len(questions), timeout=900, extra_args=extra)
        requests = server.chat_requests
    return FixtureRun(
        run_dir=run_dir,
        questions=questions,
        replies={key: reply for key, (_, reply) in chosen.items()},
        shapes={key: shape for key, (shape, _) in chosen.items()},
        requests=requests,
    )


@pytest.fixture(scope="session")
def fixture_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], FixtureRun]:
    """``fixture_runs(harness)``: the shared run made with that harness, run once per session on first use
    (a ``null`` run costs about a minute of CPU; the tests only read its outputs)."""
    runs: dict[str, FixtureRun] = {}

    def get(harness: str) -> FixtureRun:
        if harness not in runs:
            runs[harness] = make_fixture_run(harness, tmp_path_factory.mktemp(f"fixture-run-{harness}") / "outputs")
        return runs[harness]

    return get


@pytest.fixture(scope="session")
def fixture_run(fixture_runs: Callable[[str], FixtureRun]) -> FixtureRun:
    """The shared run with the pinned default harness (``drugprot``)."""
    from drugprot.envs.harness import HARNESS_ID

    return fixture_runs(HARNESS_ID)


SLOW_TESTS = frozenset(
    {
        # a real vf-eval (or the legacy one, or the demo that runs it) against drugprot.tools.serve; the first two
        # share one run (fixture_run), so either one alone still pays for it
        "test_e2e_v1.py::test_vf_eval_drugprot_end_to_end",
        "test_e2e_v1.py::test_both_harnesses_send_the_same_chat_and_record_the_same_traces",
        "test_e2e_v1.py::test_faults_retries_and_timeouts",
        "test_report.py::test_report_on_a_real_vf_eval_run",
        "test_curves_official.py::test_the_f1_curves_reads_is_the_reports_micro_f1_of_the_steps_rollouts",
        "test_curves_official.py::test_prime_rl_s_own_metric_classes_give_the_reports_micro_f1",
        "test_report.py::test_report_on_a_real_vf_eval_extraction_run",
        "test_report.py::test_report_on_a_legacy_vf_eval_extraction_run",
        "test_command.py::test_demo_end_to_end",
        "test_interrupt.py::test_sigint_stops_the_eval_cli_removes_its_run_and_prints_one_line",
        "test_command.py::test_the_hub_user_path_serve_vf_eval_report",
        # every transcript the docs show, regenerated (the demo, drugprot curves) and compared
        "test_transcripts.py::test_the_shown_transcripts_are_what_the_commands_print_now",
        "test_legacy.py::test_legacy_vf_eval_end_to_end",
        # vf-replay over a real run, and a run with a replaced system prompt, compared by drugprot report
        "test_replay.py::test_replay_rescores_with_the_given_costs_and_its_report_keeps_the_source_setting",
        # vf-gepa with student and teacher as local servers, then a vf-eval run with its result
        "test_gepa.py::test_vf_gepa_adopts_the_teachers_prompt_and_a_run_with_it_records_it",
        "test_configs.py::test_eval_config_dry_run",
        "test_configs.py::test_extraction_eval_toml_dry_run",
        "test_extraction.py::test_vf_eval_in_extraction_mode",
        "test_extraction.py::test_legacy_vf_eval_in_extraction_mode",
        "test_configs.py::test_readme_v1_command_dry_run",
        # verifiers' own model-free checker (vf-validate; validate on 0.3.x) over the fixture
        "test_validate.py::test_validate_passes_on_the_fixture_without_a_prime_login",
        "test_validate.py::test_without_the_subprocess_runtime_it_asks_for_a_prime_login",
        # the benchmarks' quick modes, each in its own interpreter
        "test_bench_smoke.py::test_build_quick",
        "test_bench_smoke.py::test_score_quick",
        "test_bench_smoke.py::test_pipeline_quick",
        "test_bench_smoke.py::test_pipeline_harnesses_quick",
        # uv build + a clean venv
        "test_packaging.py::test_wheel_installs_and_imports_in_a_clean_venv",
    }
)
"""``<file name>::<test function>`` (all parametrizations) of the tests marked ``slow``."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Runs before -k/-m deselect anything, so every test of a collected file is seen here.
    collected = set()
    for item in items:  # every parametrization of a slow test
        key = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        collected.add(key)
        if key in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    # A file name counts once every test file of that name was collected (tests/core and tests/envs both
    # have a test_extraction.py): running one of them alone must not call the other's keys stale.
    in_tree = Counter(path.name for path in Path(__file__).parent.rglob("test_*.py"))
    seen = Counter(path.name for path in {item.path for item in items})
    files = {name for name, count in seen.items() if count == in_tree[name]}
    whole_files = not any("::" in arg for arg in config.args)  # no single test picked on the command line
    stale = sorted(key for key in SLOW_TESTS if key.split("::")[0] in files and key not in collected)
    if whole_files and stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {stale}; update it")


@pytest.fixture(scope="session")
def fixture_jsonl() -> Path:
    return FIXTURE_JSONL


@pytest.fixture(scope="session")
def fixture_tsv() -> Path:
    return FIXTURE_TSV
