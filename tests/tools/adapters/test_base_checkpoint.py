"""The base checkpoint's weight map and where each module's delta goes in it (``base_checkpoint``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.base_checkpoint import (
    BaseTarget,
    base_tensor_infos,
    base_weight_map,
    plan_merge,
    resolve_target,
)
from drugprot.tools.adapters.layout import collect_lora_modules, kind_counts
from drugprot.tools.adapters.safetensors_files import TensorInfo
from tests.tools.adapters.headers import infos

PER_EXPERT_BASE = infos(
    {
        "model.layers.2.mlp.experts.0.gate_proj.weight": (16, 32),
        "model.layers.2.mlp.experts.0.up_proj.weight": (16, 32),
        "model.layers.2.mlp.experts.0.down_proj.weight": (32, 16),
        "model.layers.2.self_attn.q_proj.weight": (32, 32),
    }
)
FUSED_BASE = infos(
    {
        "model.layers.2.mlp.experts.gate_up_proj": (4, 32, 32),
        "model.layers.2.mlp.experts.down_proj": (4, 32, 16),
    }
)


@pytest.mark.parametrize(
    ("module", "base", "target"),
    [
        (
            "model.layers.2.self_attn.q_proj",
            PER_EXPERT_BASE,
            BaseTarget("model.layers.2.self_attn.q_proj.weight"),
        ),
        (
            "model.layers.2.mlp.experts.0.up_proj",
            PER_EXPERT_BASE,
            BaseTarget("model.layers.2.mlp.experts.0.up_proj.weight"),
        ),
        (
            "model.layers.2.mlp.experts.3.gate_proj",
            FUSED_BASE,
            BaseTarget("model.layers.2.mlp.experts.gate_up_proj", 3, (0, 16)),
        ),
        (
            "model.layers.2.mlp.experts.3.up_proj",
            FUSED_BASE,
            BaseTarget("model.layers.2.mlp.experts.gate_up_proj", 3, (16, 32)),
        ),
        (
            "model.layers.2.mlp.experts.1.down_proj",
            FUSED_BASE,
            BaseTarget("model.layers.2.mlp.experts.down_proj", 1, (0, 32)),
        ),
        ("model.layers.2.mlp.experts.4.down_proj", FUSED_BASE, None),  # only 4 experts
        ("model.layers.9.self_attn.q_proj", PER_EXPERT_BASE, None),
    ],
)
def test_resolve_target(module: str, base: dict, target: BaseTarget | None) -> None:
    assert resolve_target(module, base) == target


def _modules(spec: dict[str, tuple[int, int]]) -> list:
    """LoRA modules of rank 4 with the given (out, in)."""
    tensors = {}
    for name, (out_f, in_f) in spec.items():
        tensors[f"{name}.lora_A.weight"] = (4, in_f)
        tensors[f"{name}.lora_B.weight"] = (out_f, 4)
    return collect_lora_modules(infos(tensors))


def test_plan_maps_per_expert_lora_onto_a_fused_base() -> None:
    modules = _modules(
        {
            f"model.layers.2.mlp.experts.{e}.{p}": ((32, 16) if p == "down_proj" else (16, 32))
            for e in range(4)
            for p in ("gate_proj", "up_proj", "down_proj")
        }
    )
    plan = plan_merge(modules, FUSED_BASE)
    assert len(plan) == 12
    assert kind_counts(m for m, _ in plan) == {"routed_expert": 12}


def test_plan_refuses_a_module_that_matches_nothing_naming_its_key() -> None:
    modules = _modules({"model.layers.2.self_attn.q_proj": (32, 32), "model.layers.9.self_attn.q_proj": (32, 32)})
    with pytest.raises(AdapterError) as info:
        plan_merge(modules, PER_EXPERT_BASE, source="adapter.safetensors")
    assert str(info.value) == (
        "adapter.safetensors: adapter tensor 'model.layers.9.self_attn.q_proj.lora_A.weight' matches no "
        "base weight (looked for 'model.layers.9.self_attn.q_proj.weight'); nothing was written"
    )


def test_plan_refuses_a_shape_mismatch_naming_the_keys() -> None:
    modules = _modules(
        {"model.layers.2.mlp.experts.0.down_proj": (32, 8), "model.layers.2.mlp.experts.0.up_proj": (16, 32)}
    )
    with pytest.raises(AdapterError) as info:
        plan_merge(modules, PER_EXPERT_BASE, source="a")
    assert str(info.value) == (
        "a: adapter tensors 'model.layers.2.mlp.experts.0.down_proj.lora_B.weight' @ "
        "'model.layers.2.mlp.experts.0.down_proj.lora_A.weight' give shape [32, 8] but base weight "
        "model.layers.2.mlp.experts.0.down_proj.weight has shape [32, 16]; nothing was written"
    )


def test_plan_counts_further_problems() -> None:
    modules = _modules({"model.layers.7.self_attn.q_proj": (32, 32), "model.layers.8.self_attn.q_proj": (32, 32)})
    with pytest.raises(AdapterError, match=r"\(and 1 more problems\)"):
        plan_merge(modules, PER_EXPERT_BASE)


def test_base_weight_map_from_index_and_shapes_from_shard_headers(tmp_path: Path, fake_safetensors: Any) -> None:
    fake_safetensors(tmp_path / "model-00001-of-00002.safetensors", {"a.weight": ("BF16", (2, 3))})
    fake_safetensors(tmp_path / "model-00002-of-00002.safetensors", {"b.weight": ("BF16", (3,))})
    index = {
        "metadata": {"total_size": 18},
        "weight_map": {
            "a.weight": "model-00001-of-00002.safetensors",
            "b.weight": "model-00002-of-00002.safetensors",
        },
    }
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    weight_map = base_weight_map(tmp_path)
    assert weight_map == index["weight_map"]
    assert base_tensor_infos(tmp_path, weight_map) == {
        "a.weight": TensorInfo("BF16", (2, 3)),
        "b.weight": TensorInfo("BF16", (3,)),
    }


def test_base_without_safetensors_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pytorch_model.bin").write_bytes(b"")
    with pytest.raises(AdapterError, match="no model.safetensors.index.json or model.safetensors"):
        base_weight_map(tmp_path)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"weight_map": ["a.weight"]}', "not a safetensors index: expected an object with a non-empty 'weight_map'"),
        (b'{"weight_map": {}}', "not a safetensors index: expected an object with a non-empty 'weight_map'"),
        (b"[]", "not a safetensors index: expected an object with a non-empty 'weight_map'"),
        (b'{"metadata": {"total_size": NaN}}', "the safetensors index is not valid JSON (NaN is not a JSON number)"),
        (b'{"weight_map": {"a": "\xe9.safetensors"}}', "the safetensors index is not UTF-8 text (byte 22)"),
        (
            b'{"weight_map": {"a.weight": 17}}',
            "weight_map['a.weight'] names the file 17, which is a JSON int, not a file name",
        ),
    ],
)
def test_malformed_index_is_refused_naming_the_key(tmp_path: Path, raw: bytes, message: str) -> None:
    (tmp_path / "model.safetensors.index.json").write_bytes(raw)
    with pytest.raises(AdapterError) as info:
        base_weight_map(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'model.safetensors.index.json'}: {message}")


def test_shard_tensors_missing_from_the_index_are_not_targets(tmp_path: Path, fake_safetensors: Any) -> None:
    fake_safetensors(tmp_path / "s1.safetensors", {"a.weight": ("F32", (2, 2)), "stray.weight": ("F32", (2, 2))})
    assert base_tensor_infos(tmp_path, {"a.weight": "s1.safetensors"}) == {"a.weight": TensorInfo("F32", (2, 2))}
