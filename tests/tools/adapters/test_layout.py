"""Reading adapters and base checkpoints without torch: configs, key names, shapes, the merge plan."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.layout import (
    BaseTarget,
    TensorInfo,
    base_tensor_infos,
    base_weight_map,
    checkpoint_file_name,
    collect_lora_modules,
    kind_counts,
    module_kind,
    normalize_key,
    plan_merge,
    read_adapter_config,
    read_safetensors_header,
    resolve_target,
)

PRIME_RL_CONFIG = {
    "peft_type": "LORA",
    "task_type": "CAUSAL_LM",
    "base_model_name_or_path": "arcee-ai/Trinity-Mini",
    "r": 16,
    "lora_alpha": 64.0,
    "lora_dropout": 0.0,
    "bias": "none",
    "target_modules": [
        "down_proj",
        "experts",
        "gate_proj",
        "k_proj",
        "o_proj",
        "q_proj",
        "up_proj",
        "v_proj",
    ],
    "modules_to_save": None,
}


def write_config(directory: Path, **changes: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = {**PRIME_RL_CONFIG, **changes}
    (directory / "adapter_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def infos(spec: dict[str, tuple[int, ...]]) -> dict[str, TensorInfo]:
    return {name: TensorInfo("F32", shape) for name, shape in spec.items()}


def test_prime_rl_config_reads_rank_alpha_scale_and_targets(tmp_path: Path) -> None:
    settings = read_adapter_config(write_config(tmp_path))
    assert (settings.r, settings.alpha, settings.scale, settings.use_rslora) == (16, 64.0, 4.0, False)
    assert settings.target_modules == tuple(PRIME_RL_CONFIG["target_modules"])
    assert settings.base_model == "arcee-ai/Trinity-Mini"


def test_rslora_scale_is_alpha_over_sqrt_r(tmp_path: Path) -> None:
    assert read_adapter_config(write_config(tmp_path, use_rslora=True)).scale == 16.0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"peft_type": "IA3"}, "peft_type is 'IA3'"),
        ({"r": 0}, "field 'r' must be a positive integer, got 0"),
        ({"lora_alpha": None}, "field 'lora_alpha' must be a positive finite number, got None"),
        ({"use_dora": True}, "field 'use_dora' is set"),
        ({"rank_pattern": {"q_proj": 8}}, "field 'rank_pattern' is non-empty"),
        ({"modules_to_save": ["lm_head"]}, "field 'modules_to_save' is ['lm_head']"),
    ],
)
def test_unsupported_configs_are_refused_naming_the_field(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(AdapterError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_adapter_config(write_config(tmp_path, **changes))


def test_missing_config_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match="adapter_config.json: no adapter config"):
        read_adapter_config(tmp_path)


def test_safetensors_header_is_read_without_torch(tmp_path: Path, fake_safetensors: Any) -> None:
    path = fake_safetensors(tmp_path / "a.safetensors", {"x.lora_A.weight": ("BF16", (4, 32))})
    assert read_safetensors_header(path) == {"x.lora_A.weight": TensorInfo("BF16", (4, 32))}


def test_truncated_safetensors_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(AdapterError, match="truncated safetensors header"):
        read_safetensors_header(path)


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
    ("changes", "message"),
    [
        ({"lora_alpha": "16"}, "field 'lora_alpha' must be a positive finite number, got '16'"),
        ({"r": 4.0}, "field 'r' must be a positive integer, got 4.0"),
        ({"r": True}, "field 'r' must be a positive integer, got True"),
        ({"peft_type": 3}, "peft_type is 3; only LORA adapters are supported"),
        ({"use_rslora": "yes"}, "field 'use_rslora' must be true or false, got 'yes'"),
        ({"use_dora": 1}, "field 'use_dora' must be true or false, got 1"),
        ({"rank_pattern": ["q_proj"]}, "field 'rank_pattern' must be an object, got ['q_proj']"),
        ({"target_modules": 7}, "field 'target_modules' must be a string or a list of strings, got 7"),
        ({"target_modules": ["q_proj", None]}, "field 'target_modules' must be a string or a list of strings"),
        ({"base_model_name_or_path": 5}, "field 'base_model_name_or_path' must be a string, got 5"),
        ({"lora_alpha": 1e308, "r": 1, "use_rslora": True}, None),  # finite: accepted
    ],
)
def test_config_fields_of_the_wrong_type_are_refused_naming_the_field(
    tmp_path: Path, changes: dict, message: str | None
) -> None:
    directory = write_config(tmp_path, **changes)
    if message is None:
        assert read_adapter_config(directory).scale == 1e308
        return
    with pytest.raises(AdapterError) as info:
        read_adapter_config(directory)
    assert str(info.value).startswith(f"{directory / 'adapter_config.json'}: {message}")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"r": 4, "lora_alpha": Infinity}', "the adapter config is not valid JSON (Infinity is not a JSON number)"),
        (b'{"r": 4, "lora_alpha": -Infinity}', "the adapter config is not valid JSON (-Infinity is not a JSON number)"),
        (b'{"r": 4, "lora_alpha": 1e309}', "field 'lora_alpha' must be a positive finite number, got inf"),
        (b'{"r": 4, "lora_alpha": 16, "x": "\xff"}', "the adapter config is not UTF-8 text (byte 33); re-save it"),
        (b'{"r": 4,', "the adapter config is not valid JSON (Expecting property name enclosed in double quotes"),
        (b"[4, 16]", "expected a JSON object, got list"),
    ],
)
def test_malformed_config_files_are_refused_naming_the_file(tmp_path: Path, raw: bytes, message: str) -> None:
    (tmp_path / "adapter_config.json").write_bytes(raw)
    with pytest.raises(AdapterError) as info:
        read_adapter_config(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'adapter_config.json'}: {message}")


def _safetensors(header: object, data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x05\x00", "truncated safetensors file (no header length)"),
        (_safetensors([1, 2]), "safetensors header is a JSON list, not an object"),
        (struct.pack("<Q", 2) + b"\xff\xfe", "safetensors header is not UTF-8 JSON"),
        (_safetensors({"__metadata__": {"format": 1}}), "safetensors '__metadata__' must map strings to strings"),
        (_safetensors({"w": "F32"}), "header entry of tensor 'w' is not an object"),
        (_safetensors({"w": {"shape": [2], "data_offsets": [0, 8]}}), "tensor 'w' has no dtype name (got None)"),
        (
            _safetensors({"w": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}}),
            "tensor 'w' has shape [2, -1]; expected a list of non-negative ints",
        ),
        (
            _safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, bytes(8)),
            "tensor 'w' has data_offsets [8, 0]; expected [begin, end]",
        ),
        (
            _safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(5)),
            "tensor 'w' ends at byte 8 of the data but the file holds only 5; the file is truncated",
        ),
        (
            _safetensors({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)),
            "tensor 'w' (F32 [3]) needs 12 bytes but its data_offsets span 8",
        ),
    ],
)
def test_malformed_safetensors_headers_are_refused_naming_the_tensor(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "a.safetensors"
    path.write_bytes(content)
    with pytest.raises(AdapterError) as info:
        read_safetensors_header(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_opaque_dtypes_are_read_with_their_offsets_checked(tmp_path: Path) -> None:
    path = tmp_path / "a.safetensors"
    path.write_bytes(_safetensors({"w": {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]}}, bytes(2)))
    assert read_safetensors_header(path) == {"w": TensorInfo("F4", (4,))}


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


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../x.safetensors", "has a directory part"),
        ("sub/x.safetensors", "has a directory part"),
        ("sub\\x.safetensors", "has a directory part"),
        ("/etc/x.safetensors", "is an absolute path"),
        ("C:\\x.safetensors", "is an absolute path"),
        ("C:x.safetensors", "is an absolute path"),
        ("..", "is not a file name"),
        ("", "is not a file name"),
        ("config.json", "does not end in .safetensors"),
        (".safetensors", "has characters other than letters, digits and . _ + -"),
        ("x\x00.safetensors", "has characters other than letters, digits and . _ + -"),
        (3, "is a JSON int, not a file name"),
        (None, "is a JSON NoneType, not a file name"),
    ],
)
def test_checkpoint_file_names_must_be_plain_shard_names(name: object, reason: str) -> None:
    with pytest.raises(AdapterError) as info:
        checkpoint_file_name(name, source="index.json", key="weight_map['w']")
    assert str(info.value) == (
        f"index.json: weight_map['w'] names the file {name!r}, which {reason}; a shard must be a plain file name "
        "in the base directory (like 'model-00001-of-00002.safetensors'). Fix the index or download the "
        "checkpoint again"
    )


@pytest.mark.parametrize(
    "name", ["model-00001-of-00030.safetensors", "model.safetensors", "diffusion_model+ema.safetensors"]
)
def test_plain_shard_names_are_accepted(name: str) -> None:
    assert checkpoint_file_name(name, source="index.json", key="weight_map['w']") == name


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
