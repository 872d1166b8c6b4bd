"""Load base model + prime-rl LoRA adapter with PEFT, rewritten for the installed transformers, and verified.

The adapter is rewritten into a temporary directory for the model actually loaded (``peft_config``: which
modules and parameters PEFT targets; keys get PEFT's ``base_model.model.`` prefix), loaded with PEFT, and
checked (``peft_verify``): every adapted module's effective delta is compared with ``scale * B @ A`` from the
file, and the logits of a probe input must change when the adapter is enabled; otherwise
``AdapterNotAppliedError``.
"""

from __future__ import annotations

import json
import math
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drugprot.tools.adapters import AdapterError, AdapterNotAppliedError
from drugprot.tools.adapters.adapter_config import ADAPTER_CONFIG, ADAPTER_WEIGHTS
from drugprot.tools.adapters.layout import PEFT_PREFIX, read_adapter
from drugprot.tools.adapters.peft_config import expert_layout, rewrite_config
from drugprot.tools.adapters.peft_verify import logits_change, require_nonzero_b, verify_deltas


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
        require_nonzero_b(adapter_file, modules)
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
