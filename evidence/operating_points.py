"""Alignment around each operating point (``python -m evidence.alignment --mode operating``).

A fixed linear utility ``TP - fp·FP - fn·FN`` and micro-F1 agree on which of two nearby policies is better when the
utility's exchange rate between a false positive and a true positive is F1's at that point: to first order
``dF1 ∝ (TP+FP+FN)·dTP - TP·dFP`` (every gold cell is a TP or an FN), ``dU = (1+fn)·dTP - fp·dFP``, equal when
``fp = F (1+fn) / (2-F)`` (the cost whose threshold is ``F/2``; ``evidence.shared.calibrated_fp``).

The family: a synthetic scorer per pair task at ``negatives="all"`` (every same-sentence candidate and every gold
pair): a proposed type (a gold type, or on 10 % of gold pairs and on every other pair a random type) and a score
``d·[gold pair] + noise`` (standard normal, fixed seed); policy ``(d, t)`` states its proposed type where the score
exceeds ``t``, else N. ``d`` sets how good the policy can be, ``t`` where it trades precision for recall. For each
operating point F0 the policies of a grid whose official micro-F1 lies within ``±BAND`` of F0 are kept (up to
``KEEP``, spread over their precision); every answer is rendered and scored by the environment
(``evidence.shared.score_pair``), its reward by ``drugprot.core.rewards.Reward``. Per point: the pairwise agreement
of each reward's ranking with the official F1's (share of policy pairs with different F1 that the reward orders the
same way) and Spearman, for the utility calibrated at F0, the default costs and accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from drugprot.core.rewards import Costs, Reward
from drugprot.core.schema import Document
from drugprot.core.tasks import build_tasks
from evidence.shared import ACTIONS, N_INDEX, calibrated_fp, official_f1, pair_rows, score_pair

POINTS = (0.3, 0.4, 0.5, 0.6, 0.7)
BAND = 0.05
KEEP = 24
SEPARATIONS = tuple(np.round(np.arange(0.25, 5.01, 0.25), 2))
THRESHOLDS = tuple(np.round(np.arange(-1.5, 6.01, 0.1), 2))


def _family(documents: Sequence[Document], seed: int) -> dict[str, Any]:
    rows, _ = pair_rows(documents)
    index = {(r.document.pmid, r.chemical, r.gene): i for i, r in enumerate(rows)}
    tasks = [index[(t.pmid, t.chemical.id, t.gene.id)] for t in build_tasks(documents, negatives="all")]
    rng = np.random.default_rng(seed)
    gold = np.array([bool(rows[i].gold) for i in tasks])
    right = gold & (rng.random(len(tasks)) >= 0.1)
    proposed = np.array(
        [
            ACTIONS.index(rows[i].gold[0])
            if ok
            else int(rng.choice([a for a in range(N_INDEX) if ACTIONS[a] not in rows[i].gold]))  # fmt: skip
            for i, ok in zip(tasks, right, strict=True)
        ]
    )
    noise = rng.standard_normal(len(tasks))
    labels = sorted({rows[i].labels for i in tasks})
    key = np.array([labels.index(rows[i].labels) for i in tasks])
    scores = [[score_pair(a, lab, with_no_relation=True) for a in ACTIONS] for lab in labels]
    cells = np.array([[[s.tp, s.fp, s.fn] for s in row] for row in scores], dtype=float)  # (labels, 14, 3)
    return {"rows": rows, "tasks": tasks, "gold": gold, "proposed": proposed, "noise": noise, "key": key,
            "scores": scores, "cells": cells}  # fmt: skip


def _answers(f: dict[str, Any], d: float, t: float) -> np.ndarray:
    return np.where(d * f["gold"] + f["noise"] > t, f["proposed"], N_INDEX)


def _mean_reward(f: dict[str, Any], answers: np.ndarray, reward: Reward) -> float:
    table = np.array([[reward.value(s) for s in row] for row in f["scores"]])
    return float(table[f["key"], answers].mean())


def agreement(f1: Sequence[float], values: Sequence[float]) -> float:
    """Share of the pairs of policies with different F1 that ``values`` orders the same way (ties count against)."""
    agree = total = 0
    for i in range(len(f1)):
        for j in range(i + 1, len(f1)):
            if abs(f1[i] - f1[j]) > 1e-12:
                total += 1
                agree += (f1[i] - f1[j]) * (values[i] - values[j]) > 0
    return agree / total if total else float("nan")


def operating_points(
    documents: Sequence[Document], points: Sequence[float] = POINTS, fn: float = 1.0, seed: int = 0
) -> dict[str, Any]:
    f = _family(documents, seed)
    grid = []
    for d in SEPARATIONS:
        for t in THRESHOLDS:
            tp, fp, fn_ = f["cells"][f["key"], _answers(f, d, t)].sum(axis=0)
            if tp:
                grid.append((float(d), float(t), 2 * tp / (2 * tp + fp + fn_), tp / (tp + fp)))
    out = []
    default = Costs()
    for point in points:
        near = sorted((g for g in grid if abs(g[2] - point) <= BAND), key=lambda g: g[3])
        keep = [near[int(k)] for k in np.linspace(0, len(near) - 1, min(KEEP, len(near)))] if near else []
        keep = list(dict.fromkeys(keep))
        calibrated = Costs(calibrated_fp(point, fn), fn)  # on the reward grid, as a run with f1_target scores
        rewards = {
            f"utility fp={calibrated.fp:g} (calibrated at {point:g})": Reward("utility", calibrated),
            f"utility fp={default.fp:g} (default)": Reward("utility", default),
            "accuracy, negatives=all": Reward("accuracy", default),
        }
        f1, values = [], {name: [] for name in rewards}
        for d, t, _, _ in keep:
            answers = _answers(f, d, t)
            stated = [(f["rows"][i].document.pmid, f["rows"][i].chemical, f["rows"][i].gene, ACTIONS[a])
                      for i, a in zip(f["tasks"], answers, strict=True) if a != N_INDEX]  # fmt: skip
            f1.append(official_f1(documents, stated))
            for name, reward in rewards.items():
                values[name].append(_mean_reward(f, answers, reward))
        out.append(
            {
                "point": point,
                "fp_calibrated": calibrated.fp,
                "policies": [
                    {"d": d, "t": t, "f1": x, "precision": p} for (d, t, _, p), x in zip(keep, f1, strict=True)
                ],
                "f1_range": [min(f1), max(f1)] if f1 else None,
                "rewards": {
                    name: {
                        "agreement": agreement(f1, v),
                        "spearman": float(spearmanr(f1, v).statistic) if len(f1) > 2 else float("nan"),
                    }
                    for name, v in values.items()
                },
            }
        )
    return {"band": BAND, "fn_cost": fn, "tasks": len(f["tasks"]), "points": out}


def format_points(result: dict[str, Any]) -> str:
    out = [
        f"alignment around operating points: policies within +-{result['band']} F1 of each point, "
        f"{result['tasks']} pair tasks at negatives=all; pairwise agreement with the official F1's ranking (Spearman)"
    ]
    for p in result["points"]:
        lo, hi = p["f1_range"] or (float("nan"), float("nan"))
        precision = [q["precision"] for q in p["policies"]]
        out.append(
            f"F1 {p['point']:.1f}: {len(p['policies'])} policies, F1 {lo:.3f}-{hi:.3f}, precision "
            f"{min(precision):.2f}-{max(precision):.2f}; calibrated fp_cost {p['fp_calibrated']:.3f}"
        )
        for name, r in p["rewards"].items():
            out.append(f"    {name:<40}agreement {r['agreement']:.3f}   Spearman {r['spearman']:.3f}")
    return "\n".join(out)
