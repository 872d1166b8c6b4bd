"""``merge_adapter`` on the tiny AFMoE: merged logits equal a reference the test computes itself.

Reference: the base model loaded in memory with ``scale * B @ A`` added to its weights by
``conftest.apply_reference_deltas`` (float64 delta), independent of the merge code. Tolerances (fp32
model): logits within 5e-5 (measured 5.7e-6 with transformers 5.24 / torch 2.13 CPU); merged fp32 weights
within 1e-6 of the reference weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.adapters import AdapterError
from drugprot.adapters.merge import MERGE_RECORD, merge_adapter

LOGITS_TOL = 5e-5


def _load_tensors(directory: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    tensors = {}
    for shard in sorted(directory.glob("*.safetensors")):
        tensors.update(load_file(str(shard)))
    return tensors


@pytest.fixture(scope="module")
def merged(
    base_dir: Path, prime_rl_adapter: Path, tmp_path_factory: pytest.TempPathFactory
) -> SimpleNamespace:
    out = tmp_path_factory.mktemp("merged")
    lines: list[str] = []
    report = merge_adapter(base_dir, prime_rl_adapter, out, overwrite=True, log=lines.append)
    return SimpleNamespace(out=out, report=report, lines=lines)


def test_merged_checkpoint_logits_equal_the_reference(
    merged: SimpleNamespace, kit: SimpleNamespace, reference_logits: Any, base_logits: Any
) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(merged.out), dtype="float32").eval()
    got = kit.logits(model)
    assert float((got - reference_logits).abs().max()) <= LOGITS_TOL
    assert float((got - base_logits).abs().max()) > 0.5  # the adapter matters on this model


def test_report_counts_every_prime_rl_module(merged: SimpleNamespace, kit: SimpleNamespace) -> None:
    report = merged.report
    # 4 layers x 5 attention + 2 dense x 3 MLP + 2 MoE layers x 4 experts x 3 = 50 modules, 100 tensors.
    assert len(kit.prime_rl_modules(kit.TINY)) == 50
    assert (report.adapter_tensors, report.matched_modules, report.base_tensors_changed) == (100, 50, 50)
    assert report.by_kind == {"attention": 20, "dense_mlp": 6, "routed_expert": 24}
    assert report.scale == 4.0
    assert report.shards_written == len(merged.lines) == len(list(merged.out.glob("model-*.safetensors")))
    assert sum(report.per_shard.values()) == 50


def test_output_is_a_plain_checkpoint_with_the_base_files(merged: SimpleNamespace, base_dir: Path) -> None:
    base_files = sorted(p.name for p in base_dir.iterdir())
    assert sorted(p.name for p in merged.out.iterdir()) == sorted([*base_files, MERGE_RECORD])
    for name in (
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "model.safetensors.index.json",
    ):
        assert (merged.out / name).read_bytes() == (base_dir / name).read_bytes()
    record = json.loads((merged.out / MERGE_RECORD).read_text())
    assert (record["r"], record["lora_alpha"], record["matched_modules"]) == (4, 16.0, 50)


def test_only_adapted_tensors_change_and_dtypes_are_kept(
    merged: SimpleNamespace, base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace
) -> None:
    base, out = _load_tensors(base_dir), _load_tensors(merged.out)
    assert sorted(base) == sorted(out)
    adapted = {
        k.removesuffix(".lora_A.weight") + ".weight" for k in lora_tensors if k.endswith("lora_A.weight")
    }
    for key, before in base.items():
        assert out[key].dtype == before.dtype, key
        if key in adapted:
            a = lora_tensors[key.removesuffix(".weight") + ".lora_A.weight"].double()
            b = lora_tensors[key.removesuffix(".weight") + ".lora_B.weight"].double()
            expected = before.double() + kit.SCALE * (b @ a)
            assert float((out[key].double() - expected).abs().max()) <= 1e-6, key
        else:
            assert kit.torch.equal(out[key], before), key  # router, shared expert, norms, embeddings, lm_head


def test_prefixed_keys_merge_to_the_same_bytes(
    merged: SimpleNamespace,
    base_dir: Path,
    lora_tensors: dict[str, Any],
    kit: SimpleNamespace,
    tmp_path: Path,
) -> None:
    adapter = kit.write_adapter(
        tmp_path / "peft_style",
        lora_tensors,
        prefix="base_model.model.",
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    report = merge_adapter(base_dir, adapter, tmp_path / "out")
    assert report.matched_modules == 50
    for shard in merged.out.glob("model-*.safetensors"):
        assert (tmp_path / "out" / shard.name).read_bytes() == shard.read_bytes()


def test_bf16_base_accumulates_in_fp32_and_stays_bf16(
    base_dir: Path, prime_rl_adapter: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    from safetensors.torch import save_file

    torch = kit.torch
    bf16_dir = tmp_path / "bf16"
    bf16_dir.mkdir()
    base = {k: v.to(torch.bfloat16) for k, v in _load_tensors(base_dir).items()}
    save_file(base, str(bf16_dir / "model.safetensors"), metadata={"format": "pt"})
    (bf16_dir / "config.json").write_bytes((base_dir / "config.json").read_bytes())
    report = merge_adapter(bf16_dir, prime_rl_adapter, tmp_path / "out")
    out = _load_tensors(tmp_path / "out")
    assert report.shards_written == 1
    assert {t.dtype for t in out.values()} == {torch.bfloat16}
    key = "model.layers.2.mlp.experts.1.up_proj.weight"
    a, b = (
        lora_tensors[key.replace("weight", "lora_A.weight")],
        lora_tensors[key.replace("weight", "lora_B.weight")],
    )
    fp32_then_cast = (base[key].float() + kit.SCALE * (b @ a)).to(torch.bfloat16)
    # One rounding (fp32 sum cast once): equal to the test's own fp32 computation up to 1 bf16 ulp.
    ulp = fp32_then_cast.float().abs() * 2.0**-7
    assert bool(((out[key].float() - fp32_then_cast.float()).abs() <= ulp).all())


def test_fused_expert_base_gets_per_expert_deltas_in_the_right_rows(
    base_dir: Path, prime_rl_adapter: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    from safetensors.torch import save_file

    torch, cfg = kit.torch, kit.TINY
    per_expert = _load_tensors(base_dir)
    fused: dict[str, Any] = {}
    for key, value in per_expert.items():
        if ".mlp.experts." not in key:
            fused[key] = value
    for layer in range(cfg["num_dense_layers"], cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}.mlp.experts"
        experts = range(cfg["num_experts"])
        fused[f"{p}.gate_up_proj"] = torch.stack(
            [
                torch.cat([per_expert[f"{p}.{e}.gate_proj.weight"], per_expert[f"{p}.{e}.up_proj.weight"]])
                for e in experts
            ]
        )
        fused[f"{p}.down_proj"] = torch.stack([per_expert[f"{p}.{e}.down_proj.weight"] for e in experts])
    fused_dir = tmp_path / "fused"
    fused_dir.mkdir()
    save_file(fused, str(fused_dir / "model.safetensors"), metadata={"format": "pt"})
    report = merge_adapter(fused_dir, prime_rl_adapter, tmp_path / "out")
    assert (report.matched_modules, report.base_tensors_changed) == (50, 26 + 4)  # 26 2D weights + 2x2 fused
    out = _load_tensors(tmp_path / "out")
    inter = cfg["moe_intermediate_size"]
    for e, (proj, rows) in ((1, ("gate_proj", slice(0, inter))), (3, ("up_proj", slice(inter, 2 * inter)))):
        base_rows = fused["model.layers.3.mlp.experts.gate_up_proj"][e, rows]
        a = lora_tensors[f"model.layers.3.mlp.experts.{e}.{proj}.lora_A.weight"]
        b = lora_tensors[f"model.layers.3.mlp.experts.{e}.{proj}.lora_B.weight"]
        got = out["model.layers.3.mlp.experts.gate_up_proj"][e, rows]
        assert float((got - (base_rows + kit.SCALE * (b @ a))).abs().max()) <= 1e-6
    down = out["model.layers.2.mlp.experts.down_proj"][2]
    a = lora_tensors["model.layers.2.mlp.experts.2.down_proj.lora_A.weight"]
    b = lora_tensors["model.layers.2.mlp.experts.2.down_proj.lora_B.weight"]
    expected = fused["model.layers.2.mlp.experts.down_proj"][2] + kit.SCALE * (b @ a)
    assert float((down - expected).abs().max()) <= 1e-6


def _assert_nothing_written(out: Path) -> None:
    assert not out.exists() or not any(out.iterdir())


def test_wrong_shape_is_refused_naming_the_key(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    bad = dict(lora_tensors)
    key = "model.layers.3.mlp.experts.2.down_proj.lora_B.weight"
    bad[key] = kit.torch.ones(kit.TINY["hidden_size"] + 1, kit.R)
    adapter = kit.write_adapter(tmp_path / "bad", bad)
    with pytest.raises(
        AdapterError,
        match=f"adapter tensors '{key}' @ .* give shape \\[33, 16\\] but base weight "
        "model.layers.3.mlp.experts.2.down_proj.weight has shape \\[32, 16\\]",
    ):
        merge_adapter(base_dir, adapter, tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_key_matching_nothing_is_refused_naming_the_key(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    bad = dict(lora_tensors)
    bad["model.layers.0.mlp.experts.0.gate_proj.lora_A.weight"] = kit.torch.ones(
        kit.R, 32
    )  # layer 0 is dense
    bad["model.layers.0.mlp.experts.0.gate_proj.lora_B.weight"] = kit.torch.ones(16, kit.R)
    adapter = kit.write_adapter(tmp_path / "bad", bad)
    with pytest.raises(
        AdapterError,
        match="adapter tensor 'model.layers.0.mlp.experts.0.gate_proj.lora_A.weight' matches no base weight",
    ):
        merge_adapter(base_dir, adapter, tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_rank_differing_from_the_config_is_refused(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    adapter = kit.write_adapter(tmp_path / "r8", lora_tensors, r=8)
    with pytest.raises(AdapterError, match="has rank 4 but adapter_config.json says r=8"):
        merge_adapter(base_dir, adapter, tmp_path / "out")


def test_non_empty_output_and_base_as_output_are_refused(
    base_dir: Path, prime_rl_adapter: Path, tmp_path: Path
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(AdapterError, match="is not empty; pass --overwrite"):
        merge_adapter(base_dir, prime_rl_adapter, tmp_path / "out")
    with pytest.raises(AdapterError, match="is the base directory"):
        merge_adapter(base_dir, prime_rl_adapter, base_dir, overwrite=True)
