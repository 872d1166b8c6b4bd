"""The rollout count shown while the eval CLI runs (``drugprot.tools.demo.progress``)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from drugprot.tools import demo

# ------------------------------------------------------------------------------------------- progress


@pytest.mark.parametrize(
    ("done", "total", "seconds", "line"),
    [
        (0, 22, 0.0, "rollouts 0/22 done (0%), 0.0 s"),
        (13, 22, 8.14, "rollouts 13/22 done (59%), 8.1 s"),
        (22, 22, 31.25, "rollouts 22/22 done (100%), 31.2 s"),
        (0, 0, 1.0, "rollouts 0/0 done, 1.0 s"),
    ],
)
def test_the_progress_line(done: int, total: int, seconds: float, line: str) -> None:
    assert demo.progress_line(done, total, seconds) == line


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


def test_progress_counts_the_new_run_s_traces_a_line_per_quarter_without_a_terminal(tmp_path: Path) -> None:
    """The display reads only the run that appeared after it started (an older run in the folder is not counted)."""
    (tmp_path / "old-run").mkdir()
    grow(tmp_path / "old-run" / "traces.jsonl", 5)
    before = set(tmp_path.glob("*/traces.jsonl"))
    stream, clock = io.StringIO(), Clock()
    progress = demo.Progress(tmp_path, before, 8, stream, clock=clock)
    progress.update()
    (tmp_path / "new-run").mkdir()
    run_file = tmp_path / "new-run" / "traces.jsonl"
    for lines, now in ((1, 101.0), (1, 102.0), (3, 103.5), (1, 104.0)):
        grow(run_file, lines)
        clock.now = now
        progress.update()
    progress.update(final=True)
    assert stream.getvalue().splitlines() == [
        "rollouts 0/8 done (0%), 0.0 s",
        "rollouts 2/8 done (25%), 2.0 s",
        "rollouts 5/8 done (62%), 3.5 s",
        "rollouts 6/8 done (75%), 4.0 s",
    ]


def test_progress_ends_with_the_final_count_when_the_run_stops_early(tmp_path: Path) -> None:
    stream, clock = io.StringIO(), Clock()
    progress = demo.Progress(tmp_path, set(), 22, stream, clock=clock)
    progress.update()
    (tmp_path / "run").mkdir()
    grow(tmp_path / "run" / "traces.jsonl", 3)
    clock.now = 107.0
    progress.update()  # still the first quarter: nothing new
    progress.update(final=True)
    assert stream.getvalue() == "rollouts 0/22 done (0%), 0.0 s\nrollouts 3/22 done (14%), 7.0 s\n"


def test_progress_on_a_terminal_rewrites_one_line(tmp_path: Path) -> None:
    stream, clock = Terminal(), Clock()
    progress = demo.Progress(tmp_path, set(), 2, stream, clock=clock)
    progress.update()
    (tmp_path / "run").mkdir()
    grow(tmp_path / "run" / "traces.jsonl", 1)
    clock.now = 101.0
    progress.update()
    progress.update()  # no change, no output
    grow(tmp_path / "run" / "traces.jsonl", 1)
    clock.now = 102.0
    progress.update(final=True)
    assert stream.getvalue() == (
        "\rrollouts 0/2 done (0%), 0.0 s\033[K"
        "\rrollouts 1/2 done (50%), 1.0 s\033[K"
        "\rrollouts 2/2 done (100%), 2.0 s\033[K\n"
    )
