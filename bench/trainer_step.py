"""The recipe's trainer step on one GPU: Trinity-Mini's architecture (random weights), LoRA, forward + backward +
optimizer step on packed micro-batches; peak GPU memory, host memory and tokens/s per ``seq_len``.

    python -m bench.trainer_step --seq-len 10240 14336 --json bench/results/trainer_step_h200.json \
        --prime-rl-src ../prime-rl/src
    torchrun --nproc-per-node 4 -m bench.trainer_step --ep 4 --seq-len 10240 --prime-rl-src ../prime-rl/src
    python -m bench.trainer_step --layers 8 --seq-len 10240 --prime-rl-src ../prime-rl/src   # fits an 80 GB GPU

Under ``torchrun`` (``WORLD_SIZE`` set) it runs one process per GPU as prime-rl's trainer does: the model built on the
meta device, expert parallelism over ``--ep`` ranks, FSDP2 over all ranks (``trainer_models.build_prime_rl_ranks``),
each rank its own micro-batches; rank 0 writes the result with every rank's peak memory. With ``--device cpu
--tiny --impl hf`` the ranks talk over gloo (the CPU test of the multi-rank path).

Defaults are the recipe's (configs/drugprot.toml with prime-rl 559b447's trainer defaults): parameters in
``optimization_dtype`` float32, bf16 compute through FSDP's mixed precision, full activation checkpointing with
activation offloading to CPU, AdamW (lr 3e-6) with its states offloaded to CPU, the fused LM head in 8,192-token
chunks, LoRA r 16 / alpha 64 on attention, dense MLPs and routed experts. ``torch.compile`` of the layers (prime-rl's
default) only with ``--compile``. Without a CUDA GPU it prints one line and exits 0.

``--layers N`` builds the first N decoder layers only (the first ``num_dense_layers`` dense, as the full model),
every other dimension unchanged; the result records ``model.layers`` and ``model.full_layers``. Runs at two or more
depths of one GPU are what ``bench.trainer_settings`` extrapolates to the full depth.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import maxrss_mib, write_json
from bench.trainer_models import (
    TINY,
    TRINITY_MINI,
    Built,
    build_hf,
    build_prime_rl,
    build_prime_rl_ranks,
    shard_ranks,
    with_layers,
)
from drugprot.core.outputs import OutputError, OutputSpec, check_outputs, error_line, wrote_line

GIB = 2**30
HEADROOM = 0.10  # the share of the GPU a recipe must leave free


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.trainer_step", description=__doc__.split("\n\n")[0])
    p.add_argument("--seq-len", type=int, nargs="+", default=[10240], help="micro-batch lengths to measure")
    p.add_argument("--sample-tokens", type=int, default=0, help="pack samples of this length (0: one per micro-batch)")
    p.add_argument("--micro-batches", type=int, default=2, help="micro-batches per optimizer step")
    p.add_argument("--steps", type=int, default=2, help="timed optimizer steps per seq_len")
    p.add_argument("--warmup", type=int, default=1, help="untimed optimizer steps before them (memory counts)")
    p.add_argument("--search-max", action="store_true", help="bisect the largest seq_len that runs (1,024 steps)")
    p.add_argument("--impl", choices=["prime-rl", "hf"], default="prime-rl")
    p.add_argument("--prime-rl-src", help="a prime-rl checkout's src folder, when prime-rl is not installed")
    p.add_argument("--optimization-dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--lm-head-chunk", type=int, default=8192, help="fused LM head token chunk (0: vanilla head)")
    p.add_argument("--no-ac-offload", action="store_true", help="keep checkpointed activations on the GPU")
    p.add_argument("--no-optim-offload", action="store_true", help="keep AdamW's states on the GPU")
    p.add_argument("--compile", action="store_true", help="torch.compile each layer (prime-rl's default)")
    p.add_argument("--ep", type=int, default=1, help="expert parallelism degree (torchrun, prime-rl; node8.toml: 4)")
    p.add_argument("--tiny", action="store_true", help="a toy-sized AFMoE (tests)")
    p.add_argument(
        "--layers",
        type=int,
        help="build only the first N decoder layers (first num_dense_layers dense, as the full model), every other "
        "dimension unchanged: depth-scaled runs that bench.trainer_settings extrapolates to the full depth",
    )
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu only with --tiny (tests)")
    p.add_argument("--json", help="write the result here")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --json file")
    args = p.parse_args(argv)
    if args.device == "cpu" and not args.tiny:
        p.error("--device cpu needs --tiny: the full model does not train on a CPU")
    if args.device == "cpu" and args.impl == "prime-rl":
        p.error("--device cpu needs --impl hf: prime-rl's LoRA state is created on CUDA (trainer/lora.py)")
    world = int(os.environ.get("WORLD_SIZE", "0"))
    if args.ep != 1 and (not world or args.impl != "prime-rl" or world % args.ep):
        p.error("--ep > 1 needs torchrun, --impl prime-rl and a rank count that --ep divides")
    if world and args.search_max:
        p.error("--search-max runs in one process: leave out torchrun")
    full = (TINY if args.tiny else TRINITY_MINI)["num_hidden_layers"]
    if args.layers is not None and not 1 <= args.layers <= full:
        p.error(f"--layers must be in [1, {full}] (the model's depth)")
    if min(args.seq_len) < 2 or args.micro_batches < 1 or args.steps < 1 or args.warmup < 0 or args.sample_tokens < 0:
        p.error("--seq-len >= 2, --micro-batches >= 1, --steps >= 1, --warmup >= 0, --sample-tokens >= 0")
    return args


def _cuda_missing() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    return None if torch.cuda.is_available() else f"no CUDA GPU visible to torch {torch.__version__}"


def machine(device: str) -> dict[str, Any]:
    import torch
    import transformers

    info: dict[str, Any] = {
        "cpu_cores": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    if device == "cuda":
        prop = torch.cuda.get_device_properties(0)
        info |= {"gpu": prop.name, "gpu_total_gib": round(prop.total_memory / GIB, 2), "cuda": torch.version.cuda}
    return info


def _batch(seq_len: int, sample_tokens: int, vocab: int, device: str) -> dict[str, Any]:
    """One packed micro-batch of random token ids, as prime-rl's packer lays it out: samples back to back, position
    ids restarting at each, ``seq_lens`` their lengths."""
    import torch

    size = sample_tokens or seq_len
    lens = [size] * (seq_len // size) + ([seq_len % size] if seq_len % size else [])
    ids = torch.randint(0, vocab, (1, seq_len), device=device)
    pos = torch.cat([torch.arange(n, device=device) for n in lens]).unsqueeze(0)
    return {"input_ids": ids, "position_ids": pos, "seq_lens": torch.tensor(lens, device=device)}


class Step:
    """Forward + backward over ``micro_batches`` packed micro-batches, gradient clipping, AdamW step."""

    def __init__(self, built: Built, args: argparse.Namespace, vocab: int) -> None:
        import torch

        self.built, self.args, self.vocab, self.torch = built, args, vocab, torch
        opt = torch.optim.AdamW(built.trainable, lr=3e-6, weight_decay=0.01, betas=(0.9, 0.999), fused=False)
        self.offload = None
        if built.prime_rl:
            from prime_rl.trainer.models.layers.lora.base import set_lora_num_tokens

            self.set_lora_num_tokens = set_lora_num_tokens
            if not args.no_optim_offload and args.device == "cuda":
                from prime_rl.trainer.optim.state_offload import CPUOffloadOptimizer

                opt = CPUOffloadOptimizer(opt)
            if not args.no_ac_offload and args.device == "cuda":
                from prime_rl.utils.act_offloading import OffloadActivations

                self.offload = lambda: OffloadActivations(use_pin_memory=True, max_fwd_stash_size=5)
        self.opt = opt

    def _loss(self, batch: dict[str, Any]) -> Any:
        torch, model = self.torch, self.built.model
        labels = batch["input_ids"].roll(-1, dims=1)
        if self.built.prime_rl:
            self.set_lora_num_tokens(torch.tensor([labels.shape[1]], dtype=torch.int32, device=labels.device))
            temp = torch.ones(labels.shape, device=labels.device)
            out = model(**batch, labels=labels, temperature=temp)
            logprobs = out["logprobs"]
        else:
            dtype = torch.bfloat16 if self.args.device == "cuda" else torch.float32
            with torch.autocast(self.args.device, dtype=dtype):
                logits = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"]).logits
            logprobs = torch.log_softmax(logits.float(), -1).gather(-1, labels[..., None]).squeeze(-1)
        adv = torch.randn(labels.shape, device=labels.device)  # a policy-gradient loss's shape: -A * log p
        return -(adv * logprobs).sum() / (labels.numel() * self.args.micro_batches)

    def _sync(self) -> None:
        if self.args.device == "cuda":
            self.torch.cuda.synchronize()

    def run(self, seq_len: int, micro_batches: int) -> tuple[float, float]:
        """One optimizer step; (seconds of the forward + backward passes, seconds of clipping + optimizer step)."""
        torch = self.torch
        t0 = time.perf_counter()
        for _ in range(micro_batches):
            batch = _batch(seq_len, self.args.sample_tokens, self.vocab, self.args.device)
            if self.offload is not None:
                with self.offload():
                    loss = self._loss(batch)
            else:
                loss = self._loss(batch)
            loss.backward()
            del loss, batch
        self._sync()
        t1 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(self.built.trainable, 1.0)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self._sync()
        return t1 - t0, time.perf_counter() - t1


def _host_gib() -> dict[str, float]:
    rss = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 2**20
    return {"host_rss_gib": round(rss, 2), "host_peak_rss_gib": round(maxrss_mib() / 1024, 2)}


def measure(step: Step, seq_len: int, micro_batches: int, steps: int, warmup: int) -> dict[str, Any]:
    """One seq_len: ``warmup`` untimed steps, then ``steps`` timed ones; peak GPU memory over all of them."""
    torch, cuda = step.torch, step.args.device == "cuda"
    row: dict[str, Any] = {"seq_len": seq_len, "micro_batches": micro_batches, "oom": False}
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    times: list[tuple[float, float]] = []
    try:
        for i in range(warmup + steps):
            took = step.run(seq_len, micro_batches)
            if i >= warmup:
                times.append(took)
    except torch.OutOfMemoryError:
        row["oom"] = True
        step.opt.zero_grad(set_to_none=True)
        gc.collect()
    if cuda:
        total = torch.cuda.get_device_properties(0).total_memory
        row["peak_allocated_gib"] = round(torch.cuda.max_memory_allocated() / GIB, 2)
        row["peak_reserved_gib"] = round(torch.cuda.max_memory_reserved() / GIB, 2)
        row["headroom"] = round(1 - torch.cuda.max_memory_reserved() / total, 3)
        row["fits_with_headroom"] = not row["oom"] and row["headroom"] >= HEADROOM
        torch.cuda.empty_cache()
    if times:
        row["step_s"] = [round(f + o, 3) for f, o in times]
        row["tokens_per_s"] = round(seq_len * micro_batches / statistics.median(f + o for f, o in times), 1)
        # the step's two parts: a real step runs many micro-batches per optimizer step (bench.step_time)
        row["micro_batch_s"] = round(statistics.median(f for f, _ in times) / micro_batches, 3)
        row["optimizer_s"] = round(statistics.median(o for _, o in times), 3)
        row["micro_batch_tokens_per_s"] = round(seq_len / row["micro_batch_s"], 1)
    return row | _host_gib()


def search_max(step: Step, ok: int, bad: int, grain: int = 1024) -> tuple[int, list[dict[str, Any]]]:
    """Bisect (one micro-batch, one untimed step each) the largest multiple of ``grain`` in [ok, bad) that runs."""
    probes = []
    while bad - ok > grain:
        mid = (ok + bad) // 2 // grain * grain
        if mid <= ok:
            break
        row = measure(step, mid, 1, 1, 0)
        probes.append(row)
        ok, bad = (ok, mid) if row["oom"] else (mid, bad)
    return ok, probes


def start_ranks(device: str) -> tuple[int, int] | None:
    """Under ``torchrun``: join its process group (NCCL on GPUs, gloo on CPUs), one GPU per local rank; (rank,
    world size). Otherwise None: one process."""
    if "WORLD_SIZE" not in os.environ:
        return None
    import torch
    import torch.distributed as dist

    if device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl" if device == "cuda" else "gloo")
    return dist.get_rank(), dist.get_world_size()


def _gather(row: dict[str, Any]) -> list[dict[str, Any]]:
    import torch.distributed as dist

    rows: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(rows, row)
    return rows


def _shard_counts(built: Built, ranks: tuple[int, int] | None) -> list[int]:
    """Parameter elements each rank holds (its FSDP / EP shards); one process holds them all."""
    local = sum((p.to_local() if hasattr(p, "to_local") else p).numel() for p in built.model.parameters())
    if not ranks:
        return [local]
    import torch.distributed as dist

    counts: list[Any] = [None] * ranks[1]
    dist.all_gather_object(counts, local)
    return counts


def merge_ranks(rows: list[dict[str, Any]], gpu_total_gib: float | None) -> dict[str, Any]:
    """One row for a multi-rank step: the worst rank's memory and step time (the step ends when the last rank's
    does), tokens/s over every rank's tokens, host memory summed over the ranks (one node), each rank's figures."""
    out: dict[str, Any] = {"seq_len": rows[0]["seq_len"], "micro_batches": rows[0]["micro_batches"]}
    out["oom"] = any(r["oom"] for r in rows)
    for key in ("peak_allocated_gib", "peak_reserved_gib"):
        if key in rows[0]:
            out[key] = max(r[key] for r in rows)
    if gpu_total_gib and "peak_reserved_gib" in out:
        out["headroom"] = min(r["headroom"] for r in rows)
        out["fits_with_headroom"] = not out["oom"] and out["headroom"] >= HEADROOM
    if not out["oom"] and all("step_s" in r for r in rows):
        out["step_s"] = [max(ts) for ts in zip(*(r["step_s"] for r in rows), strict=True)]
        tokens = len(rows) * out["seq_len"] * out["micro_batches"]
        out["tokens_per_s"] = round(tokens / statistics.median(out["step_s"]), 1)
        out["micro_batch_s"] = max(r["micro_batch_s"] for r in rows)
        out["optimizer_s"] = max(r["optimizer_s"] for r in rows)
        out["micro_batch_tokens_per_s"] = round(len(rows) * out["seq_len"] / out["micro_batch_s"], 1)
    out["host_rss_gib"] = round(sum(r["host_rss_gib"] for r in rows), 2)
    out["host_peak_rss_gib"] = round(sum(r["host_peak_rss_gib"] for r in rows), 2)
    out["per_rank"] = [{k: v for k, v in r.items() if k not in ("seq_len", "micro_batches")} for r in rows]
    return out


def lora_layout(built: Built, sharded: bool = False) -> dict[str, Any]:
    """The adapter as the trainer holds it (parameters) and as prime-rl broadcasts it (``adapter_state_dict``)."""
    out: dict[str, Any] = {
        "parameters": sum(p.numel() for p in built.trainable),
        "bytes": sum(p.numel() * p.element_size() for p in built.trainable),
        "dtypes": sorted({str(p.dtype).removeprefix("torch.") for p in built.trainable}),
        "parameter_tensors": len(built.trainable),
    }
    if built.prime_rl and not sharded:  # the broadcast layout gathers shards: measured in one process
        from prime_rl.trainer.lora import get_lora_state

        state = get_lora_state()
        sd = state.adapter_state_dict()
        out |= {
            "modules": len(state._modules),
            "broadcast_tensors": len(sd),
            "broadcast_bytes": sum(t.numel() * t.element_size() for t in sd.values()),
        }
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    full = TINY if args.tiny else TRINITY_MINI
    cfg = with_layers(full, args.layers)
    ranks = start_ranks(args.device)
    torch.manual_seed(0)
    chunk = args.lm_head_chunk or None
    t0 = time.perf_counter()
    if args.impl == "prime-rl" and ranks:
        built = build_prime_rl_ranks(
            cfg,
            optimization_dtype=args.optimization_dtype,
            lm_head_chunk=chunk,
            src=args.prime_rl_src,
            ep=args.ep,
            compile_layers=args.compile,
        )
    elif args.impl == "prime-rl":
        built = build_prime_rl(
            cfg,
            device=args.device,
            optimization_dtype=args.optimization_dtype,
            lm_head_chunk=chunk,
            src=args.prime_rl_src,
            compile_layers=args.compile,
        )
    else:
        built = build_hf(cfg, device=args.device, optimization_dtype=args.optimization_dtype)
        if ranks:
            shard_ranks(built, args.device)
    build_s = time.perf_counter() - t0
    if ranks:
        torch.manual_seed(1 + ranks[0])  # each rank its own micro-batches, as data parallelism feeds them
    params = list(built.model.parameters())
    result: dict[str, Any] = {
        "benchmark": "trainer_step",
        "command": "python -m bench.trainer_step " + " ".join(sys.argv[1:]),
        "machine": machine(args.device),
        "model": {
            "config": "tiny" if args.tiny else "Trinity-Mini",
            "layers": cfg["num_hidden_layers"],
            "full_layers": full["num_hidden_layers"],
            "impl": built.impl,
            "attention": built.attention,
            "substitutions": built.substitutions,
            "parameters": sum(p.numel() for p in params),
            "parameter_bytes": sum(p.numel() * p.element_size() for p in params),
            "build_s": round(build_s, 1),
        },
        "lora": lora_layout(built, sharded=bool(ranks)),
        "recipe": {
            "optimization_dtype": args.optimization_dtype,
            "compute": "bf16 (FSDP MixedPrecisionPolicy)" if built.prime_rl and args.device == "cuda" else "autocast",
            "activation_checkpointing": "full",
            "activation_offload": built.prime_rl and not args.no_ac_offload and args.device == "cuda",
            "optimizer": "AdamW" + ("" if args.no_optim_offload or not built.prime_rl else ", states on CPU"),
            "lm_head_chunk": chunk,
            "sample_tokens": args.sample_tokens or None,
            "compile": args.compile and built.prime_rl,
        },
        "ranks": {
            "torchrun": bool(ranks),
            "world": ranks[1] if ranks else 1,
            "ep": args.ep,
            "shard_parameters": _shard_counts(built, ranks),
        },
        "runs": [],
    }
    if args.device == "cuda":
        result["model"]["gpu_after_build_gib"] = round(torch.cuda.memory_allocated() / GIB, 2)
    step = Step(built, args, cfg["vocab_size"])
    for seq_len in args.seq_len:
        row = measure(step, seq_len, args.micro_batches, args.steps, warmup=args.warmup)
        if ranks:
            row = merge_ranks(_gather(row), result["machine"].get("gpu_total_gib"))
        result["runs"].append(row)
        if not ranks or ranks[0] == 0:
            print(json.dumps(row), flush=True)
    ran = [r["seq_len"] for r in result["runs"] if not r["oom"]]
    failed = [r["seq_len"] for r in result["runs"] if r["oom"]]
    if args.search_max and ran and failed and args.device == "cuda":
        best, probes = search_max(step, max(ran), min(s for s in failed if s > max(ran)))
        result["search"] = probes
        result["largest_seq_len_that_runs"] = best
    rows = result["runs"] + result.get("search", [])
    fits = [r["seq_len"] for r in rows if r.get("fits_with_headroom")]
    result["largest_measured_seq_len_with_headroom"] = max(fits) if fits else None
    return result


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    try:
        outs = check_outputs([OutputSpec.of("--json", args.json)], [], overwrite=args.overwrite) if args.json else []
    except OutputError as exc:
        print(error_line("bench.trainer_step", exc), file=sys.stderr)
        return 2
    if args.device == "cuda" and (why := _cuda_missing()):
        print(f"bench.trainer_step: skipped: {why}")
        return 0
    result = run(args)
    if int(os.environ.get("RANK", "0")) == 0:
        print(json.dumps({k: result[k] for k in ("model", "lora", "recipe", "ranks")}, indent=2))
        if outs:
            write_json(result, args.json)
            print(wrote_line("the result", args.json, outs[0].replaces))
    if "WORLD_SIZE" in os.environ:
        import torch.distributed as dist

        # every rank leaves together: a rank that tears its group down while rank 0 still writes can make gloo's
        # threads abort the other ("terminate called without an active exception", SIGABRT; seen once in CI)
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
