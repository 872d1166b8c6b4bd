"""scripts/prime_rl_check.py and its modules (prime_rl_check_install, _model, _rollouts): the pieces of the
prime-rl rollout check that run without prime-rl.

The check itself (scripts/prime_rl_check.sh) installs prime-rl and is run by hand; these tests pin what it
installs, the replies it scripts and the rewards it expects for them, and its stand-in tokenizer and server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.labels import letter_of, options
from drugprot.core.rewards import DEFAULT_FN_COST, DEFAULT_FP_COST, DEFAULT_WEIGHTS, Reward
from drugprot.core.scoring import score_reply
from tests.bounds import HANG_S
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


check = load_script("prime_rl_check")  # the command line
install = load_script("prime_rl_check_install")
model = load_script("prime_rl_check_model")
rollouts = load_script("prime_rl_check_rollouts")

PYPROJECT = {
    "project": {
        "dependencies": [
            "torch>=2.9.0",
            "vllm>=0.26.0",
            "torchtitan",
            "verifiers[harbor]>=0.3.1.dev59",
            "renderers",
            "prime-pydantic-config>=0.4.3",
            "pyzmq>=27.1.0",
        ]
    },
    "tool": {
        "uv": {
            "override-dependencies": ["torch>=2.9.0", "transformers==5.6.2"],
            "dependency-metadata": [
                {"name": "modelexpress", "requires-dist": ["protobuf>=5.27.0,<7.0.0", "torch>=2.6.0"]}
            ],
            "sources": {
                "torch": {"index": "pytorch-cu128"},
                "vllm": [{"url": "https://github.com/vllm-project/vllm/releases/x.whl", "marker": "m"}],
                "torchtitan": {"git": "https://github.com/pytorch/torchtitan", "rev": "23e4dfc"},
                "verifiers": {"path": "deps/verifiers", "editable": True},
                "renderers": {"path": "deps/renderers", "editable": True},
                "prime-pydantic-config": {"path": "deps/pydantic-config", "editable": True},
            },
        }
    },
}
EXPORT = [
    "-e ./deps/verifiers ; sys_platform == 'linux'",
    "torch==2.11.0+cu128 ; sys_platform == 'linux'",
    "nvidia-cublas-cu12==12.8.4.1 ; sys_platform == 'linux'",
    "cuda-toolkit==12.8.1 ; sys_platform == 'linux'",
    "vllm @ https://github.com/vllm-project/vllm/releases/x.whl ; platform_machine == 'x86_64'",
    "protobuf==6.33.6 ; sys_platform == 'linux'",
]


def test_requirements_leave_out_git_and_url_sources_and_use_local_checkouts(tmp_path: Path) -> None:
    (tmp_path / "deps" / "verifiers").mkdir(parents=True)
    (tmp_path / "deps" / "verifiers" / "pyproject.toml").write_text("[project]\n")
    plan = install.plan_requirements(PYPROJECT, EXPORT, tmp_path)
    assert plan.requirements == [
        "torch>=2.9.0",
        f"-e {tmp_path / 'deps/verifiers'}[harbor]",
        "renderers",  # submodule not checked out: PyPI's release
        "prime-pydantic-config>=0.4.3",
        "pyzmq>=27.1.0",
    ]
    assert plan.left_out == {
        "vllm": "taken from https://github.com/vllm-project/vllm/releases/x.whl",
        "torchtitan": "taken from https://github.com/pytorch/torchtitan",
    }
    # locked versions without the local +cu128 tag; no CUDA 12.8 runtime pins, editables or URL lines
    assert plan.constraints == ["torch==2.11.0 ; sys_platform == 'linux'", "protobuf==6.33.6 ; sys_platform == 'linux'"]
    assert plan.overrides == ["torch>=2.9.0", "transformers==5.6.2", "protobuf>=5.27.0,<7.0.0"]


@pytest.mark.parametrize(
    ("labels", "utilities"),
    [
        (["INHIBITOR"], [1.0, -1.5, -1.0, -1.0]),
        (["PART-OF"], [1.0, -1.5, -1.0, -1.0]),
        (["INDIRECT-DOWNREGULATOR", "INDIRECT-UPREGULATOR"], [0.0, -2.5, -2.0, -2.0]),
    ],
)
def test_scripted_replies_get_the_rewards_the_check_expects(labels: list[str], utilities: list[float]) -> None:
    letters = "".join(label.letter for label in options())
    replies = model.replies_for([letter_of(label) for label in labels], letters, DEFAULT_FP_COST, DEFAULT_FN_COST)
    assert [(r.kind, r.accuracy, r.format) for r in replies] == [
        ("gold answer", 1.0, 1.0),
        ("wrong answer", 0.0, 1.0),
        ("no boxed answer", 0.0, 0.0),
        ("gold, no reasoning", 0.0, 0.0),
    ]
    assert [r.utility for r in replies] == pytest.approx(utilities)
    for reply in replies:  # drugprot's own scorer agrees (inline reasoning, as a model without a parser)
        score = score_reply(reply.text, None, labels)
        terms = {"accuracy": reply.accuracy, "utility": pytest.approx(reply.utility), "format": reply.format}
        assert Reward().terms(score) == terms, reply.kind
        think, _, rest = reply.text.rpartition("</think>")  # and with the reasoning split off, as on prime-rl
        split = score_reply(rest, think.removeprefix("<think>") or None, labels)
        assert Reward().terms(split) == terms, reply.kind
        # the check's expected total is drugprot's reward under the default weights
        assert sum(reply.expected(DEFAULT_WEIGHTS.as_dict()).values()) == pytest.approx(Reward().value(score))
    costly = model.replies_for([letter_of(label) for label in labels], letters, fp_cost=0.25, fn_cost=2.0)
    k = len(labels)
    assert [r.utility for r in costly] == pytest.approx([1 - 2.0 * (k - 1), -0.25 - 2.0 * k, -2.0 * k, -2.0 * k])


def test_configure_points_a_resolved_config_at_the_stand_ins() -> None:
    env = {"taskset": {"id": "drugprot", "data_path": None}, "agent": {"harness": {"id": "null", "skills": []}}}
    orchestrator = {
        "model": {"name": "arcee-ai/Trinity-Mini", "client": {"base_url": "http://localhost:8000/v1"}},
        "tokenizer": {"name": "arcee-ai/Trinity-Mini"},
        "train": {"source": [{"env": env}]},
    }
    knobs = {"tokenizer": "tok", "base_url": "http://127.0.0.1:1/v1", "data": "d.jsonl", "harness": "drugprot"}
    knobs["taskset"] = {"format_weight": 0.2}
    got = rollouts.configure(orchestrator, **knobs)
    assert got["model"] == {
        "name": "tok",
        "client": {"base_url": "http://127.0.0.1:1/v1", "admin_base_url": ["http://127.0.0.1:1/v1"]},
    }
    assert got["tokenizer"] == {"name": "tok"}
    assert got["train"]["source"][0]["env"] == {
        "taskset": {"id": "drugprot", "data_path": "d.jsonl", "format_weight": 0.2},
        "agent": {"harness": {"id": "drugprot"}},
    }
    assert orchestrator["train"]["source"][0]["env"] is env and env["taskset"]["data_path"] is None  # not mutated
    served = rollouts.configure({"env": env, "serve": {}}, **knobs)
    assert served == {"env": got["train"]["source"][0]["env"], "serve": {}}


@pytest.mark.parametrize(
    ("overrides", "weights"),
    [
        ({"format_weight": 0.2}, {"accuracy": 0.0, "utility": 1.0, "format": 13 / 64}),
        ({"reward": "accuracy"}, {"accuracy": 1.0, "utility": 0.0, "format": 0.125}),
        ({"reward": "accuracy", "format_weight": 0.2}, {"accuracy": 1.0, "utility": 0.0, "format": 13 / 64}),
        ({}, {"accuracy": 0.0, "utility": 1.0, "format": 0.125}),
    ],
)
def test_configure_sets_weights_on_a_resolved_taskset(overrides: dict[str, Any], weights: dict[str, float]) -> None:
    """A resolved config (as `rl --dry-run` writes it) states every weight twice, as knobs and folded into
    task.rewards: a new weight or reward must not conflict with the folded copy (it did: "format_weight = 0.2 and
    task.rewards.format.weight = 0.1 both set the weight"), and validation folds the new values."""
    from drugprot.envs.taskset import DrugprotConfig

    from .conftest import FIXTURE_JSONL

    fields = {"id": "drugprot", "data_path": str(FIXTURE_JSONL)}
    resolved = DrugprotConfig.model_validate(fields).model_dump(mode="json")
    assert {name: entry["weight"] for name, entry in resolved["task"]["rewards"].items()} == {
        "accuracy": 0.0, "utility": 1.0, "format": 0.125,
    }  # fmt: skip
    env = {"taskset": resolved, "agent": {"harness": {"id": "null"}}}
    knobs = {"tokenizer": "tok", "base_url": "u", "data": str(FIXTURE_JSONL), "harness": "drugprot"}
    taskset = rollouts.configure({"env": env}, **knobs, taskset=overrides)["env"]["taskset"]
    validated = DrugprotConfig.model_validate(taskset)
    assert {name: entry.weight for name, entry in validated.task.rewards.items()} == weights


def test_byte_tokenizer_is_one_token_per_byte_with_a_chat_template(tmp_path: Path) -> None:
    # transformers is in the locked workspace env (the 0.4.0 stage runs this); the 0.3.1 venv does not install it
    AutoTokenizer = pytest.importorskip("transformers", reason="the 0.3.1 test venv has no transformers").AutoTokenizer

    model.save_byte_tokenizer(tmp_path)
    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    text = "Ü <chemical>x</chemical>"
    assert tok(text, add_special_tokens=False)["input_ids"] == model.token_ids(text) == list(text.encode())
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": text}]
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    rendered = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n"
    assert model.detokenize(list(ids)) == rendered
    assert tok.eos_token_id == 257 and tok.convert_ids_to_tokens([256, 257]) == ["<|im_start|>", "<|im_end|>"]


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=HANG_S) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_token_route_server_answers_each_registered_prompt_with_its_replies_in_turn() -> None:
    script = model.Script()
    replies = model.replies_for(["E"], "ABCDEFGHIJKLM", DEFAULT_FP_COST, DEFAULT_FN_COST)
    script.register("user prompt of pair 1", replies)
    script.register("user prompt of pair 2", replies[:1])
    server = model.make_server(script, "tok", 10240)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with urllib.request.urlopen(f"{base}/v1/models", timeout=HANG_S) as response:
            assert json.loads(response.read())["data"][0] == {
                "id": "tok",
                "object": "model",
                "owned_by": "prime-rl-check",
                "max_model_len": 10240,
            }
        prompt = [256, *model.token_ids("user\nuser prompt of pair 1"), 257]
        body = {"model": "tok", "token_ids": prompt, "sampling_params": {"max_tokens": 2048, "logprobs": 1}}
        answers = [_post(f"{base}/inference/v1/generate", body) for _ in range(5)]
        texts = [model.detokenize(a["choices"][0]["token_ids"]) for _, a in answers]
        assert texts == [r.text + "<|im_end|>" for r in (*replies, replies[0])]
        choice = answers[0][1]["choices"][0]
        assert choice["finish_reason"] == "stop"
        assert choice["logprobs"]["content"][:2] == [
            {"token": f"token_id:{choice['token_ids'][0]}", "logprob": model.LOGPROB},
            {"token": f"token_id:{choice['token_ids'][1]}", "logprob": model.LOGPROB},
        ]
        assert len(choice["logprobs"]["content"]) == len(choice["token_ids"])
        unknown = {**body, "token_ids": model.token_ids("another prompt")}
        assert _post(f"{base}/inference/v1/generate", unknown) == (400, {"error": "prompt matches 0 registered tasks"})
        assert [r["kind"] for r in script.requests] == [r.kind for r in (*replies, replies[0])]
    finally:
        server.shutdown()


def test_rollouts_run_with_a_non_default_weight_unless_told_otherwise() -> None:
    fields = dict(rollouts._field(item) for item in rollouts.DEFAULT_TASKSET)
    assert fields == {"format_weight": 0.2}
    assert fields["format_weight"] != DEFAULT_WEIGHTS.format


def test_prime_rl_names_are_imported_up_front_and_a_missing_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prime-rl without ``InferencePool`` (its branch feat/weight-broadcast-refactor removes it) fails before any
    server starts, naming every missing name and the pin; the others resolve to the modules' objects."""
    import types

    client = types.ModuleType("fake_prime_rl_client")
    config = types.ModuleType("fake_prime_rl_config")
    config.cli = print
    monkeypatch.setitem(sys.modules, "fake_prime_rl_client", client)
    monkeypatch.setitem(sys.modules, "fake_prime_rl_config", config)
    assert rollouts.import_prime_rl({"cli": "fake_prime_rl_config"}) == {"cli": print}
    names = {"cli": "fake_prime_rl_config", "InferencePool": "fake_prime_rl_client", "TrainEnv": "fake_prime_rl_gone"}
    with pytest.raises(rollouts.PrimeRLMismatch) as caught:
        rollouts.import_prime_rl(names)
    message = str(caught.value)
    assert message.startswith(
        "the installed prime-rl lacks what this check drives: fake_prime_rl_client.InferencePool; "
        "fake_prime_rl_gone.TrainEnv (the module does not import: No module named 'fake_prime_rl_gone'). "
    )
    assert "PRIME_RL_COMMIT in scripts/validate_prime_rl.sh" in message


def test_the_rollouts_command_stops_before_any_server_when_prime_rl_lacks_a_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Here prime-rl is not installed at all: exit 2 with the message, nothing written to the work directory."""
    if importlib.util.find_spec("prime_rl") is not None:
        pytest.skip("prime-rl is installed here")
    work = tmp_path / "work"
    argv = ["rollouts", "--configs", str(tmp_path), "--work", str(work), "--data", str(tmp_path / "x.jsonl")]
    assert check.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the installed prime-rl lacks what this check drives: prime_rl.configs.orchestrator")
    assert not work.exists()


PYTHON_FINDER = ROOT / "scripts" / "prime_rl_python.sh"


def _find_python(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = f"source {PYTHON_FINDER}; prime_rl_python"
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=HANG_S)


def _fake_python(path: Path, version: str) -> Path:
    path.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_python_finder_takes_a_python_3_12_named_by_the_knob(tmp_path: Path) -> None:
    fake = _fake_python(tmp_path / "python3.12", "3.12")
    proc = _find_python({**os.environ, "PRIME_RL_PYTHON": str(fake)})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{fake}\n", "")


def test_python_finder_rejects_another_version_named_by_the_knob(tmp_path: Path) -> None:
    fake = _fake_python(tmp_path / "python3.11", "3.11")
    proc = _find_python({**os.environ, "PRIME_RL_PYTHON": str(fake)})
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[0] == (
        f"error: PRIME_RL_PYTHON={fake}: {fake} is not a Python 3.12 interpreter (it is 3.11)."
    )


def _uv_binary() -> Path:
    """uv's executable itself (behind a pyenv shim, the version pyenv selects), so the test runs the real uv."""
    found = shutil.which("uv")
    if found is None:
        pytest.skip("no uv on PATH")
    path = Path(found).resolve()
    if path.read_bytes()[:2] == b"#!":  # a shim script
        proc = subprocess.run(["pyenv", "which", "uv"], capture_output=True, text=True, timeout=HANG_S)
        if proc.returncode != 0:
            pytest.skip(f"uv on PATH is a script that is not a pyenv shim: {path}")
        path = Path(proc.stdout.strip()).resolve()
    return path


def test_python_finder_fails_at_once_naming_the_knob_where_no_3_12_is_installed(tmp_path: Path) -> None:
    """No Python 3.12 on PATH, none managed by uv, no pyenv: an error naming PRIME_RL_PYTHON, and uv was not
    allowed to download one (its downloads come from GitHub)."""
    uv = _uv_binary()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uv").symlink_to(uv)
    env = {
        "PATH": f"{bin_dir}:/bin",
        "HOME": str(tmp_path),
        "PYENV_ROOT": str(tmp_path / "no-pyenv"),
        "UV_PYTHON_INSTALL_DIR": str(tmp_path / "no-uv-pythons"),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
    }
    if Path("/bin/python3.12").exists():
        pytest.skip("/bin has a python3.12")
    proc = _find_python(env)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[:2] == [
        f"error: no Python 3.12 found for PRIME_RL_PYTHON (uv python find without downloads; pyenv versions under "
        f"{tmp_path / 'no-pyenv'}).",
        "       prime-rl needs Python 3.12 (requires-python ~=3.12.0). Set PRIME_RL_PYTHON to a python3.12",
    ]
    assert not (tmp_path / "no-uv-pythons").exists()


# -- scripts/prime_rl_check_loop.py: the orchestrator-loop check's pure pieces -----------------------------------

loop = load_script("prime_rl_check_loop")


def test_an_eval_request_with_sampling_inside_a_literal_extra_body_is_caught() -> None:
    """What prime-rl 559b447's eval client sent for the old recipe: top_k / min_p inside an ``extra_body`` key."""
    want = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 2048}
    sent = {"messages": [], "temperature": 0.7, "top_p": 1.0, "max_tokens": 2048}
    assert loop.sampling_problems("chat", sent, want) == []
    old = {**sent, "extra_body": {"top_k": -1, "min_p": 0.0, "cache_salt": "0"}}
    assert loop.sampling_problems("chat", old, want) == [
        "chat: ['top_k', 'min_p'] inside a literal extra_body key, which vLLM does not read"
    ]
    assert loop.sampling_problems("chat", {**sent, "temperature": 1.0}, want) == [
        "chat: temperature = 1.0, the TOML says 0.7"
    ]
    train = {"token_ids": [1], "sampling_params": {"temperature": 0.7, "top_p": 1.0, "max_tokens": 2048, "top_k": -1}}
    assert loop.sampling_problems("generate", train, {**want, "top_k": -1}) == []


def test_expected_sampling_reads_the_resolved_recipe_and_flags_the_model_generation_config() -> None:
    orchestrator = {
        "train": {
            "sampling": {"temperature": 0.7, "max_completion_tokens": 2048},
            "source": [{"sampling": {"extra_body": {"top_k": -1, "min_p": 0.0, "return_token_ids": True}}}],
        },
        "eval": {"sampling": {"temperature": 0.7, "top_p": 1.0, "max_completion_tokens": 2048}},
    }
    train, evaluation, problems = loop.expected_sampling(orchestrator, {"vllm": {"generation_config": "vllm"}})
    assert train == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 2048, "top_k": -1, "min_p": 0.0}
    assert evaluation == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 2048}
    assert problems == []
    orchestrator["eval"]["sampling"] |= {"top_k": -1}
    assert loop.expected_sampling(orchestrator, {"vllm": {}})[2] == [
        "inference.vllm.generation_config is not 'vllm': the model's generation config sets top_k/min_p (and any "
        "other field a request leaves unset) for eval requests",
        "eval sampling sets top_k/min_p: prime-rl sends them in a literal extra_body vLLM ignores",
    ]


def _shipped_group(reward_weights: dict[str, float]) -> tuple[dict[int, list[dict]], object]:
    """A one-reward group (eight gold answers on a NO-RELATION pair) as it reaches the trainer with the old weights:
    every sample's advantage -7.450580596923828e-09, what prime-rl 559b447 computes for 8 x 0.1 in torch float32
    (``tests/core/test_group_means.py``)."""
    replies = loop.model.replies_for(["N"], "EN", 0.5, 1.0)
    task = loop.Task("prompt", "PMID1:T1:T2", ["NO-RELATION"], replies, uniform=True, served=[replies[0]] * 8)
    scripted = loop.Scripted({"prompt": task})
    text = f"user: prompt assistant: {replies[0].text}"
    prompt = len(text) - len(replies[0].text)
    ids = list(text.encode())
    sample = {"ids": ids, "mask": [i >= prompt for i in range(len(ids))], "adv": [-7.450580596923828e-09] * len(ids)}
    return {1: [sample] * 8}, scripted


def test_a_shipped_group_of_equal_rewards_is_a_problem_not_a_note() -> None:
    """The loop check fails when a group of equal rewards reaches the trainer (issue 41): one line names it."""
    old = {"accuracy": 0.0, "utility": 1.0, "format": 0.1}  # the default weights before scorer version 4
    shipped, scripted = _shipped_group(old)
    _, problems, notes = loop.check_batches(shipped, scripted, old)
    assert notes == []
    assert len(problems) == 1 and problems[0].startswith(
        "a group of 8 equal rewards (gold answer, reward 0.1) reached the trainer (8 samples, advantages "
        "[-7.450580596923828e-09], not 0.0)"
    )
    assert problems[0].endswith(
        "): prime-rl's float32 mean of the group is not the reward, so filter_zero_advantages kept it; every "
        "reward must have exact float32 group means (drugprot.core.rewards.exact_group_means)"
    )
    # with the grid's weights the group's advantage is exactly 0.0: prime-rl drops it, nothing reaches the trainer
    new = {"accuracy": 0.0, "utility": 1.0, "format": 0.125}
    assert loop.check_batches({}, _shipped_group(new)[1], new) == ([], [], [])


def test_a_micro_batch_splits_into_its_samples_at_each_position_restart() -> None:
    from types import SimpleNamespace

    mb = SimpleNamespace(
        position_ids=[0, 1, 2, 0, 1, 0],
        input_ids=[10, 11, 12, 20, 21, 30],
        loss_mask=[False, True, True, False, True, False],
        advantages=[0.0, 0.5, 0.5, 0.0, -0.5, 0.0],
    )
    assert loop.split_samples(mb) == [  # the last one has no trained token (padding)
        {"ids": [10, 11, 12], "mask": [False, True, True], "adv": [0.0, 0.5, 0.5]},
        {"ids": [20, 21], "mask": [False, True], "adv": [0.0, -0.5]},
    ]


def test_scale_down_keeps_the_recipe_but_its_size() -> None:
    orchestrator = {
        "max_steps": 100,
        "batch_size": 128,
        "group_size": 8,
        "eval": {"interval": 50, "source": [{"env": {"taskset": {"num_tasks": 2000}}}]},
        "train": {"source": [{"env": {"taskset": {"reward": "utility"}}}]},
    }
    got = loop.scale_down(orchestrator, max_steps=2, batch_size=24, eval_tasks=4, output_dir=Path("out"))
    assert got == {
        "max_steps": 2,
        "batch_size": 24,
        "group_size": 8,
        "output_dir": "out",
        "rollout_transport": {"type": "filesystem"},
        "eval": {"interval": 1, "source": [{"interval": 1, "env": {"taskset": {"num_tasks": 4}}}]},
        "train": {"source": [{"env": {"taskset": {"reward": "utility", "num_tasks": 200}}}]},
    }
    assert orchestrator["max_steps"] == 100  # not mutated


def test_a_placeholder_passes_a_decorated_function_through_and_raises_when_called() -> None:
    placeholder = loop.Placeholder("torchtitan.distributed.expert_parallel.expert_parallel")

    def grouped_mm() -> int:
        return 1

    assert placeholder(grouped_mm) is grouped_mm
    with pytest.raises(RuntimeError, match="the orchestrator called it"):
        placeholder(1, 2)
    with pytest.raises(RuntimeError, match=r"vllm\.x\.y is a placeholder"):
        loop.Placeholder("vllm").x.y()


def test_the_loop_reads_its_own_metrics_with_drugprot_curves(tmp_path: Path) -> None:
    """The loop check's metrics (both scopes, one group in three all-equal) read by ``drugprot curves``: the
    all-rollouts trainable share below 1 and accuracy 0.5 beside the trained-on 0.25, no problem; a file with the
    effective scope only (what drugprot read before) is a problem, and no file at all a note."""
    from tests.evaluation.test_curves import ORCHESTRATOR_LOG, loop_check_run

    run = loop_check_run(tmp_path / "work" / "run", log=None)
    (tmp_path / "work" / "orchestrator.log").write_text(ORCHESTRATOR_LOG, encoding="utf-8")
    table, problems = loop.curves_check(tmp_path / "work")
    assert problems == []
    assert "  train raw accuracy                0.500 (1)         0.500 (0)       2         0.250 (1)" in table
    assert "  train trainable share             0.667 (1)                 -       2         1.000 (1)" in table
    assert table[-2].startswith("  empty train batches: 2 of 4 (50.0%; longest run 2/10)")
    metrics = run / "metrics.jsonl"
    effective_only = metrics.read_text(encoding="utf-8").splitlines()
    metrics.write_text(
        "\n".join(
            json.dumps({k: v for k, v in json.loads(line).items() if "/all/" not in k}) for line in effective_only
        ),
        encoding="utf-8",
    )
    assert loop.curves_check(tmp_path / "work")[1] == [
        "drugprot curves read the train scopes ('effective',), not all and effective",
        "drugprot curves shows an all-rollouts trainable share of [1.0, 1.0]: one group in 3 is all-equal, so it "
        "must fall below 1",
    ]
    metrics.unlink()
    assert loop.curves_check(tmp_path / "work") == (
        ["NOTE: no metrics.jsonl under work/ (the file monitor is off): curves not checked"],
        [],
    )


def test_the_check_refuses_a_work_folder_it_did_not_make_before_doing_anything(tmp_path: Path) -> None:
    """It replaces WORK/prime-rl, WORK/dry-run and WORK/loop: a folder of the user's (not empty, no marker) is
    refused with exit 2 and left as it was."""
    work = tmp_path / "mine"
    (work / "prime-rl").mkdir(parents=True)
    (work / "prime-rl" / "notes.txt").write_text("mine\n", encoding="utf-8")
    script = ROOT / "scripts" / "prime_rl_check.sh"
    proc = subprocess.run(["bash", str(script), str(work)], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        f"error: WORK_DIR {work} is not empty and was not made by this script (no .prime-rl-check in it), and the "
        "check replaces its prime-rl, dry-run and loop folders: name a new or empty folder (a folder an earlier run "
        f"made: create {work / '.prime-rl-check'})\n",
    )
    assert sorted(str(p.relative_to(work)) for p in work.rglob("*")) == ["prime-rl", "prime-rl/notes.txt"]
