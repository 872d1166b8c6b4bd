"""``bench.trainer_step``: skipped cleanly without a GPU, refuses a bad output before any work, and its committed
GPU results have the schema and the arithmetic the READMEs quote (Trinity-Mini's parameter and adapter counts from
its config, headroom and tokens/s from the raw figures)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.trainer_models import TRINITY_MINI
from tests.bounds import HANG_S

REPO = Path(__file__).resolve().parent.parent
RESULTS = sorted((REPO / "bench" / "results").glob("trainer_step_*.json"))
ROW_KEYS = {"seq_len", "micro_batches", "oom", "peak_allocated_gib", "peak_reserved_gib", "headroom"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "bench.trainer_step", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=False,
    )


def trinity_counts(cfg: dict[str, Any], rank: int = 16) -> tuple[int, int]:
    """Base parameters of prime-rl's AFMoE (``expert_bias`` is a buffer there) and the LoRA parameters of the
    recipe's targets: attention q/k/v/o/gate, the dense MLPs, every routed expert (not the shared one)."""
    h, v, n, d = cfg["hidden_size"], cfg["vocab_size"], cfg["num_hidden_layers"], cfg["num_dense_layers"]
    q, kv = cfg["num_attention_heads"] * cfg["head_dim"], cfg["num_key_value_heads"] * cfg["head_dim"]
    i, m, e = cfg["intermediate_size"], cfg["moe_intermediate_size"], cfg["num_experts"]
    attn = 2 * h * q + 2 * h * kv + q * h + 2 * cfg["head_dim"] + 4 * h
    moe = h * e + (e + cfg["num_shared_experts"]) * 3 * h * m
    base = 2 * v * h + n * attn + d * 3 * h * i + (n - d) * moe + h
    lora_attn = rank * (3 * (h + q) + 2 * (h + kv))
    lora = n * lora_attn + d * 3 * rank * (h + i) + (n - d) * e * 3 * rank * (h + m)
    return base, lora


def test_without_a_gpu_it_prints_one_line_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run("--seq-len", "64", "--json", str(out))
    if "skipped" not in proc.stdout:
        pytest.skip("a CUDA GPU is visible here")
    assert proc.returncode == 0
    assert len(proc.stdout.splitlines()) == 1
    assert proc.stdout.startswith("bench.trainer_step: skipped: ")
    assert not out.exists()


def test_an_existing_output_is_refused_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("keep")
    proc = run("--seq-len", "64", "--json", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "--overwrite" in proc.stderr
    assert out.read_text() == "keep"


def test_cpu_needs_the_tiny_model_and_the_hf_builder() -> None:
    proc = run("--device", "cpu")
    assert proc.returncode == 2
    assert "--device cpu needs --tiny" in proc.stderr
    proc = run("--device", "cpu", "--tiny")
    assert proc.returncode == 2
    assert "--device cpu needs --impl hf" in proc.stderr


def test_the_counts_from_trinity_minis_config() -> None:
    # 26.12B base parameters, 579.08M adapter parameters (the figures the READMEs quote)
    assert trinity_counts(TRINITY_MINI) == (26_123_970_560, 579_076_096)


@pytest.mark.parametrize("path", RESULTS, ids=[p.stem for p in RESULTS])
def test_committed_results(path: Path) -> None:
    result = json.loads(path.read_text())
    assert result["benchmark"] == "trainer_step"
    assert result["command"].startswith("python -m bench.trainer_step ")
    assert "/root" not in result["command"] and "/work" not in result["command"]
    assert {"gpu", "gpu_total_gib", "torch", "transformers"} <= result["machine"].keys()
    model, lora = result["model"], result["lora"]
    assert model["config"] == "Trinity-Mini" and model["impl"] == "prime-rl"
    base, adapter = trinity_counts(TRINITY_MINI)
    assert model["parameters"] == base + adapter
    assert model["parameter_bytes"] == 4 * (base + adapter)  # optimization_dtype float32
    assert lora["parameters"] == adapter and lora["bytes"] == 4 * adapter and lora["dtypes"] == ["float32"]
    # prime-rl: one MultiLoRA module per attention/dense projection and per layer's experts (196); broadcast per
    # expert for vLLM, A and B of 5 x 32 + 3 x 2 + 3 x 128 x 30 = 11,686 modules
    if not result.get("ranks", {}).get("torchrun"):  # the broadcast layout is read in one process only
        assert lora["modules"] == 5 * 32 + 3 * 2 + 30
        assert lora["broadcast_tensors"] == 2 * 11_686 and lora["broadcast_bytes"] == lora["bytes"]
    else:  # torchrun: the ranks' shards partition the model
        assert sum(result["ranks"]["shard_parameters"]) == model["parameters"]
    total = result["machine"]["gpu_total_gib"]
    for row in result["runs"] + result.get("search", []):
        assert row.keys() >= ROW_KEYS
        assert abs(row["headroom"] - (1 - row["peak_reserved_gib"] / total)) < 0.002
        assert row["fits_with_headroom"] == (not row["oom"] and row["headroom"] >= 0.10)
        if row["oom"]:
            assert "step_s" not in row
        else:
            ranks = result.get("ranks", {}).get("world", 1)
            expected = ranks * row["seq_len"] * row["micro_batches"] / statistics.median(row["step_s"])
            assert abs(row["tokens_per_s"] - expected) / expected < 0.01
            if "micro_batch_s" in row:  # the step = its micro-batches + the optimizer step
                parts = row["micro_batches"] * row["micro_batch_s"] + row["optimizer_s"]
                assert abs(statistics.median(row["step_s"]) - parts) < 0.01 * parts + 0.005 * row["micro_batches"]
                assert abs(row["micro_batch_tokens_per_s"] - ranks * row["seq_len"] / row["micro_batch_s"]) < 0.1
    fits = [r["seq_len"] for r in result["runs"] + result.get("search", []) if r["fits_with_headroom"]]
    if "largest_measured_seq_len_with_headroom" in result:  # the first result predates the field
        assert result["largest_measured_seq_len_with_headroom"] == (max(fits) if fits else None)


def test_the_recipes_have_results() -> None:
    names = {p.stem for p in RESULTS}
    assert {"trainer_step_drugprot", "trainer_step_extraction", "trainer_step_max_seq_len"} <= names
    for name, seq_len in [("trainer_step_drugprot", 10240), ("trainer_step_extraction", 14336)]:
        runs = json.loads((REPO / "bench" / "results" / f"{name}.json").read_text())["runs"]
        assert any(r["seq_len"] == seq_len and r["fits_with_headroom"] for r in runs)
