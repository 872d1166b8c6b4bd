"""The same completion earns the same reward in training and in evaluation.

A completion reaches the scorer in one of these shapes, each with and without a chat template that
pre-fills ``<think>`` in the generation prompt (Trinity-Mini's template could not be inspected; the
scorer must be right either way):

- ``inline``: no reasoning parser; the generated text is the content (``vf-eval`` against a server
  started without ``--reasoning-parser``).
- ``vllm-deepseek_r1``: vLLM's ``--reasoning-parser deepseek_r1`` (the repository's local-vLLM recipe,
  and prime-rl's ``auto`` parser for Trinity). Reproduced from vllm-project/vllm
  ``vllm/reasoning/basic_parsers.py``, ``BaseThinkingReasoningParser.extract_reasoning`` (which
  ``DeepSeekR1ReasoningParser`` in ``vllm/reasoning/deepseek_r1_reasoning_parser.py`` inherits for
  non-streaming replies): drop everything up to the first ``<think>``; without a ``</think>`` after it,
  everything is reasoning and the content is None; otherwise split at the first ``</think>``, an
  empty remainder giving content None. vLLM itself needs a GPU build, so it is not installed here.
- ``renderers-0.1.10.dev4``: prime-rl 559b447's training path (its ``deps/renderers`` pin, 2846a3d,
  is PyPI renderers 0.1.10.dev4): ``DefaultRenderer.parse_response`` with the ``think`` reasoning
  parser, reproduced from ``renderers/parsers.py`` ``ThinkTextReasoningParser.extract`` of that release:
  no ``</think>`` -> no reasoning, the whole text stays content; otherwise the reasoning is the text
  before the first ``</think>`` (after a ``<think>`` there), the content what follows; an empty
  reasoning becomes None. verifiers' ``response_from_generate`` then turns an empty content into None.
- ``renderers-installed`` (with atomic ``<think>`` tokens, and without): the renderers package
  installed here (>= 0.1.12, which verifiers 0.4 requires), its real ``DefaultRenderer.parse_response``
  fed token ids from a character-level test tokenizer, with the prompt's token ids so that it sees a
  pre-filled ``<think>`` the way it sees a real one.

The rule that makes every path agree (``drugprot.core.parsing``): an answer counts only after a completed,
non-empty reasoning block.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from renderers import DefaultRenderer, DefaultRendererConfig

from drugprot.core.scoring import score_reply

GOLD = ("INHIBITOR",)  # letter E
R = "The abstract says the chemical blocks the enzyme's active site, so it inhibits it directly."

Split = tuple[str | None, str | None]
"""What the scorer receives: (content, reasoning_content)."""


def inline(generated: str, prefilled: bool) -> Split:
    return generated, None


def vllm_deepseek_r1(generated: str, prefilled: bool) -> Split:
    """vLLM ``BaseThinkingReasoningParser.extract_reasoning`` as ``DeepSeekR1ReasoningParser`` runs it."""
    before, start, after = generated.partition("<think>")
    text = after if start else before
    if "</think>" not in text:
        return None, text
    reasoning, _, content = text.partition("</think>")
    return content or None, reasoning


def renderers_pinned(generated: str, prefilled: bool) -> Split:
    """renderers 0.1.10.dev4 ``ThinkTextReasoningParser.extract``, then verifiers' ``content or None``."""
    if "</think>" not in generated:
        reasoning, content = None, generated
    else:
        before, _, content = generated.partition("</think>")
        reasoning = before.split("<think>", 1)[-1] if "<think>" in before else before
    return content or None, reasoning or None


class CharTokenizer:
    """A tokenizer with one token per character plus atomic special tokens, enough for ``parse_response``."""

    SPECIALS = ("<|im_end|>", "<|im_start|>")

    def __init__(self, atomic_think: bool) -> None:
        self.atomic = self.SPECIALS + (("<think>", "</think>") if atomic_think else ())
        self.all_special_tokens = list(self.SPECIALS)
        self.eos_token_id = 0  # <|im_end|>
        self.unk_token_id = -1

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        ids, i = [], 0
        while i < len(text):
            token = next((t for t in self.atomic if text.startswith(t, i)), None)
            if token is not None:
                ids.append(self.atomic.index(token))
                i += len(token)
            else:
                ids.append(1000 + ord(text[i]))
                i += 1
        return ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(self.atomic[i] if i < 1000 else chr(i - 1000) for i in ids)

    def convert_tokens_to_ids(self, token: str) -> int:
        return self.atomic.index(token) if token in self.atomic else self.unk_token_id


def renderers_installed(atomic_think: bool) -> Callable[[str, bool], Split]:
    tokenizer = CharTokenizer(atomic_think)
    renderer = DefaultRenderer(tokenizer, DefaultRendererConfig(reasoning_parser="think"))

    def split(generated: str, prefilled: bool) -> Split:
        prompt = "<|im_start|>user\nWhich relation?<|im_end|>\n<|im_start|>assistant\n"
        prompt_ids = tokenizer.encode(prompt + ("<think>\n" if prefilled else ""))
        parsed = renderer.parse_response(tokenizer.encode(generated) + [0], prompt_ids=prompt_ids)
        return parsed.content or None, parsed.reasoning_content

    return split


PATHS: dict[str, Callable[[str, bool], Split]] = {
    "inline": inline,
    "vllm-deepseek_r1": vllm_deepseek_r1,
    "renderers-0.1.10.dev4": renderers_pinned,
    "renderers-installed-atomic": renderers_installed(atomic_think=True),
    "renderers-installed-chars": renderers_installed(atomic_think=False),
}

INCOMPLETE = (0.0, 0.0, "reasoning_incomplete", "reasoning_incomplete")
# Reply kind -> (what the model generates after a prompt without / with a pre-filled <think>,
# the (accuracy, format, invalid reason, format reason) every path must give).
KINDS: dict[str, tuple[str, str, tuple[float, float, str | None, str | None]]] = {
    "complete, right": (f"<think>{R}</think>\n\n\\boxed{{E}}", f"{R}</think>\n\n\\boxed{{E}}", (1.0, 1.0, None, None)),
    "complete, wrong": (f"<think>{R}</think>\\boxed{{A}}", f"{R}</think>\\boxed{{A}}", (0.0, 1.0, None, None)),
    "complete, label name": (
        f"<think>\n{R}\n</think>\n\n\\boxed{{\\text{{inhibitor}}}}\n",
        f"\n{R}\n</think>\n\n\\boxed{{\\text{{inhibitor}}}}\n",
        (1.0, 1.0, None, None),
    ),
    "box written while thinking, answer after": (
        f"<think>{R} Maybe \\boxed{{A}}?</think>\\boxed{{E}}",
        f"{R} Maybe \\boxed{{A}}?</think>\\boxed{{E}}",
        (1.0, 1.0, None, None),
    ),
    "cut off inside reasoning, box written while thinking": (
        f"<think>{R} So \\boxed{{E}}, but let me check",
        f"{R} So \\boxed{{E}}, but let me check",
        INCOMPLETE,
    ),
    "cut off inside reasoning, box at the end": (f"<think>{R} \\boxed{{E}}", f"{R} \\boxed{{E}}", INCOMPLETE),
    "no reasoning at all (non-reasoning model)": ("\\boxed{E}", "\\boxed{E}", INCOMPLETE),
    "no reasoning, prose answer": ("The answer is \\boxed{E}.", "The answer is \\boxed{E}.", INCOMPLETE),
    "empty reasoning block": ("<think></think>\\boxed{E}", "</think>\\boxed{E}", INCOMPLETE),
    "whitespace reasoning block": ("<think>\n\n</think>\n\\boxed{E}", "\n\n</think>\n\\boxed{E}", INCOMPLETE),
    "reasoning block made only of tags": ("<think><think></think>\\boxed{E}", "<think></think>\\boxed{E}", INCOMPLETE),
    "reasoning, then nothing": (f"<think>{R}</think>", f"{R}</think>", INCOMPLETE),
    "reasoning, then whitespace": (f"<think>{R}</think>\n\n", f"{R}</think>\n\n", INCOMPLETE),
    "thinking again after the answer, cut off": (
        f"<think>{R}</think>\\boxed{{A}} <think>wait, \\boxed{{E}}",
        f"{R}</think>\\boxed{{A}} <think>wait, \\boxed{{E}}",
        INCOMPLETE,
    ),
    "empty": ("", "", (0.0, 0.0, "empty_reply", "empty_reply")),
    "whitespace": ("\n \n", "\n \n", (0.0, 0.0, "empty_reply", "empty_reply")),
    "several boxes": (
        f"<think>{R}</think>\\boxed{{A}} or rather \\boxed{{E}}",
        f"{R}</think>\\boxed{{A}} or rather \\boxed{{E}}",
        (1.0, 0.0, None, "several_boxed_answers"),
    ),
    "stray </think> hiding a box": (
        f"<think>{R}</think>\\boxed{{A}}</think>\\boxed{{E}}",
        f"{R}</think>\\boxed{{A}}</think>\\boxed{{E}}",
        (1.0, 0.0, None, "several_boxed_answers"),
    ),
    "stray </think> before the box": (
        f"<think>{R}</think>Final answer:</think> \\boxed{{E}}",
        f"{R}</think>Final answer:</think> \\boxed{{E}}",
        (1.0, 0.0, None, "stray_think_tag"),
    ),
    "no box after reasoning": (
        f"<think>{R} \\boxed{{E}}</think>The answer is E.",
        f"{R} \\boxed{{E}}</think>The answer is E.",
        (0.0, 0.0, "no_boxed_answer", "no_boxed_answer"),
    ),
    "unclosed box": (
        f"<think>{R}</think>\\boxed{{E",
        f"{R}</think>\\boxed{{E",
        (0.0, 0.0, "no_boxed_answer", "no_boxed_answer"),
    ),
    "hedge": (
        f"<think>{R}</think>\\boxed{{E or K}}",
        f"{R}</think>\\boxed{{E or K}}",
        (0.0, 0.0, "unknown_answer", "unknown_answer"),
    ),
    "look-alike letter": (
        f"<think>{R}</think>\\boxed{{\u0131}}",
        f"{R}</think>\\boxed{{\u0131}}",
        (0.0, 0.0, "unknown_answer", "unknown_answer"),
    ),
}  # fmt: skip

CASES = [
    pytest.param(kind, prefilled, path, id=f"{kind} | prefill={'yes' if prefilled else 'no'} | {path}")
    for kind in KINDS
    for prefilled in (False, True)
    for path in PATHS
]


@pytest.mark.parametrize(("kind", "prefilled", "path"), CASES)
def test_same_reward_in_every_path(kind: str, prefilled: bool, path: str) -> None:
    without_prefill, with_prefill, expected = KINDS[kind]
    content, reasoning = PATHS[path](with_prefill if prefilled else without_prefill, prefilled)
    score = score_reply(content, reasoning, GOLD)
    assert (score.accuracy, score.format, score.invalid_reason, score.format_reason) == expected


def test_the_paths_really_differ() -> None:
    """The table is not trivial: the paths hand the scorer different things for the same completion."""
    cut_off = f"{R} So \\boxed{{E}}"  # cut off while thinking, after a pre-filled <think>
    assert inline(cut_off, True) == (cut_off, None)
    assert vllm_deepseek_r1(cut_off, True) == (None, cut_off)
    assert renderers_pinned(cut_off, True) == (cut_off, None)  # prime-rl 559b447: all content
    assert PATHS["renderers-installed-atomic"](cut_off, True) == (None, cut_off)
    assert PATHS["renderers-installed-chars"](cut_off, False) == (cut_off, None)
    complete = f"<think>{R}</think>\\boxed{{E}}"
    assert {PATHS[p](complete, False) for p in PATHS} == {(complete, None), ("\\boxed{E}", R)}


def test_known_divergence_vllm_drops_text_before_a_late_think() -> None:
    """The one thing the scorer cannot make agree: after a pre-filled ``<think>``, a model that writes
    ``<think>`` again after its answer loses everything before it in vLLM's split (``partition`` on the
    first ``<think>``), so a box hidden there is invisible to vLLM-served scoring. Accuracy still agrees
    (the last box after the last ``</think>``); the format term differs. Trained through prime-rl, such a
    reply earns no format credit, so training does not teach the trick."""
    generated = f"{R}</think>\\boxed{{A}}<think>again</think>\\boxed{{E}}"
    scores = {path: score_reply(*split(generated, True), GOLD) for path, split in PATHS.items()}
    assert {path: (s.accuracy, s.format) for path, s in scores.items()} == {
        "inline": (1.0, 0.0),
        "vllm-deepseek_r1": (1.0, 1.0),
        "renderers-0.1.10.dev4": (1.0, 0.0),
        "renderers-installed-atomic": (1.0, 0.0),
        "renderers-installed-chars": (1.0, 0.0),
    }
