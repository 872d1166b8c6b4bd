"""Longest prompt of a drugprot taskset and the ``seq_len`` a prime-rl run needs for it.

Builds the taskset exactly as a run does (``DrugprotConfig`` -> ``DrugprotTaskset``), measures the
system + user prompt of every task, and converts the longest one to a token count with a worst-case
bound, since Trinity-Mini's tokenizer is not needed (or available) to run this:

- at most 1 token per UTF-8 byte of text: in a tokenizer that falls back to bytes (byte-level BPE as in
  Llama 3, Qwen or GPT-4o; SentencePiece with byte fallback) every token stands for at least one byte, so no
  text takes more tokens than it has bytes (real English text takes about 1 token per 3-4 bytes, so the
  bound is loose by that factor);
- plus ``TEMPLATE_OVERHEAD_TOKENS`` for what the chat template wraps around the two messages (role markers,
  the generation prompt; ChatML-style templates add about 10 tokens).

A run then needs ``seq_len >= bound + max_completion_tokens`` (single-turn: one reply per task), and
``inference.vllm.max_model_len >= seq_len``.

In extraction mode the answer itself grows with the abstract (one line per relation), so the script also
reports the longest gold answer block (what a perfect reply writes after its reasoning), bounded the same way:
at most one token per UTF-8 byte. ``max_completion_tokens`` must hold it plus the reasoning.

Usage (from the repository root, in the project environment):
    uv run python scripts/prompt_lengths.py --data-path FILE [--split train] [--negatives 0]
        [--no-mark-entities] [--mode pair|extraction] [--max-completion-tokens 2048]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for bench.common
from bench.common import fail, load_data  # noqa: E402  (the CLI convention of every bench module and script)

TEMPLATE_OVERHEAD_TOKENS = 128
"""Tokens reserved for the chat template around a system + user prompt and the generation prompt."""


@dataclass(frozen=True)
class PromptLengths:
    """The longest system + user prompt of a taskset."""

    tasks: int
    key: str
    """Key (``pmid:arg1:arg2``) of the task with the longest prompt in bytes."""
    system_chars: int
    user_chars: int
    chars: int
    """System + user characters of that prompt."""
    utf8_bytes: int
    """System + user UTF-8 bytes of that prompt (the longest of all tasks)."""

    @property
    def token_bound(self) -> int:
        """Worst-case prompt tokens: one per UTF-8 byte plus the chat template's overhead."""
        return self.utf8_bytes + TEMPLATE_OVERHEAD_TOKENS

    def required_seq_len(self, max_completion_tokens: int) -> int:
        return self.token_bound + max_completion_tokens


@dataclass(frozen=True)
class AnswerLengths:
    """The gold answers of an extraction taskset: the most relations of one task and the longest answer block."""

    most_relations: int
    most_relations_key: str
    """Key (the PMID) of the task with the most gold relations (the first one, on a tie)."""
    utf8_bytes: int
    """UTF-8 bytes of the longest gold answer block (``drugprot.core.extraction.answer_block``, official names)."""
    key: str
    """Key of the task with that block."""
    relations: int
    """Gold relations of that task."""


def _text(prompt: Any) -> str:
    """The text of a task prompt: a string, or the contents of a message list."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    parts = []
    for message in prompt:
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        parts.append(content if isinstance(content, str) else "")
    return "".join(parts)


def measure(taskset: Any) -> PromptLengths:
    """Measure every task of a built ``DrugprotTaskset`` (anything iterating tasks with ``.data``).

    Raises:
        ValueError: the taskset has no tasks.
    """
    best: PromptLengths | None = None
    count = 0
    for task in taskset:
        count += 1
        system, user = _text(task.data.system_prompt), _text(task.data.prompt)
        nbytes = len(system.encode("utf-8")) + len(user.encode("utf-8"))
        if best is None or nbytes > best.utf8_bytes:
            best = PromptLengths(0, task.key, len(system), len(user), len(system) + len(user), nbytes)
    if best is None:
        raise ValueError("the taskset has no tasks")
    return PromptLengths(count, best.key, best.system_chars, best.user_chars, best.chars, best.utf8_bytes)


def measure_answers(taskset: Any) -> AnswerLengths | None:
    """The gold answer blocks of an extraction taskset; None for a pair-mode one (its answer is one letter).

    Raises:
        ValueError: the taskset has no tasks.
    """
    from drugprot.core.extraction import answer_block

    records = [(task.key, task.data.extraction) for task in taskset]
    if not records:
        raise ValueError("the taskset has no tasks")
    if records[0][1] is None:
        return None
    counts = [(key, len(record["relations"])) for key, record in records]
    sizes = [
        (key, len(answer_block(tuple(triple) for triple in record["relations"]).encode("utf-8")))
        for key, record in records
    ]
    most_key, most = max(counts, key=lambda item: item[1])  # max keeps the first of a tie
    key, nbytes = max(sizes, key=lambda item: item[1])
    return AnswerLengths(most, most_key, nbytes, key, dict(counts)[key])


@dataclass(frozen=True)
class TokenCounts:
    """Prompt tokens (system + user) under a real BPE vocabulary, over every task."""

    tasks: int
    mean: float
    longest: int
    longest_key: str
    bytes_per_token: float
    """UTF-8 bytes over tokens, pooled over every prompt."""


def count_tokens(taskset: Any, encode: Callable[[str], list[int]]) -> TokenCounts:
    """Every task's system + user prompt through ``encode`` (a BPE tokenizer's, no special tokens).

    Raises:
        ValueError: the taskset has no tasks.
    """
    counts: list[tuple[str, int, int]] = []
    for task in taskset:
        system, user = _text(task.data.system_prompt), _text(task.data.prompt)
        tokens = len(encode(system)) + len(encode(user))
        counts.append((task.key, tokens, len(system.encode("utf-8")) + len(user.encode("utf-8"))))
    if not counts:
        raise ValueError("the taskset has no tasks")
    key, longest, _ = max(counts, key=lambda item: item[1])  # max keeps the first of a tie
    total_tokens = sum(c[1] for c in counts)
    return TokenCounts(len(counts), total_tokens / len(counts), longest, key, sum(c[2] for c in counts) / total_tokens)


TEKKEN = "tekken_240911.json"
"""Mistral's Tekken byte-level BPE vocabulary (131,072 tokens, 1,000 of them special), shipped inside the PyPI
package mistral-common (``mistral_common/data/``): a real modern BPE vocabulary, not Trinity-Mini's own."""


def tekken_encoder() -> Callable[[str], list[int]]:
    """Tekken's encoder through tiktoken (both come with ``uv run --with mistral-common``)."""
    import base64
    import importlib.resources
    import json

    import tiktoken

    spec = json.loads((importlib.resources.files("mistral_common") / "data" / TEKKEN).read_text(encoding="utf-8"))
    config = spec["config"]
    size = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(token["token_bytes"]): token["rank"] for token in spec["vocab"][:size]}
    encoding = tiktoken.Encoding(name="tekken", pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={})
    return encoding.encode_ordinary


def build_taskset(**fields: Any) -> Any:
    """A ``DrugprotTaskset`` from ``DrugprotConfig`` fields (the keys of a TOML ``[...env.taskset]``)."""
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset

    fields = {"id": "drugprot", **fields}
    return DrugprotTaskset(DrugprotConfig.model_validate(fields))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="prompt_lengths.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="DrugProt jsonl/parquet file or TSV directory")
    parser.add_argument("--split", default="train", choices=("train", "validation"))
    parser.add_argument("--negatives", default="0", help='0, k per gold pair, or "all"')
    parser.add_argument("--no-mark-entities", action="store_true")
    parser.add_argument("--mode", default="pair", choices=("pair", "extraction"), help="task mode (default pair)")
    parser.add_argument("--max-completion-tokens", type=int, default=2048)
    parser.add_argument(
        "--bpe",
        action="store_true",
        help=f"also count prompt tokens with a real BPE vocabulary ({TEKKEN} of mistral-common, not Trinity-Mini's "
        "tokenizer; run with `uv run --with mistral-common`)",
    )
    args = parser.parse_args(argv)

    import pydantic

    from drugprot.core.errors import DrugprotError
    from drugprot.core.options import parse_negatives

    try:
        negatives = parse_negatives(args.negatives)
    except DrugprotError as exc:
        fail(parser.prog, f"--negatives: {exc}")
    load_data(parser.prog, args.data_path, split=args.split)
    try:
        taskset = build_taskset(
            split=args.split,
            data_path=args.data_path,
            negatives=negatives,
            mark_entities=not args.no_mark_entities,
            mode=args.mode,
        )
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        where, message = ".".join(str(part) for part in error["loc"]), error["msg"].removeprefix("Value error, ")
        fail(parser.prog, f"{where}: {message}" if where else message)
    except DrugprotError as exc:
        fail(parser.prog, exc)
    m = measure(taskset)
    answers = measure_answers(taskset)
    print(
        f"tasks: {m.tasks} (mode={args.mode}, split={args.split}, negatives={args.negatives}, "
        f"mark_entities={not args.no_mark_entities}) from {args.data_path}"
    )
    print(
        f"longest prompt: {m.key}: system {m.system_chars:,} + user {m.user_chars:,} = {m.chars:,} chars, "
        f"{m.utf8_bytes:,} UTF-8 bytes"
    )
    print(
        f"token bound: {m.utf8_bytes:,} + {TEMPLATE_OVERHEAD_TOKENS} (chat template) = {m.token_bound:,} "
        "tokens (<= 1 token per UTF-8 byte)"
    )
    if answers is not None:
        print(
            f"gold answers: most relations {answers.most_relations} ({answers.most_relations_key}); longest "
            f"answer block {answers.utf8_bytes:,} UTF-8 bytes ({answers.key}, {answers.relations} relations), "
            f"<= {answers.utf8_bytes:,} tokens of the {args.max_completion_tokens:,} completion tokens"
        )
    print(
        f"seq_len needed with {args.max_completion_tokens:,} completion tokens: "
        f"{m.required_seq_len(args.max_completion_tokens):,}"
    )
    if args.bpe:
        try:
            encode = tekken_encoder()
        except ImportError as exc:
            print(f"error: --bpe needs mistral-common and tiktoken ({exc}): uv run --with mistral-common ...")
            return 2
        t = count_tokens(taskset, encode)
        print(
            f"BPE tokens ({TEKKEN} from mistral-common, not Trinity-Mini's tokenizer): system + user prompt mean "
            f"{t.mean:,.0f}, longest {t.longest:,} ({t.longest_key}); {t.bytes_per_token:.2f} UTF-8 bytes per token"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
