"""What a prime-rl run's metrics cannot show: its empty train batches, read from the orchestrator's log.

prime-rl 559b447 cuts a step's batch at ``batch_size`` rollouts first and then drops the groups whose advantages
are all zero (``train.filter_zero_advantages``, on by default; ``orchestrator/train_sink.py`` 361-381), with no
refill. A batch left with no sample is not shipped: the step does not advance, nothing is written to
``metrics.jsonl`` and the step numbers keep no gap (``orchestrator/orchestrator.py`` 640-652). Its only trace is one
warning line of the orchestrator's log::

    Step N: empty train batch after K finalized episodes (consecutive empty batches: i/10)

and after ``MAX_CONSECUTIVE_EMPTY_BATCHES = 10`` in a row the orchestrator raises ``RuntimeError("10 consecutive
empty train batches — check algorithm credit and task difficulty.")``. A shipped batch whose effective traces are
at most 10% trainable logs ``Only n/m effective traces are trainable (x%) — consider reviewing task difficulty``.

With ``g`` groups per step, each all-equal with probability ``z`` independently, a batch is empty with probability
``z**g`` (``expected_empty_rate``): 6% at ``z = 0.84``, 13% at ``z = 0.88`` for 16 groups, so a healthy run has
empty batches. The run's log lives at ``<output_dir>/<run.name>/logs/attempt_<n>/orchestrator.log`` (``logs/latest``
links the current attempt; ``src/prime_rl/entrypoints/rl.py`` 287, ``utils/pathing.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from drugprot.core.errors import DrugprotError

MAX_CONSECUTIVE_EMPTY_BATCHES = 10
"""prime-rl 559b447 ``orchestrator/orchestrator.py:99``: the run stops after this many empty batches in a row."""
EMPTY_BATCH = re.compile(
    r"Step (?P<step>\d+): empty train batch after (?P<episodes>\d+) finalized episodes "
    r"\(consecutive empty batches: (?P<streak>\d+)/(?P<limit>\d+)\)"
)
FEW_TRAINABLE = re.compile(r"Only (?P<trainable>\d+)/(?P<traces>\d+) effective traces are trainable")
STOPPED = re.compile(r"(?P<streak>\d+) consecutive empty train batches")
LOG_NAME = "orchestrator.log"
MAX_LOG_BYTES = 2 * 1024**3
"""A log file larger than this is refused (read line by line, so memory stays small; this bounds the time)."""


class OrchestratorLogError(DrugprotError, ValueError):
    """The orchestrator log named with ``--log`` is missing, not a file, or too large."""


@dataclass
class LogCounts:
    """The orchestrator log's empty-batch story: ``empty`` warnings, the longest run of them, the few-trainable
    warnings, and whether the run stopped on the limit."""

    paths: list[Path] = field(default_factory=list)
    empty: int = 0
    longest_streak: int = 0
    few_trainable: int = 0
    stopped: bool = False


def find_logs(run_dir: Path) -> list[Path]:
    """The orchestrator logs of a run directory, oldest attempt first (``logs/attempt_<n>/orchestrator.log``), else
    ``orchestrator.log`` beside ``metrics.jsonl`` (the loop check's layout); none when there is none."""
    attempts = sorted(
        (p for p in (run_dir / "logs").glob(f"attempt_*/{LOG_NAME}") if p.is_file()),
        key=lambda p: int(p.parent.name.removeprefix("attempt_")) if p.parent.name[8:].isdigit() else math.inf,
    )
    if attempts:
        return attempts
    beside = run_dir / LOG_NAME
    return [beside] if beside.is_file() else []


def check_log(path: str | Path) -> Path:
    """A ``--log`` path that can be read: an existing file under ``MAX_LOG_BYTES``.

    Raises:
        OrchestratorLogError: it is not.
    """
    given = Path(path)
    if not given.is_file():
        raise OrchestratorLogError(f"--log {given}: no such file; pass the run's logs/latest/{LOG_NAME}")
    if given.stat().st_size > MAX_LOG_BYTES:
        raise OrchestratorLogError(f"--log {given}: larger than {MAX_LOG_BYTES // 1024**3} GiB; is it a log?")
    return given


def count_log(paths: Sequence[Path]) -> LogCounts:
    """Count the empty-batch, few-trainable and stop lines of ``paths`` (read as bytes, undecodable bytes replaced;
    the message is matched anywhere in a line, so plain and JSON logging both count)."""
    counts = LogCounts(paths=list(paths))
    for path in paths:
        with path.open("rb") as handle:
            for raw in handle:
                line = raw.decode("utf-8", "replace")
                if match := EMPTY_BATCH.search(line):
                    counts.empty += 1
                    counts.longest_streak = max(counts.longest_streak, int(match["streak"]))
                elif FEW_TRAINABLE.search(line):
                    counts.few_trainable += 1
                elif STOPPED.search(line):
                    counts.stopped = True
    return counts


def expected_empty_rate(zero_shares: Sequence[float], groups: Sequence[float]) -> float | None:
    """The mean over steps of ``z**g``: the chance a step's batch is empty when each of its ``g`` groups is
    all-equal with probability ``z``, groups independent; ``None`` without a step. ``z`` is read as the step's
    share of rollouts that carry no gradient (1 - the all-rollouts trainable share: a rollout of a mixed group at
    its group's mean also counts, so ``z`` is at most that). Only non-empty steps are logged, so in a collapse
    (``z`` near 1) the mean leaves out the steps that matter most: read it as "about"."""
    pairs = [(z, g) for z, g in zip(zero_shares, groups, strict=True) if g >= 1]
    if not pairs:
        return None
    return math.fsum(min(max(z, 0.0), 1.0) ** g for z, g in pairs) / len(pairs)


RATE_SHARES = (0.5, 0.7, 0.8, 0.84, 0.88, 0.9, 0.95)
RATE_GROUPS = (4, 8, 16, 32)
"""The all-equal shares and groups per step of the docs' table of healthy empty-batch rates (``rate_table``)."""


def rate_table(shares: Sequence[float] = RATE_SHARES, groups: Sequence[int] = RATE_GROUPS) -> str:
    """The docs' markdown table of ``z**g``: the share of steps whose batch is empty, per all-equal share ``z``
    (rows) and groups per step ``g`` (columns; the recipe: 128 rollouts / group size 8 = 16)."""
    head = "| all-equal share z | " + " | ".join(f"{g} groups" for g in groups) + " |"
    rule = "|---|" + "---|" * len(groups)
    rows = [f"| {z:g} | " + " | ".join(f"{100 * z**g:.1f}%" for g in groups) + " |" for z in shares]
    return "\n".join([head, rule, *rows])


def log_lines(counts: LogCounts | None, logged_steps: int, expected: float | None) -> list[str]:
    """The table's lines on empty batches: observed rate beside the expected one, or why they cannot be seen."""
    if counts is None:
        return [
            "  empty train batches: not in metrics.jsonl (an empty batch logs nothing); "
            f"--log <run>/logs/latest/{LOG_NAME} counts them"
        ]
    attempts = len(counts.paths)
    shown = f"{counts.paths[0]}" + (f" and {attempts - 1} earlier/later attempts" if attempts > 1 else "")
    batches = counts.empty + logged_steps
    rate = counts.empty / batches if batches else 0.0
    expect = "unknown (needs train/agg/all/*/is_trainable and progress/tasks)"
    if expected is not None:
        expect = f"{expected:.1%}"
    out = [
        f"  orchestrator log: {shown}",
        f"  empty train batches: {counts.empty} of {batches} ({rate:.1%}; longest run {counts.longest_streak}/"
        f"{MAX_CONSECUTIVE_EMPTY_BATCHES}); expected from the all-rollouts trainable share: {expect}",
        f"  'Only n/m effective traces are trainable' warnings: {counts.few_trainable}",
    ]
    if counts.stopped:
        out.append(
            f"  the run stopped: {MAX_CONSECUTIVE_EMPTY_BATCHES} empty batches in a row (every group all-equal: a "
            "collapse, or tasks too easy or too hard)"
        )
    return out


__all__ = [
    "EMPTY_BATCH",
    "FEW_TRAINABLE",
    "MAX_CONSECUTIVE_EMPTY_BATCHES",
    "LogCounts",
    "OrchestratorLogError",
    "check_log",
    "count_log",
    "expected_empty_rate",
    "find_logs",
    "log_lines",
    "rate_table",
]
