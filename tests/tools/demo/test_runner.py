"""One demo run when the eval CLI fails or hangs (``drugprot.tools.demo.runner``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from drugprot.tools.cli import main as cli_main
from drugprot.tools.demo import runner


def test_demo_failure_is_reported_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runner, "eval_command", lambda: ["false"])
    assert cli_main(["demo", "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "drugprot demo: error: the eval CLI failed (exit 1): false drugprot -m" in err
    (log,) = tmp_path.iterdir()  # no run directory was made: the log stays where the run was to go, and is named
    assert log.name.startswith("drugprot-demo-") and err.rstrip().endswith(f"log: {log}")


def test_demo_timeout_stops_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runner, "eval_command", lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    assert cli_main(["demo", "--output-dir", str(tmp_path), "--timeout", "1"]) == 2
    assert "the eval CLI did not finish in 1 s" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [(["-n", "0"], "got 1 and 0"), (["-r", "0"], "got 0 and 22")])
def test_an_empty_run_is_refused_before_the_banner_and_the_eval_cli(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    started: list[list[str]] = []
    monkeypatch.setattr(runner, "run_cli", lambda cmd, *args: started.append(cmd) or 0)
    assert cli_main(["demo", "--output-dir", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"drugprot demo: error: --rollouts and --num-tasks must be at least 1, {message}"]  # no banner
    assert started == []
