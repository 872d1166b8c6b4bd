"""drugprot's own harness: one chat turn, sent from the env-server process to the rollout's interception endpoint.

verifiers' ``null`` harness runs a fresh chat program per rollout: ``uv sync --script`` and a new Python
interpreter (about 1.6-2.7 CPU-s per rollout, and ``uv`` plus PyPI or a warm uv cache on the node). This
harness sends the same request in-process: the resolved system prompt and prompt, as one streamed
``POST {endpoint}/chat/completions`` with the rollout's secret, and reads the reply to its end. Everything
else stays the framework's: the interception server imposes the agent's model, sampling and max tokens,
records the turn (token ids and logprobs under prime-rl's renderer client included) and runs the ``@stop``
hooks; the agent's rollout timeout cancels the call, and its whole-rollout retries see the same errors as
with ``null``. It carries messages only (no tools, no domain logic), so it suits any single-turn chat task.

Select it with ``--env.agent.harness.id drugprot`` (TOML ``[...env.agent.harness] id = "drugprot"``); the
``null`` harness stays selectable the same way. The id is this package's name because verifiers resolves a
harness id by importing the package of that name and taking the ``Harness`` subclass it exports.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1 import errors as vf_errors
from verifiers.v1.dialects.chat import message_to_wire

HARNESS_ID: Final = "drugprot"
"""The id that selects this harness: ``--env.agent.harness.id drugprot``, TOML ``harness.id``."""
NULL_HARNESS_ID: Final = "null"
"""verifiers' built-in chat harness, the documented alternative (a chat program per rollout, needs uv)."""

RETRY_COUNT_HEADER: Final = "x-stainless-retry-count"
"""The attempt counter OpenAI's SDK sends and the interception server reads: a retried request with the
same body is answered from the turn already recorded instead of sampling a second one."""
RETRYABLE_STATUSES: Final = frozenset({408, 409, 429})
"""Statuses retried besides 5xx: the OpenAI SDK's set, which the interception server relies on."""
TRANSPORT_EXIT_CODE: Final[int] = getattr(vf_errors, "MODEL_TRANSPORT_ERROR_EXIT_CODE", 1)
"""Exit status for an exhausted transport failure: ``InterceptionError`` on verifiers 0.4 (which reserves 97
for it), a plain harness failure on older verifiers, as with ``null`` there."""
INITIAL_RETRY_DELAY_S: Final = 0.5
MAX_RETRY_DELAY_S: Final = 8.0
MAX_RETRY_AFTER_S: Final = 60.0


class DrugprotHarnessConfig(vf.HarnessConfig):
    """Knobs under ``--env.agent.harness.<field>`` (TOML ``[...env.agent.harness]``)."""

    id: str = HARNESS_ID
    max_retries: int = Field(2, ge=0)
    """Retries of one model call on a transport failure, an unfinished stream or a 408/409/429/5xx status
    (the OpenAI SDK's default, as in ``null``'s chat program). Whole-rollout retries are the agent's
    ``retries``."""
    connect_timeout: float = Field(5.0, gt=0)
    """Seconds to connect to the interception endpoint. Reading the reply has no timeout of its own: the
    agent's rollout timeout bounds it, as with ``null``."""


def chat_messages(system_prompt: str | None, prompt: str | vf.Messages | None) -> list[dict[str, Any]]:
    """The wire messages of one turn: the system prompt as its own message, then the prompt.

    A string prompt is one user message; a ``Messages`` prompt goes as verifiers puts it on the wire.
    An empty system prompt is left out, as ``null``'s chat program does.
    """
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    if isinstance(prompt, str):
        if prompt:
            messages.append({"role": "user", "content": prompt})
    elif prompt is not None:
        messages.extend(message_to_wire(message) for message in prompt)
    return messages


def chat_request(model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The request body, byte for byte what ``null``'s chat program sends for a tool-less turn."""
    return {"model": model, "messages": messages, "stream": True, "stream_options": {"include_usage": True}}


@dataclass(frozen=True)
class StreamOutcome:
    """What a streamed reply ended with: ``error`` (an error event's message), else whether it finished."""

    finished: bool
    error: str | None = None


def stream_outcome(lines: Iterable[str]) -> StreamOutcome:
    """Read an SSE body's lines: an error event, or whether every choice got a ``finish_reason``.

    A reply is finished when a chunk carried a ``finish_reason`` and the stream reached ``[DONE]``; a stream
    cut short is not (the caller retries it). An event that is no JSON object is an error (not retried).
    Comments (``: keepalive``) and blank lines are skipped.
    """
    finished = done = False
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            done = True
            continue
        try:
            event = json.loads(data)
        except ValueError:
            return StreamOutcome(False, f"malformed stream event: {data[:200]}")
        if not isinstance(event, dict):
            return StreamOutcome(False, f"malformed stream event: {data[:200]}")
        if event.get("error") is not None:
            return StreamOutcome(False, _error_message(event))
        if any(isinstance(c, dict) and c.get("finish_reason") for c in event.get("choices") or ()):
            finished = True
    return StreamOutcome(finished and done)


def _error_message(payload: Mapping[str, Any]) -> str:
    error = payload.get("error")
    if isinstance(error, Mapping):
        return str(error.get("message") or error)
    return str(error)


def error_text(status: int, body: str) -> str:
    """A failed response as one line: the status and the error message of an OpenAI-shaped body."""
    try:
        payload = json.loads(body)
    except ValueError:
        return f"HTTP {status}: {body.strip()[:500]}"
    message = _error_message(payload) if isinstance(payload, Mapping) and "error" in payload else body.strip()
    return f"HTTP {status}: {message[:500]}"


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def retry_delay(retry: int, retry_after: str | None = None, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry number ``retry`` (0-based): a server's ``Retry-After`` up to a minute,
    else the OpenAI SDK's backoff ``min(0.5 * 2**retry, 8)`` less up to 25% jitter."""
    if retry_after is not None:
        try:
            seconds = float(retry_after)
        except ValueError:
            seconds = -1.0
        if 0 <= seconds <= MAX_RETRY_AFTER_S:
            return seconds
    jitter = 1 - 0.25 * (rng or random).random()
    return min(INITIAL_RETRY_DELAY_S * 2**retry, MAX_RETRY_DELAY_S) * jitter


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle costs ~30 ms CPU; build it once per process, not per rollout's client.
    return ssl.create_default_context()


class _Retry(Exception):
    """One attempt failed in a way worth another (``transport`` tells which exit status an exhausted one gets)."""

    def __init__(self, message: str, *, transport: bool, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.transport, self.retry_after = transport, retry_after


async def _attempt(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]) -> str | None:
    """One POST and its streamed reply: None when it finished, the failure's message when it must not be
    retried; raises :class:`_Retry` when it may be."""
    try:
        async with client.stream("POST", url, content=body, headers=headers) as response:
            if response.status_code >= 400:
                text = error_text(response.status_code, (await response.aread()).decode("utf-8", "replace"))
                if is_retryable_status(response.status_code):
                    raise _Retry(text, transport=False, retry_after=response.headers.get("retry-after"))
                return text
            outcome = stream_outcome([line async for line in response.aiter_lines()])
    except httpx.TransportError as e:
        raise _Retry(f"{type(e).__name__}: {e}", transport=True) from e
    if outcome.error is not None:
        return outcome.error
    if not outcome.finished:
        raise _Retry("model stream ended before a completion finished", transport=True)
    return None


async def send_turn(
    endpoint: str, secret: str, request: Mapping[str, Any], *, max_retries: int, connect_timeout: float
) -> vf.ProgramResult:
    """Send one chat turn to ``endpoint`` (an OpenAI-compatible base URL) and read the reply to its end.

    Returns a program-style result, so verifiers' own check turns a failure into the same rollout error
    ``null`` gets: exit 0 when the reply finished; 1 with the message for an error status or error event;
    :data:`TRANSPORT_EXIT_CODE` when the endpoint stayed unreachable or its streams ended early. Retries up
    to ``max_retries`` times (see :class:`DrugprotHarnessConfig`), marking each with :data:`RETRY_COUNT_HEADER`.
    """
    url = f"{endpoint.rstrip('/')}/chat/completions"
    body = json.dumps(request).encode()
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    # No proxy from the environment: the endpoint is the framework's own interception server.
    timeout = httpx.Timeout(None, connect=connect_timeout)
    async with httpx.AsyncClient(timeout=timeout, verify=_tls_context(), trust_env=False) as client:
        for retry in range(max_retries + 1):
            if retry:
                headers[RETRY_COUNT_HEADER] = str(retry)
            try:
                failure = await _attempt(client, url, body, headers)
            except _Retry as e:
                if retry == max_retries:
                    return vf.ProgramResult(TRANSPORT_EXIT_CODE if e.transport else 1, "", str(e))
                await asyncio.sleep(retry_delay(retry, e.retry_after))
                continue
            return vf.ProgramResult(0, "", "") if failure is None else vf.ProgramResult(1, "", failure)
    raise AssertionError("unreachable: the loop returns on its last attempt")


class DrugprotHarness(vf.Harness[DrugprotHarnessConfig]):
    """One chat turn sent in-process: no program, no subprocess, no network beyond the endpoint."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> vf.ProgramResult:
        system_prompt, prompt = self.resolve_prompt(data)
        return await send_turn(
            endpoint,
            secret,
            chat_request(ctx.model, chat_messages(system_prompt, prompt)),
            max_retries=self.config.max_retries,
            connect_timeout=self.config.connect_timeout,
        )
