"""The adapter_config.json PEFT should load for the model at hand (prime-rl's adapter, rewritten).

PEFT cannot take a prime-rl adapter as written: ``"experts"`` in ``target_modules`` raises (0.21 and 0.22, in
different words). On transformers >= 5.4 (routed experts fused into 3D parameters) PEFT < 0.22's v4->v5 config
conversion turns every ``*gate_proj``/``*up_proj``/``*down_proj`` target into the fused expert parameters,
silently dropping the LoRA of ``self_attn.gate_proj`` and the dense MLPs; PEFT 0.22 keeps the ``nn.Linear``
targets, so there dropping ``"experts"`` would be enough (docs/adapters.md's table). The rewrite below is right
on both, and never leaves a target to that conversion:

- experts as ``nn.Linear`` modules (transformers 5.0-5.3, 4.57 remote code): ``target_modules`` becomes a
  regex of exactly the adapted module names.
- experts fused (transformers >= 5.4): ``q/k/v/o_proj`` stay ``target_modules`` (exact names); the other
  projections are targeted as parameters (``<module>.weight``); each adapted ``experts`` block is targeted
  as its ``gate_up_proj``/``down_proj`` parameters with rank ``2r`` on the fused gate/up (PEFT fuses the
  per-expert keys itself).
"""

from __future__ import annotations

import importlib.util
import math
import re
from typing import Any

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.adapter_config import LoraSettings
from drugprot.tools.adapters.layout import EXPERT, LoraModule

_PARAM_TARGETED = ("gate_proj", "up_proj", "down_proj")  # names PEFT's v5 conversion would remap


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
        match = EXPERT.match(module.name)
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
    linear = [m.name for m in modules if not EXPERT.match(m.name)]
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
