"""Every bench and evidence module and script follows the command line convention of the ``drugprot`` commands
(``bench.common``): bad input is one line ``<prog>: error: ...`` and exit 2, checked before any computation, and
every file it writes passes the output policy (``drugprot.core.outputs``): never its own input, never a file that
defines a run, an existing file only with ``--overwrite``.

Each case runs the program's ``main`` in-process: the refusal comes before any work, so it is immediate."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from bench import ab, build, corpus, cost, failfast, pipeline, score, score_bounds
from evidence import alignment, curriculum_choice, decision, rl_sim
from tests.conftest import FIXTURE_JSONL
from tests.scripts import load_script

Main = Callable[[Sequence[str]], int]


def old_package(data: Path) -> str:
    """A folder for ``bench.ab --old`` beside the data (an input of ab: no output may lie in it)."""
    (data.parent / "old").mkdir(exist_ok=True)
    return str(data.parent / "old")


def rl_out(data: Path) -> list[str]:
    return ["--smoke", "--out", str(data.parent / "rl")]


DATA_READERS: dict[str, tuple[str, Main, Callable[[Path], list[str]]]] = {
    "ab": ("python -m bench.ab", ab.main, lambda d: ["--old", old_package(d), "--data-path", str(d)]),
    "alignment": ("python -m evidence.alignment", alignment.main, lambda d: ["--data-path", str(d)]),
    "build": ("python -m bench.build", build.main, lambda d: ["--data-path", str(d), "--quick"]),
    "cost": ("python -m bench.cost", cost.main, lambda d: ["--data-path", str(d), "--corpus-scale", "0"]),
    "decision": ("python -m evidence.decision", decision.main, lambda d: ["--data-path", str(d)]),
    "pipeline": ("python -m bench.pipeline", pipeline.main, lambda d: ["--data-path", str(d), "--quick"]),
    "rl_sim": ("python -m evidence.rl_sim", rl_sim.main, lambda d: ["--data-path", str(d), *rl_out(d)]),
    "curriculum_choice": ("python -m evidence.curriculum_choice", curriculum_choice.main,
                          lambda d: ["--data-path", str(d), *rl_out(d)]),
    "score": ("python -m bench.score", score.main, lambda d: ["--data-path", str(d), "--quick"]),
    "eval_size": ("eval_size.py", lambda a: load_script("eval_size").main(list(a)), lambda d: ["--data-path", str(d)]),
    "prompt_lengths": (
        "prompt_lengths.py",
        lambda a: load_script("prompt_lengths").main(list(a)),
        lambda d: ["--data-path", str(d)],
    ),
    "check_sentences": (
        "check_sentences.py",
        lambda a: load_script("check_sentences").main(list(a)),
        lambda d: ["--data", str(d)],
    ),
}  # fmt: skip
"""Every bench or evidence module and script that reads DrugProt data: (its prog, its main, its argv for data)."""
ANALYSES = ("alignment", "decision", "rl_sim", "curriculum_choice", "eval_size")
"""The ones that compare abstracts against the gold: they need two abstracts and gold relations."""
JSON_WRITERS = ("ab", "alignment", "build", "cost", "decision", "pipeline", "score")
"""The ones that read data and write ``--json OUT``."""


def refusal(main: Main, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a refused run (exit 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    assert (exit_.value.code, captured.out, captured.err.count("\n")) == (2, "", 1), captured.err
    return captured.err.rstrip("\n")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_bytes(FIXTURE_JSONL.read_bytes())
    return path


def rows() -> list[dict]:
    return [json.loads(line) for line in FIXTURE_JSONL.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", JSON_WRITERS)
def test_no_bench_module_writes_its_json_over_its_data(
    name: str, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prog, main, argv = DATA_READERS[name]
    before = data.read_bytes()
    line = refusal(main, [*argv(data), "--json", str(data), "--overwrite"], capsys)
    assert line == (
        f"{prog}: error: --json {data}: this is an input of the command ({data}); writing it would destroy it. "
        "Choose another path"
    )
    assert data.read_bytes() == before


@pytest.mark.parametrize("name", JSON_WRITERS)
def test_a_json_output_into_a_missing_folder_or_onto_a_file_is_refused_first(
    name: str, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prog, main, argv = DATA_READERS[name]
    missing = data.parent / "missing" / "out.json"
    assert refusal(main, [*argv(data), "--json", str(missing)], capsys) == (
        f"{prog}: error: --json {missing}: its folder {missing.parent} does not exist; create it first"
    )
    existing = data.parent / "out.json"
    existing.write_bytes(b"earlier result\n")
    assert refusal(main, [*argv(data), "--json", str(existing)], capsys) == (
        f"{prog}: error: --json {existing}: exists; pass --overwrite to replace it, or choose another path"
    )
    assert existing.read_bytes() == b"earlier result\n"


@pytest.mark.parametrize("name", ["failfast", "score_bounds"])
def test_the_writers_without_data_refuse_a_run_file_and_an_existing_file(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = {"failfast": failfast.main, "score_bounds": score_bounds.main}[name]
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_bytes(b"{}\n")
    (run / "metadata.json").write_bytes(b"{}\n")
    line = refusal(main, ["--json", str(run / "traces.jsonl"), "--overwrite"], capsys)
    assert line.startswith(f"python -m bench.{name}: error: --json {run / 'traces.jsonl'}: traces.jsonl is a file that")
    assert sorted(p.name for p in run.iterdir()) == ["metadata.json", "results.jsonl"]
    existing = tmp_path / "out.json"
    existing.write_bytes(b"earlier\n")
    assert refusal(main, ["--json", str(existing)], capsys).endswith(
        "exists; pass --overwrite to replace it, or choose another path"
    )
    assert existing.read_bytes() == b"earlier\n"


def test_corpus_refuses_an_existing_file_and_a_run_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "corpus.jsonl"
    existing.write_bytes(b"mine\n")
    assert refusal(corpus.main, ["--out", str(existing), "--docs", "3"], capsys) == (
        f"python -m bench.corpus: error: --out {existing}: exists; pass --overwrite to replace it, or choose another "
        "path"
    )
    assert existing.read_bytes() == b"mine\n"
    run = tmp_path / "run"
    run.mkdir()
    (run / "traces.jsonl").write_bytes(b"{}\n")
    assert "results.jsonl is a file that defines a run" in refusal(
        corpus.main, ["--out", str(run / "results.jsonl"), "--docs", "3", "--overwrite"], capsys
    )
    assert sorted(p.name for p in run.iterdir()) == ["traces.jsonl"]
    assert corpus.main(["--out", str(existing), "--docs", "3", "--overwrite"]) == 0
    assert len(existing.read_text(encoding="utf-8").splitlines()) == 3


def test_rl_sim_never_replaces_a_run_and_never_writes_into_its_data(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = data.read_bytes()
    assert refusal(rl_sim.main, ["--data-path", str(data), "--smoke", "--out", str(data), "--overwrite"], capsys) == (
        f"python -m evidence.rl_sim: error: --out {data}: this is an input of the command ({data})"
    )
    earlier = data.parent / "rl" / "cues" / "pair-accuracy-neg0-split0"
    earlier.mkdir(parents=True)
    (earlier / "metrics.jsonl").write_bytes(b'{"step": 1}\n')
    line = refusal(
        rl_sim.main, ["--data-path", str(data), "--smoke", "--out", str(data.parent / "rl"), "--overwrite"], capsys
    )
    assert line == (
        f"python -m evidence.rl_sim: error: --out {data.parent / 'rl'}: {earlier} already holds a run (metrics.jsonl), "
        "which is never replaced; choose another --out"
    )
    assert (earlier / "metrics.jsonl").read_bytes() == b'{"step": 1}\n' and data.read_bytes() == before


BAD_DATA = {
    "missing": None,
    "empty": b"",
    "not JSON": b"not json\n",
}


@pytest.mark.parametrize("name", DATA_READERS)
@pytest.mark.parametrize("kind", BAD_DATA)
def test_bad_data_is_one_line_naming_the_file_and_exit_2(
    name: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prog, main, argv = DATA_READERS[name]
    path = tmp_path / "data.jsonl"
    if BAD_DATA[kind] is not None:
        path.write_bytes(BAD_DATA[kind])
    line = refusal(main, argv(path), capsys)
    flag = "--data" if name == "check_sentences" else "--data-path"
    assert line.startswith(f"{prog}: error: {flag} {path}: ")
    assert {
        "missing": "no such file or directory",
        "empty": "no abstract: the source is empty",
        "not JSON": "invalid JSON at column 1",
    }[kind] in line
    written = sorted(p.name for p in tmp_path.iterdir() if p.name != "old")
    assert written == ([] if kind == "missing" else ["data.jsonl"])


@pytest.mark.parametrize("name", ANALYSES)
def test_an_analysis_says_when_the_data_is_too_small(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prog, main, argv = DATA_READERS[name]
    what = {"alignment": "the alignment analysis", "decision": "the decision analysis", "rl_sim": "the RL sandbox",
            "curriculum_choice": "the curriculum choice", "eval_size": "the eval-size analysis"}[name]  # fmt: skip
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(rows()[0]) + "\n", encoding="utf-8")
    assert refusal(main, argv(one), capsys) == (
        f"{prog}: error: --data-path {one}: 1 abstract, too few for {what} (at least 2); pass more abstracts"
    )
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({**row, "relations": []}) + "\n" for row in rows()), encoding="utf-8")
    assert refusal(main, argv(bare), capsys) == (
        f"{prog}: error: --data-path {bare}: no abstract has a gold relation, so {what} has nothing to measure; pass "
        "annotated data (the training or development split)"
    )
    assert not (tmp_path / "rl").exists()  # nothing written


@pytest.mark.parametrize("name", ["decision", "rl_sim", "curriculum_choice"])
def test_a_held_out_analysis_says_when_no_abstract_is_held_out(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two abstracts that both hash into the training part: nothing to score the fit on."""
    prog, main, argv = DATA_READERS[name]
    from evidence.shared import stable_unit

    train_rows = [row for row in rows() if stable_unit(f"split:{row['pmid']}") >= 0.3 and row["relations"]][:2]
    assert len(train_rows) == 2
    small = tmp_path / "small.jsonl"
    small.write_text("".join(json.dumps(row) + "\n" for row in train_rows), encoding="utf-8")
    relations = sum(len(row["relations"]) for row in train_rows)
    what = {"decision": "the decision analysis", "rl_sim": "the RL sandbox",
            "curriculum_choice": "the curriculum choice"}[name]  # fmt: skip
    assert refusal(main, argv(small), capsys) == (
        f"{prog}: error: --data-path {small}: too small for {what}: its 2 abstracts split into 2 training abstracts "
        f"({relations} gold relations) and 0 held-out ones, and it needs both, with gold relations to fit on; pass "
        "more abstracts"
    )


def test_bad_options_of_the_scripts_are_one_line(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    eval_size = load_script("eval_size")
    assert refusal(lambda a: eval_size.main(list(a)), ["--data-path", str(data), "--negatives", "some"], capsys) == (
        "eval_size.py: error: --negatives: negatives must be a non-negative integer or 'all', got 'some'"
    )
    check_sentences = load_script("check_sentences")
    missing = data.parent / "sentences.jsonl"
    line = refusal(lambda a: check_sentences.main(list(a)), ["--data", str(data), "--sentences", str(missing)], capsys)
    assert line.startswith(f"check_sentences.py: error: --sentences {missing}: cannot read it (FileNotFoundError")
    assert refusal(decision.main, ["--data-path", str(data), "--c", "-1"], capsys) == (
        "python -m evidence.decision: error: --c must be a positive finite number (the inverse L2 strength), got -1.0"
    )
    assert refusal(alignment.main, ["--data-path", str(data), "--fp-cost", "1e308"], capsys) == (
        "python -m evidence.alignment: error: --fp-cost: fp_cost must be a real number from 0 to 1000, got 1e+308"
    )


def test_prompt_lengths_refuses_a_bad_knob_in_one_line(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt_lengths = load_script("prompt_lengths")

    def main(argv: Sequence[str]) -> int:
        return prompt_lengths.main(list(argv))

    assert refusal(main, ["--data-path", str(data), "--negatives", "some"], capsys) == (
        "prompt_lengths.py: error: --negatives: negatives must be a non-negative integer or 'all', got 'some'"
    )
    assert refusal(main, ["--data-path", str(data), "--mode", "extraction", "--negatives", "2"], capsys) == (
        "prompt_lengths.py: error: negatives is a pair-mode knob: extraction mode asks for every relation of an "
        "abstract, so every same-sentence pair is already a candidate; leave negatives at 0 (got 2)"
    )


def test_counts_of_the_sandbox_and_the_eval_size_are_checked_first(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--seeds 0`` once ended in a FileNotFoundError after the work (no run folder, no out folder), ``--tasks -5``
    in an IndexError."""
    with pytest.raises(SystemExit) as exit_:
        rl_sim.main(["--data-path", str(data), "--out", str(data.parent / "rl"), "--splits", "0"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(
        "python -m evidence.rl_sim: error: argument --splits: expected a whole number >= 1, got '0'\n"
    )
    eval_size = load_script("eval_size")
    assert refusal(lambda a: eval_size.main(list(a)), ["--data-path", str(data), "--tasks", "100", "-5"], capsys) == (
        "eval_size.py: error: --tasks: expected eval sizes >= 1, or 0 for the whole split; got [100, -5]"
    )
    assert not (data.parent / "rl").exists()


def test_the_runners_never_write_their_json_over_the_code_they_run(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench.failfast and bench.pipeline run (and read) an eval CLI named by --cli, bench.ab a package tree named by
    --old: inputs, never an output."""
    cli = data.parent / "vf-eval"
    cli.write_bytes(b"#!/bin/sh\n")
    for prog, main, argv in (
        ("python -m bench.failfast", failfast.main, ["--cli", f"mine={cli}"]),
        ("python -m bench.pipeline", pipeline.main, ["--data-path", str(data), "--quick", "--cli", str(cli)]),
    ):
        assert refusal(main, [*argv, "--json", str(cli), "--overwrite"], capsys) == (
            f"{prog}: error: --json {cli}: this is an input of the command ({cli}); writing it would destroy it. "
            "Choose another path"
        )
    assert cli.read_bytes() == b"#!/bin/sh\n"
    nested = data.parent / "old" / "core" / "scoring.py"  # bench.ab copies and reads the whole --old tree
    nested.parent.mkdir(parents=True)
    nested.write_bytes(b"# old\n")
    argv = ["--old", str(data.parent / "old"), "--data-path", str(data), "--json", str(nested), "--overwrite"]
    assert refusal(ab.main, argv, capsys) == (
        f"python -m bench.ab: error: --json {nested}: this is an input of the command ({nested}); writing it would "
        "destroy it. Choose another path"
    )
    assert nested.read_bytes() == b"# old\n"
    assert refusal(failfast.main, ["--cli", str(cli)], capsys) == (
        f"python -m bench.failfast: error: --cli takes NAME=PATH, got '{cli}'"
    )
