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


def test_two_depths_of_the_tiny_model_extrapolate_its_parameters_to_the_full_depth(tmp_path: Path) -> None:
    # bench.trainer_step --layers (issue 52): the first N layers, every other dimension unchanged, so what scales
    # with depth is linear in N; bench.trainer_settings' fit through two depths predicts the full model's count
    pytest.importorskip("torch")
    pytest.importorskip("transformers.models.afmoe", reason="this transformers has no native AFMoE (needs >= 5.0)")
    pytest.importorskip("peft")
    from bench.trainer_settings import fit_line

    args = ["--tiny", "--device", "cpu", "--impl", "hf", "--seq-len", "32", "--sample-tokens", "16", "--steps", "2"]
    results = {}
    for layers in (2, 3):
        out = tmp_path / f"L{layers}.json"
        proc = run(*args, "--layers", str(layers), "--json", str(out))
        assert proc.returncode == 0, proc.stderr[-2000:]
        results[layers] = json.loads(out.read_text())
    full = TINY["num_hidden_layers"]  # 4, predicted from its first 2 (both dense) and 3 (one MoE layer)
    for layers, result in results.items():
        assert (result["model"]["layers"], result["model"]["full_layers"]) == (layers, TINY["num_hidden_layers"])
        row = result["runs"][0]
        assert row["oom"] is False and len(row["step_s"]) == 2 and row["tokens_per_s"] > 0
    # the base model's parameters (PEFT's adapter over fused experts, the fallback's layout, is not prime-rl's)
    line = fit_line([(n, r["model"]["parameters"] - r["lora"]["parameters"]) for n, r in results.items()])
    base, _ = trinity_counts(TINY)
    moe_layers = full - TINY["num_dense_layers"]  # transformers keeps expert_bias as a parameter
    assert round(line.at(full)) == base + moe_layers * TINY["num_experts"]


def test_layers_outside_the_models_depth_are_refused_before_work() -> None:
    proc = run("--tiny", "--device", "cpu", "--impl", "hf", "--layers", "5")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1].endswith("error: --layers must be in [1, 4] (the model's depth)")


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
