"""Merge a LoRA adapter into its base checkpoint: ``W += (alpha/r) * B @ A``, one shard at a time.

The rules, in the order the merge applies them:

1. **Check everything first** (``check_merge``), before a byte is written: the adapter config (types,
   finite positive ``r``/``lora_alpha``/scale), every safetensors header against its file (a truncated
   tensor is caught here), the base index and every shard name in it (``safetensors_files.checkpoint_file_name``: a
   plain ``*.safetensors`` file name, so ``<out>/<name>`` stays inside ``--out``), every adapter module
   mapped to a base weight of a float dtype and the same shape, every rank equal to ``r``, every adapter
   value finite, and ``--out`` itself. Any failure is an ``AdapterError`` naming the file and key.
2. **Write into a staging directory beside ``--out``** (``publish.staged_directory``): each base shard is
   loaded alone, its adapted tensors are updated in float32 and cast back to their own dtype, and the
   shard is written under the same name, so peak memory is one shard plus one tensor in fp32. The index
   and every non-weight file (config, tokenizer, chat template, generation config) are copied, so the
   result loads with plain transformers or vLLM, without any LoRA option. The success record
   (``drugprot_merge.json``) is written last.
3. **Move it into place.** ``--out`` then holds the complete merge or, after any failure, exactly what it
   held before. ``--overwrite`` replaces an earlier merge (a directory holding ``drugprot_merge.json``)
   as a whole; any other non-empty directory is refused, so a stray ``--out`` cannot delete unrelated files.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.core.outputs import OutputError, check_folder_output
from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.adapter_config import LoraSettings
from drugprot.tools.adapters.base_checkpoint import (
    BASE_INDEX,
    BaseTarget,
    base_tensor_infos,
    base_weight_map,
    plan_merge,
)
from drugprot.tools.adapters.layout import LoraModule, kind_counts, read_adapter
from drugprot.tools.adapters.publish import staged_directory

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


@dataclass(frozen=True)
class MergePlan:
    """Everything ``check_merge`` established; writing it needs no further check."""

    settings: LoraSettings
    adapter_file: Path
    adapter_tensors: int
    shards: dict[str, list[tuple[LoraModule, BaseTarget]]]
    """Every shard of the base (file name, checked) -> the adapter modules merged into it."""
    replace: bool
    """``--out`` holds an earlier merge that ``--overwrite`` replaces."""


def check_out_dir(out_dir: Path, base_dir: Path, adapter_dir: Path, overwrite: bool) -> bool:
    """Check ``out_dir`` may receive the merge, without touching it.

    Returns:
        True when ``out_dir`` holds an earlier merge to replace (``overwrite`` given); False when it is
        missing or empty.

    Raises:
        AdapterError: ``out_dir`` is, or contains, the base or adapter directory; is a symlink or a file; is
            non-empty without ``overwrite``; or is non-empty and not an earlier merge.
    """
    if out_dir.is_symlink():
        raise AdapterError(f"--out {out_dir} is a symlink; pass the directory it points to")
    resolved = out_dir.resolve()
    for other, what in ((base_dir, "base"), (adapter_dir, "adapter")):
        if resolved == other.resolve():
            raise AdapterError(f"--out {out_dir} is the {what} directory; write the merged model elsewhere")
        if resolved in other.resolve().parents:
            raise AdapterError(f"--out {out_dir} contains the {what} directory; write the merged model elsewhere")
    if out_dir.exists() and not out_dir.is_dir():
        raise AdapterError(f"--out {out_dir} exists and is not a directory")
    try:  # the output policy's folder check: the nearest existing folder is writable, before any work
        check_folder_output("--out", out_dir, [])
    except OutputError as exc:
        raise AdapterError(str(exc)) from None
    if not out_dir.exists():
        return False
    if not any(out_dir.iterdir()):
        return False
    if not (out_dir / MERGE_RECORD).is_file():
        raise AdapterError(
            f"--out {out_dir} is not empty and holds no {MERGE_RECORD}, so it is not an earlier merge; "
            "--overwrite only replaces an earlier merge. Choose a new or empty directory"
        )
    if not overwrite:
        raise AdapterError(f"--out {out_dir} is not empty (an earlier merge); pass --overwrite to replace it")
    return True


def _check_adapter_values(adapter_file: Path, modules: list[LoraModule]) -> None:
    """Refuse an adapter with a NaN or infinite value: it would turn the merged weights into NaN.

    Raises:
        AdapterError: naming the first such tensor; or the file cannot be read by safetensors.
    """
    import torch
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(adapter_file), framework="pt", device="cpu") as handle:
            for module in modules:
                for key in (module.a_key, module.b_key):
                    if not bool(torch.isfinite(handle.get_tensor(key)).all()):
                        raise AdapterError(f"{adapter_file}: tensor {key!r} holds NaN or infinite values")
    except SafetensorError as exc:
        raise AdapterError(f"{adapter_file}: safetensors cannot read the adapter ({exc})") from exc


def check_merge(base_dir: Path, adapter_dir: Path, out_dir: Path, *, overwrite: bool) -> MergePlan:
    """Every check of the merge (rule 1 of the module docstring); reads headers and adapter values only.

    Raises:
        AdapterError: the first problem found, naming the file and key.
    """
    adapter = read_adapter(adapter_dir)
    modules, adapter_file = adapter.modules, adapter.weights
    weight_map = base_weight_map(base_dir)
    plan = plan_merge(modules, base_tensor_infos(base_dir, weight_map), source=str(adapter_file))
    replace = check_out_dir(out_dir, base_dir, adapter_dir, overwrite)
    _check_adapter_values(adapter_file, modules)
    shards: dict[str, list[tuple[LoraModule, BaseTarget]]] = {shard: [] for shard in sorted(set(weight_map.values()))}
    for module, target in plan:
        shards[weight_map[target.key]].append((module, target))
    return MergePlan(adapter.settings, adapter_file, len(adapter.header), shards, replace)


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
    shard_path: Path, out_path: Path, items: list[tuple[LoraModule, BaseTarget]], adapter: Any, scale: float
) -> int:
    """Load one shard, add the deltas of ``items`` in fp32, write it with the original dtypes.

    Args:
        adapter: an open ``safetensors.safe_open`` handle on the adapter file.

    Returns:
        How many base tensors changed.

    The plan was checked by ``check_merge``: every targeted tensor exists in this shard with a float dtype.
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
    """Merge a LoRA adapter into a safetensors base checkpoint and publish a plain checkpoint at ``out_dir``.

    Args:
        base_dir: the base model directory (``config.json``, ``model*.safetensors`` [+ index], tokenizer).
            Routed experts may be stored per expert (the hub layout) or fused 3D.
        adapter_dir: ``adapter_config.json`` + ``adapter_model.safetensors``, keys with or without
            ``base_model.model.``, routed experts per expert (prime-rl's format) — or any plain LoRA adapter.
        out_dir: where the merge appears, complete, at the end; created (with its parents) if needed; must be
            missing or empty, or hold an earlier merge and ``overwrite`` be given.
        overwrite: replace an earlier merge in ``out_dir`` as a whole.
        log: called with one line per shard written (e.g. ``print``); None is silent.

    Returns:
        A ``MergeReport`` with the counts.

    Raises:
        AdapterError: any check of ``check_merge`` (nothing is written), or a write that failed (disk full,
            unreadable shard data): ``out_dir`` is then as it was and no staging directory is left.
    """
    from safetensors import SafetensorError, safe_open

    base_dir, adapter_dir, out_dir = Path(base_dir), Path(adapter_dir), Path(out_dir)
    plan = check_merge(base_dir, adapter_dir, out_dir, overwrite=overwrite)
    settings = plan.settings
    changed = 0
    try:
        with staged_directory(out_dir, replace=plan.replace) as stage:
            with safe_open(str(plan.adapter_file), framework="pt", device="cpu") as adapter:
                for shard, items in plan.shards.items():
                    changed += _merge_shard(base_dir / shard, stage / shard, items, adapter, settings.scale)
                    if log is not None:
                        log(f"wrote {shard}: {len(items)} LoRA modules merged")
            copied = _copy_side_files(base_dir, stage)
            report = MergeReport(
                adapter_tensors=plan.adapter_tensors,
                matched_modules=sum(len(items) for items in plan.shards.values()),
                by_kind=kind_counts(m for items in plan.shards.values() for m, _ in items),
                base_tensors_changed=changed,
                shards_written=len(plan.shards),
                files_copied=copied,
                scale=settings.scale,
                out_dir=out_dir,
                per_shard={shard: len(items) for shard, items in plan.shards.items()},
            )
            _write_record(stage / MERGE_RECORD, settings, report)  # last: the merge is complete
    except (OSError, SafetensorError) as exc:
        raise AdapterError(f"writing the merged checkpoint failed ({exc}); --out {out_dir} was left as it was") from exc
    return report


def _write_record(path: Path, settings: LoraSettings, report: MergeReport) -> None:
    """``drugprot_merge.json``: the adapter settings and the counts, the mark of a complete merge."""
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
        "index": BASE_INDEX if BASE_INDEX in report.files_copied else None,
    }
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
