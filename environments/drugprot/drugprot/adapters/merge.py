"""Merge a LoRA adapter into its base checkpoint: ``W += (alpha/r) * B @ A``, one shard at a time.

Every adapter module is mapped to its base weight and every shape is checked before anything is written
(``layout.plan_merge``); a key that matches nothing or a shape that disagrees fails the whole merge. Then
each base shard is loaded alone, its adapted tensors are updated in float32 and cast back to their own
dtype, and the shard is written under the same name, so peak memory is one shard plus one tensor in fp32.
The index and every non-weight file (config, tokenizer, chat template, generation config) are copied, so
the output directory loads with plain transformers or vLLM, without any LoRA option.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from drugprot.adapters import AdapterError
from drugprot.adapters.layout import (
    BASE_INDEX,
    BaseTarget,
    LoraModule,
    adapter_weights_path,
    base_tensor_infos,
    base_weight_map,
    check_ranks,
    collect_lora_modules,
    kind_counts,
    plan_merge,
    read_adapter_config,
    read_safetensors_header,
)

# Weight files of other formats that must not be copied next to the merged safetensors.
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".msgpack", ".h5", ".gguf")
MERGE_RECORD = "drugprot_merge.json"


@dataclass(frozen=True)
class MergeReport:
    """What a merge did: counts to compare with what the adapter should contain."""

    adapter_tensors: int
    """lora_A + lora_B tensors in the adapter file."""
    matched_modules: int
    """Adapter modules merged (each is one A/B pair); every module must match, or the merge fails."""
    by_kind: dict[str, int]
    base_tensors_changed: int
    shards_written: int
    files_copied: list[str]
    scale: float
    out_dir: Path
    per_shard: dict[str, int] = field(default_factory=dict)
    """Shard file -> adapter modules merged into it."""

    def summary(self) -> str:
        kinds = ", ".join(f"{kind} {n}" for kind, n in self.by_kind.items())
        return (
            f"merged {self.matched_modules} LoRA modules ({self.adapter_tensors} adapter tensors, all "
            f"matched; {kinds}) at scale {self.scale:g} into {self.base_tensors_changed} base tensors; "
            f"wrote {self.shards_written} shards and copied {len(self.files_copied)} files to {self.out_dir}"
        )


def _prepare_out_dir(out_dir: Path, base_dir: Path, adapter_dir: Path, overwrite: bool) -> None:
    """Create ``out_dir``; refuse the base or adapter directory itself, or a non-empty directory.

    Raises:
        AdapterError: naming the directory and the flag that would allow it.
    """
    resolved = out_dir.resolve()
    for other, what in ((base_dir, "base"), (adapter_dir, "adapter")):
        if resolved == other.resolve():
            raise AdapterError(f"--out {out_dir} is the {what} directory; write the merged model elsewhere")
    if out_dir.exists() and not out_dir.is_dir():
        raise AdapterError(f"--out {out_dir} exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise AdapterError(f"--out {out_dir} is not empty; pass --overwrite to replace its files")
    out_dir.mkdir(parents=True, exist_ok=True)


def _copy_side_files(base_dir: Path, out_dir: Path) -> list[str]:
    """Copy every top-level non-weight file of the base (config, tokenizer, index...) into ``out_dir``."""
    copied = []
    for path in sorted(base_dir.iterdir()):
        if not path.is_file() or path.name.endswith(_WEIGHT_SUFFIXES) or path.name == MERGE_RECORD:
            continue
        shutil.copyfile(path, out_dir / path.name)
        copied.append(path.name)
    return copied


def _merge_shard(
    shard_path: Path, out_path: Path, items: list[tuple[LoraModule, BaseTarget]], adapter, scale: float
) -> int:
    """Load one shard, add the deltas of ``items`` in fp32, write it with the original dtypes.

    Args:
        adapter: an open ``safetensors.safe_open`` handle on the adapter file.

    Returns:
        How many base tensors changed.

    Raises:
        AdapterError: a base tensor the plan targets is not floating point.
    """
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(str(shard_path), framework="pt", device="cpu") as handle:
        metadata = handle.metadata() or {"format": "pt"}
        tensors = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118 (not a dict)
    by_key: dict[str, list[tuple[LoraModule, BaseTarget]]] = {}
    for module, target in items:
        by_key.setdefault(target.key, []).append((module, target))
    for key, group in by_key.items():
        original = tensors[key]
        if not original.is_floating_point():
            raise AdapterError(
                f"{shard_path}: base tensor {key!r} has dtype {original.dtype}; cannot merge into it"
            )
        weight = original.to(torch.float32, copy=True)
        for module, target in group:
            lora_a = adapter.get_tensor(module.a_key).to(torch.float32)
            lora_b = adapter.get_tensor(module.b_key).to(torch.float32)
            view = weight if target.expert is None else weight[target.expert, target.rows[0] : target.rows[1]]
            view.add_(lora_b @ lora_a, alpha=scale)
        tensors[key] = weight.to(original.dtype)
        del weight
    save_file(tensors, str(out_path), metadata=metadata)
    return len(by_key)


def merge_adapter(
    base_dir: str | Path,
    adapter_dir: str | Path,
    out_dir: str | Path,
    *,
    overwrite: bool = False,
    log: Callable[[str], None] | None = None,
) -> MergeReport:
    """Merge a LoRA adapter into a safetensors base checkpoint and write a plain checkpoint.

    Args:
        base_dir: the base model directory (``config.json``, ``model*.safetensors`` [+ index], tokenizer).
            Routed experts may be stored per expert (the hub layout) or fused 3D.
        adapter_dir: ``adapter_config.json`` + ``adapter_model.safetensors``, keys with or without
            ``base_model.model.``, routed experts per expert (prime-rl's format) — or any plain LoRA adapter.
        out_dir: where to write; created if needed, must be empty unless ``overwrite``.
        overwrite: allow a non-empty ``out_dir`` (files of the same name are replaced).
        log: called with one line per shard written (e.g. ``print``); None is silent.

    Returns:
        A ``MergeReport`` with the counts.

    Raises:
        AdapterError: unreadable config/weights, an adapter tensor that matches no base weight, a shape that
            disagrees, a rank that differs from the config, or an unusable ``out_dir``. All checks run before
            anything is written.
    """
    from safetensors import safe_open

    base_dir, adapter_dir, out_dir = Path(base_dir), Path(adapter_dir), Path(out_dir)
    settings = read_adapter_config(adapter_dir)
    adapter_file = adapter_weights_path(adapter_dir)
    adapter_header = read_safetensors_header(adapter_file)
    modules = collect_lora_modules(adapter_header, source=str(adapter_file))
    if not modules:
        raise AdapterError(f"{adapter_file}: the adapter holds no LoRA tensors")
    check_ranks(modules, settings, source=str(adapter_file))
    weight_map = base_weight_map(base_dir)
    base_infos = base_tensor_infos(base_dir, weight_map)
    plan = plan_merge(modules, base_infos, source=str(adapter_file))
    _prepare_out_dir(out_dir, base_dir, adapter_dir, overwrite)

    per_shard: dict[str, list[tuple[LoraModule, BaseTarget]]] = {
        shard: [] for shard in sorted(set(weight_map.values()))
    }
    for module, target in plan:
        per_shard[weight_map[target.key]].append((module, target))
    changed = 0
    with safe_open(str(adapter_file), framework="pt", device="cpu") as adapter:
        for shard, items in per_shard.items():
            changed += _merge_shard(base_dir / shard, out_dir / shard, items, adapter, settings.scale)
            if log is not None:
                log(f"wrote {shard}: {len(items)} LoRA modules merged")
    copied = _copy_side_files(base_dir, out_dir)
    report = MergeReport(
        adapter_tensors=len(adapter_header),
        matched_modules=len(plan),
        by_kind=kind_counts(m for m, _ in plan),
        base_tensors_changed=changed,
        shards_written=len(per_shard),
        files_copied=copied,
        scale=settings.scale,
        out_dir=out_dir,
        per_shard={shard: len(items) for shard, items in per_shard.items()},
    )
    record = {
        "adapter_base_model": settings.base_model,
        "r": settings.r,
        "lora_alpha": settings.alpha,
        "use_rslora": settings.use_rslora,
        "scale": settings.scale,
        "adapter_tensors": report.adapter_tensors,
        "matched_modules": report.matched_modules,
        "by_kind": report.by_kind,
        "base_tensors_changed": report.base_tensors_changed,
        "index": BASE_INDEX if BASE_INDEX in copied else None,
    }
    (out_dir / MERGE_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return report
