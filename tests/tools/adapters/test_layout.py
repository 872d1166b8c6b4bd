"""An adapter's keys paired into LoRA modules, and what part of the model each is (``adapters.layout``)."""

from __future__ import annotations

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.layout import collect_lora_modules, module_kind, normalize_key
from drugprot.tools.adapters.safetensors_files import TensorInfo
from tests.tools.adapters.headers import infos


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("model.layers.0.self_attn.gate_proj", "attention"),
        ("model.layers.0.self_attn.q_proj", "attention"),
        ("model.layers.1.mlp.down_proj", "dense_mlp"),
        ("model.layers.2.mlp.experts.127.up_proj", "routed_expert"),
        ("model.layers.2.mlp.shared_experts.gate_proj", "shared_expert"),
        ("lm_head", "other"),
    ],
)
def test_module_kind(name: str, kind: str) -> None:
    assert module_kind(name) == kind


def test_keys_with_and_without_the_peft_prefix_give_the_same_modules() -> None:
    plain = infos(
        {
            "model.layers.0.self_attn.q_proj.lora_A.weight": (4, 32),
            "model.layers.0.self_attn.q_proj.lora_B.weight": (32, 4),
        }
    )
    prefixed = {"base_model.model." + k: v for k, v in plain.items()}
    a, b = collect_lora_modules(plain), collect_lora_modules(prefixed)
    assert [(m.name, m.rank, m.in_features, m.out_features) for m in a] == [
        ("model.layers.0.self_attn.q_proj", 4, 32, 32)
    ]
    assert [m.name for m in b] == [m.name for m in a]
    assert b[0].a_key == "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"
    assert normalize_key(b[0].a_key) == a[0].a_key


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"model.embed_tokens.weight": (8, 4)}, "tensor 'model.embed_tokens.weight' is not a LoRA weight"),
        ({"m.q_proj.lora_A.weight": (4, 32)}, "tensor 'm.q_proj.lora_A.weight' has no lora_B partner"),
        (
            {"m.q_proj.lora_A.weight": (4, 32), "m.q_proj.lora_B.weight": (32, 8)},
            r"rank of 'm.q_proj.lora_A.weight' \(4\) differs from rank of 'm.q_proj.lora_B.weight' \(8\)",
        ),
        (
            {"m.q_proj.lora_A.weight": (4, 32), "base_model.model.m.q_proj.lora_A.weight": (4, 32)},
            "duplicates",
        ),
        ({"m.q_proj.lora_A.weight": (4, 32, 1)}, r"has shape \[4, 32, 1\]; LoRA weights are 2D"),
    ],
)
def test_malformed_adapters_are_refused_naming_the_key(spec: dict, message: str) -> None:
    with pytest.raises(AdapterError, match=message):
        collect_lora_modules(infos(spec), source="adapter_model.safetensors")


def test_lora_weights_of_a_non_float_dtype_are_refused() -> None:
    tensors = {
        "m.q_proj.lora_A.weight": TensorInfo("I8", (4, 32)),
        "m.q_proj.lora_B.weight": TensorInfo("F32", (32, 4)),
    }
    with pytest.raises(AdapterError) as info:
        collect_lora_modules(tensors, source="a.safetensors")
    assert str(info.value) == (
        "a.safetensors: tensor 'm.q_proj.lora_A.weight' has dtype I8; LoRA weights must be one of F32, BF16, F16, F64"
    )
