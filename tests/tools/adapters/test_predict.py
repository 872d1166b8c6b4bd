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

from drugprot.core.parsing import ParsedReply, parse_reply
from drugprot.core.prompts import system_prompt
from drugprot.core.schema import Entity
from drugprot.tools.adapters import AdapterError
from drugprot.tools.adapters.predict import Prediction, build_question, chat_messages, find_mention, predict

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
    assert (question.chemical.text, question.gene.text, question.labels) == ("aspirin", "COX-2", ())
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
    from drugprot.tools.cli import main

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
        "adapter: 50 LoRA modules verified (fused experts), merged into the weights",
        "adapter: 50 LoRA modules verified (modules experts), merged into the weights",
    )
    assert out[1].startswith("answer: ") and out[2] == "--- reply ---"


def _predict_args(*extra: str) -> Any:
    """``drugprot predict`` arguments as its own parser reads them (the adapter path is filled in later)."""
    from drugprot.tools.cli import build_parser

    argv = ["predict", *extra, *QUESTION, "--dtype", "float32"]
    return build_parser(argv).parse_args(argv)


def _lora_layers(model: Any) -> list[str]:
    from peft.tuners.lora import LoraLayer

    return [name for name, module in model.named_modules() if isinstance(module, LoraLayer)]


def _changed(model: Any, base: dict[str, Any]) -> set[str]:
    """Names of ``model``'s parameters whose values differ from ``base``'s."""
    return {name for name, value in model.state_dict().items() if not bool((value == base[name]).all())}


def test_predict_merges_the_adapter_into_the_weights_by_default(
    base_dir: Path, prime_rl_adapter: Path, lora_tensors: dict[str, Any], load_base: Any, kit: SimpleNamespace
) -> None:
    from peft import PeftModel

    from drugprot.tools.adapters.predict import adapter_line, load_model

    args = _predict_args("--model", str(base_dir), "--adapter", str(prime_rl_adapter))
    assert args.merge is True
    model, report = load_model(args)
    assert report is not None and report.merged and report.modules_verified == 50
    assert not isinstance(model, PeftModel) and _lora_layers(model) == []
    base = load_base().state_dict()
    reference = load_base()
    kit.apply_reference_deltas(reference, lora_tensors, kit.SCALE)  # W + (alpha/r) B @ A, computed by the test
    expected = reference.state_dict()
    assert sorted(model.state_dict()) == sorted(expected)
    # exactly the adapted weights changed: 20 attention + 6 dense MLP + 4 fused (or 24 per-expert) expert tensors
    assert _changed(model, base) == _changed(reference, base)
    assert len(_changed(reference, base)) == (30 if report.layout == "fused" else 50)
    for name, value in model.state_dict().items():
        kit.torch.testing.assert_close(value, expected[name], rtol=1e-6, atol=1e-7, msg=name)
    assert adapter_line(report) == (
        f"adapter: 50 LoRA modules verified ({report.layout} experts), merged into the weights"
    )


def test_predict_no_merge_keeps_the_lora_layers_and_the_base_weights(
    base_dir: Path, prime_rl_adapter: Path, base_logits: Any, reference_logits: Any, kit: SimpleNamespace
) -> None:
    from peft import PeftModel

    from drugprot.tools.adapters.predict import adapter_line, load_model

    args = _predict_args("--model", str(base_dir), "--adapter", str(prime_rl_adapter), "--no-merge")
    assert args.merge is False
    model, report = load_model(args)
    assert report is not None and not report.merged and report.modules_verified == 50
    assert isinstance(model, PeftModel)
    assert len(_lora_layers(model)) == (30 if report.layout == "fused" else 50)
    with model.disable_adapter():
        assert bool((kit.logits(model) == base_logits).all())  # the base weights are untouched
    assert float((kit.logits(model) - reference_logits).abs().max()) <= 1e-4
    assert adapter_line(report) == (
        f"adapter: 50 LoRA modules verified ({report.layout} experts), kept as LoRA layers (--no-merge)"
    )


def test_predict_json_says_whether_the_adapter_was_merged(
    base_dir: Path, prime_rl_adapter: Path, capsys: pytest.CaptureFixture
) -> None:
    import json

    from drugprot.tools.cli import main

    common = ["predict", "--model", str(base_dir), "--adapter", str(prime_rl_adapter), *QUESTION]
    common += ["--temperature", "0", "--max-new-tokens", "2", "--dtype", "float32", "--json"]
    assert main(common) == 0
    merged = json.loads(capsys.readouterr().out)
    assert main([*common, "--no-merge"]) == 0
    unmerged = json.loads(capsys.readouterr().out)
    assert (merged["adapter_merged"], merged["adapter_modules_verified"]) == (True, 50)
    assert (unmerged["adapter_merged"], unmerged["adapter_modules_verified"]) == (False, 50)


def test_predict_help_says_it_is_for_a_few_answers_and_points_to_vllm(capsys: pytest.CaptureFixture) -> None:
    from drugprot.tools.adapters.predict import DESCRIPTION
    from drugprot.tools.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["predict", "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert DESCRIPTION in text
    assert "to inspect a few answers" in DESCRIPTION and "vLLM (--enable-lora, or the merged checkpoint)" in DESCRIPTION
    assert "--merge, --no-merge merge the verified adapter into the weights in memory (the default;" in text
    assert "--no-merge keeps PEFT's LoRA layers, for debugging them" in text


def test_predict_command_reports_a_missing_name(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from drugprot.tools.cli import main

    code = main(["predict", "--model", str(tmp_path), "--text", TEXT, "--chemical", "ibuprofen", "--gene", "COX-2"])
    assert code == 2
    assert (
        capsys.readouterr().err
        == "drugprot predict: error: --chemical 'ibuprofen' does not occur in the text; pass the name as written\n"
    )


def _without_the_extra(args: list[str]) -> subprocess.CompletedProcess:
    """``drugprot ARGS`` in a fresh interpreter where torch, transformers, peft and safetensors cannot be imported."""
    code = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'peft', 'safetensors'):\n"
        "    sys.modules[name] = None  # import raises ImportError, find_spec returns None\n"
        "from drugprot.tools.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)


QUESTION = ["--text", TEXT, "--chemical", "aspirin", "--gene", "COX-2"]


def test_predict_without_the_adapters_extra_says_how_to_install_it(base_dir: Path) -> None:
    done = _without_the_extra(["predict", "--model", str(base_dir), *QUESTION])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "drugprot predict: error: drugprot predict needs the adapters extra (torch, transformers, peft, safetensors "
        "not installed); "
        "from the drugprot repository root run: uv pip install -e 'environments/drugprot[adapters]'\n"
    )


def test_merge_without_the_adapters_extra_says_how_to_install_it(tmp_path: Path) -> None:
    args = ["adapter", "merge", "--base", str(tmp_path), "--adapter", str(tmp_path), "--out", str(tmp_path / "o")]
    done = _without_the_extra(args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "drugprot adapter: error: drugprot adapter merge needs the adapters extra (torch, safetensors not installed); "
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
    assert (done.returncode, done.stderr) == (2, "drugprot predict: error: " + message.format(m=model) + "\n")


def test_predict_checks_the_adapter_before_anything_is_loaded(base_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "adapter_config.json").write_text('{"r": 4, "lora_alpha": Infinity}', encoding="utf-8")
    done = _without_the_extra(["predict", "--model", str(base_dir), "--adapter", str(tmp_path), *QUESTION])
    assert (done.returncode, done.stderr) == (
        2,
        f"drugprot predict: error: {tmp_path / 'adapter_config.json'}: the adapter config is not valid JSON "
        "(Infinity is not a JSON number)\n",
    )


def test_predict_reports_a_text_file_that_is_not_utf8(base_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "abstract.txt").write_bytes(TEXT.encode() + b" \xff")
    args = ["predict", "--model", str(base_dir), "--text-file", str(tmp_path / "abstract.txt")]
    done = _without_the_extra([*args, "--chemical", "aspirin", "--gene", "COX-2"])
    assert (done.returncode, done.stderr) == (
        2,
        f"drugprot predict: error: --text-file {tmp_path / 'abstract.txt'}: not UTF-8 text (byte {len(TEXT) + 1}); "
        "re-save it as UTF-8\n",
    )
