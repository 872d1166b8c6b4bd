"""The checks that a PEFT load took effect catch the silent failures they exist for (``peft_verify``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError, AdapterNotAppliedError
from drugprot.tools.adapters.layout import collect_lora_modules
from drugprot.tools.adapters.peft_config import expert_layout
from drugprot.tools.adapters.peft_loading import apply_adapter
from drugprot.tools.adapters.peft_verify import logits_change, verify_deltas
from drugprot.tools.adapters.safetensors_files import read_safetensors_header


def _naive_rewrite(source: Path, target: Path, *, prefix: bool) -> Path:
    """What a user would try: drop 'experts' from target_modules (and maybe add the key prefix)."""
    from safetensors.torch import load_file, save_file

    target.mkdir()
    config = json.loads((source / "adapter_config.json").read_text())
    config["target_modules"] = [t for t in config["target_modules"] if t != "experts"]
    (target / "adapter_config.json").write_text(json.dumps(config))
    tensors = load_file(str(source / "adapter_model.safetensors"))
    save_file(
        {("base_model.model." if prefix else "") + k: v for k, v in tensors.items()},
        str(target / "adapter_model.safetensors"),
    )
    return target


def test_silent_failures_of_a_naive_peft_load_are_caught(
    load_base: Any,
    prime_rl_adapter: Path,
    reference_logits: Any,
    base_logits: Any,
    kit: SimpleNamespace,
    tmp_path: Path,
) -> None:
    from peft import PeftModel

    base = load_base()
    layout = expert_layout(base)
    modules = collect_lora_modules(read_safetensors_header(prime_rl_adapter / "adapter_model.safetensors"))
    if layout == "fused":
        # transformers >= 5.4: PEFT's v5 conversion turns every *gate/up/down_proj target into the fused
        # expert parameters, so the attention gate and dense-MLP LoRA are dropped without an error.
        naive = PeftModel.from_pretrained(base, str(_naive_rewrite(prime_rl_adapter, tmp_path / "n", prefix=True)))
        assert float((kit.logits(naive) - reference_logits).abs().max()) > 0.1
        with pytest.raises(
            AdapterNotAppliedError,
            match=r"model\.layers\.0\.mlp\.down_proj: not wrapped by a LoRA "
            r"layer \(and 9 more modules\)",
        ):
            verify_deltas(naive, modules, prime_rl_adapter / "adapter_model.safetensors", kit.SCALE)
    else:
        # transformers < 5.4: keys without the prefix load as a no-op.
        naive = PeftModel.from_pretrained(base, str(_naive_rewrite(prime_rl_adapter, tmp_path / "n", prefix=False)))
        assert logits_change(naive, kit.torch.tensor(kit.PROBE_IDS)) == 0.0
        assert float((kit.logits(naive) - base_logits).abs().max()) == 0.0
        with pytest.raises(AdapterNotAppliedError, match="PEFT delta differs from scale"):
            verify_deltas(naive, modules, prime_rl_adapter / "adapter_model.safetensors", kit.SCALE)


def test_all_zero_lora_b_is_refused(
    load_base: Any, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    zero_b = {k: (v * 0 if "lora_B" in k else v) for k, v in lora_tensors.items()}
    adapter = kit.write_adapter(tmp_path / "step_0", zero_b)
    with pytest.raises(AdapterError, match="every lora_B tensor is zero, so the adapter is a no-op"):
        apply_adapter(load_base(), adapter)
