"""``drugprot demo``: the packaged synthetic sample, the prompt-reading lexical "model", and one real demo run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from drugprot import demo
from drugprot.baselines import baseline_run, predict, reply_text
from drugprot.cli import main as cli_main
from drugprot.data import load_documents
from drugprot.labels import RELATION_NAMES
from drugprot.prompts import user_prompt
from drugprot.questions import TaskOptions
from drugprot.report import summarize
from drugprot.sample import build_sample
from drugprot.tasks import build_tasks

from .e2e import v1_cli_name


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
def test_the_demo_model_reads_each_prompt_like_the_baseline_reads_the_data(mark_entities: bool,
                                                                             negatives: int | str) -> None:
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


def test_the_eval_cli_is_the_v1_one_of_the_installed_verifiers() -> None:
    command = demo.eval_command()
    assert Path(command[0]).name == v1_cli_name() or command[1] == "-c"
    args = demo.eval_arguments("http://127.0.0.1:1/v1", Path("s.jsonl"), Path("out"), num_tasks=3, in_process=True)
    assert args[:3] == ["drugprot", "-m", demo.MODEL]
    assert args[args.index("--env.taskset.data-path") + 1] == "s.jsonl"
    assert {"--no-push", "--no-rich", "--no-serve"} <= set(args) and args[args.index("-n") + 1] == "3"


def test_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["demo", "-n", "8", "--output-dir", str(tmp_path), "--json", "--timeout", "900"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["n_tasks"], payload["n_rollouts"], payload["lines"]["corrupt"]) == (8, 8, 0)
    assert payload["run"]["model"] == demo.MODEL and payload["setting"]["negatives"] == "all"
    assert Path(payload["demo"]["run_dir"], "traces.jsonl").is_file()
    # Through the real CLI, the served lexical baseline scores exactly as the baseline run on the same tasks.
    with demo.sample_path() as path:
        offline = summarize(baseline_run("lexical", TaskOptions(data_path=str(path), negatives="all", num_tasks=8)))
    for key in ("accuracy", "micro_precision", "micro_recall", "micro_f1", "macro_f1", "invalid_rate", "per_class"):
        assert payload[key] == offline[key], key
    assert payload["tokens"]["rollouts_with_usage"] == 8


def test_demo_failure_is_reported_with_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(demo, "eval_command", lambda: ["false"])
    assert cli_main(["demo", "--output-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "drugprot demo: error: the eval CLI failed (exit 1): false drugprot -m" in err


def test_demo_timeout_stops_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(demo, "eval_command", lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    assert cli_main(["demo", "--output-dir", str(tmp_path), "--timeout", "1"]) == 1
    assert "the eval CLI did not finish in 1 s" in capsys.readouterr().err
