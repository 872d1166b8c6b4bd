"""An adapter's ``adapter_config.json`` (the LoRA settings, each field of its PEFT type) and its weights file.

``r`` must be a positive int, ``lora_alpha`` a positive finite number (and so a finite scale), flags booleans,
``target_modules`` a string or a list of strings; options that change the update (DoRA, LoRA biases,
``fan_in_fan_out``) are refused rather than ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.safetensors_files import (
    read_json,
)

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"


# Options a PEFT LoRA config may set that change what W' is; merging/loading must not ignore them silently.
_UNSUPPORTED_OPTIONS = {
    "use_dora": "DoRA adds a magnitude vector",
    "lora_bias": "LoRA biases add a bias term",
    "fan_in_fan_out": "fan_in_fan_out stores transposed weights",
}


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


def _flag(raw: Mapping[str, object], field: str, path: Path) -> bool:
    """A boolean config field; missing or null is False."""
    value = raw.get(field)
    if value is None or isinstance(value, bool):
        return bool(value)
    raise AdapterError(f"{path}: field {field!r} must be true or false, got {value!r}")


def read_adapter_config(adapter_dir: str | Path) -> LoraSettings:
    """Read ``adapter_config.json`` of a LoRA adapter.

    Returns:
        The rank, alpha, rsLoRA flag, target modules and base model name.

    Raises:
        AdapterError: no config file, not UTF-8 JSON (``NaN``/``Infinity`` included), not a LoRA adapter, a
            field of the wrong type, ``r``/``lora_alpha`` not positive and finite, or an option that changes
            the update in a way not supported here (DoRA, LoRA bias, ``fan_in_fan_out``,
            ``rank_pattern``/``alpha_pattern``, ``modules_to_save``). The message names the field.
    """
    path = Path(adapter_dir) / ADAPTER_CONFIG
    if not path.is_file():
        raise AdapterError(
            f"{path}: no adapter config; point at the directory holding {ADAPTER_CONFIG} and "
            f"{ADAPTER_WEIGHTS} (prime-rl: <output_dir>/<run>/broadcasts/step_N)"
        )
    raw = read_json(path, "adapter config")
    if not isinstance(raw, dict):
        raise AdapterError(f"{path}: expected a JSON object, got {type(raw).__name__}")
    peft_type = raw.get("peft_type", "LORA")
    if not isinstance(peft_type, str) or peft_type.upper() != "LORA":
        raise AdapterError(f"{path}: peft_type is {peft_type!r}; only LORA adapters are supported")
    r, alpha = raw.get("r"), raw.get("lora_alpha")
    if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
        raise AdapterError(f"{path}: field 'r' must be a positive integer, got {r!r}")
    if not isinstance(alpha, int | float) or isinstance(alpha, bool) or not math.isfinite(alpha) or alpha <= 0:
        raise AdapterError(f"{path}: field 'lora_alpha' must be a positive finite number, got {alpha!r}")
    for option, why in _UNSUPPORTED_OPTIONS.items():
        if _flag(raw, option, path):
            raise AdapterError(f"{path}: field {option!r} is set; not supported ({why})")
    for option in ("rank_pattern", "alpha_pattern"):
        value = raw.get(option)
        if value is not None and not isinstance(value, dict):
            raise AdapterError(f"{path}: field {option!r} must be an object, got {value!r}")
        if value:
            raise AdapterError(f"{path}: field {option!r} is non-empty; per-module ranks/alphas are not supported")
    if raw.get("modules_to_save"):
        raise AdapterError(
            f"{path}: field 'modules_to_save' is {raw['modules_to_save']!r}; fully trained "
            "modules are not supported (prime-rl's broadcast does not save them)"
        )
    targets = raw.get("target_modules")
    if isinstance(targets, str):
        targets = [targets]
    if targets is None:
        targets = []
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise AdapterError(f"{path}: field 'target_modules' must be a string or a list of strings, got {targets!r}")
    base = raw.get("base_model_name_or_path")
    if base is not None and not isinstance(base, str):
        raise AdapterError(f"{path}: field 'base_model_name_or_path' must be a string, got {base!r}")
    settings = LoraSettings(
        r=r,
        alpha=float(alpha),
        use_rslora=_flag(raw, "use_rslora", path),
        target_modules=tuple(targets),
        base_model=base or None,
        raw=raw,
    )
    if not math.isfinite(settings.scale):
        raise AdapterError(f"{path}: lora_alpha {alpha!r} / r {r} is not a finite scale; fix 'lora_alpha'")
    return settings


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
