"""The server object: :class:`OpenAIServer` runs the handler on 127.0.0.1 in a background thread."""

from __future__ import annotations

import contextlib
import itertools
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from drugprot.core.errors import DrugprotError
from drugprot.tools.serve.http_handler import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_BODY_BYTES, RecordedRequest
from drugprot.tools.serve.openai_routes import OpenAIHandler
from drugprot.tools.serve.replies import Responder, fixed_responder

HOST = "127.0.0.1"
"""The only address the server binds: it is a test double and must never be reachable from elsewhere."""

MAX_RECORDS = 10_000
"""How many requests :attr:`OpenAIServer.requests` keeps (the most recent ones)."""


MAX_SECONDS = 86_400.0
"""The longest delay or timeout accepted (a day): longer ones are a typo, and ``inf`` would fail every request."""

MAX_PORT = 65_535


class ServerSettingError(DrugprotError, ValueError):
    """An :class:`OpenAIServer` setting that cannot work (a port out of range, a negative size, a delay or timeout
    that is negative, NaN or infinite). ``setting`` is its name (``body_timeout``), ``problem`` the rest of the
    message (``must be ..., got inf``): the command line names the flag (``--body-timeout``) instead."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting, self.problem = setting, problem
        super().__init__(f"{setting} {problem}")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= MAX_SECONDS


def check_settings(
    *,
    port: object = 0,
    delay: object = 0.0,
    chunk_size: object = None,
    chunk_delay: object = 0.0,
    max_records: object = 0,
    max_body_bytes: object = 0,
    body_timeout: object = 1.0,
    header_timeout: object = 1.0,
) -> None:
    """The rules of :class:`OpenAIServer`'s settings, the one place they are written: ``OpenAIServer`` applies them
    when built, and the command lines before any work (their flags are the settings' names).

    Raises:
        ServerSettingError: the first setting that breaks its rule (a NaN fails every comparison, so it is refused).
    """
    if not (_whole(port) and 0 <= port <= MAX_PORT):  # type: ignore[operator]
        raise ServerSettingError("port", f"must be a whole number from 0 (any free port) to {MAX_PORT}, got {port}")
    for name, value in (("delay", delay), ("chunk_delay", chunk_delay)):
        if not _seconds(value):
            raise ServerSettingError(name, f"must be from 0 to {MAX_SECONDS:g} seconds, got {value}")
    if chunk_size is not None and not (_whole(chunk_size) and chunk_size >= 1):  # type: ignore[operator]
        raise ServerSettingError(
            "chunk_size", f"must be at least 1 character, or 0 / None for the whole text in one delta, got {chunk_size}"
        )
    for name, value in (("max_records", max_records), ("max_body_bytes", max_body_bytes)):
        if not (_whole(value) and value >= 0):  # type: ignore[operator]
            raise ServerSettingError(name, f"must be >= 0, got {value}")
    for name, value in (("body_timeout", body_timeout), ("header_timeout", header_timeout)):
        if not (_seconds(value) and value > 0):  # type: ignore[operator]
            raise ServerSettingError(name, f"must be above 0 and at most {MAX_SECONDS:g} seconds, got {value}")


class ServerStateError(DrugprotError, RuntimeError):
    """An :class:`OpenAIServer` used in the wrong state (its URL before ``start``, a second ``start``)."""


class HTTPServer(ThreadingHTTPServer):
    """The stdlib threading server, bound to its :class:`OpenAIServer` (``owner``) for settings and records."""

    daemon_threads = True
    request_queue_size = 1024  # benchmarks open many connections at once

    def __init__(self, address: tuple[str, int], owner: OpenAIServer) -> None:
        self.owner = owner
        super().__init__(address, OpenAIHandler)

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
    seconds of its headers gets 408 (each of those errors closes the connection); a connection silent for
    ``header_timeout`` seconds while the server waits for a request (its first line and headers, or the next request
    on a kept-alive connection) is closed, so a client that never finishes its headers holds a thread that long, not
    forever. ``requests`` keeps the last ``max_records`` requests (``record=False``: none), and ``request_count``
    counts them all. Every setting is checked by ``check_settings`` (``ServerSettingError``).
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
    header_timeout: float = HEADER_TIMEOUT
    verbose: bool = False
    _httpd: HTTPServer | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _requests: deque[RecordedRequest] = field(default_factory=deque, init=False, repr=False)
    _request_count: int = field(default=0, init=False, repr=False)
    _connections: set[socket.socket] = field(default_factory=set, init=False, repr=False)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    def __post_init__(self) -> None:
        check_settings(
            port=self.port,
            delay=self.delay,
            chunk_size=self.chunk_size,
            chunk_delay=self.chunk_delay,
            max_records=self.max_records,
            max_body_bytes=self.max_body_bytes,
            body_timeout=self.body_timeout,
            header_timeout=self.header_timeout,
        )
        self._requests = deque(maxlen=self.max_records)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise ServerStateError("server is not running")
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
            raise ServerStateError("server is already running")
        self._httpd = HTTPServer((HOST, self.port), self)
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
