"""``drugprot serve`` and the hub user's path without a model: serve the lexical baseline, run the real eval CLI
against it, report the run (``drugprot.tools.serve.command``)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from drugprot.tools.cli import main as cli_main
from tests.e2e import run_vf_eval
from tests.fixtures import FIXTURE_JSONL


def test_serve_refuses_bad_options_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["serve", "--negatives", "all"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "drugprot serve: error: --data-path, --negatives, --temperature and --seed set the answers of --baseline; add "
        "--baseline lexical"
    ]
    assert cli_main(["serve", "--temperature", "0.5"]) == 2
    assert "add --baseline lexical" in capsys.readouterr().err
    for bad in ("-1", "nan", "101"):
        assert cli_main(["serve", "--baseline", "lexical", "--temperature", bad]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"drugprot serve: error: --temperature must be a number from 0 to 100, got {float(bad)}"
        ]
    for seed in ("0", "7"):  # at temperature 0 nothing is drawn: a seed would be silently ignored
        assert cli_main(["serve", "--baseline", "lexical", "--seed", seed, "--data-path", "no-such-file.jsonl"]) == 2
        assert capsys.readouterr().err.splitlines() == [
            "drugprot serve: error: --seed seeds the draws of --temperature; at --temperature 0 every answer is the "
            "lexical one and nothing is drawn: add --temperature T (above 0) or leave --seed out"
        ]
    missing = "no-such-file.jsonl"
    assert cli_main(["serve", "--baseline", "lexical", "--data-path", missing]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"drugprot serve: error: no such file or directory: {missing};")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "99999"], "--port must be a whole number from 0 (any free port) to 65535, got 99999"),
        (["--port", "-1"], "--port must be a whole number from 0 (any free port) to 65535, got -1"),
        (
            ["--chunk-size", "-3"],
            "--chunk-size must be at least 1 character, or 0 / None for the whole text in one delta, got -3",
        ),
        (["--delay", "-1"], "--delay must be from 0 to 86400 seconds, got -1.0"),
        (["--delay", "nan"], "--delay must be from 0 to 86400 seconds, got nan"),
        (["--body-timeout", "0"], "--body-timeout must be above 0 and at most 86400 seconds, got 0.0"),
        (["--body-timeout", "inf"], "--body-timeout must be above 0 and at most 86400 seconds, got inf"),
        (["--header-timeout", "nan"], "--header-timeout must be above 0 and at most 86400 seconds, got nan"),
        (["--max-body-bytes", "-1"], "--max-body-bytes must be >= 0, got -1"),
        (["--limit-concurrency", "1"], "--limit-concurrency must be a whole number >= 2, got 1"),
    ],
)
def test_serve_refuses_a_setting_the_server_would_refuse_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's own rules (``check_settings``), checked before any data is read (``--baseline`` included)."""
    assert cli_main(["serve", "--baseline", "lexical", "--data-path", "no-such-file.jsonl", *argv]) == 2
    assert capsys.readouterr().err.splitlines() == [f"drugprot serve: error: {message}"]


def test_serve_on_a_port_in_use_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    import errno
    import os
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli_main(["serve", "--port", str(port), "--reply", "x"]) == 2
    in_use = f"[Errno {errno.EADDRINUSE}] {os.strerror(errno.EADDRINUSE)}"
    assert capsys.readouterr().err.splitlines() == [f"drugprot serve: error: {in_use}"]


def test_serve_exits_130_on_ctrl_c_like_every_command() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "drugprot.tools.cli", "serve", "--port", "0", "--reply", "x"],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None
    try:
        assert server.stderr.readline().startswith("serving http://127.0.0.1:")
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=300) == 130  # the timeout is a bound against a hang only
    assert server.stderr.read() == "drugprot serve: interrupted\n"
    server.stderr.close()


def test_the_hub_user_path_serve_vf_eval_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/index.md's commands: the served baseline scores in the report exactly as the offline baseline does."""
    server = subprocess.Popen(
        [sys.executable, "-m", "drugprot.tools.cli", "serve", "--baseline", "lexical", "--port", "0"]
        + ["--data-path", str(FIXTURE_JSONL), "--split", "validation", "--negatives", "all"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert line.startswith("serving http://127.0.0.1:") and line.endswith(" (Ctrl-C to stop)\n")
        run_dir = run_vf_eval(
            "drugprot",
            line.split()[1],
            tmp_path / "outputs",
            model="drugprot-lexical-baseline",
            n=12,
            extra_args=["--env.taskset.data-path", str(FIXTURE_JSONL), "--env.taskset.negatives", "all"],
        )
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=300) == 130  # Ctrl-C: exit 130, as every command
        if server.stderr:
            server.stderr.close()
    assert cli_main(["report", str(run_dir), "--json", "--bootstrap", "0"]) == 0
    served = json.loads(capsys.readouterr().out)
    argv = ["baseline", "lexical", "--data-path", str(FIXTURE_JSONL), "--negatives", "all", "--num-tasks", "12"]
    assert cli_main([*argv, "--json", "--bootstrap", "0"]) == 0
    offline = json.loads(capsys.readouterr().out)
    assert (served["n_tasks"], served["run"]["model"]) == (12, "drugprot-lexical-baseline")
    for key in ("accuracy", "micro_precision", "micro_recall", "micro_f1", "per_class"):
        assert served[key] == offline[key], key
