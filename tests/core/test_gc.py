"""Tests of drugprot.core._gc.gc_paused and that the bulk loaders run without cyclic collections."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drugprot.core._gc import gc_paused
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """Counts the cyclic collections that start while the test runs, with a threshold that makes them frequent."""
    started: list[int] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    threshold, was_enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(10)
    gc.enable()
    gc.callbacks.append(callback)
    try:
        yield started
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)
        if not was_enabled:
            gc.disable()


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


def _collections_during(fn: Callable[[], object], started: list[int]) -> int:
    gc.collect()  # same starting allocation count for every call
    started.clear()
    fn()
    return len(started)


def test_loaders_collect_no_more_on_100_times_the_data(
    collections: list[int], fixture_jsonl: Path, tmp_path: Path
) -> None:
    """Only the loaders' constant set-up runs with the collector on: 100x the rows, the same collections."""
    rows = [json.loads(line) for line in fixture_jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    big = tmp_path / "big.jsonl"  # same name length as small.jsonl, so the same set-up allocations
    small = tmp_path / "sml.jsonl"
    small.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    big.write_text(
        "".join(json.dumps({**row, "pmid": f"{row['pmid']}{copy:03d}"}) + "\n" for copy in range(100) for row in rows),
        encoding="utf-8",
    )
    counts = {}
    for path in (small, big):
        documents = load_documents("train", path)
        counts[path.name] = (
            len(documents),
            _collections_during(lambda p=path: load_documents("train", p), collections),
            _collections_during(lambda d=documents: build_tasks(d, negatives="all"), collections),
            _collections_during(
                lambda p=path: load_questions(TaskOptions(split="train", data_path=str(p), negatives=1)), collections
            ),
        )
    assert counts["big.jsonl"][0] == 100 * counts["sml.jsonl"][0] == 900
    assert counts["big.jsonl"][1:] == counts["sml.jsonl"][1:]
    # Control: the same number of container allocations outside a pause does trigger collections.
    assert _collections_during(lambda: [{"k": [i]} for i in range(1000)], collections) > 0
    assert gc.isenabled()
