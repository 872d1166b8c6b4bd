"""A tiny random Trinity-Mini (AFMoE) on CPU, and LoRA adapters written exactly as prime-rl writes them.

The model: 4 layers (2 dense, 2 MoE with 4 routed experts, top-2, 1 shared expert), muP on, sliding and
global attention, a byte-level tokenizer with a ChatML-style template that opens ``<think>``. Router
weights and expert biases are made non-zero (transformers initialises them to zero, which would route
every token to the same experts).

The adapter copies prime-rl ``559b447``: ``LoRAState.adapter_state_dict`` keys (``<module>.lora_A.weight``,
routed experts per expert as ``...experts.{e}.{gate,down,up}_proj``, no ``base_model.model.`` prefix, no
shared expert, no router), saved unsharded as ``adapter_model.safetensors`` with metadata ``format=pt``
(``utils/weights.save_state_dict(adapter=True)``), and ``save_lora_config``'s ``adapter_config.json``
(``target_modules`` = sorted suffixes of the LoRA'd modules, so ``experts`` is one of them).

Heavy fixtures call ``pytest.importorskip`` so the pure tests still run without torch.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

R, ALPHA = 4, 16.0
SCALE = ALPHA / R
LOGITS_TOL = 5e-5
"""A PEFT load is correct when its fp32 logits are within this of the reference (measured 2.6e-6 to 7.6e-6)."""
BASE_MODEL_NAME = "arcee-ai/Trinity-Mini"
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)
TINY = {
    "vocab_size": 259,  # 256 byte tokens + 3 specials
    "hidden_size": 32,
    "intermediate_size": 48,
    "moe_intermediate_size": 16,
    "num_hidden_layers": 4,
    "num_dense_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "num_shared_experts": 1,
    "route_scale": 2.0,
    "global_attn_every_n_layers": 2,
    "sliding_window": 8,
    "mup_enabled": True,
    "max_position_embeddings": 8192,
    "initializer_range": 0.1,
    "tie_word_embeddings": False,
}
# prime-rl's save_lora_config for AFMoE: sorted suffixes of every MultiLoRA module.
PRIME_RL_TARGET_MODULES = [
    "down_proj",
    "experts",
    "gate_proj",
    "k_proj",
    "o_proj",
    "q_proj",
    "up_proj",
    "v_proj",
]
PROBE_IDS = [[5, 17, 250, 3, 99, 42, 7, 128, 64, 200, 11, 31, 77, 150, 2, 180, 90, 33, 240, 1, 60, 120, 9, 45]]
_EXPERT = re.compile(r"^(?P<experts>.+\.experts)\.(?P<index>\d+)\.(?P<proj>gate|up|down)_proj$")


def prime_rl_modules(cfg: dict[str, int]) -> list[tuple[str, int, int]]:
    """(module name, out_features, in_features) of every module prime-rl LoRAs on AFMoE, in its order."""
    hidden, heads, kv, hd = (
        cfg["hidden_size"],
        cfg["num_attention_heads"],
        cfg["num_key_value_heads"],
        cfg["head_dim"],
    )
    modules = []
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}"
        modules += [
            (f"{p}.self_attn.q_proj", heads * hd, hidden),
            (f"{p}.self_attn.k_proj", kv * hd, hidden),
            (f"{p}.self_attn.v_proj", kv * hd, hidden),
            (f"{p}.self_attn.o_proj", hidden, heads * hd),
            (f"{p}.self_attn.gate_proj", heads * hd, hidden),
        ]
        if i < cfg["num_dense_layers"]:
            inter = cfg["intermediate_size"]
            modules += [
                (f"{p}.mlp.gate_proj", inter, hidden),
                (f"{p}.mlp.up_proj", inter, hidden),
                (f"{p}.mlp.down_proj", hidden, inter),
            ]
        else:
            moe = cfg["moe_intermediate_size"]
            for e in range(cfg["num_experts"]):  # MultiLoRAGroupedExperts.state_dict_for_adapter order
                modules += [
                    (f"{p}.mlp.experts.{e}.gate_proj", moe, hidden),
                    (f"{p}.mlp.experts.{e}.down_proj", hidden, moe),
                    (f"{p}.mlp.experts.{e}.up_proj", moe, hidden),
                ]
    return modules


_DTYPE_BYTES = {"F32": 4, "BF16": 2, "F16": 2}


def write_fake_safetensors(path: Path, tensors: dict[str, tuple[str, tuple[int, ...]]]) -> Path:
    """A valid safetensors file of zeros written by hand (no torch): 8-byte length, JSON header, data."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = _DTYPE_BYTES[dtype] * math.prod(shape)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
    return path


def make_lora_tensors(cfg: dict[str, int], *, seed: int = 1, rank: int = R) -> dict[str, Any]:
    """Random non-zero fp32 lora_A/lora_B for every prime-rl module, keyed as prime-rl keys them."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    tensors = {}
    for name, out_f, in_f in prime_rl_modules(cfg):
        tensors[f"{name}.lora_A.weight"] = torch.randn(rank, in_f, generator=gen) * 0.2
        tensors[f"{name}.lora_B.weight"] = torch.randn(out_f, rank, generator=gen) * 0.2
    return tensors


def write_adapter(
    directory: Path,
    tensors: dict[str, Any],
    *,
    r: int = R,
    alpha: float = ALPHA,
    prefix: str = "",
    target_modules: list[str] | None = None,
) -> Path:
    """Write ``tensors`` + adapter_config.json as prime-rl's filesystem broadcast does."""
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    save_file(
        {prefix + k: v.contiguous() for k, v in tensors.items()},
        str(directory / "adapter_model.safetensors"),
        metadata={"format": "pt"},
    )
    return write_config(directory, r=r, alpha=alpha, target_modules=target_modules)


def write_config(directory: Path, *, r: int = R, alpha: float = ALPHA, target_modules: list[str] | None = None) -> Path:
    """prime-rl's ``save_lora_config`` output (its keys, in its order)."""
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": BASE_MODEL_NAME,
        "r": r,
        "lora_alpha": alpha,
        "lora_dropout": 0.0,
        "bias": "none",
        "target_modules": PRIME_RL_TARGET_MODULES if target_modules is None else target_modules,
        "modules_to_save": None,
    }
    (directory / "adapter_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return directory


def make_tokenizer() -> Any:
    """A byte-level BPE tokenizer without merges (one token per byte) and a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIAL_TOKENS)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def apply_reference_deltas(model: Any, tensors: dict[str, Any], scale: float) -> None:
    """Add ``scale * B @ A`` to the in-memory weights directly (the test's own reference, not the merge code).

    Works on either expert layout: per-expert ``nn.Linear`` (transformers < 5.4) or fused 3D parameters.
    """
    import torch

    params = dict(model.named_parameters())
    with torch.no_grad():
        for key, lora_a in tensors.items():
            if not key.endswith(".lora_A.weight"):
                continue
            name = key.removeprefix("base_model.model.").removesuffix(".lora_A.weight")
            lora_b = tensors[key.replace("lora_A", "lora_B")]
            delta = scale * (lora_b.double() @ lora_a.double())
            if f"{name}.weight" in params:
                weight = params[f"{name}.weight"]
                weight.copy_((weight.double() + delta).to(weight.dtype))
                continue
            match = _EXPERT.match(name)
            e, proj = int(match["index"]), match["proj"]
            if proj == "down":
                target = params[f"{match['experts']}.down_proj"][e]
            else:
                fused = params[f"{match['experts']}.gate_up_proj"][e]
                half = fused.shape[0] // 2
                target = fused[:half] if proj == "gate" else fused[half:]
            target.copy_((target.double() + delta).to(target.dtype))


def naive_rewrite(source: Path, target: Path, *, prefix: bool, target_modules: list[str] | None = None) -> Path:
    """What a user would try on prime-rl's adapter: drop 'experts' from target_modules (``target_modules``, when
    given, replaces the list instead), and give the keys PEFT's ``base_model.model.`` prefix or not."""
    from safetensors.torch import load_file, save_file

    target.mkdir()
    config = json.loads((source / "adapter_config.json").read_text(encoding="utf-8"))
    if target_modules is None:
        target_modules = [t for t in config["target_modules"] if t != "experts"]
    config["target_modules"] = target_modules
    (target / "adapter_config.json").write_text(json.dumps(config), encoding="utf-8")
    tensors = load_file(str(source / "adapter_model.safetensors"))
    save_file(
        {("base_model.model." if prefix else "") + k: v for k, v in tensors.items()},
        str(target / "adapter_model.safetensors"),
    )
    return target


def logits(model: Any, ids: list[list[int]] | None = None) -> Any:
    """Float32 logits of ``model`` on the probe ids."""
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor(ids or PROBE_IDS)).logits.float()


def peft_at_least(peft: Any, version: str) -> bool:
    """Whether the installed PEFT is ``version`` or newer (what it does with prime-rl's adapter changed in 0.22)."""
    from packaging.version import Version

    return Version(peft.__version__) >= Version(version)


@pytest.fixture(scope="session")
def fake_safetensors() -> Callable[[Path, dict[str, tuple[str, tuple[int, ...]]]], Path]:
    """``write_fake_safetensors``, for the tests that must run without torch."""
    return write_fake_safetensors


@pytest.fixture
def fake_prime_rl_adapter(tmp_path: Path) -> Path:
    """Header-only (zero-valued) F32 adapter with prime-rl's keys and config for the tiny model, no torch."""
    directory = tmp_path / "step_7"
    directory.mkdir()
    spec = {}
    for name, out_f, in_f in prime_rl_modules(TINY):
        spec[f"{name}.lora_A.weight"] = ("F32", (R, in_f))
        spec[f"{name}.lora_B.weight"] = ("F32", (out_f, R))
    write_fake_safetensors(directory / "adapter_model.safetensors", spec)
    write_config(directory)
    return directory


@pytest.fixture(scope="session")
def heavy() -> dict[str, Any]:
    """torch, transformers (with AFMoE), peft and safetensors, or skip."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("transformers.models.afmoe", reason="this transformers has no native AFMoE (needs >= 5.0)")
    peft = pytest.importorskip("peft")
    pytest.importorskip("safetensors")
    return {"torch": torch, "transformers": transformers, "peft": peft}


@pytest.fixture(scope="session")
def tiny_cfg() -> dict[str, int]:
    return dict(TINY)


@pytest.fixture(scope="session")
def base_dir(heavy: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sharded fp32 checkpoint of the tiny model (hub per-expert layout) with its tokenizer."""
    torch = heavy["torch"]
    from transformers import AfmoeConfig, AfmoeForCausalLM

    torch.manual_seed(0)
    model = AfmoeForCausalLM(AfmoeConfig(**TINY)).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("router.gate.weight"):
                param.normal_(0.0, 0.5)
            elif name.endswith("expert_bias"):
                param.normal_(0.0, 0.1)
    directory = tmp_path_factory.mktemp("tiny-afmoe")
    model.save_pretrained(directory, max_shard_size="60KB")
    make_tokenizer().save_pretrained(directory)
    return directory


@pytest.fixture
def load_base(base_dir: Path) -> Callable[..., Any]:
    """Load a fresh copy of the tiny base model (fp32, eval mode)."""

    def load(directory: Path = base_dir) -> Any:
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_pretrained(str(directory), dtype="float32").eval()

    return load


@pytest.fixture(scope="session")
def lora_tensors(heavy: dict[str, Any], tiny_cfg: dict[str, int]) -> dict[str, Any]:
    return make_lora_tensors(tiny_cfg)


@pytest.fixture(scope="session")
def prime_rl_adapter(lora_tensors: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The adapter exactly as prime-rl writes it into broadcasts/step_N/."""
    return write_adapter(tmp_path_factory.mktemp("broadcasts") / "step_3", lora_tensors)


@pytest.fixture(scope="session")
def reference_logits(heavy: dict[str, Any], base_dir: Path, lora_tensors: dict[str, Any]) -> Any:
    """Logits of the base with the deltas applied in memory by the test itself."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(base_dir), dtype="float32").eval()
    apply_reference_deltas(model, lora_tensors, SCALE)
    return logits(model)


@pytest.fixture(scope="session")
def base_logits(heavy: dict[str, Any], base_dir: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return logits(AutoModelForCausalLM.from_pretrained(str(base_dir), dtype="float32").eval())


@pytest.fixture(scope="session")
def kit(heavy: dict[str, Any]) -> SimpleNamespace:
    """The helpers above, for tests (conftest modules are not importable by name)."""
    return SimpleNamespace(
        R=R,
        ALPHA=ALPHA,
        SCALE=SCALE,
        LOGITS_TOL=LOGITS_TOL,
        TINY=TINY,
        PROBE_IDS=PROBE_IDS,
        torch=heavy["torch"],
        prime_rl_modules=prime_rl_modules,
        make_lora_tensors=make_lora_tensors,
        write_adapter=write_adapter,
        apply_reference_deltas=apply_reference_deltas,
        naive_rewrite=naive_rewrite,
        logits=logits,
        make_tokenizer=make_tokenizer,
        peft_0_22=peft_at_least(heavy["peft"], "0.22"),
    )
