"""Trinity-Mini's trainer model for ``bench.trainer_step``: prime-rl's own AFMoE stack, or transformers + PEFT.

Two builders, both from a config dict (no download, random weights):

- ``build_prime_rl``: prime-rl's ``AfmoeForCausalLM`` (``src/prime_rl/trainer/models/afmoe``), its fused LM head
  (``inject_prime_lm_head``), its LoRA (``apply_lora_to_model``: ``MultiLoRALinear`` / ``MultiLoRAGroupedExperts``),
  the fp32 router, full activation checkpointing (``checkpoint_wrapper``) and FSDP2 with prime-rl's
  ``MixedPrecisionPolicy`` (bf16 compute, fp32 reduce), in the order of ``trainer/model.py setup_model``. prime-rl's
  sources come from an install or from ``--prime-rl-src`` (a checkout's ``src``); where a piece is missing the
  builder says which in ``substitutions``.
- ``build_hf``: transformers' ``AfmoeForCausalLM`` with PEFT LoRA (the fallback; not prime-rl's layout).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Trinity-Mini's config.json values (arcee-ai/Trinity-Mini; the project's notes, trinity-mini.md): 26.12B parameters.
TRINITY_MINI: dict[str, Any] = {
    "vocab_size": 200192,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "moe_intermediate_size": 1024,
    "num_hidden_layers": 32,
    "num_dense_layers": 2,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_shared_experts": 1,
    "score_func": "sigmoid",
    "route_norm": True,
    "route_scale": 2.826,
    "global_attn_every_n_layers": 4,
    "sliding_window": 2048,
    "mup_enabled": True,
    "max_position_embeddings": 131072,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
}
# The same architecture at toy size (CPU tests): every kind of layer, 4 experts.
TINY: dict[str, Any] = {
    **TRINITY_MINI,
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "sliding_window": 16,
    "max_position_embeddings": 4096,
}


def with_layers(cfg: dict[str, Any], layers: int | None) -> dict[str, Any]:
    """``cfg`` cut to its first ``layers`` decoder layers (None: as it is), every other dimension unchanged. The
    first ``num_dense_layers`` stay dense and the rest MoE, as in the full model, and the attention pattern (one
    global layer in ``global_attn_every_n_layers``) is the full model's, cut: what scales with depth scales."""
    full = cfg["num_hidden_layers"]
    if layers is None:
        return dict(cfg)
    if not 1 <= layers <= full:
        raise ValueError(f"layers must be in [1, {full}] (the model's depth), got {layers}")
    return {**cfg, "num_hidden_layers": layers, "num_dense_layers": min(cfg["num_dense_layers"], layers)}


# The recipe's LoRA (configs/drugprot.toml [trainer.model.lora]).
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "experts"]


@dataclass
class Built:
    """A model ready for the step, and what the bench must report about how it was built."""

    model: Any
    impl: str
    attention: str
    trainable: list[Any]
    substitutions: list[str] = field(default_factory=list)
    prime_rl: bool = False


def _bare_package(name: str, path: Path) -> None:
    """Register ``name`` as a package rooted at ``path`` without running its ``__init__`` (whose imports pull in
    every model of the library); submodules then import from ``path`` as usual."""
    if name in sys.modules:
        return
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    sys.modules[name] = module


def _configs_stub() -> types.ModuleType:
    """``prime_rl.configs.trainer`` holds pydantic schemas that pull in verifiers and renderers; the model code
    imports three names from it. Stand-ins with prime-rl 559b447's field defaults."""
    module = types.ModuleType("prime_rl.configs.trainer")

    @dataclass
    class LoRAConfig:
        rank: int = 16
        alpha: float = 32.0
        dropout: float = 0.0
        target_modules: list[str] = field(default_factory=lambda: list(LORA_TARGETS))
        modules_to_save: list[str] = field(default_factory=list)

    @dataclass
    class ActivationOffloadingConfig:
        pin_memory: bool = True
        max_inflight_activations: int = 5

    module.LoRAConfig = LoRAConfig  # type: ignore[attr-defined]
    module.ActivationOffloadingConfig = ActivationOffloadingConfig  # type: ignore[attr-defined]
    module.EPCommBackend = str  # type: ignore[attr-defined]
    module.ModelConfig = object  # type: ignore[attr-defined]  # a type hint of trainer/parallel_dims.py only
    return module


def prepare_prime_rl(src: str | None) -> list[str]:
    """Make prime-rl's trainer modules importable; return what had to be substituted."""
    notes: list[str] = []
    if src:
        sys.path.insert(0, str(Path(src).resolve()))
    root = importlib.util.find_spec("prime_rl")
    if root is None:
        raise ImportError("prime_rl is not importable: install prime-rl or pass --prime-rl-src CHECKOUT/src")
    base = Path(next(iter(root.submodule_search_locations)))
    _bare_package("prime_rl.trainer.models", base / "trainer" / "models")
    _bare_package("prime_rl.trainer.optim", base / "trainer" / "optim")  # its __init__ imports dion (Muon)
    try:
        importlib.import_module("prime_rl.configs.trainer")
    except ImportError:
        sys.modules["prime_rl.configs"] = sys.modules.get("prime_rl.configs") or types.ModuleType("prime_rl.configs")
        sys.modules["prime_rl.configs.trainer"] = _configs_stub()
        notes.append("prime_rl.configs.trainer (pydantic schema package) replaced by dataclasses with its defaults")
    try:
        importlib.import_module("torchtitan.distributed.expert_parallel")
    except ImportError:
        tt = Path(src or ".").resolve().parent / "torchtitan"  # a torchtitan checkout's package beside src
        for name in ["", ".distributed", ".experiments", ".experiments.kernels", ".experiments.kernels.moe"]:
            _bare_package("torchtitan" + name, tt.joinpath(*name.split(".")[1:]))
        importlib.import_module("torchtitan.distributed.expert_parallel")
        notes.append("torchtitan 23e4dfc: only distributed/expert_parallel.py and kernels/moe/indices.py loaded")
    return notes


def _flash_attention() -> tuple[str | None, str]:
    """The flash-attention prime-rl would pick on this GPU (``resolve_auto_attn``: FA3 on Hopper), if installed."""
    for module, impl in [("flash_attn_interface", "flash_attention_3"), ("flash_attn", "flash_attention_2")]:
        if importlib.util.find_spec(module) is not None:
            return impl, module
    return None, "none"


def _sdpa_varlen(self: Any, q: Any, k: Any, v: Any, cu_seqlens: Any, max_seqlen: Any) -> Any:
    """Stand-in for flash-attention's varlen call: causal (and sliding-window) attention per packed sequence through
    torch's scaled_dot_product_attention. Same inputs and output as ``AfmoeFlashAttention._compute_attention``."""
    import torch
    import torch.nn.functional as F

    window = getattr(self, "sliding_window", None)
    rep = q.shape[1] // k.shape[1]  # GQA: repeat kv heads so the memory-efficient kernels take a mask
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    bounds = cu_seqlens.tolist()
    outs = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        qs, ks, vs = (t[start:end].transpose(0, 1).unsqueeze(0) for t in (q, k, v))
        if window is None:
            o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True)
        else:
            i = torch.arange(end - start, device=q.device)
            mask = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < window)
            o = F.scaled_dot_product_attention(qs, ks, vs, attn_mask=mask)
        outs.append(o.squeeze(0).transpose(0, 1))
    return torch.cat(outs, dim=0)


def _prime_rl_afmoe(
    cfg: dict[str, Any], *, device: str, optimization_dtype: str, lm_head_chunk: int | None, src: str | None
) -> tuple[Any, Any, str, list[str]]:
    """prime-rl's AFMoE with its LM head, LoRA and fp32 routers (``setup_model`` up to expert parallelism):
    (model, LoRA config, attention, substitutions)."""
    import torch

    notes = prepare_prime_rl(src)
    from prime_rl.trainer import lora as prime_lora
    from prime_rl.trainer.models import afmoe, base
    from prime_rl.trainer.models.layers import moe
    from prime_rl.trainer.models.layers.lm_head import inject_prime_lm_head

    sys.modules["prime_rl.trainer.models"].PreTrainedModelPrimeRL = base.PreTrainedModelPrimeRL  # type: ignore[attr-defined]
    impl, module = _flash_attention()
    if impl is None:
        impl = "flash_attention_3"  # what resolve_auto_attn picks on Hopper; its kernel is swapped below
        afmoe.modeling_afmoe.AfmoeFlashAttention._compute_attention = _sdpa_varlen
        afmoe.modeling_afmoe.AfmoePreTrainedModel._check_and_adjust_attn_implementation = (
            lambda self, attn, is_init_check=False, **_: attn
        )
        notes.append("flash-attention not installed: AfmoeFlashAttention's varlen kernel replaced by torch SDPA")
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[optimization_dtype]
    config = afmoe.AfmoeConfig(**cfg)
    config._attn_implementation = impl
    config.use_cache = False
    config.pad_token_id = None  # get_model sets it when the config lacks one (transformers 5 moved it out)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = afmoe.AfmoeForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    inject_prime_lm_head(model, chunk_size=lm_head_chunk)
    lora_cfg = sys.modules["prime_rl.configs.trainer"].LoRAConfig(
        rank=16, alpha=64.0, dropout=0.0, target_modules=list(LORA_TARGETS), modules_to_save=[]
    )
    prime_lora.apply_lora_to_model(model, lora_cfg)
    for layer in model.model.layers:  # trainer/model.py apply_fp32_moe_router (moe_router_dtype = "float32")
        if isinstance(layer.mlp, moe.MoE):
            layer.mlp.router.to(torch.float32)
            layer.mlp.router.fp32_gate = True
    return model, lora_cfg, impl if module != "none" else "torch SDPA", notes


def _checkpoint_and_compile(model: Any, compile_layers: bool) -> None:
    """apply_ac (mode "full", freq 1), then apply_compile: prime-rl's order is AC -> compile -> FSDP."""
    import torch
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

    for name, block in list(model.model.layers.named_children()):
        model.model.layers.register_module(name, checkpoint_wrapper(block, preserve_rng_state=False))
    if compile_layers:
        torch._dynamo.config.capture_scalar_outputs = True
        for block in model.model.layers:
            block.compile(fullgraph=False)


def build_prime_rl(
    cfg: dict[str, Any],
    *,
    device: str,
    optimization_dtype: str,
    lm_head_chunk: int | None,
    src: str | None,
    compile_layers: bool = False,
) -> Built:
    """One process: the model built on the GPU, FSDP2 over a 1-rank group, no expert parallelism."""
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    model, _, attention, notes = _prime_rl_afmoe(
        cfg, device=device, optimization_dtype=optimization_dtype, lm_head_chunk=lm_head_chunk, src=src
    )
    from prime_rl.trainer import lora as prime_lora
    from prime_rl.trainer.models.layers import moe

    _checkpoint_and_compile(model, compile_layers)
    if device == "cuda":
        if not dist.is_initialized():
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", rank=0, world_size=1)
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        fp32 = MixedPrecisionPolicy(param_dtype=torch.float32, reduce_dtype=torch.float32)
        for block in model.model.layers:  # setup_fsdp, one rank, no EP
            if isinstance(getattr(block, "mlp", None), moe.MoE):
                fully_shard(block.mlp.router, mp_policy=fp32, reshard_after_forward=True)
            fully_shard(block, mp_policy=mp, reshard_after_forward=True)
        fully_shard(model.model.embed_tokens, mp_policy=mp, reshard_after_forward=True)
        fully_shard([model.lm_head, model.model.norm], mp_policy=mp, reshard_after_forward=False)
        fully_shard(model, mp_policy=mp, reshard_after_forward=True)
    else:
        notes.append("CPU: no FSDP (bf16 mixed precision is FSDP's), parameters compute in their own dtype")
    adapter = prime_lora.get_lora_state().named_adapter_parameters()
    return Built(model, "prime-rl", attention, [p for _, p in adapter], notes, True)


def _random_init(model: Any) -> None:
    """Values for a model that ``to_empty`` left uninitialised (random weights, as the one-process build has):
    matrices N(0, 0.02), vectors (norms, biases) 1, buffers 0, then the model's own ``init_buffers_post_meta``
    (rotary frequencies). Each rank fills its own shard."""
    import torch

    with torch.no_grad():
        for param in model.parameters():
            local = param.to_local() if hasattr(param, "to_local") else param
            local.normal_(0.0, 0.02) if local.dim() > 1 else local.fill_(1.0)
        for buffer in model.buffers():
            local = buffer.to_local() if hasattr(buffer, "to_local") else buffer
            local.zero_()
    model.init_buffers_post_meta()


def build_prime_rl_ranks(
    cfg: dict[str, Any],
    *,
    optimization_dtype: str,
    lm_head_chunk: int | None,
    src: str | None,
    ep: int,
    compile_layers: bool = False,
) -> Built:
    """Under ``torchrun``, one process per GPU, as prime-rl's trainer runs: the model built on the meta device, expert
    parallelism over ``ep`` ranks (``apply_ep``: torchtitan's ``ExpertParallel`` on each MoE layer's experts, the
    base re-frozen), AC and compile, FSDP2 over every rank with the experts sharded over the ranks outside their EP
    group and prime-rl's manual prefetch order under EP (``setup_fsdp``), then ``to_empty`` on the GPU. The meshes
    are prime-rl's own ``ParallelDims`` (``dp_shard = -1``, no replicate, no CP, as ``node8.toml`` runs)."""
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.tensor.parallel import parallelize_module

    model, lora_cfg, attention, notes = _prime_rl_afmoe(
        cfg, device="meta", optimization_dtype=optimization_dtype, lm_head_chunk=lm_head_chunk, src=src
    )
    from prime_rl.trainer import lora as prime_lora
    from prime_rl.trainer.models.layers import moe
    from prime_rl.trainer.parallel_dims import ParallelDims
    from torchtitan.distributed.expert_parallel import ExpertParallel

    dims = ParallelDims(dp_replicate=1, dp_shard=-1, cp=1, pp=1, ep=ep, world_size=dist.get_world_size())
    moes = [b.mlp for b in model.model.layers if isinstance(getattr(b, "mlp", None), moe.MoE)]
    if dims.ep_enabled:
        for mlp in moes:
            parallelize_module(mlp.experts, device_mesh=dims.get_mesh("ep"), parallelize_plan=ExpertParallel())
        prime_lora.freeze_all_except_lora_and_specified(model, lora_cfg)
    _checkpoint_and_compile(model, compile_layers)
    blocks = list(model.model.layers)  # now checkpoint wrappers
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    fp32 = MixedPrecisionPolicy(param_dtype=torch.float32, reduce_dtype=torch.float32)
    hsdp = dims.get_mesh("hsdp")
    for block in blocks:  # a checkpoint wrapper passes attribute lookups to its block
        mlp = getattr(block, "mlp", None)
        if isinstance(mlp, moe.MoE):
            if dims.ep_enabled:
                fully_shard(mlp.experts, mesh=dims.world_mesh["dp_shard_mod_ep"], mp_policy=mp)
                mlp.experts.set_gradient_divide_factor(dims.fsdp_gradient_divide_factor)
            fully_shard(mlp.router, mesh=hsdp, mp_policy=fp32, reshard_after_forward=True)
        fully_shard(block, mesh=hsdp, mp_policy=mp, reshard_after_forward=True)
    fully_shard(model.model.embed_tokens, mesh=hsdp, mp_policy=mp, reshard_after_forward=True)
    fully_shard([model.lm_head, model.model.norm], mesh=hsdp, mp_policy=mp, reshard_after_forward=False)
    fully_shard(model, mesh=hsdp, mp_policy=mp, reshard_after_forward=True)
    if dims.ep_enabled:  # setup_fsdp: under EP, the prefetch order is set by hand
        _ep_prefetch(model, moe.MoE)
    model.to_empty(device="cuda")
    _random_init(model)
    for mlp in moes:  # _reset_runtime_moe_buffers
        mlp.tokens_per_expert.zero_()
    trainable = [p for p in model.parameters() if p.requires_grad]
    notes.append(f"torchrun: {dist.get_world_size()} ranks, FSDP over all, EP {ep}; built on meta, random init")
    return Built(model, "prime-rl", attention, trainable, notes, True)


def _ep_prefetch(model: Any, moe_type: type) -> None:
    """The end of prime-rl's ``setup_fsdp`` with EP: forward and backward prefetch of the next block, its router and
    its experts (the all-to-all's device-to-host syncs would otherwise stall FSDP's own prefetch)."""
    blocks = list(model.model.layers)

    def mlp_of(block: Any) -> Any:
        return getattr(block, "mlp", None)

    model.model.embed_tokens.set_modules_to_forward_prefetch([blocks[0]])
    for block, nxt in zip(blocks, [*blocks[1:], None], strict=True):
        if nxt is None:
            block.set_modules_to_forward_prefetch([model.model.norm, model.lm_head])
        elif isinstance(mlp_of(nxt), moe_type):
            block.set_modules_to_forward_prefetch([nxt, mlp_of(nxt).router, mlp_of(nxt).experts])
        else:
            block.set_modules_to_forward_prefetch([nxt])
    rev = blocks[::-1]
    model.lm_head.set_modules_to_backward_prefetch([rev[0]])
    for block, prev in zip(rev, [*rev[1:], None], strict=True):
        if prev is None:
            block.set_modules_to_backward_prefetch([model.model.embed_tokens])
        elif isinstance(mlp_of(prev), moe_type):
            block.set_modules_to_backward_prefetch([prev, mlp_of(prev).experts, mlp_of(prev).router])
        else:
            block.set_modules_to_backward_prefetch([prev])


def build_hf(cfg: dict[str, Any], *, device: str, optimization_dtype: str) -> Built:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AfmoeConfig, AfmoeForCausalLM

    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[optimization_dtype]
    config = AfmoeConfig(**cfg, attn_implementation="sdpa")
    config.use_cache = False
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = AfmoeForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    dense = [
        f"model.layers.{i}.mlp.{p}"
        for i in range(cfg["num_dense_layers"])
        for p in ("gate_proj", "up_proj", "down_proj")
    ]
    attn = [
        f"model.layers.{i}.self_attn.{p}"
        for i in range(cfg["num_hidden_layers"])
        for p in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj")
    ]
    experts = [
        f"model.layers.{i}.mlp.experts.{p}"
        for i in range(cfg["num_dense_layers"], cfg["num_hidden_layers"])
        for p in ("gate_up_proj", "down_proj")
    ]
    lora = LoraConfig(r=16, lora_alpha=64, lora_dropout=0.0, target_modules=attn + dense, target_parameters=experts)
    model = get_peft_model(model, lora)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    trainable = [p for p in model.parameters() if p.requires_grad]
    notes = ["transformers AfmoeForCausalLM + PEFT (fused experts as target_parameters): not prime-rl's code"]
    return Built(model, "transformers+peft", "torch SDPA", trainable, notes, False)


def shard_ranks(built: Built, device: str) -> None:
    """FSDP2 over every rank of the ``torchrun`` group for the transformers + PEFT model (the CPU test's path over
    gloo): each decoder layer, then the root, as prime-rl's ``setup_fsdp`` shards a model without EP."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(device, (dist.get_world_size(),))
    inner = built.model.get_base_model().model
    for layer in inner.layers:
        fully_shard(layer, mesh=mesh, reshard_after_forward=True)
    fully_shard(built.model, mesh=mesh, reshard_after_forward=True)
    built.trainable[:] = [p for p in built.model.parameters() if p.requires_grad]
    built.substitutions.append(f"torchrun: {dist.get_world_size()} ranks, FSDP2 over all ({device})")
