"""The OpenAI routes: ``POST /v1/chat/completions`` (one JSON object or an SSE stream) and ``GET /v1/models``.

Each route is a function from the server (its responder and settings) and the parsed JSON body to a
:class:`~drugprot.tools.serve.app.Response`; :data:`ROUTES` is what the ASGI application serves."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from drugprot.tools.serve.app import BadRequest, Response, Route, error_response, json_response
from drugprot.tools.serve.replies import Reply, ResponderError, completion_usage


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def validate_chat_request(body: Any) -> None:
    """Raise :class:`BadRequest` naming the first field of a chat request that has the wrong type."""
    if not isinstance(body, dict):
        raise BadRequest(f"request body must be a JSON object, got {_type_name(body)}")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise BadRequest("'model' is required and must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' is required and must be a non-empty list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"'messages[{i}]' must be an object with a string 'role'")
        content = message.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    raise BadRequest(f"'messages[{i}].content[{j}]' must be an object with a string 'type'")
        elif content is not None and not isinstance(content, str):
            raise BadRequest(
                f"'messages[{i}].content' must be a string, a list of parts or null, got {_type_name(content)}"
            )
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        raise BadRequest(f"'stream' must be a boolean, got {_type_name(body['stream'])}")
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise BadRequest(f"'stream_options' must be an object, got {_type_name(options)}")
        usage = options.get("include_usage")
        if usage is not None and not isinstance(usage, bool):
            raise BadRequest(f"'stream_options.include_usage' must be a boolean, got {_type_name(usage)}")
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        raise BadRequest(f"'n' must be an integer, got {_type_name(n)}")
    if n not in (None, 1):
        raise BadRequest("only n=1 is supported")


def _chunks(text: str, size: int | None) -> Iterator[str]:
    if not size or len(text) <= size:
        yield text
        return
    for start in range(0, len(text), size):
        yield text[start : start + size]


def models(server: Any, _body: Any) -> Response:
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "drugprot"} for m in server.models]
    return json_response(HTTPStatus.OK, {"object": "list", "data": data})


def chat(server: Any, body: Any) -> Response:
    """A chat completion from ``server.responder``, after ``server.delay`` seconds: one JSON object, or with
    ``"stream": true`` an SSE stream of ``server.chunk_size``-character deltas."""
    try:
        validate_chat_request(body)
    except BadRequest as exc:
        return error_response(exc.status, exc.message)
    try:
        reply = server.responder(body)
        if not isinstance(reply, Reply):
            raise TypeError(f"responder returned {type(reply).__name__}, expected Reply")
    except ResponderError as exc:
        return error_response(exc.status, exc.message, exc.error_type)
    except Exception as exc:  # a broken responder is a server error the client can see
        return error_response(HTTPStatus.INTERNAL_SERVER_ERROR, f"responder failed: {exc!r}", "server_error")
    if server.delay:
        time.sleep(server.delay)  # in the request's worker thread, as a slow model would
    completion_id = f"chatcmpl-{next(server._ids):06d}"
    created = int(time.time())
    usage = completion_usage(body, [reply])
    if body.get("stream"):
        return Response(HTTPStatus.OK, frames=_stream(body, reply, completion_id, created, usage, server.chunk_size))
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning_content is not None:
        message["reasoning_content"] = reply.reasoning_content
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}
    payload = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": body["model"],
        "choices": [choice],
        "usage": usage,
    }
    return json_response(HTTPStatus.OK, payload)


def _stream(
    body: dict[str, Any], reply: Reply, completion_id: str, created: int, usage: dict, chunk_size: int | None
) -> tuple[bytes, ...]:
    """The SSE events of one streamed completion: role chunk, reasoning deltas, content deltas, finish chunk, the
    usage chunk (with ``stream_options.include_usage``), ``data: [DONE]``."""
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": body["model"],
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        event = {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if include_usage:
            event["usage"] = None  # as OpenAI does: null on every chunk but the last
        return event

    events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    if reply.reasoning_content:
        events += [chunk({"reasoning_content": p}) for p in _chunks(reply.reasoning_content, chunk_size)]
    if reply.content:
        events += [chunk({"content": p}) for p in _chunks(reply.content, chunk_size)]
    events.append(chunk({}, reply.finish_reason))
    if include_usage:
        events.append({**base, "choices": [], "usage": usage})
    return (*(_sse_event(json.dumps(event).encode()) for event in events), _sse_event(b"[DONE]"))


def _sse_event(data: bytes) -> bytes:
    """One SSE ``data:`` event."""
    return b"data: " + data + b"\n\n"


ROUTES: dict[str, tuple[str, Route]] = {"/v1/chat/completions": ("POST", chat), "/v1/models": ("GET", models)}
"""path -> (the method it allows, its route)."""
