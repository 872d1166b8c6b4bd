"""The lines of a prime-rl ``metrics.jsonl`` (``drugprot.evaluation.curves``): one line's step and numeric metrics,
the keys of the two scopes, and a step's official scores from the means of its official cells."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

from drugprot.core.errors import DrugprotArgumentError, DrugprotError
from drugprot.core.metrics import check_counts, prf

MAX_STEP = 10**12
"""The largest step read; a line with a larger (or fractional, or negative) step is skipped and counted."""
MAX_VALUE = 1e300
"""The largest magnitude of a metric value read; a line with a larger one (a 400-digit integer) is skipped."""


class CurvesError(DrugprotError, ValueError):
    """A run's ``metrics.jsonl`` is missing, empty or has no readable line."""


class MetricsLineError(CurvesError):
    """One line of ``metrics.jsonl`` that is not a metrics line (``read_metrics`` skips and lists it)."""


CELLS: dict[str, str] = {f"metrics/official_{cell}/mean": cell for cell in ("tp", "fp", "fn")}
"""The official cells' keys (``drugprot.core.rewards.METRIC_NAMES``): read, not drawn; ``official_scores`` of
their means are the official F1, precision and recall curves."""
SUBSETS = ("all", "effective")
"""prime-rl's two scopes, the shown one first (``RunMetrics.subsets``)."""
METRIC_KEY = re.compile(r"^(?P<scope>train/agg|eval/[^/]+)/(?P<subset>all|effective)/(?P<agent>[^/]+)/(?P<suffix>.+)$")
GROUPS_KEY = "progress/tasks"
"""The orchestrator's count of distinct tasks (groups) in the step's batch (``orchestrator.py`` 715)."""
MAX_ROLLOUTS = 100_000
"""The most rollouts a step's mean is read as a fraction of (``official_scores``)."""


def parse_line(raw: bytes) -> tuple[int, dict[str, float]]:
    """The step and numeric metrics of one line.

    Raises:
        MetricsLineError: the line is not a JSON object with a whole, non-negative ``step`` (the message says why).
    """
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MetricsLineError(f"not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise MetricsLineError("JSON nested too deeply") from None
    except ValueError as exc:
        raise MetricsLineError(f"invalid JSON ({str(exc)[:60]}); a partial write?") from None
    if not isinstance(row, dict):
        raise MetricsLineError(f"a JSON {type(row).__name__}, not an object")
    step = row.get("step")
    if isinstance(step, bool) or not isinstance(step, int | float) or (isinstance(step, float) and math.isnan(step)):
        raise MetricsLineError(f"no numeric 'step' (got {str(step)[:40]!r})")
    if not _in_range(step) or not math.isfinite(step) or step < 0 or step != int(step):
        raise MetricsLineError(f"'step' {_shown(step)} is not a whole number from 0 to {MAX_STEP:,}")
    values = {}
    for key, value in row.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not _in_range(value, MAX_VALUE):
            raise MetricsLineError(f"{key[:80]!r} is {_shown(value)}, out of range (magnitude above {MAX_VALUE:g})")
        if not math.isfinite(value):  # prime-rl drops non-finite values before writing; a NaN here means nothing
            continue
        match = METRIC_KEY.match(key)
        if match and match["suffix"] in CELLS:
            try:  # the rule official_scores applies (through prf), applied when the line is read
                check_counts(**{CELLS[match["suffix"]]: value})
            except DrugprotArgumentError as exc:
                raise MetricsLineError(f"{key[:80]!r}: {exc}") from None
        values[key] = float(value)
    return int(step), values


def _in_range(number: int | float, limit: float = MAX_STEP) -> bool:
    """``number`` is within ``limit`` in magnitude; a float's inf/NaN passes (the caller decides), an int too
    large for a float never does (comparing it is exact, converting it would raise ``OverflowError``)."""
    if isinstance(number, int):
        return -limit <= number <= limit
    return not math.isfinite(number) or abs(number) <= limit


def _shown(number: int | float) -> str:
    text = str(number)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"


def _fraction(mean: float) -> Fraction:
    """The step mean of a count as the fraction it is: ``S/n`` (``n`` rollouts, ``S`` the summed count) when a
    fraction with ``n <= MAX_ROLLOUTS`` rounds to ``mean`` (it is then the only one: two such fractions differ by at
    least ``1/MAX_ROLLOUTS**2``, far more than a float's rounding), else the float's own value."""
    exact = Fraction(mean)
    near = exact.limit_denominator(MAX_ROLLOUTS)
    return near if float(near) == mean else exact


def official_scores(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """The official micro precision, recall and F1 of a step from the means of its rollouts' official cells.

    Means share the denominator (the step's rollouts), so ``prf`` of the means is ``prf`` of the sums: the micro
    scores of the step's rollouts pooled, as ``drugprot report`` computes them (0 where a denominator is 0). Each
    mean is read back as the fraction it is (``_fraction``), so the result is the correctly rounded value of that
    fraction, bit for bit the report's ``prf`` of the integer sums.
    """
    return tuple(float(value) for value in prf(*map(_fraction, (tp, fp, fn))))  # type: ignore[return-value]


__all__ = [
    "CELLS",
    "GROUPS_KEY",
    "MAX_ROLLOUTS",
    "MAX_STEP",
    "MAX_VALUE",
    "METRIC_KEY",
    "SUBSETS",
    "CurvesError",
    "MetricsLineError",
    "official_scores",
    "parse_line",
]
