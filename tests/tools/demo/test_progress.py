"""The rollout count shown while the eval CLI runs (``drugprot.tools.demo.progress``)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from drugprot.tools import demo

# ------------------------------------------------------------------------------------------- progress


@pytest.mark.parametrize(
    ("done", "total", "seconds", "phase", "line"),
    [
        (0, 22, 0.0, "starting vf-eval", "[   0.0 s] starting vf-eval: rollouts 0/22 done (0%)"),
        (13, 22, 8.14, "running", "[   8.1 s] running: rollouts 13/22 done (59%)"),
        (22, 22, 31.25, "finished", "[  31.2 s] finished: rollouts 22/22 done (100%)"),
        (0, 0, 1.0, "running", "[   1.0 s] running: rollouts 0/0 done"),
        (3, 22, 1234.5, "running", "[1234.5 s] running: rollouts 3/22 done (14%)"),
    ],
)
def test_the_progress_line(done: int, total: int, seconds: float, phase: str, line: str) -> None:
    assert demo.progress_line(done, total, seconds, phase) == line


@pytest.mark.parametrize(
    ("run_started", "done", "total", "final", "phase"),
    [
        (False, 0, 22, False, "starting vf-eval"),
        (True, 0, 22, False, "running"),
        (True, 21, 22, False, "running"),
        (True, 22, 22, False, "vf-eval finishing"),
        (True, 22, 22, True, "finished"),
        (False, 0, 22, True, "finished"),
        (True, 0, 0, False, "running"),
    ],
)
def test_the_phase_follows_the_run_file(run_started: bool, done: int, total: int, final: bool, phase: str) -> None:
    assert demo.progress_phase(run_started, done, total, final=final) == phase


@pytest.mark.parametrize(
    ("done", "total", "step"),
    [(0, 22, 0), (5, 22, 0), (6, 22, 1), (11, 22, 2), (21, 22, 3), (22, 22, 4), (30, 22, 4), (0, 0, 4)],
)
def test_the_progress_step_is_the_quarter_reached(done: int, total: int, step: int) -> None:
    assert demo.progress_step(done, total) == step


def test_count_lines_counts_complete_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    assert demo.count_lines(path) == 0
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')
    assert demo.count_lines(path) == 2


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def grow(run_file: Path, lines: int) -> None:
    with run_file.open("a", encoding="utf-8") as handle:
        handle.write("{}\n" * lines)


def test_progress_counts_the_new_run_s_traces_a_line_per_phase_and_quarter_without_a_terminal(tmp_path: Path) -> None:
    """The display reads only the run that appeared after it started (an older run in the folder is not counted)."""
    (tmp_path / "old-run").mkdir()
    grow(tmp_path / "old-run" / "traces.jsonl", 5)
    before = set(tmp_path.glob("*/traces.jsonl"))
    stream, clock = io.StringIO(), Clock()
    progress = demo.Progress(tmp_path, before, 8, stream, clock=clock)
    progress.update()
    clock.now = 112.0
    progress.update()  # still starting: no new line in a log
    (tmp_path / "new-run").mkdir()
    run_file = tmp_path / "new-run" / "traces.jsonl"
    for lines, now in ((0, 114.0), (1, 115.0), (1, 116.0), (3, 117.5), (1, 118.0), (2, 119.0)):
        grow(run_file, lines)
        clock.now = now
        progress.update()
    clock.now = 121.0
    progress.update(final=True)
    assert stream.getvalue().splitlines() == [
        "[   0.0 s] starting vf-eval: rollouts 0/8 done (0%)",
        "[  14.0 s] running: rollouts 0/8 done (0%)",
        "[  16.0 s] running: rollouts 2/8 done (25%)",
        "[  17.5 s] running: rollouts 5/8 done (62%)",
        "[  18.0 s] running: rollouts 6/8 done (75%)",
        "[  19.0 s] vf-eval finishing: rollouts 8/8 done (100%)",
        "[  21.0 s] finished: rollouts 8/8 done (100%)",
    ]


def test_progress_ends_with_the_final_count_when_the_run_stops_early(tmp_path: Path) -> None:
    stream, clock = io.StringIO(), Clock()
    progress = demo.Progress(tmp_path, set(), 22, stream, clock=clock)
    progress.update()
    (tmp_path / "run").mkdir()
    grow(tmp_path / "run" / "traces.jsonl", 3)
    clock.now = 107.0
    progress.update()  # a new phase: running
    clock.now = 108.0
    progress.update()  # still the first quarter, still running: nothing new
    progress.update(final=True)
    assert stream.getvalue().splitlines() == [
        "[   0.0 s] starting vf-eval: rollouts 0/22 done (0%)",
        "[   7.0 s] running: rollouts 3/22 done (14%)",
        "[   8.0 s] finished: rollouts 3/22 done (14%)",
    ]


def test_progress_on_a_terminal_moves_the_clock_while_nothing_counts(tmp_path: Path) -> None:
    """The start-up of the eval CLI, where no rollout counts yet, shows the phase and the elapsed time at every
    poll, so the line is never frozen."""
    stream, clock = Terminal(), Clock()
    progress = demo.Progress(tmp_path, set(), 2, stream, clock=clock)
    progress.update()
    clock.now = 105.0
    progress.update()
    (tmp_path / "run").mkdir()
    grow(tmp_path / "run" / "traces.jsonl", 1)
    clock.now = 111.0
    progress.update()
    grow(tmp_path / "run" / "traces.jsonl", 1)
    clock.now = 112.0
    progress.update(final=True)
    assert stream.getvalue() == (
        "\r[   0.0 s] starting vf-eval: rollouts 0/2 done (0%)\033[K"
        "\r[   5.0 s] starting vf-eval: rollouts 0/2 done (0%)\033[K"
        "\r[  11.0 s] running: rollouts 1/2 done (50%)\033[K"
        "\r[  12.0 s] finished: rollouts 2/2 done (100%)\033[K\n"
    )
