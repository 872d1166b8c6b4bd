"""Shared by the torch-free adapter tests: prime-rl's adapter config, and headers built from shapes."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from drugprot.tools.adapters.safetensors_files import TensorInfo

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


def safetensors_bytes(header: object, data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data
