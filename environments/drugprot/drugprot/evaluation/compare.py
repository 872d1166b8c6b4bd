"""The paired comparison of two runs over the same tasks: bootstrap differences and task flips.

What a task is, when it is right and when two runs can be paired is the runs' mode's (``Mode.same_tasks``,
``task_counts``, ``majority_right``): a pair task is right when its majority answer is a gold type, an extraction
task (an abstract) when its majority triples are exactly its gold. Runs of different modes are never compared."""

from __future__ import annotations

from typing import Any

from drugprot.evaluation.records import ReportError, Run
from drugprot.evaluation.stats import TEST_METHOD, by_abstract, flips, paired_bootstrap, paired_permutation
from drugprot.modes.base import get_mode
from drugprot.modes.pair.compare import same_tasks

__all__ = ["ACCURACY_TEST", "check_modes", "compare_runs", "same_tasks"]

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
    mode = get_mode(first.mode)
    reason = mode.same_tasks(first, second)
    if reason is not None:
        return {"paired": False, "reason": reason}
    keys, first_counts = mode.task_counts(first)
    second_keys, second_counts = mode.task_counts(second)
    right = [mode.majority_right(run) for run in (first, second)]
    pmids = [mode.abstract_of(key) for key in keys]
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
        out["intervals"] = mode.intervals(delta, tasks=len(keys))
    elif resamples > 0:
        out["intervals"] = {
            "unavailable": f"a bootstrap over abstracts needs at least 2 abstracts; the runs share {result.clusters}"
        }
    return out
