"""Reading a model reply: reasoning block, final ``\\boxed{}`` answer, and why a reply is invalid.

Rules (the test table in ``tests/test_parsing.py`` is their executable form):

- Reasoning is either inline (``<think>...</think>`` in the content; a bare ``...</think>`` counts too,
  for chat templates that open the block in the prompt) or delivered separately (``reasoning_content``,
  as vLLM's reasoning parser and hosted APIs return it).
- A ``<think>`` that is never closed gives no answer: the reply was cut off while thinking.
- The answer is the **last** ``\\boxed{...}`` after the reasoning (after the last ``</think>``); boxes
  inside the reasoning do not count.
- The box may hold a letter (``E``, `` e ``, ``\\text{E}``, ``(E)``), a letter with its label
  (``E. INHIBITOR``, ``E) INHIBITOR``, ``E: inhibitor``; the label must be the letter's), or an
  official label name in any case with ``-``/``_``/space variants (``indirect_upregulator``).
  ``N``/``NO-RELATION`` only count when the task offers that option.
- Format is good when the reply has a closed, non-empty reasoning block and exactly one boxed answer
  after it, and that answer is valid.

Nothing here raises on model output: every failure is a reason string from ``REASONS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from drugprot.labels import by_letter, options

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
BOX = "\\boxed{"

# Why a reply has no valid answer (``invalid_reason``) or a bad format (``format_reason``).
EMPTY = "empty_reply"
UNTERMINATED_THINK = "unterminated_think"
NO_BOX = "no_boxed_answer"
UNKNOWN_ANSWER = "unknown_answer"
LABEL_MISMATCH = "letter_label_mismatch"
NO_REASONING = "no_reasoning"
SEVERAL_BOXES = "several_boxed_answers"
REASONS: tuple[str, ...] = (
    EMPTY,
    UNTERMINATED_THINK,
    NO_BOX,
    UNKNOWN_ANSWER,
    LABEL_MISMATCH,
    NO_REASONING,
    SEVERAL_BOXES,
)

_WRAPPER = re.compile(r"^\\(?:text|textbf|textrm|texttt|mathrm|mathbf|mbox)\s*\{(.*)\}$", re.DOTALL)
_LETTER_WITH_LABEL = re.compile(r"^\(?([A-Za-z])\s*[.):]\s*(.*)$", re.DOTALL)
_SEPARATORS = re.compile(r"[\s_\-]+")


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What a reply says. ``letter`` is None exactly when ``invalid_reason`` is set."""

    letter: str | None
    invalid_reason: str | None
    has_reasoning: bool
    boxes: int
    """How many closed ``\\boxed{}`` answers follow the reasoning."""

    @property
    def valid(self) -> bool:
        return self.letter is not None

    @property
    def format_reason(self) -> str | None:
        """The first reason the format is not perfect, or None when it is."""
        if self.invalid_reason is not None:
            return self.invalid_reason
        if not self.has_reasoning:
            return NO_REASONING
        if self.boxes != 1:
            return SEVERAL_BOXES
        return None

    @property
    def format_ok(self) -> bool:
        return self.format_reason is None


def _normalise_name(text: str) -> str:
    return _SEPARATORS.sub("-", text.strip().upper())


@cache
def _names(with_no_relation: bool) -> dict[str, str]:
    """Normalised label name -> letter."""
    return {_normalise_name(o.name): o.letter for o in options(with_no_relation)}


def boxed_contents(text: str) -> list[str]:
    """Contents of every closed ``\\boxed{...}`` in ``text``, braces balanced, in order."""
    found: list[str] = []
    start = text.find(BOX)
    while start != -1:
        depth, i = 1, start + len(BOX)
        while i < len(text):
            ch = text[i]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth != 0:  # unclosed: nothing after it can close a box either
            break
        found.append(text[start + len(BOX) : i])
        start = text.find(BOX, i + 1)
    return found


def answer_letter(answer: str, *, with_no_relation: bool = False) -> tuple[str | None, str | None]:
    """The option letter a boxed answer names, as ``(letter, None)`` or ``(None, reason)``."""
    text = answer.strip()
    while True:  # \text{E}, $E$, \textbf{\text{E}} ...
        match = _WRAPPER.match(text)
        if match is not None:
            text = match.group(1).strip()
        elif len(text) >= 2 and text[0] == "$" and text[-1] == "$":
            text = text.strip("$").strip()
        else:
            break
    letters = by_letter(with_no_relation)
    if len(text) == 1:
        letter = text.upper()
        return (letter, None) if letter in letters else (None, UNKNOWN_ANSWER)
    if len(text) == 3 and text[0] == "(" and text[2] == ")":
        letter = text[1].upper()
        return (letter, None) if letter in letters else (None, UNKNOWN_ANSWER)
    names = _names(with_no_relation)
    named = names.get(_normalise_name(text))
    if named is not None:
        return named, None
    match = _LETTER_WITH_LABEL.match(text)
    if match is not None:
        letter, rest = match.group(1).upper(), match.group(2).strip()
        if letter not in letters:
            return None, UNKNOWN_ANSWER
        if not rest:
            return letter, None
        rest_letter = names.get(_normalise_name(rest))
        if rest_letter == letter:
            return letter, None
        return None, (LABEL_MISMATCH if rest_letter is not None else UNKNOWN_ANSWER)
    return None, UNKNOWN_ANSWER


def parse_reply(
    content: str | None, reasoning: str | None = None, *, with_no_relation: bool = False
) -> ParsedReply:
    """Parse one reply.

    Args:
        content: the assistant message content (may hold inline ``<think>...</think>``).
        reasoning: reasoning delivered separately (``reasoning_content``), if any.
        with_no_relation: whether ``N``/``NO-RELATION`` is an option.

    Returns:
        A ``ParsedReply``; never raises on any string input.
    """
    content = content or ""
    separate_reasoning = bool(reasoning and reasoning.strip())
    if not content.strip():
        return ParsedReply(None, EMPTY, separate_reasoning, 0)
    close = content.rfind(THINK_CLOSE)
    if content.rfind(THINK_OPEN) > close:
        return ParsedReply(None, UNTERMINATED_THINK, separate_reasoning, 0)
    if close >= 0:
        inline = content[:close].replace(THINK_OPEN, "").strip()
        answer_region = content[close + len(THINK_CLOSE) :]
    else:
        inline, answer_region = "", content
    has_reasoning = separate_reasoning or bool(inline)
    boxes = boxed_contents(answer_region)
    if not boxes:
        return ParsedReply(None, NO_BOX, has_reasoning, 0)
    letter, reason = answer_letter(boxes[-1], with_no_relation=with_no_relation)
    return ParsedReply(letter, reason, has_reasoning, len(boxes))
