"""Reading a model reply: the reasoning block, the final ``\\boxed{}`` answer, and why a reply is invalid.

The rule of the environment (it is a reasoning environment): **an answer is read only after a
completed, non-empty reasoning block.** One rule for every way a reply reaches the scorer, so that a
completion earns the same reward in training and in evaluation (``tests/envs/test_parity.py``):

- Reasoning is complete when the content holds a ``</think>`` (inline ``<think>...</think>``, or a
  bare ``...</think>`` after a chat template that opens the block in the prompt), or when the server
  delivered it separately (``reasoning_content``: vLLM's ``deepseek_r1`` reasoning parser, prime-rl's
  renderers, hosted APIs). Inline, the reasoning is the text before the **first** ``</think>``, after
  a ``<think>`` that opens it, exactly where vLLM's and renderers' parsers split it.
- A reply with no completed reasoning earns no accuracy (``reasoning_incomplete``): a reply cut off
  while thinking (even with a ``\\boxed{}`` written while thinking), a reply with no reasoning at all
  (a non-reasoning model's bare ``\\boxed{E}``), a reasoning block with no text (only tags or
  whitespace), nothing after the reasoning, or a ``<think>`` reopened after it and never closed.
  These cannot be told apart once a server has split the reply (vLLM puts a reply without ``</think>``
  entirely into ``reasoning_content``), so they share one reason.
- The answer is the **last** ``\\boxed{...}`` after the reasoning; it must be closed, must come after
  any later ``</think>``, and holds at most ``MAX_ANSWER_CHARS`` characters. It may hold a letter
  (``E``, `` e ``, ``\\text{E}``, ``$E$``, ``(E)``), a letter with its label (``E. INHIBITOR``,
  ``E) INHIBITOR``, ``E: inhibitor``; the label must be the letter's), or an official label name in any
  case with ``-``/``_``/space variants (``indirect_upregulator``). Letters and names are ASCII: no
  Unicode case mapping turns another character into a letter (``ı`` is not ``I``); whitespace around the answer
  may be any Unicode whitespace (``\\boxed{\u00a0E\u00a0}`` with no-break spaces is ``E``).
  ``N``/``NO-RELATION`` only count when the task offers that option.
- Format is good when the answer is valid, it is the only ``\\boxed{`` after the reasoning, and no
  ``<think>``/``</think>`` follows the reasoning block (a stray tag cannot hide extra boxes).

Every step is a constant number of ``str`` searches over the reply plus work bounded by
``MAX_ANSWER_CHARS``, so parsing is linear in the reply's length whatever its shape. Nothing here
raises on model output: every failure is a reason string from ``REASONS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from drugprot.core.labels import by_letter, options

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
BOX = "\\boxed{"
MAX_ANSWER_CHARS = 256
"""The longest box content read as an answer (the longest valid one, a letter with its label inside
wrappers, is about 40); a longer box names no option."""

# Why a reply has no valid answer (``invalid_reason``) or a bad format (``format_reason``).
EMPTY = "empty_reply"
REASONING_INCOMPLETE = "reasoning_incomplete"
NO_BOX = "no_boxed_answer"
UNKNOWN_ANSWER = "unknown_answer"
LABEL_MISMATCH = "letter_label_mismatch"
SEVERAL_BOXES = "several_boxed_answers"
STRAY_THINK_TAG = "stray_think_tag"
REASONS: tuple[str, ...] = (
    EMPTY,
    REASONING_INCOMPLETE,
    NO_BOX,
    UNKNOWN_ANSWER,
    LABEL_MISMATCH,
    SEVERAL_BOXES,
    STRAY_THINK_TAG,
)

_ASCII_SPACE = " \t\n\r\f\v"
_OPENER = re.compile(r"\\(?:text|textbf|textrm|texttt|mathrm|mathbf|mbox)[ \t\n\r\f\v]*\{", re.ASCII)
_LETTER_WITH_LABEL = re.compile(r"\(?([A-Za-z])[ \t\n\r\f\v]*[.):][ \t\n\r\f\v]*(.*)", re.ASCII | re.DOTALL)
_SEPARATORS = re.compile(r"[ \t\n\r\f\v_\-]+", re.ASCII)
_SPACE_RUN = re.compile(r"\s*")


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What a reply says. ``letter`` is None exactly when ``invalid_reason`` is set."""

    letter: str | None
    invalid_reason: str | None
    has_reasoning: bool
    """Whether a completed, non-empty reasoning block precedes the answer region."""
    boxes: int
    """How many ``\\boxed{`` follow the reasoning (nested ones included)."""
    stray_tag: bool = False
    """Whether a ``<think>`` or ``</think>`` follows the reasoning block."""

    @property
    def valid(self) -> bool:
        return self.letter is not None

    @property
    def format_reason(self) -> str | None:
        """The first reason the format is not perfect, or None when it is."""
        if self.invalid_reason is not None:
            return self.invalid_reason
        if self.boxes != 1:
            return SEVERAL_BOXES
        if self.stray_tag:
            return STRAY_THINK_TAG
        return None

    @property
    def format_ok(self) -> bool:
        return self.format_reason is None


def _normalise_name(text: str) -> str:
    """Upper-case (ASCII letters only) with runs of ASCII space, ``_`` and ``-`` as one ``-``."""
    return _SEPARATORS.sub("-", _ascii_upper(text.strip(_ASCII_SPACE)))


@cache
def _names(with_no_relation: bool) -> dict[str, str]:
    """Normalised label name -> letter."""
    return {_normalise_name(o.name): o.letter for o in options(with_no_relation)}


def has_text(text: str) -> bool:
    """Whether ``text`` holds anything besides whitespace and ``<think>``/``</think>`` tags."""
    start = _SPACE_RUN.match(text).end()
    for _ in range(4):  # the common cases, without copying a long reasoning: skip a few leading tags
        if start == len(text):
            return False
        if text[start] != "<":
            return True
        if text.startswith(THINK_OPEN, start):
            start = _SPACE_RUN.match(text, start + len(THINK_OPEN)).end()
        elif text.startswith(THINK_CLOSE, start):
            start = _SPACE_RUN.match(text, start + len(THINK_CLOSE)).end()
        else:
            return True
    return bool(text.replace(THINK_OPEN, "").replace(THINK_CLOSE, "").strip())


def _ascii_upper(text: str) -> str:
    """``text`` upper-cased when it is ASCII; anything else is returned as is (it can name no option)."""
    return text.upper() if text.isascii() else text


def _closing_brace(text: str, start: int) -> int:
    """Index of the ``}`` closing a brace opened just before ``start``.

    -1 when ``text`` ends first (an unclosed box); -2 when the content runs past ``MAX_ANSWER_CHARS``.
    """
    close = text.find("}", start)
    if close != -1 and close - start <= MAX_ANSWER_CHARS and text.find("{", start, close) == -1:
        return close  # the common case: no nested braces
    end = min(len(text), start + MAX_ANSWER_CHARS + 1)
    depth = 0
    for i in range(start, end):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                return i
            depth -= 1
    return -1 if end == len(text) else -2


def _unwrap(text: str) -> str:
    """``text`` without surrounding whitespace (Unicode's, as ``str.isspace``), ``\\text{...}``-style wrappers and
    ``$...$``, any nesting."""
    i, j = 0, len(text)
    while True:
        while i < j and text[i].isspace():  # any Unicode whitespace (NBSP too); the letters stay ASCII
            i += 1
        while j > i and text[j - 1].isspace():
            j -= 1
        if j - i >= 2 and text[i] == "$" and text[j - 1] == "$":
            i, j = i + 1, j - 1
            continue
        opener = _OPENER.match(text, i, j)
        if opener is not None and text[j - 1] == "}" and opener.end() <= j - 1:
            i, j = opener.end(), j - 1
            continue
        return text[i:j]


def answer_letter(answer: str, *, with_no_relation: bool = False) -> tuple[str | None, str | None]:
    """The option letter a boxed answer names, as ``(letter, None)`` or ``(None, reason)``."""
    if len(answer) > MAX_ANSWER_CHARS:
        return None, UNKNOWN_ANSWER
    text = _unwrap(answer)
    letters = by_letter(with_no_relation)
    if len(text) == 1:
        letter = _ascii_upper(text)
        return (letter, None) if letter in letters else (None, UNKNOWN_ANSWER)
    if len(text) == 3 and text[0] == "(" and text[2] == ")":
        letter = _ascii_upper(text[1])
        return (letter, None) if letter in letters else (None, UNKNOWN_ANSWER)
    names = _names(with_no_relation)
    named = names.get(_normalise_name(text))
    if named is not None:
        return named, None
    match = _LETTER_WITH_LABEL.fullmatch(text)
    if match is not None:
        letter, rest = match.group(1).upper(), match.group(2).strip(_ASCII_SPACE)
        if letter not in letters:
            return None, UNKNOWN_ANSWER
        if not rest:
            return letter, None
        rest_letter = names.get(_normalise_name(rest))
        if rest_letter == letter:
            return letter, None
        return None, (LABEL_MISMATCH if rest_letter is not None else UNKNOWN_ANSWER)
    return None, UNKNOWN_ANSWER


class AnswerRegion(NamedTuple):
    """Where a reply's answer may be: the text after its completed reasoning block (see the module rule).

    ``invalid_reason`` is ``EMPTY`` or ``REASONING_INCOMPLETE`` when there is no such text (``text`` is then
    ``""``); otherwise None, and ``last_close`` is the index in ``text`` of its last ``</think>`` (-1 if none:
    an answer must come after it) and ``stray_tag`` tells whether a ``<think>``/``</think>`` follows the block.
    """

    text: str
    invalid_reason: str | None
    has_reasoning: bool
    last_close: int
    stray_tag: bool


def answer_region(content: str | None, reasoning: str | None = None) -> AnswerRegion:
    """The answer region of a reply, by the completed-reasoning rule; shared by every answer format.

    Never raises on string input; linear in the input's length.
    """
    content = content or ""
    if has_text(reasoning or ""):  # the server cut the reply at the end of its reasoning
        region = content
    else:  # the reasoning ends at the first </think>, after a <think> before it (where the servers split)
        close = content.find(THINK_CLOSE)
        if close == -1:
            return AnswerRegion("", REASONING_INCOMPLETE if has_text(content) else EMPTY, False, -1, False)
        opening = content.find(THINK_OPEN, 0, close)
        start = opening + len(THINK_OPEN) if opening != -1 else 0
        region = content[close + len(THINK_CLOSE) :]
        if not has_text(content[start:close]):
            return AnswerRegion("", REASONING_INCOMPLETE if has_text(region) else EMPTY, False, -1, False)
    last_open, last_close = region.rfind(THINK_OPEN), region.rfind(THINK_CLOSE)
    if last_open > last_close or not has_text(region):  # thinking again, or nothing after the reasoning
        return AnswerRegion("", REASONING_INCOMPLETE, True, -1, False)
    return AnswerRegion(region, None, True, last_close, last_open != -1 or last_close != -1)


def parse_reply(content: str | None, reasoning: str | None = None, *, with_no_relation: bool = False) -> ParsedReply:
    """Parse one reply.

    Args:
        content: the assistant message content (may hold inline ``<think>...</think>``).
        reasoning: reasoning delivered separately (``reasoning_content``), if any.
        with_no_relation: whether ``N``/``NO-RELATION`` is an option.

    Returns:
        A ``ParsedReply``; never raises on any string input, in time linear in the input's length.
    """
    found = answer_region(content, reasoning)
    if found.invalid_reason is not None:
        return ParsedReply(None, found.invalid_reason, found.has_reasoning, 0)
    region, stray = found.text, found.stray_tag
    boxes = region.count(BOX)
    box = region.rfind(BOX)
    if box == -1 or box < found.last_close:  # no box, or the last one is inside a later think block
        return ParsedReply(None, NO_BOX, True, boxes, stray)
    start = box + len(BOX)
    end = _closing_brace(region, start)
    if end == -1:
        return ParsedReply(None, NO_BOX, True, boxes, stray)
    if end == -2:
        return ParsedReply(None, UNKNOWN_ANSWER, True, boxes, stray)
    letter, reason = answer_letter(region[start:end], with_no_relation=with_no_relation)
    return ParsedReply(letter, reason, True, boxes, stray)
