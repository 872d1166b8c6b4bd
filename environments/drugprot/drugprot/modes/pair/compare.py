"""When two pair-mode runs can be paired task by task, and which of a run's tasks its majority answer gets right."""

from __future__ import annotations

from drugprot.evaluation.records import Run
from drugprot.modes.pair.summary import group_by_task, majority_label


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


def majority_right(run: Run) -> dict[tuple[str, str, str], bool]:
    return {key: majority_label(group) in group[0].labels for key, group in group_by_task(run.rollouts).items()}
