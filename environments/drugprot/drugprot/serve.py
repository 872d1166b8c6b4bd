"""A local OpenAI-compatible chat-completions server for tests, benchmarks and the offline demo.

Standard library only (``http.server.ThreadingHTTPServer``), bound to 127.0.0.1. Replies come from a
*responder*: a function from the parsed request body to a :class:`Reply`. It speaks what verifiers'
harness programs and the ``openai`` client expect: ``POST /v1/chat/completions`` streamed as SSE (role
chunk, ``reasoning_content`` deltas, ``content`` deltas, finish chunk, optional usage chunk,
``data: [DONE]``) or as one JSON object, and ``GET /v1/models``.

Token counts are a deterministic stand-in for a tokenizer (see :func:`count_tokens`)::

    with OpenAIServer(scripted_responder({"PMID 123": "\\\\boxed{A}"})) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")

Standalone, for debugging: ``python -m drugprot.serve --port 8000 --reply '\\boxed{A}'``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ResponderError",
    "count_tokens",
    "fixed_responder",
    "last_user_text",
    "build_server",
    "main",
    "prompt_tokens",
    "scripted_responder",
]

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Reply:
    """One assistant turn. ``reasoning_content`` is sent as a separate field, as DeepSeek/Qwen/vLLM do."""

    content: str
    reasoning_content: str | None = None
    finish_reason: str = "stop"


Responder = Callable[[dict[str, Any]], Reply]
"""Maps the parsed request body (``model``, ``messages``, sampling keys …) to the reply."""


class ResponderError(Exception):
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
            return _message_text(message)
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
    return len(_TOKEN.findall(text)) if text else 0


def _message_text(message: Mapping[str, Any]) -> str:
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
    return sum(count_tokens(_message_text(m)) for m in messages)


def _usage(body: Mapping[str, Any], replies: Sequence[Reply]) -> dict[str, Any]:
    prompt = prompt_tokens(body["messages"])
    reasoning = sum(count_tokens(r.reasoning_content) for r in replies)
    completion = sum(count_tokens(r.content) for r in replies) + reasoning
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received. ``body`` is the parsed JSON, or None when absent or invalid."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


class _BadRequest(Exception):
    pass


def _validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise _BadRequest(f"request body must be a JSON object, got {type(body).__name__}")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _BadRequest("'model' is required and must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("'messages' is required and must be a non-empty list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _BadRequest(f"'messages[{i}]' must be an object with a string 'role'")
    if body.get("n", 1) != 1:
        raise _BadRequest("only n=1 is supported")


def _chunks(text: str, size: int | None) -> Iterator[str]:
    if not size or len(text) <= size:
        yield text
        return
    for start in range(0, len(text), size):
        yield text[start : start + size]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response has Content-Length or is chunked
    disable_nagle_algorithm = True  # many small SSE writes must not wait on delayed ACKs
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.owner.verbose:
            super().log_message(format, *args)

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    # -- routing -------------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = self._read_body()
        body: Any = None
        decode_error: str | None = None
        if raw:
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                decode_error = str(exc)
        owner._record(RecordedRequest(method, path, {k.lower(): v for k, v in self.headers.items()}, body))

        routes = {"/v1/chat/completions": ("POST", self._chat), "/v1/models": ("GET", self._models)}
        if path not in routes:
            return self._error(HTTPStatus.NOT_FOUND, f"unknown route {method} {path}", "not_found_error")
        allowed, handler = routes[path]
        if method != allowed:
            return self._error(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"{method} not allowed on {path}; use {allowed}",
                extra={"Allow": allowed},
            )
        if owner.api_key is not None and self.headers.get("Authorization") != f"Bearer {owner.api_key}":
            return self._error(HTTPStatus.UNAUTHORIZED, "invalid or missing API key", "authentication_error")
        if decode_error is not None:
            return self._error(HTTPStatus.BAD_REQUEST, f"invalid JSON body: {decode_error}")
        handler(body)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    # -- responses -----------------------------------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self,
        status: int,
        message: str,
        error_type: str = "invalid_request_error",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        error = {"message": message, "type": error_type, "param": None, "code": int(status)}
        self._send_json(status, {"error": error}, extra)

    def _models(self, _body: Any) -> None:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "drugprot"} for m in self.server.owner.models]
        self._send_json(HTTPStatus.OK, {"object": "list", "data": data})

    def _chat(self, body: Any) -> None:
        owner = self.server.owner
        try:
            _validate(body)
        except _BadRequest as exc:
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
        usage = _usage(body, [reply])
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


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # benchmarks open many connections at once

    def __init__(self, address: tuple[str, int], owner: OpenAIServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client dropping its connection (or stop() closing it) is routine, not a traceback.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


@dataclass
class OpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1, run in a background thread.

    ``with OpenAIServer(responder, port=0) as server`` starts it on a free port; ``server.base_url`` is
    ``http://127.0.0.1:PORT/v1``. ``requests`` holds every request received. ``delay`` sleeps before each
    completion, ``chunk_delay`` between streamed events, ``chunk_size`` (characters, None = whole) splits
    content and reasoning into deltas. With ``api_key`` set, other bearer tokens get 401.
    """

    responder: Responder = field(default_factory=lambda: fixed_responder(""))
    port: int = 0
    models: Sequence[str] = ("trinity-mini",)
    delay: float = 0.0
    chunk_size: int | None = 16
    chunk_delay: float = 0.0
    api_key: str | None = None
    record: bool = True
    verbose: bool = False
    _httpd: _HTTPServer | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _requests: list[RecordedRequest] = field(default_factory=list, init=False, repr=False)
    _connections: set[socket.socket] = field(default_factory=set, init=False, repr=False)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return f"http://{HOST}:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the ``POST /v1/chat/completions`` requests received so far."""
        return [r.body for r in self.requests if r.method == "POST" and r.path == "/v1/chat/completions"]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def start(self) -> OpenAIServer:
        if self._httpd is not None:
            raise RuntimeError("server is already running")
        self._httpd = _HTTPServer((HOST, self.port), self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, close open keep-alive connections, and join the server thread."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> None:
        if self.record:
            with self._lock:
                self._requests.append(request)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


def _load_script(path: Path) -> dict[str, Reply]:
    """A JSON object mapping key → content string, or key → ``{"content", "reasoning_content", ...}``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: expected a JSON object mapping key -> reply")
    return {k: Reply(**v) if isinstance(v, dict) else Reply(content=str(v)) for k, v in data.items()}


def build_server(argv: Sequence[str] | None = None) -> OpenAIServer:
    """The (not yet started) server that ``main(argv)`` would run."""
    parser = argparse.ArgumentParser(
        prog="python -m drugprot.serve",
        description="Serve a fake OpenAI-compatible chat-completions API on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0 = any free port)")
    parser.add_argument("--reply", default=None, help="content of every reply (with --script: of unmatched ones)")
    parser.add_argument("--reasoning", default=None, help="reasoning_content sent before --reply")
    parser.add_argument("--finish-reason", default="stop", help="finish_reason of --reply")
    parser.add_argument(
        "--script",
        type=Path,
        help='JSON {"key": "reply" | {"content": ..., "reasoning_content": ...}}: the reply whose key occurs '
        "in the last user message (HTTP 500 when none does and --reply is not given)",
    )
    parser.add_argument("--model", action="append", help="model id listed by /v1/models (repeatable)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each reply")
    parser.add_argument("--chunk-size", type=int, default=16, help="characters per streamed delta (0 = whole)")
    parser.add_argument("--api-key", default=None, help="require this bearer token")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)

    default = None if args.reply is None else Reply(args.reply, args.reasoning, args.finish_reason)
    if args.script:
        responder = scripted_responder(_load_script(args.script), default)
    else:
        responder = fixed_responder(default or Reply("", args.reasoning, args.finish_reason))
    return OpenAIServer(
        responder,
        port=args.port,
        models=tuple(args.model or ("trinity-mini",)),
        delay=args.delay,
        chunk_size=args.chunk_size or None,
        api_key=args.api_key,
        record=False,
        verbose=args.verbose,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run :func:`build_server`'s server until Ctrl-C; prints ``serving <base_url>`` to stderr when up."""
    with build_server(argv) as server:
        print(f"serving {server.base_url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
