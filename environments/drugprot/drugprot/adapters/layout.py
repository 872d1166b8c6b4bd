"""What is in an adapter and a base checkpoint, read without torch: configs, key names, tensor shapes.

A prime-rl adapter directory (``<output_dir>/<run>/broadcasts/step_N/``) holds ``adapter_config.json``
and one ``adapter_model.safetensors`` with keys like ``model.layers.2.mlp.experts.5.gate_proj.lora_A.weight``
(no ``base_model.model.`` prefix; one key per routed expert). PEFT-saved adapters carry the prefix; both are
accepted. A LoRA module ``M`` adds ``(alpha/r) * B @ A`` to the base weight ``M.weight``, or, when the base
checkpoint stores routed experts fused (``experts.gate_up_proj [E, 2I, H]``, ``experts.down_proj [E, H, I]``),
to the rows of expert ``e`` in the fused tensor (gate rows ``[0, I)``, up rows ``[I, 2I)``).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from drugprot.adapters import AdapterError

PEFT_PREFIX = "base_model.model."
ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
BASE_INDEX = "model.safetensors.index.json"
BASE_SINGLE = "model.safetensors"

_LORA_KEY = re.compile(r"^(?P<module>.+)\.lora_(?P<which>[AB])\.weight$")
_EXPERT = re.compile(r"^(?P<experts>.+\.experts)\.(?P<index>\d+)\.(?P<proj>gate_proj|up_proj|down_proj)$")
_FUSED_GATE_UP, _FUSED_DOWN = "gate_up_proj", "down_proj"

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


def read_adapter_config(adapter_dir: str | Path) -> LoraSettings:
    """Read ``adapter_config.json`` of a LoRA adapter.

    Returns:
        The rank, alpha, rsLoRA flag, target modules and base model name.

    Raises:
        AdapterError: no config file, not valid JSON, not a LoRA adapter, ``r``/``lora_alpha`` missing or not
            positive, or an option that changes the update in a way not supported here (DoRA, LoRA bias,
            ``fan_in_fan_out``, ``rank_pattern``/``alpha_pattern``, ``modules_to_save``).
    """
    path = Path(adapter_dir) / ADAPTER_CONFIG
    if not path.is_file():
        raise AdapterError(
            f"{path}: no adapter config; point at the directory holding {ADAPTER_CONFIG} and "
            f"{ADAPTER_WEIGHTS} (prime-rl: <output_dir>/<run>/broadcasts/step_N)"
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise AdapterError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise AdapterError(f"{path}: expected a JSON object, got {type(raw).__name__}")
    peft_type = str(raw.get("peft_type", "LORA")).upper()
    if peft_type != "LORA":
        raise AdapterError(f"{path}: peft_type is {peft_type!r}; only LORA adapters are supported")
    r, alpha = raw.get("r"), raw.get("lora_alpha")
    if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
        raise AdapterError(f"{path}: field 'r' must be a positive integer, got {r!r}")
    if not isinstance(alpha, int | float) or isinstance(alpha, bool) or alpha <= 0:
        raise AdapterError(f"{path}: field 'lora_alpha' must be a positive number, got {alpha!r}")
    for option, why in _UNSUPPORTED_OPTIONS.items():
        if raw.get(option):
            raise AdapterError(f"{path}: field {option!r} is set; not supported ({why})")
    for option in ("rank_pattern", "alpha_pattern"):
        if raw.get(option):
            raise AdapterError(
                f"{path}: field {option!r} is non-empty; per-module ranks/alphas are not supported"
            )
    if raw.get("modules_to_save"):
        raise AdapterError(
            f"{path}: field 'modules_to_save' is {raw['modules_to_save']!r}; fully trained "
            "modules are not supported (prime-rl's broadcast does not save them)"
        )
    targets = raw.get("target_modules") or ()
    targets = (targets,) if isinstance(targets, str) else tuple(str(t) for t in targets)
    base = raw.get("base_model_name_or_path")
    return LoraSettings(
        r=r,
        alpha=float(alpha),
        use_rslora=bool(raw.get("use_rslora")),
        target_modules=targets,
        base_model=str(base) if base else None,
        raw=raw,
    )


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

    Raises:
        AdapterError: the file is missing, truncated or its header is not a safetensors header.
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
    except OSError as exc:
        raise AdapterError(f"{path}: cannot read ({exc})") from exc
    if len(header_bytes) != length:
        raise AdapterError(f"{path}: truncated safetensors header")
    try:
        header = json.loads(header_bytes)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AdapterError(f"{path}: safetensors header is not JSON ({exc})") from exc
    tensors: dict[str, TensorInfo] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            tensors[name] = TensorInfo(dtype=str(info["dtype"]), shape=tuple(int(d) for d in info["shape"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise AdapterError(f"{path}: bad header entry for tensor {name!r}") from exc
    return tensors


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
            (with and without the prefix), a module with only one of A/B, a tensor that is not 2D, or A and B
            whose ranks differ. The message names the key.
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
                f"{source}: rank of {a_key!r} ({a_info.shape[0]}) differs from rank of {b_key!r} "
                f"({b_info.shape[1]})"
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
                f"{source}: tensor {module.a_key!r} has rank {module.rank} but adapter_config.json says "
                f"r={settings.r}"
            )


def base_weight_map(base_dir: str | Path) -> dict[str, str]:
    """Base checkpoint tensor name -> shard file name, from the safetensors index or the single file.

    Raises:
        AdapterError: no ``model.safetensors.index.json`` and no ``model.safetensors`` (e.g. ``.bin``
            only), or an index without a ``weight_map``.
    """
    base = Path(base_dir)
    index = base / BASE_INDEX
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise AdapterError(f"{index}: not a safetensors index with a weight_map ({exc})") from exc
        return {str(k): str(v) for k, v in weight_map.items()}
    single = base / BASE_SINGLE
    if single.is_file():
        return dict.fromkeys(read_safetensors_header(single), BASE_SINGLE)
    raise AdapterError(
        f"{base}: no {BASE_INDEX} or {BASE_SINGLE}; the base must be a safetensors checkpoint "
        "directory (a local download of arcee-ai/Trinity-Mini)"
    )


def base_tensor_infos(base_dir: str | Path, weight_map: Mapping[str, str]) -> dict[str, TensorInfo]:
    """Dtype and shape of every base tensor, from the shard headers (no tensor data is read).

    Raises:
        AdapterError: a shard named by the index is missing, or lacks a tensor the index assigns to it.
    """
    infos: dict[str, TensorInfo] = {}
    for shard in sorted(set(weight_map.values())):
        infos.update(read_safetensors_header(Path(base_dir) / shard))
    missing = [key for key in weight_map if key not in infos]
    if missing:
        raise AdapterError(
            f"{base_dir}: tensor {missing[0]!r} is in the index (shard {weight_map[missing[0]]}) "
            f"but not in the shard ({len(missing)} such tensors)"
        )
    return infos


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
        AdapterError: a module that matches no base tensor, or whose ``B @ A`` shape differs from the base
            weight's; the message names the first offending adapter key and counts the others.
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
