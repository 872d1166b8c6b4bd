"""``merge_adapter`` on the tiny AFMoE: merged logits equal a reference the test computes itself.

Reference: the base model loaded in memory with ``scale * B @ A`` added to its weights by
``conftest.apply_reference_deltas`` (float64 delta), independent of the merge code. Tolerances (fp32
model): logits within 5e-5 (measured 5.7e-6 with transformers 5.24 / torch 2.13 CPU); merged fp32 weights
within 1e-6 of the reference weights.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.merge import MERGE_RECORD, merge_adapter

LOGITS_TOL = 5e-5


def _load_tensors(directory: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    tensors = {}
    for shard in sorted(directory.glob("*.safetensors")):
        tensors.update(load_file(str(shard)))
    return tensors


@pytest.fixture(scope="module")
def merged(base_dir: Path, prime_rl_adapter: Path, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    out = tmp_path_factory.mktemp("merged")
    lines: list[str] = []
    report = merge_adapter(base_dir, prime_rl_adapter, out, overwrite=True, log=lines.append)
    return SimpleNamespace(out=out, report=report, lines=lines)


def test_merged_checkpoint_logits_equal_the_reference(
    merged: SimpleNamespace, kit: SimpleNamespace, reference_logits: Any, base_logits: Any
) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(merged.out), dtype="float32").eval()
    got = kit.logits(model)
    assert float((got - reference_logits).abs().max()) <= LOGITS_TOL
    assert float((got - base_logits).abs().max()) > 0.5  # the adapter matters on this model


def test_report_counts_every_prime_rl_module(merged: SimpleNamespace, kit: SimpleNamespace) -> None:
    report = merged.report
    # 4 layers x 5 attention + 2 dense x 3 MLP + 2 MoE layers x 4 experts x 3 = 50 modules, 100 tensors.
    assert len(kit.prime_rl_modules(kit.TINY)) == 50
    assert (report.adapter_tensors, report.matched_modules, report.base_tensors_changed) == (100, 50, 50)
    assert report.by_kind == {"attention": 20, "dense_mlp": 6, "routed_expert": 24}
    assert report.scale == 4.0
    assert report.shards_written == len(merged.lines) == len(list(merged.out.glob("model-*.safetensors")))
    assert sum(report.per_shard.values()) == 50


def test_output_is_a_plain_checkpoint_with_the_base_files(merged: SimpleNamespace, base_dir: Path) -> None:
    base_files = sorted(p.name for p in base_dir.iterdir())
    assert sorted(p.name for p in merged.out.iterdir()) == sorted([*base_files, MERGE_RECORD])
    for name in (
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "model.safetensors.index.json",
    ):
        assert (merged.out / name).read_bytes() == (base_dir / name).read_bytes()
    record = json.loads((merged.out / MERGE_RECORD).read_text())
    assert (record["r"], record["lora_alpha"], record["matched_modules"]) == (4, 16.0, 50)


def test_only_adapted_tensors_change_and_dtypes_are_kept(
    merged: SimpleNamespace, base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace
) -> None:
    base, out = _load_tensors(base_dir), _load_tensors(merged.out)
    assert sorted(base) == sorted(out)
    adapted = {k.removesuffix(".lora_A.weight") + ".weight" for k in lora_tensors if k.endswith("lora_A.weight")}
    for key, before in base.items():
        assert out[key].dtype == before.dtype, key
        if key in adapted:
            a = lora_tensors[key.removesuffix(".weight") + ".lora_A.weight"].double()
            b = lora_tensors[key.removesuffix(".weight") + ".lora_B.weight"].double()
            expected = before.double() + kit.SCALE * (b @ a)
            assert float((out[key].double() - expected).abs().max()) <= 1e-6, key
        else:
            assert kit.torch.equal(out[key], before), key  # router, shared expert, norms, embeddings, lm_head


def test_prefixed_keys_merge_to_the_same_bytes(
    merged: SimpleNamespace,
    base_dir: Path,
    lora_tensors: dict[str, Any],
    kit: SimpleNamespace,
    tmp_path: Path,
) -> None:
    adapter = kit.write_adapter(
        tmp_path / "peft_style",
        lora_tensors,
        prefix="base_model.model.",
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    report = merge_adapter(base_dir, adapter, tmp_path / "out")
    assert report.matched_modules == 50
    for shard in merged.out.glob("model-*.safetensors"):
        assert (tmp_path / "out" / shard.name).read_bytes() == shard.read_bytes()


def test_bf16_base_accumulates_in_fp32_and_stays_bf16(
    base_dir: Path, prime_rl_adapter: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    from safetensors.torch import save_file

    torch = kit.torch
    bf16_dir = tmp_path / "bf16"
    bf16_dir.mkdir()
    base = {k: v.to(torch.bfloat16) for k, v in _load_tensors(base_dir).items()}
    save_file(base, str(bf16_dir / "model.safetensors"), metadata={"format": "pt"})
    (bf16_dir / "config.json").write_bytes((base_dir / "config.json").read_bytes())
    report = merge_adapter(bf16_dir, prime_rl_adapter, tmp_path / "out")
    out = _load_tensors(tmp_path / "out")
    assert report.shards_written == 1
    assert {t.dtype for t in out.values()} == {torch.bfloat16}
    key = "model.layers.2.mlp.experts.1.up_proj.weight"
    a, b = (
        lora_tensors[key.replace("weight", "lora_A.weight")],
        lora_tensors[key.replace("weight", "lora_B.weight")],
    )
    fp32_then_cast = (base[key].float() + kit.SCALE * (b @ a)).to(torch.bfloat16)
    # One rounding (fp32 sum cast once): equal to the test's own fp32 computation up to 1 bf16 ulp.
    ulp = fp32_then_cast.float().abs() * 2.0**-7
    assert bool(((out[key].float() - fp32_then_cast.float()).abs() <= ulp).all())


def test_fused_expert_base_gets_per_expert_deltas_in_the_right_rows(
    base_dir: Path, prime_rl_adapter: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    from safetensors.torch import save_file

    torch, cfg = kit.torch, kit.TINY
    per_expert = _load_tensors(base_dir)
    fused: dict[str, Any] = {}
    for key, value in per_expert.items():
        if ".mlp.experts." not in key:
            fused[key] = value
    for layer in range(cfg["num_dense_layers"], cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}.mlp.experts"
        experts = range(cfg["num_experts"])
        fused[f"{p}.gate_up_proj"] = torch.stack(
            [
                torch.cat([per_expert[f"{p}.{e}.gate_proj.weight"], per_expert[f"{p}.{e}.up_proj.weight"]])
                for e in experts
            ]
        )
        fused[f"{p}.down_proj"] = torch.stack([per_expert[f"{p}.{e}.down_proj.weight"] for e in experts])
    fused_dir = tmp_path / "fused"
    fused_dir.mkdir()
    save_file(fused, str(fused_dir / "model.safetensors"), metadata={"format": "pt"})
    report = merge_adapter(fused_dir, prime_rl_adapter, tmp_path / "out")
    assert (report.matched_modules, report.base_tensors_changed) == (50, 26 + 4)  # 26 2D weights + 2x2 fused
    out = _load_tensors(tmp_path / "out")
    inter = cfg["moe_intermediate_size"]
    for e, (proj, rows) in ((1, ("gate_proj", slice(0, inter))), (3, ("up_proj", slice(inter, 2 * inter)))):
        base_rows = fused["model.layers.3.mlp.experts.gate_up_proj"][e, rows]
        a = lora_tensors[f"model.layers.3.mlp.experts.{e}.{proj}.lora_A.weight"]
        b = lora_tensors[f"model.layers.3.mlp.experts.{e}.{proj}.lora_B.weight"]
        got = out["model.layers.3.mlp.experts.gate_up_proj"][e, rows]
        assert float((got - (base_rows + kit.SCALE * (b @ a))).abs().max()) <= 1e-6
    down = out["model.layers.2.mlp.experts.down_proj"][2]
    a = lora_tensors["model.layers.2.mlp.experts.2.down_proj.lora_A.weight"]
    b = lora_tensors["model.layers.2.mlp.experts.2.down_proj.lora_B.weight"]
    expected = fused["model.layers.2.mlp.experts.down_proj"][2] + kit.SCALE * (b @ a)
    assert float((down - expected).abs().max()) <= 1e-6


def _assert_nothing_written(out: Path) -> None:
    assert not out.exists() or not any(out.iterdir())


def test_wrong_shape_is_refused_naming_the_key(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    bad = dict(lora_tensors)
    key = "model.layers.3.mlp.experts.2.down_proj.lora_B.weight"
    bad[key] = kit.torch.ones(kit.TINY["hidden_size"] + 1, kit.R)
    adapter = kit.write_adapter(tmp_path / "bad", bad)
    with pytest.raises(
        AdapterError,
        match=f"adapter tensors '{key}' @ .* give shape \\[33, 16\\] but base weight "
        "model.layers.3.mlp.experts.2.down_proj.weight has shape \\[32, 16\\]",
    ):
        merge_adapter(base_dir, adapter, tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_key_matching_nothing_is_refused_naming_the_key(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    bad = dict(lora_tensors)
    bad["model.layers.0.mlp.experts.0.gate_proj.lora_A.weight"] = kit.torch.ones(kit.R, 32)  # layer 0 is dense
    bad["model.layers.0.mlp.experts.0.gate_proj.lora_B.weight"] = kit.torch.ones(16, kit.R)
    adapter = kit.write_adapter(tmp_path / "bad", bad)
    with pytest.raises(
        AdapterError,
        match="adapter tensor 'model.layers.0.mlp.experts.0.gate_proj.lora_A.weight' matches no base weight",
    ):
        merge_adapter(base_dir, adapter, tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_rank_differing_from_the_config_is_refused(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    adapter = kit.write_adapter(tmp_path / "r8", lora_tensors, r=8)
    with pytest.raises(AdapterError, match="has rank 4 but adapter_config.json says r=8"):
        merge_adapter(base_dir, adapter, tmp_path / "out")


# --- Failures: nothing is written outside --out, and --out holds the old merge or the whole new one. ---


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` -> its bytes (None for a directory): the file system state to compare."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


@pytest.fixture
def base_copy(base_dir: Path, tmp_path: Path) -> Path:
    """The tiny sharded base, copied so that a test may tamper with it (and check nothing else changed)."""
    return Path(shutil.copytree(base_dir, tmp_path / "base"))


VICTIM = "model-00001-of-00005.safetensors"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../x.safetensors", "has a directory part"),
        ("sub/x.safetensors", "has a directory part"),
        ("../base/" + VICTIM, "has a directory part"),  # from --out, the base's own shard
        ("BASE/" + VICTIM, "is an absolute path"),  # the base's own shard, by absolute path
    ],
)
def test_crafted_shard_names_in_the_index_are_refused_before_anything_is_written(
    base_copy: Path, prime_rl_adapter: Path, tmp_path: Path, name: str, reason: str
) -> None:
    name = name.replace("BASE", str(base_copy))
    # Each crafted name points at a real copy of the shard, so a merge that followed it would succeed.
    (base_copy / "sub").mkdir()
    shutil.copyfile(base_copy / VICTIM, base_copy / "sub" / "x.safetensors")
    shutil.copyfile(base_copy / VICTIM, tmp_path / "x.safetensors")
    index_path = base_copy / "model.safetensors.index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    index["weight_map"] = {k: name if v == VICTIM else v for k, v in index["weight_map"].items()}
    index_path.write_text(json.dumps(index), encoding="utf-8")
    first_key = next(k for k, v in index["weight_map"].items() if v == name)
    before = tree(tmp_path)
    with pytest.raises(AdapterError) as info:
        merge_adapter(base_copy, prime_rl_adapter, tmp_path / "out")
    assert str(info.value) == (
        f"{index_path}: weight_map[{first_key!r}] names the file {name!r}, which {reason}; a shard must be a "
        "plain file name in the base directory (like 'model-00001-of-00002.safetensors'). Fix the index or "
        "download the checkpoint again"
    )
    assert tree(tmp_path) == before  # no out, no staging directory, every byte of the base unchanged


def test_a_targeted_base_tensor_of_a_non_float_dtype_is_refused_before_anything_is_written(
    base_dir: Path, prime_rl_adapter: Path, kit: SimpleNamespace, tmp_path: Path
) -> None:
    from safetensors.torch import save_file

    base = tmp_path / "int_base"
    base.mkdir()
    tensors = _load_tensors(base_dir)
    tensors["model.layers.1.self_attn.v_proj.weight"] = tensors["model.layers.1.self_attn.v_proj.weight"].to(
        kit.torch.int32
    )
    save_file(tensors, str(base / "model.safetensors"), metadata={"format": "pt"})
    before = tree(tmp_path)
    with pytest.raises(AdapterError) as info:
        merge_adapter(base, prime_rl_adapter, tmp_path / "out")
    assert str(info.value) == (
        f"{prime_rl_adapter / 'adapter_model.safetensors'}: base weight model.layers.1.self_attn.v_proj.weight "
        "of adapter tensor 'model.layers.1.self_attn.v_proj.lora_A.weight' has dtype I32; a LoRA delta can "
        "only be added to F32, BF16, F16, F64 weights (dequantize the base first); nothing was written"
    )
    assert tree(tmp_path) == before


def test_nan_lora_alpha_is_refused_before_anything_is_written(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    adapter = kit.write_adapter(tmp_path / "nan", lora_tensors, alpha=float("nan"))  # json.dumps writes NaN
    assert '"lora_alpha": NaN' in (adapter / "adapter_config.json").read_text(encoding="utf-8")
    before = tree(tmp_path)
    with pytest.raises(AdapterError) as info:
        merge_adapter(base_dir, adapter, tmp_path / "out")
    assert str(info.value) == (
        f"{adapter / 'adapter_config.json'}: the adapter config is not valid JSON (NaN is not a JSON number)"
    )
    assert tree(tmp_path) == before


def test_nan_in_the_adapter_weights_is_refused_before_anything_is_written(
    base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    bad = dict(lora_tensors)
    key = "model.layers.2.mlp.experts.3.up_proj.lora_B.weight"
    bad[key] = bad[key].clone()
    bad[key][5, 1] = float("nan")
    adapter = kit.write_adapter(tmp_path / "nan_values", bad)
    before = tree(tmp_path)
    with pytest.raises(AdapterError) as info:
        merge_adapter(base_dir, adapter, tmp_path / "out")
    assert str(info.value) == f"{adapter / 'adapter_model.safetensors'}: tensor {key!r} holds NaN or infinite values"
    assert tree(tmp_path) == before


def test_truncated_shard_data_is_refused_before_anything_is_written(
    base_copy: Path, prime_rl_adapter: Path, tmp_path: Path
) -> None:
    shard = base_copy / "model-00005-of-00005.safetensors"
    raw = shard.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    last = max((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][1])
    end = header[last]["data_offsets"][1]
    shard.write_bytes(raw[:-4])  # e.g. an interrupted download
    before = tree(tmp_path)
    with pytest.raises(AdapterError) as info:
        merge_adapter(base_copy, prime_rl_adapter, tmp_path / "out")
    assert str(info.value) == (
        f"{shard}: tensor {last!r} ends at byte {end} of the data but the file holds only {end - 4}; the file "
        "is truncated, copy or download it again"
    )
    assert tree(tmp_path) == before


def test_non_utf8_adapter_config_is_refused(base_dir: Path, prime_rl_adapter: Path, tmp_path: Path) -> None:
    adapter = Path(shutil.copytree(prime_rl_adapter, tmp_path / "latin1"))
    text = (adapter / "adapter_config.json").read_text(encoding="utf-8")
    raw = text.replace("arcee-ai/Trinity-Mini", "Trinity-Mini caf\u00e9").encode("latin-1")
    (adapter / "adapter_config.json").write_bytes(raw)
    before = tree(tmp_path)
    with pytest.raises(AdapterError) as info:
        merge_adapter(base_dir, adapter, tmp_path / "out")
    assert str(info.value) == (
        f"{adapter / 'adapter_config.json'}: the adapter config is not UTF-8 text (byte {raw.index(0xE9)}); "
        "re-save it as UTF-8"
    )
    assert tree(tmp_path) == before


@pytest.fixture
def earlier_merge(base_dir: Path, prime_rl_adapter: Path, tmp_path: Path) -> Path:
    """A complete merge in ``tmp_path/out``, as a user would have from an earlier run."""
    out = tmp_path / "out"
    merge_adapter(base_dir, prime_rl_adapter, out)
    assert (out / MERGE_RECORD).is_file()
    return out


def test_overwrite_with_a_merge_that_fails_its_checks_keeps_the_earlier_merge(
    earlier_merge: Path, base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    bad = dict(lora_tensors)
    bad["model.layers.0.self_attn.q_proj.lora_B.weight"] = kit.torch.ones(31, kit.R)
    adapter = kit.write_adapter(tmp_path / "bad", bad)
    before = tree(tmp_path)
    with pytest.raises(AdapterError, match=r"give shape \[31, 32\]"):
        merge_adapter(base_dir, adapter, earlier_merge, overwrite=True)
    assert tree(tmp_path) == before


def test_overwrite_interrupted_while_writing_keeps_the_earlier_merge_and_leaves_nothing_half_written(
    earlier_merge: Path, base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    adapter = kit.write_adapter(tmp_path / "other", lora_tensors, alpha=8.0)  # would change every shard
    before = tree(tmp_path)
    written: list[str] = []

    def interrupt_after_two_shards(line: str) -> None:
        written.append(line)
        if len(written) == 2:
            raise KeyboardInterrupt  # Ctrl-C with two new shards on disk

    with pytest.raises(KeyboardInterrupt):
        merge_adapter(base_dir, adapter, earlier_merge, overwrite=True, log=interrupt_after_two_shards)
    assert len(written) == 2
    assert tree(tmp_path) == before


def test_overwrite_on_a_full_disk_keeps_the_earlier_merge(
    earlier_merge: Path, base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    """A real write failure: the merge runs with a 20 kB file size limit (EFBIG, as on a full disk)."""
    adapter = kit.write_adapter(tmp_path / "other", lora_tensors, alpha=8.0)
    before = tree(tmp_path)
    code = (
        "import resource, signal, sys\n"
        "from drugprot.tools.cli import main\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = ["adapter", "merge", "--base", str(base_dir), "--adapter", str(adapter), "--out", str(earlier_merge)]
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--overwrite", "--quiet"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2, done.stderr  # the exit-code convention: 2 refused or failed
    assert done.stdout == ""
    assert done.stderr.startswith("drugprot adapter: error: writing the merged checkpoint failed (")
    assert done.stderr.endswith(f"); --out {earlier_merge} was left as it was\n")
    assert tree(tmp_path) == before


def test_overwrite_replaces_an_earlier_merge_as_a_whole(
    earlier_merge: Path, base_dir: Path, lora_tensors: dict[str, Any], kit: SimpleNamespace, tmp_path: Path
) -> None:
    (earlier_merge / "model-00001-of-00009.safetensors").write_bytes(b"a shard of an older layout")
    adapter = kit.write_adapter(tmp_path / "other", lora_tensors, alpha=8.0)
    merge_adapter(base_dir, adapter, tmp_path / "fresh")
    merge_adapter(base_dir, adapter, earlier_merge, overwrite=True)
    assert tree(earlier_merge) == tree(tmp_path / "fresh")  # the stale shard is gone with the old merge
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh", "other", "out"]  # nothing hidden left


def test_a_non_empty_directory_that_is_not_a_merge_is_refused_even_with_overwrite(
    base_dir: Path, prime_rl_adapter: Path, tmp_path: Path
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    before = tree(tmp_path)
    for overwrite in (False, True):
        with pytest.raises(AdapterError) as info:
            merge_adapter(base_dir, prime_rl_adapter, tmp_path / "out", overwrite=overwrite)
        assert str(info.value) == (
            f"--out {tmp_path / 'out'} is not empty and holds no {MERGE_RECORD}, so it is not an earlier merge; "
            "--overwrite only replaces an earlier merge. Choose a new or empty directory"
        )
    assert tree(tmp_path) == before


def test_base_adapter_or_a_directory_containing_them_is_refused_as_out(
    base_copy: Path, prime_rl_adapter: Path, tmp_path: Path
) -> None:
    before = tree(tmp_path)
    with pytest.raises(AdapterError, match="is the base directory"):
        merge_adapter(base_copy, prime_rl_adapter, base_copy, overwrite=True)
    with pytest.raises(AdapterError, match=f"^--out {tmp_path} contains the base directory; write the merged"):
        merge_adapter(base_copy, prime_rl_adapter, tmp_path, overwrite=True)
    with pytest.raises(AdapterError, match="is the adapter directory"):
        merge_adapter(base_copy, prime_rl_adapter, prime_rl_adapter, overwrite=True)
    assert tree(tmp_path) == before
