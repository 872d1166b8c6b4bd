"""``drugprot demo``: the packaged synthetic sample, the prompt-reading lexical "model", and one real demo run."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from drugprot.core.labels import RELATION_NAMES
from drugprot.core.options import TaskOptions
from drugprot.core.prompts import user_prompt
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from drugprot.evaluation.baselines import baseline_run, predict, reply_text
from drugprot.evaluation.report import summarize
from drugprot.tools import demo
from drugprot.tools.cli import build_parser
from drugprot.tools.cli import main as cli_main
from drugprot.tools.sample import build_sample
from tests.e2e import v1_cli_name


def test_the_sample_file_is_what_its_builder_writes() -> None:
    with demo.sample_path() as path:
        assert path.name == "drugprot_sample.jsonl"
        assert path.read_text(encoding="utf-8") == build_sample.render()


def test_the_sample_loads_in_the_real_schema() -> None:
    with demo.sample_path() as path:
        documents = load_documents("validation", path)
    assert len(documents) == 10
    assert all(doc.pmid.startswith("990001") for doc in documents)  # not PubMed ids
    relations = [rel for doc in documents for rel in doc.relations]
    assert len(relations) == 31 and {rel.type for rel in relations} == set(RELATION_NAMES)
    assert len(build_tasks(documents)) == 30
    assert len(build_tasks(documents, negatives="all")) == 43
    assert {ent.type for doc in documents for ent in doc.entities} == {"CHEMICAL", "GENE-Y", "GENE-N"}


@pytest.mark.parametrize("mark_entities", [True, False])
@pytest.mark.parametrize("negatives", [0, "all"])
def test_the_demo_model_reads_each_prompt_like_the_baseline_reads_the_data(
    mark_entities: bool, negatives: int | str
) -> None:
    with demo.sample_path() as path:
        tasks = build_tasks(load_documents("validation", path), negatives=negatives)
    with_nr = negatives != 0
    for task in tasks:
        prompt = user_prompt(task, mark_entities=mark_entities, with_no_relation=with_nr)
        pair = demo.pair_from_prompt(prompt)
        assert pair is not None and pair.text == task.document.text and pair.with_no_relation == with_nr
        if mark_entities:  # unmarked prompts fall back to the first occurrence of each name
            assert pair.chemical == (task.chemical.start, task.chemical.end)
            assert pair.gene == (task.gene.start, task.gene.end)
            assert demo.lexical_reply(prompt) == reply_text(predict("lexical", task, with_no_relation=with_nr))


def test_a_prompt_that_is_not_a_drugprot_prompt_gets_the_fallback() -> None:
    assert demo.pair_from_prompt("What is 2 + 2?") is None
    assert demo.lexical_reply("What is 2 + 2?").endswith("\\boxed{E}")
    assert demo.lexical_reply("Options:\nM. PART-OF\nN. NO-RELATION\n").endswith("\\boxed{N}")


SAMPLE_LABEL = "bundled synthetic sample (drugprot/tools/sample, 10 abstracts)"


def test_the_eval_cli_is_the_v1_one_of_the_installed_verifiers() -> None:
    command = demo.eval_command()
    assert Path(command[0]).name == v1_cli_name() or command[1] == "-c"
    args = demo.eval_arguments(
        "http://127.0.0.1:1/v1", Path("s.jsonl"), Path("out"), num_tasks=3, data_label=SAMPLE_LABEL, in_process=True
    )
    assert args[:3] == ["drugprot", "-m", demo.MODEL]
    assert args[args.index("--env.taskset.data-path") + 1] == "s.jsonl"
    assert args[args.index("--env.taskset.data-label") + 1] == SAMPLE_LABEL
    assert {"--no-push", "--no-rich", "--no-serve"} <= set(args) and args[args.index("-n") + 1] == "3"


# ------------------------------------------------------------------------------------------- the run's size and label


def test_the_sample_is_labelled_as_what_it_is() -> None:
    assert demo.sample_label(10) == SAMPLE_LABEL


@pytest.mark.parametrize(
    ("negatives", "num_tasks", "rollouts", "expected"),
    [
        ("all", 22, 1, demo.SampleRun(abstracts=10, available=43, tasks=22, rollouts=22)),
        ("all", 22, 3, demo.SampleRun(abstracts=10, available=43, tasks=22, rollouts=66)),
        ("all", None, 1, demo.SampleRun(abstracts=10, available=43, tasks=43, rollouts=43)),
        ("all", 100, 2, demo.SampleRun(abstracts=10, available=43, tasks=43, rollouts=86)),
        ("0", 5, 1, demo.SampleRun(abstracts=10, available=30, tasks=5, rollouts=5)),
    ],
)
def test_the_run_size_is_the_tasks_the_eval_cli_will_take(
    negatives: str, num_tasks: int | None, rollouts: int, expected: demo.SampleRun
) -> None:
    with demo.sample_path() as path:
        planned = demo.plan_sample_run(path, negatives=negatives, num_tasks=num_tasks, rollouts=rollouts)
    assert planned == expected and planned.label == SAMPLE_LABEL


@pytest.mark.parametrize(("num_tasks", "rollouts"), [(0, 1), (5, 0)])
def test_an_empty_run_is_refused(num_tasks: int, rollouts: int) -> None:
    with demo.sample_path() as path, pytest.raises(ValueError, match="must be at least 1"):
        demo.plan_sample_run(path, negatives="all", num_tasks=num_tasks, rollouts=rollouts)


# ------------------------------------------------------------------------------------------- progress


@pytest.mark.parametrize(
    ("done", "total", "seconds", "line"),
    [
        (0, 22, 0.0, "rollouts 0/22 done (0%), 0.0 s"),
        (13, 22, 8.14, "rollouts 13/22 done (59%), 8.1 s"),
        (22, 22, 31.25, "rollouts 22/22 done (100%), 31.2 s"),
        (0, 0, 1.0, "rollouts 0/0 done, 1.0 s"),
    ],
)
def test_the_progress_line(done: int, total: int, seconds: float, line: str) -> None:
    assert demo.progress_line(done, total, seconds) == line


@pytest.mark.parametrize(
    ("done", "total", "step"),
    [(0, 22, 0), (5, 22, 0), (6, 22, 1), (11, 22, 2), (21, 22, 3), (22, 22, 4), (30, 22, 4), (0, 0, 4)],
)
def test_the_progress_step_is_the_quarter_reached(done: int, total: int, step: int) -> None:
    assert demo.progress_step(done, total) == step


def test_count_lines_counts_complete_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    assert demo.count_lines(path) == 0
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')
    assert demo.count_lines(path) == 2


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def grow(run_file: Path, lines: int) -> None:
    with run_file.open("a", encoding="utf-8") as handle:
        handle.write("{}\n" * lines)


def test_progress_counts_the_new_run_s_traces_a_line_per_quarter_without_a_terminal(tmp_path: Path) -> None:
    """The display reads only the run that appeared after it started (an older run in the folder is not counted)."""
    (tmp_path / "old-run").mkdir()
    grow(tmp_path / "old-run" / "traces.jsonl", 5)
    before = set(tmp_path.glob("*/traces.jsonl"))
    stream, clock = io.StringIO(), Clock()
    progress = demo.Progress(tmp_path, before, 8, stream, clock=clock)
    progress.update()
    (tmp_path / "new-run").mkdir()
    run_file = tmp_path / "new-run" / "traces.jsonl"
    for lines, now in ((1, 101.0), (1, 102.0), (3, 103.5), (1, 104.0)):
        grow(run_file, lines)
        clock.now = now
        progress.update()
    progress.update(final=True)
    assert stream.getvalue().splitlines() == [
        "rollouts 0/8 done (0%), 0.0 s",
        "rollouts 2/8 done (25%), 2.0 s",
        "rollouts 5/8 done (62%), 3.5 s",
        "rollouts 6/8 done (75%), 4.0 s",
    ]


def test_progress_ends_with_the_final_count_when_the_run_stops_early(tmp_path: Path) -> None:
    stream, clock = io.StringIO(), Clock()
    progress = demo.Progress(tmp_path, set(), 22, stream, clock=clock)
    progress.update()
    (tmp_path / "run").mkdir()
    grow(tmp_path / "run" / "traces.jsonl", 3)
    clock.now = 107.0
    progress.update()  # still the first quarter: nothing new
    progress.update(final=True)
    assert stream.getvalue() == "rollouts 0/22 done (0%), 0.0 s\nrollouts 3/22 done (14%), 7.0 s\n"


def test_progress_on_a_terminal_rewrites_one_line(tmp_path: Path) -> None:
    stream, clock = Terminal(), Clock()
    progress = demo.Progress(tmp_path, set(), 2, stream, clock=clock)
    progress.update()
    (tmp_path / "run").mkdir()
    grow(tmp_path / "run" / "traces.jsonl", 1)
    clock.now = 101.0
    progress.update()
    progress.update()  # no change, no output
    grow(tmp_path / "run" / "traces.jsonl", 1)
    clock.now = 102.0
    progress.update(final=True)
    assert stream.getvalue() == (
        "\rrollouts 0/2 done (0%), 0.0 s\033[K"
        "\rrollouts 1/2 done (50%), 1.0 s\033[K"
        "\rrollouts 2/2 done (100%), 2.0 s\033[K\n"
    )


# ------------------------------------------------------------------------------------------- CLI


def test_the_run_goes_to_outputs_by_default_and_the_report_options_are_the_report_s() -> None:
    args = build_parser(["demo"]).parse_args(["demo"])
    assert (args.output_dir, args.bootstrap, args.seed, args.plot, args.plot_classes) == (
        Path("outputs"),
        1000,
        0,
        None,
        None,
    )
    assert demo.report_command("outputs/r1", args) == (
        "drugprot report outputs/r1 [--plot PNG] [--plot-classes PNG] [--json]"
    )
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert "for the 95% intervals" in parser.format_help()  # it renders (argparse reads % as a format)
    args = build_parser(["demo"]).parse_args(["demo", "--bootstrap", "200", "--seed", "3"])
    assert demo.report_command("outputs/r1", args) == (
        "drugprot report outputs/r1 --bootstrap 200 --seed 3 [--plot PNG] [--plot-classes PNG] [--json]"
    )


def test_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One real run: progress, the sample's label, intervals, both plots, and a run directory that is kept."""
    out, confusion, classes = tmp_path / "runs", tmp_path / "confusion.png", tmp_path / "classes.png"
    assert (
        cli_main(
            [
                "demo",
                "-n",
                "8",
                "--output-dir",
                str(out),
                "--timeout",
                "900",
                "--bootstrap",
                "200",
                "--plot",
                str(confusion),
                "--plot-classes",
                str(classes),
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
    assert (run_dir / "eval-cli.log").is_file() and sorted(p.name for p in out.iterdir()) == [run_dir.name]
    assert captured.err.splitlines()[-1].startswith("rollouts 8/8 done (100%), ")
    lines = captured.out.splitlines()
    assert lines[2] == f"  model {demo.MODEL} | data {SAMPLE_LABEL} | negatives all | limit -n 8"
    assert (
        "  [low, high]: 95% percentile bootstrap over tasks (all rollouts of a task together), 200 resamples of "
        "the 8 tasks, seed 0 (--bootstrap N, --seed S; --bootstrap 0: none)" in lines
    )
    assert f"wrote the confusion matrix to {confusion}" in lines and f"wrote the per-class chart to {classes}" in lines
    assert f"run kept in {run_dir} (with the CLI's log, eval-cli.log); report it again with:" in lines
    assert f"  drugprot report {run_dir} --bootstrap 200 [--plot PNG] [--plot-classes PNG] [--json]" in lines
    for png in (confusion, classes):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The kept run reports again, and the served lexical baseline scores exactly as the offline baseline run.
    assert cli_main(["report", str(run_dir), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["n_tasks"], payload["n_rollouts"], payload["lines"]["corrupt"]) == (8, 8, 0)
    assert payload["run"]["model"] == demo.MODEL and payload["setting"]["negatives"] == "all"
    assert payload["run"]["data_label"] == SAMPLE_LABEL and payload["run"]["split"] == "validation"
    with demo.sample_path() as path:
        offline = summarize(baseline_run("lexical", TaskOptions(data_path=str(path), negatives="all", num_tasks=8)))
    for key in ("accuracy", "micro_precision", "micro_recall", "micro_f1", "macro_f1", "invalid_rate", "per_class"):
        assert payload[key] == offline[key], key
    assert payload["tokens"]["rollouts_with_usage"] == 8


def test_demo_failure_is_reported_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "eval_command", lambda: ["false"])
    assert cli_main(["demo", "--output-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "drugprot demo: error: the eval CLI failed (exit 1): false drugprot -m" in err
    (log,) = tmp_path.iterdir()  # no run directory was made: the log stays where the run was to go, and is named
    assert log.name.startswith("drugprot-demo-") and err.rstrip().endswith(f"log: {log}")


def test_demo_timeout_stops_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "eval_command", lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    assert cli_main(["demo", "--output-dir", str(tmp_path), "--timeout", "1"]) == 1
    assert "the eval CLI did not finish in 1 s" in capsys.readouterr().err
