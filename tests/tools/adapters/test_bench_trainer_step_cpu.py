"""``bench.trainer_step`` end to end on CPU torch: the toy-sized AFMoE through transformers + PEFT (the fallback
builder) takes real optimizer steps and writes a result of the schema the GPU results have."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from bench.trainer_models import TINY
from tests.test_bench_trainer_step import REPO, run, trinity_counts


def run_ranks(n: int, *args: str) -> subprocess.CompletedProcess[str]:
    """``torchrun --nproc-per-node n -m bench.trainer_step ARGS`` (``torch.distributed.run``), from the repo root."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n)]
    return subprocess.run(
        [*command, "-m", "bench.trainer_step", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


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


def test_two_cpu_ranks_shard_the_model_and_merge_their_figures(tmp_path: Path) -> None:
    # bench.trainer_step under torchrun: 2 gloo ranks, FSDP2 over both (the multi-rank path of issue 45; the
    # prime-rl builder with expert parallelism needs CUDA, so CI runs this transformers + PEFT path)
    pytest.importorskip("torch.distributed.run")
    pytest.importorskip("transformers.models.afmoe", reason="this transformers has no native AFMoE (needs >= 5.0)")
    pytest.importorskip("peft")
    import torch.distributed as dist

    if not dist.is_gloo_available():
        pytest.skip("this torch has no gloo backend")
    out = tmp_path / "r.json"
    args = ["--tiny", "--device", "cpu", "--impl", "hf", "--seq-len", "32", "--sample-tokens", "16"]
    proc = run_ranks(2, *args, "--micro-batches", "2", "--steps", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["ranks"]["world"] == 2 and result["ranks"]["ep"] == 1
    assert any(s.startswith("torchrun: 2 ranks, FSDP2 over all") for s in result["model"]["substitutions"])
    # the shards partition the model: every parameter element on exactly one rank, the two halves within a row
    # of each other (FSDP2 shards each tensor on dim 0)
    shards = result["ranks"]["shard_parameters"]
    assert sum(shards) == result["model"]["parameters"] and len(shards) == 2
    assert abs(shards[0] - shards[1]) <= sum(shards) // 100
    (row,) = result["runs"]
    assert [r["step_s"] for r in row["per_rank"]] and len(row["per_rank"]) == 2
    # the step ends with its slowest rank; tokens/s counts both ranks' micro-batches
    assert row["step_s"] == [max(a, b) for a, b in zip(*(r["step_s"] for r in row["per_rank"]), strict=True)]
    expected = 2 * 32 * 2 / statistics.median(row["step_s"])
    assert abs(row["tokens_per_s"] - expected) / expected < 0.01
    assert row["host_rss_gib"] == round(sum(r["host_rss_gib"] for r in row["per_rank"]), 2)


def test_the_rewards_whose_all_equal_group_leaks_are_the_ones_step_time_counts() -> None:
    # prime-rl 559b447 orchestrator/algo/grpo.py: advantages = rewards - rewards.mean(), torch float32; an all-equal
    # group of 8 is dropped only when that is exactly 0.0 (evidence.step_time's "before")
    torch = pytest.importorskip("torch")
    from evidence.step_time import LEAKS

    leaking = []
    for value in (1.1, 0.1, -0.4, -0.9, -1.4, -1.0, 0.0):
        rewards = torch.tensor([value] * 8, dtype=torch.float32)
        if (rewards - rewards.mean()).abs().max().item() != 0.0:
            leaking.append(f"{value:g}")
    assert tuple(leaking) == LEAKS
