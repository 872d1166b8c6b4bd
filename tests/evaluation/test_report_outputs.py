"""``drugprot report`` and ``drugprot baseline`` never write over what they read (the output policy,
``drugprot.core.outputs``, applied by ``drugprot.evaluation.report_outputs`` before any work)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drugprot.tools.cli import main as cli_main
from tests.evaluation.extraction_traces import hand_run, legacy_hand_run
from tests.evaluation.traces import multilabel_run


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("flag", ["--export-tsv", "--plot", "--plot-classes"])
def test_report_refuses_to_write_over_its_run_file(
    tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = hand_run(tmp_path) if flag == "--plot-classes" else multilabel_run(tmp_path)
    before = snapshot(run)
    target = run / "traces.jsonl"
    assert cli_main(["report", str(run), flag, str(target), "--overwrite"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before the report
    assert captured.err == (
        f"drugprot report: error: {flag} {target}: this is an input of the command ({target}); writing it would "
        "destroy it. Choose another path\n"
    )
    assert snapshot(run) == before


def test_report_refuses_its_run_file_through_a_symlink_a_hard_link_or_dots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = multilabel_run(tmp_path)
    before = snapshot(run)
    (tmp_path / "link.tsv").symlink_to(run / "traces.jsonl")
    os.link(run / "traces.jsonl", tmp_path / "hard.tsv")
    for target in (tmp_path / "link.tsv", tmp_path / "hard.tsv", run / ".." / run.name / "traces.jsonl"):
        assert cli_main(["report", str(run), "--export-tsv", str(target), "--overwrite"]) == 2
        assert "this is an input of the command" in capsys.readouterr().err
    assert cli_main(["report", str(run), "--export-tsv", str(run / "configs" / "resolved" / "eval.json")]) == 2
    assert snapshot(run) == before


def test_report_replaces_an_existing_file_only_with_overwrite_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = multilabel_run(tmp_path)
    other = tmp_path / "unrelated.tsv"
    other.write_bytes(b"precious\n")
    assert cli_main(["report", str(run), "--export-tsv", str(other)]) == 2
    assert capsys.readouterr().err == (
        f"drugprot report: error: --export-tsv {other}: exists; pass --overwrite to replace it, or choose another "
        "path\n"
    )
    assert other.read_bytes() == b"precious\n"
    assert cli_main(["report", str(run), "--export-tsv", str(other), "--overwrite"]) == 0
    assert f"wrote 4 predictions to {other} (replaced the existing file: --overwrite)" in capsys.readouterr().err
    assert other.read_bytes() != b"precious\n"


def test_report_checks_the_output_folder_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = multilabel_run(tmp_path)
    target = tmp_path / "missing" / "confusion.png"
    assert cli_main(["report", str(run), "--plot", str(target)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        f"drugprot report: error: --plot {target}: its folder {tmp_path / 'missing'} does not exist; create it first\n",
    )


def test_export_gold_refuses_existing_files_and_creates_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = multilabel_run(tmp_path)
    gold = tmp_path / "gold"
    assert cli_main(["report", str(run), "--export-gold", str(gold)]) == 0
    first = snapshot(gold)
    assert sorted(first) == ["gold_relations.tsv", "pmids.txt"]
    capsys.readouterr()
    assert cli_main(["report", str(run), "--export-gold", str(gold)]) == 2
    assert capsys.readouterr().err == (
        f"drugprot report: error: --export-gold {gold / 'gold_relations.tsv'}: exists; pass --overwrite to replace "
        "it, or choose another path\n"
    )
    assert cli_main(["report", str(run), "--export-gold", str(gold), "--overwrite"]) == 0
    assert f"(replaced {gold / 'gold_relations.tsv'}, {gold / 'pmids.txt'})" in capsys.readouterr().err
    assert snapshot(gold) == first


def test_baseline_refuses_to_write_over_its_data_file(
    tmp_path: Path, fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_bytes(fixture_jsonl.read_bytes())
    before = data.read_bytes()
    argv = ["baseline", "lexical", "--data-path", str(data), "--bootstrap", "0", "--export-tsv", str(data)]
    assert cli_main([*argv, "--overwrite"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"drugprot baseline: error: --export-tsv {data}: this is an input of the command")
    assert data.read_bytes() == before


def test_baseline_keeps_its_old_seed_spelling_for_the_sampling_seed(
    fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["baseline", "lexical", "--data-path", str(fixture_jsonl), "--negatives", "1", "--json", "--bootstrap", "0"]
    outs = []
    for seed in (["--sampling-seed", "5"], ["--seed", "5"], ["--sampling-seed", "0"]):
        assert cli_main([*base, *seed]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert outs[0] != outs[2]  # the seed draws the negatives


def test_an_export_named_traces_jsonl_cannot_shadow_a_legacy_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A legacy run keeps ``results.jsonl``; a ``traces.jsonl`` written beside it would be read first afterwards
    and change the run's report, so the policy refuses the name there, ``--overwrite`` or not."""
    run = legacy_hand_run(tmp_path / "legacy")
    before = snapshot(run)
    assert cli_main(["report", str(run), "--json"]) == 0
    report = capsys.readouterr().out
    target = run / "traces.jsonl"
    assert cli_main(["report", str(run), "--export-tsv", str(target), "--overwrite"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"drugprot report: error: --export-tsv {target}: traces.jsonl is a file that defines a run, and {run} is a "
        "run folder (it holds results.jsonl, metadata.json): writing it would replace the run's record or change how "
        "the run is read, even with --overwrite. Choose another name or folder\n"
    )
    assert snapshot(run) == before
    assert cli_main(["report", str(run), "--json"]) == 0 and capsys.readouterr().out == report


def test_an_output_that_is_a_symlink_loop_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = multilabel_run(tmp_path)
    loop = tmp_path / "loop.tsv"
    loop.symlink_to(loop)
    assert cli_main(["report", str(run), "--export-tsv", str(loop), "--overwrite"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"drugprot report: error: --export-tsv {loop}: cannot be resolved (")
