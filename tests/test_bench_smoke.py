"""Smoke test of the benchmarks (``bench/``): the quick modes run, and their non-timing outputs are exact.

No timing is asserted. Counts are those of the generated 100-abstract corpus (seed 0); the NO-RELATION
counts are checked against ``drugprot.core.candidates`` itself, so they follow its same-sentence rule.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import corpus
from bench.score import SHAPES
from drugprot.core.sources import document_from_row, load_documents
from drugprot.core.tasks import build_tasks

REPO = Path(__file__).resolve().parent.parent
QUICK_DOCS = 100
QUICK_POSITIVES = 485  # distinct gold (chemical, gene) pairs of the quick corpus


def run_quick(module: str, *args: str, timeout: float = 1200) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", module, "--quick", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def test_generator_matches_the_train_census() -> None:
    stats = corpus.corpus_stats(corpus.generate())
    assert stats["documents"] == 3500
    assert stats["entity_types"] == {"CHEMICAL": 46_274, "GENE-N": 14_834, "GENE-Y": 28_421}
    assert stats["relation_types"] == corpus.RELATION_TOTALS
    assert stats["relations"] == 17_274
    assert stats["documents_without_relations"] == 1_067
    assert stats["text_chars_max"] <= corpus.MAX_TEXT
    assert 1_400 <= stats["text_chars_mean"] <= 1_700


def test_generator_is_deterministic_and_loads_in_every_format(tmp_path: Path) -> None:
    rows = corpus.generate(QUICK_DOCS, seed=0)
    assert rows == corpus.generate(QUICK_DOCS, seed=0)
    assert rows != corpus.generate(QUICK_DOCS, seed=1)
    stats = corpus.corpus_stats(rows)
    assert stats["entity_types"] == {"CHEMICAL": 1322, "GENE-N": 424, "GENE-Y": 812}
    assert (stats["relations"], stats["relation_pairs"], stats["documents_without_relations"]) == (493, 485, 30)
    formats = ["jsonl", "json", "tsv"] + (["parquet"] if _has_pyarrow() else [])
    loaded = {}
    for fmt in formats:
        path = corpus.write(rows, tmp_path / (f"corpus.{fmt}" if fmt != "tsv" else "corpus_tsv"), fmt)
        loaded[fmt] = load_documents("train", path)
    first = loaded["jsonl"]
    assert len(first) == QUICK_DOCS
    for docs in loaded.values():
        assert docs == first


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def test_build_quick() -> None:
    result = run_quick("bench.build")
    assert result["documents"] == QUICK_DOCS
    assert result["corpus"]["relations"] == 493
    documents = [document_from_row(row) for row in corpus.generate(QUICK_DOCS, seed=0)]
    for setting in ("0", "1", "all"):
        k = setting if setting == "all" else int(setting)
        negatives = sum(task.labels == ("NO-RELATION",) for task in build_tasks(documents, negatives=k, seed=0))
        entry = result["negatives"][setting]
        assert (entry["positive"], entry["negative"]) == (QUICK_POSITIVES, negatives)
        assert entry["tasks"] == entry["memory"]["tasks"] == QUICK_POSITIVES + negatives
        assert entry["total"]["cpu_s"] >= 0
    assert result["imports"]["heavy_modules_after_core_import"] == []


def test_score_quick() -> None:
    result = run_quick("bench.score")
    assert result["replies"] == 200
    assert result["reply_chars_mean"] > 2400  # ~600-token reasoning
    assert result["shape_check"] == 200  # every generated reply parses as its shape's spec says
    assert result["verifiers"]["agree"] == 200  # core and verifiers' task.score give the same result
    assert set(result["shapes"]) == set(SHAPES)  # every accepted and rejected shape is exercised


@pytest.mark.skipif(shutil.which("uv") is None, reason="the null harness needs uv")
def test_pipeline_quick() -> None:
    result = run_quick("bench.pipeline")
    level = result["concurrency"]["2"]
    for env in ("drugprot", "echo-taskset"):
        (run,) = level[env]["runs"]
        assert (run["episodes"], run["ok"], run["errors"]) == (2, 2, 0)
    assert level["echo-taskset"]["runs"][0]["rewards"] == {"replied": 2.0}
    assert level["drugprot"]["runs"][0]["rewards"]["format"] == 2.0  # the served reply is well-formed


@pytest.mark.skipif(shutil.which("uv") is None, reason="the null harness needs uv")
def test_pipeline_harnesses_quick() -> None:
    result = run_quick("bench.pipeline", "--harnesses")
    harnesses = result["harnesses"]
    for harness in ("drugprot", "null"):
        (run,) = harnesses[harness]["runs"]
        assert (run["harness"], run["rollouts"], run["ok"], run["concurrency"], run["warmup"]) == (harness, 2, 2, 2, 2)
        assert run["cpu_s"] >= 0 and run["wall_s"] > 0
    # the same two tasks and replies: one right, one wrong, both well-formed
    assert harnesses["drugprot"]["runs"][0]["reward_sum"] == harnesses["null"]["runs"][0]["reward_sum"] == 1.2
