"""``drugprot.evaluation.runs``: finding a run file, reading a run with its saved setting, counting bad lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.sources import load_documents
from drugprot.evaluation.records import ReportError, RunConfig
from drugprot.evaluation.render import format_report
from drugprot.evaluation.runs import find_run_file, load_run, run_documents
from drugprot.evaluation.summary import summarize
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
    ("taskset", "select", "negatives", "limit"),
    [
        ({"negatives": " ALL"}, {}, "all", ""),
        ({"negatives": 2, "num_tasks": 50}, {"limit": 3, "skip": 2}, "2", "-n 3, num_tasks=50, skip=2"),
        ({}, {"include": {"idx": [4]}}, "0", "select.include"),
        ({"negatives": "many"}, {"limit": True}, "many", ""),  # kept as written; a bool is no limit
    ],
)
def test_the_setting_comes_from_the_saved_v1_config(
    tmp_path: Path, taskset: dict[str, Any], select: dict[str, Any], negatives: str, limit: str
) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "configs" / "resolved").mkdir(parents=True)
    (run_dir / "traces.jsonl").write_text(episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR")) + "\n")
    config = {
        "model": "m",
        "env": {"taskset": {"split": "train", "data_label": "lab set", **taskset}},
        "select": select,
    }
    (run_dir / "configs" / "resolved" / "eval.json").write_text(json.dumps(config))
    assert load_run(run_dir).config == RunConfig(
        model="m", split="train", data_path=None, data_label="lab set", negatives=negatives, limit=limit
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
