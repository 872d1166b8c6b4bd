"""``drugprot adapter merge|inspect``: fold a prime-rl LoRA adapter into its base model, or describe it.

``merge`` needs torch + safetensors (the ``adapters`` extra: ``uv pip install -e
'environments/drugprot[adapters]'`` from the repository root); ``inspect`` reads only JSON and safetensors
headers, so it runs anywhere.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import EXIT_ERROR, error_line
from drugprot.tools.adapters import require_adapters_extra
from drugprot.tools.adapters.base_checkpoint import base_tensor_infos, base_weight_map, plan_merge
from drugprot.tools.adapters.layout import PEFT_PREFIX, kind_counts, read_adapter

TRINITY_MINI_PRIME_RL_MODULES = 11_686
"""LoRA modules prime-rl's default targets give on Trinity-Mini: 5 x 32 attention + 3 x 2 dense MLP +
3 x 128 experts x 30 MoE layers (the shared expert is not adapted)."""

_LAYER = re.compile(r"\.layers\.(\d+)\.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register ``merge`` and ``inspect`` under ``drugprot adapter``."""
    sub = parser.add_subparsers(dest="adapter_command", metavar="ACTION", required=True)
    merge = sub.add_parser(
        "merge",
        help="merge W += (alpha/r) B A into the base checkpoint, shard by shard",
        description="Merge a LoRA adapter into a safetensors base checkpoint. The output "
        "directory loads with plain transformers or vLLM (no LoRA flags).",
    )
    merge.add_argument("--base", required=True, type=Path, help="base model directory (safetensors + config)")
    merge.add_argument(
        "--adapter",
        required=True,
        type=Path,
        help="adapter directory, e.g. <output_dir>/<run>/broadcasts/step_N",
    )
    merge.add_argument(
        "--out",
        required=True,
        type=Path,
        help="output directory (created; must be missing or empty); it appears complete at the end",
    )
    merge.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier merge in --out (a directory holding drugprot_merge.json)",
    )
    merge.add_argument("--quiet", action="store_true", help="print only the summary line")
    inspect = sub.add_parser(
        "inspect",
        help="print rank, alpha, targets and module counts of an adapter",
        description="Describe a LoRA adapter; with --base, check every module matches.",
    )
    inspect.add_argument("--adapter", required=True, type=Path, help="adapter directory")
    inspect.add_argument("--base", type=Path, help="also check the adapter against this base checkpoint")
    inspect.add_argument("--json", action="store_true", help="print one JSON object instead of text")


@dataclass(frozen=True)
class AdapterDescription:
    """What ``inspect`` reports about an adapter."""

    adapter: str
    base_model: str | None
    r: int
    lora_alpha: float
    use_rslora: bool
    scale: float
    target_modules: list[str]
    tensors: int
    modules: int
    by_kind: dict[str, int]
    lora_parameters: int
    dtypes: list[str]
    key_prefixes: list[str]
    layers: list[int]
    expert_modules_per_moe_layer: list[int]
    """Distinct counts of routed-expert modules per MoE layer (one value when every layer is alike)."""
    base: str | None = None
    matched_in_base: int | None = None

    def text(self) -> str:
        """The human-readable report, one ``field: value`` line each."""
        lines = [
            f"adapter:        {self.adapter}",
            f"base model:     {self.base_model}",
            f"rank r:         {self.r}",
            f"lora_alpha:     {self.lora_alpha:g}",
            f"scale:          {self.scale:g} ({'rsLoRA: alpha/sqrt(r)' if self.use_rslora else 'alpha/r'})",
            f"target_modules: {', '.join(self.target_modules) or '(none)'}",
            f"tensors:        {self.tensors} ({self.modules} modules x lora_A/lora_B)",
            "modules:        " + ", ".join(f"{kind} {n}" for kind, n in self.by_kind.items()),
            f"parameters:     {self.lora_parameters:,}",
            f"dtypes:         {', '.join(self.dtypes)}",
            f"key prefix:     {', '.join(self.key_prefixes)}",
            f"layers:         {_ranges(self.layers)}",
        ]
        if self.expert_modules_per_moe_layer:
            per_layer = "/".join(str(n) for n in self.expert_modules_per_moe_layer)
            lines.append(f"expert modules: {per_layer} per MoE layer")
        if "experts" in self.target_modules:
            lines.append(
                "note:           'experts' in target_modules: PEFT refuses this adapter as written; with "
                "peft >= 0.22 and transformers >= 5.4, removing 'experts' is enough, otherwise use "
                "`drugprot adapter merge` or drugprot.tools.adapters.peft_loading"
            )
        if self.base_model and "Trinity-Mini" in self.base_model:
            lines.append(
                f"note:           prime-rl's default targets on Trinity-Mini give "
                f"{TRINITY_MINI_PRIME_RL_MODULES:,} modules; this adapter has {self.modules:,}"
            )
        if self.base is not None:
            lines.append(f"base check:     all {self.matched_in_base} modules match {self.base} (shapes agree)")
        return "\n".join(lines)


def describe_adapter(adapter_dir: Path, base_dir: Path | None = None) -> AdapterDescription:
    """Read an adapter (and optionally check it against a base checkpoint) without torch.

    Raises:
        AdapterError: unreadable adapter, or (with ``base_dir``) a module that does not fit the base.
    """
    adapter = read_adapter(adapter_dir)
    settings, weights, header, modules = adapter.settings, adapter.weights, adapter.header, adapter.modules
    layer_of = {m.name: int(found.group(1)) for m in modules if (found := _LAYER.search(m.name))}
    per_layer = Counter(layer_of[m.name] for m in modules if m.kind == "routed_expert" and m.name in layer_of)
    matched = None
    if base_dir is not None:
        weight_map = base_weight_map(base_dir)
        matched = len(plan_merge(modules, base_tensor_infos(base_dir, weight_map), source=str(weights)))
    return AdapterDescription(
        adapter=str(adapter_dir),
        base_model=settings.base_model,
        r=settings.r,
        lora_alpha=settings.alpha,
        use_rslora=settings.use_rslora,
        scale=settings.scale,
        target_modules=list(settings.target_modules),
        tensors=len(header),
        modules=len(modules),
        by_kind=kind_counts(modules),
        lora_parameters=sum(m.rank * (m.in_features + m.out_features) for m in modules),
        dtypes=sorted({t.dtype for t in header.values()}),
        key_prefixes=sorted({PEFT_PREFIX if k.startswith(PEFT_PREFIX) else "(none)" for k in header}),
        layers=sorted(set(layer_of.values())),
        expert_modules_per_moe_layer=sorted(set(per_layer.values())),
        base=None if base_dir is None else str(base_dir),
        matched_in_base=matched,
    )


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2, 5``."""
    if not numbers:
        return "(none)"
    spans, start, prev = [], numbers[0], numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(spans)


def run(args: argparse.Namespace) -> int:
    """Run ``merge`` or ``inspect``; on a ``DrugprotError`` or ``OSError`` print ``drugprot adapter: error: ...``
    to stderr and return ``EXIT_ERROR`` (2), the exit convention of every ``drugprot`` command."""
    try:
        if args.adapter_command == "inspect":
            info = describe_adapter(args.adapter, args.base)
            print(json.dumps(asdict(info), indent=2) if args.json else info.text())
            return 0
        require_adapters_extra("drugprot adapter merge", ("torch", "safetensors"))
        from drugprot.tools.adapters.merge import merge_adapter

        log = None if args.quiet else print
        report = merge_adapter(args.base, args.adapter, args.out, overwrite=args.overwrite, log=log)
        print(report.summary())
        return 0
    except (DrugprotError, OSError) as exc:
        print(error_line("adapter", exc), file=sys.stderr)
        return EXIT_ERROR
