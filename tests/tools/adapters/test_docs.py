"""docs/adapters.md: the measured speed figures as the project gave them, and evaluation commands that fit.

vLLM is not installed here, so the ``vllm serve`` commands are checked against the rules the doc cites from
vLLM's source (``--lora-modules`` name=path parsing, the allowed ``--max-lora-rank`` values) and against each
other: every ``vf-eval`` asks for a model name one of the servers serves, on the port it listens on. Each
``vf-eval`` command runs word for word through the installed verifiers' ``vf-eval --dry-run``, which
validates it, writes the resolved config and exits.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "adapters.md"
# vllm/config/lora.py, MaxLoRARanks
VLLM_MAX_LORA_RANKS = {1, 8, 16, 32, 64, 128, 256, 320, 512}


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def _section(title: str) -> str:
    """The doc's text from the heading ``title`` to the next heading of the same or a higher level."""
    text = _text()
    match = re.search(rf"^(#+) {re.escape(title)}\n", text, flags=re.MULTILINE)
    assert match is not None, title
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{len(match.group(1))}}} ", rest, flags=re.MULTILINE)
    return rest[: end.start()] if end else rest


def _commands(text: str) -> list[list[str]]:
    """Every command line of the ```bash blocks in ``text``, continuation lines joined, as shlex words."""
    lines: list[list[str]] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                lines.append(words)
    return lines


def _option(words: list[str], flag: str, default: str | None = None) -> str | None:
    return words[words.index(flag) + 1] if flag in words else default


def _served_names(serve: list[str]) -> set[str]:
    """The model names a ``vllm serve`` command answers to: the served name (or the model) and its LoRAs."""
    names = {_option(serve, "--served-model-name", serve[2])}
    if "--lora-modules" in serve:
        names.add(_option(serve, "--lora-modules").split("=")[0])
    return names


def test_the_speed_figures_are_the_projects_measurement_with_machine_and_versions() -> None:
    section = _section("Measured speed (transformers + PEFT, one GPU)")
    prose = " ".join(section.split())
    assert prose.startswith(
        "Measured by the project on one NVIDIA H200 with transformers 5.17 and PEFT 0.21, on a full-width "
        "Trinity-Mini-shaped model (the real architecture and sizes, random bf16 weights) and an adapter written "
        "in prime-rl's format at r=16, experts included (all 11,686 modules):"
    )
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert rows == [
        "| `drugprot adapter merge` (all 11,686 modules; the result was bit-exact) | 44 s, 12.2 GiB peak RSS |",
        '| `load_model_with_adapter(..., device="cuda")`: load, verify every module, probe | 118 s |',
        "| greedy generation, LoRA unmerged (`merge=False`, `drugprot predict --no-merge`) | 3.8 tokens/s |",
        "| greedy generation, `merge=True` (the `drugprot predict` default) | 12.1 tokens/s |",
        "| greedy generation from the merged checkpoint (`AutoModelForCausalLM.from_pretrained`) | 8.4 tokens/s |",
    ]
    assert "transformers is a tool for inspecting a few answers, not for evaluating a split." in " ".join(
        _section("Which tool for which job").split()
    )


def test_the_derived_times_follow_from_the_figures() -> None:
    prose = " ".join(_section("Measured speed (transformers + PEFT, one GPU)").split())
    assert "about 1,000 tokens a reply" in prose
    # 1,000 tokens at 12.1 / 8.4 / 3.8 tokens/s; 100 pairs at the fastest rate
    assert (round(1000 / 12.1, -1), round(1000 / 8.4 / 60), round(1000 / 3.8 / 60, 1)) == (80, 2, 4.4)
    assert round(100 * 1000 / 12.1 / 3600, 1) == 2.3
    assert (
        "about 80 s per answer merged in memory, 2 minutes from the merged checkpoint and 4.4 minutes unmerged, "
        "so 100 validation pairs take 2.3 hours or more" in prose
    )


def test_the_lora_server_command_follows_vllms_flag_rules_and_the_training_rank() -> None:
    commands = _commands(_section("Option 1: serve the base model with the adapter (`--enable-lora`)"))
    (serve,) = [words for words in commands if words[:2] == ["vllm", "serve"]]
    assert serve[2] == "arcee-ai/Trinity-Mini" and "--enable-lora" in serve
    lora = _option(serve, "--lora-modules")
    # vllm/entrypoints/openai/cli_args.py LoRAParserAction: name=path only with one "=" and no ","
    assert lora.count("=") == 1 and "," not in lora
    name, path = lora.split("=")
    assert (name, Path(path).is_absolute()) == ("drugprot", True)
    rank = int(_option(serve, "--max-lora-rank"))
    trained = tomllib.loads((ROOT / "configs" / "drugprot.toml").read_text(encoding="utf-8"))
    assert rank in VLLM_MAX_LORA_RANKS and rank >= trained["trainer"]["model"]["lora"]["rank"] == 16
    assert int(_option(serve, "--max-loras")) >= 1


@pytest.mark.parametrize(
    ("title", "models"),
    [
        ("Option 1: serve the base model with the adapter (`--enable-lora`)", ["drugprot", "trinity-mini"]),
        ("Option 2: serve the merged checkpoint", ["trinity-mini-drugprot"]),
    ],
)
def test_each_vf_eval_asks_the_server_of_its_section_for_a_name_it_serves(title: str, models: list[str]) -> None:
    commands = _commands(_section(title))
    (serve,) = [words for words in commands if words[:2] == ["vllm", "serve"]]
    evals = [words for words in commands if words[0] == "vf-eval"]
    assert [_option(words, "-m") for words in evals] == models
    assert set(models) <= _served_names(serve)
    port = _option(serve, "--port", "8000")
    for words in evals:
        assert words[1] == "drugprot"
        assert _option(words, "--client.base-url") == f"http://127.0.0.1:{port}/v1"
        assert _option(words, "--client.api-key-var") == "VLLM_API_KEY"
        assert _option(words, "-n") == "100"


def _doc_vf_evals() -> list[list[str]]:
    return [words for words in _commands(_text()) if words[0] == "vf-eval"]


def test_the_doc_has_three_vf_eval_commands() -> None:
    assert [_option(words, "-m") for words in _doc_vf_evals()] == ["drugprot", "trinity-mini", "trinity-mini-drugprot"]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_each_vf_eval_command_resolves_in_the_installed_verifiers(index: int, tmp_path: Path) -> None:
    """The doc's command, word for word, through the real ``vf-eval --dry-run`` (validates and writes the config)."""
    from importlib.metadata import version

    if tuple(int(part) for part in version("verifiers").split(".")[:2]) < (0, 4):
        pytest.skip("the doc's commands are for the v1 vf-eval of verifiers 0.4.x")
    words = _doc_vf_evals()[index]
    vf_eval = Path(sys.executable).with_name("vf-eval")
    argv = [str(vf_eval), *words[1:], "--dry-run", "-o", str(tmp_path / "outputs")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    (resolved,) = (tmp_path / "outputs").glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text(encoding="utf-8"))
    assert config["model"] == _option(words, "-m")
    assert (config["client"]["base_url"], config["client"]["api_key_var"]) == (
        "http://127.0.0.1:8000/v1",
        "VLLM_API_KEY",
    )
    assert (config["env"]["taskset"]["id"], config["select"]["limit"], config["push"]) == ("drugprot", 100, False)


def test_the_comparable_config_command_keeps_the_pinned_sampling_with_the_adapter_name(tmp_path: Path) -> None:
    """``vf-eval @ configs/eval/local-vllm.toml -m drugprot``: the TOML's settings, the adapter's model name."""
    from importlib.metadata import version

    if tuple(int(part) for part in version("verifiers").split(".")[:2]) < (0, 4):
        pytest.skip("the doc's commands are for the v1 vf-eval of verifiers 0.4.x")
    (inline,) = set(re.findall(r"`(vf-eval @ configs/eval/local-vllm\.toml -m drugprot)`", _text()))
    words = shlex.split(inline)
    vf_eval = Path(sys.executable).with_name("vf-eval")
    argv = [str(vf_eval), *words[1:], "--dry-run", "-o", str(tmp_path / "outputs")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600, cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    (resolved,) = (tmp_path / "outputs").glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text(encoding="utf-8"))
    assert (config["model"], config["client"]["base_url"], config["push"]) == (
        "drugprot",
        "http://localhost:8000/v1",
        False,
    )
    assert (config["sampling"]["temperature"], config["sampling"]["max_tokens"]) == (0.7, 2048)
    taskset = config["env"]["taskset"]
    assert (taskset["split"], taskset["num_tasks"], taskset["shuffle"], taskset["seed"]) == ("validation", 100, True, 0)
