"""The ASGI application that uvicorn serves (:mod:`drugprot.tools.serve.server`): drugprot's bound and deadline on a
request body, the routes, and errors in OpenAI's JSON shape.

uvicorn and h11 own the HTTP/1.1 wire: the request line and headers (and their size bound), ``Content-Length`` and
chunked framing, keep-alive, and a plain-text 400 for what h11 cannot parse (a garbled request line, a bad or
conflicting ``Content-Length``, a missing ``Host``). Everything that reaches this application gets a JSON answer.

Routes are :data:`drugprot.tools.serve.openai_routes.ROUTES`; a route is a plain function from the server and the
parsed JSON body to a :class:`Response`, run in a worker thread (a responder may block, as a slow model does).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from drugprot.core.errors import DrugprotError

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body accepted, in bytes (16 MiB; a DrugProt prompt is a few KiB). Larger gets 413: a declared
``Content-Length`` above it before any of the body is read, a chunked body as soon as its count passes it."""

BODY_TIMEOUT = 30.0
"""Seconds a client has to send the whole request body once its headers arrived; after that, 408. One deadline for
the whole body, not one per read: a client that trickles a byte at a time is answered too."""

HEADER_TIMEOUT = 60.0
"""Seconds a connection has, from the moment the server waits for a request (a new connection, or the next request
on a kept-alive one), to deliver its request line and headers whole; then it is closed. It is uvicorn's
``timeout_keep_alive`` (the idle kept-alive connection), extended to a new connection's first request and to a
client that trickles bytes (``server.HeaderDeadlineProtocol``). Longer than clients keep an idle pooled connection
(httpx: 5 s), so a client never finds its connection closed under it."""

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received. ``body`` is the parsed JSON, or None when absent or invalid."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


class RequestError(DrugprotError):
    """A request the server answers with a 4xx error; ``close`` when the connection cannot be reused
    (the body was not, or not wholly, read)."""

    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close


class BadRequest(RequestError):
    """A 400 whose body was read: the connection stays usable."""

    def __init__(self, message: str) -> None:
        super().__init__(HTTPStatus.BAD_REQUEST, message)


class ClientGone(Exception):
    """The client closed its connection before its request body was whole: there is no one to answer."""


@dataclass(frozen=True)
class Response:
    """One answer: a JSON body (``frames`` None), or an SSE stream of ``frames`` (``text/event-stream``, chunked)."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    frames: tuple[bytes, ...] | None = None
    close: bool = False
    """Send ``Connection: close`` (the body was not, or not wholly, read): uvicorn closes the connection after it."""


def json_response(
    status: int, payload: Any, extra: Mapping[str, str] | None = None, *, close: bool = False
) -> Response:
    return Response(status, json.dumps(payload).encode(), tuple((extra or {}).items()), close=close)


def error_response(
    status: int,
    message: str,
    error_type: str = "invalid_request_error",
    extra: Mapping[str, str] | None = None,
    *,
    close: bool = False,
) -> Response:
    """OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    error = {"message": message, "type": error_type, "param": None, "code": int(status)}
    return json_response(status, {"error": error}, extra, close=close)


def parse_json(raw: bytes | bytearray) -> tuple[Any, str | None]:
    """The parsed body (None when empty or invalid) and why it is invalid (None when it is not)."""
    if not raw:
        return None, None
    try:
        return json.loads(raw), None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return None, str(exc)
    except RecursionError:
        return None, "JSON nested too deeply"


Route = Callable[[Any, Any], Response]
"""A route: ``(server, parsed body) -> Response``, run in a worker thread."""


@dataclass
class OpenAIApp:
    """The ASGI application: ``server`` (an :class:`~drugprot.tools.serve.server.OpenAIServer`, which imports this
    module) holds the settings and the records; ``routes`` maps a path to the method it allows and its route."""

    server: Any
    routes: Mapping[str, tuple[str, Route]]
    executor: Executor

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # uvicorn runs without lifespan events and without websockets
            return
        try:
            response = await self._respond(scope, receive)
        except Exception as exc:  # a bug here must still answer, not drop the connection
            response = error_response(
                HTTPStatus.INTERNAL_SERVER_ERROR, f"server error: {exc!r}", "server_error", close=True
            )
        if response is not None:
            await self._send(send, response)

    async def _respond(self, scope: dict[str, Any], receive: Receive) -> Response | None:
        method, path = scope["method"], scope["path"].rstrip("/")
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        try:
            raw = await self._read_body(headers, receive)
        except (RequestError, ClientGone) as exc:
            self.server._record(RecordedRequest(method, path, headers))
            if isinstance(exc, ClientGone):
                return None
            return error_response(exc.status, exc.message, close=exc.close)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._handle, method, path, headers, raw)

    async def _read_body(self, headers: Mapping[str, str], receive: Receive) -> bytearray:
        """The request body, bounded by ``max_body_bytes`` and read within ``body_timeout`` seconds.

        Raises:
            RequestError: 413 over the bound (a declared length before anything is read; a chunked body as soon as
                its count would pass it), 408 when it does not arrive in time.
            ClientGone: the client closed the connection first.
        """
        limit, timeout = self.server.max_body_bytes, self.server.body_timeout
        declared = headers.get("content-length")  # h11 checked it: one value, digits only
        if declared is not None and int(declared) > limit:
            raise RequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"request body of {declared} bytes is over the limit of {limit} bytes "
                "(OpenAIServer(max_body_bytes=...), --max-body-bytes)",
                close=True,
            )
        body = bytearray()
        try:
            async with asyncio.timeout(timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise ClientGone
                    part = message.get("body", b"")
                    if len(body) + len(part) > limit:
                        raise RequestError(
                            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                            f"chunked request body over the limit of {limit} bytes after {len(body) + len(part)} "
                            "bytes (OpenAIServer(max_body_bytes=...), --max-body-bytes)",
                            close=True,
                        )
                    body += part
                    if not message.get("more_body", False):
                        return body
        except TimeoutError:
            of = f" of {declared}" if declared is not None else ""
            raise RequestError(
                HTTPStatus.REQUEST_TIMEOUT,
                f"request body not received within {timeout:g} s ({len(body)}{of} bytes arrived)",
                close=True,
            ) from None

    def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytearray) -> Response:
        """Parse, record and route one request whose body is whole (in a worker thread)."""
        body, decode_error = parse_json(raw)
        del raw  # the parsed body is what is kept: the bytes can go before the route runs
        self.server._record(RecordedRequest(method, path, headers, body))
        if path not in self.routes:
            return error_response(HTTPStatus.NOT_FOUND, f"unknown route {method} {path}", "not_found_error")
        allowed, route = self.routes[path]
        if method != allowed:
            return error_response(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"{method} not allowed on {path}; use {allowed}",
                extra={"Allow": allowed},
            )
        api_key = self.server.api_key
        if api_key is not None and headers.get("authorization") != f"Bearer {api_key}":
            return error_response(HTTPStatus.UNAUTHORIZED, "invalid or missing API key", "authentication_error")
        if decode_error is not None:
            return error_response(HTTPStatus.BAD_REQUEST, f"invalid JSON body: {decode_error}")
        return route(self.server, body)

    async def _send(self, send: Send, response: Response) -> None:
        if response.frames is None:
            content = [(b"content-type", b"application/json"), (b"content-length", str(len(response.body)).encode())]
        else:  # no length: h11 sends the stream chunked
            content = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        headers = content + [(name.lower().encode(), value.encode()) for name, value in response.headers]
        if response.close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": int(response.status), "headers": headers})
        if response.frames is None:
            await send({"type": "http.response.body", "body": response.body})
            return
        delay = self.server.chunk_delay
        if not delay:  # one write: instant replies are what framework-overhead benchmarks measure
            await send({"type": "http.response.body", "body": b"".join(response.frames)})
            return
        for i, frame in enumerate(response.frames):
            if i:
                await asyncio.sleep(delay)
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
