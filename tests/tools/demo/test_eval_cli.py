"""verifiers' v1 eval CLI as the demo finds and calls it (``drugprot.tools.demo.eval_cli``)."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from drugprot.tools.demo import DemoError, eval_cli
from tests.e2e import script_path, v1_cli_name
from tests.tools.demo import SAMPLE_LABEL


def _entry_points(*points: EntryPoint):
    return lambda group: list(points) if group == "console_scripts" else []


def test_the_eval_cli_is_the_v1_script_next_to_this_python() -> None:
    assert eval_cli.eval_command() == [str(script_path(v1_cli_name()))]


def test_the_v1_entry_point_is_found_by_its_target_and_vf_eval_preferred(monkeypatch: pytest.MonkeyPatch) -> None:
    points = (
        EntryPoint("vf-legacy", "verifiers.scripts.eval:main", "console_scripts"),
        EntryPoint("eval", "verifiers.v1.cli.eval.main:main", "console_scripts"),
        EntryPoint("vf-eval", "verifiers.v1.cli.eval.main : main", "console_scripts"),
    )
    monkeypatch.setattr(eval_cli, "entry_points", _entry_points(*points))
    assert eval_cli.eval_command() == [str(Path(sys.executable).parent / "vf-eval")]


def test_without_the_script_file_it_runs_the_entry_point_through_this_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    point = EntryPoint("drugprot-no-such-eval", eval_cli.EVAL_ENTRY_POINT, "console_scripts")
    monkeypatch.setattr(eval_cli, "entry_points", _entry_points(point))
    monkeypatch.setenv("PATH", "")
    assert eval_cli.eval_command() == [
        sys.executable,
        "-c",
        "import sys; sys.argv[0] = 'drugprot-no-such-eval'; from verifiers.v1.cli.eval.main import main; "
        "sys.exit(main())",
    ]


def test_no_v1_eval_cli_is_a_demo_error_saying_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval_cli, "entry_points", _entry_points())
    with pytest.raises(DemoError) as excinfo:
        eval_cli.eval_command()
    assert str(excinfo.value) == "no verifiers v1 eval CLI is installed: pip install 'verifiers>=0.3.1.dev59,<0.5'"


def test_the_eval_arguments() -> None:
    args = eval_cli.eval_arguments(
        "http://127.0.0.1:1/v1", Path("s.jsonl"), Path("out"), num_tasks=3, data_label=SAMPLE_LABEL, in_process=True
    )
    assert args == [
        "drugprot",
        "-m",
        "drugprot-lexical-baseline",
        "--client.base-url",
        "http://127.0.0.1:1/v1",
        "--client.api-key-var",
        "DRUGPROT_DEMO_API_KEY",
        "--no-push",
        "--no-rich",
        "-r",
        "1",
        "-o",
        "out",
        "--env.taskset.data-path",
        "s.jsonl",
        "--env.taskset.negatives",
        "all",
        "--env.taskset.data-label",
        SAMPLE_LABEL,
        "-n",
        "3",
        "--no-serve",
    ]


def test_the_default_eval_arguments_take_every_task_in_env_workers() -> None:
    args = eval_cli.eval_arguments("http://h/v1", Path("s.jsonl"), Path("out"), rollouts=2, negatives="0")
    assert args[9:] == ["-r", "2", "-o", "out", "--env.taskset.data-path", "s.jsonl", "--env.taskset.negatives", "0"]


@pytest.mark.parametrize(("installed", "in_process"), [("0.3.1", True), ("0.3.1.dev59", True), ("0.4.0", False)])
def test_only_verifiers_0_3_serves_env_workers(
    monkeypatch: pytest.MonkeyPatch, installed: str, in_process: bool
) -> None:
    monkeypatch.setattr(eval_cli, "version", lambda name: installed)
    assert eval_cli.serves_env_workers() is in_process
