"""The OpenAI routes: ``POST /v1/chat/completions`` (one JSON object or an SSE stream) and ``GET /v1/models``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from drugprot.tools.serve.http_handler import BadRequest, JSONHandler
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


class OpenAIHandler(JSONHandler):
    """The chat-completions and models routes, answered from the owning server's responder and settings."""

    ROUTES = {"/v1/chat/completions": ("POST", "_chat"), "/v1/models": ("GET", "_models")}

    def _models(self, _body: Any) -> None:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "drugprot"} for m in self.server.owner.models]
        self._send_json(HTTPStatus.OK, {"object": "list", "data": data})

    def _chat(self, body: Any) -> None:
        owner = self.server.owner
        try:
            validate_chat_request(body)
        except BadRequest as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        try:
            reply = owner.responder(body)
            if not isinstance(reply, Reply):
                raise TypeError(f"responder returned {type(reply).__name__}, expected Reply")
        except ResponderError as exc:
            return self._error(exc.status, exc.message, exc.error_type)
        except Exception as exc:  # a broken responder is a server error the client can see
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"responder failed: {exc!r}", "server_error")
        if owner.delay:
            time.sleep(owner.delay)
        completion_id = f"chatcmpl-{next(owner._ids):06d}"
        created = int(time.time())
        usage = completion_usage(body, [reply])
        if body.get("stream"):
            self._stream(body, reply, completion_id, created, usage)
            return
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
        self._send_json(HTTPStatus.OK, payload)

    def _stream(self, body: dict[str, Any], reply: Reply, completion_id: str, created: int, usage: dict) -> None:
        owner = self.server.owner
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
            events += [chunk({"reasoning_content": p}) for p in _chunks(reply.reasoning_content, owner.chunk_size)]
        if reply.content:
            events += [chunk({"content": p}) for p in _chunks(reply.content, owner.chunk_size)]
        events.append(chunk({}, reply.finish_reason))
        if include_usage:
            events.append({**base, "choices": [], "usage": usage})

        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        frames = [_sse_frame(json.dumps(event).encode()) for event in events]
        frames.append(_sse_frame(b"[DONE]"))
        frames.append(b"0\r\n\r\n")  # end of the chunked body; the connection stays open
        try:
            if owner.chunk_delay:
                for i, frame in enumerate(frames):
                    if i:
                        time.sleep(owner.chunk_delay)
                    self.wfile.write(frame)
            else:  # one write: instant replies are what framework-overhead benchmarks measure
                self.wfile.write(b"".join(frames))
        except (BrokenPipeError, ConnectionResetError):  # the client went away mid-stream
            self.close_connection = True


def _sse_frame(data: bytes) -> bytes:
    """One SSE ``data:`` event as one HTTP/1.1 chunk."""
    event = b"data: " + data + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(event), event)
