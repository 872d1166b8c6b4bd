"""The OpenAI routes: chat completions (JSON and SSE), models, request validation (``openai_routes``)."""

from __future__ import annotations

import json

import openai
import pytest

from drugprot.tools.serve import (
    OpenAIServer,
    Reply,
    fixed_responder,
)
from tests.tools.serve.wire import (
    CONTENT_TOKENS,
    MESSAGES,
    PROMPT_TOKENS,
    REASONING_TOKENS,
    REPLY,
    error_body,
    raw,
)

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


# -- errors ---------------------------------------------------------------------------------------------------


def test_bad_json_is_a_400_naming_the_problem(server: OpenAIServer) -> None:
    status, headers, body = raw(server, "POST", "/v1/chat/completions", b'{"model": "m",', {"Content-Length": "14"})

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
    status, _, body = raw(server, "POST", "/v1/chat/completions", json.dumps(payload).encode())

    assert status == 400
    assert body["error"]["message"] == message


def test_invalid_request_via_sdk_raises_bad_request(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as excinfo:
        client.chat.completions.create(model="m", messages=[])

    assert excinfo.value.status_code == 400
    assert excinfo.value.body["message"] == "'messages' is required and must be a non-empty list"


def test_unknown_route_is_a_404(server: OpenAIServer) -> None:
    status, _, body = raw(server, "POST", "/v1/completions", b"{}")

    assert status == 404
    assert body["error"] == {
        "message": "unknown route POST /v1/completions",
        "type": "not_found_error",
        "param": None,
        "code": 404,
    }


def test_wrong_method_is_a_405(server: OpenAIServer) -> None:
    status, headers, body = raw(server, "GET", "/v1/chat/completions")

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
    status, _, body = raw(server, "POST", "/v1/chat/completions", json.dumps(payload).encode())

    assert (status, body) == (400, error_body(400, message))


def test_null_optional_fields_are_accepted(client: openai.OpenAI) -> None:
    payload = {"model": "m", "messages": [{"role": "assistant", "content": None}, _MSG], "stream": None, "n": None}
    completion = client.chat.completions.create(**payload, stream_options=None)

    assert completion.choices[0].message.content == REPLY.content


def test_models_list() -> None:
    with OpenAIServer(models=("trinity-mini", "arcee/trinity-mini")) as srv:
        models = openai.OpenAI(base_url=srv.base_url, api_key="k").models.list()

    assert [(m.id, m.object, m.owned_by) for m in models.data] == [
        ("trinity-mini", "model", "drugprot"),
        ("arcee/trinity-mini", "model", "drugprot"),
    ]
