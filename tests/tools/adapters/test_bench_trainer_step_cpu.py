"""``bench.trainer_step`` end to end on CPU torch: the toy-sized AFMoE through transformers + PEFT (the fallback
builder) takes real optimizer steps and writes a result of the schema the GPU results have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.trainer_models import TINY
from tests.test_bench_trainer_step import run, trinity_counts


def test_tiny_cpu_run_writes_the_result(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers.models.afmoe", reason="this transformers has no native AFMoE (needs >= 5.0)")
    pytest.importorskip("peft")
    out = tmp_path / "r.json"
    args = ["--tiny", "--device", "cpu", "--impl", "hf", "--seq-len", "32", "48", "--sample-tokens", "16"]
    proc = run(*args, "--micro-batches", "2", "--steps", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["benchmark"] == "trainer_step"
    assert result["command"] == "python -m bench.trainer_step " + " ".join(
        [*args, "--micro-batches", "2", "--steps", "2", "--json", str(out)]
    )
    assert result["model"]["config"] == "tiny" and result["model"]["impl"] == "transformers+peft"
    base, _ = trinity_counts(TINY)
    moe_layers = TINY["num_hidden_layers"] - TINY["num_dense_layers"]
    # transformers keeps expert_bias as a parameter (prime-rl as a buffer)
    assert result["model"]["parameters"] == base + moe_layers * TINY["num_experts"] + result["lora"]["parameters"]
    assert result["lora"]["dtypes"] == ["float32"] and result["lora"]["bytes"] == 4 * result["lora"]["parameters"]
    assert [r["seq_len"] for r in result["runs"]] == [32, 48]
    for row in result["runs"]:
        assert row["micro_batches"] == 2 and row["oom"] is False and len(row["step_s"]) == 2
        assert row["tokens_per_s"] > 0 and row["host_peak_rss_gib"] > 0
        assert "peak_reserved_gib" not in row  # no GPU figures on CPU
    assert result["recipe"]["sample_tokens"] == 16 and result["recipe"]["compile"] is False
