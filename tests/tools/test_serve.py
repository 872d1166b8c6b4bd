"""The local OpenAI-compatible server, exercised with the real ``openai`` client (offline, 127.0.0.1)."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import openai
import pytest

from drugprot.tools import serve
from drugprot.tools.serve import (
    OpenAIServer,
    Reply,
    ResponderError,
    build_server,
    count_tokens,
    fixed_responder,
    last_user_text,
    scripted_responder,
)

REPLY = Reply(content="The answer is \\boxed{A}.", reasoning_content="Chemical X inhibits gene Y.")
MESSAGES = [
    {"role": "system", "content": "Answer with a letter."},
    {"role": "user", "content": "Does aspirin inhibit COX-1?"},
]
# count_tokens: "Answer with a letter." -> 5; "Does aspirin inhibit COX-1?" -> Does aspirin inhibit COX - 1 ? = 7
PROMPT_TOKENS = 12
# "The answer is \boxed{A}." -> The answer is \ boxed { A } . = 9; "Chemical X inhibits gene Y." -> 6
CONTENT_TOKENS, REASONING_TOKENS = 9, 6


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(fixed_responder(REPLY), chunk_size=5) as srv:
        yield srv


@pytest.fixture
def client(server: OpenAIServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


def _raw(server: OpenAIServer, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """One raw HTTP request (for what the SDK cannot send): returns (status, headers, parsed JSON body)."""
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read())
    finally:
        conn.close()


def _exchange(server: OpenAIServer, data: bytes, *, end_upload: bool = False) -> tuple[int, dict, dict, bool]:
    """Send raw bytes (for what no client library sends), read one response.

    Returns (status, headers, parsed JSON body, whether the server then closed the connection). With
    ``end_upload`` the client shuts down its sending side after ``data`` (a body cut short).
    """
    url = urlsplit(server.base_url)
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        sock.sendall(data)
        if end_upload:
            sock.shutdown(socket.SHUT_WR)
        response = http.client.HTTPResponse(sock)
        response.begin()
        status, headers, body = response.status, dict(response.getheaders()), json.loads(response.read())
        closed = headers.get("Connection") == "close" and sock.recv(1) == b""
        return status, headers, body, closed


def _post(length: str | int, body: bytes = b"", extra: str = "") -> bytes:
    """A raw chat-completions POST with the given Content-Length header and (possibly shorter) body."""
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n{extra}\r\n"
    return head.encode() + body


# -- token approximation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (None, 0),
        ("", 0),
        ("   ", 0),
        ("Hello, world!", 4),
        ("\\boxed{A}", 5),
        ("COX-1", 3),
        ("naïve  café", 2),
        ("<think>x</think>", 8),
    ],
)
def test_count_tokens(text: str | None, tokens: int) -> None:
    assert count_tokens(text) == tokens


def test_prompt_tokens_sum_message_texts_including_text_parts() -> None:
    messages = [
        {"role": "system", "content": "a b"},
        {"role": "user", "content": [{"type": "text", "text": "c d e"}, {"type": "image_url", "image_url": {}}]},
        {"role": "assistant", "content": None},
    ]
    assert serve.prompt_tokens(messages) == 5


# -- non-streaming --------------------------------------------------------------------------------------------


def test_non_streaming_completion(client: openai.OpenAI, server: OpenAIServer) -> None:
    completion = client.chat.completions.create(model="trinity-mini", messages=MESSAGES, temperature=0.15)

    assert completion.id == "chatcmpl-000001"
    assert completion.object == "chat.completion"
    assert completion.model == "trinity-mini"
    assert len(completion.choices) == 1
    choice = completion.choices[0]
    assert choice.index == 0
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == REPLY.content
    assert choice.message.model_extra == {"reasoning_content": REPLY.reasoning_content}
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == PROMPT_TOKENS
    assert completion.usage.completion_tokens == CONTENT_TOKENS + REASONING_TOKENS
    assert completion.usage.total_tokens == PROMPT_TOKENS + CONTENT_TOKENS + REASONING_TOKENS
    assert completion.usage.completion_tokens_details.reasoning_tokens == REASONING_TOKENS

    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {"model": "trinity-mini", "messages": MESSAGES, "temperature": 0.15}
    assert server.chat_requests == [request.body]


def test_non_streaming_without_reasoning_has_no_reasoning_field(server: OpenAIServer) -> None:
    server.responder = fixed_responder(Reply("plain", finish_reason="length"))
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)

    completion = client.chat.completions.create(model="m", messages=MESSAGES)

    assert completion.choices[0].message.content == "plain"
    assert completion.choices[0].message.model_extra == {}
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage.completion_tokens == 1
    assert completion.usage.completion_tokens_details.reasoning_tokens == 0


# -- streaming ------------------------------------------------------------------------------------------------


def test_stream_chunks_in_order_with_usage(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="trinity-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)

    assert {c.id for c in chunks} == {"chatcmpl-000001"}
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert {c.model for c in chunks} == {"trinity-mini"}
    deltas = [c.choices[0].delta.model_dump(exclude_none=True) for c in chunks if c.choices]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"reasoning_content": "Chemi"},
        {"reasoning_content": "cal X"},
        {"reasoning_content": " inhi"},
        {"reasoning_content": "bits "},
        {"reasoning_content": "gene "},
        {"reasoning_content": "Y."},
        {"content": "The a"},
        {"content": "nswer"},
        {"content": " is \\"},
        {"content": "boxed"},
        {"content": "{A}."},
        {},
    ]
    assert [c.choices[0].finish_reason for c in chunks if c.choices] == [None] * 12 + ["stop"]
    assert [c.usage is None for c in chunks] == [True] * 13 + [False]
    assert chunks[-1].choices == []
    assert chunks[-1].usage.model_dump(exclude_none=True) == {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": CONTENT_TOKENS + REASONING_TOKENS,
        "total_tokens": PROMPT_TOKENS + CONTENT_TOKENS + REASONING_TOKENS,
        "completion_tokens_details": {"reasoning_tokens": REASONING_TOKENS},
    }


def test_stream_without_include_usage_has_no_usage_chunk(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))

    assert len(chunks) == 13
    assert all(c.usage is None and len(c.choices) == 1 for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_stream_reassembled_by_sdk_stream_helper(client: openai.OpenAI) -> None:
    """The SDK's accumulator (what verifiers' chat program uses) rebuilds content and reasoning."""
    with client.chat.completions.stream(model="m", messages=MESSAGES, stream_options={"include_usage": True}) as stream:
        final = stream.get_final_completion()

    message = final.choices[0].message
    assert message.content == REPLY.content
    assert message.model_extra["reasoning_content"] == REPLY.reasoning_content
    assert final.choices[0].finish_reason == "stop"
    assert final.usage.completion_tokens == CONTENT_TOKENS + REASONING_TOKENS


def test_stream_reassembled_from_deltas_whole_when_chunk_size_none() -> None:
    with OpenAIServer(fixed_responder(REPLY), chunk_size=None) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        deltas = [c.choices[0].delta for c in client.chat.completions.create(model="m", messages=MESSAGES, stream=True)]

    assert [d.model_extra.get("reasoning_content") for d in deltas] == [None, REPLY.reasoning_content, None, None]
    assert [d.content for d in deltas] == ["", None, REPLY.content, None]


async def test_async_client_stream_concatenates() -> None:
    reply = Reply("x" * 100, reasoning_content="r" * 33, finish_reason="length")
    with OpenAIServer(fixed_responder(reply), chunk_size=7) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        content, reasoning, finish = [], [], []
        async for chunk in await client.chat.completions.create(model="m", messages=MESSAGES, stream=True):
            delta = chunk.choices[0].delta
            content.append(delta.content or "")
            reasoning.append(delta.model_extra.get("reasoning_content") or "")
            finish.append(chunk.choices[0].finish_reason)
        await client.close()

    assert "".join(content) == reply.content
    assert "".join(reasoning) == reply.reasoning_content
    assert len(content) == 1 + 5 + 15 + 1  # role, ceil(33/7) reasoning, ceil(100/7) content, finish
    assert finish[-1] == "length"


# -- responders -----------------------------------------------------------------------------------------------


def test_last_user_text() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": "reply"},
        ]
    }
    assert last_user_text(body) == "a\nb"
    assert last_user_text({"messages": [{"role": "system", "content": "s"}]}) == ""


def test_scripted_responder_longest_key_wins_and_default() -> None:
    respond = scripted_responder({"task-1": "one", "task-10": Reply("ten", "why")}, default="fallback")

    def ask(text: str) -> Reply:
        return respond({"messages": [{"role": "user", "content": text}]})

    assert ask("this is task-10 now") == Reply("ten", "why")
    assert ask("this is task-1 now") == Reply("one")
    assert ask("nothing") == Reply("fallback")


def test_scripted_responder_miss_is_a_500_naming_the_text() -> None:
    with OpenAIServer(scripted_responder({"known": "x"})) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError) as excinfo:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "other"}])

    assert excinfo.value.status_code == 500
    assert excinfo.value.body == {
        "message": "scripted_responder: no script key occurs in the last user message 'other'",
        "type": "server_error",
        "param": None,
        "code": 500,
    }


def test_responder_sees_request_body_and_picks_per_task() -> None:
    seen = []

    def respond(body: dict) -> Reply:
        seen.append(body["model"])
        return Reply(f"echo {last_user_text(body)}")

    with OpenAIServer(respond) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        reply = client.chat.completions.create(model="arcee/trinity-mini", messages=MESSAGES)

    assert reply.choices[0].message.content == "echo Does aspirin inhibit COX-1?"
    assert seen == ["arcee/trinity-mini"]


def test_responder_error_status_reaches_client() -> None:
    def respond(body: dict) -> Reply:
        raise ResponderError(429, "slow down", "rate_limit_error")

    with OpenAIServer(respond) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError) as excinfo:
            client.chat.completions.create(model="m", messages=MESSAGES, stream=True)

    assert excinfo.value.body == {"message": "slow down", "type": "rate_limit_error", "param": None, "code": 429}


def test_broken_responder_is_a_500() -> None:
    with OpenAIServer(lambda body: 1 / 0) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError) as excinfo:
            client.chat.completions.create(model="m", messages=MESSAGES)

    assert excinfo.value.body["message"] == "responder failed: ZeroDivisionError('division by zero')"


# -- errors ---------------------------------------------------------------------------------------------------


def test_bad_json_is_a_400_naming_the_problem(server: OpenAIServer) -> None:
    status, headers, body = _raw(server, "POST", "/v1/chat/completions", b'{"model": "m",', {"Content-Length": "14"})

    assert status == 400
    assert headers["Content-Type"] == "application/json"
    assert body == {
        "error": {
            "message": "invalid JSON body: Expecting property name enclosed in double quotes: "
            "line 1 column 15 (char 14)",
            "type": "invalid_request_error",
            "param": None,
            "code": 400,
        }
    }
    assert server.requests[0].body is None


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ([1, 2], "request body must be a JSON object, got list"),
        ({"messages": [{"role": "user", "content": "x"}]}, "'model' is required and must be a non-empty string"),
        ({"model": "m", "messages": []}, "'messages' is required and must be a non-empty list"),
        ({"model": "m", "messages": ["hi"]}, "'messages[0]' must be an object with a string 'role'"),
        ({"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 2}, "only n=1 is supported"),
    ],
)
def test_invalid_request_is_a_400(server: OpenAIServer, payload: object, message: str) -> None:
    status, _, body = _raw(server, "POST", "/v1/chat/completions", json.dumps(payload).encode())

    assert status == 400
    assert body["error"]["message"] == message


def test_invalid_request_via_sdk_raises_bad_request(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as excinfo:
        client.chat.completions.create(model="m", messages=[])

    assert excinfo.value.status_code == 400
    assert excinfo.value.body["message"] == "'messages' is required and must be a non-empty list"


def test_unknown_route_is_a_404(server: OpenAIServer) -> None:
    status, _, body = _raw(server, "POST", "/v1/completions", b"{}")

    assert status == 404
    assert body["error"] == {
        "message": "unknown route POST /v1/completions",
        "type": "not_found_error",
        "param": None,
        "code": 404,
    }


def test_wrong_method_is_a_405(server: OpenAIServer) -> None:
    status, headers, body = _raw(server, "GET", "/v1/chat/completions")

    assert status == 405
    assert headers["Allow"] == "POST"
    assert body["error"]["message"] == "GET not allowed on /v1/chat/completions; use POST"


def test_api_key_enforced_when_set() -> None:
    with OpenAIServer(fixed_responder("ok"), api_key="right") as srv:
        wrong = openai.OpenAI(base_url=srv.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="m", messages=MESSAGES)
        right = openai.OpenAI(base_url=srv.base_url, api_key="right", max_retries=0)
        assert right.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content == "ok"


# -- malformed requests: always a 4xx JSON answer, never a dropped connection ----------------------------


def _error(status: int, message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": status}}


@pytest.mark.parametrize(
    ("length", "status", "message"),
    [
        ("abc", 400, "Content-Length must be a non-negative integer, got 'abc'"),
        ("-5", 400, "Content-Length must be a non-negative integer, got '-5'"),
        ("1.5", 400, "Content-Length must be a non-negative integer, got '1.5'"),
        ("", 400, "Content-Length must be a non-negative integer, got ''"),
        (
            "9" * 40,
            413,
            f"request body of {'9' * 40} bytes is over the limit of {serve.MAX_BODY_BYTES} bytes "
            "(OpenAIServer(max_body_bytes=...), --max-body-bytes)",
        ),
    ],
)
def test_bad_content_length_is_a_4xx_and_closes(server: OpenAIServer, length: str, status: int, message: str) -> None:
    got_status, headers, body, closed = _exchange(server, _post(length, b"{}"))

    assert (got_status, body, closed) == (status, _error(status, message), True)
    assert headers["Content-Type"] == "application/json"
    assert [(r.method, r.path, r.body) for r in server.requests] == [("POST", "/v1/chat/completions", None)]


def test_conflicting_content_lengths_are_a_400(server: OpenAIServer) -> None:
    status, _, body, closed = _exchange(server, _post(2, b"{}", extra="Content-Length: 3\r\n"))

    assert (status, body, closed) == (400, _error(400, "conflicting Content-Length headers ['2', '3']"), True)


def test_chunked_upload_is_a_411(server: OpenAIServer) -> None:
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    status, _, body, closed = _exchange(server, request)

    message = "Transfer-Encoding request bodies are not supported; send the body with a Content-Length"
    assert (status, body, closed) == (411, _error(411, message), True)


def test_body_over_the_limit_is_a_413_unread_and_at_the_limit_is_served() -> None:
    payload = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    with OpenAIServer(fixed_responder("ok"), max_body_bytes=len(payload)) as srv:
        # Only the headers are sent: the 413 must come without waiting for a body it will never read.
        status, _, body, closed = _exchange(srv, _post(len(payload) + 1))
        ok_status, _, ok_body = _raw(srv, "POST", "/v1/chat/completions", payload)

    message = (
        f"request body of {len(payload) + 1} bytes is over the limit of {len(payload)} bytes "
        "(OpenAIServer(max_body_bytes=...), --max-body-bytes)"
    )
    assert (status, body, closed) == (413, _error(413, message), True)
    assert (ok_status, ok_body["choices"][0]["message"]["content"]) == (200, "ok")


def test_stalled_body_times_out_with_a_408() -> None:
    with OpenAIServer(fixed_responder("ok"), body_timeout=0.2) as srv:
        status, _, body, closed = _exchange(srv, _post(100, b'{"model": "m"'))  # 13 of 100 bytes, then silence
        assert srv.chat_requests == [None]

    assert (status, body, closed) == (
        408,
        _error(408, "request body not received within 0.2 s (13 of 100 bytes arrived)"),
        True,
    )


def test_body_cut_short_is_a_400() -> None:
    with OpenAIServer(fixed_responder("ok")) as srv:
        status, _, body, _ = _exchange(srv, _post(100, b'{"model": "m"'), end_upload=True)

    assert (status, body) == (400, _error(400, "request body ended after 13 of 100 bytes (Content-Length)"))


def test_deeply_nested_json_is_a_400(server: OpenAIServer) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    status, _, body = _raw(server, "POST", "/v1/chat/completions", nested)

    assert (status, body) == (400, _error(400, "invalid JSON body: JSON nested too deeply"))


def test_malformed_request_line_is_a_json_400(server: OpenAIServer) -> None:
    status, _, body, closed = _exchange(server, b"GARBAGE\r\n\r\n")

    message = "Bad request syntax ('GARBAGE'): Bad request syntax or unsupported method"
    assert (status, body, closed) == (400, _error(400, message), True)


def test_unknown_method_is_a_json_501(server: OpenAIServer) -> None:
    status, _, body, closed = _exchange(server, b"BREW /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")

    message = "Unsupported method ('BREW'): Server does not support this operation"
    assert (status, body, closed) == (501, _error(501, message), True)


_MSG = {"role": "user", "content": "x"}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"model": 7}, "'model' is required and must be a non-empty string"),
        ({"messages": {"role": "user"}}, "'messages' is required and must be a non-empty list"),
        ({"messages": [{"role": 1}]}, "'messages[0]' must be an object with a string 'role'"),
        (
            {"messages": [_MSG, {"role": "user", "content": 5}]},
            "'messages[1].content' must be a string, a list of parts or null, got int",
        ),
        (
            {"messages": [{"role": "user", "content": ["hi"]}]},
            "'messages[0].content[0]' must be an object with a string 'type'",
        ),
        ({"stream": "yes"}, "'stream' must be a boolean, got str"),
        ({"stream": True, "stream_options": [True]}, "'stream_options' must be an object, got list"),
        (
            {"stream": True, "stream_options": {"include_usage": 1}},
            "'stream_options.include_usage' must be a boolean, got int",
        ),
        ({"n": "1"}, "'n' must be an integer, got str"),
        ({"n": True}, "'n' must be an integer, got bool"),
        ({"n": 1.0}, "'n' must be an integer, got float"),
    ],
)
def test_wrong_field_types_are_a_400(server: OpenAIServer, fields: dict, message: str) -> None:
    payload = {"model": "m", "messages": [_MSG], **fields}
    status, _, body = _raw(server, "POST", "/v1/chat/completions", json.dumps(payload).encode())

    assert (status, body) == (400, _error(400, message))


def test_null_optional_fields_are_accepted(client: openai.OpenAI) -> None:
    payload = {"model": "m", "messages": [{"role": "assistant", "content": None}, _MSG], "stream": None, "n": None}
    completion = client.chat.completions.create(**payload, stream_options=None)

    assert completion.choices[0].message.content == REPLY.content


def test_keep_alive_survives_a_400_whose_body_was_read(server: OpenAIServer) -> None:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    conn.request("POST", "/v1/chat/completions", body=b"{not json")
    first = conn.getresponse()
    assert (first.status, first.getheader("Connection"), first.read()[:30]) == (
        400,
        None,
        b'{"error": {"message": "invalid',
    )
    sock = conn.sock
    conn.request("GET", "/v1/models")
    assert conn.getresponse().status == 200
    assert conn.sock is sock  # the same connection served the next request
    conn.close()


def test_a_server_bug_is_a_json_500_not_a_dropped_connection() -> None:
    with OpenAIServer(models=(object(),)) as srv:  # a model id json cannot encode
        status, _, body = _raw(srv, "GET", "/v1/models")

    assert status == 500
    assert body["error"]["type"] == "server_error"
    assert body["error"]["message"] == "server error: TypeError('Object of type object is not JSON serializable')"


# -- limits and binding -------------------------------------------------------------------------------------


def test_request_recording_keeps_the_last_max_records() -> None:
    with OpenAIServer(fixed_responder("x"), max_records=3) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        for i in range(5):
            client.chat.completions.create(model=f"m{i}", messages=MESSAGES)

        assert [body["model"] for body in srv.chat_requests] == ["m2", "m3", "m4"]
        assert srv.request_count == 5
        srv.clear()
        assert (srv.requests, srv.request_count) == ([], 0)


def test_record_false_still_counts_requests() -> None:
    with OpenAIServer(fixed_responder("x"), record=False) as srv:
        _raw(srv, "GET", "/v1/models")
        assert (srv.requests, srv.request_count) == ([], 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_records": -1}, "max_records must be >= 0, got -1"),
        ({"max_body_bytes": -1}, "max_body_bytes must be >= 0, got -1"),
        ({"body_timeout": 0}, "body_timeout must be > 0 seconds, got 0"),
    ],
)
def test_bad_limits_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        OpenAIServer(**kwargs)
    assert str(excinfo.value) == message


def test_binds_loopback_only_and_offers_no_host_option(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAIServer() as srv:
        assert srv._httpd is not None and srv._httpd.server_address[0] == "127.0.0.1"
        assert srv.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(SystemExit):
        build_server(["--host", "0.0.0.0"])
    assert "unrecognized arguments: --host 0.0.0.0" in capsys.readouterr().err


# -- models, lifecycle, concurrency -------------------------------------------------------------------------


def test_models_list() -> None:
    with OpenAIServer(models=("trinity-mini", "arcee/trinity-mini")) as srv:
        models = openai.OpenAI(base_url=srv.base_url, api_key="k").models.list()

    assert [(m.id, m.object, m.owned_by) for m in models.data] == [
        ("trinity-mini", "model", "drugprot"),
        ("arcee/trinity-mini", "model", "drugprot"),
    ]


def test_keep_alive_serves_many_requests_on_one_connection(server: OpenAIServer) -> None:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    body = json.dumps({"model": "m", "messages": MESSAGES, "stream": True}).encode()
    for _ in range(3):
        conn.request("POST", "/v1/chat/completions", body=body)
        response = conn.getresponse()
        assert response.getheader("Transfer-Encoding") == "chunked"
        assert response.read().endswith(b"data: [DONE]\n\n")
        conn.request("GET", "/v1/models")
        assert json.loads(conn.getresponse().read())["data"][0]["id"] == "trinity-mini"
    sock = conn.sock
    conn.close()

    assert sock is not None
    assert len(server.requests) == 6


def test_concurrent_clients_get_their_own_replies() -> None:
    script = {f"task-{i:02d}": Reply(f"\\boxed{{{i}}}", f"why {i}") for i in range(32)}
    with OpenAIServer(scripted_responder(script), chunk_size=3) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        results: dict[int, tuple[str, str]] = {}

        def ask(i: int) -> None:
            content, reasoning = "", ""
            stream = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": f"task-{i:02d}"}], stream=True
            )
            for chunk in stream:
                content += chunk.choices[0].delta.content or ""
                reasoning += chunk.choices[0].delta.model_extra.get("reasoning_content") or ""
            results[i] = (content, reasoning)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)  # a bound only so a hang fails; the work is asserted, not its speed

        assert results == {i: (f"\\boxed{{{i}}}", f"why {i}") for i in range(32)}
        assert len(srv.chat_requests) == 32


def test_delay_is_applied() -> None:
    # A lower bound only: load can slow the reply down, never speed it up.
    with OpenAIServer(fixed_responder("x"), delay=0.2) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        start = time.monotonic()
        client.chat.completions.create(model="m", messages=MESSAGES)
        assert time.monotonic() - start >= 0.2


def test_stop_closes_idle_keep_alive_connections_and_port() -> None:
    srv = OpenAIServer(fixed_responder("x")).start()
    url = urlsplit(srv.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", "/v1/models")
    conn.getresponse().read()  # the connection now idles in keep-alive

    thread = srv._thread
    srv.stop()
    assert thread is not None and not thread.is_alive()
    assert conn.sock.recv(1) == b""  # the server closed the idle connection
    with pytest.raises(RuntimeError, match="server is not running"):
        _ = srv.base_url
    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection(url.hostname, url.port, timeout=2).connect()
    srv.stop()  # idempotent


def test_record_false_keeps_no_requests() -> None:
    with OpenAIServer(fixed_responder("x"), record=False) as srv:
        openai.OpenAI(base_url=srv.base_url, api_key="k").chat.completions.create(model="m", messages=MESSAGES)
        assert srv.requests == []


# -- command line -------------------------------------------------------------------------------------------


def test_build_server_from_arguments(tmp_path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"PMID 1": "\\boxed{A}", "PMID 2": {"content": "B", "reasoning_content": "r"}}))
    srv = build_server(["--port", "0", "--script", str(script), "--model", "a", "--model", "b", "--chunk-size", "0"])

    assert (srv.port, tuple(srv.models), srv.chunk_size, srv.api_key) == (0, ("a", "b"), None, None)
    assert (srv.max_body_bytes, srv.body_timeout, srv.record) == (serve.MAX_BODY_BYTES, serve.BODY_TIMEOUT, False)
    assert srv.responder({"messages": [{"role": "user", "content": "PMID 2"}]}) == Reply("B", "r")
    with pytest.raises(ResponderError):
        srv.responder({"messages": [{"role": "user", "content": "PMID 3"}]})


def test_build_server_limits() -> None:
    srv = build_server(["--max-body-bytes", "1000", "--body-timeout", "2.5"])
    assert (srv.max_body_bytes, srv.body_timeout) == (1000, 2.5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-body-bytes", "-1"], "--max-body-bytes must be >= 0, got -1"),
        (["--body-timeout", "0"], "--body-timeout must be > 0 seconds, got 0.0"),
    ],
)
def test_build_server_refuses_bad_limits(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        build_server(argv)
    assert excinfo.value.code == 2
    assert message in capsys.readouterr().err


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# "inherited-ignored": started as a shell's background job is (SIGINT ignored), which Python would pass on.
@pytest.mark.parametrize("sigint", ["default", "inherited-ignored"])
def test_standalone_script_serves_until_interrupted(sigint: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, serve.__file__, "--port", "0", "--reply", "\\boxed{A}", "--reasoning", "r"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint if sigint == "inherited-ignored" else None,
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("serving http://127.0.0.1:")
        base_url = line.split()[1]
        client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        message = client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message
        assert (message.content, message.model_extra) == ("\\boxed{A}", {"reasoning_content": "r"})
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=300) == 0  # a bound against a hang only: a loaded machine can take seconds
        proc.stderr.close()
