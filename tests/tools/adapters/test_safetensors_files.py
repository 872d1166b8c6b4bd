"""Checkpoint files read without torch: safetensors headers and safe shard names (``safetensors_files``)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.safetensors_files import TensorInfo, checkpoint_file_name, read_safetensors_header
from tests.tools.adapters.headers import safetensors_bytes


def test_safetensors_header_is_read_without_torch(tmp_path: Path, fake_safetensors: Any) -> None:
    path = fake_safetensors(tmp_path / "a.safetensors", {"x.lora_A.weight": ("BF16", (4, 32))})
    assert read_safetensors_header(path) == {"x.lora_A.weight": TensorInfo("BF16", (4, 32))}


def test_truncated_safetensors_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(AdapterError, match="truncated safetensors header"):
        read_safetensors_header(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x05\x00", "truncated safetensors file (no header length)"),
        (safetensors_bytes([1, 2]), "safetensors header is a JSON list, not an object"),
        (struct.pack("<Q", 2) + b"\xff\xfe", "safetensors header is not UTF-8 JSON"),
        (safetensors_bytes({"__metadata__": {"format": 1}}), "safetensors '__metadata__' must map strings to strings"),
        (safetensors_bytes({"w": "F32"}), "header entry of tensor 'w' is not an object"),
        (safetensors_bytes({"w": {"shape": [2], "data_offsets": [0, 8]}}), "tensor 'w' has no dtype name (got None)"),
        (
            safetensors_bytes({"w": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}}),
            "tensor 'w' has shape [2, -1]; expected a list of non-negative ints",
        ),
        (
            safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, bytes(8)),
            "tensor 'w' has data_offsets [8, 0]; expected [begin, end]",
        ),
        (
            safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(5)),
            "tensor 'w' ends at byte 8 of the data but the file holds only 5; the file is truncated",
        ),
        (
            safetensors_bytes({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)),
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
    path.write_bytes(safetensors_bytes({"w": {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]}}, bytes(2)))
    assert read_safetensors_header(path) == {"w": TensorInfo("F4", (4,))}


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
