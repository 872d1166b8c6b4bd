"""The paired comparison of two runs over the same tasks: bootstrap differences and task flips."""

from __future__ import annotations

from typing import Any

from drugprot.evaluation.records import Run
from drugprot.evaluation.stats import flips, paired_bootstrap
from drugprot.evaluation.summary import bootstrap_dict, group_by_task, majority_label, task_counts


def same_tasks(first: Run, second: Run) -> str | None:
    """None when two runs evaluated the same tasks in the same setting; else why they cannot be paired."""

    def tasks(run: Run) -> dict[tuple[str, str, str], tuple[tuple[str, ...], bool]]:
        return {r.key: (r.labels, r.with_no_relation) for r in run.rollouts}

    a, b = tasks(first), tasks(second)
    if a.keys() != b.keys():
        return f"the runs cover different tasks ({len(a)} and {len(b)}; {len(a.keys() & b.keys())} shared)"
    if a != b:
        changed = sum(a[key] != b[key] for key in a)
        return f"{changed} shared tasks differ in gold labels or in offering NO-RELATION (different settings)"
    settings = (first.config.negatives, second.config.negatives)
    if None not in settings and settings[0] != settings[1]:
        return f"different settings (negatives {settings[0]} and {settings[1]})"
    return None


def compare_runs(first: Run, second: Run, *, resamples: int, seed: int) -> dict[str, Any]:
    """The paired comparison of ``second`` against ``first`` (the ``comparisons`` items of ``--json``).

    Only for runs over the same tasks in the same setting (``same_tasks``); otherwise ``paired`` is False and
    ``reason`` says why. Differences are ``second - first``: the point difference of accuracy, micro-F1 and
    macro-F1 (rollouts pooled) and, unless ``resamples`` is 0, their paired percentile bootstrap intervals
    (``stats.paired_bootstrap``, tasks matched by key). ``flips`` compares the runs task by task: a task is
    right in a run when its majority answer (``majority_label``; with one rollout per task, that rollout's
    answer) is one of its gold types; ``first_only`` counts the tasks right in ``first`` and wrong in
    ``second``, ``second_only`` the reverse, with the exact McNemar p-value of those two counts.
    """
    reason = same_tasks(first, second)
    if reason is not None:
        return {"paired": False, "reason": reason}
    keys, first_counts = task_counts(first.rollouts)
    second_keys, second_counts = task_counts(second.rollouts)
    order = {key: i for i, key in enumerate(second_keys)}
    second_counts = second_counts[[order[key] for key in keys]]
    right = [_majority_right(run) for run in (first, second)]
    result = flips([right[0][key] for key in keys], [right[1][key] for key in keys])
    out: dict[str, Any] = {
        "paired": True,
        "tasks": len(keys),
        "flips": {
            "first_only": result.first_only,
            "second_only": result.second_only,
            "both": result.both,
            "neither": result.neither,
            "mcnemar_p": result.mcnemar_p,
        },
        "intervals": None,
    }
    if resamples > 0 and len(keys) >= 2:
        delta = paired_bootstrap(first_counts, second_counts, resamples=resamples, seed=seed)
        out["intervals"] = bootstrap_dict(delta)
    elif resamples > 0:
        out["intervals"] = {"unavailable": f"a bootstrap over tasks needs at least 2 tasks; the runs share {len(keys)}"}
    return out


def _majority_right(run: Run) -> dict[tuple[str, str, str], bool]:
    return {key: majority_label(group) in group[0].labels for key, group in group_by_task(run.rollouts).items()}
