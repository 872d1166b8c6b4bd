"""What the server answers: the :class:`Reply` type, responders that pick one, and the stand-in token counts."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drugprot.core.errors import DrugprotError


@dataclass(frozen=True)
class Reply:
    """One assistant turn. ``reasoning_content`` is sent as a separate field, as DeepSeek/Qwen/vLLM do."""

    content: str
    reasoning_content: str | None = None
    finish_reason: str = "stop"


Responder = Callable[[dict[str, Any]], Reply]
"""Maps the parsed request body (``model``, ``messages``, sampling keys …) to the reply."""


class ResponderError(DrugprotError):
    """Raise from a responder to answer with an HTTP error (e.g. 429 or 500 to exercise client retries)."""

    def __init__(self, status: int, message: str, error_type: str = "server_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type


def _as_reply(value: Reply | str) -> Reply:
    return value if isinstance(value, Reply) else Reply(content=value)


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last ``user`` message in a request body (text parts joined), or ``""``."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return message_text(message)
    return ""


def fixed_responder(reply: Reply | str) -> Responder:
    """A responder that always gives ``reply`` (a string is the content)."""
    fixed = _as_reply(reply)
    return lambda body: fixed


def scripted_responder(script: Mapping[str, Reply | str], default: Reply | str | None = None) -> Responder:
    """A responder that picks the reply whose key occurs in the last user message.

    When several keys occur, the longest wins (so ``"task-1"`` does not shadow ``"task-10"``); equal
    lengths go to the earlier key. With no match it returns ``default``, or raises :class:`ResponderError`
    (HTTP 500 naming the unmatched text) when there is none.
    """
    entries = sorted(((key, _as_reply(value)) for key, value in script.items()), key=lambda kv: -len(kv[0]))
    fallback = None if default is None else _as_reply(default)

    def respond(body: dict[str, Any]) -> Reply:
        text = last_user_text(body)
        for key, reply in entries:
            if key in text:
                return reply
        if fallback is not None:
            return fallback
        raise ResponderError(500, f"scripted_responder: no script key occurs in the last user message {text!r}")

    return respond


_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str | None) -> int:
    """Approximate token count: each maximal run of word characters, and each other non-space character,
    counts one. ``"Hello, world!"`` → 4. Deterministic, and within a small factor of real BPE counts."""
    # counted match by match: findall would hold a string per token (~14x the text's memory for a long prompt)
    return sum(1 for _ in _TOKEN.finditer(text)) if text else 0


def message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Prompt tokens: :func:`count_tokens` of every message's text, summed (no per-message overhead)."""
    return sum(count_tokens(message_text(m)) for m in messages)


def completion_usage(body: Mapping[str, Any], replies: Sequence[Reply]) -> dict[str, Any]:
    prompt = prompt_tokens(body["messages"])
    reasoning = sum(count_tokens(r.reasoning_content) for r in replies)
    completion = sum(count_tokens(r.content) for r in replies) + reasoning
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }
