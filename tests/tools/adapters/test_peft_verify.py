"""The checks that a PEFT load took effect catch the silent failures they exist for (``peft_verify``)."""

from __future__ import annotations

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


def test_a_naive_peft_load_does_what_this_peft_and_transformers_do(
    load_base: Any,
    prime_rl_adapter: Path,
    reference_logits: Any,
    base_logits: Any,
    kit: SimpleNamespace,
    tmp_path: Path,
) -> None:
    """docs/adapters.md's table, for the installed pair: silent failures are caught, a correct load passes."""
    from peft import PeftModel

    base = load_base()
    layout = expert_layout(base)
    adapter_file = prime_rl_adapter / "adapter_model.safetensors"
    modules = collect_lora_modules(read_safetensors_header(adapter_file))
    if layout == "fused" and not kit.peft_0_22:
        # transformers >= 5.4, PEFT < 0.22: PEFT's v5 conversion turns every *gate/up/down_proj target into the
        # fused expert parameters, so the attention gate and dense-MLP LoRA are dropped without an error.
        naive = PeftModel.from_pretrained(base, str(kit.naive_rewrite(prime_rl_adapter, tmp_path / "n", prefix=True)))
        assert float((kit.logits(naive) - reference_logits).abs().max()) > 0.1
        with pytest.raises(
            AdapterNotAppliedError,
            match=r"model\.layers\.0\.mlp\.down_proj: not wrapped by a LoRA "
            r"layer \(and 9 more modules\)",
        ):
            verify_deltas(naive, modules, adapter_file, kit.SCALE)
    elif layout == "fused":
        # transformers >= 5.4, PEFT >= 0.22: the conversion keeps a target whose matches are all nn.Linear and
        # targets the fused expert parameters beside it, so the naive load is right, with or without the key
        # prefix, and the check passes it.
        for prefix in (False, True):
            rewritten = kit.naive_rewrite(prime_rl_adapter, tmp_path / f"prefix-{prefix}", prefix=prefix)
            naive = PeftModel.from_pretrained(load_base(), str(rewritten))
            assert float((kit.logits(naive) - reference_logits).abs().max()) <= kit.LOGITS_TOL
            checked, worst = verify_deltas(naive, modules, adapter_file, kit.SCALE)
            assert (checked, worst <= 1e-6) == (50, True)
    else:
        # transformers < 5.4: keys without the prefix load as a no-op.
        naive = PeftModel.from_pretrained(base, str(kit.naive_rewrite(prime_rl_adapter, tmp_path / "n", prefix=False)))
        assert logits_change(naive, kit.torch.tensor(kit.PROBE_IDS)) == 0.0
        assert float((kit.logits(naive) - base_logits).abs().max()) == 0.0
        with pytest.raises(AdapterNotAppliedError, match="PEFT delta differs from scale"):
            verify_deltas(naive, modules, adapter_file, kit.SCALE)


def test_lora_that_peft_left_out_is_caught_on_every_version(
    load_base: Any, prime_rl_adapter: Path, kit: SimpleNamespace, tmp_path: Path
) -> None:
    """The guarantee does not wait for a PEFT that drops LoRA: a load that leaves out part of the adapter (here
    all but q/k/v/o, as PEFT 0.21 left out the attention gate and dense MLPs) fails the check, naming the first
    module, even though the logits do change."""
    from peft import PeftModel

    adapter_file = prime_rl_adapter / "adapter_model.safetensors"
    modules = collect_lora_modules(read_safetensors_header(adapter_file))
    partial = kit.naive_rewrite(
        prime_rl_adapter, tmp_path / "qkvo", prefix=True, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]
    )
    model = PeftModel.from_pretrained(load_base(), str(partial))
    assert logits_change(model, kit.torch.tensor(kit.PROBE_IDS)) > 0.1
    with pytest.raises(
        AdapterNotAppliedError,
        match=r"model\.layers\.0\.mlp\.down_proj: not wrapped by a LoRA layer \(and 33 more modules\)",
    ):
        verify_deltas(model, modules, adapter_file, kit.SCALE)


def test_all_zero_lora_b_is_refused(
    load_base: Any, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    zero_b = {k: (v * 0 if "lora_B" in k else v) for k, v in lora_tensors.items()}
    adapter = kit.write_adapter(tmp_path / "step_0", zero_b)
    with pytest.raises(AdapterError, match="every lora_B tensor is zero, so the adapter is a no-op"):
        apply_adapter(load_base(), adapter)
