"""The ``drugprot`` command: each subcommand's own parser reports its errors (``drugprot.tools.cli``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.tools.cli import COMMANDS
from drugprot.tools.cli import main as cli_main


@pytest.mark.parametrize("command", ["report", "baseline", "curves", "demo"])
def test_an_unknown_flag_is_the_subcommand_s_error(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = {"report": ["r1"], "baseline": ["lexical"], "curves": ["r1"], "demo": []}[command]
    with pytest.raises(SystemExit) as exit_info:
        cli_main([command, *argv, "--foo", "x"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"usage: drugprot {command} ")
    assert err[-1] == f"drugprot {command}: error: unrecognized arguments: --foo x"


def test_every_subcommand_is_listed_once() -> None:
    assert list(COMMANDS) == ["report", "baseline", "curves", "demo", "serve", "adapter", "predict"]


def test_demo_refuses_more_tasks_than_the_sample_has_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["demo", "-n", "1000"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "drugprot demo: error: -n 1000 is more than the 43 tasks the sample has with negatives=all: give -n 43 or "
        "less, or --all"
    ]
    assert cli_main(["demo", "-n", "1000", "--negatives", "0"]) == 2
    assert "the 30 tasks the sample has with negatives=0" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "baseline", "curves"])
def test_a_missing_matplotlib_is_refused_before_any_reading(
    command: str, tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The picture's needs are checked with the other options, before a run or data set is read or scored."""
    import sys

    from drugprot.core.extras import install_hint
    from tests.evaluation.traces import multilabel_run

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    sample = Path(__file__).parents[2] / "environments/drugprot/drugprot/tools/sample/synthetic-prime-rl-run"
    curves_sample = str(sample)
    target = {"report": [str(multilabel_run(tmp_path))], "baseline": ["lexical"], "curves": [curves_sample]}
    assert cli_main([command, *target[command], "--plot", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"drugprot {command}: error: --plot needs matplotlib (the drugprot[report] extra): {install_hint('report')}"
    ]
