"""What is in an adapter and a base checkpoint, read without torch: configs, key names, tensor shapes.

A prime-rl adapter directory (``<output_dir>/<run>/broadcasts/step_N/``) holds ``adapter_config.json``
and one ``adapter_model.safetensors`` with keys like ``model.layers.2.mlp.experts.5.gate_proj.lora_A.weight``
(no ``base_model.model.`` prefix; one key per routed expert). PEFT-saved adapters carry the prefix; both are
accepted. A LoRA module ``M`` adds ``(alpha/r) * B @ A`` to the base weight ``M.weight``, or, when the base
checkpoint stores routed experts fused (``experts.gate_up_proj [E, 2I, H]``, ``experts.down_proj [E, H, I]``),
to the rows of expert ``e`` in the fused tensor (gate rows ``[0, I)``, up rows ``[I, 2I)``).

Rules for what is read here (every reader raises ``AdapterError`` naming the file and the key, never a
traceback):

- JSON files (``adapter_config.json``, the base index) must be UTF-8 JSON without ``NaN``/``Infinity``.
- ``adapter_config.json`` fields have their PEFT types: ``r`` a positive int, ``lora_alpha`` a positive
  finite number (and so a finite scale), flags booleans, ``target_modules`` a string or a list of strings.
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from drugprot.tools.adapters import AdapterError

PEFT_PREFIX = "base_model.model."
ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
BASE_INDEX = "model.safetensors.index.json"
BASE_SINGLE = "model.safetensors"

_LORA_KEY = re.compile(r"^(?P<module>.+)\.lora_(?P<which>[AB])\.weight$")
_EXPERT = re.compile(r"^(?P<experts>.+\.experts)\.(?P<index>\d+)\.(?P<proj>gate_proj|up_proj|down_proj)$")
_FUSED_GATE_UP, _FUSED_DOWN = "gate_up_proj", "down_proj"
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

# Options a PEFT LoRA config may set that change what W' is; merging/loading must not ignore them silently.
_UNSUPPORTED_OPTIONS = {
    "use_dora": "DoRA adds a magnitude vector",
    "lora_bias": "LoRA biases add a bias term",
    "fan_in_fan_out": "fan_in_fan_out stores transposed weights",
}


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """A tensor's safetensors dtype name (``BF16``, ``F32``) and shape, as stored in a file header."""

    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LoraSettings:
    """The parts of ``adapter_config.json`` that define the weight update."""

    r: int
    alpha: float
    use_rslora: bool
    target_modules: tuple[str, ...]
    base_model: str | None
    raw: Mapping[str, object]
    """The whole config as read, for rewriting it."""

    @property
    def scale(self) -> float:
        """The LoRA scaling: ``alpha / r`` (``alpha / sqrt(r)`` with rsLoRA)."""
        return self.alpha / (self.r**0.5 if self.use_rslora else self.r)


@dataclass(frozen=True, slots=True)
class LoraModule:
    """One adapted module: its model path (prefix stripped), its two keys as stored, and its dimensions."""

    name: str
    a_key: str
    b_key: str
    rank: int
    in_features: int
    out_features: int

    @property
    def kind(self) -> str:
        return module_kind(self.name)


@dataclass(frozen=True, slots=True)
class BaseTarget:
    """Where a LoRA module's delta goes in the base checkpoint.

    ``key`` is the base tensor. For a fused expert tensor, ``expert`` is the index along dim 0 and ``rows``
    the ``[start, stop)`` range along dim 1; both are None for an ordinary 2D weight.
    """

    key: str
    expert: int | None = None
    rows: tuple[int, int] | None = None


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


def _flag(raw: Mapping[str, object], field: str, path: Path) -> bool:
    """A boolean config field; missing or null is False."""
    value = raw.get(field)
    if value is None or isinstance(value, bool):
        return bool(value)
    raise AdapterError(f"{path}: field {field!r} must be true or false, got {value!r}")


def read_adapter_config(adapter_dir: str | Path) -> LoraSettings:
    """Read ``adapter_config.json`` of a LoRA adapter.

    Returns:
        The rank, alpha, rsLoRA flag, target modules and base model name.

    Raises:
        AdapterError: no config file, not UTF-8 JSON (``NaN``/``Infinity`` included), not a LoRA adapter, a
            field of the wrong type, ``r``/``lora_alpha`` not positive and finite, or an option that changes
            the update in a way not supported here (DoRA, LoRA bias, ``fan_in_fan_out``,
            ``rank_pattern``/``alpha_pattern``, ``modules_to_save``). The message names the field.
    """
    path = Path(adapter_dir) / ADAPTER_CONFIG
    if not path.is_file():
        raise AdapterError(
            f"{path}: no adapter config; point at the directory holding {ADAPTER_CONFIG} and "
            f"{ADAPTER_WEIGHTS} (prime-rl: <output_dir>/<run>/broadcasts/step_N)"
        )
    raw = read_json(path, "adapter config")
    if not isinstance(raw, dict):
        raise AdapterError(f"{path}: expected a JSON object, got {type(raw).__name__}")
    peft_type = raw.get("peft_type", "LORA")
    if not isinstance(peft_type, str) or peft_type.upper() != "LORA":
        raise AdapterError(f"{path}: peft_type is {peft_type!r}; only LORA adapters are supported")
    r, alpha = raw.get("r"), raw.get("lora_alpha")
    if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
        raise AdapterError(f"{path}: field 'r' must be a positive integer, got {r!r}")
    if not isinstance(alpha, int | float) or isinstance(alpha, bool) or not math.isfinite(alpha) or alpha <= 0:
        raise AdapterError(f"{path}: field 'lora_alpha' must be a positive finite number, got {alpha!r}")
    for option, why in _UNSUPPORTED_OPTIONS.items():
        if _flag(raw, option, path):
            raise AdapterError(f"{path}: field {option!r} is set; not supported ({why})")
    for option in ("rank_pattern", "alpha_pattern"):
        value = raw.get(option)
        if value is not None and not isinstance(value, dict):
            raise AdapterError(f"{path}: field {option!r} must be an object, got {value!r}")
        if value:
            raise AdapterError(f"{path}: field {option!r} is non-empty; per-module ranks/alphas are not supported")
    if raw.get("modules_to_save"):
        raise AdapterError(
            f"{path}: field 'modules_to_save' is {raw['modules_to_save']!r}; fully trained "
            "modules are not supported (prime-rl's broadcast does not save them)"
        )
    targets = raw.get("target_modules")
    if isinstance(targets, str):
        targets = [targets]
    if targets is None:
        targets = []
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise AdapterError(f"{path}: field 'target_modules' must be a string or a list of strings, got {targets!r}")
    base = raw.get("base_model_name_or_path")
    if base is not None and not isinstance(base, str):
        raise AdapterError(f"{path}: field 'base_model_name_or_path' must be a string, got {base!r}")
    settings = LoraSettings(
        r=r,
        alpha=float(alpha),
        use_rslora=_flag(raw, "use_rslora", path),
        target_modules=tuple(targets),
        base_model=base or None,
        raw=raw,
    )
    if not math.isfinite(settings.scale):
        raise AdapterError(f"{path}: lora_alpha {alpha!r} / r {r} is not a finite scale; fix 'lora_alpha'")
    return settings


def adapter_weights_path(adapter_dir: str | Path) -> Path:
    """The adapter's safetensors file.

    Raises:
        AdapterError: no ``adapter_model.safetensors`` in the directory (a ``.bin`` adapter is named as such).
    """
    path = Path(adapter_dir) / ADAPTER_WEIGHTS
    if path.is_file():
        return path
    if (Path(adapter_dir) / "adapter_model.bin").is_file():
        raise AdapterError(f"{adapter_dir}: only adapter_model.bin found; convert it to {ADAPTER_WEIGHTS}")
    raise AdapterError(f"{path}: no adapter weights")


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


def normalize_key(key: str) -> str:
    """A key without PEFT's ``base_model.model.`` prefix (prime-rl writes none)."""
    return key.removeprefix(PEFT_PREFIX)


def module_kind(name: str) -> str:
    """The part of Trinity-Mini a module belongs to, for reports.

    Returns one of ``attention`` (``self_attn.*``), ``routed_expert`` (``mlp.experts.E.*``),
    ``shared_expert`` (``mlp.shared_experts.*``), ``dense_mlp`` (``mlp.{gate,up,down}_proj``), ``other``.
    """
    if ".self_attn." in name:
        return "attention"
    if _EXPERT.match(name):
        return "routed_expert"
    if ".shared_experts." in name:
        return "shared_expert"
    if re.search(r"\.mlp\.(gate|up|down)_proj$", name):
        return "dense_mlp"
    return "other"


def collect_lora_modules(tensors: Mapping[str, TensorInfo], source: str = "adapter") -> list[LoraModule]:
    """Pair up the ``lora_A``/``lora_B`` tensors of an adapter file into modules.

    Args:
        tensors: the adapter file's header (``read_safetensors_header``).
        source: the file name, for error messages.

    Returns:
        One ``LoraModule`` per adapted module, sorted by name.

    Raises:
        AdapterError: a key that is not ``<module>.lora_A.weight``/``lora_B.weight``, a module stored twice
            (with and without the prefix), a module with only one of A/B, a tensor that is not 2D or not of a
            float dtype (``MERGEABLE_DTYPES``), or A and B whose ranks differ. The message names the key.
    """
    parts: dict[str, dict[str, tuple[str, TensorInfo]]] = {}
    for key, info in tensors.items():
        match = _LORA_KEY.match(normalize_key(key))
        if match is None:
            raise AdapterError(
                f"{source}: tensor {key!r} is not a LoRA weight (<module>.lora_A.weight or "
                "<module>.lora_B.weight); modules_to_save, DoRA and bias tensors are not supported"
            )
        if len(info.shape) != 2:
            raise AdapterError(f"{source}: tensor {key!r} has shape {list(info.shape)}; LoRA weights are 2D")
        if info.dtype not in MERGEABLE_DTYPES:
            raise AdapterError(
                f"{source}: tensor {key!r} has dtype {info.dtype}; LoRA weights must be one of "
                f"{', '.join(MERGEABLE_DTYPES)}"
            )
        slot = parts.setdefault(match["module"], {})
        if match["which"] in slot:
            raise AdapterError(f"{source}: tensor {key!r} duplicates {slot[match['which']][0]!r}")
        slot[match["which"]] = (key, info)
    modules = []
    for name in sorted(parts):
        slot = parts[name]
        for which in "AB":
            if which not in slot:
                other = next(iter(slot.values()))[0]
                raise AdapterError(f"{source}: tensor {other!r} has no lora_{which} partner")
        (a_key, a_info), (b_key, b_info) = slot["A"], slot["B"]
        if a_info.shape[0] != b_info.shape[1]:
            raise AdapterError(
                f"{source}: rank of {a_key!r} ({a_info.shape[0]}) differs from rank of {b_key!r} ({b_info.shape[1]})"
            )
        modules.append(
            LoraModule(
                name=name,
                a_key=a_key,
                b_key=b_key,
                rank=a_info.shape[0],
                in_features=a_info.shape[1],
                out_features=b_info.shape[0],
            )
        )
    return modules


def check_ranks(modules: Iterable[LoraModule], settings: LoraSettings, source: str = "adapter") -> None:
    """Check every module has the config's rank ``r`` (the scale ``alpha/r`` assumes it).

    Raises:
        AdapterError: naming the first module whose rank differs.
    """
    for module in modules:
        if module.rank != settings.r:
            raise AdapterError(
                f"{source}: tensor {module.a_key!r} has rank {module.rank} but adapter_config.json says r={settings.r}"
            )


@dataclass(frozen=True, slots=True)
class Adapter:
    """A LoRA adapter directory, read and checked without torch (``read_adapter``)."""

    settings: LoraSettings
    weights: Path
    """Its ``adapter_model.safetensors``."""
    header: dict[str, TensorInfo]
    modules: list[LoraModule]


def read_adapter(adapter_dir: str | Path) -> Adapter:
    """Read an adapter's config and weights header and pair its modules: every check that needs no torch.

    Raises:
        AdapterError: see ``read_adapter_config``, ``adapter_weights_path``, ``read_safetensors_header``,
            ``collect_lora_modules`` and ``check_ranks``; or the adapter holds no LoRA tensor.
    """
    settings = read_adapter_config(adapter_dir)
    weights = adapter_weights_path(adapter_dir)
    header = read_safetensors_header(weights)
    modules = collect_lora_modules(header, source=str(weights))
    if not modules:
        raise AdapterError(f"{weights}: the adapter holds no LoRA tensors")
    check_ranks(modules, settings, source=str(weights))
    return Adapter(settings, weights, header, modules)


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


def base_weight_map(base_dir: str | Path) -> dict[str, str]:
    """Base checkpoint tensor name -> shard file name, from the safetensors index or the single file.

    Every shard name passes ``checkpoint_file_name``.

    Raises:
        AdapterError: no ``model.safetensors.index.json`` and no ``model.safetensors`` (e.g. ``.bin``
            only); an index that is not UTF-8 JSON, has no non-empty ``weight_map`` object, or names a
            shard that is not a plain ``*.safetensors`` file name (the message names the tensor and name).
    """
    base = Path(base_dir)
    index = base / BASE_INDEX
    if index.is_file():
        raw = read_json(index, "safetensors index")
        weight_map = raw.get("weight_map") if isinstance(raw, dict) else None
        if not isinstance(weight_map, dict) or not weight_map:
            raise AdapterError(
                f"{index}: not a safetensors index: expected an object with a non-empty 'weight_map' object "
                "(tensor name -> shard file)"
            )
        return {
            key: checkpoint_file_name(shard, source=index, key=f"weight_map[{key!r}]")
            for key, shard in weight_map.items()
        }
    single = base / BASE_SINGLE
    if single.is_file():
        return dict.fromkeys(read_safetensors_header(single), BASE_SINGLE)
    raise AdapterError(
        f"{base}: no {BASE_INDEX} or {BASE_SINGLE}; the base must be a safetensors checkpoint "
        "directory (a local download of arcee-ai/Trinity-Mini)"
    )


def base_tensor_infos(base_dir: str | Path, weight_map: Mapping[str, str]) -> dict[str, TensorInfo]:
    """Dtype and shape of every tensor of ``weight_map``, from its own shard's header (no data is read).

    Raises:
        AdapterError: a shard named by the index is missing or malformed, or lacks a tensor the index
            assigns to it.
    """
    headers = {shard: read_safetensors_header(Path(base_dir) / shard) for shard in sorted(set(weight_map.values()))}
    missing = [key for key, shard in weight_map.items() if key not in headers[shard]]
    if missing:
        raise AdapterError(
            f"{base_dir}: tensor {missing[0]!r} is in the index (shard {weight_map[missing[0]]}) "
            f"but not in the shard ({len(missing)} such tensors)"
        )
    return {key: headers[shard][key] for key, shard in weight_map.items()}


def resolve_target(module: str, base: Mapping[str, TensorInfo]) -> BaseTarget | None:
    """Where the delta of ``module`` goes in a base checkpoint with tensors ``base``, or None if nowhere.

    ``M`` maps to ``M.weight``; a per-expert ``...experts.E.{gate,up,down}_proj`` whose base is fused maps to
    expert ``E`` of ``...experts.gate_up_proj`` (gate: first half of dim 1, up: second half) or
    ``...experts.down_proj``.
    """
    key = f"{module}.weight"
    if key in base:
        return BaseTarget(key)
    match = _EXPERT.match(module)
    if match is None:
        return None
    expert, proj = int(match["index"]), match["proj"]
    fused = f"{match['experts']}.{_FUSED_DOWN if proj == 'down_proj' else _FUSED_GATE_UP}"
    info = base.get(fused)
    if info is None or len(info.shape) != 3 or expert >= info.shape[0]:
        return None
    if proj == "down_proj":
        return BaseTarget(fused, expert, (0, info.shape[1]))
    half = info.shape[1] // 2
    return BaseTarget(fused, expert, (0, half) if proj == "gate_proj" else (half, 2 * half))


def target_shape(target: BaseTarget, base: Mapping[str, TensorInfo]) -> tuple[int, ...]:
    """The shape of the (sliced) base weight the delta is added to."""
    shape = base[target.key].shape
    if target.expert is None or target.rows is None:
        return shape
    return (target.rows[1] - target.rows[0], *shape[2:])


def candidate_keys(module: str) -> list[str]:
    """The base tensor names ``resolve_target`` looks for, for error messages."""
    match = _EXPERT.match(module)
    if match is None:
        return [f"{module}.weight"]
    fused = _FUSED_DOWN if match["proj"] == "down_proj" else _FUSED_GATE_UP
    return [f"{module}.weight", f"{match['experts']}.{fused}"]


def plan_merge(
    modules: Iterable[LoraModule], base: Mapping[str, TensorInfo], source: str = "adapter"
) -> list[tuple[LoraModule, BaseTarget]]:
    """Map every adapter module to its base weight and check the shapes agree, before anything is written.

    Returns:
        ``(module, target)`` pairs, one per module.

    Raises:
        AdapterError: a module that matches no base tensor, whose base tensor is not of a float dtype
            (``MERGEABLE_DTYPES``), or whose ``B @ A`` shape differs from the base weight's; the message
            names the first offending adapter key and counts the others.
    """
    plan: list[tuple[LoraModule, BaseTarget]] = []
    problems: list[str] = []
    seen: dict[tuple[str, int | None, tuple[int, int] | None], str] = {}
    for module in modules:
        target = resolve_target(module.name, base)
        if target is None:
            looked = " or ".join(repr(k) for k in candidate_keys(module.name))
            problems.append(f"adapter tensor {module.a_key!r} matches no base weight (looked for {looked})")
            continue
        dtype = base[target.key].dtype
        if dtype not in MERGEABLE_DTYPES:
            problems.append(
                f"base weight {target.key} of adapter tensor {module.a_key!r} has dtype {dtype}; a LoRA delta "
                f"can only be added to {', '.join(MERGEABLE_DTYPES)} weights (dequantize the base first)"
            )
            continue
        want = target_shape(target, base)
        got = (module.out_features, module.in_features)
        if tuple(want) != got:
            where = target.key if target.expert is None else f"{target.key}[{target.expert}, {target.rows}]"
            problems.append(
                f"adapter tensors {module.b_key!r} @ {module.a_key!r} give shape {list(got)} but base "
                f"weight {where} has shape {list(want)}"
            )
            continue
        slot = (target.key, target.expert, target.rows)
        if slot in seen:
            problems.append(f"adapter tensor {module.a_key!r} targets the same base weight as {seen[slot]!r}")
            continue
        seen[slot] = module.a_key
        plan.append((module, target))
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise AdapterError(f"{source}: {problems[0]}{more}; nothing was written")
    return plan


def kind_counts(modules: Iterable[LoraModule]) -> dict[str, int]:
    """How many modules of each ``module_kind``, in a fixed order, zero counts dropped."""
    order = ("attention", "dense_mlp", "shared_expert", "routed_expert", "other")
    counts = dict.fromkeys(order, 0)
    for module in modules:
        counts[module.kind] += 1
    return {kind: n for kind, n in counts.items() if n}
