"""A local OpenAI-compatible chat-completions server for tests, benchmarks and the offline demo.

Standard library only (``http.server.ThreadingHTTPServer``), bound to 127.0.0.1. Replies come from a
*responder*: a function from the parsed request body to a :class:`Reply`. It speaks what verifiers'
harness programs and the ``openai`` client expect: ``POST /v1/chat/completions`` streamed as SSE (role
chunk, ``reasoning_content`` deltas, ``content`` deltas, finish chunk, optional usage chunk,
``data: [DONE]``) or as one JSON object, and ``GET /v1/models``.

Malformed requests never drop the connection: bad JSON, a bad ``Content-Length``, wrong field types or
JSON nested too deeply get a 4xx JSON error in OpenAI's ``{"error": {...}}`` shape. Request bodies are
bounded (:data:`MAX_BODY_BYTES`, 413 above it), a body that does not arrive within
:data:`BODY_TIMEOUT` seconds gets 408, and at most :data:`MAX_RECORDS` requests are kept for inspection.

Token counts are a deterministic stand-in for a tokenizer (see :func:`count_tokens`)::

    with OpenAIServer(scripted_responder({"PMID 123": "\\\\boxed{A}"})) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")

Standalone, for debugging: ``python -m drugprot.tools.serve --port 8000 --reply '\\boxed{A}'``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "BODY_TIMEOUT",
    "MAX_BODY_BYTES",
    "MAX_RECORDS",
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
"""The only address the server binds: it is a test double and must never be reachable from elsewhere."""

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body accepted, in bytes (16 MiB; a DrugProt prompt is a few KiB). Larger gets 413."""

BODY_TIMEOUT = 30.0
"""Seconds a client has to send the whole request body once its headers arrived; after that, 408."""

MAX_RECORDS = 10_000
"""How many requests :attr:`OpenAIServer.requests` keeps (the most recent ones)."""

_MAX_LENGTH_DIGITS = 18  # more digits than this is above any limit, and int() of a huge string is slow


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


class _RequestError(Exception):
    """A request the server answers with a 4xx error; ``close`` when the connection cannot be reused
    (the body was not, or not wholly, read)."""

    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close


class _BadRequest(_RequestError):
    def __init__(self, message: str) -> None:
        super().__init__(HTTPStatus.BAD_REQUEST, message)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _validate(body: Any) -> None:
    """Raise :class:`_BadRequest` naming the first field of a chat request that has the wrong type."""
    if not isinstance(body, dict):
        raise _BadRequest(f"request body must be a JSON object, got {_type_name(body)}")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _BadRequest("'model' is required and must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("'messages' is required and must be a non-empty list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _BadRequest(f"'messages[{i}]' must be an object with a string 'role'")
        content = message.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    raise _BadRequest(f"'messages[{i}].content[{j}]' must be an object with a string 'type'")
        elif content is not None and not isinstance(content, str):
            raise _BadRequest(
                f"'messages[{i}].content' must be a string, a list of parts or null, got {_type_name(content)}"
            )
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        raise _BadRequest(f"'stream' must be a boolean, got {_type_name(body['stream'])}")
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise _BadRequest(f"'stream_options' must be an object, got {_type_name(options)}")
        usage = options.get("include_usage")
        if usage is not None and not isinstance(usage, bool):
            raise _BadRequest(f"'stream_options.include_usage' must be a boolean, got {_type_name(usage)}")
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        raise _BadRequest(f"'n' must be an integer, got {_type_name(n)}")
    if n not in (None, 1):
        raise _BadRequest("only n=1 is supported")


def _chunks(text: str, size: int | None) -> Iterator[str]:
    if not size or len(text) <= size:
        yield text
        return
    for start in range(0, len(text), size):
        yield text[start : start + size]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response has Content-Length or is chunked
    default_request_version = "HTTP/1.1"  # a garbled request line still gets a status line, not bare JSON
    disable_nagle_algorithm = True  # many small SSE writes must not wait on delayed ACKs
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.owner.verbose:
            super().log_message(format, *args)

    def setup(self) -> None:
        super().setup()
        self._responded = False
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
        self._responded = False
        try:
            self._route(method)
        except Exception as exc:  # a bug here must still answer, not drop the connection
            if self._responded:
                raise
            self.close_connection = True
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"server error: {exc!r}", "server_error")

    def _route(self, method: str) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            raw = self._read_body()
        except _RequestError as exc:
            owner._record(RecordedRequest(method, path, headers))
            if exc.close:
                self.close_connection = True
            return self._error(exc.status, exc.message)
        body: Any = None
        decode_error: str | None = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                decode_error = str(exc)
            except RecursionError:
                decode_error = "JSON nested too deeply"
        owner._record(RecordedRequest(method, path, headers, body))

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
        """The request body, read within ``body_timeout`` seconds; :class:`_RequestError` when it cannot be."""
        owner = self.server.owner
        if self.headers.get_all("Transfer-Encoding"):
            raise _RequestError(
                HTTPStatus.LENGTH_REQUIRED,
                "Transfer-Encoding request bodies are not supported; send the body with a Content-Length",
                close=True,
            )
        values = {value.strip() for value in self.headers.get_all("Content-Length") or []}
        if not values:
            return b""
        if len(values) > 1:
            raise _RequestError(
                HTTPStatus.BAD_REQUEST, f"conflicting Content-Length headers {sorted(values)}", close=True
            )
        (text,) = values
        if not re.fullmatch(r"[0-9]+", text):
            raise _RequestError(
                HTTPStatus.BAD_REQUEST, f"Content-Length must be a non-negative integer, got {text!r}", close=True
            )
        if len(text) > _MAX_LENGTH_DIGITS or int(text) > owner.max_body_bytes:
            raise _RequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"request body of {text} bytes is over the limit of {owner.max_body_bytes} bytes "
                "(OpenAIServer(max_body_bytes=...), --max-body-bytes)",
                close=True,
            )
        return self._read_exactly(int(text), owner.body_timeout)

    def _read_exactly(self, length: int, timeout: float) -> bytes:
        # One deadline for the whole body: a client that trickles a byte at a time cannot hold a thread.
        deadline = time.monotonic() + timeout
        parts: list[bytes] = []
        received = 0
        try:
            while received < length:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                self.connection.settimeout(remaining)
                part = self.rfile.read1(min(length - received, 1 << 16))
                if not part:
                    raise _RequestError(
                        HTTPStatus.BAD_REQUEST,
                        f"request body ended after {received} of {length} bytes (Content-Length)",
                        close=True,
                    )
                parts.append(part)
                received += len(part)
        except TimeoutError:
            raise _RequestError(
                HTTPStatus.REQUEST_TIMEOUT,
                f"request body not received within {timeout:g} s ({received} of {length} bytes arrived)",
                close=True,
            ) from None
        finally:
            self.connection.settimeout(self.timeout)
        return b"".join(parts)

    # -- responses -----------------------------------------------------------------------------------------

    def send_response(self, code: int, message: str | None = None) -> None:
        self._responded = True
        super().send_response(code, message)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The stdlib's own errors (malformed request line, headers too long, unknown method) as JSON."""
        self.close_connection = True
        short, long = self.responses.get(code, ("Error", ""))
        text = f"{message or short}: {explain or long}".rstrip(": ")
        self._error(code, text)

    def _send_json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:  # the body was not (wholly) read: tell the client not to reuse the socket
            self.send_header("Connection", "close")
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

    Limits: a body over ``max_body_bytes`` gets 413 unread; a body not received within ``body_timeout``
    seconds of its headers gets 408; ``requests`` keeps the last ``max_records`` requests (``record=False``:
    none), and ``request_count`` counts them all. Each of those errors closes the connection.
    """

    responder: Responder = field(default_factory=lambda: fixed_responder(""))
    port: int = 0
    models: Sequence[str] = ("trinity-mini",)
    delay: float = 0.0
    chunk_size: int | None = 16
    chunk_delay: float = 0.0
    api_key: str | None = None
    record: bool = True
    max_records: int = MAX_RECORDS
    max_body_bytes: int = MAX_BODY_BYTES
    body_timeout: float = BODY_TIMEOUT
    verbose: bool = False
    _httpd: _HTTPServer | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _requests: deque[RecordedRequest] = field(default_factory=deque, init=False, repr=False)
    _request_count: int = field(default=0, init=False, repr=False)
    _connections: set[socket.socket] = field(default_factory=set, init=False, repr=False)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_records < 0:
            raise ValueError(f"max_records must be >= 0, got {self.max_records}")
        if self.max_body_bytes < 0:
            raise ValueError(f"max_body_bytes must be >= 0, got {self.max_body_bytes}")
        if not self.body_timeout > 0:
            raise ValueError(f"body_timeout must be > 0 seconds, got {self.body_timeout}")
        self._requests = deque(maxlen=self.max_records)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return f"http://{HOST}:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the last ``max_records`` requests received (all of them up to that), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """How many requests were received since start (or :meth:`clear`), recorded or not."""
        with self._lock:
            return self._request_count

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the ``POST /v1/chat/completions`` requests received so far."""
        return [r.body for r in self.requests if r.method == "POST" and r.path == "/v1/chat/completions"]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._request_count = 0

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
        with self._lock:
            self._request_count += 1
            if self.record:
                self._requests.append(request)  # the deque drops the oldest beyond max_records

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
        prog="python -m drugprot.tools.serve",
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
    parser.add_argument(
        "--max-body-bytes", type=int, default=MAX_BODY_BYTES, help="largest request body accepted (413 above)"
    )
    parser.add_argument(
        "--body-timeout", type=float, default=BODY_TIMEOUT, help="seconds to receive a request body (408 after)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    if args.max_body_bytes < 0:
        parser.error(f"--max-body-bytes must be >= 0, got {args.max_body_bytes}")
    if not args.body_timeout > 0:
        parser.error(f"--body-timeout must be > 0 seconds, got {args.body_timeout}")

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
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
        verbose=args.verbose,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run :func:`build_server`'s server until Ctrl-C; prints ``serving <base_url>`` to stderr when up."""
    # A parent that ignores SIGINT (a shell's background job, a test runner) passes that on to us, and Python then
    # installs no KeyboardInterrupt handler: Ctrl-C / kill -INT would never stop the server.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Ctrl-C may come as soon as the line is printed (a script waits for it), so it is caught from here on.
    with contextlib.suppress(KeyboardInterrupt), build_server(argv) as server:
        print(f"serving {server.base_url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
