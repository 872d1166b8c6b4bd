"""``drugprot predict``: ask a local model (optionally + a LoRA adapter) about one chemical/gene pair.

The question is the environment's own: ``drugprot.modes.pair.task.question_for`` renders the system prompt and
the user prompt with the two mentions marked, the chat template of the model's tokenizer wraps them, and
``drugprot.core.parsing.parse_reply`` reads the answer. The mentions are the first occurrence of each name in
the text. An adapter is loaded with ``peft_loading.load_model_with_adapter`` (rewritten for the installed
transformers and verified), so a silently ignored adapter cannot produce base-model answers, and then merged
into the weights (``--no-merge`` keeps the PEFT LoRA layers, for debugging them).

This is a tool for inspecting a few answers. transformers generates one reply at a few tokens per second on
Trinity-Mini (docs/adapters.md has the measured figures); evaluate a split with vLLM and ``vf-eval``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drugprot.core.errors import DrugprotError
from drugprot.core.labels import by_letter
from drugprot.core.outputs import EXIT_ERROR, error_line
from drugprot.core.parsing import ParsedReply, parse_reply
from drugprot.core.question import Question
from drugprot.core.schema import Document, Entity
from drugprot.core.tasks import PairTask
from drugprot.modes.pair.task import question_for
from drugprot.tools.adapters import AdapterError, require_adapters_extra
from drugprot.tools.adapters.layout import read_adapter

if TYPE_CHECKING:
    from drugprot.tools.adapters.peft_loading import PeftLoadReport

# Trinity-Mini's model card chat settings.
CARD_SAMPLING = {"temperature": 0.15, "top_p": 0.75, "top_k": 50, "min_p": 0.06}


@dataclass(frozen=True)
class Prediction:
    """One answered question: what was asked, the raw reply, and what the parser made of it."""

    question: Question
    reply: str
    parsed: ParsedReply

    @property
    def label(self) -> str | None:
        """The official relation name of the parsed letter, or None when the reply has no valid answer."""
        if self.parsed.letter is None:
            return None
        return by_letter(self.question.with_no_relation)[self.parsed.letter].name


def find_mention(text: str, name: str, entity_id: str, entity_type: str) -> Entity:
    """The first occurrence of ``name`` in ``text`` (exact, else case-insensitive) as an ``Entity``.

    Raises:
        AdapterError: ``name`` is empty or does not occur in the text.
    """
    if not name.strip():
        raise AdapterError(f"--{entity_type.lower()} is empty")
    start = text.find(name)
    if start >= 0:
        return Entity(entity_id, entity_type, name, start, start + len(name))
    match = re.search(re.escape(name), text, flags=re.IGNORECASE)  # offsets stay those of ``text``
    if match is None:
        raise AdapterError(f"--{entity_type.lower()} {name!r} does not occur in the text; pass the name as written")
    return Entity(entity_id, entity_type, match.group(0), match.start(), match.end())


def build_question(
    text: str, chemical: str, gene: str, *, pmid: str = "unknown", with_no_relation: bool = False
) -> Question:
    """The environment's question for the first mentions of ``chemical`` and ``gene`` in ``text``.

    Raises:
        AdapterError: empty text, or a name that does not occur in it.
    """
    if not text.strip():
        raise AdapterError("the text is empty")
    chem = find_mention(text, chemical, "T1", "CHEMICAL")
    gene_entity = find_mention(text, gene, "T2", "GENE")
    document = Document(pmid=pmid, title="", abstract=text, text=text, entities=(chem, gene_entity), relations=())
    task = PairTask(document, chem, gene_entity, labels=())
    return question_for(task, mark_entities=True, with_no_relation=with_no_relation)


def chat_messages(question: Question) -> list[dict[str, str]]:
    """System + user messages, as the environment sends them."""
    return [
        {"role": "system", "content": question.system_prompt},
        {"role": "user", "content": question.prompt},
    ]


def generate_reply(
    model: Any,
    tokenizer: Any,
    messages: list[dict[str, str]],
    *,
    max_new_tokens: int,
    temperature: float,
    top_p: float,
    top_k: int,
    min_p: float,
    seed: int,
) -> str:
    """Generate one reply with the tokenizer's chat template; ``temperature == 0`` is greedy.

    Returns:
        The decoded new tokens, special tokens removed (``<think>`` is plain text in Trinity's vocabulary).

    Raises:
        AdapterError: the tokenizer has no chat template.
    """
    import torch

    if not getattr(tokenizer, "chat_template", None):
        raise AdapterError("the tokenizer has no chat template; pass --tokenizer with the model's tokenizer")
    encoded = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    device = next(model.parameters()).device
    encoded = {key: value.to(device) for key, value in encoded.items()}
    torch.manual_seed(seed)
    sampling: dict[str, Any] = {"do_sample": False}
    if temperature > 0:
        sampling = {
            "do_sample": True,
            "temperature": temperature,
            "top_p": top_p,
            "top_k": top_k,
            "min_p": min_p,
        }
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.no_grad():
        output = model.generate(**encoded, max_new_tokens=max_new_tokens, pad_token_id=pad, **sampling)
    prompt_length = encoded["input_ids"].shape[1]
    return tokenizer.decode(output[0, prompt_length:], skip_special_tokens=True)


def predict(model: Any, tokenizer: Any, question: Question, **generation: Any) -> Prediction:
    """Ask ``question`` and parse the reply (``generation``: the keyword arguments of ``generate_reply``)."""
    reply = generate_reply(model, tokenizer, chat_messages(question), **generation)
    return Prediction(question, reply, parse_reply(reply, with_no_relation=question.with_no_relation))


def torch_dtype(name: str) -> Any:
    """``"auto"`` or the torch dtype called ``name`` (``bfloat16``, ``float32``...).

    Raises:
        AdapterError: ``name`` is not a torch floating-point dtype.
    """
    if name == "auto":
        return name
    import torch

    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise AdapterError(f"--dtype {name!r} is not a torch floating-point dtype (bfloat16, float16, float32)")
    return dtype


DESCRIPTION = (
    "Answer one abstract/chemical/gene question with a local model (optionally plus a LoRA adapter), to inspect "
    "a few answers. transformers generates a few tokens per second on Trinity-Mini, so do not evaluate a split "
    "with it: serve the model with vLLM (--enable-lora, or the merged checkpoint) and run vf-eval "
    "(docs/adapters.md)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register ``drugprot predict``'s options and its description (what it is for)."""
    parser.description = DESCRIPTION
    parser.add_argument("--model", required=True, type=Path, help="base model directory (e.g. Trinity-Mini)")
    parser.add_argument("--adapter", type=Path, help="LoRA adapter directory (prime-rl broadcasts/step_N)")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer directory (default: --model)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the abstract (title + text)")
    source.add_argument("--text-file", type=Path, help="file holding the abstract")
    parser.add_argument("--chemical", required=True, help="chemical name; its first occurrence is marked")
    parser.add_argument("--gene", required=True, help="gene/protein name; its first occurrence is marked")
    parser.add_argument("--pmid", default="unknown", help="PubMed id shown in the prompt")
    parser.add_argument("--with-no-relation", action="store_true", help="also offer N. NO-RELATION")
    parser.add_argument("--max-new-tokens", type=int, default=2048, help="below ~1k truncates the reasoning")
    parser.add_argument("--temperature", type=float, default=CARD_SAMPLING["temperature"], help="0 = greedy")
    parser.add_argument("--top-p", type=float, default=CARD_SAMPLING["top_p"])
    parser.add_argument("--top-k", type=int, default=CARD_SAMPLING["top_k"])
    parser.add_argument("--min-p", type=float, default=CARD_SAMPLING["min_p"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", default="auto", help="auto (checkpoint dtype), bfloat16, float32...")
    parser.add_argument("--device", help="cpu, cuda, cuda:1... (default: transformers' choice)")
    parser.add_argument("--trust-remote-code", action="store_true", help="needed on transformers < 5.0")
    parser.add_argument(
        "--merge",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="merge the verified adapter into the weights in memory (the default; about 3x faster generation); "
        "--no-merge keeps PEFT's LoRA layers, for debugging them",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def read_text_file(path: Path) -> str:
    """The abstract from ``--text-file``.

    Raises:
        AdapterError: the file cannot be read or is not UTF-8.
    """
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AdapterError(f"--text-file {path}: not UTF-8 text (byte {exc.start}); re-save it as UTF-8") from exc
    except OSError as exc:
        raise AdapterError(f"--text-file {path}: cannot read it ({exc.strerror or exc})") from exc


def check_inputs(model: Path, adapter: Path | None, tokenizer: Path | None) -> None:
    """Check the model, adapter and tokenizer paths without torch, before any model is loaded.

    Raises:
        AdapterError: ``model`` is not a directory with ``config.json``; ``tokenizer`` is not a directory; the
            adapter fails ``layout.read_adapter``.
    """
    if not model.is_dir():
        raise AdapterError(
            f"--model {model} is not a directory; download the model first "
            f"(hf download arcee-ai/Trinity-Mini --local-dir {model})"
        )
    if not (model / "config.json").is_file():
        raise AdapterError(f"--model {model} has no config.json; pass the model's own directory")
    if tokenizer is not None and not tokenizer.is_dir():
        raise AdapterError(f"--tokenizer {tokenizer} is not a directory")
    if adapter is not None:
        read_adapter(adapter)


def load_model(args: argparse.Namespace) -> tuple[Any, PeftLoadReport | None]:
    """The model ``drugprot predict`` asks: ``--model`` plus the verified ``--adapter``, merged unless ``--no-merge``.

    Raises:
        AdapterError: see ``peft_loading.load_model_with_adapter``.
    """
    from drugprot.tools.adapters.peft_loading import load_model_with_adapter

    return load_model_with_adapter(
        args.model,
        args.adapter,
        dtype=torch_dtype(args.dtype),
        device=args.device,
        trust_remote_code=args.trust_remote_code,
        merge=args.merge,
    )


def adapter_line(report: PeftLoadReport) -> str:
    """``adapter: 50 LoRA modules verified (fused experts), merged into the weights`` (or ``kept as LoRA layers``)."""
    how = "merged into the weights" if report.merged else "kept as LoRA layers (--no-merge)"
    return f"adapter: {report.modules_verified} LoRA modules verified ({report.layout} experts), {how}"


def run(args: argparse.Namespace) -> int:
    """Load, ask, print ``answer: E (INHIBITOR)`` and the reply (or JSON); ``EXIT_ERROR`` (2) on a bad input or
    adapter, with ``drugprot predict: error: ...`` on stderr. It writes no file."""
    try:
        text = args.text if args.text is not None else read_text_file(args.text_file)
        question = build_question(
            text, args.chemical, args.gene, pmid=args.pmid, with_no_relation=args.with_no_relation
        )
        check_inputs(args.model, args.adapter, args.tokenizer)
        require_adapters_extra("drugprot predict")
        from transformers import AutoTokenizer

        model, report = load_model(args)
        tokenizer = AutoTokenizer.from_pretrained(
            str(args.tokenizer or args.model), trust_remote_code=args.trust_remote_code
        )
        result = predict(
            model,
            tokenizer,
            question,
            max_new_tokens=args.max_new_tokens,
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k,
            min_p=args.min_p,
            seed=args.seed,
        )
    except (DrugprotError, OSError) as exc:
        print(error_line("predict", exc), file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        payload = {
            "letter": result.parsed.letter,
            "label": result.label,
            "invalid_reason": result.parsed.invalid_reason,
            "format_ok": result.parsed.format_ok,
            "reply": result.reply,
            "adapter_modules_verified": None if report is None else report.modules_verified,
            "adapter_merged": None if report is None else report.merged,
        }
        print(json.dumps(payload, indent=2))
        return 0
    if report is not None:
        print(adapter_line(report))
    if result.parsed.valid:
        print(f"answer: {result.parsed.letter} ({result.label})")
    else:
        print(f"answer: none ({result.parsed.invalid_reason})")
    print("--- reply ---")
    print(result.reply)
    return 0
