"""drugprot's own harness: one chat turn, sent from the env-server process to the rollout's interception endpoint.

verifiers' ``null`` harness runs a fresh chat program per rollout: ``uv sync --script`` and a new Python
interpreter (about 1.6-2.7 CPU-s per rollout, and ``uv`` plus PyPI or a warm uv cache on the node). This
harness sends the same request in-process: the resolved system prompt and prompt, as one non-streamed
``POST {endpoint}/chat/completions`` with the rollout's secret, and reads the whole reply. Everything
else stays the framework's: the interception server imposes the agent's model, sampling and max tokens,
records the turn (token ids and logprobs under prime-rl's renderer client included) and runs the ``@stop``
hooks; the agent's rollout timeout cancels the call, and its whole-rollout retries see the same errors as
with ``null``. A reply is awaited at most ``read_timeout`` seconds (1,800 by default, :data:`READ_TIMEOUT_S`), so a
stalled server cannot hold a rollout forever. The first model call to each endpoint that fails because the
endpoint is unreachable or rejects the key logs one line saying so and how to fix it (``first_contact``). It
carries messages only (no tools, no domain logic), so it suits any single-turn chat task.

The request is never streamed, on every verifiers: ``null``'s chat program sends a non-streamed one too on
verifiers 0.3.x and prime-rl's pinned ``a60a606`` (``{"model", "messages", "tools": null}``), and it is the
only kind prime-rl's training client (the renderer behind its token route) serves: it refuses a streamed one
("TrainClient does not support streaming"). verifiers 0.4.0's ``null`` streams; its interception server
serves both kinds, and the recorded traces are the same.

Select it with ``--env.agent.harness.id drugprot`` (TOML ``[...env.agent.harness] id = "drugprot"``); the
``null`` harness stays selectable the same way. The id is this package's name because verifiers resolves a
harness id by importing the package of that name and taking the ``Harness`` subclass it exports.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import json
import random
import re
import ssl
from collections.abc import Mapping
from typing import Any, Final

import httpx
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1 import errors as vf_errors
from verifiers.v1.dialects.chat import message_to_wire

from drugprot.core.errors import DrugprotConfigError
from drugprot.envs.first_contact import FIRST_CONTACT

HARNESS_ID: Final = "drugprot"
"""The id that selects this harness: ``--env.agent.harness.id drugprot``, TOML ``harness.id``."""
NULL_HARNESS_ID: Final = "null"
"""verifiers' built-in chat harness, the documented alternative (a chat program per rollout, needs uv); on drugprot's
env it runs as ``drugprot-null``, its program's dependencies pinned exactly (:func:`choose_null_program`)."""
UV_EXCLUDE_NEWER: Final = "UV_EXCLUDE_NEWER"
"""uv's date cutoff variable. Set by the user, it keeps ``null`` verifiers' own chat program, its open dependencies
resolved as of that time (:func:`choose_null_program`)."""
UV_DURATION = re.compile(
    r"P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?"
    r"|\d+\s*(second|minute|hour|day|week|month|year)s?",
    re.IGNORECASE,
)
"""The relative cutoffs uv takes (``P7D``, ``PT12H``, ``7 days``): a time before now, never in the future."""

RETRY_COUNT_HEADER: Final = "x-stainless-retry-count"
"""The attempt counter OpenAI's SDK sends and the interception server reads: a retried request with the
same body is answered from the turn already recorded instead of sampling a second one."""
RETRYABLE_STATUSES: Final = frozenset({408, 409, 429})
"""Statuses retried besides 5xx: the OpenAI SDK's set, which the interception server relies on."""
TRANSPORT_EXIT_CODE: Final[int] = getattr(vf_errors, "MODEL_TRANSPORT_ERROR_EXIT_CODE", 1)
"""Exit status for an exhausted transport failure: ``InterceptionError`` on verifiers 0.4 (which reserves 97
for it), a plain harness failure on older verifiers, as with ``null`` there."""
READ_TIMEOUT_S: Final = 1800.0
"""Default seconds to wait for one whole reply. The request is not streamed, so nothing arrives until the model has
written its last token: this bounds one model call. 1,800 s covers a 32,768-token reasoning reply at 20 tokens/s
(about 1,640 s), a per-sequence decode rate of a loaded vLLM batch; a stalled server then fails the call (retried as a
transport failure, ``max_retries``) instead of holding the rollout forever when no rollout timeout is set."""
INITIAL_RETRY_DELAY_S: Final = 0.5
MAX_RETRY_DELAY_S: Final = 8.0
MAX_RETRY_AFTER_S: Final = 60.0


class DrugprotHarnessConfig(vf.HarnessConfig):
    """Knobs under ``--env.agent.harness.<field>`` (TOML ``[...env.agent.harness]``)."""

    id: str = HARNESS_ID
    max_retries: int = Field(2, ge=0)
    """Retries of one model call on a transport failure or a 408/409/429/5xx status
    (the OpenAI SDK's default, as in ``null``'s chat program). Whole-rollout retries are the agent's
    ``retries``."""
    connect_timeout: float = Field(5.0, gt=0)
    """Seconds to connect to the interception endpoint."""
    read_timeout: float | None = Field(READ_TIMEOUT_S, gt=0)
    """Seconds to wait for the whole reply of one model call (:data:`READ_TIMEOUT_S`, 1,800, says why); ``None``:
    no limit of its own. The agent's rollout timeout (``--env.agent.timeout.rollout``), when set, also applies."""


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
    """The request body: one non-streamed, tool-less chat turn (see the module docstring for why)."""
    return {"model": model, "messages": messages}


def reply_error(body: str) -> str | None:
    """Why a 200 response is no chat completion, or None when it is one (a JSON object with a choice).

    An error object in the body (``{"error": ...}``) is its message; anything else that is not a completion
    is named with the start of the body. Neither is retried, as the OpenAI SDK does not retry them.
    """
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than the parser's stack
        return f"malformed chat completion: {body.strip()[:200]}"
    if not isinstance(payload, dict):
        return f"malformed chat completion: {body.strip()[:200]}"
    if payload.get("error") is not None:
        return _error_message(payload)
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not all(isinstance(c, dict) for c in choices):
        return f"chat completion without choices: {body.strip()[:200]}"
    return None


def _error_message(payload: Mapping[str, Any]) -> str:
    error = payload.get("error")
    if isinstance(error, Mapping):
        return str(error.get("message") or error)
    return str(error)


def error_text(status: int, body: str) -> str:
    """A failed response as one line: the status and the error message of an OpenAI-shaped body."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
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
    """One POST and its whole reply: None for a chat completion, the failure's message when it must not be
    retried; raises :class:`_Retry` when it may be."""
    try:
        response = await client.post(url, content=body, headers=headers)
    except httpx.TransportError as e:
        raise _Retry(f"{type(e).__name__}: {e}", transport=True) from e
    except httpx.DecodingError as e:  # a corrupt (e.g. gzip) body: no completion, and not worth the same call again
        return f"malformed chat completion: the body could not be decoded ({type(e).__name__}: {e})"
    text = response.content.decode("utf-8", "replace")
    if response.status_code >= 400:
        if is_retryable_status(response.status_code):
            raise _Retry(
                error_text(response.status_code, text),
                transport=False,
                retry_after=response.headers.get("retry-after"),
            )
        return error_text(response.status_code, text)
    return reply_error(text)


async def send_turn(
    endpoint: str,
    secret: str,
    request: Mapping[str, Any],
    *,
    max_retries: int,
    connect_timeout: float,
    read_timeout: float | None = READ_TIMEOUT_S,
) -> vf.ProgramResult:
    """Send one chat turn to ``endpoint`` (an OpenAI-compatible base URL) and read its whole reply.

    Returns a program-style result, so verifiers' own check turns a failure into the same rollout error
    ``null`` gets: exit 0 for a chat completion; 1 with the message for an error status or a body that is
    no completion (a corrupt body, JSON nested too deeply); :data:`TRANSPORT_EXIT_CODE` when the endpoint stayed
    unreachable or silent past ``read_timeout`` seconds. Retries up to ``max_retries`` times (see
    :class:`DrugprotHarnessConfig`), marking each with :data:`RETRY_COUNT_HEADER`.
    """
    url = f"{endpoint.rstrip('/')}/chat/completions"
    body = json.dumps(request).encode()
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    # No proxy from the environment: the endpoint is the framework's own interception server.
    timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
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
        result = await send_turn(
            endpoint,
            secret,
            chat_request(ctx.model, chat_messages(system_prompt, prompt)),
            max_retries=self.config.max_retries,
            connect_timeout=self.config.connect_timeout,
            read_timeout=self.config.read_timeout,
        )
        client = getattr(ctx, "client", None)  # the model endpoint behind the interception server
        if client is not None:
            failure = None if result.exit_code == 0 else result.stderr
            FIRST_CONTACT.observe(failure, str(client.base_url), str(client.api_key_var), str(ctx.model))
        return result


def exclude_newer_time(value: str, now: datetime.datetime) -> datetime.datetime | None:
    """The time a ``UV_EXCLUDE_NEWER`` value names (None for a duration, which uv counts back from now).

    Raises :class:`DrugprotConfigError` naming the variable when uv would not read the value as a cutoff (an RFC 3339
    time, a ``YYYY-MM-DD`` date or a duration), or when it lies after ``now``: uv would then resolve today's
    releases, the very thing a cutoff is set to avoid."""
    text = value.strip()
    if UV_DURATION.fullmatch(text):
        return None
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            when = datetime.datetime.combine(datetime.date.fromisoformat(text), datetime.time(), datetime.UTC)
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text):
            when = datetime.datetime.fromisoformat(text.replace("z", "Z"))
        else:
            raise ValueError(text)
    except ValueError:
        raise DrugprotConfigError(
            f"{UV_EXCLUDE_NEWER}={value!r} is no time uv reads: give an RFC 3339 time (2026-11-25T00:00:00Z), a date "
            "(2026-11-25) or a duration (P7D), or unset it to run the null chat program pinned by drugprot",
            knob=UV_EXCLUDE_NEWER,
        ) from None
    if when > now:
        raise DrugprotConfigError(
            f"{UV_EXCLUDE_NEWER}={value!r} is in the future, so it cuts nothing: give a past time, or unset it to run "
            "the null chat program pinned by drugprot",
            knob=UV_EXCLUDE_NEWER,
        )
    return when


def choose_null_program(
    harness: vf.HarnessConfig | None, environ: Mapping[str, str], now: datetime.datetime | None = None
) -> vf.HarnessConfig | None:
    """drugprot's ``null`` choice: the chat program pinned by content, unless the user set a date cutoff.

    ``null`` becomes ``drugprot-null`` (:mod:`drugprot.envs.null_program`: the same program, every dependency at the
    locked version, in an environment of its own), the harness's other settings kept. A ``UV_EXCLUDE_NEWER`` the
    user set (in the harness's ``env``, else in ``environ``: the shell's) keeps verifiers' own ``null``, its program
    resolved as of that cutoff; it is checked (:func:`exclude_newer_time`) and written into the config, so the run's
    saved config records it. Any other harness is returned as it is. A verifiers whose program the locks have no pins
    for (neither 0.4.0 nor 0.3.1) is a config error saying so.
    """
    if harness is None or harness.id != NULL_HARNESS_ID:
        return harness
    cutoff = harness.env.get(UV_EXCLUDE_NEWER) or environ.get(UV_EXCLUDE_NEWER)
    if cutoff:
        exclude_newer_time(cutoff, now or datetime.datetime.now(datetime.UTC))
        if harness.env.get(UV_EXCLUDE_NEWER) == cutoff:
            return harness
        return harness.model_copy(update={"env": {**harness.env, UV_EXCLUDE_NEWER: cutoff}})
    from verifiers.v1.utils.loaders import harness_config_type

    from drugprot.envs.null_program import (
        PINNED_NULL_HARNESS_ID,
        UnpinnedNullProgram,
        null_program_source,
        pinned_program,
    )

    try:  # checked here, once, rather than by every rollout's setup
        pinned_program(null_program_source())
    except UnpinnedNullProgram as e:
        raise DrugprotConfigError(
            f"{e}; or set {UV_EXCLUDE_NEWER} to run verifiers' own program, resolved as of that time", knob="harness.id"
        ) from None
    fields = {**harness.model_dump(exclude_unset=True), "id": PINNED_NULL_HARNESS_ID}
    return harness_config_type(PINNED_NULL_HARNESS_ID).model_validate(fields)
