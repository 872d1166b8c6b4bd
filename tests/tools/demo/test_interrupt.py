"""A Ctrl-C in ``drugprot demo``: the eval CLI it started stops (its whole process group), no run that looks like a
result is left, one line is printed, exit 130 (``drugprot.tools.demo.eval_cli.run_cli``, ``runner.run_demo``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drugprot.core.outputs import EXIT_INTERRUPTED
from drugprot.tools.cli import main as cli_main
from drugprot.tools.demo import runner

INTERRUPTED_LINE = "drugprot demo: interrupted; the eval CLI was stopped and its unfinished run removed"
WAIT_SECONDS = 300.0
"""An upper bound for a state to arrive on a loaded machine; the tests wait for events, not for time."""


def processes_naming(text: str) -> list[int]:
    """The pids of the live (not zombie) processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for(predicate, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_SECONDS
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find the eval CLI's processes")
def test_sigint_stops_the_eval_cli_removes_its_run_and_prints_one_line(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    out.mkdir()
    (out / "earlier").mkdir()  # what was there before stays
    demo = subprocess.Popen(
        [sys.executable, "-m", "drugprot.tools.cli", "demo", "--output-dir", str(out), "--all", "--timeout", "900"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The eval CLI is the process whose arguments name the run's output folder (-o OUT); the demo itself names
        # it as --output-dir.
        wait_for(lambda: [pid for pid in processes_naming(str(out)) if pid != demo.pid], "the eval CLI to start")
        (child,) = [pid for pid in processes_naming(str(out)) if pid != demo.pid]
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        assert cmdline[cmdline.index(b"-m") + 1] == b"drugprot-lexical-baseline"  # the eval CLI, asking the baseline
        assert os.getpgid(child) == child  # its own process group: the terminal's Ctrl-C reaches the demo alone
        # Freeze the eval CLI's group first, so that it cannot finish its rollouts between being seen and the Ctrl-C
        # on a loaded machine: the interrupt always lands mid-run (the demo's SIGKILL ends a stopped group).
        os.killpg(child, signal.SIGSTOP)
        demo.send_signal(signal.SIGINT)
        stdout, stderr = demo.communicate(timeout=WAIT_SECONDS)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert demo.returncode == EXIT_INTERRUPTED == 130
    lines = stderr.splitlines()
    assert lines[-1] == INTERRUPTED_LINE
    assert lines[0].startswith("drugprot demo: serving the lexical baseline")  # the banner, then progress lines only
    assert all(line.startswith("[") for line in lines[1:-1]), lines
    assert "Traceback" not in stderr and stdout == ""
    assert processes_naming(str(out)) == []  # the eval CLI and everything it started are gone
    assert sorted(p.name for p in out.iterdir()) == ["earlier"]  # no run directory, no log


def test_a_timeout_stops_the_whole_group_names_the_log_and_leaves_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stand-in CLI that starts a grandchild, writes a half run directory, prints, then hangs."""
    marker = f"drugprot-timeout-grandchild-{os.getpid()}"
    script = (
        "import os, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {marker!r}])\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        "os.makedirs(os.path.join(out, 'drugprot--drugprot-lexical-baseline--drugprot--abc'))\n"
        "open(os.path.join(out, 'drugprot--drugprot-lexical-baseline--drugprot--abc', 'traces.jsonl'), 'w').close()\n"
        "print('loading the environment', flush=True)\n"
        "time.sleep(120)\n"
    )
    monkeypatch.setattr(runner, "eval_command", lambda: [sys.executable, "-c", script])
    assert cli_main(["demo", "--output-dir", str(tmp_path), "--timeout", "3"]) == 2
    err = capsys.readouterr().err.splitlines()
    (log,) = tmp_path.iterdir()  # the log stays where the run was to go; the half-written run directory is gone
    assert log.name.startswith("drugprot-demo-") and log.read_text() == "loading the environment\n"
    assert err[-1] == (
        f"drugprot demo: error: the eval CLI did not finish in 3 s and was stopped; log: {log} (24 bytes)"
    )
    assert " s] stopped: rollouts " in err[-2]  # the progress display does not claim the run finished
    assert processes_naming(marker) == []  # the grandchild went with its group


def test_a_ctrl_c_elsewhere_in_a_command_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from drugprot.evaluation import report

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "run", interrupted)
    assert cli_main(["report", "somewhere"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err.splitlines() == ["drugprot report: interrupted"]


def test_a_missing_matplotlib_stops_the_demo_before_any_work(tmp_path: Path) -> None:
    """``--plot`` without matplotlib: refused before the banner and the eval CLI, with the install that fits."""
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from drugprot.tools.cli import main\n"
        f"sys.exit(main(['demo', '--output-dir', {str(tmp_path / 'runs')!r}, '--plot', {str(tmp_path / 'c.png')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT_SECONDS)
    from drugprot.core.extras import install_hint

    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"drugprot demo: error: --plot needs matplotlib (the drugprot[report] extra): {install_hint('report')}"
    ]
    assert not (tmp_path / "runs").exists() and not (tmp_path / "c.png").exists()


def test_a_ctrl_c_while_scoring_says_the_finished_run_is_kept_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The eval CLI finished (its run written whole); a Ctrl-C in the report that follows keeps the run and says
    where, with the command that reports it: one line, exit 130."""
    from drugprot.evaluation.runs import load_run
    from drugprot.tools.demo import command
    from drugprot.tools.demo.sample_run import SampleRun
    from tests.evaluation.traces import episode, trace, write_run

    run_dir = write_run(
        tmp_path / "runs" / "drugprot--m--drugprot--abc", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))] * 2
    )
    kept = sorted(p.name for p in run_dir.rglob("*"))
    finished = runner.DemoRun(load_run(run_dir), SampleRun(10, 43, 2, 2), ["vf-eval"], 1.0, 1.0)
    monkeypatch.setattr(command, "run_demo", lambda *args, **kwargs: finished)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "summarize", interrupted)
    assert cli_main(["demo", "--output-dir", str(tmp_path / "runs"), "-n", "2", "--bootstrap", "0"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"drugprot demo: interrupted while scoring; the finished run of 2 rollouts is kept in {run_dir}; report it "
        f"with: drugprot report {run_dir} --bootstrap 0 [--plot PNG] [--plot-classes PNG] [--json]"
    )
    assert sorted(p.name for p in run_dir.rglob("*")) == kept  # the run, untouched
