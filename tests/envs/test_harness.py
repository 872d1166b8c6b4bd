"""drugprot's own harness (``drugprot.envs.harness``): its wire request, how it reads a reply, retries, and how
verifiers finds it. One chat turn goes to a real local OpenAI-compatible server on 127.0.0.1 (standing in for
the interception endpoint); the full rollout path is in ``test_e2e_v1.py``."""

from __future__ import annotations

import datetime
import http.server
import random
import socket
import threading
from typing import Any

import pydantic
import pytest
from verifiers.v1.types import AssistantMessage, UserMessage
from verifiers.v1.utils.loaders import default_harness_id, harness_class, resolve_env_config

import drugprot
from drugprot.core.errors import DrugprotConfigError
from drugprot.envs.harness import (
    HARNESS_ID,
    NULL_HARNESS_ID,
    READ_TIMEOUT_S,
    RETRY_COUNT_HEADER,
    TRANSPORT_EXIT_CODE,
    DrugprotHarness,
    DrugprotHarnessConfig,
    chat_messages,
    chat_request,
    choose_null_program,
    error_text,
    exclude_newer_time,
    is_retryable_status,
    reply_error,
    retry_delay,
    send_turn,
)
from drugprot.envs.null_program import DrugprotNullHarness
from drugprot.tools.serve import OpenAIServer, Reply, ResponderError, fixed_responder

SECRET = "rollout-secret"


# ------------------------------------------------------------------------------------------------ identity


def test_harness_id_is_the_package_name_and_verifiers_resolves_it() -> None:
    assert (HARNESS_ID, NULL_HARNESS_ID) == ("drugprot", "null")
    assert harness_class(HARNESS_ID) is drugprot.DrugprotHarness is DrugprotHarness
    # the taskset's package exports the harness, so it is also the default of an unpinned seat
    assert default_harness_id("drugprot") == "drugprot"


def test_drugprot_env_pins_the_drugprot_harness_and_null_stays_selectable() -> None:
    pinned = resolve_env_config({"taskset": {"id": "drugprot"}})
    assert (pinned.agent.harness.id, pinned.agent.runtime.type) == ("drugprot", "subprocess")
    assert isinstance(pinned.agent.harness, DrugprotHarnessConfig)
    assert (pinned.agent.harness.max_retries, pinned.agent.harness.connect_timeout) == (2, 5.0)
    null = resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": {"id": "null"}}})
    assert (null.agent.harness.id, null.agent.runtime.type) == ("drugprot-null", "subprocess")  # pinned: below
    tuned = resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": {"max_retries": 0}}})
    assert (tuned.agent.harness.id, tuned.agent.harness.max_retries) == ("drugprot", 0)


def test_the_null_choice_runs_the_chat_program_pinned_by_content(monkeypatch: pytest.MonkeyPatch) -> None:
    """``null`` on drugprot's env becomes ``drugprot-null`` (the program with exact pins, an environment of its own),
    its other settings kept. Every consumer (CLI, TOML, the env-server wire) validates through the env config, so
    each gets it; the saved config records it, and validating it again leaves it as it is."""
    monkeypatch.delenv("UV_EXCLUDE_NEWER", raising=False)
    null = resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": {"id": "null"}}})
    assert (null.agent.harness.id, null.agent.harness.env) == ("drugprot-null", {})
    assert harness_class(null.agent.harness.id) is DrugprotNullHarness
    assert null.model_dump()["agent"]["harness"]["id"] == "drugprot-null"
    again = resolve_env_config(null.model_dump())  # the env-server wire: validated again, unchanged
    assert (again.agent.harness.id, again.agent.harness.env) == ("drugprot-null", {})
    tuned = {"id": "null", "env": {"A": "1"}, "tool_timeout": 5.0}
    kept = resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": tuned}}).agent.harness
    assert (kept.id, kept.env, kept.tool_timeout) == ("drugprot-null", {"A": "1"}, 5.0)
    # drugprot's own harness resolves nothing at run time: left as it is
    pinned = resolve_env_config({"taskset": {"id": "drugprot"}})
    assert pinned.agent.harness.env == {}
    assert choose_null_program(pinned.agent.harness, {}) is pinned.agent.harness
    assert choose_null_program(None, {}) is None


def test_a_users_date_cutoff_keeps_verifiers_null_and_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's override: a ``UV_EXCLUDE_NEWER`` (the harness's env, else the shell's) keeps verifiers' own
    program, resolved as of that cutoff, and the config records it."""
    monkeypatch.delenv("UV_EXCLUDE_NEWER", raising=False)
    mine = {"taskset": {"id": "drugprot"}, "agent": {"harness": {"id": "null", "env": {"UV_EXCLUDE_NEWER": "P7D"}}}}
    harness = resolve_env_config(mine).agent.harness
    assert (harness.id, harness.env) == ("null", {"UV_EXCLUDE_NEWER": "P7D"})
    monkeypatch.setenv("UV_EXCLUDE_NEWER", "2026-10-01T00:00:00Z")
    shell = resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": {"id": "null", "env": {"A": "1"}}}})
    assert (shell.agent.harness.id, shell.agent.harness.env) == (
        "null",
        {"A": "1", "UV_EXCLUDE_NEWER": "2026-10-01T00:00:00Z"},
    )
    assert resolve_env_config(shell.model_dump()).agent.harness.env == shell.agent.harness.env


NOW = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-25T00:00:00Z", datetime.datetime(2026, 11, 25, tzinfo=datetime.UTC)),
        ("2026-11-25T01:30:00+01:00", datetime.datetime(2026, 11, 25, 0, 30, tzinfo=datetime.UTC)),
        ("2026-11-25", datetime.datetime(2026, 11, 25, tzinfo=datetime.UTC)),
        ("P7D", None),
        ("PT12H", None),
        ("7 days", None),
        ("1 week", None),
    ],
)
def test_exclude_newer_time_reads_what_uv_reads(value: str, expected: datetime.datetime | None) -> None:
    assert exclude_newer_time(value, NOW) == expected


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("yesterday", "is no time uv reads"),
        ("2026-13-01", "is no time uv reads"),
        ("2026-11-25T00:00:00", "is no time uv reads"),  # no offset: ambiguous
        ("P", "is no time uv reads"),
        ("2026-12-08", "is in the future, so it cuts nothing"),
        ("2027-01-01T00:00:00Z", "is in the future, so it cuts nothing"),
    ],
)
def test_a_malformed_or_future_cutoff_is_one_config_error_naming_it(
    value: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(DrugprotConfigError) as error:
        exclude_newer_time(value, NOW)
    assert str(error.value).startswith(f"UV_EXCLUDE_NEWER={value!r} {why}")
    assert error.value.knob == "UV_EXCLUDE_NEWER"
    # through the env config (the CLI's path): one validation error, naming the variable and its value
    monkeypatch.setenv("UV_EXCLUDE_NEWER", "2999-01-01T00:00:00Z" if "future" in why else value)
    with pytest.raises(pydantic.ValidationError) as invalid:
        resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": {"id": "null"}}})
    assert invalid.value.error_count() == 1
    assert "UV_EXCLUDE_NEWER=" in str(invalid.value)
    # drugprot's own harness reads no cutoff, so none is checked
    assert resolve_env_config({"taskset": {"id": "drugprot"}}).agent.harness.id == "drugprot"


def test_harness_flags() -> None:
    """Plain chat on the host: the system prompt as its own message, no tools, no code execution."""
    assert DrugprotHarness.APPENDS_SYSTEM_PROMPT is True
    assert (DrugprotHarness.SUPPORTS_MCP, DrugprotHarness.EXECUTES_CODE, DrugprotHarness.NEEDS_CONTAINER) == (
        False,
        False,
        False,
    )


# ------------------------------------------------------------------------------------------------ request


@pytest.mark.parametrize(
    ("system", "prompt", "expected"),
    [
        ("S", "P", [{"role": "system", "content": "S"}, {"role": "user", "content": "P"}]),
        (None, "P", [{"role": "user", "content": "P"}]),
        ("", "P", [{"role": "user", "content": "P"}]),
        ("S", None, [{"role": "system", "content": "S"}]),
        ("S", "", [{"role": "system", "content": "S"}]),
    ],
)
def test_chat_messages_from_text(system: str | None, prompt: str | None, expected: list[dict[str, Any]]) -> None:
    assert chat_messages(system, prompt) == expected


def test_chat_messages_from_messages_prompt() -> None:
    prompt = [UserMessage(content="Q1"), AssistantMessage(content="A1"), UserMessage(content="Q2")]
    assert chat_messages("S", prompt) == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "Q2"},
    ]


def test_chat_request_is_a_non_streamed_tool_less_turn() -> None:
    """Never streamed: prime-rl's training client refuses a streamed request (as ``null`` on 0.3.x/a60a606)."""
    messages = [{"role": "user", "content": "P"}]
    assert chat_request("m", messages) == {"model": "m", "messages": messages}


# ------------------------------------------------------------------------------------------------ reading


COMPLETION = (
    '{"id": "c", "object": "chat.completion", '
    '"choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}]}'
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (COMPLETION, None),
        ('{"choices": [{"index": 0}], "usage": null}', None),
        ('{"error": {"message": "rollout stopped: x", "type": "t"}}', "rollout stopped: x"),
        ('{"error": "boom"}', "boom"),
        ('{"choices": []}', 'chat completion without choices: {"choices": []}'),
        ('{"object": "chat.completion"}', 'chat completion without choices: {"object": "chat.completion"}'),
        ('{"choices": ["x"]}', 'chat completion without choices: {"choices": ["x"]}'),
        ("{not json", "malformed chat completion: {not json"),
        ("[1, 2]\n", "malformed chat completion: [1, 2]"),
        ("", "malformed chat completion: "),
    ],
)  # fmt: skip
def test_reply_error(body: str, expected: str | None) -> None:
    assert reply_error(body) == expected


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, '{"error": {"message": "rollout stopped: x", "type": "t"}}', "HTTP 400: rollout stopped: x"),
        (502, '{"error": "upstream 500"}', "HTTP 502: upstream 500"),
        (500, "<html>oops</html>\n", "HTTP 500: <html>oops</html>"),
        (404, '{"detail": "no"}', 'HTTP 404: {"detail": "no"}'),
    ],
)  # fmt: skip
def test_error_text(status: int, body: str, expected: str) -> None:
    assert error_text(status, body) == expected


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(400, False), (401, False), (404, False), (408, True), (409, True), (422, False), (429, True), (500, True),
     (502, True), (503, True), (504, True)],
)  # fmt: skip
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_retry_delay() -> None:
    assert retry_delay(0, "2") == 2.0
    assert retry_delay(3, "0") == 0.0
    # a Retry-After that is no number or above a minute falls back to the backoff
    assert retry_delay(0, "soon", rng=random.Random(1)) == retry_delay(0, None, rng=random.Random(1))
    assert 0.375 <= retry_delay(0, "61") <= 0.5
    rng = random.Random(7)
    jitter = 1 - 0.25 * random.Random(7).random()
    assert retry_delay(2, rng=rng) == 2.0 * jitter
    assert 0.375 <= retry_delay(0) <= 0.5
    assert 6.0 <= retry_delay(10) <= 8.0  # capped at 8 s


# ------------------------------------------------------------------------------------------------ one turn


class FlakyResponder:
    """Fails the first ``failures`` requests with ``status``, then replies; thread-safe."""

    def __init__(self, failures: int, status: int, reply: str = "\\boxed{E}") -> None:
        self.failures, self.status, self.reply = failures, status, reply
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.calls += 1
            failing = self.calls <= self.failures
        if failing:
            raise ResponderError(self.status, f"failure {self.calls}")
        return Reply(self.reply)


REQUEST = chat_request("trinity-mini", chat_messages("S", "P"))


async def test_send_turn_posts_the_request_with_the_secret() -> None:
    with OpenAIServer(fixed_responder(Reply("\\boxed{E}", reasoning_content="r")), api_key=SECRET) as server:
        result = await send_turn(server.base_url, SECRET, REQUEST, max_retries=2, connect_timeout=5)
        requests = server.requests
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert [r.body for r in requests] == [REQUEST]
    assert requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert RETRY_COUNT_HEADER not in requests[0].headers


async def test_send_turn_retries_a_503_with_the_retry_counter() -> None:
    responder = FlakyResponder(failures=1, status=503)
    with OpenAIServer(responder) as server:
        result = await send_turn(server.base_url, SECRET, REQUEST, max_retries=2, connect_timeout=5)
        requests = server.requests
    assert result.exit_code == 0
    assert [r.body for r in requests] == [REQUEST, REQUEST]
    assert [r.headers.get(RETRY_COUNT_HEADER) for r in requests] == [None, "1"]


async def test_send_turn_gives_up_after_max_retries() -> None:
    with OpenAIServer(FlakyResponder(failures=10, status=429)) as server:
        result = await send_turn(server.base_url, SECRET, REQUEST, max_retries=1, connect_timeout=5)
        requests = server.requests
    assert (result.exit_code, result.stderr) == (1, "HTTP 429: failure 2")
    assert len(requests) == 2


async def test_send_turn_does_not_retry_a_client_error() -> None:
    with OpenAIServer(FlakyResponder(failures=10, status=400)) as server:
        result = await send_turn(server.base_url, SECRET, REQUEST, max_retries=2, connect_timeout=5)
        requests = server.requests
    assert (result.exit_code, result.stderr) == (1, "HTTP 400: failure 1")
    assert len(requests) == 1


async def test_send_turn_reports_an_unreachable_endpoint_as_a_transport_failure() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = await send_turn(f"http://127.0.0.1:{port}/v1", SECRET, REQUEST, max_retries=0, connect_timeout=5)
    assert result.exit_code == TRANSPORT_EXIT_CODE
    assert result.stderr.startswith("ConnectError: ")


class _NotACompletion(http.server.BaseHTTPRequestHandler):
    """Answers every POST with 200 and a JSON body that is no chat completion."""

    posts = 0

    def do_POST(self) -> None:
        type(self).posts += 1
        self.rfile.read(int(self.headers["content-length"]))
        body = b'{"object": "list", "data": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def test_send_turn_fails_a_200_that_is_no_completion_without_retrying() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotACompletion)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        result = await send_turn(url, SECRET, REQUEST, max_retries=2, connect_timeout=5)
    finally:
        server.shutdown()
        server.server_close()
    assert (result.exit_code, result.stderr) == (1, 'chat completion without choices: {"object": "list", "data": []}')
    assert _NotACompletion.posts == 1


# ------------------------------------------------------------------------------------------------ hostile replies


class _Scripted(http.server.BaseHTTPRequestHandler):
    """Answers every POST with ``body`` and ``headers`` (status 200), after ``gate`` opens when one is set."""

    body = b""
    headers_out: dict[str, str] = {}
    gate: threading.Event | None = None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        if self.gate is not None:
            self.gate.wait(60)
        self.send_response(200)
        for name, value in {"Content-Type": "application/json", **self.headers_out}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def _send_to(handler: type[http.server.BaseHTTPRequestHandler], **kwargs: Any) -> Any:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return await send_turn(url, SECRET, REQUEST, connect_timeout=5, **kwargs)
    finally:
        if getattr(handler, "gate", None) is not None:
            handler.gate.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


async def test_a_reply_nested_too_deeply_is_a_failed_call_not_a_recursion_error() -> None:
    handler = type("Nested", (_Scripted,), {"body": b"[" * 200_000 + b"]" * 200_000})
    result = await _send_to(handler, max_retries=2)
    assert result.exit_code == 1
    assert result.stderr.startswith("malformed chat completion: [[[[")
    assert reply_error('{"error": ' + "[" * 100_000) is not None
    assert error_text(500, "[" * 100_000).startswith("HTTP 500: [[[")


async def test_a_corrupt_gzip_body_is_a_failed_call_not_a_decoding_error() -> None:
    handler = type(
        "Corrupt",
        (_Scripted,),
        {"body": b"\x1f\x8b\x08\x00not gzip at all", "headers_out": {"Content-Encoding": "gzip"}},
    )
    result = await _send_to(handler, max_retries=2)
    assert result.exit_code == 1
    assert result.stderr.startswith("malformed chat completion: the body could not be decoded (DecodingError: ")


async def test_a_silent_server_is_a_transport_failure_after_the_read_timeout() -> None:
    """The server answers only after the test is over: the read timeout, not the server, ends the call."""
    handler = type("Silent", (_Scripted,), {"body": b"{}", "gate": threading.Event()})
    result = await _send_to(handler, max_retries=0, read_timeout=0.2)
    assert (result.exit_code, result.stderr.split(":")[0]) == (TRANSPORT_EXIT_CODE, "ReadTimeout")


def test_the_read_timeout_defaults_to_30_minutes_and_is_a_knob() -> None:
    assert READ_TIMEOUT_S == 1800.0 == DrugprotHarnessConfig().read_timeout
    tuned = resolve_env_config({"taskset": {"id": "drugprot"}, "agent": {"harness": {"read_timeout": 60}}})
    assert tuned.agent.harness.read_timeout == 60.0
    assert DrugprotHarnessConfig(read_timeout=None).read_timeout is None
    with pytest.raises(ValueError, match="greater than 0"):
        DrugprotHarnessConfig(read_timeout=0)
