"""The progress shown while the eval CLI runs: the phase, the elapsed time and the rollouts done (lines of the new
run's ``traces.jsonl``).

``vf-eval`` spends most of a short run starting up (10-30 s before its first rollout on a loaded machine), so the
display names the phase and keeps the clock moving while no rollout counts yet; it never looks hung.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from drugprot.evaluation.records import V1_FILE

POLL_SECONDS = 0.5
"""How often the progress display re-counts the run's traces."""


STARTING, RUNNING, FINISHING, FINISHED = "starting vf-eval", "running", "vf-eval finishing", "finished"
"""The phases: no run file yet (the CLI loads the env and its workers); rollouts being written; every rollout written
but the CLI not yet exited (it saves its results); the CLI exited (the final line)."""
STOPPED = "stopped"
"""The final line's phase when the CLI did not end by itself with exit 0 (a failure, a timeout, an interrupt)."""


def progress_phase(run_started: bool, done: int, total: int, *, final: bool = False) -> str:
    """The phase the display shows: ``FINISHED`` on the final line, else ``STARTING`` until the run's file exists,
    ``FINISHING`` once every rollout is written, ``RUNNING`` in between."""
    if final:
        return FINISHED
    if not run_started:
        return STARTING
    return FINISHING if total and done >= total else RUNNING


def progress_line(done: int, total: int, seconds: float, phase: str = RUNNING) -> str:
    """The progress display's text: ``[   8.1 s] running: rollouts 13/22 done (59%)``."""
    share = f" ({done / total:.0%})" if total else ""
    return f"[{seconds:6.1f} s] {phase}: rollouts {done}/{total} done{share}"


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
    """Shows the phase, the elapsed time and the rollouts done (lines of the new run's ``traces.jsonl``, one per
    rollout) while the eval CLI runs.

    On a terminal the line is rewritten in place at every poll (the clock moves also while nothing counts);
    otherwise a line is printed at each change of phase and each quarter of the run. The output always ends with
    the final count, e.g. ``[  12.0 s] finished: rollouts 22/22 done (100%)``. ``clock`` is injectable (tests).
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
        self._shown: tuple[int, int, str] | None = None  # (done, step, phase) last printed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="drugprot-demo-progress", daemon=True)

    def start(self) -> Progress:
        self.update()
        self._thread.start()
        return self

    def state(self) -> tuple[bool, int]:
        """Whether the run's file exists yet, and the rollouts written so far (0 until it does)."""
        files = new_run_files(self._output_dir, self._before)
        return (True, count_lines(files[0])) if len(files) == 1 else (False, 0)

    def done(self) -> int:
        """Rollouts written so far (0 until the run file appears)."""
        return self.state()[1]

    def update(self, *, final: bool = False, ended: str = FINISHED) -> None:
        """Show the count; ``final``: the last line, whose phase is ``ended`` (``FINISHED`` or ``STOPPED``)."""
        started, done = self.state()
        step = progress_step(done, self._total)
        phase = ended if final else progress_phase(started, done, self._total)
        # A terminal's line is rewritten at every poll (the clock moves while nothing counts); a log gets a line
        # per phase and per quarter of the run, and the final line.
        show = self._shown is None or self._tty or final or step != self._shown[1] or phase != self._shown[2]
        if show:
            line = progress_line(done, self._total, self._clock() - self._started, phase)
            end = "\n" if final or not self._tty else ""
            self._stream.write(f"\r{line}\033[K{end}" if self._tty else f"{line}{end}")
            self._stream.flush()
            self._shown = (done, step, phase)

    def _poll(self) -> None:
        while not self._stop.wait(self._interval):
            self.update()

    def stop(self, ended: str | None = FINISHED) -> None:
        """Stop polling and print the final count, with ``ended`` as its phase (``STOPPED`` unless the CLI ended
        by itself with exit 0); ``None`` (interrupted): no final count, a terminal's progress line is cleared."""
        self._stop.set()
        self._thread.join()
        if ended is not None:
            self.update(final=True, ended=ended)
        elif self._tty:
            self._stream.write("\r\033[K")
            self._stream.flush()
