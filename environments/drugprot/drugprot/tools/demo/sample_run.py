"""The bundled synthetic sample and the size of a demo run on it."""

from __future__ import annotations

import contextlib
import importlib.resources
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import TaskOptions
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from drugprot.tools.demo.errors import DemoError

SAMPLE_NAME = "drugprot/tools/sample"


@contextlib.contextmanager
def sample_path() -> Iterator[Path]:
    """The packaged synthetic sample file as a real path (``drugprot/tools/sample/drugprot_sample.jsonl``)."""
    resource = importlib.resources.files("drugprot.tools.sample").joinpath("drugprot_sample.jsonl")
    with importlib.resources.as_file(resource) as path:
        if not path.is_file():
            raise DemoError(f"the sample set is missing from the installed package ({path}); reinstall drugprot")
        yield path


def sample_options(path: Path, *, negatives: str) -> TaskOptions:
    """The task options of a demo run on the sample at ``path``: what the eval CLI's arguments set
    (``--env.taskset.data-path``, ``--env.taskset.negatives``) and the taskset's defaults for the rest.

    Raises:
        DrugprotConfigError: a bad ``negatives``.
    """
    return TaskOptions(data_path=str(path), negatives=negatives)


@dataclass(frozen=True, slots=True)
class SampleRun:
    """What the demo evaluates: how many abstracts the sample has and how many rollouts the run will make."""

    abstracts: int
    available: int
    """Tasks the sample has with the run's ``negatives``."""
    tasks: int
    """Tasks the run evaluates (after ``num_tasks``)."""
    rollouts: int
    """Rollouts the run makes: ``tasks`` times the rollouts per task."""

    @property
    def label(self) -> str:
        """The ``data_label`` the run records, which the report prints as its data."""
        return sample_label(self.abstracts)


def sample_label(abstracts: int) -> str:
    """How the report names the sample: ``bundled synthetic sample (drugprot/tools/sample, 10 abstracts)``."""
    return f"bundled synthetic sample ({SAMPLE_NAME}, {abstracts} abstracts)"


def plan_sample_run(path: Path, *, negatives: str, num_tasks: int | None, rollouts: int) -> SampleRun:
    """The size of a demo run on the sample at ``path``: the eval CLI evaluates the first ``num_tasks`` tasks.

    Raises:
        DrugprotDataError: the sample does not load (a broken install).
        DrugprotConfigError: a bad ``negatives``, or ``num_tasks``/``rollouts`` below 1 (also a ``ValueError``).
    """
    if rollouts < 1 or (num_tasks is not None and num_tasks < 1):
        raise DrugprotConfigError(
            f"--rollouts and --num-tasks must be at least 1, got {rollouts} and {num_tasks}",
            knob="rollouts" if rollouts < 1 else "num_tasks",
        )
    options = sample_options(path, negatives=negatives)
    documents = load_documents(options.split, path)
    tasks = len(build_tasks(documents, negatives=options.negatives))
    selected = tasks if num_tasks is None else min(num_tasks, tasks)
    return SampleRun(abstracts=len(documents), available=tasks, tasks=selected, rollouts=selected * rollouts)
