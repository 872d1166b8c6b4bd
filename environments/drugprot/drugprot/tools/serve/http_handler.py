"""The hardened HTTP side of the server: bounded body reads, JSON errors, keep-alive, and request records.

Routes are the subclass's (:class:`drugprot.tools.serve.openai_routes.OpenAIHandler`): ``ROUTES`` maps a path to the
method it allows and the name of the handler method, which gets the parsed JSON body.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from drugprot.core.errors import DrugprotError

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body accepted, in bytes (16 MiB; a DrugProt prompt is a few KiB). Larger gets 413."""

BODY_TIMEOUT = 30.0
"""Seconds a client has to send the whole request body once its headers arrived; after that, 408."""

HEADER_TIMEOUT = 60.0
"""Seconds a connection has, from the moment the server waits for a request (a new connection, or the next request
on a kept-alive one), to deliver its request line and headers whole; then it is closed and its thread ends. One
deadline, not one per read: a client that trickles a byte at a time cannot hold a thread either. Longer than clients
keep an idle pooled connection (httpx: 5 s), so a client never finds its connection closed under it."""

_MAX_LENGTH_DIGITS = 18  # more digits than this is above any limit, and int() of a huge string is slow


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


class _HeaderDeadlineIO(io.RawIOBase):
    """The connection's bytes as the handler reads them (its ``rfile`` buffers this): while a request's line and
    headers are awaited (``JSONHandler.header_deadline`` set), each read waits only until that deadline and then
    raises ``TimeoutError``, which the stdlib's ``handle_one_request`` answers by closing the connection."""

    def __init__(self, handler: JSONHandler) -> None:
        super().__init__()
        self._handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        deadline = self._handler.header_deadline
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("request line and headers not received in time")
            self._handler.connection.settimeout(remaining)
        return self._handler.connection.recv_into(buffer)


class JSONHandler(BaseHTTPRequestHandler):
    """Answers every request, malformed ones included, with JSON; subclasses name their routes in ``ROUTES``."""

    protocol_version = "HTTP/1.1"  # keep-alive; every response has Content-Length or is chunked
    default_request_version = "HTTP/1.1"  # a garbled request line still gets a status line, not bare JSON
    disable_nagle_algorithm = True  # many small SSE writes must not wait on delayed ACKs
    server: Any  # drugprot.tools.serve.server.HTTPServer, whose ``owner`` holds the settings (it imports this module)
    ROUTES: ClassVar[dict[str, tuple[str, str]]] = {}
    """path -> (the method it allows, the name of the method that handles it with the parsed body)."""

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.owner.verbose:
            super().log_message(format, *args)

    header_deadline: float | None = None
    """While a request's line and headers are awaited: the ``time.monotonic()`` by which they must have arrived."""

    def setup(self) -> None:
        self.timeout = self.server.owner.header_timeout  # StreamRequestHandler.setup sets it on the socket
        super().setup()
        self.rfile.close()  # the stdlib's reader, replaced by one that keeps the header deadline
        self.rfile = io.BufferedReader(_HeaderDeadlineIO(self))
        self._responded = False
        self.server.owner._track(self.connection, add=True)

    def handle_one_request(self) -> None:
        self.header_deadline = time.monotonic() + self.server.owner.header_timeout
        super().handle_one_request()

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
        self.header_deadline = None  # the headers are in; the body has its own deadline (body_timeout)
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
        except RequestError as exc:
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

        if path not in self.ROUTES:
            return self._error(HTTPStatus.NOT_FOUND, f"unknown route {method} {path}", "not_found_error")
        allowed, handler = self.ROUTES[path]
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
        getattr(self, handler)(body)

    def _read_body(self) -> bytes:
        """The request body, read within ``body_timeout`` seconds; :class:`RequestError` when it cannot be."""
        owner = self.server.owner
        if self.headers.get_all("Transfer-Encoding"):
            raise RequestError(
                HTTPStatus.LENGTH_REQUIRED,
                "Transfer-Encoding request bodies are not supported; send the body with a Content-Length",
                close=True,
            )
        values = {value.strip() for value in self.headers.get_all("Content-Length") or []}
        if not values:
            return b""
        if len(values) > 1:
            raise RequestError(
                HTTPStatus.BAD_REQUEST, f"conflicting Content-Length headers {sorted(values)}", close=True
            )
        (text,) = values
        if not re.fullmatch(r"[0-9]+", text):
            raise RequestError(
                HTTPStatus.BAD_REQUEST, f"Content-Length must be a non-negative integer, got {text!r}", close=True
            )
        if len(text) > _MAX_LENGTH_DIGITS or int(text) > owner.max_body_bytes:
            raise RequestError(
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
                    raise RequestError(
                        HTTPStatus.BAD_REQUEST,
                        f"request body ended after {received} of {length} bytes (Content-Length)",
                        close=True,
                    )
                parts.append(part)
                received += len(part)
        except TimeoutError:
            raise RequestError(
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
