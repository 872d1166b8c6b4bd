"""The adapter config PEFT is given for the model at hand (``adapters.peft_config``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.peft_config import expert_layout, module_regex
from drugprot.tools.adapters.peft_loading import apply_adapter


def test_module_regex_generalises_indices() -> None:
    assert module_regex(["model.layers.2.mlp.experts.10.up_proj", "model.layers.3.mlp.experts.0.up_proj"]) == (
        r"(?:model\.layers\.\d+\.mlp\.experts\.\d+\.up_proj)"
    )


def test_partial_expert_lora_on_fused_experts_is_refused(
    load_base: Any, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    base = load_base()
    if expert_layout(base) != "fused":
        pytest.skip("experts are nn.Linear modules in this transformers: partial expert LoRA loads fine")
    partial = {k: v for k, v in lora_tensors.items() if ".experts.3.up_proj." not in k}
    adapter = kit.write_adapter(tmp_path / "partial", partial)
    with pytest.raises(AdapterError, match=r"lacks model\.layers\.2\.mlp\.experts\.3\.up_proj \(1 per-expert"):
        apply_adapter(base, adapter)
