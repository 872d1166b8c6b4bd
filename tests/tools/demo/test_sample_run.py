"""The bundled synthetic sample and the size of a demo run on it (``drugprot.tools.demo.sample_run``)."""

from __future__ import annotations

import pytest

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from drugprot.tools import demo
from drugprot.tools.sample import build_sample
from tests.tools.demo import SAMPLE_LABEL


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


@pytest.mark.parametrize(("num_tasks", "rollouts", "knob"), [(0, 1, "num_tasks"), (5, 0, "rollouts")])
def test_an_empty_run_is_a_config_error_naming_the_knob(num_tasks: int, rollouts: int, knob: str) -> None:
    with demo.sample_path() as path, pytest.raises(DrugprotConfigError) as excinfo:
        demo.plan_sample_run(path, negatives="all", num_tasks=num_tasks, rollouts=rollouts)
    assert excinfo.value.knob == knob
    assert str(excinfo.value) == f"--rollouts and --num-tasks must be at least 1, got {rollouts} and {num_tasks}"


def test_a_bad_negatives_is_a_config_error() -> None:
    with demo.sample_path() as path, pytest.raises(DrugprotConfigError) as excinfo:
        demo.plan_sample_run(path, negatives="some", num_tasks=None, rollouts=1)
    assert excinfo.value.knob == "negatives"
