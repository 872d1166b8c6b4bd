"""The verifiers v0 (legacy) adapter ``drugprot.load_environment``, the model aliases and the v1 eval configs.

Tests that need the legacy stack (verifiers 0.3.x) skip on 0.4.x, where the adapter must instead raise
``LegacyVerifiersUnavailable``. v0 and v1 are checked to score the reply table of ``test_parsing`` identically:
v0 through a real legacy rollout (``env.run_rollout`` with a client that returns scripted chat completions, so the
legacy OpenAI client, ``reasoning_content`` handling and ``Rubric.score_rollout`` all run), v1 through
``await task.score(trace)``.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import inspect
import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import drugprot
from drugprot.core import labels, prompts, scoring
from drugprot.core.errors import DrugprotConfigError, DrugprotDataError, DrugprotError, DrugprotHubError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.envs import legacy
from drugprot.envs.legacy import DATA_PATH_HINT, LegacyVerifiersUnavailable, load_environment, v1_flags
from tests.conftest import FIXTURE_JSONL
from tests.core.test_parsing import CASES, GOLD
from tests.envs.traces import make_trace

ROOT = Path(__file__).resolve().parents[2]
ENDPOINTS = ROOT / "configs" / "endpoints.toml"
README = ROOT / "README.md"
EVAL_CONFIGS = ROOT / "configs" / "eval"

HAS_LEGACY = importlib.util.find_spec("verifiers.legacy") is not None
legacy_only = pytest.mark.skipif(
    not HAS_LEGACY, reason="verifiers >= 0.4 has no legacy (v0) stack; covered by test_error_without_legacy_stack"
)

# The fixture's train split (27 pair tasks): task key -> gold letters (``answer`` of the legacy rows).
FIXTURE_ANSWERS = [
    ("90000001:T1:T2", "E,K"), ("90000001:T3:T4", "K"), ("90000001:T5:T4", "K"), ("90000002:T3:T4", "I"),
    ("90000002:T5:T6", "F"), ("90000002:T7:T8", "A"), ("90000003:T3:T4", "B"), ("90000003:T7:T6", "E"),
    ("90000005:T1:T2", "I"), ("90000005:T3:T4", "I"), ("90000005:T5:T6", "F"), ("90000005:T7:T8", "F"),
    ("90000005:T7:T9", "F"), ("90000006:T1:T2", "B"), ("90000006:T1:T3", "A"), ("90000006:T4:T5", "B"),
    ("90000006:T4:T6", "A"), ("90000007:T1:T2", "M"), ("90000007:T4:T3", "K"), ("90000007:T5:T3", "J"),
    ("90000007:T6:T7", "L"), ("90000008:T3:T4", "G"), ("90000008:T5:T6", "H"), ("90000008:T7:T8", "D"),
    ("90000009:T1:T2", "C"), ("90000009:T3:T2", "C"), ("90000009:T4:T5", "C"),
]  # fmt: skip

ROW0_USER_PROMPT = (
    "Abstract (PMID 90000001):\n<chemical>Lorvastatin</chemical> is a substrate and a competitive inhibitor of "
    "<gene>CYP3A4</gene>. In human liver microsomes lorvastatin was metabolised by CYP3A4 and inhibited the "
    "6beta-hydroxylation of testosterone (Ki = 2.1 uM). Metabolism of testosterone by CYP2C enzymes was unaffected."
    '\n\nChemical: "Lorvastatin" (the mention marked <chemical>...</chemical>)\nGene/protein: "CYP3A4" (the mention '
    "marked <gene>...</gene>)\n\nWhat is the relation between the marked chemical and the marked gene/protein?\n\n"
    "Options:\nA. INDIRECT-DOWNREGULATOR\nB. INDIRECT-UPREGULATOR\nC. DIRECT-REGULATOR\nD. ACTIVATOR\nE. INHIBITOR\n"
    "F. AGONIST\nG. AGONIST-ACTIVATOR\nH. AGONIST-INHIBITOR\nI. ANTAGONIST\nJ. PRODUCT-OF\nK. SUBSTRATE\n"
    "L. SUBSTRATE_PRODUCT-OF\nM. PART-OF\n\nAnswer with the letter of one option in \\boxed{}."
)
ROW0_INFO = {
    "key": "90000001:T1:T2",
    "pmid": "90000001",
    "arg1": "T1",
    "arg2": "T2",
    "labels": ["INHIBITOR", "SUBSTRATE"],
    "chemical": "Lorvastatin",
    "gene": "CYP3A4",
    "with_no_relation": False,
}
LABEL_NAMES = {label.letter: label.name for label in labels.RELATION_LABELS}
FILE_VERSIONS = {"env": drugprot.__version__, "prompt": prompts.PROMPT_VERSION, "scorer": scoring.SCORER_VERSION,
                 "data": {"source": "file", "revision": None}}  # fmt: skip
"""The ``versions`` record of a run over a local data file (``drugprot.core.versions``)."""
LABEL_OF = {"A": "INDIRECT-DOWNREGULATOR", "B": "INDIRECT-UPREGULATOR", "E": "INHIBITOR", "K": "SUBSTRATE",
            "L": "SUBSTRATE_PRODUCT-OF", "M": "PART-OF", None: None}  # fmt: skip


def v1_knobs() -> dict[str, Any]:
    """DrugprotConfig's own fields (not the base TasksetConfig's) and their defaults."""
    import verifiers.v1 as vf

    from drugprot.envs.taskset import DrugprotConfig

    base = set(vf.TasksetConfig.model_fields)
    return {name: f.default for name, f in DrugprotConfig.model_fields.items() if name not in base}


def v1_tasks(**knobs: Any) -> list[Any]:
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset

    return DrugprotTaskset(DrugprotConfig(id="drugprot", **knobs)).load()


# ------------------------------------------------------------------------------------------- both stacks


def test_import_loads_no_verifiers() -> None:
    """``import drugprot`` and the v0 adapter module import no verifiers module at all (0.4-safe, fast)."""
    code = (
        "import sys, drugprot, drugprot.envs.legacy\n"
        "from drugprot import load_environment\n"
        "assert load_environment is drugprot.envs.legacy.load_environment\n"
        "print(sorted(m for m in sys.modules if m == 'verifiers' or m.startswith('verifiers.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_all_exports() -> None:
    """verifiers' v1 loader takes the one Taskset subclass and the one Harness subclass of ``__all__``; the legacy
    loader takes ``load_environment``. Every exported name resolves to the object of that role."""
    import verifiers.v1 as vf

    import drugprot
    from drugprot.envs.harness import DrugprotHarness
    from drugprot.envs.legacy import load_environment
    from drugprot.envs.taskset import DrugprotEnv, DrugprotTaskset

    exported = {name: getattr(drugprot, name) for name in drugprot.__all__}
    assert exported == {
        "DrugprotTaskset": DrugprotTaskset,
        "DrugprotEnv": DrugprotEnv,
        "DrugprotHarness": DrugprotHarness,
        "load_environment": load_environment,
    }
    tasksets = [v for v in exported.values() if isinstance(v, type) and issubclass(v, vf.Taskset)]
    harnesses = [v for v in exported.values() if isinstance(v, type) and issubclass(v, vf.Harness)]
    assert (tasksets, harnesses) == ([DrugprotTaskset], [DrugprotHarness])


def test_knobs_match_the_v1_config() -> None:
    """Every v1 knob is a ``load_environment`` argument with the same default; ``train_split`` is the only extra."""
    params = inspect.signature(load_environment).parameters
    assert {name: p.default for name, p in params.items() if name != "train_split"} == v1_knobs()
    assert params["train_split"].default == "train"


def test_v1_flags() -> None:
    assert v1_flags(split="train", data_path="a b.jsonl", num_tasks=5, shuffle=True, negatives="all") == (
        "--env.taskset.split train --env.taskset.data-path 'a b.jsonl' --env.taskset.num-tasks 5 "
        "--env.taskset.shuffle True --env.taskset.negatives all"
    )


def test_error_message_points_to_v1(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a legacy stack the call fails before any work, naming the v1 command with the same knobs."""
    monkeypatch.setattr(legacy.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(legacy, "_verifiers_version", lambda: "0.4.0")
    with pytest.raises(LegacyVerifiersUnavailable) as err:
        load_environment(split="train", data_path="data/train.parquet", num_tasks=5, train_split="validation")
    assert isinstance(err.value, ImportError) and isinstance(err.value, DrugprotError)
    assert str(err.value) == (
        "drugprot.load_environment() builds the verifiers v0 (legacy) SingleTurnEnv, but verifiers 0.4.0 has no "
        "legacy stack (it was removed in verifiers 0.4.0). Use the v1 taskset, which takes the same knobs as "
        "--env.taskset.<knob> flags:\n"
        "  vf-eval drugprot -m arcee/trinity-mini --env.taskset.split train --env.taskset.data-path "
        "data/train.parquet --env.taskset.num-tasks 5\n"
        "(or `vf-eval @ configs/eval/trinity-mini.toml`; from Python: drugprot.DrugprotTaskset). For the legacy "
        "`vf-eval drugprot -m trinity-mini -a '{...}'`, install 'verifiers>=0.3.1.dev59,<0.4'."
    )


@pytest.mark.skipif(HAS_LEGACY, reason="the installed verifiers (0.3.x) has the legacy stack")
def test_error_without_legacy_stack() -> None:
    """On verifiers 0.4 the real call raises, and the v1 exports still work."""
    import drugprot

    with pytest.raises(LegacyVerifiersUnavailable, match=r"verifiers 0\.4\.\d+ has no legacy stack") as err:
        drugprot.load_environment(data_path=str(FIXTURE_JSONL))
    assert f"vf-eval drugprot -m arcee/trinity-mini --env.taskset.data-path {FIXTURE_JSONL}\n" in str(err.value)
    assert len(v1_tasks(split="train", data_path=str(FIXTURE_JSONL))) == 27


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


EXPECTED_EVAL = {
    "trinity-mini.toml": ("arcee/trinity-mini", "https://api.pinference.ai/api/v1", "PRIME_API_KEY"),
    "local-vllm.toml": ("trinity-mini", "http://localhost:8000/v1", "VLLM_API_KEY"),
}


def test_eval_configs_are_the_documented_ones() -> None:
    # extraction.toml (extraction mode, 4,096 tokens) is dry-run by tests/test_configs.py
    assert sorted(p.name for p in EVAL_CONFIGS.glob("*.toml")) == sorted([*EXPECTED_EVAL, "extraction.toml"])


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
    (resolved,) = out.glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text(encoding="utf-8"))
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


# The main-job commands README.md opens with (its "Two commands" block and the Evaluating table).
README_V1_COMMAND = "vf-eval drugprot -m arcee/trinity-mini -n 100"
README_LEGACY_COMMAND = "vf-eval drugprot -m trinity-mini -n 100 -r 1 -s"
PRIME_INFERENCE = ("arcee/trinity-mini", "https://api.pinference.ai/api/v1", "PRIME_API_KEY")


def test_readme_opens_the_main_job_with_the_documented_commands() -> None:
    block = README.read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in block.splitlines() if line and not line.startswith("#")]
    assert lines[:3] == ["export PRIME_API_KEY=...", f"uv run {README_V1_COMMAND}", README_LEGACY_COMMAND]
    assert lines[3] == "uv run vf-eval @ configs/eval/trinity-mini.toml"


def test_readme_v1_command_dry_run(tmp_path: Path) -> None:
    """The README's first command resolves to Prime Inference's defaults and drugprot's pinned seat (0.3.x's v1
    CLI is ``eval``), with no ``$PRIME_API_KEY`` needed to resolve it."""
    script = Path(sys.executable).with_name("eval" if HAS_LEGACY else "vf-eval")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PRIME_API_KEY"}
    argv = [str(script), *shlex.split(README_V1_COMMAND)[1:], "--dry-run", "-o", str(out)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (resolved,) = out.glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text(encoding="utf-8"))
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


# ----------------------------------------------------------------------------------------------- legacy


@pytest.fixture(scope="module")
def env() -> Any:
    if not HAS_LEGACY:
        pytest.skip("verifiers >= 0.4 has no legacy (v0) stack")
    return load_environment(split="train", data_path=str(FIXTURE_JSONL))


@legacy_only
def test_env_shape(env: Any) -> None:
    import verifiers.legacy as vf

    assert isinstance(env, vf.SingleTurnEnv)
    assert type(env.parser).__name__ == "DrugprotParser" and isinstance(env.parser, vf.Parser)
    # MultiTurnEnv groups our rubric with its own zero-weight ``num_turns`` monitor.
    ours, monitor = env.rubric.rubrics
    assert ours.parser is env.parser and type(monitor).__name__ == "MultiTurnMonitorRubric"
    assert env.system_prompt == prompts.system_prompt(False)


@legacy_only
def test_datasets_are_built_lazily() -> None:
    """Building the env builds no dataset (the eval split's questions are validated and kept for its builder):
    ``vf-eval`` builds only the eval split, when the run starts."""
    fresh = load_environment(split="train", data_path=str(FIXTURE_JSONL))
    assert (fresh.dataset, fresh.eval_dataset) == (None, None)
    fresh.get_eval_dataset()
    assert fresh.dataset is None and fresh.eval_dataset is not None


@legacy_only
def test_eval_dataset_contents(env: Any) -> None:
    dataset = env.get_eval_dataset()
    assert dataset.column_names == ["prompt", "answer", "info", "example_id"]
    rows = dataset.to_list()
    assert [(r["info"]["key"], r["answer"]) for r in rows] == FIXTURE_ANSWERS
    assert [r["example_id"] for r in rows] == list(range(27))
    assert rows[0]["prompt"] == [
        {"role": "system", "content": prompts.system_prompt(False)},
        {"role": "user", "content": ROW0_USER_PROMPT},
    ]
    assert rows[0]["info"] == ROW0_INFO
    assert rows[0]["answer"] == "E,K"


@legacy_only
def test_same_prompts_as_v1(env: Any) -> None:
    """Every row carries exactly what the v1 taskset sends: its system prompt, user prompt and gold."""
    tasks = v1_tasks(split="train", data_path=str(FIXTURE_JSONL))
    rows = env.get_eval_dataset().to_list()
    assert len(rows) == len(tasks) == 27
    for row, task in zip(rows, tasks, strict=True):
        assert row["prompt"] == [
            {"role": "system", "content": task.data.system_prompt},
            {"role": "user", "content": task.data.prompt},
        ]
        info = row["info"]
        assert (info["key"], info["pmid"], info["arg1"], info["arg2"], info["labels"], info["with_no_relation"]) == (
            task.key, task.data.pmid, task.data.arg1, task.data.arg2, task.data.labels, task.data.with_no_relation
        )  # fmt: skip


@legacy_only
def test_train_dataset(env: Any) -> None:
    """``train_split`` picks the training dataset (a single local file is the same split either way)."""
    assert env.get_dataset().to_list() == env.get_eval_dataset().to_list()


@legacy_only
@pytest.mark.parametrize(
    "knobs",
    [
        {"num_tasks": 5, "shuffle": True, "seed": 3},
        {"negatives": 1},
        {"negatives": "all", "mark_entities": False},
    ],
    ids=["shuffle", "negatives-1", "negatives-all-unmarked"],
)
def test_knobs_select_the_same_tasks_as_v1(knobs: dict[str, Any]) -> None:
    env = load_environment(split="train", data_path=str(FIXTURE_JSONL), **knobs)
    rows = env.get_eval_dataset().to_list()
    tasks = v1_tasks(split="train", data_path=str(FIXTURE_JSONL), **knobs)
    assert [(r["info"]["key"], r["prompt"][1]["content"]) for r in rows] == [(t.key, t.data.prompt) for t in tasks]
    with_nr = knobs.get("negatives", 0) != 0
    assert env.system_prompt == rows[0]["prompt"][0]["content"] == prompts.system_prompt(with_nr)
    assert env.parser.with_no_relation is with_nr


@legacy_only
def test_shuffled_subset() -> None:
    env = load_environment(split="train", data_path=str(FIXTURE_JSONL), num_tasks=5, shuffle=True, seed=3)
    keys = [r["info"]["key"] for r in env.get_eval_dataset().to_list()]
    assert keys == ["90000003:T3:T4", "90000009:T1:T2", "90000008:T3:T4", "90000008:T7:T8", "90000001:T3:T4"]


@legacy_only
def test_negatives_add_no_relation_rows() -> None:
    """Negative pairs are rows whose gold is ``N``; the 27 gold pairs keep their answers (which negatives are
    sampled is the core's business: ``test_knobs_select_the_same_tasks_as_v1`` checks they match v1)."""
    env = load_environment(split="train", data_path=str(FIXTURE_JSONL), negatives=1)
    rows = env.get_eval_dataset().to_list()
    gold = [(r["info"]["key"], r["answer"]) for r in rows if r["answer"] != "N"]
    negative = [r for r in rows if r["answer"] == "N"]
    assert gold == FIXTURE_ANSWERS
    assert negative and all(r["info"]["labels"] == ["NO-RELATION"] for r in negative)
    assert all(r["info"]["with_no_relation"] for r in rows)


@legacy_only
def test_offline_without_data_path_names_the_env_arg(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    env = load_environment()
    with pytest.raises(DrugprotHubError) as err:
        env.get_eval_dataset()
    assert DATA_PATH_HINT == """-a '{"data_path": "{path}"}'"""
    assert """pass the file: -a '{"data_path": "drugprot-parquet/data/validation.parquet"}'""" in str(err.value)


@legacy_only
def test_bad_knobs_fail_at_load() -> None:
    with pytest.raises(DrugprotConfigError, match="negatives must be") as err:
        load_environment(negatives="some")
    assert isinstance(err.value, ValueError) and err.value.knob == "negatives"
    with pytest.raises(DrugprotConfigError, match="num_tasks must be a positive integer") as err:
        load_environment(data_path=str(FIXTURE_JSONL), num_tasks=0)
    with pytest.raises(DrugprotConfigError, match="unknown split 'dev'"):
        load_environment(data_path=str(FIXTURE_JSONL), train_split="dev")
    with pytest.raises(DrugprotConfigError, match="^revision 'abc123' selects a version of the hub dataset") as err:
        load_environment(data_path=str(FIXTURE_JSONL), revision="abc123")
    assert err.value.knob == "revision"
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_examples'"):
        load_environment(num_examples=5)  # type: ignore[call-arg]


@legacy_only
def test_bad_data_fails_at_load(tmp_path: Path) -> None:
    """The eval split's data is validated by ``load_environment`` itself, before ``vf-eval`` starts a rollout."""
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(DrugprotDataError, match=f"^no such file or directory: {missing}"):
        load_environment(data_path=str(missing))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="^no abstract: the source is empty"):
        load_environment(split="train", data_path=str(empty))


@legacy_only
def test_rubric_functions_and_weights() -> None:
    env = load_environment(data_path=str(FIXTURE_JSONL))
    ours = env.rubric.rubrics[0]
    assert [f.__name__ for f in ours.funcs] == ["accuracy", "format", "answered"]
    assert ours.weights == [1.0, 0.1, 0.0]
    assert all(w == 0.0 for r in env.rubric.rubrics[1:] for w in r.weights)  # the monitor adds no reward
    custom = load_environment(data_path=str(FIXTURE_JSONL), accuracy_weight=0.7, format_weight=0.3)
    assert custom.rubric.rubrics[0].weights == [0.7, 0.3, 0.0]


def _message(content: str | None, reasoning: str | None) -> Any:
    from verifiers.legacy.types import AssistantMessage

    return AssistantMessage(content=content, reasoning_content=reasoning)


@legacy_only
@pytest.mark.parametrize(("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES)
def test_parser_table(env: Any, content, reasoning, letter, accuracy, fmt, invalid, fmt_reason) -> None:
    """The parser gives the reply table's letter from legacy messages (pydantic or dict), content + reasoning."""
    parser = env.parser
    completion = [{"role": "user", "content": "q"}, _message(content, reasoning)]
    assert parser.parse_answer(completion) == letter
    as_dicts = [{"role": "assistant", "content": content, "reasoning_content": reasoning}]
    assert parser.parse_answer(as_dicts) == letter
    assert parser.reply(completion) == (content, reasoning)
    assert parser.get_format_reward_func()(completion=completion) == fmt
    if reasoning is None and content is not None:
        assert parser.parse(content) == letter


@legacy_only
def test_parser_edge_cases(env: Any) -> None:
    parser = env.parser
    assert parser.parse_answer([]) is None
    assert parser.parse_answer("<think>x</think>\\boxed{E}") == "E"
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "<think>x</think>"},
                                               {"type": "text", "text": "\\boxed{K}"}]}]  # fmt: skip
    assert parser.parse_answer(parts) == "K"


def _scripted_client(content: str | None, reasoning: str | None) -> Any:
    """A legacy OpenAI chat client whose server 'returns' one scripted completion (no network)."""
    from openai.types.chat import ChatCompletion
    from verifiers.legacy.clients.openai_chat_completions_client import OpenAIChatCompletionsClient

    class ScriptedClient(OpenAIChatCompletionsClient):
        async def get_native_response(self, prompt, model, sampling_args, tools=None, **kwargs) -> ChatCompletion:
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if reasoning is not None:
                message["reasoning_content"] = reasoning
            return ChatCompletion.model_validate(
                {"id": "scripted", "object": "chat.completion", "created": 0, "model": model,
                 "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}
            )  # fmt: skip

    return ScriptedClient(object())


@legacy_only
@pytest.mark.parametrize(("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES)
def test_v0_and_v1_score_identically(env: Any, content, reasoning, letter, accuracy, fmt, invalid, fmt_reason) -> None:
    row = env.get_eval_dataset()[0]
    assert row["info"]["labels"] == GOLD
    output = asyncio.run(env.run_rollout(row, _scripted_client(content, reasoning), "scripted-model", {}))

    (task,) = [t for t in v1_tasks(split="train", data_path=str(FIXTURE_JSONL)) if t.key == row["info"]["key"]]
    trace = make_trace(task, content, reasoning)
    asyncio.run(task.score(trace))

    record = {"letter": letter, "label": LABEL_OF[letter], "invalid_reason": invalid, "format_reason": fmt_reason,
              "versions": FILE_VERSIONS}  # fmt: skip
    assert output["reward"] == trace.reward == accuracy * 1.0 + fmt * 0.1
    assert (output["accuracy"], output["format"], output["answered"]) == (
        trace.rewards["accuracy"].score, trace.rewards["format"].score, trace.metrics["answered"]
    ) == (accuracy, fmt, float(letter is not None))  # fmt: skip
    assert output["metrics"]["accuracy"] == accuracy and output["metrics"]["format"] == fmt
    assert output["info"][legacy.INFO_KEY] == trace.info["drugprot"] == record
    # The legacy client rejects a reply with neither content nor reasoning; the rollout still scores 0.
    assert (output.get("error") is not None) == (content is None and reasoning is None)


@legacy_only
def test_info_key_matches_v1() -> None:
    from drugprot.envs.taskset import INFO_KEY

    assert legacy.INFO_KEY == INFO_KEY


# ------------------------------------------------------------------------------------------ end to end

THINK = "<think>The abstract states how the chemical acts on the gene product.</think>"
# Two replies per task (first and second request for it), each with what the results must record for it:
# (content builder(gold, wrong), reasoning_content, accuracy, format, letter: "gold"/"wrong"/None, reasons).
E2E_REPLIES = [
    (lambda g, w: f"{THINK}\n\\boxed{{{g}}}", None, 1.0, 1.0, "gold", None, None),
    (lambda g, w: f"\\boxed{{{g}}}", "It binds the enzyme.", 1.0, 1.0, "gold", None, None),
    (lambda g, w: f"{THINK}\\boxed{{{w}}}", None, 0.0, 1.0, "wrong", None, None),
    (lambda g, w: f"The answer is \\boxed{{{g}}}.", None, 0.0, 0.0, None, *["reasoning_incomplete"] * 2),
    (lambda g, w: f"<think>Maybe \\boxed{{{g}}}", None, 0.0, 0.0, None, *["reasoning_incomplete"] * 2),
    (lambda g, w: f"{THINK}It is {g}.", None, 0.0, 0.0, None, "no_boxed_answer", "no_boxed_answer"),
]


@legacy_only
def test_legacy_vf_eval_end_to_end(tmp_path: Path) -> None:
    """``vf-eval drugprot -m trinity-mini -a '{...}' -s`` (legacy) on the fixture, the alias resolved from a
    ``configs/endpoints.toml`` pointing at a local server; every rollout's rewards and prediction record are read
    back from ``results.jsonl``. Two rollouts per task get different replies: the records are per rollout."""
    from drugprot.tools.serve import OpenAIServer, Reply, last_user_text
    from tests.e2e import read_legacy_results, run_legacy_vf_eval, write_endpoints_toml

    questions = load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL)))
    by_prompt, expected = {}, {}
    for i, q in enumerate(questions):
        gold, wrong = q.answers[0], ("A" if q.answers[0] != "A" else "B")
        pair = []
        for build, reasoning, acc, fmt, which, invalid, fmt_reason in (E2E_REPLIES[i % 6], E2E_REPLIES[(i + 3) % 6]):
            content = build(gold, wrong)
            letter = {"gold": gold, "wrong": wrong, None: None}[which]
            pair.append(Reply(content, reasoning_content=reasoning))
            record = {"letter": letter, "label": LABEL_NAMES.get(letter), "invalid_reason": invalid,
                      "format_reason": fmt_reason, "versions": FILE_VERSIONS}  # fmt: skip
            expected[(q.key, content)] = (acc, fmt, record, reasoning)
        by_prompt[q.prompt] = pair
    served: collections.Counter[str] = collections.Counter()

    def respond(body: dict[str, Any]) -> Reply:
        prompt = last_user_text(body)
        served[prompt] += 1
        return by_prompt[prompt][(served[prompt] - 1) % 2]

    alias = tomllib.loads(ENDPOINTS.read_text(encoding="utf-8"))["endpoint"][0]
    assert alias["endpoint_id"] == "trinity-mini"
    with OpenAIServer(respond) as server:
        write_endpoints_toml(tmp_path, "trinity-mini", alias["model"], server.base_url)
        run_dir = run_legacy_vf_eval(
            "drugprot", "trinity-mini", tmp_path, tmp_path / "outputs", n=27, rollouts=2, timeout=900,
            env_args={"split": "train", "data_path": str(FIXTURE_JSONL)},
        )  # fmt: skip
        requests = server.chat_requests

    assert {r["model"] for r in requests} == {"arcee/trinity-mini"}  # the alias resolved to the registry's id
    assert len(requests) == 54 and set(served.values()) == {2}
    assert requests[0]["messages"][0] == {"role": "system", "content": prompts.system_prompt(False)}
    rows, metadata = read_legacy_results(run_dir)
    assert (metadata["env_id"], metadata["model"], metadata["num_examples"], metadata["rollouts_per_example"]) == (
        "drugprot", "arcee/trinity-mini", 27, 2
    )  # fmt: skip
    assert len(rows) == 54
    seen = collections.Counter()
    for row in rows:
        (reply,) = [m for m in row["completion"] if m["role"] == "assistant"]
        acc, fmt, record, reasoning = expected[(row["info"]["key"], reply["content"])]
        seen[row["info"]["key"]] += 1
        assert reply.get("reasoning_content") == reasoning
        assert (row["reward"], row["accuracy"], row["format"], row["answered"]) == (
            acc * 1.0 + fmt * 0.1, acc, fmt, float(record["letter"] is not None)
        )  # fmt: skip
        assert row["metrics"]["accuracy"] == acc and row["metrics"]["format"] == fmt
        assert row["info"][legacy.INFO_KEY] == record
        assert row.get("error") is None
    assert set(seen.values()) == {2} and len(seen) == 27


@legacy_only
def test_legacy_vf_eval_wrong_data_path_fails_with_our_message(tmp_path: Path) -> None:
    """The legacy ``vf-eval`` with a wrong ``data_path``: exit 1 before any rollout, our message on the last line
    (verifiers wraps every ``load_environment`` error in ``RuntimeError: Failed to load environment ...``)."""
    import os

    from tests.e2e import script_path

    missing = tmp_path / "data" / "validation.parquet"
    with pytest.raises(DrugprotDataError) as expected:
        load_environment(data_path=str(missing))
    out = tmp_path / "outputs"
    argv = [str(script_path("vf-eval")), "drugprot", "-m", "trinity-mini", "-b", "http://127.0.0.1:9/v1"]
    argv += ["-k", "DRUGPROT_E2E_API_KEY", "-n", "1", "-s", "-d", "--disable-env-server", "-o", str(out)]
    argv += ["-a", json.dumps({"data_path": str(missing)})]
    env = {**os.environ, "DRUGPROT_E2E_API_KEY": "sk-test"}
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    last = proc.stderr.rstrip().splitlines()[-1]
    assert last == f"RuntimeError: Failed to load environment 'drugprot': {expected.value}"
    assert not list(out.glob("**/results.jsonl"))
