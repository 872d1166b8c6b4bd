"""``drugprot.modes.pair.render``: the text of one pair-mode run's report and of a comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drugprot.core.rewards import Reward
from drugprot.evaluation.records import INVALID, VERSION_NAMES
from drugprot.evaluation.runs import load_run
from drugprot.modes.pair.render import format_confusion, format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import (
    episode,
    good_line,
    header_reward,
    header_versions,
    multilabel_run,
    provider_error,
    rollouts_run,
    trace,
    versioned_run,
    versions_record,
    write_run,
)


def test_text_report_names_every_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", str(multilabel_run(tmp_path))]) == 0
    out = capsys.readouterr().out
    for expected in (
        "7 tasks, 7 rollouts",
        "micro, rollouts pooled      0.500  0.286  0.364      2      2      5",
        "NO-RELATION (not scored)",
        "Confusion matrix",
        "Invalid replies: 1 of 7 (14.3%): no_boxed_answer 1",
        "NOT comparable with BioCreative VII: INCOMPLETE RUN: 1 abstracts with tasks, fewer than the 542 abstracts of "
        "hub:OpenMed/drugprot-parquet[validation] that have a gold relation (each has its gold pairs as tasks)",
        "  ceiling: unknown (the run's tasks do not record their abstract's gold relations: a run made before "
        "drugprot recorded them); 7 in this run's tasks",
    ):
        assert expected in out


def test_half_the_rollouts_errored_is_not_a_failed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "half", [provider_error("T1"), good_line("T5")])
    assert cli_main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("drugprot report: half (verifiers v1 traces.jsonl)\n")
    assert "  errored: 1 of 2 rollouts (50.0%) recorded an error and gave no answer: ProviderError 1\n" in out


def test_a_comparison_flags_the_failed_run_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = write_run(tmp_path / "nokey", [provider_error("T1")])
    assert cli_main(["report", str(multilabel_run(tmp_path)), str(failed)]) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "drugprot report: [2] FAILED RUN nokey: 1 of 1 rollouts errored without an answer (ProviderError: upstream "
        "401: missing API key); its figures measure the failure",
        "drugprot report: comparison",
    ]


def test_comparison_of_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = multilabel_run(tmp_path), rollouts_run(tmp_path)
    assert cli_main(["report", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "[1] multilabel" in out and "[2] rollouts" in out
    assert "the runs cover different tasks (7, 3; 3 shared)" in out
    assert "positive-only and negatives runs mixed" in out
    assert "  micro F1                         0.364    0.500" in out
    assert "  accuracy                         0.429    0.556" in out
    assert cli_main(["report", "--json", str(first), str(second)]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["n_rollouts"] for r in runs] == [7, 9]
    assert cli_main(["report", str(first), str(second), "--export-tsv", str(tmp_path / "x.tsv")]) == 2


def test_a_report_and_a_comparison_name_the_limit_with_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # none: the config records no limit; -n 5: it records one; ?: the run saved no config
    unlimited = write_run(tmp_path / "all", [good_line("T1")])
    limited = write_run(tmp_path / "five", [good_line("T1")], limit=5)
    unknown = write_run(tmp_path / "bare", [good_line("T1")])
    (unknown / "configs" / "resolved" / "eval.json").unlink()
    heads = []
    for run_dir in (unlimited, limited, unknown):
        assert cli_main(["report", "--bootstrap", "0", str(run_dir)]) == 0
        heads.append(capsys.readouterr().out.splitlines()[2])
    assert heads == [
        "  model test-model | split validation | negatives 0 | limit none",
        "  model test-model | split validation | negatives 0 | limit -n 5",
        "  model ? | split ? | negatives 0 | limit ?",
    ]
    assert cli_main(["report", "--bootstrap", "0", str(unlimited), str(limited), str(unknown)]) == 0
    assert capsys.readouterr().out.splitlines()[1:4] == [
        f"  [1] all (test-model, split validation, negatives 0, limit none) {unlimited}",
        f"  [2] five (test-model, split validation, negatives 0, limit -n 5) {limited}",
        f"  [3] bare (?, split ?, negatives 0, limit ?) {unknown}",
    ]


def test_a_run_named_twice_is_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = multilabel_run(tmp_path)
    plot = tmp_path / "m.png"
    for second in (run_dir, run_dir / "traces.jsonl", tmp_path / "." / "multilabel"):
        assert cli_main(["report", str(run_dir), str(second), "--plot", str(plot)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            f"drugprot report: error: [2] {second} is the same run as [1] {run_dir}: a run compared with itself "
            "differs in nothing; name each run once\n"
        )
    assert not plot.exists()


def test_a_comparison_prints_an_undefined_class_f1_as_the_single_run_table_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "-": the class has neither a prediction nor gold support in that run; 0.000: it has one of them
    first, second = multilabel_run(tmp_path), rollouts_run(tmp_path)
    assert cli_main(["report", "--bootstrap", "0", str(first), str(second)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  F1 ")]
    assert rows == [
        "  F1 A INDIRECT-DOWNREGULATOR          -    0.500",
        "  F1 B INDIRECT-UPREGULATOR        0.000    0.500",
        "  F1 C DIRECT-REGULATOR                -    0.000",
        "  F1 D ACTIVATOR                   0.000        -",
        "  F1 E INHIBITOR                   0.667    0.667",
        "  F1 F AGONIST                     0.000        -",
        "  F1 G AGONIST-ACTIVATOR               -        -",
        "  F1 H AGONIST-INHIBITOR               -        -",
        "  F1 I ANTAGONIST                  0.000        -",
        "  F1 J PRODUCT-OF                      -        -",
        "  F1 K SUBSTRATE                   0.667    0.400",
        "  F1 L SUBSTRATE_PRODUCT-OF            -        -",
        "  F1 M PART-OF                         -        -",
    ]
    assert cli_main(["report", "--bootstrap", "0", str(first)]) == 0
    single = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("  A  ", "  B  "))]
    assert single[0].split()[-3:] == ["-", "0", "0"] and single[1].split()[-3:] == ["0.000", "1", "0"]


def test_the_header_prints_the_recorded_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pinned = versioned_run(tmp_path / "pinned", versions_record(revision="3f2a9c1"))
    assert cli_main(["report", str(pinned)]) == 0
    out = capsys.readouterr().out
    assert header_versions(out) == "  versions: env 0.1.0 | prompt 1 | scorer 2 | data hub@3f2a9c1"
    # scorer 2 had only the accuracy and format rewards, and recorded no reward
    assert header_reward(out) == "  reward: accuracy (recorded before the reward knob)"
    unpinned = summarize(load_run(versioned_run(tmp_path / "unpinned", versions_record())))
    assert unpinned["run"]["versions"] == {
        "env": "0.1.0",
        "prompt": "1",
        "scorer": "2",
        "data": "hub, default branch (unpinned)",
        "reward": "accuracy (recorded before the reward knob)",
    }
    local = summarize(load_run(versioned_run(tmp_path / "tsv", versions_record(source="tsv"))))
    assert local["run"]["versions"]["data"] == "tsv"


def test_the_header_prints_the_recorded_reward(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for reward, line in (
        (
            Reward(),
            "  reward: utility (TP 1, FP -0.5, FN -1; states a relation when p > 0.200), "
            "weights accuracy 0, utility 1, format 0.125",
        ),
        (Reward("accuracy"), "  reward: accuracy, weights accuracy 1, utility 0, format 0.125"),
    ):
        run = versioned_run(tmp_path / reward.kind, versions_record(scorer="3", reward=reward.record()))
        assert cli_main(["report", str(run)]) == 0
        assert header_reward(capsys.readouterr().out) == line
        assert cli_main(["report", "--json", str(run)]) == 0
        assert json.loads(capsys.readouterr().out)["run"]["versions"]["reward"] == line.removeprefix("  reward: ")


def test_a_run_recorded_without_versions_prints_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = versioned_run(tmp_path / "old", None)
    assert cli_main(["report", str(old)]) == 0
    out = capsys.readouterr().out
    assert header_versions(out) == "  versions: env unknown | prompt unknown | scorer unknown | data unknown"
    assert header_reward(out) == "  reward: unknown"  # no record at all: not even the scorer version is known
    assert cli_main(["report", "--json", str(old)]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["versions"] == dict.fromkeys(VERSION_NAMES, "unknown")
    # a report dict of an older drugprot (no run.versions) still formats
    got = summarize(load_run(old))
    del got["run"]["versions"]
    assert header_versions(format_report(got)) == (
        "  versions: env unknown | prompt unknown | scorer unknown | data unknown"
    )


def test_a_comparison_warns_when_the_runs_differ_in_a_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = versioned_run(tmp_path / "a", versions_record(scorer="1"))
    second = versioned_run(tmp_path / "b", versions_record(scorer="2", revision="3f2a9c1"))
    same = versioned_run(tmp_path / "c", versions_record(scorer="1"))
    old = versioned_run(tmp_path / "d", None)
    assert cli_main(["report", "--bootstrap", "0", str(first), str(second)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert notes == [
        "  note: the runs differ in scorer, data (scorer [1] 1, [2] 2; data [1] hub, default branch (unpinned), "
        "[2] hub@3f2a9c1): compare with care"
    ]
    assert cli_main(["report", "--bootstrap", "0", str(first), str(same)]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")] == []
    assert cli_main(["report", "--bootstrap", "0", str(first), str(same), str(old)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert notes == [
        "  note: the runs differ in env, prompt, scorer, data, reward (env [1] 0.1.0, [2] 0.1.0, [3] unknown; prompt "
        "[1] 1, [2] 1, [3] unknown; scorer [1] 1, [2] 1, [3] unknown; data [1] hub, default branch (unpinned), [2] "
        "hub, default branch (unpinned), [3] unknown; reward [1] accuracy (recorded before the reward knob), [2] "
        "accuracy (recorded before the reward knob), [3] unknown): compare with care"
    ]
    utility = versioned_run(tmp_path / "u", versions_record(scorer="3", reward=Reward().record()))
    accuracy = versioned_run(tmp_path / "acc", versions_record(scorer="3", reward=Reward("accuracy").record()))
    assert cli_main(["report", "--bootstrap", "0", str(utility), str(accuracy)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert notes == [
        "  note: the runs differ in reward (reward [1] utility (TP 1, FP -0.5, FN -1; states a relation when "
        "p > 0.200), weights accuracy 0, utility 1, format 0.125, [2] accuracy, weights accuracy 1, utility 0, "
        "format 0.125): compare with care"
    ]


def test_one_task_has_no_interval_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "one", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))])
    assert cli_main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "no 95% intervals: a bootstrap over abstracts needs at least 2 abstracts; this run has 1" in out


def test_the_text_confusion_matrix_stays_aligned_for_four_and_five_digit_counts() -> None:
    confusion = {
        "labels": ["INHIBITOR", "NO-RELATION"],
        "columns": ["INHIBITOR", "NO-RELATION", INVALID],
        "matrix": [[1234, 5, 0], [9876, 12345, 7]],
    }
    assert format_confusion(confusion)[1:] == [
        "           E     N   inv",
        "  E     1234     5     .    1239  INHIBITOR",
        "  N     9876 12345     7   22228  NO-RELATION",
    ]


def test_the_text_confusion_matrix_keeps_four_wide_columns_for_small_counts() -> None:
    confusion = {"labels": ["AGONIST"], "columns": ["AGONIST", INVALID], "matrix": [[12, 3]]}
    assert format_confusion(confusion)[1:] == [
        "         F inv",
        "  F     12   3     15  AGONIST",
    ]


def test_a_comparison_says_when_two_recorded_rewards_are_one_setting_on_the_grid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs recorded before the grid (scorer version 3) with fp_cost 0.35 and 0.34: both ran as 0.34375."""
    record = {"kind": "utility", "fn_cost": 1.0, "weights": {"accuracy": 0, "utility": 1, "format": 0.125}}
    first = versioned_run(tmp_path / "a", versions_record(scorer="3", reward=record | {"fp_cost": 0.35}))
    second = versioned_run(tmp_path / "b", versions_record(scorer="3", reward=record | {"fp_cost": 0.34}))
    other = versioned_run(tmp_path / "c", versions_record(scorer="3", reward=record | {"fp_cost": 0.36}))
    assert cli_main(["report", "--bootstrap", "0", str(first), str(second)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert notes[1:] == [
        "  note: their rewards are one setting on the 1/64 reward grid, the one they ran: utility (TP 1, FP -0.34375, "
        "FN -1), weights accuracy 0, utility 1, format 0.125"
    ]
    assert cli_main(["report", "--bootstrap", "0", str(first), str(other)]) == 0  # 0.36 runs as 0.359375
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert len(notes) == 1 and notes[0].startswith("  note: the runs differ in reward")
