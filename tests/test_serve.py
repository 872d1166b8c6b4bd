"""The local OpenAI-compatible server, exercised with the real ``openai`` client (offline, 127.0.0.1)."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import openai
import pytest

from drugprot import serve
from drugprot.serve import (
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
            t.join(timeout=30)

        assert results == {i: (f"\\boxed{{{i}}}", f"why {i}") for i in range(32)}
        assert len(srv.chat_requests) == 32


def test_delay_is_applied() -> None:
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

    start = time.monotonic()
    srv.stop()
    assert time.monotonic() - start < 2
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
    assert srv.responder({"messages": [{"role": "user", "content": "PMID 2"}]}) == Reply("B", "r")
    with pytest.raises(ResponderError):
        srv.responder({"messages": [{"role": "user", "content": "PMID 3"}]})


def test_standalone_script_serves_until_interrupted() -> None:
    proc = subprocess.Popen(
        [sys.executable, serve.__file__, "--port", "0", "--reply", "\\boxed{A}", "--reasoning", "r"],
        stderr=subprocess.PIPE,
        text=True,
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
        assert proc.wait(timeout=10) == 0
        proc.stderr.close()
