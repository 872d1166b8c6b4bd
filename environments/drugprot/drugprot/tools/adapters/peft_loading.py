"""Load base model + prime-rl LoRA adapter with PEFT, rewritten for the installed transformers, and verified.

PEFT cannot take a prime-rl adapter as written: ``"experts"`` in ``target_modules`` raises, keys lack the
``base_model.model.`` prefix, and on transformers >= 5.4 (routed experts fused into 3D parameters) PEFT's
v4->v5 config conversion turns every ``*gate_proj``/``*up_proj``/``*down_proj`` target into the fused
expert parameters, silently dropping the LoRA of ``self_attn.gate_proj`` and the dense MLPs. So the adapter
is rewritten into a temporary directory for the model actually loaded:

- experts as ``nn.Linear`` modules (transformers 5.0-5.3, 4.57 remote code): ``target_modules`` becomes a
  regex of exactly the adapted module names, keys get the prefix.
- experts fused (transformers >= 5.4): ``q/k/v/o_proj`` stay ``target_modules`` (exact names); the other
  projections are targeted as parameters (``<module>.weight``); each adapted ``experts`` block is targeted
  as its ``gate_up_proj``/``down_proj`` parameters with rank ``2r`` on the fused gate/up (PEFT fuses the
  per-expert keys itself). Keys get the prefix.

Then every adapted module's effective delta is compared with ``scale * B @ A`` from the file, and the
logits of a probe input must change when the adapter is enabled; otherwise ``AdapterNotAppliedError``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.tools.adapters import AdapterError, AdapterNotAppliedError
from drugprot.tools.adapters.layout import (
    ADAPTER_CONFIG,
    ADAPTER_WEIGHTS,
    PEFT_PREFIX,
    LoraModule,
    LoraSettings,
    read_adapter,
)

_EXPERT = re.compile(r"^(?P<experts>.+\.experts)\.(?P<index>\d+)\.(?P<proj>gate_proj|up_proj|down_proj)$")
_PARAM_TARGETED = ("gate_proj", "up_proj", "down_proj")  # names PEFT's v5 conversion would remap


@dataclass(frozen=True)
class PeftLoadReport:
    """How the adapter was loaded and what the checks measured."""

    layout: str
    """``fused`` (3D expert parameters), ``modules`` (per-expert nn.Linear) or ``none`` (no experts)."""
    peft_config: dict[str, Any]
    """The rewritten adapter_config.json PEFT loaded."""
    modules_verified: int
    max_delta_error: float
    """Largest |PEFT delta - scale * B @ A| over all modules (0.0 if not verified)."""
    logits_max_abs_change: float
    """max |logits(adapter) - logits(base)| on the probe input (NaN if not checked)."""
    merged: bool = False
    notes: list[str] = field(default_factory=list)


def expert_layout(model: Any) -> str:
    """How the model holds routed experts: ``fused``, ``modules`` or ``none``.

    ``fused``: an ``*.experts`` module with a ``gate_up_proj`` parameter (transformers >= 5.4);
    ``modules``: an ``*.experts`` module with sub-modules (a ModuleList of MLPs); ``none``: no experts.
    """
    import torch

    for name, module in model.named_modules():
        if not name.endswith(".experts"):
            continue
        if isinstance(getattr(module, "gate_up_proj", None), torch.nn.Parameter):
            return "fused"
        if any(True for _ in module.children()):
            return "modules"
    return "none"


def module_regex(names: list[str]) -> str:
    """A regex that fully matches each of ``names`` (integers generalised to ``\\d+``), for PEFT.

    Layer and expert indices become ``\\d+`` so the pattern stays short for 11k modules; a module it also
    matches but the adapter lacks gets a zero LoRA (no effect), and the delta check covers every adapted one.
    """
    templates = sorted({re.escape(re.sub(r"\d+", "<N>", name)).replace("<N>", "\\d+") for name in names})
    return "(?:" + "|".join(templates) + ")"


def _fused_targets(
    modules: list[LoraModule], model: Any, settings: LoraSettings, source: str
) -> tuple[list[str], dict[str, int], dict[str, float]]:
    """The ``target_parameters`` and rank/alpha patterns for per-expert LoRA on fused expert parameters.

    Raises:
        AdapterError: an experts block the adapter covers only partly (some experts or only one of
            gate/up), which PEFT's fusion cannot express; the message suggests ``drugprot adapter merge``.
    """
    by_block: dict[str, set[tuple[int, str]]] = {}
    for module in modules:
        match = _EXPERT.match(module.name)
        if match is not None:
            by_block.setdefault(match["experts"], set()).add((int(match["index"]), match["proj"]))
    if by_block and importlib.util.find_spec("peft.utils.transformers_weight_conversion") is None:
        raise AdapterError(
            f"{source}: this transformers fuses the routed experts and the installed PEFT cannot convert "
            "per-expert LoRA to them (needs peft >= 0.19); upgrade peft or use `drugprot adapter merge`"
        )
    params: list[str] = []
    for block, present in sorted(by_block.items()):
        try:
            n_experts = int(model.get_submodule(block).gate_up_proj.shape[0])
        except AttributeError as exc:
            raise AdapterError(f"{source}: adapter has LoRA for {block}.* but the model has no fused {block}") from exc
        for projs, param in ((("gate_proj", "up_proj"), "gate_up_proj"), (("down_proj",), "down_proj")):
            have = {(e, p) for e, p in present if p in projs}
            if not have:
                continue
            want = {(e, p) for e in range(n_experts) for p in projs}
            if have != want:
                missing = sorted(want - have)[0]
                raise AdapterError(
                    f"{source}: {block}.{param} is fused in this transformers version but the adapter lacks "
                    f"{block}.{missing[0]}.{missing[1]} ({len(want - have)} per-expert LoRA missing); PEFT "
                    "cannot load a partial fused LoRA. Use `drugprot adapter merge` instead."
                )
            params.append(f"{block}.{param}")
    rank_pattern, alpha_pattern = {}, {}
    if any(p.endswith(".gate_up_proj") for p in params):
        # gate and up LoRA stack block-diagonally: rank 2r, alpha chosen so the scale stays alpha/r.
        fused_r = 2 * settings.r
        pattern = r".*\.gate_up_proj"
        rank_pattern[pattern] = fused_r
        alpha_pattern[pattern] = settings.scale * (math.sqrt(fused_r) if settings.use_rslora else fused_r)
    return params, rank_pattern, alpha_pattern


def rewrite_config(
    settings: LoraSettings, modules: list[LoraModule], layout: str, model: Any, source: str = "adapter"
) -> dict[str, Any]:
    """The adapter_config.json PEFT should load for this model (see the module docstring).

    Raises:
        AdapterError: the adapter has routed-expert LoRA the model cannot take (see ``_fused_targets``).
    """
    config = {k: v for k, v in settings.raw.items() if k not in ("target_modules", "target_parameters")}
    config.update(peft_type="LORA", lora_dropout=0.0, inference_mode=True, rank_pattern={}, alpha_pattern={})
    if layout != "fused":
        config["target_modules"] = module_regex([m.name for m in modules])
        return config
    linear = [m.name for m in modules if not _EXPERT.match(m.name)]
    target_modules = sorted(n for n in linear if n.rsplit(".", 1)[-1] not in _PARAM_TARGETED)
    params = sorted(f"{n}.weight" for n in linear if n.rsplit(".", 1)[-1] in _PARAM_TARGETED)
    expert_params, rank_pattern, alpha_pattern = _fused_targets(modules, model, settings, source)
    config.update(
        target_modules=target_modules or None,
        target_parameters=params + expert_params,
        rank_pattern=rank_pattern,
        alpha_pattern=alpha_pattern,
    )
    return config


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
            match = _EXPERT.match(module.name)
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


def _write_rewritten(adapter_file: Path, config: dict[str, Any], target: Path) -> None:
    """Write the rewritten config and the adapter tensors with PEFT's key prefix into ``target``."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(str(adapter_file), framework="pt", device="cpu") as handle:
        tensors = {
            (key if key.startswith(PEFT_PREFIX) else PEFT_PREFIX + key): handle.get_tensor(key)
            for key in handle.keys()  # noqa: SIM118 (not a dict)
        }
    save_file(tensors, str(target / ADAPTER_WEIGHTS), metadata={"format": "pt"})
    (target / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2, default=sorted) + "\n", encoding="utf-8")


def apply_adapter(
    model: Any, adapter_dir: str | Path, *, verify: bool = True, probe_ids: Any = None, merge: bool = False
) -> tuple[Any, PeftLoadReport]:
    """Load a (prime-rl or PEFT) LoRA adapter onto an already loaded transformers model with PEFT.

    Args:
        model: a base ``AutoModelForCausalLM`` (e.g. AfmoeForCausalLM), not yet wrapped by PEFT.
        adapter_dir: ``adapter_config.json`` + ``adapter_model.safetensors``.
        verify: compare every module's PEFT delta with ``scale * B @ A`` and check the probe logits change.
        probe_ids: ``[1, T]`` token ids for the logits check; default: 16 ids spread over the vocabulary.
        merge: return ``merge_and_unload()``'s plain model (faster generation) after the checks.

    Returns:
        ``(PeftModel or merged model, PeftLoadReport)``.

    Raises:
        AdapterError: unreadable or unsupported adapter; an adapter whose lora_B are all zero (a no-op, e.g.
            prime-rl's step_0); PEFT failing to load it (its error is wrapped, with what to do).
        AdapterNotAppliedError: a module's LoRA did not load as written, or the logits did not change.
    """
    import torch
    from peft import PeftModel

    adapter_dir = Path(adapter_dir)
    adapter = read_adapter(adapter_dir)
    settings, adapter_file, modules = adapter.settings, adapter.weights, adapter.modules
    layout = expert_layout(model)
    config = rewrite_config(settings, modules, layout, model, source=str(adapter_file))
    if verify:
        _require_nonzero_b(adapter_file, modules)
    with tempfile.TemporaryDirectory(prefix="drugprot-adapter-") as tmp, warnings.catch_warnings():
        # PEFT applies the gate_up_proj rank pattern yet warns it matched nothing; verify_deltas checks it.
        warnings.filterwarnings("ignore", message=r"The following (rank|alpha)_pattern keys did not match")
        _write_rewritten(adapter_file, config, Path(tmp))
        try:
            peft_model = PeftModel.from_pretrained(model, tmp, is_trainable=False)
        except Exception as exc:  # PEFT raises ValueError, KeyError, RuntimeError...: report each the same way
            raise AdapterError(
                f"{adapter_dir}: PEFT could not load the adapter rewritten for this model "
                f"({type(exc).__name__}: {exc}); merge it instead with `drugprot adapter merge` "
                "(docs/adapters.md)"
            ) from exc
    peft_model.eval()
    checked, worst, change = 0, 0.0, math.nan
    if verify:
        checked, worst = verify_deltas(peft_model, modules, adapter_file, settings.scale)
        if probe_ids is None:
            vocab = int(peft_model.get_base_model().config.vocab_size)
            probe_ids = torch.linspace(1, vocab - 1, 16).long().unsqueeze(0)
        device = next(peft_model.parameters()).device
        change = logits_change(peft_model, probe_ids.to(device))
        if not change > 0.0:
            raise AdapterNotAppliedError(
                f"{adapter_dir}: logits with the adapter equal the base model's "
                "(max |diff| = 0); the adapter had no effect"
            )
    result = peft_model.merge_and_unload() if merge else peft_model
    report = PeftLoadReport(
        layout=layout,
        peft_config=config,
        modules_verified=checked,
        max_delta_error=worst,
        logits_max_abs_change=change,
        merged=merge,
    )
    return result, report


def _require_nonzero_b(adapter_file: Path, modules: list[LoraModule]) -> None:
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


def load_model_with_adapter(
    base_dir: str | Path,
    adapter_dir: str | Path | None = None,
    *,
    dtype: Any = "auto",
    device: str | None = None,
    trust_remote_code: bool = False,
    verify: bool = True,
    merge: bool = False,
) -> tuple[Any, PeftLoadReport | None]:
    """Load ``base_dir`` with transformers and, if given, the adapter with ``apply_adapter``.

    Args:
        base_dir: a local model directory (or hub id, if the caller has hub access).
        adapter_dir: the adapter, or None for the base model alone.
        dtype: passed to ``from_pretrained`` (``"auto"`` keeps the checkpoint's bf16).
        device: ``"cpu"``, ``"cuda"``...; None leaves transformers' default.
        trust_remote_code: for transformers < 5.0, which has no native AFMoE.
        verify, merge: see ``apply_adapter``.

    Returns:
        ``(model in eval mode, report or None when no adapter)``.

    Raises:
        AdapterError: the adapter is unreadable (checked before the model is loaded), or transformers cannot
            load the base model or move it to ``device`` (its error wrapped, with what to do); and see
            ``apply_adapter``.
        AdapterNotAppliedError: see ``apply_adapter``.
    """
    from transformers import AutoModelForCausalLM

    if adapter_dir is not None:
        read_adapter(adapter_dir)  # a broken adapter fails before minutes of model loading
    try:
        model = AutoModelForCausalLM.from_pretrained(str(base_dir), dtype=dtype, trust_remote_code=trust_remote_code)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError...: report each the same way
        raise AdapterError(
            f"{base_dir}: transformers could not load the base model ({type(exc).__name__}: {exc}); pass a "
            "local model directory with config.json and *.safetensors (hf download arcee-ai/Trinity-Mini "
            "--local-dir DIR), and --trust-remote-code on transformers < 5.0"
        ) from exc
    if device is not None:
        try:
            model = model.to(device)
        except (RuntimeError, AssertionError, ValueError) as exc:
            raise AdapterError(f"--device {device}: torch cannot use it ({exc}); pass cpu or a device it has") from exc
    model.eval()
    if adapter_dir is None:
        return model, None
    return apply_adapter(model, adapter_dir, verify=verify, merge=merge)
