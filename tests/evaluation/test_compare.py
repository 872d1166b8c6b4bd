"""``drugprot.evaluation.compare``: the paired comparison of two runs over the same tasks."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from drugprot.evaluation.compare import compare_runs, same_tasks
from drugprot.evaluation.records import GoldPair, Rollout, Run, RunConfig, ScoredAnswer
from drugprot.evaluation.runs import load_run
from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import (
    PMID,
    close,
    episode,
    multilabel_run,
    rollouts_run,
    second_run,
    trace,
    write_run,
)


def test_runs_over_the_same_tasks_get_a_paired_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Tasks a and b of abstract 1001, c of 1002.
    first, second = rollouts_run(tmp_path, c_pmid="1002"), second_run(tmp_path, c_pmid="1002")
    assert cli_main(["report", "--json", "--bootstrap", "400", str(first), str(second)]) == 0
    payload = json.loads(capsys.readouterr().out)
    [comparison] = payload["comparisons"]
    assert (comparison["paired"], comparison["tasks"], comparison["abstracts"]) == (True, 3, 2)
    # Majority answers: first run a E (right), b E (wrong: tie E/K goes to E), c A (right);
    # second run a E (right), b K (right), c D (wrong). So b flipped to right, c to wrong: abstract 1001
    # differs by +1, 1002 by -1, and the signed total 0 is the least extreme: p = 1.
    assert comparison["flips"] == {
        "first_only": 1,
        "second_only": 1,
        "both": 1,
        "neither": 0,
        "p": 1.0,
        "test": "exact sign-flip test of the tasks right in one run only, abstracts as units",
    }
    # Two abstracts: the 4 swaps of whole abstracts give each difference and its negative twice, so p = 1.
    assert comparison["tests"] == {
        "method": "paired sign-flip (permutation) test over abstracts",
        "abstracts": 2,
        "permutations": 4,
        "exact": True,
        "seed": 0,
        "accuracy": 1.0,
        "micro_f1": 1.0,
        "macro_f1": 1.0,
    }
    delta = comparison["intervals"]
    # accuracy 5/9 -> 6/9 (a 2, b 3, c 1 of 3); micro-F1 (pooled): first TP 5, FP 3, FN 7 -> 10/20; second
    # TP 6, FP 3, FN 6 -> 12/21.
    assert close(delta["accuracy"]["estimate"], Fraction(6, 9) - Fraction(5, 9))
    assert close(delta["micro_f1"]["estimate"], Fraction(12, 21) - Fraction(10, 20))
    assert (delta["abstracts"], delta["tasks"], delta["resamples"]) == (2, 3, 400)
    for name in ("accuracy", "micro_f1", "macro_f1"):
        assert delta[name]["low"] <= delta[name]["estimate"] <= delta[name]["high"]
    runs = load_run(first), load_run(second)
    assert compare_runs(*runs, resamples=400, seed=0) == comparison

    assert cli_main(["report", "--bootstrap", "400", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "Paired comparison [2] - [1] over the same 3 tasks of 2 abstracts (matched by task key)" in out
    acc, mf1 = delta["accuracy"], delta["micro_f1"]
    assert f"  delta accuracy              +0.111  [{acc['low']:+.3f}, {acc['high']:+.3f}]  p = 1" in out
    assert f"  delta micro F1              +0.071  [{mf1['low']:+.3f}, {mf1['high']:+.3f}]  p = 1" in out
    se = (mf1["high"] - mf1["low"]) / (2 * 1.959963984540054)  # the paired interval's SE, (1.96 + 0.84) of it
    assert (
        f"  power (paired, these tasks): SE of delta micro F1 {se:.4f} from the paired interval; detects ΔF1 "
        f"{(1.959963984540054 + 0.8416212335729143) * se:.3f} with 80% power (5% two-sided)"
    ) in out
    assert (
        "  p: paired sign-flip (permutation) test over abstracts of that difference itself (an abstract's rows "
        "swapped between the runs), all 4 sign assignments (exact)"
    ) in out
    assert (
        "  accuracy test (tasks by majority answer): right in [1] only 1, right in [2] only 1, both 1, neither 0"
    ) in out
    assert (
        "  paired accuracy test: exact sign-flip test of the tasks right in one run only, abstracts as units, "
        "2 abstracts: p = 1"
    ) in out
    assert "different tasks" not in out


def test_runs_over_different_tasks_get_no_paired_statistics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = multilabel_run(tmp_path), rollouts_run(tmp_path)
    assert cli_main(["report", "--json", str(first), str(second)]) == 0
    assert json.loads(capsys.readouterr().out)["comparisons"] == [
        {"paired": False, "reason": "the runs cover different tasks (7 and 3; 3 shared)"}
    ]
    assert cli_main(["report", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "the runs cover different tasks (7, 3; 3 shared): compare with care" in out
    assert "Paired comparison [2] - [1]: none, the runs cover different tasks (7 and 3; 3 shared)" in out
    assert "delta" not in out


def test_the_same_pairs_in_another_setting_are_not_paired(tmp_path: Path) -> None:
    positive = write_run(tmp_path / "positive", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))] * 2)
    negatives = write_run(
        tmp_path / "negatives",
        [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", with_nr=True))] * 2,
        negatives="all",
    )
    comparison = compare_runs(load_run(positive), load_run(negatives), resamples=10, seed=0)
    assert comparison == {
        "paired": False,
        "reason": "1 shared tasks differ in gold labels or in offering NO-RELATION (different settings)",
    }


def run_of(answers: dict[str, str | None], negatives: str | None = "0") -> Run:
    """A run with one rollout per task ``T<n>`` (gold INHIBITOR), answering ``answers[task]``."""
    rollouts = [
        Rollout.of(GoldPair(PMID, arg1, "T99", ("INHIBITOR",), False), ScoredAnswer(label))
        for arg1, label in answers.items()
    ]
    return Run("r", "r", "test", rollouts, config=RunConfig(negatives=negatives))


def test_same_tasks_names_what_differs() -> None:
    base = run_of({"T1": "INHIBITOR", "T2": None})
    assert same_tasks(base, run_of({"T2": "AGONIST", "T1": None})) is None  # order and answers do not matter
    assert same_tasks(base, run_of({"T1": "INHIBITOR"})) == "the runs cover different tasks (2 and 1; 1 shared)"
    assert same_tasks(base, run_of({"T1": None, "T2": None}, "2")) == "different settings (negatives 0 and 2)"
    assert same_tasks(base, run_of({"T1": None, "T2": None}, None)) is None  # an unknown setting is no difference


def test_runs_sharing_one_task_get_flips_but_no_intervals() -> None:
    first, second = run_of({"T1": "INHIBITOR"}), run_of({"T1": None})
    assert compare_runs(first, second, resamples=100, seed=0) == {
        "paired": True,
        "tasks": 1,
        "abstracts": 1,
        "flips": {
            "first_only": 1,
            "second_only": 0,
            "both": 0,
            "neither": 0,
            "p": 1.0,
            "test": "exact sign-flip test of the tasks right in one run only, abstracts as units",
        },
        "tests": {
            "method": "paired sign-flip (permutation) test over abstracts",
            "abstracts": 1,
            "permutations": 2,
            "exact": True,
            "seed": 0,
            "accuracy": 1.0,
            "micro_f1": 1.0,
            "macro_f1": 1.0,
        },
        "intervals": {"unavailable": "a bootstrap over abstracts needs at least 2 abstracts; the runs share 1"},
    }
    assert compare_runs(first, second, resamples=0, seed=0)["intervals"] is None


def test_two_extraction_runs_over_the_same_abstracts_are_paired(tmp_path: Path) -> None:
    """``HAND_RUN`` against a run that answers every rollout with the gold: each abstract's majority is exact in
    the second run, and only 200's in the first."""
    from drugprot.core.extraction import answer_block
    from tests.evaluation.extraction_traces import HAND_RUN, THINK, episode, extraction_trace, hand_run, write_v1_run

    first = load_run(hand_run(tmp_path / "first"))
    perfect = [episode(extraction_trace(p, g, THINK + answer_block(sorted(g.relations)))) for p, g, _ in HAND_RUN]
    second = load_run(write_v1_run(tmp_path / "second", perfect))
    got = compare_runs(first, second, resamples=100, seed=0)
    assert (got["paired"], got["tasks"]) == (True, 2)
    assert got["flips"] == {
        "first_only": 0,
        "second_only": 1,
        "both": 1,
        "neither": 0,
        "p": 1.0,
        "test": "exact sign-flip test of the tasks right in one run only, abstracts as units",
    }
    assert close(got["intervals"]["micro_f1"]["estimate"], 1 - Fraction(6, 11))
    assert close(got["intervals"]["accuracy"]["estimate"], 1 - Fraction(5, 12))
    assert got["intervals"]["method"] == "percentile bootstrap over abstracts"
    other = load_run(write_v1_run(tmp_path / "other", perfect[:1]))
    assert compare_runs(first, other, resamples=100, seed=0) == {
        "paired": False,
        "reason": "the runs cover different abstracts (2 and 1; 1 shared)",
    }


def test_a_pair_run_and_an_extraction_run_are_never_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.evaluation.extraction_traces import hand_run

    pair, extraction = rollouts_run(tmp_path), hand_run(tmp_path / "extraction")
    assert cli_main(["report", str(pair), str(extraction)]) == 2
    assert capsys.readouterr().err == (
        "drugprot report: error: cannot compare pair-mode and extraction-mode runs ([1] rollouts: pair, [2] "
        "extraction: extraction): their tasks and metrics differ (a pair or an abstract); report each mode's runs in "
        "a command of their own\n"
    )


def test_the_p_under_a_difference_of_f1_tests_f1_on_the_fixture() -> None:
    """Always-N (``majority``) against ``lexical`` on the fixture with every candidate (42 tasks, 9 abstracts): the
    p-value printed under the micro-F1 difference is the exact sign-flip test of that difference over all 2**9
    swaps of whole abstracts, recomputed here with the official metric on each swapped pair of runs; the
    task-level test of the flips tests accuracy and says so."""
    import itertools

    from drugprot.core.options import TaskOptions
    from drugprot.evaluation.baselines import baseline_run
    from drugprot.modes.pair.summary import pooled_scores
    from tests.fixtures import FIXTURE_JSONL

    options = TaskOptions(split="train", data_path=str(FIXTURE_JSONL), negatives="all")
    first, second = baseline_run("majority", options), baseline_run("lexical", options)
    got = compare_runs(first, second, resamples=0, seed=0)
    assert got["tests"] == {
        "method": "paired sign-flip (permutation) test over abstracts",
        "abstracts": 9,
        "permutations": 512,
        "exact": True,
        "seed": 0,
        "accuracy": 7 / 16,
        "micro_f1": 1 / 64,
        "macro_f1": 1 / 64,
    }
    assert got["flips"] == {
        "first_only": 10,
        "second_only": 16,
        "both": 5,
        "neither": 11,
        "p": 7 / 16,
        "test": "exact sign-flip test of the tasks right in one run only, abstracts as units",
    }
    pmids = sorted({r.pmid for r in first.rollouts})
    by_pmid = {"a": {p: [r for r in first.rollouts if r.pmid == p] for p in pmids}}
    by_pmid["b"] = {p: [r for r in second.rollouts if r.pmid == p] for p in pmids}
    observed = abs(pooled_scores(second.rollouts).f1 - pooled_scores(first.rollouts).f1)
    extreme = 0
    for keep in itertools.product((True, False), repeat=len(pmids)):
        one = [r for p, k in zip(pmids, keep, strict=True) for r in by_pmid["b" if k else "a"][p]]
        two = [r for p, k in zip(pmids, keep, strict=True) for r in by_pmid["a" if k else "b"][p]]
        extreme += abs(pooled_scores(one).f1 - pooled_scores(two).f1) >= observed - 1e-12
    assert Fraction(extreme, 2 ** len(pmids)) == Fraction(1, 64)
