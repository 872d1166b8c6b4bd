"""``drugprot.evaluation.runs``: finding a run file, reading a run with its saved setting, counting bad lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.sources import load_documents
from drugprot.evaluation.records import ReportError, RunConfig
from drugprot.evaluation.runs import find_run_file, load_run, run_documents, skipped_folders
from drugprot.modes.pair.render import format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import (
    PMID,
    episode,
    trace,
    versions_record,
    write_run,
)


def test_corrupt_truncated_and_foreign_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    good = episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))
    foreign = json.loads(good)
    del foreign["traces"][0]["task"]["data"]["labels"]
    foreign["task"] = foreign["traces"][0]["task"]
    run_dir = write_run(
        tmp_path / "corrupt",
        [
            good,
            "{not json",
            "",
            json.dumps(foreign),
            json.dumps({"hello": "world"}),
            episode(trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE")),
        ],
    )
    with (run_dir / "traces.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(good[: len(good) // 2])  # a crash mid-write: no newline, cut JSON
    run = load_run(run_dir)
    assert len(run.rollouts) == 2
    assert run.lines == 6
    skipped = [str(skip) for skip in run.corrupt]
    assert skipped == [
        "traces.jsonl:2: invalid JSON (JSONDecodeError: Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)); truncated write?",
        "traces.jsonl:4: field task.data.labels is null, expected a non-empty list of DrugProt type names",
        "traces.jsonl:5: not an episode (no traces list)",
        skipped[3],
    ]
    assert skipped[3].startswith("traces.jsonl:7: invalid JSON (JSONDecodeError: ")
    got = summarize(run)
    assert got["lines"] == {
        "read": 6,
        "blank": 1,
        "records": 6,
        "corrupt": 4,
        "unidentified": 0,
        "corrupt_lines": skipped,
        "unidentified_lines": [],
    }
    assert got["accuracy"] == 1.0


def test_a_run_without_any_rollout_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "empty", ["{broken"])
    with pytest.raises(ReportError, match="no DrugProt rollouts"):
        load_run(run_dir)
    assert cli_main(["report", str(tmp_path / "missing")]) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_legacy_results_jsonl(tmp_path: Path) -> None:
    run_dir = tmp_path / "outputs" / "evals" / "drugprot--m" / "abc123"
    run_dir.mkdir(parents=True)
    info = {
        "key": f"{PMID}:T1:T2",
        "pmid": PMID,
        "arg1": "T1",
        "arg2": "T2",
        "labels": ["INHIBITOR"],
        "chemical": "x",
        "gene": "y",
        "with_no_relation": False,
    }
    rows = [
        {
            "example_id": 0,
            "prompt": [],
            "completion": [{"role": "assistant", "content": "<think>a</think>\\boxed{E}"}],
            "answer": "E",
            "info": {
                **info,
                "drugprot": {
                    "letter": "E",
                    "label": "INHIBITOR",
                    "invalid_reason": None,
                    "format_reason": None,
                    "versions": versions_record(source="file"),
                },
            },
            "reward": 1.1,
            "metrics": {"accuracy": 1.0},
            "token_usage": {"input_tokens": 50.0, "output_tokens": 5.0},
        },
        {
            "example_id": 0,
            "prompt": [],
            "completion": [{"role": "assistant", "content": "<think>b</think>\\boxed{K}"}],
            "answer": "E",
            "info": json.dumps(info),
            "reward": 0.0,
            "metrics": {},
        },
    ]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "{trunc", encoding="utf-8")
    (run_dir / "metadata.json").write_text(
        json.dumps(
            {
                "env_id": "drugprot",
                "model": "m",
                "num_examples": 5,
                "env_args": {"split": "train", "negatives": 0, "data_label": "lab set A"},
            }
        )
    )
    run = load_run(tmp_path / "outputs")  # found below the given directory
    assert run.source == "legacy vf-eval results.jsonl"
    assert [(r.label, r.rescored) for r in run.rollouts] == [("INHIBITOR", False), ("SUBSTRATE", True)]
    assert len(run.corrupt) == 1
    got = summarize(run)
    assert (got["n_tasks"], got["n_rollouts"], got["accuracy"]) == (1, 2, 0.5)
    assert (got["run"]["model"], got["run"]["split"], got["run"]["limit"]) == ("m", "train", None)
    assert got["run"]["data_label"] == "lab set A"  # the data_label knob names the data in the report
    assert "  model m | data lab set A | negatives 0 | limit ?" in format_report(got).splitlines()
    # the second row, without a record, is an older rollout
    assert got["run"]["versions"] == {
        "env": "0.1.0 + unknown",
        "prompt": "1 + unknown",
        "scorer": "2 + unknown",
        "data": "file + unknown",
        "reward": "accuracy (recorded before the reward knob) + unknown",
    }


def test_a_run_file_is_found_in_its_directory_or_below_it(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "outputs" / "evals" / "a", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))])
    assert find_run_file(run_dir) == run_dir / "traces.jsonl"
    assert find_run_file(run_dir / "traces.jsonl") == run_dir / "traces.jsonl"
    assert find_run_file(tmp_path) == run_dir / "traces.jsonl"


def test_a_directory_with_several_runs_or_none_is_an_error_listing_them(tmp_path: Path) -> None:
    line = episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))
    first, second = write_run(tmp_path / "runs" / "a", [line]), write_run(tmp_path / "runs" / "b", [line])
    with pytest.raises(ReportError) as raised:
        find_run_file(tmp_path / "runs")
    assert str(raised.value) == f"{tmp_path / 'runs'} holds 2 runs; pass one (or several) of:\n  {first}\n  {second}"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="no traces.jsonl \\(verifiers v1\\) or results.jsonl \\(legacy vf-eval\\)"):
        find_run_file(tmp_path / "empty")
    with pytest.raises(ReportError, match="no such run directory or file"):
        find_run_file(tmp_path / "missing")


@pytest.mark.parametrize(
    ("taskset", "select", "negatives", "limit", "requested"),
    [
        ({"negatives": " ALL"}, {}, "all", "", None),
        ({"negatives": 2, "num_tasks": 50}, {"limit": 3, "skip": 2}, "2", "-n 3, num_tasks=50, skip=2", (3, 2)),
        ({"num_tasks": 7}, {}, "0", "num_tasks=7", (7, 2)),
        ({}, {"include": {"idx": [4]}}, "0", "select.include", None),
        ({"negatives": "many"}, {"limit": True}, "many", "", None),  # kept as written; a bool is no limit
    ],
)
def test_the_setting_comes_from_the_saved_v1_config(
    tmp_path: Path,
    taskset: dict[str, Any],
    select: dict[str, Any],
    negatives: str,
    limit: str,
    requested: tuple[int, int] | None,
) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "configs" / "resolved").mkdir(parents=True)
    (run_dir / "traces.jsonl").write_text(episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR")) + "\n")
    config = {
        "model": "m",
        "env": {"taskset": {"split": "train", "data_label": "lab set", **taskset}},
        "select": select,
        "num_rollouts": 2,
    }
    (run_dir / "configs" / "resolved" / "eval.json").write_text(json.dumps(config))
    assert load_run(run_dir).config == RunConfig(
        model="m",
        split="train",
        data_path=None,
        data_label="lab set",
        negatives=negatives,
        limit=limit,
        requested=requested,
    )


def test_a_run_without_a_readable_config_has_an_unknown_setting(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))])
    (run_dir / "configs" / "resolved" / "eval.json").write_text("[1, 2")
    assert load_run(run_dir).config == RunConfig()


def test_the_abstracts_of_a_run_come_from_the_run_or_a_local_data_path(tmp_path: Path, fixture_jsonl: Path) -> None:
    run = load_run(write_run(tmp_path / "run", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))]))
    assert run_documents(run) is None  # the config names no local file; the hub is never asked
    documents = run_documents(run, str(fixture_jsonl))
    assert documents == load_documents("validation", fixture_jsonl)
    run.documents = documents[:1]
    assert run_documents(run, str(fixture_jsonl)) == documents[:1]


# --------------------------------------------------------------------------- doubtful runs: warnings, not errors


def asking(run_dir: Path, tasks: int, per_task: int) -> Path:
    """Give the run's saved config ``-n tasks -r per_task``."""
    path = run_dir / "configs" / "resolved" / "eval.json"
    config = json.loads(path.read_text())
    config["select"]["limit"], config["num_rollouts"] = tasks, per_task
    path.write_text(json.dumps(config))
    return run_dir


def test_a_half_written_run_says_how_many_rollouts_are_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [episode(trace(f"T{i}", "T9", ["INHIBITOR"], "INHIBITOR")) for i in range(1, 4)]
    run_dir = asking(write_run(tmp_path / "half", lines), 4, 2)
    with (run_dir / "traces.jsonl").open("a") as handle:
        handle.write(lines[0][:40])  # the writer was killed mid-line
    warning = (
        "INCOMPLETE RUN: 4 of the 8 rollouts the run asked for are missing (4 tasks x 2 rollouts per task; 4 records "
        "read) and its last line is cut off mid-record (a half-written file). Either the eval stopped early "
        "(interrupted, killed, out of time, still running: re-run it, or resume it with vf-eval's --resume) or its "
        "data holds fewer than 4 tasks; the figures cover only the rollouts read"
    )
    run = load_run(run_dir)
    assert (len(run.rollouts), len(run.corrupt), run.cut_off, run.warnings) == (3, 1, True, [warning])
    assert f"  WARNING: {warning}" in format_report(summarize(run)).splitlines()
    assert cli_main(["report", str(run_dir), "--bootstrap", "0"]) == 0  # reported, with the warning, not refused
    captured = capsys.readouterr()
    assert f"  WARNING: {warning}" in captured.out.splitlines()
    assert f"half: WARNING: {warning}" in captured.err.splitlines()


def test_fewer_rollouts_than_asked_warn_also_without_a_cut_line(tmp_path: Path) -> None:
    lines = [episode(trace(f"T{i}", "T9", ["INHIBITOR"], "INHIBITOR")) for i in range(1, 12)]
    (warning,) = load_run(asking(write_run(tmp_path / "short", lines), 22, 1)).warnings
    assert warning.startswith(
        "INCOMPLETE RUN: 11 of the 22 rollouts the run asked for are missing (22 tasks x 1 rollouts per task; 11 "
        "records read). "
    )
    assert load_run(asking(write_run(tmp_path / "whole", lines), 11, 1)).warnings == []
    assert load_run(write_run(tmp_path / "unknown", lines)).warnings == []  # no -r saved: nothing to compare with


def test_rollouts_of_one_task_that_disagree_on_its_gold_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(
        tmp_path / "mixed",
        [
            episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR")),
            episode(trace("T1", "T2", ["SUBSTRATE", "PRODUCT-OF"], "INHIBITOR")),
            episode(trace("T3", "T2", ["AGONIST"], "AGONIST")),
            episode(trace("T3", "T2", ["AGONIST"], "AGONIST")),
        ],
    )
    warning = (
        f"GOLD CONFLICT: 1 tasks have rollouts that disagree on their gold, first pmid {PMID} T1-T2: "
        "{INHIBITOR, with_no_relation=False} vs {PRODUCT-OF, SUBSTRATE, with_no_relation=False}. The file mixes runs "
        "of different data (split, revision or data file); report each run on its own"
    )
    assert load_run(run_dir).warnings == [warning]
    assert cli_main(["report", str(run_dir), "--bootstrap", "0"]) == 0
    assert f"mixed: WARNING: {warning}" in capsys.readouterr().err.splitlines()


def test_extraction_rollouts_of_one_abstract_that_disagree_on_its_gold_are_named(tmp_path: Path) -> None:
    from tests.evaluation import extraction_traces as ex

    lines = [
        ex.episode(ex.extraction_trace("100", ex.GOLD_100, ex.block("none"))),
        ex.episode(ex.extraction_trace("100", ex.GOLD_200, ex.block("none"))),
    ]
    (warning,) = load_run(ex.write_v1_run(tmp_path / "mixed", lines)).warnings
    assert warning.startswith(
        "GOLD CONFLICT: 1 tasks have rollouts that disagree on their gold, first pmid 100: "
        "{T1/T2/INHIBITOR, T3/T4/SUBSTRATE} vs {no relation}. "
    )


def validate_output(directory: Path) -> Path:
    """What ``vf-validate`` (verifiers 0.4.0) leaves in its output folder: check results, no model replies."""
    (directory / "configs" / "resolved").mkdir(parents=True)
    (directory / "configs" / "resolved" / "validate.json").write_text("{}")
    (directory / "summary.json").write_text('{"valid_rate": 1.0}')
    (directory / "results.jsonl").write_text('{"index": 0, "mode": "all", "reason": "valid", "valid": true}\n')
    return directory


def dry_run_output(directory: Path) -> Path:
    """What ``vf-eval --dry-run`` leaves: the resolved config only."""
    (directory / "configs" / "resolved").mkdir(parents=True)
    (directory / "configs" / "resolved" / "eval.json").write_text('{"model": "m"}')
    return directory


def test_folders_that_are_not_eval_runs_are_skipped_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = tmp_path / "outputs"
    checks = validate_output(outputs / "drugprot--validate--442e3197")
    dry = dry_run_output(outputs / "drugprot--m--drugprot--aa3a5cdc")
    run_dir = write_run(
        outputs / "drugprot--m--drugprot--e11b95f9", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))]
    )
    assert find_run_file(outputs) == run_dir / "traces.jsonl"
    assert skipped_folders(outputs) == [
        (dry, "no traces.jsonl: a --dry-run, or an eval that wrote no rollout"),
        (checks, "vf-validate output: task checks, no model replies"),
    ]
    assert cli_main(["report", str(outputs), "--bootstrap", "0"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        f"drugprot report: skipped {dry}: not an eval run (no traces.jsonl: a --dry-run, or an eval that wrote no "
        "rollout)",
        f"drugprot report: skipped {checks}: not an eval run (vf-validate output: task checks, no model replies)",
    ]
    with pytest.raises(ReportError) as raised:
        find_run_file(checks)
    assert str(raised.value) == (
        f"{checks}: not an eval run (vf-validate output: task checks, no model replies); drugprot report reads the "
        "run directories of vf-eval"
    )
    (run_dir / "traces.jsonl").unlink()
    (run_dir / "configs" / "resolved" / "eval.json").unlink()
    with pytest.raises(ReportError) as raised:
        find_run_file(outputs)
    assert str(raised.value).splitlines() == [
        f"{outputs}: no traces.jsonl (verifiers v1) or results.jsonl (legacy vf-eval) in this directory",
        f"  skipped {dry}: no traces.jsonl: a --dry-run, or an eval that wrote no rollout",
        f"  skipped {checks}: vf-validate output: task checks, no model replies",
    ]


def test_a_legacy_run_is_complete_at_num_examples_x_rollouts_per_example(tmp_path: Path) -> None:
    info = {"pmid": PMID, "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"]}
    row = {"completion": [{"role": "assistant", "content": "<think>a</think>\\boxed{E}"}], "info": info, "reward": 1.1}
    meta = {"env_id": "drugprot", "model": "m", "num_examples": 2, "rollouts_per_example": 3, "env_args": {}}
    run_dir = tmp_path / "legacy"
    run_dir.mkdir()
    (run_dir / "metadata.json").write_text(json.dumps(meta))
    (run_dir / "results.jsonl").write_text((json.dumps(row) + "\n") * 4)
    run = load_run(run_dir)
    assert run.config.requested == (2, 3)
    assert run.warnings[0].startswith(
        "INCOMPLETE RUN: 2 of the 6 rollouts the run asked for are missing (2 tasks x 3 rollouts per task; 4 records "
        "read). "
    )
    (run_dir / "results.jsonl").write_text((json.dumps(row) + "\n") * 6)
    assert load_run(run_dir).warnings == []


def test_a_complete_run_whose_last_record_lacks_only_its_newline_is_complete(tmp_path: Path) -> None:
    """A whole last record without the final line end (an editor or a tool stripped it) is read, not called cut
    off; a last line that does not read as a record still is."""
    lines = [episode(trace(f"T{i}", "T9", ["INHIBITOR"], "INHIBITOR")) for i in range(1, 4)]
    run_dir = asking(write_run(tmp_path / "whole", lines), 3, 1)
    file = run_dir / "traces.jsonl"
    file.write_bytes(file.read_bytes().rstrip(b"\n"))
    assert not file.read_bytes().endswith(b"\n")
    run = load_run(run_dir)
    assert (len(run.rollouts), len(run.corrupt), run.cut_off, run.warnings) == (3, 0, False, [])
    file.write_bytes(file.read_bytes() + b"\n" + lines[0][:40].encode())
    cut = load_run(run_dir)
    assert (len(cut.rollouts), len(cut.corrupt), cut.cut_off) == (3, 1, True)
