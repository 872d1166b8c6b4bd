"""Checks that a PEFT-loaded adapter took effect: every module's delta is ``scale * B @ A``, the logits move."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drugprot.tools.adapters import AdapterError, AdapterNotAppliedError
from drugprot.tools.adapters.layout import EXPERT, LoraModule


def _wrappers(root: Any, name: str) -> dict[str, Any]:
    """PEFT LoRA layers stacked on module ``name``: parameter name (or ``""``) -> layer."""
    from peft.tuners.lora import LoraLayer

    found: dict[str, Any] = {}
    module = root.get_submodule(name)
    while isinstance(module, LoraLayer):
        found[getattr(module, "parameter_name", "") or ""] = module
        module = module.base_layer
    return found


def _delta(layer: Any, adapter: str) -> Any:
    import torch

    with torch.no_grad():
        return layer.get_delta_weight(adapter).detach().float().cpu()


def verify_deltas(
    peft_model: Any,
    modules: list[LoraModule],
    adapter_file: Path,
    scale: float,
    adapter_name: str = "default",
) -> tuple[int, float]:
    """Check every adapted module's PEFT delta equals ``scale * B @ A`` from the adapter file.

    Tolerance: ``1e-2 * max|expected| + 1e-6`` when the base weight is 16-bit (the delta is rounded to
    it), ``1e-4 * max|expected| + 1e-7`` otherwise.

    Returns:
        ``(modules checked, largest absolute error)``.

    Raises:
        AdapterNotAppliedError: naming the first module whose LoRA is missing or wrong, and counting them.
    """
    import torch
    from safetensors import safe_open

    root = peft_model.get_base_model()
    failures: list[str] = []
    worst = 0.0
    # The fused deltas of the current expert block (gate_up and down), computed once per block: modules are
    # sorted by name, so each block's experts come together.
    cache: dict[tuple[str, str], Any] = {}
    with safe_open(str(adapter_file), framework="pt", device="cpu") as handle:
        for module in modules:
            lora_a = handle.get_tensor(module.a_key).float()
            lora_b = handle.get_tensor(module.b_key).float()
            expected = (lora_b @ lora_a) * scale
            match = EXPERT.match(module.name)
            try:
                layers = _wrappers(root, module.name)
                fused = False
            except AttributeError:
                if match is None:
                    failures.append(f"{module.name}: no such module in the model")
                    continue
                layers, fused = _wrappers(root, match["experts"]), True
            if fused:
                param = "down_proj" if match["proj"] == "down_proj" else "gate_up_proj"
                layer = layers.get(param)
                if layer is None or adapter_name not in layer.lora_A:
                    failures.append(f"{module.name}: no LoRA on {match['experts']}.{param}")
                    continue
                if (match["experts"], param) not in cache:
                    if any(block != match["experts"] for block, _ in cache):
                        cache.clear()
                    cache[(match["experts"], param)] = _delta(layer, adapter_name)
                full = cache[(match["experts"], param)][int(match["index"])]
                half = full.shape[0] // 2
                actual = {"down_proj": full, "gate_proj": full[:half], "up_proj": full[half:]}[match["proj"]]
                dtype = layer.get_param().dtype
            else:
                layer = layers.get("") or layers.get("weight")
                if layer is None or adapter_name not in layer.lora_A:
                    failures.append(f"{module.name}: not wrapped by a LoRA layer")
                    continue
                actual = _delta(layer, adapter_name)
                dtype = layer.get_base_layer().weight.dtype
            if actual.shape != expected.shape:
                failures.append(
                    f"{module.name}: PEFT delta has shape {list(actual.shape)}, expected {list(expected.shape)}"
                )
                continue
            rtol, atol = (1e-2, 1e-6) if dtype in (torch.bfloat16, torch.float16) else (1e-4, 1e-7)
            error = float((actual - expected).abs().max())
            worst = max(worst, error)
            if error > rtol * float(expected.abs().max()) + atol:
                failures.append(f"{module.name}: PEFT delta differs from scale*B@A by {error:.3g}")
    if failures:
        more = f" (and {len(failures) - 1} more modules)" if len(failures) > 1 else ""
        raise AdapterNotAppliedError(
            f"{adapter_file}: LoRA not applied as written: {failures[0]}{more}. "
            "Merge the adapter instead: `drugprot adapter merge`."
        )
    return len(modules), worst


def logits_change(peft_model: Any, input_ids: Any) -> float:
    """max |logits with adapter - logits with the adapter disabled| on ``input_ids`` ([1, T] tensor)."""
    import torch

    with torch.no_grad():
        on = peft_model(input_ids=input_ids).logits.float()
        with peft_model.disable_adapter():
            off = peft_model(input_ids=input_ids).logits.float()
    return float((on - off).abs().max())


def require_nonzero_b(adapter_file: Path, modules: list[LoraModule]) -> None:
    """Raise AdapterError if every lora_B tensor is zero (the adapter cannot change anything)."""
    from safetensors import safe_open

    with safe_open(str(adapter_file), framework="pt", device="cpu") as handle:
        for module in modules:
            if bool(handle.get_tensor(module.b_key).any()):
                return
    raise AdapterError(
        f"{adapter_file}: every lora_B tensor is zero, so the adapter is a no-op (prime-rl's "
        "step_0 broadcast is; use a later step)"
    )
