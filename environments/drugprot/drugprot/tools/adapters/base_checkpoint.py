"""The base checkpoint: its weight map and tensor shapes, and where each LoRA module's delta goes in it.

A module ``M`` adds to ``M.weight``, or, when the checkpoint stores routed experts fused
(``experts.gate_up_proj [E, 2I, H]``, ``experts.down_proj [E, H, I]``), to the rows of expert ``e`` in the fused
tensor (gate rows ``[0, I)``, up rows ``[I, 2I)``). ``plan_merge`` checks every module's target before anything
is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.layout import EXPERT, LoraModule
from drugprot.tools.adapters.safetensors_files import (
    MERGEABLE_DTYPES,
    TensorInfo,
    checkpoint_file_name,
    read_json,
    read_safetensors_header,
)

BASE_INDEX = "model.safetensors.index.json"
BASE_SINGLE = "model.safetensors"
_FUSED_GATE_UP, _FUSED_DOWN = "gate_up_proj", "down_proj"


@dataclass(frozen=True, slots=True)
class BaseTarget:
    """Where a LoRA module's delta goes in the base checkpoint.

    ``key`` is the base tensor. For a fused expert tensor, ``expert`` is the index along dim 0 and ``rows``
    the ``[start, stop)`` range along dim 1; both are None for an ordinary 2D weight.
    """

    key: str
    expert: int | None = None
    rows: tuple[int, int] | None = None


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
    match = EXPERT.match(module)
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
    match = EXPERT.match(module)
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
