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
    assert cli_main(["serve", "--body-timeout", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "drugprot serve: error: --max-body-bytes must be >= 0 and --body-timeout > 0 seconds, got 16777216 and 0.0"
    ]
    missing = "no-such-file.jsonl"
    assert cli_main(["serve", "--baseline", "lexical", "--data-path", missing]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"drugprot serve: error: no such file or directory: {missing};")


def test_the_hub_user_path_serve_vf_eval_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's commands: the served baseline scores in the report exactly as the offline baseline does."""
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
        assert server.wait(timeout=300) == 0  # Ctrl-C is a server's normal end
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
