"""F*, the micro-F1 a policy reaches at its best threshold, estimated from the vote shares of a multi-rollout run.

micro-F1 is maximised by stating a relation whose probability of being right exceeds ``F*/2``, where ``F*`` is the
best F1 the model can reach (Lipton, Elkan and Narayanaswamy 2014): the operating point the utility's cost is
calibrated at (``drugprot.evaluation.calibration``). The run's own F (every rollout one prediction) understates it:
a model that states a relation on 3 of its 8 rollouts is unsure of it, one that states it on 8 of 8 is not, and F
weighs both alike.

A **cell** is one (task, relation) the run's rollouts stated or the gold holds: in pair mode a pair and a relation
type (NO-RELATION is never a cell, as in the official metric), in extraction mode an abstract's (chemical, gene,
type) triple. Its **vote share** is the share of the task's rollouts that state it (every rollout counts, also one
without a valid answer, which states nothing); a gold cell no rollout stated has share 0. Stating every cell whose
share is at least ``t`` is a decision rule with official counts ``TP(t)``, ``FP(t)`` and ``FN(t) = gold − TP(t)``;
the sweep tries every distinct positive share as ``t`` and ``F*`` is the best ``2TP/(2TP + FP + FN)`` (ties: the
highest threshold, the rule that states least). The interval is the percentile bootstrap over abstracts of the same
maximum (``stats``: abstracts resampled whole, seeded), so it includes the sweep's own selection. With one rollout
per task the only threshold is 1 and ``F* = F``: the line asks for ``MIN_ROLLOUTS`` rollouts per task.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drugprot.evaluation.resampling import percentile_bounds, resampled
from drugprot.evaluation.stats import LEVEL

MIN_ROLLOUTS = 4
"""Rollouts per task from which the report calls F* resolved (at 2 or 3 the shares are 1/2 or 1/3 apart)."""

Cells = Sequence[tuple[float, bool]]
"""An abstract's stated cells: ``(vote share > 0, whether the gold holds it)``."""


@dataclass(frozen=True, slots=True)
class Abstract:
    """One abstract's cells: what its rollouts stated, with their shares, and how many gold cells it has."""

    stated: Cells
    gold: int
    """Gold cells of the abstract's tasks, stated or not (the FN of a rule that states nothing)."""


def shares(votes: Mapping[Any, int], rollouts: int) -> dict[Any, float]:
    """Each stated cell's vote share: the rollouts stating it over the task's ``rollouts``."""
    return {cell: n / rollouts for cell, n in votes.items()}


def thresholds(abstracts: Iterable[Abstract]) -> list[float]:
    """The distinct positive vote shares, ascending: the thresholds of the sweep."""
    return sorted({share for a in abstracts for share, _ in a.stated})


def _counts(abstracts: Sequence[Abstract], ts: Sequence[float]) -> Any:
    """``(abstracts, thresholds, 3)``: per abstract and threshold, the TP, FP and gold cells of stating every cell
    whose share is ``>= t``."""
    import numpy as np

    out = np.zeros((len(abstracts), len(ts), 3))
    grid = np.asarray(ts)
    for i, a in enumerate(abstracts):
        share = np.array([s for s, _ in a.stated])
        right = np.array([g for _, g in a.stated], dtype=bool)
        stated = share[None, :] >= grid[:, None] if len(share) else np.zeros((len(ts), 0), dtype=bool)
        out[i, :, 0] = (stated & right[None, :]).sum(axis=1)
        out[i, :, 1] = (stated & ~right[None, :]).sum(axis=1)
        out[i, :, 2] = a.gold
    return out


def _f1(totals: Any) -> Any:
    """micro-F1 of ``(..., 3)`` TP/FP/gold totals: ``2TP / (TP + FP + gold)``, 0 where nothing was stated or gold."""
    import numpy as np

    tp, fp, gold = totals[..., 0], totals[..., 1], totals[..., 2]
    denominator = tp + fp + gold
    return np.divide(2 * tp, denominator, out=np.zeros_like(denominator), where=denominator > 0)


def _best(f1: Any) -> int:
    """The index of the best F1 of a sweep; ties go to the highest threshold."""
    import numpy as np

    return int(len(f1) - 1 - np.argmax(f1[::-1]))


def f_star(abstracts: Mapping[str, Abstract], *, rollouts_per_task: int, resamples: int, seed: int) -> dict[str, Any]:
    """The ``f_star`` of a report: F* with its threshold, the sweep (per threshold: TP, FP, FN, F1) and, when
    ``resamples`` > 0 (at most ``resampling.MAX_RESAMPLES``) and there are 2 abstracts or more, the bootstrap interval
    over abstracts (sorted PMID order, as every interval of the report). ``rollouts_per_task``: the fewest of any task
    (``resolved`` from ``MIN_ROLLOUTS``)."""
    order = [abstracts[pmid] for pmid in sorted(abstracts)]
    ts = thresholds(order)
    gold = sum(a.gold for a in order)
    base: dict[str, Any] = {
        "rollouts_per_task": rollouts_per_task,
        "resolved": rollouts_per_task >= MIN_ROLLOUTS,
        "rule": "state every cell whose vote share (share of its task's rollouts stating it) is >= threshold",
    }
    if not ts:  # nothing stated: every threshold gives F1 0
        return base | {"f1": 0.0, "threshold": None, "low": None, "high": None, "sweep": []}
    counts = _counts(order, ts)
    totals = counts.sum(axis=0)
    f1 = _f1(totals)
    best = _best(f1)
    sweep = [
        {"threshold": t, "tp": int(tp), "fp": int(fp), "fn": int(gold - tp), "f1": float(f)}
        for t, (tp, fp, _), f in zip(ts, totals, f1, strict=True)
    ]
    low = high = None
    if resamples > 0 and len(order) >= 2:
        n, flat = len(order), counts.reshape(len(order), -1)
        distribution = resampled(  # the resamples of every bootstrap of the report (resampling.MAX_RESAMPLES at most)
            n,
            lambda weights: _f1((weights @ flat).reshape(-1, len(ts), 3)).max(axis=1)[None, :],
            rows=1,
            resamples=resamples,
            seed=seed,
        )
        bounds = percentile_bounds(distribution, LEVEL)
        low, high = float(bounds[0][0]), float(bounds[1][0])
    return base | {"f1": float(f1[best]), "threshold": ts[best], "low": low, "high": high, "sweep": sweep}
