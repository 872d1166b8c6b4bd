"""The v1 taskset (``drugprot.envs.taskset``): verifiers finds it by the package's exports, it scores replies
exactly as the core does (the parser table through ``await task.score``), and its reward weights.

Reward weights have one route: the ``reward`` knob's preset, with ``accuracy_weight`` / ``utility_weight`` /
``format_weight`` over it, is folded into verifiers' own ``task.rewards`` when ``DrugprotConfig`` is validated, so
every path that builds tasks from the config's ``task`` scores with them. verifiers' env server (prime-rl's
``env-server``) rebuilds each task from ``task`` without calling ``DrugprotTaskset.load()``; the last tests run a
rollout through it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
import verifiers.v1 as vf
from verifiers.v1.utils.loaders import (
    env_config_type,
    environment_class,
    resolve_env_config,
    task_type,
    taskset_class,
    taskset_config_type,
)

import drugprot
from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.rewards import (
    DEFAULT_WEIGHTS,
    METRIC_NAMES,
    REWARD_NAMES,
    Weights,
    exact_group_means,
    recorded_metrics,
    weight_knob,
)
from drugprot.core.scoring import score_reply
from drugprot.core.versions import digest
from drugprot.envs.harness import HARNESS_ID
from drugprot.envs.taskset import (
    INFO_KEY,
    DrugprotConfig,
    DrugprotData,
    DrugprotEnv,
    DrugprotEnvConfig,
    DrugprotTask,
    DrugprotTaskset,
    fold_weights,
)
from drugprot.tools.serve import OpenAIServer, Reply, fixed_responder
from tests.bounds import HANG_S
from tests.conftest import FIXTURE_JSONL
from tests.core.test_parsing import CASES, GOLD, NR_CASES, T
from tests.e2e import API_KEY_VAR, DEFAULT_API_KEY
from tests.envs.traces import make_task, make_trace


def test_verifiers_resolves_the_id_drugprot_to_the_package_exports() -> None:
    """``vf-eval drugprot`` imports the package ``drugprot`` and takes the one subclass of each role that its
    ``__all__`` exports; the lazy public names are those same classes."""
    assert taskset_class("drugprot") is drugprot.DrugprotTaskset is DrugprotTaskset
    assert environment_class("drugprot") is drugprot.DrugprotEnv is DrugprotEnv
    assert taskset_config_type("drugprot") is drugprot.DrugprotConfig is DrugprotConfig
    assert env_config_type("drugprot") is DrugprotEnvConfig
    assert task_type("drugprot") is drugprot.DrugprotTask is DrugprotTask
    assert drugprot.DrugprotData is DrugprotData


@pytest.mark.parametrize(("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES)
async def test_reply_through_verifiers(content, reasoning, letter, accuracy, fmt, invalid, fmt_reason) -> None:
    task = make_task(GOLD, reward="accuracy")  # the seed recipe's reward: accuracy + 1/8 x format
    trace = make_trace(task, content, reasoning)
    await task.score(trace)
    assert trace.errors == []
    assert trace.rewards["accuracy"].score == accuracy
    assert trace.rewards["format"].score == fmt
    # GOLD is a two-type pair: a right letter leaves one gold type a false negative (utility 1 - 1), a wrong one
    # or none is a false positive and two false negatives (-0.5 - 2) or two false negatives (-2)
    utility = {1.0: 0.0, 0.0: -2.5 if letter is not None else -2.0}[accuracy]
    assert trace.rewards["utility"].score == utility
    assert {name: reward.weight for name, reward in trace.rewards.items()} == {
        "accuracy": 1.0,
        "utility": 0.0,
        "format": 0.125,
    }
    assert trace.reward == accuracy * 1.0 + fmt * 0.125
    assert trace.metrics["answered"] == float(letter is not None)
    assert trace.info[INFO_KEY] == {
        "letter": letter,
        "label": {
            "E": "INHIBITOR",
            "K": "SUBSTRATE",
            "A": "INDIRECT-DOWNREGULATOR",
            "L": "SUBSTRATE_PRODUCT-OF",
            "B": "INDIRECT-UPREGULATOR",
            "M": "PART-OF",
            None: None,
        }[letter],
        "invalid_reason": invalid,
        "format_reason": fmt_reason,
        "versions": None,  # what the task data carries (a task built by hand: nothing)
        # the prompts it sent: no system message (drugprot's own is not it), user "q"
        "prompts": {"system": None, "user": digest("q"), "standard_system": False},
    }


@pytest.mark.parametrize(("content", "letter", "accuracy", "fmt"), NR_CASES)
async def test_no_relation_option(content, letter, accuracy, fmt) -> None:
    task = make_task(["NO-RELATION"], with_no_relation=True)
    trace = make_trace(task, content, None)
    await task.score(trace)
    assert (
        trace.info[INFO_KEY]["letter"],
        trace.rewards["accuracy"].score,
        trace.rewards["format"].score,
    ) == (letter, accuracy, fmt)


async def test_weights_come_from_config() -> None:
    config = DrugprotConfig(id="drugprot", accuracy_weight=0.7, format_weight=0.3).task
    task = DrugprotTask(make_task(GOLD).data, config)
    trace = make_trace(task, T + "\\boxed{E} \\boxed{E}", None)  # accurate, bad format
    await task.score(trace)
    assert trace.rewards["accuracy"].weight == 45 / 64  # 0.7 on the 1/64 grid
    assert trace.rewards["utility"].weight == 1.0  # not set: the default preset's (reward utility)
    assert trace.rewards["format"].weight == 19 / 64  # 0.3
    assert trace.rewards["utility"].score == 0.0  # one of the two gold types: 1 TP, 1 FN
    assert trace.reward == 45 / 64


@pytest.mark.parametrize(
    ("knobs", "rewards", "total"),
    [
        ({}, {"accuracy": (0.0, 0.0), "utility": (-1.5, 1.0), "format": (1.0, 0.125)}, -1.375),
        ({"reward": "utility"}, {"accuracy": (0.0, 0.0), "utility": (-1.5, 1.0), "format": (1.0, 0.125)}, -1.375),
        ({"reward": "accuracy"}, {"accuracy": (0.0, 1.0), "utility": (-1.5, 0.0), "format": (1.0, 0.125)}, 0.125),
        (
            {"fp_cost": 0.5, "fn_cost": 2.0},
            {"accuracy": (0.0, 0.0), "utility": (-2.5, 1.0), "format": (1.0, 0.125)},
            -2.375,
        ),
        (  # off the grid: fp_cost 0.35 -> 22/64, format weight 0.1 -> 6/64
            {"fp_cost": 0.35, "format_weight": 0.1},
            {"accuracy": (0.0, 0.0), "utility": (-86 / 64, 1.0), "format": (1.0, 6 / 64)},
            -80 / 64,
        ),
    ],
    ids=["default", "utility", "accuracy", "costs", "off-the-grid"],
)
async def test_the_reward_knob_through_verifiers(knobs, rewards, total) -> None:
    """A wrong type on a single-type pair (1 FP, 1 FN), well formed: every term is recorded, weight 0 included."""
    task = make_task(["INHIBITOR"], **knobs)
    trace = make_trace(task, T + "\\boxed{A}", None)
    await task.score(trace)
    got = {name: (r.score, r.weight) for name, r in trace.rewards.items()}
    assert (got, trace.reward) == (rewards, total)  # exact: verifiers' sum of dyadic terms
    assert exact_group_means(trace.reward)


# ------------------------------------------------------------------------------------------------ weights

Entry = vf.RewardFunctionConfig


async def test_the_weighted_rewards_are_the_tasks_rewards() -> None:
    """The core's weighted rewards (``REWARD_NAMES``) are exactly the task's ``@vf.reward`` methods, at the core's
    default weights, and each has its weight knob on the config; ``answered`` is a metric."""
    task = make_task(GOLD)
    trace = make_trace(task, T + "\\boxed{E}", None)
    await task.score(trace)
    assert {name: reward.weight for name, reward in trace.rewards.items()} == {
        name: DEFAULT_WEIGHTS.of(name) for name in REWARD_NAMES
    }
    assert sorted(trace.metrics) == sorted(["answered", *METRIC_NAMES])
    assert {weight_knob(name) for name in REWARD_NAMES} <= set(DrugprotConfig.model_fields)


@pytest.mark.parametrize(
    "knobs",
    [{}, {"reward": "accuracy"}, {"accuracy_weight": 0.0, "utility_weight": 0.0, "format_weight": 0.0}],
    ids=["utility", "accuracy", "all-weights-zero"],
)
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (T + "\\boxed{E}", (1.0, 1.0, 0.0, 1.0)),  # one of the two gold types: 1 TP, the other type 1 FN
        (T + "\\boxed{A}", (0.0, 0.0, 1.0, 2.0)),  # a wrong type: 1 FP, both gold types FN
        (T + "E", (0.0, 0.0, 0.0, 2.0)),  # no answer: both gold types FN
    ],
    ids=["right", "wrong", "no-answer"],
)
async def test_every_rollout_records_its_official_cells_unweighted(knobs, reply, expected) -> None:
    """``correct`` and the official cells are metrics (never summed into the reward), the same under every weight:
    prime-rl logs them as ``metrics/<name>/mean`` whatever the recipe trains on."""
    task = make_task(GOLD, **knobs)
    trace = make_trace(task, reply, None)
    await task.score(trace)
    recorded = {name: trace.metrics[name] for name in METRIC_NAMES}
    assert recorded == dict(zip(METRIC_NAMES, expected, strict=True))
    assert recorded == recorded_metrics(score_reply(reply, None, GOLD))
    assert set(trace.rewards) == set(REWARD_NAMES)  # no metric among the weighted rewards


async def test_a_scoring_error_records_zero_metrics_and_its_reason() -> None:
    """A task whose gold cannot be read (a malformed extraction record) scores 0 everywhere, reason recorded."""
    task = make_task(GOLD)
    broken = DrugprotTask(task.data.model_copy(update={"extraction": {"relations": "not a list"}}), task.config)
    trace = make_trace(broken, T + "<relations>none</relations>", None)
    await broken.score(trace)
    assert {name: trace.metrics[name] for name in METRIC_NAMES} == dict.fromkeys(METRIC_NAMES, 0.0)
    assert trace.info[INFO_KEY]["invalid_reason"].startswith("scoring_error: malformed extraction gold record")


# ------------------------------------------------------------------------------------------------ folding


def knob_weights(knobs: dict[str, Any]) -> Weights:
    """The ``TaskOptions.weights`` of these knob values (the ``reward`` preset, the weight knobs set over it)."""
    return TaskOptions.from_knobs(knobs).weights  # type: ignore[return-value]


def entries(accuracy: float, utility: float, fmt: float) -> dict[str, Any]:
    return {"accuracy": Entry(weight=accuracy), "utility": Entry(weight=utility), "format": Entry(weight=fmt)}


def weights(accuracy: float, utility: float, fmt: float) -> Weights:
    return Weights(accuracy=accuracy, utility=utility, format=fmt)


@pytest.mark.parametrize(
    ("knobs", "explicit", "rewards", "folded", "weights"),
    [
        # nothing set: the default preset (reward utility), written as entries
        ({}, set(), {}, entries(0.0, 1.0, 0.125), weights(0.0, 1.0, 0.125)),
        # the accuracy preset: entries, since the @vf.reward weights are the default preset's
        ({"reward": "accuracy"}, set(), {}, entries(1.0, 0.0, 0.125), weights(1.0, 0.0, 0.125)),
        # a knob set: its reward's entry
        ({"format_weight": 0.25}, {"format_weight"}, {}, entries(0.0, 1.0, 0.25), weights(0.0, 1.0, 0.25)),
        # task.rewards only: the knob reads the entry's weight, over the preset
        ({}, set(), {"format": Entry(weight=0.25)}, entries(0.0, 1.0, 0.25), weights(0.0, 1.0, 0.25)),
        ({"reward": "accuracy"}, set(), {"utility": Entry(weight=0.5)}, entries(1.0, 0.5, 0.125),
         weights(1.0, 0.5, 0.125)),
        # both, agreeing
        ({"accuracy_weight": 2.0}, {"accuracy_weight"}, {"accuracy": Entry(weight=2.0)}, entries(2.0, 1.0, 0.125),
         weights(2.0, 1.0, 0.125)),
        # an entry without a weight (a priority, a plugged fn) keeps its fields and takes the knob's weight
        ({"format_weight": 0.25}, {"format_weight"}, {"format": Entry(fn="m:f", priority=3)},
         entries(0.0, 1.0, 0.25) | {"format": Entry(fn="m:f", priority=3, weight=0.25)}, weights(0.0, 1.0, 0.25)),
        # off the 1/64 grid: a knob's weight and an entry's alike move to it (0.2 -> 13/64, 0.1 -> 6/64)
        ({"format_weight": 0.2}, {"format_weight"}, {}, entries(0.0, 1.0, 13 / 64), weights(0.0, 1.0, 13 / 64)),
        ({}, set(), {"format": Entry(weight=0.1)}, entries(0.0, 1.0, 6 / 64), weights(0.0, 1.0, 6 / 64)),
        ({"format_weight": 0.1}, {"format_weight"}, {"format": Entry(weight=0.1)}, entries(0.0, 1.0, 6 / 64),
         weights(0.0, 1.0, 6 / 64)),  # both 0.1: the same setting, not a conflict
        # other rewards' entries pass through
        ({}, set(), {"length": Entry(fn="m:g", weight=-0.5)},
         entries(0.0, 1.0, 0.125) | {"length": Entry(fn="m:g", weight=-0.5)}, weights(0.0, 1.0, 0.125)),
    ],
)  # fmt: skip
def test_fold_weights(
    knobs: dict[str, float], explicit: set[str], rewards: dict[str, Any], folded: dict[str, Any], weights: Weights
) -> None:
    task = vf.TaskConfig(rewards=rewards)
    new, got = fold_weights(task, knob_weights(knobs), explicit)
    assert (new.rewards, got) == (folded, weights)
    assert task.rewards == rewards  # pure: the given config is left as it was


def test_fold_weights_refuses_a_conflict_naming_both() -> None:
    task = vf.TaskConfig(rewards={"format": Entry(weight=0.25)})
    with pytest.raises(DrugprotConfigError) as err:
        fold_weights(task, knob_weights({"format_weight": 0.5}), {"format_weight"})
    assert str(err.value) == (
        "format_weight = 0.5 and task.rewards.format.weight = 0.25 both set the weight of the format reward; "
        "set only one of them (or both to the same value)"
    )
    assert err.value.knob == "format_weight"


# ------------------------------------------------------------------------------------------------ the config


def test_config_folds_a_knob_into_task_rewards() -> None:
    config = DrugprotConfig(id="drugprot", format_weight=0.25)
    assert config.task.rewards == entries(0.0, 1.0, 0.25)
    assert (config.accuracy_weight, config.utility_weight, config.format_weight) == (0.0, 1.0, 0.25)
    assert config.weights() == weights(0.0, 1.0, 0.25)


def test_config_knobs_read_the_task_rewards_weights() -> None:
    config = DrugprotConfig(id="drugprot", reward="accuracy", task={"rewards": {"accuracy": {"weight": 0.5}}})
    assert (config.accuracy_weight, config.utility_weight, config.format_weight) == (0.5, 0.0, 0.125)
    assert config.task.rewards == entries(0.5, 0.0, 0.125)


def test_config_conflict_is_a_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError) as err:
        DrugprotConfig(id="drugprot", format_weight=0.5, task={"rewards": {"format": {"weight": 0.25}}})
    assert "format_weight = 0.5 and task.rewards.format.weight = 0.25 both set the weight" in str(err.value)


def test_the_shared_default_task_config_is_never_modified() -> None:
    DrugprotConfig(id="drugprot", accuracy_weight=3.0, format_weight=0.2)
    assert DrugprotConfig.model_fields["task"].default.rewards == {}
    assert DrugprotConfig(id="drugprot").task.rewards == entries(0.0, 1.0, 0.125)


@pytest.mark.parametrize(
    "taskset",
    [
        {"format_weight": 0.2},
        {"task": {"rewards": {"format": {"weight": 0.2}}}},
        {"format_weight": 0.2, "task": {"rewards": {"format": {"weight": 0.2}}}},
    ],
)
def test_weights_survive_the_dump_a_launcher_writes(taskset: dict[str, Any]) -> None:
    """``rl`` validates the config, writes it whole as JSON, and the env server validates that again."""
    raw = {"taskset": {"id": "drugprot", **taskset}}
    first = resolve_env_config(raw)
    again = resolve_env_config(json.loads(json.dumps(first.model_dump(mode="json"))))
    assert first.taskset.task.rewards == entries(0.0, 1.0, 13 / 64)  # 0.2 on the 1/64 grid
    # read back, every knob counts as set (the dump has them all): the same entries, the same weights
    assert again.taskset.task.rewards == entries(0.0, 1.0, 13 / 64)
    assert first.taskset.weights() == again.taskset.weights() == weights(0.0, 1.0, 13 / 64)


def test_load_gives_every_task_the_config_task() -> None:
    config = DrugprotConfig(id="drugprot", data_path=str(FIXTURE_JSONL), split="train", format_weight=0.2)
    tasks = DrugprotTaskset(config).load()
    assert len(tasks) == 27
    assert {id(task.config) for task in tasks} == {id(config.task)}


# ------------------------------------------------------------------------------------------------ env server


def served_rewards(taskset: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict, float]]:
    """Two rollouts (a correct, well-formed reply) through verifiers' ``EnvServer`` + ``EnvClient`` on
    127.0.0.1, the server built from the env config dumped and read back as prime-rl's ``env-server`` reads
    it; each trace's ``{reward: (score, weight)}`` and total reward."""
    from verifiers.v1.serve import EnvClient, EnvServer

    monkeypatch.setenv(API_KEY_VAR, DEFAULT_API_KEY)
    raw = {
        "taskset": {"id": "drugprot", "data_path": str(FIXTURE_JSONL), "split": "train", **taskset},
        "agent": {"harness": {"id": HARNESS_ID}, "runtime": {"type": "subprocess"}},
    }
    config = resolve_env_config(json.loads(json.dumps(resolve_env_config(raw).model_dump(mode="json"))))
    questions = load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL), num_tasks=2))
    # the client ships each task's data only (as prime-rl's orchestrator does): no weights travel with it
    tasks = [t.data.model_dump(mode="json") for t in DrugprotTaskset(DrugprotConfig(**raw["taskset"])).load()[:2]]
    reply = Reply(f"<think>It inhibits the enzyme.</think>\\boxed{{{questions[0].answers[0]}}}")

    async def run() -> list[Any]:
        server = EnvServer(config, address="tcp://127.0.0.1:0")
        serving = asyncio.create_task(server.run())
        client = EnvClient(server.address)
        try:
            with OpenAIServer(fixed_responder(reply)) as model:
                endpoint = vf.EvalClientConfig(base_url=model.base_url, api_key_var=API_KEY_VAR)
                await client.wait_for_server_startup(timeout=HANG_S)
                return [await client.run(endpoint, "trinity-mini", vf.SamplingConfig(), t) for t in tasks]
        finally:
            await client.close()
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
            server.frontend.close()
            server.ctx.term()

    traces = [trace for episode in asyncio.run(run()) for trace in episode.traces]
    return [({k: (r.score, r.weight) for k, r in trace.rewards.items()}, trace.reward) for trace in traces]


@pytest.mark.parametrize(
    ("taskset", "weights", "totals"),
    [
        # format weight 0.2 runs, and is recorded, as 13/64 = 0.203125 (the 1/64 grid)
        ({"format_weight": 0.2}, (0.0, 1.0, 13 / 64), [13 / 64, -1.5 + 13 / 64]),
        ({"task": {"rewards": {"format": {"weight": 0.2}}}}, (0.0, 1.0, 13 / 64), [13 / 64, -1.5 + 13 / 64]),
        ({"reward": "accuracy", "format_weight": 0.2}, (1.0, 0.0, 13 / 64), [1 + 13 / 64, 13 / 64]),
        ({"fn_cost": 0.5, "format_weight": 0.2}, (0.0, 1.0, 13 / 64), [0.5 + 13 / 64, -1.0 + 13 / 64]),
    ],
    ids=["knob", "task.rewards", "reward-accuracy", "fn-cost"],
)
def test_env_server_scores_with_the_configured_weight(
    taskset: dict[str, Any], weights: tuple[float, float, float], totals: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    got = served_rewards(taskset, monkeypatch)
    # the first task (two gold types) gets one of its types: accuracy 1, utility 1 - fn_cost; the second task's
    # gold differs, so the same letter is a false positive and a false negative: utility -0.5 - fn_cost
    fn_cost = taskset.get("fn_cost", 1.0)
    accuracy, utility, fmt = weights
    assert [rewards for rewards, _ in got] == [
        {"accuracy": (1.0, accuracy), "utility": (1.0 - fn_cost, utility), "format": (1.0, fmt)},
        {"accuracy": (0.0, accuracy), "utility": (-0.5 - fn_cost, utility), "format": (1.0, fmt)},
    ]
    # exactly: what prime-rl reads (Trace.reward, verifiers' own sum) is on the grid; its group means are exact
    assert [reward for _, reward in got] == totals
    assert all(exact_group_means(reward) for reward in totals)


def test_v1_config_validates_knobs_and_data(fixture_jsonl: Path, tmp_path: Path) -> None:
    from pydantic import ValidationError

    missing = tmp_path / "missing.jsonl"
    with pytest.raises(ValidationError) as err:
        DrugprotConfig(id="drugprot", data_path=str(missing))
    assert err.value.errors()[0]["msg"] == (
        f"Value error, no such file or directory: {missing}; pass a .parquet, .jsonl or .json file or a directory "
        f"of the official BioCreative VII TSV files (source {missing}, field data_path)"
    )
    with pytest.raises(ValidationError, match="num_tasks must be a positive integer"):
        DrugprotConfig(id="drugprot", data_path=str(fixture_jsonl), num_tasks=0)
    with pytest.raises(ValidationError, match="negatives must be a non-negative integer or 'all', got -2"):
        DrugprotConfig(id="drugprot", data_path=str(fixture_jsonl), negatives=-2)
    with pytest.raises(ValidationError, match="revision 'abc123' selects a version of the hub dataset, but data_path"):
        DrugprotConfig(id="drugprot", data_path=str(fixture_jsonl), revision="abc123")
    assert DrugprotConfig(id="drugprot", split="train", data_path=str(fixture_jsonl)).negatives == 0
    assert DrugprotConfig(id="drugprot", revision="abc123").options().revision == "abc123"  # hub checks: at load


def test_the_default_config_validates_offline_without_a_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """vf-eval validates a default config (no data_path) before it applies the user's flags: offline and with
    nothing cached that must pass (the hub is checked when the tasks are loaded)."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert DrugprotConfig(id="drugprot").data_path is None


@pytest.mark.parametrize(
    ("labels", "with_nr", "passes"),
    [
        (["INHIBITOR"], False, True),  # the first gold letter: utility 1
        (["INHIBITOR", "SUBSTRATE"], False, True),  # one of two types: 1 TP, 1 FN, the most one letter earns
        (["NO-RELATION"], True, True),  # N on a no-relation pair: no cell, utility 0
        (["NO-RELATION"], False, False),  # no N option: the gold letter is not an answer
    ],
)
async def test_validate_checks_every_term_of_the_gold_reply(labels: list[str], with_nr: bool, passes: bool) -> None:
    """``Task.validate`` (``vf-validate``'s gold check): the first gold letter scores accuracy 1, format 1, one true
    positive (none for N) and no false positive."""
    assert await make_task(labels, with_no_relation=with_nr).validate(None) is passes  # type: ignore[arg-type]
