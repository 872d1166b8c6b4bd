"""``drugprot adapter inspect|merge`` through the real ``drugprot`` entry point."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.tools.cli import main

# 4 layers x (q 4*(32+32) + k 4*(32+16) + v 4*(32+16) + o 4*(32+32) + gate 4*(32+32)) = 4608;
# 2 dense x 3 x 4*(32+48) = 1920; 2 MoE layers x 4 experts x 3 x 4*(32+16) = 4608.
TINY_LORA_PARAMETERS = 4608 + 1920 + 4608


def test_inspect_describes_a_prime_rl_adapter_without_torch(
    fake_prime_rl_adapter: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["adapter", "inspect", "--adapter", str(fake_prime_rl_adapter)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"adapter:        {fake_prime_rl_adapter}",
        "base model:     arcee-ai/Trinity-Mini",
        "rank r:         4",
        "lora_alpha:     16",
        "scale:          4 (alpha/r)",
        "target_modules: down_proj, experts, gate_proj, k_proj, o_proj, q_proj, up_proj, v_proj",
        "tensors:        100 (50 modules x lora_A/lora_B)",
        "modules:        attention 20, dense_mlp 6, routed_expert 24",
        f"parameters:     {TINY_LORA_PARAMETERS:,}",
        "dtypes:         F32",
        "key prefix:     (none)",
        "layers:         0-3",
        "expert modules: 12 per MoE layer",
        "note:           'experts' in target_modules: PEFT refuses this adapter as written; with "
        "peft >= 0.22 and transformers >= 5.4, removing 'experts' is enough, otherwise use "
        "`drugprot adapter merge` or drugprot.tools.adapters.peft_loading",
        "note:           prime-rl's default targets on Trinity-Mini give 11,686 modules; this adapter has 50",
    ]


def test_inspect_json(fake_prime_rl_adapter: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["adapter", "inspect", "--adapter", str(fake_prime_rl_adapter), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["r"], info["lora_alpha"], info["scale"], info["modules"], info["tensors"]) == (
        4,
        16.0,
        4.0,
        50,
        100,
    )
    assert info["by_kind"] == {"attention": 20, "dense_mlp": 6, "routed_expert": 24}
    assert info["base"] is None and info["matched_in_base"] is None


def test_inspect_reports_an_unreadable_adapter(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["adapter", "inspect", "--adapter", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"drugprot adapter: error: {tmp_path / 'adapter_config.json'}: no adapter config")


def test_inspect_checks_against_the_base(base_dir: Path, prime_rl_adapter: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["adapter", "inspect", "--adapter", str(prime_rl_adapter), "--base", str(base_dir)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"base check:     all 50 modules match {base_dir} (shapes agree)"
    )


def test_merge_command(
    base_dir: Path,
    prime_rl_adapter: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    kit: SimpleNamespace,
    reference_logits: Any,
) -> None:
    from transformers import AutoModelForCausalLM

    out = tmp_path / "merged"
    args = [
        "adapter",
        "merge",
        "--base",
        str(base_dir),
        "--adapter",
        str(prime_rl_adapter),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    shards = sorted(p.name for p in base_dir.glob("model-*.safetensors"))
    assert [line.split(":")[0] for line in lines[:-1]] == [f"wrote {s}" for s in shards]
    assert lines[-1] == (
        "merged 50 LoRA modules (100 adapter tensors, all matched; "
        "attention 20, dense_mlp 6, routed_expert 24) "
        f"at scale 4 into 50 base tensors; wrote {len(shards)} shards and copied 6 files to {out}"
    )
    model = AutoModelForCausalLM.from_pretrained(str(out), dtype="float32").eval()
    assert float((kit.logits(model) - reference_logits).abs().max()) <= 5e-5
    assert main(args) == 2  # out is not empty now
    assert (
        f"drugprot adapter: error: --out {out} is not empty (an earlier merge); pass --overwrite to replace it\n"
        in (capsys.readouterr().err)
    )


def test_merge_command_refuses_a_mismatched_adapter(
    base_dir: Path,
    lora_tensors: dict[str, Any],
    kit: SimpleNamespace,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    bad = dict(lora_tensors)
    bad["model.layers.1.self_attn.k_proj.lora_B.weight"] = kit.torch.ones(17, kit.R)
    adapter = kit.write_adapter(tmp_path / "bad", bad)
    code = main(["adapter", "merge", "--base", str(base_dir), "--adapter", str(adapter), "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert "'model.layers.1.self_attn.k_proj.lora_B.weight' @ 'model.layers.1.self_attn.k_proj.lora_A.weight'" in err
    assert "give shape [17, 32] but base weight model.layers.1.self_attn.k_proj.weight has shape [16, 32]" in err
    assert not (tmp_path / "o").exists()


def test_adapter_modules_import_without_torch() -> None:
    """``drugprot adapter inspect`` and ``import drugprot`` must not pull in torch/transformers/peft."""
    import subprocess
    import sys

    code = (
        "import sys, drugprot, drugprot.tools.adapters.cli, drugprot.tools.adapters.predict, "
        "drugprot.tools.adapters.merge, "
        "drugprot.tools.adapters.peft_loading\n"
        "print(sorted(m for m in ('torch', 'transformers', 'peft', 'safetensors') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


def test_inspect_refuses_a_base_index_that_names_a_shard_outside_the_base(
    fake_prime_rl_adapter: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    base = tmp_path / "base"
    base.mkdir()
    index = base / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"a.weight": "/etc/x.safetensors"}}), encoding="utf-8")
    assert main(["adapter", "inspect", "--adapter", str(fake_prime_rl_adapter), "--base", str(base)]) == 2
    assert capsys.readouterr().err == (
        f"drugprot adapter: error: {index}: weight_map['a.weight'] names the file '/etc/x.safetensors', which is an "
        "absolute path; "
        "a shard must be a plain file name in the base directory (like 'model-00001-of-00002.safetensors'). "
        "Fix the index or download the checkpoint again\n"
    )


def test_adapter_errors_are_drugprot_errors() -> None:
    from drugprot.core.errors import DrugprotError
    from drugprot.tools.adapters import AdapterError, AdapterNotAppliedError, MissingExtraError

    assert [issubclass(e, DrugprotError) for e in (AdapterError, AdapterNotAppliedError, MissingExtraError)] == [
        True,
        True,
        True,
    ]
