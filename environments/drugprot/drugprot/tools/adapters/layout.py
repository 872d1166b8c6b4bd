"""What is in an adapter and a base checkpoint, read without torch: configs, key names, tensor shapes.

A prime-rl adapter directory (``<output_dir>/<run>/broadcasts/step_N/``) holds ``adapter_config.json``
and one ``adapter_model.safetensors`` with keys like ``model.layers.2.mlp.experts.5.gate_proj.lora_A.weight``
(no ``base_model.model.`` prefix; one key per routed expert). PEFT-saved adapters carry the prefix; both are
accepted. A LoRA module ``M`` adds ``(alpha/r) * B @ A`` to the base weight ``M.weight``, or, when the base
checkpoint stores routed experts fused (``experts.gate_up_proj [E, 2I, H]``, ``experts.down_proj [E, H, I]``),
to the rows of expert ``e`` in the fused tensor (gate rows ``[0, I)``, up rows ``[I, 2I)``).

The files are read by ``safetensors_files`` and ``adapter_config``; where each module goes in a base checkpoint is
``base_checkpoint``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.adapter_config import (
    LoraSettings,
    adapter_weights_path,
    read_adapter_config,
)
from drugprot.tools.adapters.safetensors_files import (
    MERGEABLE_DTYPES,
    TensorInfo,
    read_safetensors_header,
)

PEFT_PREFIX = "base_model.model."

_LORA_KEY = re.compile(r"^(?P<module>.+)\.lora_(?P<which>[AB])\.weight$")
EXPERT = re.compile(r"^(?P<experts>.+\.experts)\.(?P<index>\d+)\.(?P<proj>gate_proj|up_proj|down_proj)$")
"""A routed expert's projection: ``<...>.experts.<index>.<gate_proj|up_proj|down_proj>``."""


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
    if EXPERT.match(name):
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


def kind_counts(modules: Iterable[LoraModule]) -> dict[str, int]:
    """How many modules of each ``module_kind``, in a fixed order, zero counts dropped."""
    order = ("attention", "dense_mlp", "shared_expert", "routed_expert", "other")
    counts = dict.fromkeys(order, 0)
    for module in modules:
        counts[module.kind] += 1
    return {kind: n for kind, n in counts.items() if n}
