"""``drugprot predict``: the environment's prompt for one pair, generation plumbing, the parser on the reply.

A random tiny model cannot answer, so the model-backed tests check determinism and plumbing; a stub model
that replies with fixed text checks the reply reaches the environment's parser.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.adapters import AdapterError
from drugprot.adapters.predict import Prediction, build_question, chat_messages, find_mention, predict
from drugprot.parsing import ParsedReply, parse_reply
from drugprot.prompts import system_prompt
from drugprot.schema import Entity

TEXT = (
    "Low-dose aspirin and platelets. Aspirin irreversibly acetylates COX-1; aspirin also acetylates COX-2, "
    "switching its product profile."
)
GREEDY = {"max_new_tokens": 3, "temperature": 0.0, "top_p": 1.0, "top_k": 0, "min_p": 0.0, "seed": 0}


def test_first_occurrence_is_marked_in_the_environment_prompt() -> None:
    question = build_question(TEXT, "aspirin", "COX-2", pmid="123")
    assert question.system_prompt == system_prompt(False)
    assert "Low-dose <chemical>aspirin</chemical> and platelets." in question.prompt
    assert "also acetylates <gene>COX-2</gene>, switching" in question.prompt
    assert question.prompt.count("<chemical>aspirin</chemical>") == 1
    assert question.prompt.count("<gene>COX-2</gene>") == 1
    assert question.prompt.startswith("Abstract (PMID 123):\n")
    assert (question.chemical, question.gene, question.labels) == ("aspirin", "COX-2", ())
    assert chat_messages(question) == [
        {"role": "system", "content": question.system_prompt},
        {"role": "user", "content": question.prompt},
    ]


def test_name_is_found_case_insensitively_when_not_written_as_given() -> None:
    assert find_mention(TEXT, "LOW-DOSE", "T1", "CHEMICAL") == Entity("T1", "CHEMICAL", "Low-dose", 0, 8)
    entity = find_mention(TEXT, "cox-1", "T2", "GENE")
    assert (entity.text, entity.start, entity.end) == ("COX-1", TEXT.index("COX-1"), TEXT.index("COX-1") + 5)


@pytest.mark.parametrize(
    ("chemical", "gene", "message"),
    [
        ("ibuprofen", "COX-2", "--chemical 'ibuprofen' does not occur in the text"),
        ("aspirin", "TP53", "--gene 'TP53' does not occur in the text"),
        ("  ", "COX-2", "--chemical is empty"),
    ],
)
def test_names_not_in_the_text_are_refused(chemical: str, gene: str, message: str) -> None:
    with pytest.raises(AdapterError, match=message):
        build_question(TEXT, chemical, gene)


def test_no_relation_option_is_offered_on_request() -> None:
    question = build_question(TEXT, "aspirin", "COX-2", with_no_relation=True)
    assert question.with_no_relation and "N. NO-RELATION" in question.prompt


class _StubModel:
    """Replies with fixed text after the prompt, whatever the input (a stand-in for a trained model)."""

    def __init__(self, tokenizer: Any, reply: str) -> None:
        self.tokenizer, self.reply, self.prompts = tokenizer, reply, []

    def parameters(self) -> Any:
        import torch

        yield torch.zeros(1)

    def generate(self, input_ids: Any, **kwargs: Any) -> Any:
        import torch

        self.prompts.append(self.tokenizer.decode(input_ids[0]))
        reply = torch.tensor([self.tokenizer.encode(self.reply)])
        return torch.cat([input_ids, reply], dim=1)


def test_reply_goes_through_the_environment_parser(kit: SimpleNamespace) -> None:
    tokenizer = kit.make_tokenizer()
    stub = _StubModel(tokenizer, "The text says aspirin acetylates it.</think>\n\\boxed{E}")
    result = predict(stub, tokenizer, build_question(TEXT, "aspirin", "COX-2"), **GREEDY)
    assert result.parsed == ParsedReply("E", None, True, 1)
    assert result.label == "INHIBITOR"
    assert result.reply == "The text says aspirin acetylates it.</think>\n\\boxed{E}"
    assert stub.prompts[0].endswith("<|im_start|>assistant\n<think>\n")
    assert "Low-dose <chemical>aspirin</chemical>" in stub.prompts[0]


def test_tiny_model_generation_is_deterministic_and_parsed(
    base_dir: Path, load_base: Any, kit: SimpleNamespace
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(base_dir))
    model = load_base()
    question = build_question(TEXT, "aspirin", "COX-2")
    rendered = tokenizer.apply_chat_template(chat_messages(question), tokenize=False, add_generation_prompt=True)
    assert "Low-dose <chemical>aspirin</chemical>" in rendered and "<gene>COX-2</gene>" in rendered
    first = predict(model, tokenizer, question, **GREEDY)
    second = predict(model, tokenizer, question, **GREEDY)
    assert isinstance(first, Prediction) and isinstance(first.parsed, ParsedReply)
    assert first.reply == second.reply
    assert first.parsed == parse_reply(first.reply)
    assert first.label is None if first.parsed.letter is None else first.label is not None


def test_predict_command_with_adapter(base_dir: Path, prime_rl_adapter: Path, capsys: pytest.CaptureFixture) -> None:
    from drugprot.cli import main

    code = main(
        [
            "predict",
            "--model",
            str(base_dir),
            "--adapter",
            str(prime_rl_adapter),
            "--text",
            TEXT,
            "--chemical",
            "aspirin",
            "--gene",
            "COX-2",
            "--temperature",
            "0",
            "--max-new-tokens",
            "4",
            "--dtype",
            "float32",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0] in (
        "adapter: 50 LoRA modules verified (fused experts)",
        "adapter: 50 LoRA modules verified (modules experts)",
    )
    assert out[1].startswith("answer: ") and out[2] == "--- reply ---"


def test_predict_command_reports_a_missing_name(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from drugprot.cli import main

    code = main(["predict", "--model", str(tmp_path), "--text", TEXT, "--chemical", "ibuprofen", "--gene", "COX-2"])
    assert code == 1
    assert (
        capsys.readouterr().err
        == "error: --chemical 'ibuprofen' does not occur in the text; pass the name as written\n"
    )


def _without_the_extra(args: list[str]) -> subprocess.CompletedProcess:
    """``drugprot ARGS`` in a fresh interpreter where torch, transformers, peft and safetensors cannot be imported."""
    code = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'peft', 'safetensors'):\n"
        "    sys.modules[name] = None  # import raises ImportError, find_spec returns None\n"
        "from drugprot.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)


QUESTION = ["--text", TEXT, "--chemical", "aspirin", "--gene", "COX-2"]


def test_predict_without_the_adapters_extra_says_how_to_install_it(base_dir: Path) -> None:
    done = _without_the_extra(["predict", "--model", str(base_dir), *QUESTION])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: drugprot predict needs the adapters extra (torch, transformers, peft, safetensors not installed); "
        "from the drugprot repository root run: uv pip install -e 'environments/drugprot[adapters]'\n"
    )


def test_merge_without_the_adapters_extra_says_how_to_install_it(tmp_path: Path) -> None:
    args = ["adapter", "merge", "--base", str(tmp_path), "--adapter", str(tmp_path), "--out", str(tmp_path / "o")]
    done = _without_the_extra(args)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: drugprot adapter merge needs the adapters extra (torch, safetensors not installed); "
        "from the drugprot repository root run: uv pip install -e 'environments/drugprot[adapters]'\n"
    )
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda d: d / "nowhere",
            "--model {m} is not a directory; download the model first (hf download "
            "arcee-ai/Trinity-Mini --local-dir {m})",
        ),
        (lambda d: d, "--model {m} has no config.json; pass the model's own directory"),
    ],
)
def test_predict_checks_the_model_path_before_anything_is_loaded(tmp_path: Path, make: Any, message: str) -> None:
    model = make(tmp_path)
    done = _without_the_extra(["predict", "--model", str(model), *QUESTION])  # no torch needed to say so
    assert (done.returncode, done.stderr) == (1, "error: " + message.format(m=model) + "\n")


def test_predict_checks_the_adapter_before_anything_is_loaded(base_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "adapter_config.json").write_text('{"r": 4, "lora_alpha": Infinity}', encoding="utf-8")
    done = _without_the_extra(["predict", "--model", str(base_dir), "--adapter", str(tmp_path), *QUESTION])
    assert (done.returncode, done.stderr) == (
        1,
        f"error: {tmp_path / 'adapter_config.json'}: the adapter config is not valid JSON "
        "(Infinity is not a JSON number)\n",
    )


def test_predict_reports_a_text_file_that_is_not_utf8(base_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "abstract.txt").write_bytes(TEXT.encode() + b" \xff")
    args = ["predict", "--model", str(base_dir), "--text-file", str(tmp_path / "abstract.txt")]
    done = _without_the_extra([*args, "--chemical", "aspirin", "--gene", "COX-2"])
    assert (done.returncode, done.stderr) == (
        1,
        f"error: --text-file {tmp_path / 'abstract.txt'}: not UTF-8 text (byte {len(TEXT) + 1}); re-save it as UTF-8\n",
    )
