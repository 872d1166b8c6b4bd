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
from drugprot.core.candidates import negative_pairs
from drugprot.core.labels import NO_RELATION
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
        negatives = sum(t.labels == (NO_RELATION.name,) for t in build_tasks(documents, negatives=k, seed=0))
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
    # the same two tasks and replies: one right, one wrong, both well-formed; the default reward (utility + 0.125 x
    # format) gives the right one 1 + 0.125 and the wrong one (1 FP, 1 FN) -0.5 - 1 + 0.125: exact on the reward grid
    assert harnesses["drugprot"]["runs"][0]["reward_sum"] == harnesses["null"]["runs"][0]["reward_sum"] == -0.25


# --- bench.cost: the prompt cost of the official metric, pair mode (negatives="all") vs extraction mode ---

FIXTURE = REPO / "tests" / "fixtures" / "drugprot_fixture.jsonl"
FIXTURE_ABSTRACTS = 9
FIXTURE_PAIR_ALL_TASKS = 42  # the fixture's gold pairs and every same-sentence NO-RELATION candidate


def _rendered_prompts(data_path: Path, **knobs: Any) -> list[tuple[str, str]]:
    """(system, user) prompt of every task, read off a taskset built here through the public names."""
    import drugprot

    config = drugprot.DrugprotConfig.model_validate(
        {"id": "drugprot", "split": "train", "data_path": str(data_path), **knobs}
    )
    prompts = [(task.data.system_prompt, task.data.prompt) for task in drugprot.DrugprotTaskset(config)]
    assert all(isinstance(s, str) and isinstance(u, str) for s, u in prompts)
    return prompts


def _expected_cost(prompts: list[tuple[str, str]]) -> dict[str, Any]:
    lengths = [len(s) + len(u) for s, u in prompts]
    nbytes = [len(s.encode("utf-8")) + len(u.encode("utf-8")) for s, u in prompts]
    return {
        "prompts": len(prompts),
        "chars": sum(lengths),
        "system_chars": sum(len(s) for s, _ in prompts),
        "user_chars": sum(len(u) for _, u in prompts),
        "bytes": sum(nbytes),
        "mean_chars": round(sum(lengths) / len(prompts), 1),
        "max_chars": max(lengths),
        "longest_bytes": max(nbytes),
    }


def test_cost_counts_every_prompt_of_both_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench import cost

    out = tmp_path / "cost.json"
    assert cost.main(["--quick", "--data-path", str(FIXTURE), "--split", "train", "--json", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    data, generated = result["datasets"]
    overhead = cost.prompt_lengths.TEMPLATE_OVERHEAD_TOKENS
    assert result["template_overhead_tokens"] == overhead == 128

    # the fixture: exact counts, and every figure equal to the sum over the taskset's own prompts
    assert (data["name"], data["split"], data["abstracts"]) == ("data", "train", FIXTURE_ABSTRACTS)
    assert data["modes"]["pair"]["knobs"] == {"mode": "pair", "negatives": "all"}
    assert data["modes"]["extraction"]["knobs"] == {"mode": "extraction"}
    expected = {
        "pair": _expected_cost(_rendered_prompts(FIXTURE, mode="pair", negatives="all")),
        "extraction": _expected_cost(_rendered_prompts(FIXTURE, mode="extraction")),
    }
    assert (expected["pair"]["prompts"], expected["extraction"]["prompts"]) == (
        FIXTURE_PAIR_ALL_TASKS,
        FIXTURE_ABSTRACTS,
    )
    for mode, exp in expected.items():
        got = data["modes"][mode]
        for key in ("prompts", "chars", "system_chars", "user_chars", "bytes", "mean_chars", "max_chars"):
            assert got[key] == exp[key], (mode, key)
        assert got["longest"]["bytes"] == exp["longest_bytes"]
        assert got["longest"]["token_bound"] == exp["longest_bytes"] + overhead
        assert got["total_token_bound"] == exp["bytes"] + exp["prompts"] * overhead
    pair_chars, ext_chars = expected["pair"]["chars"], expected["extraction"]["chars"]
    assert data["ratio_pair_over_extraction"]["prompts"] == round(FIXTURE_PAIR_ALL_TASKS / FIXTURE_ABSTRACTS, 3)
    assert data["ratio_pair_over_extraction"]["chars"] == round(pair_chars / ext_chars, 3)
    # nine short abstracts with 42 candidate pairs: extraction saves ~4x here, short of the 10x target
    assert data["target"] == {"chars_ratio_min": 10.0, "chars_ratio": round(pair_chars / ext_chars, 3), "met": False}

    # the generated corpus: one extraction prompt per abstract; pair prompts follow drugprot.core.candidates
    documents = [document_from_row(row) for row in corpus.generate(QUICK_DOCS, seed=0)]
    negatives = sum(len(negative_pairs(doc)) for doc in documents)
    assert (generated["name"], generated["abstracts"], generated["data_path"]) == ("corpus", QUICK_DOCS, None)
    assert generated["corpus"] == {"docs": QUICK_DOCS, "seed": 0}
    assert "SYNTHETIC" in generated["description"] and "proxy" in generated["description"]
    assert generated["modes"]["extraction"]["prompts"] == QUICK_DOCS
    assert generated["modes"]["pair"]["prompts"] == QUICK_POSITIVES + negatives

    # the table printed beside the JSON file
    table = capsys.readouterr().out
    assert f"  {'prompts':<42}{FIXTURE_PAIR_ALL_TASKS:>20}{FIXTURE_ABSTRACTS:>16}{'4.67x':>20}" in table
    assert f"fewer prompt chars: NOT MET ({pair_chars / ext_chars:.2f}x)" in table
    corpus_header = f"generated corpus: {QUICK_DOCS} abstracts (train split)\n  bench.corpus, {QUICK_DOCS} abstracts"
    assert f"{corpus_header}, seed 0: SYNTHETIC" in table


def test_cost_reports_bad_data_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench import cost

    bad = tmp_path / "bad.jsonl"
    row = json.loads(FIXTURE.read_text(encoding="utf-8").splitlines()[0])
    del row["entities"]
    bad.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "cost.json"
    with pytest.raises(SystemExit) as refused:  # checked before any work (bench.common.load_data)
        cost.main(["--data-path", str(bad), "--corpus-scale", "0", "--json", str(out)])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        f"python -m bench.cost: error: --data-path {bad}: missing field (source {bad}#row0, pmid 90000001, field "
        "entities)\n"
    )
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]  # no result, not even a partial one
    with pytest.raises(SystemExit) as missing:
        cost.main(["--data-path", str(tmp_path / "absent.jsonl"), "--corpus-scale", "0"])
    assert missing.value.code == 2


def test_score_bounds_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In-process (the quick replies are 20 kB): every shape of both modes scores, with the outcome it is built for."""
    from bench import score_bounds

    assert score_bounds.main(["--quick", "--json", str(tmp_path / "bounds.json")]) == 0
    result = json.loads((tmp_path / "bounds.json").read_text(encoding="utf-8"))
    assert json.loads(capsys.readouterr().out) == result
    assert (result["chars"], result["repeats"], result["bound_ms"]) == (20_000, 1, 50)
    shapes = result["extraction"]["shapes"]
    assert len(shapes) == 15 and len(result["pair"]["shapes"]) == 16
    assert shapes["distinct unknown ids, block at the cap"]["outcome"] == [0.0, "unknown_id"]
    assert shapes["wrong-type lines, block at the cap"]["outcome"] == [0.0, "wrong_entity_type"]
    assert shapes["unclosed block"]["outcome"] == [0.0, "no_relations_block"]
    assert shapes["many small blocks"]["outcome"][1] == "several_relations_blocks"
    # 20 kB stays under the 65,536-character cap; at 1 MB the "whole reply" blocks are relations_block_too_long
    assert shapes["repeated valid lines, block of the whole reply"]["outcome"][1] == "duplicate_relation"
    assert max(s["chars"] for s in shapes.values()) <= 2 * 20_000 + 100
