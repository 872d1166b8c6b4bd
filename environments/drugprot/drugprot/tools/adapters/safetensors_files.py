"""Reading checkpoint files without torch: strict JSON, safetensors headers, and safe shard file names.

Rules (every reader raises ``AdapterError`` naming the file and the key, never a traceback):

- JSON files (``adapter_config.json``, the base index) must be UTF-8 JSON without ``NaN``/``Infinity``.
- A safetensors header is a JSON object; every tensor has a known or opaque dtype name, a shape of
  non-negative ints and ``data_offsets`` inside the file whose length is what dtype and shape need, so a
  truncated file is refused before any tensor is read.
- Every file name taken from a base checkpoint (the shards of the index's ``weight_map``) goes through
  ``checkpoint_file_name``: a plain ``*.safetensors`` file name, no directory part, not absolute, no ``..``,
  so that a merge reading ``<base>/<name>`` writes only ``<out>/<name>``.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from drugprot.tools.adapters import AdapterError

_SHARD_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]*\.safetensors$")


# Bytes per element of the safetensors dtypes whose size is a whole number of bytes; other (sub-byte or
# future) dtypes are accepted as opaque, their offsets still checked against the file size.
DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip
MERGEABLE_DTYPES = ("F32", "BF16", "F16", "F64")
"""Dtypes a LoRA delta can be added to (and LoRA weights may have): float32 math, cast back exactly once."""


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """A tensor's safetensors dtype name (``BF16``, ``F32``) and shape, as stored in a file header."""

    dtype: str
    shape: tuple[int, ...]


def read_json(path: Path, what: str) -> object:
    """Parse a UTF-8 JSON file that must not contain ``NaN``/``Infinity``.

    Raises:
        AdapterError: unreadable, not UTF-8, not JSON, or a non-finite constant; names ``path`` and ``what``.
    """

    def refuse_constant(name: str) -> object:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(path.read_bytes().decode("utf-8"), parse_constant=refuse_constant)
    except OSError as exc:
        raise AdapterError(f"{path}: cannot read the {what} ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise AdapterError(f"{path}: the {what} is not UTF-8 text (byte {exc.start}); re-save it as UTF-8") from exc
    except ValueError as exc:  # JSONDecodeError and the refused NaN/Infinity
        raise AdapterError(f"{path}: the {what} is not valid JSON ({exc})") from exc


def read_safetensors_header(path: str | Path) -> dict[str, TensorInfo]:
    """The tensor names, dtypes and shapes of a ``.safetensors`` file, read from its JSON header only.

    The header is checked against the file (see the module docstring): every tensor's bytes must lie in
    the file and have the size its dtype and shape need.

    Raises:
        AdapterError: the file is missing, truncated, or its header is not a safetensors header; the message
            names the file and the tensor.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            prefix = handle.read(8)
            if len(prefix) != 8:
                raise AdapterError(f"{path}: truncated safetensors file (no header length)")
            (length,) = struct.unpack("<Q", prefix)
            if length > 100_000_000:
                raise AdapterError(f"{path}: header length {length} is implausible; not a safetensors file")
            header_bytes = handle.read(length)
            handle.seek(0, 2)
            data_length = handle.tell() - 8 - length
    except OSError as exc:
        raise AdapterError(f"{path}: cannot read ({exc})") from exc
    if len(header_bytes) != length:
        raise AdapterError(f"{path}: truncated safetensors header")
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise AdapterError(f"{path}: safetensors header is not UTF-8 JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise AdapterError(f"{path}: safetensors header is a JSON {type(header).__name__}, not an object")
    metadata = header.get("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise AdapterError(f"{path}: safetensors '__metadata__' must map strings to strings")
    tensors: dict[str, TensorInfo] = {}
    for name, entry in header.items():
        if name != "__metadata__":
            tensors[name] = _tensor_entry(path, name, entry, data_length)
    return tensors


def _tensor_entry(path: Path, name: str, entry: object, data_length: int) -> TensorInfo:
    """One checked header entry: dtype, shape, and data offsets inside the ``data_length`` bytes."""
    if not isinstance(entry, dict):
        raise AdapterError(f"{path}: header entry of tensor {name!r} is not an object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(dtype, str) or not dtype:
        raise AdapterError(f"{path}: tensor {name!r} has no dtype name (got {dtype!r})")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise AdapterError(f"{path}: tensor {name!r} has shape {shape!r}; expected a list of non-negative ints")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1]
    ):
        raise AdapterError(f"{path}: tensor {name!r} has data_offsets {offsets!r}; expected [begin, end]")
    if offsets[1] > data_length:
        raise AdapterError(
            f"{path}: tensor {name!r} ends at byte {offsets[1]} of the data but the file holds only "
            f"{data_length}; the file is truncated, copy or download it again"
        )
    size = DTYPE_BYTES.get(dtype)
    if size is not None and offsets[1] - offsets[0] != size * math.prod(shape):
        raise AdapterError(
            f"{path}: tensor {name!r} ({dtype} {shape}) needs {size * math.prod(shape)} bytes but its "
            f"data_offsets span {offsets[1] - offsets[0]}"
        )
    return TensorInfo(dtype=dtype, shape=tuple(shape))


def checkpoint_file_name(name: object, *, source: Path | str, key: str) -> str:
    """``name`` if it is a plain shard file name that stays inside any directory it is joined to.

    The one check for every file name a base checkpoint supplies: a merge reads ``<base>/<name>`` and
    writes ``<out>/<name>``, so a name with a directory part, an absolute path or ``..`` would read or
    write outside those directories (even over the base's own shard).

    Args:
        name: the value found in the checkpoint.
        source: the file it was found in, for the message.
        key: where in that file (e.g. the tensor of ``weight_map``), for the message.

    Raises:
        AdapterError: naming ``source``, ``key`` and ``name`` and the rule it breaks.
    """
    if not isinstance(name, str):
        reason = f"is a JSON {type(name).__name__}, not a file name"
    elif PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        reason = "is an absolute path"
    elif "/" in name or "\\" in name:
        reason = "has a directory part"
    elif name in ("", ".", ".."):
        reason = "is not a file name"
    elif not name.endswith(".safetensors"):
        reason = "does not end in .safetensors"
    elif not _SHARD_NAME.match(name):
        reason = "has characters other than letters, digits and . _ + -"
    else:
        return name
    raise AdapterError(
        f"{source}: {key} names the file {name!r}, which {reason}; a shard must be a plain file name in "
        "the base directory (like 'model-00001-of-00002.safetensors'). Fix the index or download the "
        "checkpoint again"
    )
