"""The rollout count shown while the eval CLI runs (lines of the new run's ``traces.jsonl``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from drugprot.evaluation.records import V1_FILE

POLL_SECONDS = 0.5
"""How often the progress display re-counts the run's traces."""


def progress_line(done: int, total: int, seconds: float) -> str:
    """The progress display's text: ``rollouts 13/22 done (59%), 8.1 s``."""
    share = f" ({done / total:.0%})" if total else ""
    return f"rollouts {done}/{total} done{share}, {seconds:.1f} s"


def progress_step(done: int, total: int, steps: int = 4) -> int:
    """Which of ``steps`` equal parts of the run ``done`` rollouts have completed (0 to ``steps``).

    Without a terminal the display prints a line only when this changes, so a log gets a few lines, not one per
    rollout.
    """
    return steps if total <= 0 else min(steps, done * steps // total)


def count_lines(path: Path) -> int:
    """Complete lines in ``path`` (a line still being written is not counted); 0 when it does not exist yet."""
    try:
        with path.open("rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
    except FileNotFoundError:
        return 0


def new_run_files(output_dir: Path, before: set[Path]) -> list[Path]:
    """The run files (``<run dir>/traces.jsonl``) under ``output_dir`` that are not in ``before``, sorted."""
    return sorted(set(output_dir.glob(f"*/{V1_FILE}")) - before)


class Progress:
    """Shows the rollouts done (lines of the new run's ``traces.jsonl``, one per rollout) while the eval CLI runs.

    On a terminal the line is rewritten in place on every change; otherwise a line is printed at each quarter
    of the run. The output always ends with the final count, e.g. ``rollouts 22/22 done (100%), 3.2 s``.
    """

    def __init__(
        self,
        output_dir: Path,
        before: set[Path],
        total: int,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = POLL_SECONDS,
    ) -> None:
        self._output_dir, self._before, self._total = output_dir, before, total
        self._stream, self._clock, self._interval = stream, clock, interval
        self._tty = stream.isatty()
        self._started = clock()
        self._shown: tuple[int, int] | None = None  # (done, step) last printed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="drugprot-demo-progress", daemon=True)

    def start(self) -> Progress:
        self.update()
        self._thread.start()
        return self

    def done(self) -> int:
        """Rollouts written so far (0 until the run file appears)."""
        files = new_run_files(self._output_dir, self._before)
        return count_lines(files[0]) if len(files) == 1 else 0

    def update(self, *, final: bool = False) -> None:
        done = self.done()
        step = progress_step(done, self._total)
        if self._shown is None:
            show = True
        elif self._tty:  # rewritten in place; the final line also ends it
            show = final or done != self._shown[0]
        else:  # one line per quarter, and the final count unless that line was already printed
            show = step != self._shown[1] or (final and done != self._shown[0])
        if show:
            line = progress_line(done, self._total, self._clock() - self._started)
            end = "\n" if final or not self._tty else ""
            self._stream.write(f"\r{line}\033[K{end}" if self._tty else f"{line}{end}")
            self._stream.flush()
            self._shown = (done, step)

    def _poll(self) -> None:
        while not self._stop.wait(self._interval):
            self.update()

    def stop(self) -> None:
        """Stop polling and print the final count."""
        self._stop.set()
        self._thread.join()
        self.update(final=True)
