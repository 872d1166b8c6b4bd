"""The PEFT helper on the tiny AFMoE: it matches the reference, and catches the silent failures it exists for.

Tolerance: logits within ``conftest.LOGITS_TOL`` (5e-5) of the reference (fp32; measured 2.6e-6 with
transformers 5.24 + PEFT 0.21.2; 4.4e-6 with 5.17 + 0.21.2, 5.17 + 0.22.0 and 5.24 + 0.22.0 on torch 2.13 CPU;
PEFT computes ``x A^T B^T`` instead of a merged weight).
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.peft_config import expert_layout
from drugprot.tools.adapters.peft_loading import apply_adapter, load_model_with_adapter


def test_helper_loads_the_prime_rl_adapter_and_matches_the_reference(
    load_base: Any, prime_rl_adapter: Path, reference_logits: Any, kit: SimpleNamespace
) -> None:
    base = load_base()
    layout = expert_layout(base)
    model, report = apply_adapter(base, prime_rl_adapter)
    assert report.layout == layout
    assert report.modules_verified == 50
    assert report.max_delta_error <= 1e-6
    assert report.logits_max_abs_change > 0.5
    assert float((kit.logits(model) - reference_logits).abs().max()) <= kit.LOGITS_TOL
    if layout == "fused":  # transformers >= 5.4: linear gate/up/down go through target_parameters
        assert "model.layers.0.self_attn.gate_proj.weight" in report.peft_config["target_parameters"]
        assert "model.layers.2.mlp.experts.gate_up_proj" in report.peft_config["target_parameters"]
        assert report.peft_config["rank_pattern"] == {r".*\.gate_up_proj": 2 * kit.R}
    else:  # per-expert nn.Linear: one regex of exactly the adapted module names, never "experts" itself
        pattern = report.peft_config["target_modules"]
        assert re.fullmatch(pattern, "model.layers.2.mlp.experts.3.up_proj")
        assert re.fullmatch(pattern, "model.layers.0.self_attn.gate_proj")
        assert not re.fullmatch(pattern, "model.layers.2.mlp.experts")
        assert not re.fullmatch(pattern, "model.layers.2.mlp.shared_experts.up_proj")


def test_merge_in_memory_gives_a_plain_model_with_the_same_logits(
    load_base: Any, prime_rl_adapter: Path, reference_logits: Any, kit: SimpleNamespace
) -> None:
    from peft import PeftModel

    model, report = apply_adapter(load_base(), prime_rl_adapter, merge=True)
    assert report.merged and not isinstance(model, PeftModel)
    assert float((kit.logits(model) - reference_logits).abs().max()) <= kit.LOGITS_TOL


def test_peft_refuses_the_adapter_as_prime_rl_writes_it(
    load_base: Any, prime_rl_adapter: Path, kit: SimpleNamespace
) -> None:
    """What users hit first: 'experts' in target_modules names the AfmoeExperts block, which PEFT rejects.

    PEFT 0.22 on fused experts (transformers >= 5.4) checks first that no targeted module holds a targeted
    parameter; its v5 conversion targets the experts' ``gate_up_proj``/``down_proj``, which ``experts`` holds.
    Every other pair meets the module-type check, as in PEFT 0.21.
    """
    from peft import PeftModel

    base = load_base()
    if kit.peft_0_22 and expert_layout(base) == "fused":
        refusal = (
            r"Trying to wrap an `nn\.Parameter` of layer 'model\.layers\.2\.mlp\.experts' of type AfmoeExperts, "
            r"which is not a valid target\. Make sure that this layer is not also targeted with `target_modules`\."
        )
    else:
        refusal = r"(?s)Target module AfmoeExperts\(.*\) is not supported"
    with pytest.raises(ValueError, match=refusal):
        PeftModel.from_pretrained(base, str(prime_rl_adapter))


def test_load_without_adapter_returns_the_base(base_dir: Path, base_logits: Any, kit: SimpleNamespace) -> None:
    model, report = load_model_with_adapter(base_dir, None, dtype="float32")
    assert report is None
    assert float((kit.logits(model) - base_logits).abs().max()) == 0.0


def test_a_base_transformers_cannot_load_is_an_adapter_error_saying_what_to_do(
    heavy: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "no-such-architecture"}', encoding="utf-8")
    with pytest.raises(AdapterError) as info:
        load_model_with_adapter(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path}: transformers could not load the base model (ValueError: ")
    assert message.endswith(
        "); pass a local model directory with config.json and *.safetensors (hf download arcee-ai/Trinity-Mini "
        "--local-dir DIR), and --trust-remote-code on transformers < 5.0"
    )


def test_a_broken_adapter_is_reported_before_the_base_is_loaded(
    heavy: dict[str, Any], lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    adapter = kit.write_adapter(tmp_path / "nan", lora_tensors, alpha=float("nan"))
    with pytest.raises(AdapterError) as info:  # the base does not even exist: it was never opened
        load_model_with_adapter(tmp_path / "no-such-base", adapter)
    assert str(info.value) == (
        f"{adapter / 'adapter_config.json'}: the adapter config is not valid JSON (NaN is not a JSON number)"
    )


def test_a_peft_failure_is_an_adapter_error_saying_what_to_do(
    load_base: Any, kit: SimpleNamespace, tmp_path: Path
) -> None:
    torch = kit.torch
    ghost = {  # the model has no ghost_proj: PEFT finds no target module, whichever expert layout
        "model.layers.1.self_attn.ghost_proj.lora_A.weight": torch.ones(kit.R, 32),
        "model.layers.1.self_attn.ghost_proj.lora_B.weight": torch.ones(32, kit.R),
    }
    adapter = kit.write_adapter(tmp_path / "ghost", ghost)
    with pytest.raises(AdapterError) as info:
        apply_adapter(load_base(), adapter)
    message = str(info.value)
    cause = info.value.__cause__
    assert isinstance(cause, ValueError)  # peft 0.21 and 0.22: NoMatchingPeftModuleError, a ValueError
    assert message == (
        f"{adapter}: PEFT could not load the adapter rewritten for this model ({type(cause).__name__}: {cause}); "
        "merge it instead with `drugprot adapter merge` (docs/adapters.md)"
    )
    assert "ghost_proj" in str(cause)
