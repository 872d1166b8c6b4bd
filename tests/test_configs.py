"""The configs in ``configs/``. The prime-rl configs parse, keep the seed recipe, and avoid the mistakes prime-rl's
own validation lets through silently (each one checked against its ``RLConfig`` at the pinned commit). The
``vf-eval`` ones (the model aliases of ``endpoints.toml``, ``eval/*.toml``) and the README's main-job commands
resolve to Prime Inference's Trinity-Mini and drugprot's pinned seat (dry runs of the real CLIs).

Every RL config names how it is launched on a ``# Usage: uv run --no-sync rl @ a.toml @ b.toml`` line; the tests
merge that chain the way prime-rl's ``@`` files merge (tables deep-merged, everything else replaced) and
check the result. The ``prime-rl`` tests at the bottom run only where ``prime_rl.configs`` imports
(``scripts/validate_prime_rl.sh`` sets that up); in CI they skip.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset
from tests.scripts import load_script

from .conftest import FIXTURE_JSONL

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
TRAINING_DOCS = (
    CONFIGS / "README.md",
    *sorted((ROOT / "docs" / "training").glob("*.md")),
    ROOT / "docs" / "evaluation" / "extraction.md",
)
"""Where the configs are documented: configs/README.md and the docs site's training pages (and extraction mode's)."""


def training_docs() -> str:
    """The text of ``TRAINING_DOCS``, one after another."""
    return "\n".join(path.read_text(encoding="utf-8") for path in TRAINING_DOCS)


VALIDATE_SCRIPT = ROOT / "scripts" / "validate_prime_rl.sh"
BASE = "configs/drugprot.toml"
EXTRACTION = "configs/rl/extraction.toml"
SEED = "configs/rl/seed.toml"
SLURM = "configs/rl/slurm.toml"
HAS_LEGACY = importlib.util.find_spec("verifiers.legacy") is not None
legacy_only = pytest.mark.skipif(not HAS_LEGACY, reason="verifiers >= 0.4 has no legacy (v0) stack")
EVAL_EXTRACTION = CONFIGS / "eval" / "extraction.toml"


prompt_lengths = load_script("prompt_lengths")

PRIME_RL_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"

# Longest system + user prompt of the train-split tasks on the real 350-abstract sample with every same-sentence
# candidate (`scripts/prompt_lengths.py --data-path drugprot-train350.jsonl --negatives all`; 6,049 tasks, pair
# 23371303:T31:T56): the default recipe's setting, and the longest of pair mode's (positive pairs only:
# 5,717 characters, 5,731 bytes, 1,730 tasks; the N option lengthens the system prompt).
REAL_SAMPLE_MAX_PROMPT_CHARS = 5833
REAL_SAMPLE_MAX_PROMPT_BYTES = 5846
# The same in extraction mode (`... --mode extraction`; 350 tasks, one per abstract, PMID 23371303), and its
# gold answers: the longest answer block (PMID 23598363, 33 relations) and the most relations of one abstract
# (PMID 12085361). configs/rl/extraction.toml sizes its lengths from these.
REAL_SAMPLE_EXTRACTION_MAX_PROMPT_CHARS = 7695
REAL_SAMPLE_EXTRACTION_MAX_PROMPT_BYTES = 7708
REAL_SAMPLE_EXTRACTION_MAX_ANSWER_BYTES = 908
REAL_SAMPLE_EXTRACTION_MOST_RELATIONS = 38
# The base recipe's completion budget, spent on one pair's reasoning (512 truncated it); extraction mode keeps
# it for the reasoning and adds room for the relations block.
REASONING_TOKENS = 2048

# prime-rl's AFMoE (the implementation `impl = "auto"` picks for Trinity-Mini): the module-path components
# LoRA can attach to. A plain target name matches any dotted component of a module path.
AFMOE_LORA_TARGETS = {
    "q_proj": "self_attn.q_proj, 32 layers",
    "k_proj": "self_attn.k_proj, 32 layers",
    "v_proj": "self_attn.v_proj, 32 layers",
    "o_proj": "self_attn.o_proj, 32 layers",
    "gate_proj": "self_attn.gate_proj (output gate), 32 layers; mlp.gate_proj of the 2 dense layers",
    "up_proj": "mlp.up_proj of the 2 dense layers",
    "down_proj": "mlp.down_proj of the 2 dense layers",
    "experts": "mlp.experts, the 128 routed experts of the 30 MoE layers (grouped w1/w2/w3)",
}
# Also in the model but never to be targeted: the router gate, the shared expert (raw parameters), ...
AFMOE_NOT_TARGETS = {"gate", "router", "shared_expert", "embed_tokens", "lm_head", "norm", "q_norm", "k_norm"}
# prime-rl's default LoRA target_modules at the pinned commit (test_prime_rl_default_lora_targets checks it).
PRIME_RL_DEFAULT_TARGETS = [
    *("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "experts"),
    *("fc1_latent_proj", "fc2_latent_proj"),  # NemotronH's LatentMoE only
]
RECIPE_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "experts"]
NUM_ROUTED_EXPERTS = 128

# Keys of a `default` renderer that the renderer itself reads; anything else goes to the chat template.
RENDERER_KEYS = {"name", "reasoning_parser"}
REASONING_PARSERS = {"think"}  # renderers.parsers.REASONING_PARSERS
# A source's fields at 559b447 (train: TrainSourceConfig, eval: EvalSourceConfig).
SOURCE_KEYS = {
    "train": {"name", "env", "serve", "ratio", "sampling", "group_size", "algo", "curriculum"},
    "eval": {"name", "env", "serve", "ratio", "sampling", "num_examples", "group_size", "interval"},
}
# Keys of older prime-rl releases, rejected or (nested in pass-through tables) ignored at 559b447.
REMOVED_KEYS = {
    "wandb": "[monitors.wandb]",
    "inference_gpu_ids": "[deployment] num_infer_gpus",
    "trainer_gpu_ids": "[deployment] num_train_gpus",
    "clean_output_dir": "clean",
    "orchestrator.rollouts_per_example": "orchestrator.group_size",
    "orchestrator.sampling": "[orchestrator.train.sampling]",
    "orchestrator.env": "[[orchestrator.train.source]]",
    "orchestrator.train.env": "[[orchestrator.train.source]]",
    "orchestrator.max_async_level": "orchestrator.max_off_policy_steps",
    "inference.model": "[inference.vllm]",
    "inference.parallel": "[inference.vllm] tensor_parallel_size / data_parallel_size",
    "trainer.ckpt.weights": "the adapter in broadcasts/step_N/",
}
EVAL_SAMPLING_KEYS = ("temperature", "max_completion_tokens", "top_p")
"""Eval sampling prime-rl 559b447 sends as top-level fields of the chat request, which vLLM reads."""
EVAL_SAMPLING_UNREAD = ("top_k", "min_p")
"""Eval sampling prime-rl 559b447 sends inside a literal ``extra_body`` key of the chat request: vLLM ignores it."""


# ---------------------------------------------------------------------------------------------- loading


def owned(path: Path) -> bool:
    """The prime-rl configs: every TOML in configs/ but the vf-eval ones (endpoints.toml, configs/eval/)."""
    rel = path.relative_to(CONFIGS)
    return rel != Path("endpoints.toml") and rel.parts[0] != "eval"


ALL_TOMLS = sorted(CONFIGS.rglob("*.toml"))
RUN_CONFIGS = [p for p in ALL_TOMLS if owned(p)]
RUN_IDS = [str(p.relative_to(ROOT)) for p in RUN_CONFIGS]


def usage_chain(path: Path) -> list[str]:
    """The config files of the file's ``# Usage: uv run --no-sync rl @ a.toml @ b.toml`` line, in order."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("# Usage: ")]
    assert len(lines) == 1, f"{path}: needs exactly one '# Usage: uv run --no-sync rl @ ...' line"
    words = shlex.split(lines[0].removeprefix("# Usage: "))
    assert words[:4] == ["uv", "run", "--no-sync", "rl"], lines[0]  # the one documented way (docs/training/recipe.md)
    args = words[4:]
    assert len(args) % 2 == 0 and args[::2] == ["@"] * (len(args) // 2), lines[0]
    return args[1::2]


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Merge like prime-rl's ``@ a.toml @ b.toml``: tables merge recursively, any other value (lists of
    tables included) replaces the earlier one."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def merge_chain(chain: list[str]) -> dict[str, Any]:
    """The merged tables of ``rl @ chain[0] @ chain[1] ...`` (paths relative to the repository root)."""
    config: dict[str, Any] = {}
    for rel in chain:
        config = deep_merge(config, tomllib.loads((ROOT / rel).read_text(encoding="utf-8")))
    return config


def load_run(path: Path) -> dict[str, Any]:
    return merge_chain(usage_chain(path))


def get(config: dict[str, Any], dotted: str, default: Any = None) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def sources(config: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(kind, label, source)`` for every train and eval source."""
    out = []
    for kind in ("train", "eval"):
        for i, source in enumerate(get(config, f"orchestrator.{kind}.source", [])):
            out.append((kind, f"orchestrator.{kind}.source[{i}] ({source.get('name')})", source))
    return out


def sampling(config: dict[str, Any], kind: str, source: dict[str, Any]) -> dict[str, Any]:
    """A source's sampling as the orchestrator resolves it: the group-level table, then its own fields."""
    return {**get(config, f"orchestrator.{kind}.sampling", {}), **source.get("sampling", {})}


def seq_lens(config: dict[str, Any]) -> dict[str, int]:
    """Trainer and orchestrator seq_len: a component's own value wins over the shared one (default 2048)."""
    shared = config.get("seq_len", 2048)
    return {
        "trainer.model.seq_len": get(config, "trainer.model.seq_len", shared),
        "orchestrator.seq_len": get(config, "orchestrator.seq_len", shared),
    }


def trainer_gpus(config: dict[str, Any]) -> int:
    deployment = config.get("deployment", {})
    if deployment.get("type") == "multi_node":
        return deployment["num_train_nodes"] * deployment.get("gpus_per_node", 8)
    return deployment.get("num_train_gpus", 1)


# ---------------------------------------------------------------------------------------------- checks


def problems(config: dict[str, Any], prompt_tokens: int) -> list[str]:
    """What is wrong with a merged run config, in the ways prime-rl would accept silently.

    Args:
        config: the merged TOML tables of one run.
        prompt_tokens: an upper bound on the longest prompt in tokens.
    """
    found = [f"{key}: removed from prime-rl, use {new}" for key, new in REMOVED_KEYS.items() if get(config, key)]
    found += source_problems(config)
    found += length_problems(config, prompt_tokens)
    found += lora_problems(config)
    found += renderer_problems(config)
    return found


def source_problems(config: dict[str, Any]) -> list[str]:
    """Batching, and each train/eval source: drugprot on the right split, local plain chat, sampling set."""
    found = []
    batch, group = get(config, "orchestrator.batch_size"), get(config, "orchestrator.group_size", 1)
    if batch is None or batch % group:
        found.append(f"orchestrator.batch_size {batch} is not a multiple of group_size {group}")
    if not get(config, "orchestrator.train.source"):
        found.append("no [[orchestrator.train.source]]")
    if get(config, "orchestrator.eval") is not None and not get(config, "orchestrator.eval.source"):
        found.append("[orchestrator.eval] without [[orchestrator.eval.source]]")
    for kind, label, source in sources(config):
        extra = set(source) - SOURCE_KEYS[kind]
        if extra:
            found.append(f"{label}: unknown keys {sorted(extra)}")
        if batch is not None and batch % source.get("group_size", 1):
            found.append(f"{label}: batch_size {batch} is not a multiple of group_size {source['group_size']}")
        expected = {
            "env.taskset.id": "drugprot",
            "env.taskset.split": "train" if kind == "train" else "validation",
            "env.agent.harness.id": "drugprot",
        }
        for key, value in expected.items():
            if get(source, key) != value:
                found.append(f"{label}: {key} is {get(source, key)!r}, not {value!r}")
        runtime = get(source, "env.agent.runtime.type")
        if runtime != "subprocess":
            found.append(
                f"{label}: env.agent.runtime.type is {runtime!r}, not 'subprocess' (unset means remote Prime sandboxes)"
            )
        wanted = EVAL_SAMPLING_KEYS if kind == "eval" else ("temperature", "max_completion_tokens")
        unset = [key for key in wanted if sampling(config, kind, source).get(key) is None]
        if unset:
            found.append(f"{label}: sampling {', '.join(unset)} unset (not inherited; server default)")
        unread = [
            k for k in EVAL_SAMPLING_UNREAD if kind == "eval" and sampling(config, kind, source).get(k) is not None
        ]
        if unread:
            found.append(f"{label}: sampling {', '.join(unread)} set, sent in a literal extra_body vLLM does not read")
    if get(config, "orchestrator.eval") is not None and get(config, "inference.vllm.generation_config") != "vllm":
        found.append(
            "inference.vllm.generation_config is not 'vllm': the model's generation config sets the eval's top_k/min_p"
        )
    return found


def length_problems(config: dict[str, Any], prompt_tokens: int) -> list[str]:
    """seq_len must hold the longest prompt plus the longest completion; vLLM's context must hold seq_len."""
    found = []
    completion = max(
        (sampling(config, kind, source).get("max_completion_tokens") or 0 for kind, _, source in sources(config)),
        default=0,
    )
    lens = seq_lens(config)
    for key, value in lens.items():
        if value < prompt_tokens + completion:
            found.append(f"{key} {value} < {prompt_tokens} prompt + {completion} completion tokens")
    max_model_len = get(config, "inference.vllm.max_model_len")
    if max_model_len is None:
        found.append("inference.vllm.max_model_len unset (the model's 131,072 context)")
    elif max_model_len < max(lens.values()):
        found.append(f"inference.vllm.max_model_len {max_model_len} < seq_len {max(lens.values())}")
    return found


def lora_problems(config: dict[str, Any]) -> list[str]:
    """LoRA on AFMoE module names only, nothing trained that vLLM never sees, parallelism LoRA supports."""
    lora = get(config, "trainer.model.lora")
    if lora is None:
        return ["trainer.model.lora unset"]
    found = []
    targets = lora.get("target_modules")
    if targets is None:
        found.append("trainer.model.lora.target_modules unset (prime-rl's default has non-AFMoE names)")
    elif unknown := [t for t in targets if t not in AFMOE_LORA_TARGETS]:
        found.append(f"trainer.model.lora.target_modules {unknown} are not AFMoE LoRA targets")
    if lora.get("modules_to_save"):
        found.append("trainer.model.lora.modules_to_save is never shipped to vLLM")
    if get(config, "trainer.model.impl", "auto") not in ("auto", "custom"):
        found.append("trainer.model.impl: the LoRA target names are those of prime-rl's own AFMoE")
    if get(config, "inference.vllm.enable_expert_parallel"):
        found.append("inference.vllm.enable_expert_parallel: vLLM's fused-MoE LoRA rejects EP")
    if get(config, "weight_broadcast.type", "filesystem") != "filesystem":
        found.append("weight_broadcast: LoRA needs the filesystem broadcast")
    ep, gpus = get(config, "trainer.model.ep", "auto"), trainer_gpus(config)
    if ep != "auto" and (NUM_ROUTED_EXPERTS % ep or gpus % ep):
        found.append(f"trainer.model.ep {ep} must divide {NUM_ROUTED_EXPERTS} experts and {gpus} GPUs")
    return found


def renderer_problems(config: dict[str, Any]) -> list[str]:
    """The default renderer (Trinity-Mini is not in the renderer map) with only keys it reads itself."""
    found = []
    renderer = get(config, "orchestrator.renderer", {})
    if renderer.get("name") != "default":
        found.append(f"orchestrator.renderer.name is {renderer.get('name')!r}: Trinity-Mini needs 'default'")
    extra = set(renderer) - RENDERER_KEYS
    if extra:
        found.append(f"orchestrator.renderer: {sorted(extra)} would be passed to the chat template")
    parser = renderer.get("reasoning_parser")
    if parser not in REASONING_PARSERS:
        found.append(f"orchestrator.renderer.reasoning_parser {parser!r} is not {REASONING_PARSERS}")
    return found


def mode_of(config: dict[str, Any]) -> str:
    """The task mode of the run's train source (the eval sources are checked to match in ``test_env_sources``)."""
    return get(config, "orchestrator.train.source", [{}])[0].get("env", {}).get("taskset", {}).get("mode", "pair")


def prompt_token_bound(mode: str = "pair") -> int:
    """The longest prompt of the real sample's train split in ``mode``, in tokens at <= 1 token per byte."""
    nbytes = {"pair": REAL_SAMPLE_MAX_PROMPT_BYTES, "extraction": REAL_SAMPLE_EXTRACTION_MAX_PROMPT_BYTES}[mode]
    return nbytes + prompt_lengths.TEMPLATE_OVERHEAD_TOKENS


def completion_tokens(config: dict[str, Any]) -> int:
    """The train sampling's completion cap (every eval source must match it: ``test_config_values``)."""
    return get(config, "orchestrator.train.sampling.max_completion_tokens")


# ---------------------------------------------------------------------------------------------- tests


def test_every_toml_in_configs_parses() -> None:
    assert ALL_TOMLS, "no TOML under configs/"
    for path in ALL_TOMLS:
        assert isinstance(tomllib.loads(path.read_text(encoding="utf-8")), dict), path


def test_run_configs_are_the_documented_ones() -> None:
    assert RUN_IDS == [BASE, EXTRACTION, "configs/rl/node8.toml", SEED, SLURM, "configs/rl/smoke.toml"]


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_usage_line_names_the_base_then_the_file(path: Path) -> None:
    chain = usage_chain(path)
    own = str(path.relative_to(ROOT))
    assert chain == ([BASE] if own == BASE else [BASE, own])


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_config_names_the_pinned_prime_rl_commit(path: Path) -> None:
    assert f"prime-rl {PRIME_RL_COMMIT[:7]}" in path.read_text(encoding="utf-8")


def test_pinned_commit_matches_script_and_readme() -> None:
    script = VALIDATE_SCRIPT.read_text(encoding="utf-8")
    assert re.findall(r"^PRIME_RL_COMMIT=(\w+)$", script, re.MULTILINE) == [PRIME_RL_COMMIT]
    assert PRIME_RL_COMMIT in training_docs()


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_config_has_no_silent_problems(path: Path) -> None:
    config = load_run(path)
    assert problems(config, prompt_token_bound(mode_of(config))) == []


# The seed recipe (trinity-mini notes, section 10), as the configs resolve it.
RECIPE = {
    "model.name": "arcee-ai/Trinity-Mini",
    "max_steps": 100,
    "seq_len": 10240,
    "inference.vllm.max_model_len": 10240,
    "inference.vllm.generation_config": "vllm",
    "ckpt.interval": 50,
    "ckpt.keep_last": 1,
    "ckpt.keep_interval": None,
    "orchestrator.max_off_policy_steps": 2,
    "trainer.model.lora.rank": 16,
    "trainer.model.lora.alpha": 64.0,
    "trainer.model.lora.dropout": 0.0,
    "trainer.model.lora.target_modules": RECIPE_TARGETS,
    "trainer.model.lora.modules_to_save": [],
    "trainer.optim.type": "adamw",
    "trainer.optim.lr": 3e-6,
    "orchestrator.batch_size": 128,
    "orchestrator.group_size": 8,
    "orchestrator.train.sampling.temperature": 0.7,
    "orchestrator.train.sampling.max_completion_tokens": 2048,
    "orchestrator.eval.interval": 50,
    "orchestrator.eval.group_size": 1,
    "orchestrator.eval.sampling.temperature": 0.7,
    "orchestrator.eval.sampling.max_completion_tokens": 2048,
    "orchestrator.renderer.name": "default",
    "orchestrator.renderer.reasoning_parser": "think",
    "deployment.type": None,
    "deployment.num_infer_gpus": None,
    "deployment.num_train_gpus": None,
    "trainer.model.ep": None,
    "monitors.wandb": None,
}
VARIANTS = {
    BASE: {},
    EXTRACTION: {
        "seq_len": 14336,
        "inference.vllm.max_model_len": 14336,
        "orchestrator.train.sampling.max_completion_tokens": 4096,
        "orchestrator.eval.sampling.max_completion_tokens": 4096,
    },
    "configs/rl/node8.toml": {
        "deployment.num_infer_gpus": 4,
        "deployment.num_train_gpus": 4,
        "trainer.model.ep": 4,
    },
    SEED: {"orchestrator.eval.interval": 25, "orchestrator.eval.group_size": 2},
    SLURM: {
        "orchestrator.batch_size": 512,
        "deployment.type": "multi_node",
        "deployment.num_train_nodes": 1,
        "deployment.num_infer_nodes": 1,
        "deployment.gpus_per_node": 8,
        "slurm.job_name": "drugprot-trinity-mini",
        "trainer.model.ep": 8,
    },
    "configs/rl/smoke.toml": {
        "model.name": "Qwen/Qwen3-0.6B",
        "max_steps": 10,
        "orchestrator.batch_size": 32,
        "orchestrator.train.sampling.max_completion_tokens": 1024,
        "orchestrator.eval.interval": 5,
        "orchestrator.eval.group_size": 1,
        "orchestrator.eval.sampling.max_completion_tokens": 1024,
    },
}


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_config_values(path: Path) -> None:
    config = load_run(path)
    expected = {**RECIPE, **VARIANTS[str(path.relative_to(ROOT))]}
    assert {key: get(config, key) for key in expected} == expected


# Each run's train and eval tasksets. The default recipe trains in pair mode on every same-sentence candidate with
# the metric-aligned utility at the package's default costs, and evaluates 2,000 validation pairs in the official
# setting; the seed overlay restores positive pairs, the accuracy reward and the seed's 100-pair eval; extraction
# mode evaluates 300 abstracts (negatives must be 0 there).
SHUFFLED = {"shuffle": True, "seed": 0}
RECIPE_TRAIN = {"id": "drugprot", "split": "train", "mode": "pair", "negatives": "all", "reward": "utility",
                **SHUFFLED}  # fmt: skip
RECIPE_EVAL = {"id": "drugprot", "split": "validation", "mode": "pair", "negatives": "all", "num_tasks": 2000,
               **SHUFFLED}  # fmt: skip
TASKSETS = {
    SEED: (
        {"id": "drugprot", "split": "train", "mode": "pair", "negatives": 0, "reward": "accuracy", **SHUFFLED},
        {
            "id": "drugprot",
            "split": "validation",
            "mode": "pair",
            "negatives": 0,
            "reward": "accuracy",
            "num_tasks": 100,
            **SHUFFLED,
        },
    ),  # fmt: skip
    "configs/rl/smoke.toml": (RECIPE_TRAIN, {**RECIPE_EVAL, "num_tasks": 32}),
    EXTRACTION: (
        {"id": "drugprot", "split": "train", "mode": "extraction", "negatives": 0, "reward": "utility", **SHUFFLED},
        {"id": "drugprot", "split": "validation", "mode": "extraction", "negatives": 0, "num_tasks": 300, **SHUFFLED},
    ),  # fmt: skip
}


def tasksets_of(rel: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return TASKSETS.get(rel, (RECIPE_TRAIN, RECIPE_EVAL))


def test_the_smoke_overlay_is_sized_for_minutes() -> None:
    """configs/rl/smoke.toml as its header states: 10 steps x 32 training rollouts, 3 evals (the first trigger, then
    every 5 steps) of 32 pairs x 1 rollout, 1,024 completion tokens each: 416 rollouts, 426K completion tokens at
    most."""
    config = load_run(ROOT / "configs/rl/smoke.toml")
    steps, batch = get(config, "max_steps"), get(config, "orchestrator.batch_size")
    interval, group = get(config, "orchestrator.eval.interval"), get(config, "orchestrator.eval.group_size")
    [evaluation] = get(config, "orchestrator.eval.source")
    evals = 1 + steps // interval
    eval_rollouts = evals * evaluation["env"]["taskset"]["num_tasks"] * group
    tokens = {kind: sampling(config, kind, {})["max_completion_tokens"] for kind in ("train", "eval")}
    assert (steps, batch, evals, eval_rollouts, tokens) == (10, 32, 3, 96, {"train": 1024, "eval": 1024})
    assert (steps * batch + eval_rollouts) * 1024 == 425_984


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_env_sources(path: Path) -> None:
    config = load_run(path)
    train, evaluation = tasksets_of(str(path.relative_to(ROOT)))
    tasksets = [(kind, source["name"], source["env"]["taskset"]) for kind, _, source in sources(config)]
    assert tasksets == [("train", "drugprot", train), ("eval", "drugprot-validation", evaluation)]
    agents = [source["env"]["agent"] for _, _, source in sources(config)]
    assert agents == [{"harness": {"id": "drugprot"}, "runtime": {"type": "subprocess"}}] * 2


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_lora_targets_are_prime_rl_defaults_present_in_afmoe(path: Path) -> None:
    """Each config targets exactly prime-rl's default LoRA targets that name AFMoE modules, in prime-rl's order:
    no router gate or other non-target, plain names only (no regex matching)."""
    targets = get(load_run(path), "trainer.model.lora.target_modules")
    assert targets == [t for t in PRIME_RL_DEFAULT_TARGETS if t in AFMOE_LORA_TARGETS]
    assert not AFMOE_NOT_TARGETS & set(targets)
    assert all(re.fullmatch(r"\w+", t) for t in targets)


FIXTURE_PMIDS = sorted(json.loads(line)["pmid"] for line in FIXTURE_JSONL.read_text(encoding="utf-8").splitlines())
# What each (mode, negatives) makes of the fixture: tasks, the longest prompt's task key, its characters and bytes.
FIXTURE_PROMPTS = {
    ("pair", "all"): (42, "90000002:T1:T2", 2536, 2536),  # shuffled: the first of the longest (T3:T4 ties)
    ("pair", 0): (27, "90000002:T3:T4", 2445, 2445),
    ("extraction", 0): (9, "90000002", 2866, 2866),
}


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_tasksets_accept_the_fields_and_build(path: Path) -> None:
    config = load_run(path)
    mode = mode_of(config)
    for _, label, source in sources(config):
        fields = DrugprotConfig.model_validate(source["env"]["taskset"])
        assert fields.mode == mode, label
        taskset = DrugprotTaskset(fields.model_copy(update={"data_path": str(FIXTURE_JSONL)}))
        m = prompt_lengths.measure(taskset)
        n, *longest = FIXTURE_PROMPTS[mode, fields.negatives]  # num_tasks keeps the first n shuffled (smoke: 32)
        assert (m.tasks, m.key, m.chars, m.utf8_bytes) == (min(n, fields.num_tasks or n), *longest), label
        assert min(seq_lens(config).values()) >= m.required_seq_len(completion_tokens(config))
        if mode == "extraction":  # one task per abstract, keyed by its PMID (shuffled)
            assert sorted(task.key for task in taskset) == FIXTURE_PMIDS, label


def test_taskset_config_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="splitt"):
        DrugprotConfig.model_validate({"id": "drugprot", "splitt": "train"})


def test_prompt_bound_on_the_fixture() -> None:
    m = prompt_lengths.measure(prompt_lengths.build_taskset(split="train", data_path=str(FIXTURE_JSONL)))
    assert (m.tasks, m.system_chars, m.user_chars, m.token_bound, m.required_seq_len(2048)) == (
        27,
        1619,
        826,
        2573,
        4621,
    )


def test_bpe_token_counts_pool_bytes_over_tokens_and_name_the_longest() -> None:
    """count_tokens with a stand-in encoder (one token per 4 UTF-8 bytes, rounded up) on the fixture; the real
    vocabulary (Tekken, ``--bpe``) needs mistral-common, which the test env does not install."""
    taskset = prompt_lengths.build_taskset(split="train", data_path=str(FIXTURE_JSONL), negatives="all")
    quarter = lambda text: -(-len(text.encode("utf-8")) // 4)  # noqa: E731
    t = prompt_lengths.count_tokens(taskset, lambda text: [0] * quarter(text))
    per_task = [
        (
            quarter(prompt_lengths._text(task.data.system_prompt)) + quarter(prompt_lengths._text(task.data.prompt)),
            task.key,
        )
        for task in taskset
    ]
    assert (t.tasks, t.longest, t.mean) == (42, max(n for n, _ in per_task), sum(n for n, _ in per_task) / 42)
    assert t.longest_key == next(key for n, key in per_task if n == t.longest) == "90000002:T3:T4"
    assert 3.9 < t.bytes_per_token <= 4.0


def test_the_tekken_bpe_vocabulary_loads_and_tokenizes_real_text() -> None:
    pytest.importorskip("mistral_common", reason="--bpe runs under `uv run --with mistral-common`")
    encode = prompt_lengths.tekken_encoder()
    assert len(encode("Imatinib inhibits the c-kit tyrosine kinase.")) < len(
        "Imatinib inhibits the c-kit tyrosine kinase."
    )


def test_prompt_bound_on_the_fixture_in_extraction_mode() -> None:
    """One task per abstract (9 in the fixture's train split); the longest is 90000002's, 2,866 bytes."""
    taskset = prompt_lengths.build_taskset(split="train", data_path=str(FIXTURE_JSONL), mode="extraction")
    m = prompt_lengths.measure(taskset)
    assert (m.tasks, m.key, m.system_chars, m.user_chars, m.utf8_bytes, m.required_seq_len(2048)) == (
        9,
        "90000002",
        2155,
        711,
        2866,
        2866 + prompt_lengths.TEMPLATE_OVERHEAD_TOKENS + 2048,
    )


def test_base_config_quotes_its_seq_len_arithmetic() -> None:
    """The seq_len comment of configs/drugprot.toml is the measured bound and the config's own values: the real
    sample's longest prompt in bytes, plus the chat template overhead, plus the train completion tokens, is the
    bound the config's seq_len holds."""
    config = load_run(ROOT / BASE)
    completion = get(config, "orchestrator.train.sampling.max_completion_tokens")
    lines = (ROOT / BASE).read_text(encoding="utf-8").splitlines()
    comment = " ".join(line.removeprefix("# ") for line in lines if line.startswith("# "))
    size, overhead, seq_len = REAL_SAMPLE_MAX_PROMPT_BYTES, prompt_lengths.TEMPLATE_OVERHEAD_TOKENS, config["seq_len"]
    assert (
        f"prompt): {size:,} UTF-8 bytes -> at most {size:,} + {overhead} (chat template) tokens at <= 1 token per "
        f"byte, + {completion:,} completion tokens = {prompt_token_bound() + completion:,}. {seq_len:,} leaves room"
    ) in comment
    assert seq_len >= prompt_token_bound() + completion


def test_answer_lengths_on_the_fixture_in_extraction_mode() -> None:
    """The longest gold block is 90000006's: 4 relations, two INDIRECT-UPREGULATOR lines of 30 bytes and two
    INDIRECT-DOWNREGULATOR lines of 32 (`T1 | T2 | INDIRECT-UPREGULATOR`), between `<relations>` and
    `</relations>` lines; 90000005 has the most relations (5, shorter names)."""
    taskset = prompt_lengths.build_taskset(split="train", data_path=str(FIXTURE_JSONL), mode="extraction")
    a = prompt_lengths.measure_answers(taskset)
    block = len("<relations>\n") + 2 * 30 + 2 * 32 + 4 * len("\n") + len("</relations>")
    assert (a.most_relations, a.most_relations_key, a.utf8_bytes, a.key, a.relations) == (
        5,
        "90000005",
        block,
        "90000006",
        4,
    )
    assert block == 152


def test_pair_mode_has_no_answer_block() -> None:
    taskset = prompt_lengths.build_taskset(split="train", data_path=str(FIXTURE_JSONL))
    assert prompt_lengths.measure_answers(taskset) is None


def test_extraction_lengths_hold_the_longest_prompt_and_answer() -> None:
    """configs/rl/extraction.toml: the completion cap is the recipe's reasoning budget plus room for the longest
    gold relations block (<= 1 token per byte), and seq_len holds the longest prompt plus that cap, on the real
    sample (the constants its comment quotes) and on the fixture (measured here)."""
    config = load_run(ROOT / EXTRACTION)
    completion = completion_tokens(config)
    answer_room = completion - REASONING_TOKENS
    seq_len = min(seq_lens(config).values())
    taskset = prompt_lengths.build_taskset(split="train", data_path=str(FIXTURE_JSONL), mode="extraction")
    fixture_prompt, fixture_answer = prompt_lengths.measure(taskset), prompt_lengths.measure_answers(taskset)
    assert (completion, answer_room, seq_len) == (4096, 2048, 14336)
    assert answer_room >= max(REAL_SAMPLE_EXTRACTION_MAX_ANSWER_BYTES, fixture_answer.utf8_bytes)
    assert seq_len >= prompt_token_bound("extraction") + completion
    assert seq_len >= fixture_prompt.required_seq_len(completion)
    # the margin for the full split's longer abstracts: prompts up to 10,112 bytes, 1.31x the sample's longest
    room = seq_len - completion - prompt_lengths.TEMPLATE_OVERHEAD_TOKENS
    assert (room, round(room / REAL_SAMPLE_EXTRACTION_MAX_PROMPT_BYTES, 2)) == (10112, 1.31)
    assert get(config, "inference.vllm.max_model_len") == seq_len


def test_extraction_toml_quotes_the_real_sample_numbers() -> None:
    text = (ROOT / EXTRACTION).read_text(encoding="utf-8")
    for n in (
        REAL_SAMPLE_EXTRACTION_MAX_PROMPT_BYTES,
        prompt_token_bound("extraction"),
        REAL_SAMPLE_EXTRACTION_MAX_ANSWER_BYTES,
        REAL_SAMPLE_EXTRACTION_MOST_RELATIONS,
        REASONING_TOKENS,
        prompt_token_bound("extraction") + 4096,
        10112,
    ):
        assert f"{n:,}" in text, n
    assert "scripts/prompt_lengths.py --data-path FILE\n# --split train --mode extraction" in text


def test_readme_quotes_the_measured_numbers() -> None:
    text = training_docs()
    numbers = (REAL_SAMPLE_MAX_PROMPT_CHARS, REAL_SAMPLE_MAX_PROMPT_BYTES, prompt_token_bound())
    for quoted in (*(f"{n:,}" for n in numbers), f"{prompt_token_bound() + 2048:,}", "10,240"):
        assert quoted in text, quoted
    assert "scripts/prompt_lengths.py --data-path" in text
    extraction = (
        REAL_SAMPLE_EXTRACTION_MAX_PROMPT_CHARS,
        REAL_SAMPLE_EXTRACTION_MAX_PROMPT_BYTES,
        prompt_token_bound("extraction"),
        REAL_SAMPLE_EXTRACTION_MAX_ANSWER_BYTES,
        REAL_SAMPLE_EXTRACTION_MOST_RELATIONS,
        prompt_token_bound("extraction") + 4096,
        4096,
        14336,
    )
    for n in extraction:
        assert f"{n:,}" in text, n
    assert "uv run --no-sync rl @ configs/drugprot.toml @ configs/rl/extraction.toml" in text
    assert "--mode extraction --max-completion-tokens 4096" in text


# The one way to launch a run, from this repository (docs/training/recipe.md, "Commands"); scripts/prime_rl_check.sh
# dry-runs every config's `# Usage:` line exactly so where prime-rl is installed.
RL_COMMAND = "uv run --no-sync rl @ configs/drugprot.toml"


def test_both_readmes_launch_rl_the_same_way() -> None:
    top, configs = ROOT_README.read_text(encoding="utf-8"), training_docs()
    assert f"`UV_PROJECT=../prime-rl {RL_COMMAND}`" in top
    assert "export UV_PROJECT=../prime-rl\n" in configs
    assert f"{RL_COMMAND} --run.name trinity-drugprot " in configs
    docs = [top, configs, *(p.read_text(encoding="utf-8") for p in RUN_CONFIGS)]
    assert not [text for text in docs if re.search(r"uv run rl\b", text)]  # no second way


# The 8-GPU split under extraction mode, as configs/rl/extraction.toml's header gives it.
NODE8_EXTRACTION = [BASE, "configs/rl/node8.toml", EXTRACTION]


def test_extraction_on_the_8_gpu_node() -> None:
    command = "uv run --no-sync rl " + " ".join(f"@ {rel}" for rel in NODE8_EXTRACTION)
    assert f"#   {command}\n" in (ROOT / EXTRACTION).read_text(encoding="utf-8")
    config = merge_chain(NODE8_EXTRACTION)
    assert problems(config, prompt_token_bound("extraction")) == []
    expected = {**RECIPE, **VARIANTS["configs/rl/node8.toml"], **VARIANTS[EXTRACTION]}
    assert {key: get(config, key) for key in expected} == expected


def test_extraction_eval_toml_matches_the_rl_eval() -> None:
    """configs/eval/extraction.toml: the tasks and sampling of the extraction run's in-training eval."""
    eval_toml = tomllib.loads(EVAL_EXTRACTION.read_text(encoding="utf-8"))
    rl = load_run(ROOT / EXTRACTION)
    [(_, _, source)] = [found for found in sources(rl) if found[0] == "eval"]
    rl_sampling = sampling(rl, "eval", source)
    assert eval_toml["env"]["taskset"] == source["env"]["taskset"]
    assert (eval_toml["sampling"]["temperature"], eval_toml["sampling"]["max_tokens"]) == (0.7, 4096)
    assert (rl_sampling["temperature"], rl_sampling["max_completion_tokens"]) == (0.7, 4096)
    fields = DrugprotConfig.model_validate(eval_toml["env"]["taskset"])
    assert (fields.mode, fields.negatives, fields.split, fields.num_tasks) == ("extraction", 0, "validation", 300)
    taskset = DrugprotTaskset(fields.model_copy(update={"data_path": str(FIXTURE_JSONL)}))
    assert sorted(task.key for task in taskset) == FIXTURE_PMIDS  # shuffled: one task per abstract


def test_extraction_eval_toml_dry_run(tmp_path: Path) -> None:
    """``vf-eval @ configs/eval/extraction.toml --dry-run`` (``eval @ ...`` on verifiers 0.3.x) accepts every key
    and resolves extraction mode with drugprot's pinned seat."""
    script = Path(sys.executable).with_name("eval" if HAS_LEGACY else "vf-eval")
    if not script.exists():
        pytest.skip(f"no {script.name} script next to {sys.executable}")
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(script), "@", str(EVAL_EXTRACTION), "--dry-run", "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    config = resolved_eval(out)
    taskset = config["env"]["taskset"]
    assert (config["model"], config["client"]["base_url"], config["client"]["api_key_var"]) == (
        "arcee/trinity-mini",
        "https://api.pinference.ai/api/v1",
        "PRIME_API_KEY",
    )
    assert (config["sampling"]["temperature"], config["sampling"]["max_tokens"]) == (0.7, 4096)
    assert (config["num_rollouts"], config["push"]) == (1, False)
    keys = ("id", "split", "mode", "negatives", "num_tasks", "shuffle", "seed", "data_path")
    assert {k: taskset[k] for k in keys} == {
        "id": "drugprot",
        "split": "validation",
        "mode": "extraction",
        "negatives": 0,
        "num_tasks": 300,
        "shuffle": True,
        "seed": 0,
        "data_path": None,
    }
    agent = config["env"]["agent"]
    assert (agent["harness"]["id"], agent["runtime"]["type"]) == ("drugprot", "subprocess")


OFFICIAL_EVAL = CONFIGS / "eval" / "official.toml"


def readme_final_eval_commands() -> list[list[str]]:
    """The ``uv run vf-eval @ configs/eval/official.toml ...`` lines of docs/training/recipe.md's "Evaluating it", as
    argv after ``uv run`` (how the final adapter is scored: the in-training evals never see it)."""
    section = training_docs().split("## Evaluating it", 1)[1].split("\n## ", 1)[0]
    prefix = "uv run vf-eval @ configs/eval/official.toml"
    return [line.split()[2:] for line in section.splitlines() if line.startswith(prefix)]


def test_readme_final_eval_commands_dry_run_as_written(tmp_path: Path) -> None:
    """Both ``vf-eval`` lines of "Evaluating it" (base model, then the adapter served as ``drugprot``) resolve as
    written, from the repository root: the official eval, the model each names, the run directory each writes."""
    commands = readme_final_eval_commands()
    assert [c[3:] for c in commands] == [["--run.name", "base"], ["-m", "drugprot", "--run.name", "step100"]]
    script = Path(sys.executable).with_name("eval" if HAS_LEGACY else "vf-eval")
    if not script.exists() or HAS_LEGACY:
        pytest.skip(f"the README's commands are for verifiers 0.4's vf-eval, not {script.name} here")
    (tmp_path / "configs").symlink_to(CONFIGS)  # the repository root as the commands see it, outputs/ kept apart
    for argv, (model, run) in zip(commands, [("trinity-mini", "base"), ("drugprot", "step100")], strict=True):
        proc = subprocess.run([str(script), *argv[1:], "--dry-run"], capture_output=True, text=True, cwd=tmp_path,
                              timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        config = json.loads((tmp_path / "outputs" / run / "configs" / "resolved" / "eval.json").read_text())
        assert (config["model"], config["env"]["taskset"]["negatives"]) == (model, "all")


def test_official_eval_toml_is_the_whole_split_in_the_official_setting() -> None:
    """configs/eval/official.toml: every same-sentence candidate pair of the whole validation split (no num_tasks),
    sampled as in training, so its official micro-F1 is comparable with BioCreative VII's setting."""
    config = tomllib.loads(OFFICIAL_EVAL.read_text(encoding="utf-8"))
    assert config["env"]["taskset"] == {"id": "drugprot", "split": "validation", "mode": "pair", "negatives": "all"}
    assert (config["sampling"]["temperature"], config["sampling"]["max_tokens"], config["num_rollouts"]) == (
        0.7,
        2048,
        1,
    )
    fields = DrugprotConfig.model_validate(config["env"]["taskset"])
    assert (fields.num_tasks, fields.negatives) == (None, "all")
    taskset = DrugprotTaskset(fields.model_copy(update={"data_path": str(FIXTURE_JSONL)}))
    assert prompt_lengths.measure(taskset).tasks == FIXTURE_PROMPTS["pair", "all"][0]  # every candidate pair


def test_official_eval_toml_dry_run(tmp_path: Path) -> None:
    """``vf-eval @ configs/eval/official.toml --dry-run`` (``eval @ ...`` on 0.3.x) selects no limit."""
    script = Path(sys.executable).with_name("eval" if HAS_LEGACY else "vf-eval")
    if not script.exists():
        pytest.skip(f"no {script.name} script next to {sys.executable}")
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(script), "@", str(OFFICIAL_EVAL), "--dry-run", "-o", str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    config = resolved_eval(out)
    taskset = config["env"]["taskset"]
    assert (config["model"], config["client"]["base_url"], config["num_rollouts"]) == (
        "trinity-mini",
        "http://localhost:8000/v1",
        1,
    )
    assert {k: taskset[k] for k in ("split", "mode", "negatives", "num_tasks", "data_path")} == {
        "split": "validation", "mode": "pair", "negatives": "all", "num_tasks": None, "data_path": None,
    }  # fmt: skip
    limit = config.get("num_tasks") if HAS_LEGACY else config["select"]["limit"]
    assert limit in (None, -1)


def test_recipe_costs_are_the_package_defaults() -> None:
    """The default recipe trains on the utility at the package's default costs (one source of truth, with their
    derivation in drugprot.core.rewards): no config sets them, and the taskset resolves to them."""
    from drugprot.core.rewards import Costs

    for path in RUN_CONFIGS:
        for _, label, source in sources(load_run(path)):
            assert {"fp_cost", "fn_cost"}.isdisjoint(source["env"]["taskset"]), (path, label)
    train = get(load_run(ROOT / BASE), "orchestrator.train.source")[0]["env"]["taskset"]
    fields = DrugprotConfig.model_validate({**train, "data_path": str(FIXTURE_JSONL)})
    assert (fields.reward, fields.fp_cost, fields.fn_cost) == ("utility", Costs().fp, Costs().fn)


def test_every_eval_is_in_a_fixed_setting_whatever_the_train_source() -> None:
    """The default recipe's eval sets no reward knob: its official micro-F1 does not depend on the reward trained
    with, so runs of different recipes compare on it."""
    for path in RUN_CONFIGS:
        evaluation = get(load_run(path), "orchestrator.eval.source")[0]["env"]["taskset"]
        if str(path.relative_to(ROOT)) != SEED:
            assert {"reward", "fp_cost", "fn_cost"}.isdisjoint(evaluation), path


# Each silent pitfall: a change to the base config, and the problems our check reports for it.
def _drop_train_runtime(c: dict[str, Any]) -> None:
    del c["orchestrator"]["train"]["source"][0]["env"]["agent"]["runtime"]


def _drop_eval_sampling(c: dict[str, Any]) -> None:
    del c["orchestrator"]["eval"]["sampling"]


def _eval_top_k(c: dict[str, Any]) -> None:
    c["orchestrator"]["eval"]["sampling"] |= {"top_k": -1, "min_p": 0.0}


def _model_generation_config(c: dict[str, Any]) -> None:
    del c["inference"]["vllm"]["generation_config"]


def _short_seq_len(c: dict[str, Any]) -> None:
    c["seq_len"] = 4096


def _short_max_model_len(c: dict[str, Any]) -> None:
    c["inference"]["vllm"]["max_model_len"] = 8192


def _router_target(c: dict[str, Any]) -> None:
    c["trainer"]["model"]["lora"]["target_modules"] = ["q_proj", "gate"]


def _renderer_typo(c: dict[str, Any]) -> None:
    c["orchestrator"]["renderer"]["reasoning_parsr"] = "think"


def _bogus_reasoning_parser(c: dict[str, Any]) -> None:
    c["orchestrator"]["renderer"]["reasoning_parser"] = "deepseek_r1"


PITFALLS = {
    "missing_runtime": (
        _drop_train_runtime,
        [
            "orchestrator.train.source[0] (drugprot): env.agent.runtime.type is None, not 'subprocess' "
            "(unset means remote Prime sandboxes)"
        ],
    ),
    "eval_sampling_not_inherited": (
        _drop_eval_sampling,
        [
            "orchestrator.eval.source[0] (drugprot-validation): sampling temperature, max_completion_tokens, "
            "top_p unset (not inherited; server default)"
        ],
    ),
    "eval_top_k_in_extra_body": (
        _eval_top_k,
        [
            "orchestrator.eval.source[0] (drugprot-validation): sampling top_k, min_p set, sent in a literal "
            "extra_body vLLM does not read"
        ],
    ),
    "eval_sampling_from_the_model": (
        _model_generation_config,
        ["inference.vllm.generation_config is not 'vllm': the model's generation config sets the eval's top_k/min_p"],
    ),
    "seq_len_below_prompt_plus_completion": (
        _short_seq_len,
        [  # the shared seq_len reaches both components
            "trainer.model.seq_len 4096 < 5974 prompt + 2048 completion tokens",
            "orchestrator.seq_len 4096 < 5974 prompt + 2048 completion tokens",
        ],
    ),
    "max_model_len_below_seq_len": (
        _short_max_model_len,
        ["inference.vllm.max_model_len 8192 < seq_len 10240"],
    ),
    "unchecked_lora_target": (
        _router_target,
        ["trainer.model.lora.target_modules ['gate'] are not AFMoE LoRA targets"],
    ),
    "renderer_key_to_chat_template": (
        _renderer_typo,
        ["orchestrator.renderer: ['reasoning_parsr'] would be passed to the chat template"],
    ),
    "bogus_reasoning_parser": (
        _bogus_reasoning_parser,
        ["orchestrator.renderer.reasoning_parser 'deepseek_r1' is not {'think'}"],
    ),
}


def pitfall_config(name: str) -> dict[str, Any]:
    config = load_run(ROOT / BASE)
    PITFALLS[name][0](config)
    return config


@pytest.mark.parametrize("name", PITFALLS)
def test_pitfall_is_caught(name: str) -> None:
    assert problems(pitfall_config(name), prompt_token_bound()) == PITFALLS[name][1]


# An overlay that sets only the mode on a source: its [[...source]] list replaces the base's, so the base's
# split, shuffle and seed are gone (the split falls back to DrugprotConfig's "validation"). Hence
# configs/rl/extraction.toml restates both sources in full.
MODE_ONLY_OVERLAY = {
    "orchestrator": {
        "train": {"source": [{"name": "drugprot", "env": {"taskset": {"id": "drugprot", "mode": "extraction"}}}]}
    }
}


def test_an_overlay_setting_only_the_mode_is_caught() -> None:
    config = deep_merge(load_run(ROOT / BASE), MODE_ONLY_OVERLAY)
    assert source_problems(config) == [
        "orchestrator.train.source[0] (drugprot): env.taskset.split is None, not 'train'",
        "orchestrator.train.source[0] (drugprot): env.agent.harness.id is None, not 'drugprot'",
        "orchestrator.train.source[0] (drugprot): env.agent.runtime.type is None, not 'subprocess' "
        "(unset means remote Prime sandboxes)",
    ]


# ------------------------------------------------------------------- vf-eval: model aliases, eval configs, README

ENDPOINTS = CONFIGS / "endpoints.toml"
EVAL_CONFIGS = CONFIGS / "eval"
ROOT_README = ROOT / "README.md"


def test_endpoint_aliases() -> None:
    """The alias registry: exact entries (legacy ``vf-eval`` reads it from ./configs/endpoints.toml)."""
    entries = tomllib.loads(ENDPOINTS.read_text(encoding="utf-8"))["endpoint"]
    assert entries == [
        {"endpoint_id": "trinity-mini", "model": "arcee/trinity-mini", "url": "https://api.pinference.ai/api/v1",
         "key": "PRIME_API_KEY", "type": "openai_chat_completions"},
        {"endpoint_id": "trinity-mini-openrouter", "model": "arcee-ai/trinity-mini",
         "url": "https://openrouter.ai/api/v1", "key": "OPENROUTER_API_KEY", "type": "openai_chat_completions"},
        {"endpoint_id": "trinity-mini-arcee", "model": "trinity-mini", "url": "https://api.arcee.ai/api/v1",
         "key": "ARCEE_API_KEY", "type": "openai_chat_completions"},
        {"endpoint_id": "trinity-mini-local", "model": "trinity-mini", "url": "http://localhost:8000/v1",
         "key": "VLLM_API_KEY", "type": "openai_chat_completions"},
    ]  # fmt: skip


@legacy_only
def test_endpoint_registry_loads_in_legacy_vf_eval() -> None:
    """verifiers' own loader accepts the file and resolves each alias to one endpoint."""
    from verifiers.legacy.utils.eval_utils import load_endpoints

    endpoints = load_endpoints(str(ENDPOINTS))
    resolved = {alias: [(e.model, e.base_url, e.api_key_var) for e in group] for alias, group in endpoints.items()}
    assert resolved == {
        "trinity-mini": [("arcee/trinity-mini", "https://api.pinference.ai/api/v1", "PRIME_API_KEY")],
        "trinity-mini-openrouter": [("arcee-ai/trinity-mini", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")],
        "trinity-mini-arcee": [("trinity-mini", "https://api.arcee.ai/api/v1", "ARCEE_API_KEY")],
        "trinity-mini-local": [("trinity-mini", "http://localhost:8000/v1", "VLLM_API_KEY")],
    }


def resolved_eval(out: Path) -> dict[str, Any]:
    """The resolved config a ``--dry-run`` wrote under ``out``: verifiers 0.3.1 and 0.4.0 write
    ``configs/resolved/eval.json``, prime-rl's pinned verifiers a60a606 ``configs/eval.json``."""
    (resolved,) = [*out.glob("*/configs/resolved/eval.json"), *out.glob("*/configs/eval.json")]
    return json.loads(resolved.read_text(encoding="utf-8"))


EXPECTED_EVAL = {
    "trinity-mini.toml": ("arcee/trinity-mini", "https://api.pinference.ai/api/v1", "PRIME_API_KEY"),
    "local-vllm.toml": ("trinity-mini", "http://localhost:8000/v1", "VLLM_API_KEY"),
}


def test_eval_configs_are_the_documented_ones() -> None:
    # extraction.toml (extraction mode, 4,096 tokens) is dry-run by test_extraction_eval_toml_dry_run, official.toml
    # (the whole validation split) by test_official_eval_toml_dry_run
    assert sorted(p.name for p in EVAL_CONFIGS.glob("*.toml")) == sorted(
        [*EXPECTED_EVAL, "extraction.toml", "official.toml"]
    )


@pytest.mark.parametrize("name", sorted(EXPECTED_EVAL))
def test_eval_config_dry_run(name: str, tmp_path: Path) -> None:
    """``vf-eval @ configs/eval/<name> --dry-run`` (0.4; ``eval @ …`` on 0.3.x) accepts every key and resolves it."""
    script = Path(sys.executable).with_name("eval" if HAS_LEGACY else "vf-eval")
    if not script.exists():
        pytest.skip(f"no {script.name} script next to {sys.executable}")
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(script), "@", str(EVAL_CONFIGS / name), "--dry-run", "-o", str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    config = resolved_eval(out)
    model, base_url, key = EXPECTED_EVAL[name]
    taskset = config["env"]["taskset"]
    assert (config["model"], config["client"]["base_url"], config["client"]["api_key_var"]) == (model, base_url, key)
    assert (config["sampling"]["temperature"], config["sampling"]["max_tokens"]) == (0.7, 2048)
    assert (config["num_rollouts"], config["push"]) == (1, False)
    assert {k: taskset[k] for k in ("id", "split", "num_tasks", "shuffle", "seed", "data_path", "negatives")} == {
        "id": "drugprot", "split": "validation", "num_tasks": 100, "shuffle": True, "seed": 0, "data_path": None,
        "negatives": 0,
    }  # fmt: skip
    agent = config["env"]["agent"]
    assert (agent["harness"]["id"], agent["runtime"]["type"]) == ("drugprot", "subprocess")


# The main-job commands README.md opens with, and the 0.3.x one of docs/index.md (Getting started).
README_V1_COMMAND = "vf-eval drugprot -m arcee/trinity-mini -n 100"
README_LEGACY_COMMAND = "vf-eval drugprot -m trinity-mini -n 100 -r 1 -s"
PRIME_INFERENCE = ("arcee/trinity-mini", "https://api.pinference.ai/api/v1", "PRIME_API_KEY")
GETTING_STARTED = ROOT / "docs" / "index.md"


def first_bash_block(path: Path) -> list[str]:
    """The command lines of the file's first ``bash`` block, comments dropped."""
    block = path.read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line and not line.startswith("#")]


def test_readme_opens_with_the_demo_the_main_job_and_the_tests() -> None:
    """README.md's first block: the keyless demo, the main job and its report, the fast loop and the whole suite."""
    assert first_bash_block(ROOT_README) == [
        "uv run drugprot demo",
        "export PRIME_API_KEY=...",
        f"uv run {README_V1_COMMAND}",
        "uv run drugprot report outputs/<run dir>",
        'uv run pytest -m "not slow" --ignore=tests/tools/adapters',
        "scripts/test.sh",
    ]
    lines = ROOT_README.read_text(encoding="utf-8").splitlines()
    assert "uv run drugprot demo" in lines[:25]  # the first screen


def test_getting_started_opens_the_main_job_with_the_documented_commands() -> None:
    lines = first_bash_block(GETTING_STARTED)
    assert lines[:3] == ["export PRIME_API_KEY=...", f"uv run {README_V1_COMMAND}", README_LEGACY_COMMAND]
    assert lines[3:5] == ["uv run vf-eval @ configs/eval/trinity-mini.toml", "uv run drugprot report outputs/<run dir>"]


def test_readme_v1_command_dry_run(tmp_path: Path) -> None:
    """The README's first command resolves to Prime Inference's defaults and drugprot's pinned seat (0.3.x's v1
    CLI is ``eval``), with no ``$PRIME_API_KEY`` needed to resolve it."""
    script = Path(sys.executable).with_name("eval" if HAS_LEGACY else "vf-eval")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PRIME_API_KEY"}
    argv = [str(script), *shlex.split(README_V1_COMMAND)[1:], "--dry-run", "-o", str(out)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    config = resolved_eval(out)
    assert (config["model"], config["client"]["base_url"], config["client"]["api_key_var"]) == PRIME_INFERENCE
    limit = config["num_tasks"] if HAS_LEGACY else config["select"]["limit"]  # 0.3.1: -n is num_tasks
    taskset = config["env"]["taskset"]
    assert (limit, taskset["split"], taskset["data_path"], taskset["num_tasks"]) == (100, "validation", None, None)
    agent = config["env"]["agent"]
    assert (agent["harness"]["id"], agent["runtime"]["type"]) == ("drugprot", "subprocess")


@legacy_only
def test_readme_legacy_command_resolves_the_alias_from_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's 0.3.x command, parsed and resolved by the legacy ``vf-eval``'s own ``main`` from the repository
    root, reaches ``arcee/trinity-mini`` on Prime Inference through ``configs/endpoints.toml``; only the final
    ``run_evaluations`` is replaced by a recorder, so no request is made."""
    import verifiers.legacy.scripts.eval as legacy_eval

    recorded: list[Any] = []

    async def record(run_config: Any, **_: Any) -> None:
        recorded.append(run_config)

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    monkeypatch.setattr(legacy_eval, "run_evaluations", record)
    legacy_eval.main([*shlex.split(README_LEGACY_COMMAND)[1:], "--disable-tui"])
    (run_config,) = recorded
    (config,) = run_config.evals
    client = config.client_config
    assert (config.model, client.api_base_url, client.api_key_var) == PRIME_INFERENCE
    assert (config.env_id, config.endpoint_id, config.env_args) == ("drugprot", "trinity-mini", {})
    assert (config.num_examples, config.rollouts_per_example, config.save_results) == (100, 1, True)


# ---------------------------------------------------------------------------------------------- prime-rl


@pytest.fixture(scope="module")
def rl_config() -> Any:
    """prime-rl's RLConfig (skips where prime-rl's config package is not installed, as in CI)."""
    return pytest.importorskip("prime_rl.configs.rl").RLConfig


def rl_cli(rl_config: Any, path: Path, *flags: str, chain: list[str] | None = None) -> Any:
    """prime-rl's own parse of the file's ``# Usage:`` chain (or of ``chain``), as ``uv run rl`` does it."""
    from pydantic_config import cli

    args = [arg for rel in (chain or usage_chain(path)) for arg in ("@", str(ROOT / rel))]
    return cli(rl_config, args=[*args, *flags])


# What prime-rl resolves per config: GPU split, vLLM data parallelism, trainer data-parallel workers, EP.
RESOLVED = {
    BASE: ("single_node", 1, 1, 1, 1, "auto"),
    EXTRACTION: ("single_node", 1, 1, 1, 1, "auto"),
    "configs/rl/node8.toml": ("single_node", 4, 4, 4, 4, 4),
    SEED: ("single_node", 1, 1, 1, 1, "auto"),
    SLURM: ("multi_node", None, None, 8, 8, 8),
    "configs/rl/smoke.toml": ("single_node", 1, 1, 1, 1, "auto"),
}


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=RUN_IDS)
def test_prime_rl_accepts_and_resolves(rl_config: Any, path: Path) -> None:
    from drugprot.envs.taskset import DrugprotEnvConfig

    cfg = rl_cli(rl_config, path)
    rel = str(path.relative_to(ROOT))
    d = cfg.deployment
    assert (
        d.type,
        getattr(d, "num_infer_gpus", None),
        getattr(d, "num_train_gpus", None),
        cfg.inference.vllm.data_parallel_size,
        cfg.orchestrator.num_train_workers,
        cfg.trainer.model.ep,
    ) == RESOLVED[rel]
    expected_model = "Qwen/Qwen3-0.6B" if rel.endswith("smoke.toml") else "arcee-ai/Trinity-Mini"
    assert (cfg.trainer.model.name, cfg.orchestrator.model.name, cfg.inference.vllm.model) == (expected_model,) * 3
    seq_len = 14336 if rel == EXTRACTION else 10240
    assert (cfg.trainer.model.seq_len, cfg.orchestrator.seq_len, cfg.inference.vllm.max_model_len) == (seq_len,) * 3
    lora = cfg.trainer.model.lora
    assert (lora.rank, lora.alpha, lora.dropout, lora.target_modules, lora.modules_to_save) == (
        16,
        64.0,
        0.0,
        RECIPE_TARGETS,
        [],
    )
    assert (
        cfg.orchestrator.model.lora.name,
        cfg.inference.vllm.enable_lora,
        cfg.inference.vllm.max_lora_rank,
    ) == (
        "r16-a64.0",
        True,
        16,
    )
    assert (cfg.trainer.weight_broadcast.type, cfg.inference.vllm.enable_expert_parallel) == (
        "filesystem",
        False,
    )
    assert (cfg.orchestrator.renderer.name, cfg.orchestrator.renderer.reasoning_parser) == (
        "default",
        "think",
    )
    assert cfg.orchestrator.renderer.model_extra == {}
    for source in [*cfg.orchestrator.train.source, *cfg.orchestrator.eval.source]:
        assert isinstance(source.env, DrugprotEnvConfig) and isinstance(source.env.taskset, DrugprotConfig)
        assert (source.env.agent.harness.id, source.env.agent.runtime.type) == ("drugprot", "subprocess")
    [train] = cfg.orchestrator.train.source
    [evaluation] = cfg.orchestrator.eval.source
    for source, expected in zip((train, evaluation), tasksets_of(rel), strict=True):
        assert {key: getattr(source.env.taskset, key) for key in expected} == expected
    tokens = {"configs/rl/smoke.toml": 1024, EXTRACTION: 4096}.get(rel, 2048)
    assert (train.sampling.temperature, train.sampling.max_completion_tokens) == (0.7, tokens)
    s = evaluation.sampling
    assert (s.temperature, s.max_completion_tokens, s.top_p, s.top_k, s.min_p) == (0.7, tokens, 1.0, None, None)
    assert cfg.inference.vllm.model_extra["generation_config"] == "vllm"
    assert (cfg.trainer.ckpt.interval, cfg.trainer.ckpt.keep_last, cfg.trainer.ckpt.keep_interval) == (50, 1, None)
    assert (cfg.orchestrator.ckpt.keep_last, cfg.orchestrator.max_off_policy_steps) == (1, 2)


def test_prime_rl_resolves_extraction_on_the_8_gpu_node(rl_config: Any) -> None:
    cfg = rl_cli(rl_config, ROOT / EXTRACTION, chain=NODE8_EXTRACTION)
    d = cfg.deployment
    assert (d.num_infer_gpus, d.num_train_gpus, cfg.inference.vllm.data_parallel_size, cfg.trainer.model.ep) == (
        4,
        4,
        4,
        4,
    )
    assert (cfg.trainer.model.seq_len, cfg.orchestrator.seq_len, cfg.inference.vllm.max_model_len) == (14336,) * 3
    sources_ = [*cfg.orchestrator.train.source, *cfg.orchestrator.eval.source]
    assert [(s.env.taskset.mode, s.sampling.max_completion_tokens) for s in sources_] == [("extraction", 4096)] * 2


def test_prime_rl_wandb_flag(rl_config: Any) -> None:
    cfg = rl_cli(rl_config, ROOT / BASE, "--monitors.wandb.project", "drugprot")
    assert (cfg.trainer.monitors.wandb.project, cfg.orchestrator.monitors.wandb.project) == ("drugprot",) * 2


def test_prime_rl_default_lora_targets(rl_config: Any) -> None:
    """With ``target_modules`` unset, prime-rl falls back to the default this file names."""
    config = load_run(ROOT / BASE)
    del config["trainer"]["model"]["lora"]["target_modules"]
    assert rl_config.model_validate(config).trainer.model.lora.target_modules == PRIME_RL_DEFAULT_TARGETS


def _runtime_from_drugprot_seat(c: Any) -> bool:
    """A missing runtime resolves from drugprot's own pinned seat (``DrugprotEnvConfig``); verifiers' generic
    agent default, which any other env id or an edited seat falls back to, is a remote Prime sandbox."""
    import verifiers.v1 as vf

    resolved = c.orchestrator.train.source[0].env.agent.runtime.type
    return (resolved, vf.AgentConfig().runtime.type) == ("subprocess", "prime")


# What prime-rl makes of each pitfall: it validates, and resolves to the silent behaviour.
SILENT = {
    "missing_runtime": _runtime_from_drugprot_seat,
    "eval_sampling_not_inherited": lambda c: (
        (
            c.orchestrator.eval.source[0].sampling.temperature,
            c.orchestrator.eval.source[0].sampling.max_completion_tokens,
        )
        == (None, None)
    ),
    # prime-rl puts the eval's top_k / min_p into extra_body, which its eval client sends as a literal key
    "eval_top_k_in_extra_body": lambda c: (
        c.orchestrator.eval.source[0].sampling.to_sampling_args()["extra_body"] == {"top_k": -1, "min_p": 0.0}
    ),
    "eval_sampling_from_the_model": lambda c: "generation_config" not in (c.inference.vllm.model_extra or {}),
    "seq_len_below_prompt_plus_completion": lambda c: (c.trainer.model.seq_len, c.orchestrator.seq_len) == (4096, 4096),
    "max_model_len_below_seq_len": lambda c: (c.inference.vllm.max_model_len, c.trainer.model.seq_len) == (8192, 10240),
    "unchecked_lora_target": lambda c: c.trainer.model.lora.target_modules == ["q_proj", "gate"],
    "renderer_key_to_chat_template": lambda c: c.orchestrator.renderer.model_extra == {"reasoning_parsr": "think"},
    "bogus_reasoning_parser": lambda c: c.orchestrator.renderer.reasoning_parser == "deepseek_r1",
}


@pytest.mark.parametrize("name", PITFALLS)
def test_prime_rl_lets_the_pitfall_through(rl_config: Any, name: str) -> None:
    assert SILENT.keys() == PITFALLS.keys()
    assert SILENT[name](rl_config.model_validate(pitfall_config(name)))


def test_prime_rl_replaces_the_source_list_of_an_overlay(rl_config: Any, tmp_path: Path) -> None:
    """prime-rl accepts the mode-only overlay and trains on the validation split, unshuffled."""
    overlay = tmp_path / "mode-only.toml"
    overlay.write_text(
        '[[orchestrator.train.source]]\nname = "drugprot"\n\n'
        '[orchestrator.train.source.env.taskset]\nid = "drugprot"\nmode = "extraction"\n',
        encoding="utf-8",
    )
    assert tomllib.loads(overlay.read_text(encoding="utf-8")) == MODE_ONLY_OVERLAY
    cfg = rl_cli(rl_config, ROOT / BASE, chain=[BASE, str(overlay)])
    [train] = cfg.orchestrator.train.source
    assert (train.env.taskset.mode, train.env.taskset.split, train.env.taskset.shuffle) == (
        "extraction",
        "validation",
        False,
    )


def test_the_reports_forecast_uses_the_recipes_batch_size() -> None:
    from drugprot.evaluation.forecast import RECIPE_BATCH_SIZE

    assert get(load_run(CONFIGS / "drugprot.toml"), "orchestrator.batch_size") == RECIPE_BATCH_SIZE


def test_the_reports_probe_rule_uses_the_recipes_group_size() -> None:
    from drugprot.evaluation.forecast import RECIPE_GROUP_SIZE

    assert get(load_run(CONFIGS / "drugprot.toml"), "orchestrator.group_size") == RECIPE_GROUP_SIZE
