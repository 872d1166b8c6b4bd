"""Tests of drugprot.core._gc.gc_paused, and that every bulk build of records runs with the collector paused.

The bulk builds are observed, not timed: a profiler records ``gc.isenabled()`` at each call of the per-record
functions (``document_from_row``, ``_json_value``, ``positive_pairs``, ``question_for``) while the loaders run.
"""

from __future__ import annotations

import gc
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import drugprot.core
from drugprot.core._gc import gc_paused
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.sources import document_from_row, load_documents
from drugprot.core.tasks import build_tasks

CORE = (str(Path(drugprot.core.__file__).parent), str(Path(drugprot.core.__file__).parents[1] / "modes"))
"""Where the per-record functions live: the core, and the modes' task builders (``question_for`` is pair mode's)."""
PER_RECORD = frozenset({"document_from_row", "_json_value", "positive_pairs", "question_for"})


@contextmanager
def collector_on() -> Iterator[None]:
    """The collector enabled for the block, as in an ordinary process; its previous state restored after."""
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        (gc.enable if was_enabled else gc.disable)()


def gc_state_per_call(fn: Callable[[], Any]) -> dict[str, set[bool]]:
    """Run ``fn`` with the collector on; for each per-record core function it calls, the collector states seen."""
    seen: dict[str, set[bool]] = {}

    def profile(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event == "call" and code.co_name in PER_RECORD and code.co_filename.startswith(CORE):
            seen.setdefault(code.co_name, set()).add(gc.isenabled())

    with collector_on():
        sys.setprofile(profile)
        try:
            fn()
        finally:
            sys.setprofile(None)
        assert gc.isenabled()  # re-enabled on the way out
    return seen


def test_gc_paused_restores_the_previous_state() -> None:
    was_enabled = gc.isenabled()
    try:
        gc.enable()
        with gc_paused():
            assert not gc.isenabled()
            with gc_paused():  # nested: the inner exit must not re-enable
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        with pytest.raises(RuntimeError, match="boom"), gc_paused():
            raise RuntimeError("boom")
        assert gc.isenabled()
        gc.disable()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_gc_paused_as_a_decorator_pauses_each_call() -> None:
    @gc_paused()
    def state() -> bool:
        return gc.isenabled()

    with collector_on():
        assert [state(), gc.isenabled(), state()] == [False, True, False]


def test_the_probe_sees_the_collector_on_outside_a_loader(fixture_jsonl: Path) -> None:
    """The control: called on its own, the per-record validator runs with the collector on."""
    row = {"pmid": "1", "text": "x", "entities": [], "relations": []}
    assert gc_state_per_call(lambda: document_from_row(row)) == {"document_from_row": {True}}


def test_file_loaders_read_and_validate_every_row_with_the_collector_paused(
    fixture_jsonl: Path, fixture_tsv: Path, tmp_path: Path
) -> None:
    json_file = tmp_path / "rows.json"
    lines = [line for line in fixture_jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    json_file.write_text("[" + ",".join(lines) + "]", encoding="utf-8")
    assert len(load_documents("train", json_file)) == 9
    for path, expected in (
        (fixture_jsonl, {"_json_value": {False}, "document_from_row": {False}}),
        (json_file, {"_json_value": {False}, "document_from_row": {False}}),
        (fixture_tsv, {"document_from_row": {False}}),
    ):
        assert gc_state_per_call(lambda p=path: load_documents("train", p)) == expected, path


def test_task_and_question_builders_run_with_the_collector_paused(fixture_jsonl: Path, tmp_path: Path) -> None:
    documents = load_documents("train", fixture_jsonl)
    assert gc_state_per_call(lambda: build_tasks(documents, negatives="all")) == {"positive_pairs": {False}}
    data = shutil.copy(fixture_jsonl, tmp_path / "data.jsonl")
    options = TaskOptions(split="train", data_path=str(data), negatives=1)
    assert gc_state_per_call(lambda: load_questions(options)) == {
        "_json_value": {False},
        "document_from_row": {False},
        "positive_pairs": {False},
        "question_for": {False},
    }
