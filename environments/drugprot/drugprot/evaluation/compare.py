"""The paired comparison of two runs over the same tasks: bootstrap differences and task flips.

Two extraction runs are compared the same way over the same abstracts (a task is an abstract; it is right when
its majority triples are exactly its gold). A pair run and an extraction run are never compared."""

from __future__ import annotations

from typing import Any

from drugprot.evaluation import extraction_summary
from drugprot.evaluation.records import ReportError, Run
from drugprot.evaluation.stats import TEST_METHOD, by_abstract, flips, paired_bootstrap, paired_permutation
from drugprot.evaluation.summary import bootstrap_dict, group_by_task, majority_label, task_counts

ACCURACY_TEST = "exact sign-flip test of the tasks right in one run only, abstracts as units"
"""The paired test of ``flips`` (``stats.sign_flip_p``), a test of per-task accuracy (a task right or wrong by its
majority answer), never of F1: it counts tasks, so an answer policy that is right on many NO-RELATION pairs wins it
while stating no relation (F1 0)."""


def check_modes(runs: list[Run]) -> None:
    """Several runs are reported side by side only when they are of one mode.

    Raises:
        ReportError: pair and extraction runs mixed, naming each run's mode.
    """
    if len({run.mode for run in runs}) > 1:
        listing = ", ".join(f"[{i}] {run.name}: {run.mode}" for i, run in enumerate(runs, 1))
        raise ReportError(
            f"cannot compare pair-mode and extraction-mode runs ({listing}): their tasks and metrics differ "
            "(a pair or an abstract); report each mode's runs in a command of their own"
        )


def same_abstracts(first: Run, second: Run) -> str | None:
    """None when two extraction runs evaluated the same abstracts with the same gold; else why not."""
    a = {r.pmid: r.gold for r in first.extraction}
    b = {r.pmid: r.gold for r in second.extraction}
    if a.keys() != b.keys():
        return f"the runs cover different abstracts ({len(a)} and {len(b)}; {len(a.keys() & b.keys())} shared)"
    changed = sum(a[key] != b[key] for key in a)
    if changed:
        return f"{changed} shared abstracts differ in their gold relations or mentions (different data)"
    return None


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
    macro-F1 (rollouts pooled) and, unless ``resamples`` is 0, their paired percentile bootstrap intervals over
    abstracts (``stats.paired_bootstrap``, tasks matched by key, all tasks of an abstract resampled together).
    ``flips`` compares the runs task by task: a task is right in a run when its majority answer
    (``majority_label``; with one rollout per task, that rollout's answer) is one of its gold types;
    ``first_only`` counts the tasks right in ``first`` and wrong in ``second``, ``second_only`` the reverse;
    ``p`` is the exact sign-flip test of the per-abstract differences (``stats.sign_flip_p``): a test of accuracy.
    ``tests`` holds the p-value of each difference (accuracy, micro-F1 and macro-F1, rollouts pooled) from the
    paired sign-flip test over abstracts (``stats.paired_permutation``, seeded by ``seed``): the test of the F1
    difference is computed on F1 itself.
    """
    check_modes([first, second])
    extracting = first.mode == extraction_summary.EXTRACTION
    reason = same_abstracts(first, second) if extracting else same_tasks(first, second)
    if reason is not None:
        return {"paired": False, "reason": reason}
    if extracting:
        keys, first_counts = extraction_summary.task_counts(first.extraction)
        second_keys, second_counts = extraction_summary.task_counts(second.extraction)
        right = [extraction_summary.majority_exact(run.extraction) for run in (first, second)]
        pmids = list(keys)
    else:
        keys, first_counts = task_counts(first.rollouts)
        second_keys, second_counts = task_counts(second.rollouts)
        right = [_majority_right(run) for run in (first, second)]
        pmids = [key[0] for key in keys]
    order = {key: i for i, key in enumerate(second_keys)}
    second_counts = second_counts[[order[key] for key in keys]]
    result = flips([right[0][key] for key in keys], [right[1][key] for key in keys], pmids)
    out: dict[str, Any] = {
        "paired": True,
        "tasks": len(keys),
        "abstracts": result.clusters,
        "flips": {
            "first_only": result.first_only,
            "second_only": result.second_only,
            "both": result.both,
            "neither": result.neither,
            "p": result.p,
            "test": ACCURACY_TEST,
        },
        "tests": None,
        "intervals": None,
    }
    first_summed, second_summed = by_abstract(pmids, first_counts)[1], by_abstract(pmids, second_counts)[1]
    if result.clusters >= 1:
        test = paired_permutation(first_summed, second_summed, seed=seed)
        out["tests"] = {
            "method": TEST_METHOD,
            "abstracts": test.units,
            "permutations": test.permutations,
            "exact": test.exact,
            "seed": test.seed,
            **test.p,
        }
    if resamples > 0 and result.clusters >= 2:
        delta = paired_bootstrap(first_summed, second_summed, resamples=resamples, seed=seed)
        out["intervals"] = (
            extraction_summary.abstracts_bootstrap(delta) if extracting else bootstrap_dict(delta, tasks=len(keys))
        )
    elif resamples > 0:
        out["intervals"] = {
            "unavailable": f"a bootstrap over abstracts needs at least 2 abstracts; the runs share {result.clusters}"
        }
    return out


def _majority_right(run: Run) -> dict[tuple[str, str, str], bool]:
    return {key: majority_label(group) in group[0].labels for key, group in group_by_task(run.rollouts).items()}
