"""The verifiers v0 (legacy) adapter ``drugprot.load_environment`` (``drugprot.envs.legacy``).

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
import json
import os
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
from drugprot.core.rewards import METRIC_NAMES, Reward, exact_group_means, recorded_metrics
from drugprot.core.versions import digest
from drugprot.envs import legacy
from drugprot.envs.legacy import DATA_PATH_HINT, LegacyVerifiersUnavailable, load_environment, v1_flags
from tests.conftest import FIXTURE_JSONL, FIXTURE_TSV
from tests.core.test_parsing import CASES, GOLD, NR_CASES, T
from tests.envs.traces import make_trace

ROOT = Path(__file__).resolve().parents[2]
ENDPOINTS = ROOT / "configs" / "endpoints.toml"

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
    "ceiling": [4, 4, 3],  # the abstract's 4 gold relations, all on candidates; 3 pairs (T1-T2 is multi-label)
}
LABEL_NAMES = {label.letter: label.name for label in labels.RELATION_LABELS}
FILE_VERSIONS = {"env": drugprot.__version__, "prompt": prompts.PROMPT_VERSION, "scorer": scoring.SCORER_VERSION,
                 "data": {"source": "file", "revision": None}, "reward": Reward().record(),
                 "setting": {"split": "train", "negatives": 0, "mode": "pair",
                             "data_path": str(FIXTURE_JSONL)}}  # fmt: skip
"""The ``versions`` record of a run over a local data file (``drugprot.core.versions``), default reward."""
SEED_VERSIONS = FILE_VERSIONS | {"reward": Reward("accuracy").record()}
"""The same with the seed recipe's reward (``reward: accuracy``)."""
LABEL_OF = {"A": "INDIRECT-DOWNREGULATOR", "B": "INDIRECT-UPREGULATOR", "E": "INHIBITOR", "K": "SUBSTRATE",
            "L": "SUBSTRATE_PRODUCT-OF", "M": "PART-OF", None: None}  # fmt: skip


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


@legacy_only
def test_legacy_vf_eval_loads_the_env_by_its_id() -> None:
    """The legacy ``vf-eval drugprot -a '{...}'`` imports the package ``drugprot`` and calls its ``load_environment``
    with the ``-a`` arguments: verifiers' own loader gets drugprot's legacy env, built from those knobs."""
    import verifiers.legacy as vf
    from verifiers.legacy.utils.env_utils import import_env_module
    from verifiers.legacy.utils.env_utils import load_environment as vf_load_environment

    assert import_env_module("drugprot").load_environment is load_environment
    args = {"split": "train", "data_path": str(FIXTURE_JSONL), "num_tasks": 3}
    env = vf_load_environment("drugprot", **args)
    assert isinstance(env, vf.SingleTurnEnv) and type(env.parser).__name__ == "DrugprotParser"
    assert (env.env_id, env.env_args) == ("drugprot", args)
    assert [r["info"]["key"] for r in env.get_eval_dataset().to_list()] == [key for key, _ in FIXTURE_ANSWERS[:3]]


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


def two_split_tsv(directory: Path) -> Path:
    """The official TSV layout with two different splits: ``training/`` is the fixture (9 abstracts, 27 pairs),
    ``development/`` its first two abstracts (90000001, 90000002: 6 pairs)."""
    for folder, prefix, keep in (
        ("training", "training", None),
        ("development", "development", ("90000001", "90000002")),
    ):
        (directory / folder).mkdir(parents=True)
        for kind in ("abstracs", "entities", "relations"):
            lines = (FIXTURE_TSV / f"drugprot_training_{kind}.tsv").read_text(encoding="utf-8").splitlines(True)
            kept = [line for line in lines if keep is None or line.split("\t", 1)[0] in keep]
            (directory / folder / f"drugprot_{prefix}_{kind}.tsv").write_text("".join(kept), encoding="utf-8")
    return directory


@legacy_only
@pytest.mark.parametrize(("split", "train_split"), [("validation", "train"), ("train", "validation")])
def test_train_split_picks_the_training_dataset(tmp_path: Path, split: str, train_split: str) -> None:
    """``split`` is the ``eval_dataset``, ``train_split`` the training ``dataset``; each holds the tasks the v1
    taskset selects for that split."""
    data = str(two_split_tsv(tmp_path))
    env = load_environment(split=split, train_split=train_split, data_path=data)
    keys = {"train": [key for key, _ in FIXTURE_ANSWERS], "validation": [key for key, _ in FIXTURE_ANSWERS[:6]]}
    assert [r["info"]["key"] for r in env.get_eval_dataset().to_list()] == keys[split]
    assert [r["info"]["key"] for r in env.get_dataset().to_list()] == keys[train_split]
    for which, dataset in ((split, env.get_eval_dataset()), (train_split, env.get_dataset())):
        assert [r["info"]["key"] for r in dataset.to_list()] == [t.key for t in v1_tasks(split=which, data_path=data)]


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
@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"fn_cost": False}, "fn_cost must be a real number from 0 to 1000, got False"),
        ({"fp_cost": 1e308}, "fp_cost must be a real number from 0 to 1000, got 1e+308"),
        ({"fp_cost": 10**400}, "fp_cost must be a real number from 0 to 1000, got " + "1" + "0" * 36 + "..."),
        ({"utility_weight": -1e308}, "utility_weight must be a real number from -1000 to 1000, got -1e+308"),
        ({"format_weight": True}, "format_weight must be a real number from -1000 to 1000, got True"),
    ],
    ids=["bool-cost", "huge-cost", "huge-int", "huge-weight", "bool"],
)
def test_the_legacy_stack_refuses_a_bad_reward_knob_as_the_v1_stack(knobs: dict[str, Any], message: str) -> None:
    """The same inputs as ``test_knobs.HOSTILE_REWARD_KNOBS``, refused with the same line by ``check_reward_knob``."""
    with pytest.raises(DrugprotConfigError) as err:
        load_environment(data_path=str(FIXTURE_JSONL), **knobs)
    assert (str(err.value), err.value.knob) == (message, next(iter(knobs)))


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
    # the weighted terms, then the zero-weight metrics: answered, the raw accuracy and the official cells
    assert [f.__name__ for f in ours.funcs] == ["accuracy", "utility", "format", "answered", *METRIC_NAMES]
    metrics = [0.0] * (1 + len(METRIC_NAMES))
    assert ours.weights == [0.0, 1.0, 0.125, *metrics]  # the default reward: utility + 1/8 x format
    assert all(w == 0.0 for r in env.rubric.rubrics[1:] for w in r.weights)  # the monitor adds no reward
    custom = load_environment(data_path=str(FIXTURE_JSONL), accuracy_weight=0.7, format_weight=0.3)
    assert custom.rubric.rubrics[0].weights == [45 / 64, 1.0, 19 / 64, *metrics]  # 0.7 and 0.3 on the 1/64 grid
    seed = load_environment(data_path=str(FIXTURE_JSONL), reward="accuracy")
    assert seed.rubric.rubrics[0].weights == [1.0, 0.0, 0.125, *metrics]


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
    # GOLD has two types: one named is 1 TP + 1 FN (0), a wrong one 1 FP + 2 FN (-2.5), none 2 FN (-2)
    utility = 0.0 if accuracy else -2.5 if letter is not None else -2.0
    assert output["reward"] == trace.reward == utility + fmt * 0.125  # the default reward, exactly
    assert (output["accuracy"], output["utility"], output["format"], output["answered"]) == (
        trace.rewards["accuracy"].score, trace.rewards["utility"].score, trace.rewards["format"].score,
        trace.metrics["answered"]
    ) == (accuracy, pytest.approx(utility), fmt, float(letter is not None))  # fmt: skip
    assert output["metrics"]["accuracy"] == accuracy and output["metrics"]["format"] == fmt
    official = recorded_metrics(
        scoring.score_reply(content, reasoning, GOLD)
    )  # the raw accuracy and the official cells
    assert {name: output[name] for name in METRIC_NAMES} == {name: trace.metrics[name] for name in METRIC_NAMES}
    assert {name: output["metrics"][name] for name in METRIC_NAMES} == official
    # the key the report reads; v1 also records the prompts it sent (the v0 rows are drugprot's own prompts)
    v1_record = {key: value for key, value in trace.info["drugprot"].items() if key != "prompts"}
    assert output["info"]["drugprot"] == v1_record == record
    assert trace.info["drugprot"]["prompts"]["user"] == digest("q")
    # The legacy client rejects a reply with neither content nor reasoning; the rollout still scores 0.
    assert (output.get("error") is not None) == (content is None and reasoning is None)


@legacy_only
@pytest.mark.parametrize(
    ("knobs", "rewards"),
    [
        ({"reward": "accuracy"}, [1.125, 0.125, 0.0]),
        ({"reward": "utility"}, [0.125, -2.5 + 0.125, -2.0]),
        ({"fp_cost": 0.5, "fn_cost": 2.0}, [-1.0 + 0.125, -4.5 + 0.125, -4.0]),
        ({"reward": "accuracy", "utility_weight": 0.5}, [1.125, -1.25 + 0.125, -1.0]),
        ({"f1_target": 0.4, "fn_cost": 2.0}, [-1.0 + 0.125, -4.75 + 0.125, -4.0]),  # fp_cost 0.4 * 3 / 1.6 = 0.75
        # off the grid: utility weight 0.7 -> 45/64, format 0.2 -> 13/64, fp_cost 0.35 -> 22/64
        ({"utility_weight": 0.7, "format_weight": 0.2, "fp_cost": 0.35}, [13 / 64, -5918 / 4096, -90 / 64]),
    ],
    ids=["accuracy", "utility", "costs", "accuracy-plus-half-utility", "f1-target", "off-the-grid"],
)
def test_both_stacks_give_the_same_reward_under_every_knob(knobs: dict[str, Any], rewards: list[float]) -> None:
    """A right, a wrong and an unanswered reply to the two-type pair (GOLD): the v0 rubric and the v1 task give the
    same reward and the same three terms, for each reward knob setting; each total, summed by verifiers itself
    (v0 ``Rubric.score_group``, v1 ``Trace.reward``), is exactly the grid value, one whose float32 group mean is
    exact (``exact_group_means``: prime-rl drops a group of them)."""
    env = load_environment(split="train", data_path=str(FIXTURE_JSONL), **knobs)
    row = env.get_eval_dataset()[0]
    (task,) = [t for t in v1_tasks(split="train", data_path=str(FIXTURE_JSONL), **knobs) if t.key == row["info"]["key"]]
    got = []
    for content in (f"{T}\\boxed{{E}}", f"{T}\\boxed{{A}}", f"{T}E"):
        output = asyncio.run(env.run_rollout(row, _scripted_client(content, None), "scripted-model", {}))
        trace = make_trace(task, content, None)
        asyncio.run(task.score(trace))
        assert output["reward"] == trace.reward and exact_group_means(trace.reward)
        assert [output[name] for name in ("accuracy", "utility", "format")] == [
            trace.rewards[name].score for name in ("accuracy", "utility", "format")
        ]
        # the official cells and the raw accuracy, unweighted whatever the knobs, alike on both stacks
        official = recorded_metrics(scoring.score_reply(content, None, GOLD))
        assert {name: output[name] for name in METRIC_NAMES} == {name: trace.metrics[name] for name in METRIC_NAMES}
        assert {name: trace.metrics[name] for name in METRIC_NAMES} == official
        v1_record = {key: value for key, value in trace.info["drugprot"].items() if key != "prompts"}
        assert output["info"]["drugprot"] == v1_record  # v1 also records the prompts it sent
        got.append(trace.reward)
    assert got == rewards


@pytest.fixture(scope="module")
def env_with_negatives() -> Any:
    if not HAS_LEGACY:
        pytest.skip("verifiers >= 0.4 has no legacy (v0) stack")
    return load_environment(split="train", data_path=str(FIXTURE_JSONL), negatives=1)


@legacy_only
@pytest.mark.parametrize(("content", "letter", "accuracy", "fmt"), NR_CASES)
def test_no_relation_option(env_with_negatives: Any, content: str, letter: str, accuracy: int, fmt: int) -> None:
    """With NO-RELATION candidates the parser and the rubric take the ``N`` answers of the table, on a negative row."""
    row = next(r for r in env_with_negatives.get_eval_dataset() if r["info"]["labels"] == ["NO-RELATION"])
    output = asyncio.run(env_with_negatives.run_rollout(row, _scripted_client(content, None), "scripted-model", {}))
    assert env_with_negatives.parser.parse_answer([{"role": "assistant", "content": content}]) == letter
    assert (output["info"]["drugprot"]["letter"], output["accuracy"], output["format"]) == (letter, accuracy, fmt)
    utility = -0.5 if letter not in (None, "N") else 0.0  # a type on a no-relation pair is a false positive
    assert (output["utility"], output["reward"]) == (utility, utility + fmt * 0.125)


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
    back from ``results.jsonl``. Two rollouts per task get different replies: the records are per rollout. The
    run pins the seed recipe's reward (``reward: accuracy``); the utility term is recorded at weight 0."""
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
                      "format_reason": fmt_reason, "versions": SEED_VERSIONS}  # fmt: skip
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
            env_args={"split": "train", "data_path": str(FIXTURE_JSONL), "reward": "accuracy"},
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
            acc * 1.0 + fmt * 0.125, acc, fmt, float(record["letter"] is not None)
        )  # fmt: skip
        gold_labels = next(q.labels for q in questions if q.key == row["info"]["key"])
        scored = scoring.score_reply(reply["content"], reasoning, gold_labels)
        assert row["utility"] == pytest.approx(Reward().terms(scored)["utility"])
        assert row["metrics"]["accuracy"] == acc and row["metrics"]["format"] == fmt
        assert row["info"]["drugprot"] == record
        assert row.get("error") is None
    assert set(seen.values()) == {2} and len(seen) == 27


@legacy_only
def test_legacy_vf_eval_wrong_data_path_fails_with_our_message(tmp_path: Path) -> None:
    """The legacy ``vf-eval`` with a wrong ``data_path``: exit 1 before any rollout, our message on the last line
    (verifiers wraps every ``load_environment`` error in ``RuntimeError: Failed to load environment ...``)."""

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
