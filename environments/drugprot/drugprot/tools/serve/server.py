"""The server object: :class:`OpenAIServer` serves :class:`~drugprot.tools.serve.app.OpenAIApp` from uvicorn on
127.0.0.1, in a background thread with its own event loop."""

from __future__ import annotations

import asyncio
import copy
import itertools
import socket
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol

from drugprot.core.errors import DrugprotError
from drugprot.tools.serve.app import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_BODY_BYTES, OpenAIApp, RecordedRequest
from drugprot.tools.serve.openai_routes import ROUTES
from drugprot.tools.serve.replies import Responder, fixed_responder

HOST = "127.0.0.1"
"""The only address the server binds: it is a test double and must never be reachable from elsewhere."""

MAX_RECORDS = 10_000
"""How many requests :attr:`OpenAIServer.requests` keeps (the most recent ones)."""

LIMIT_CONCURRENCY = 256
"""uvicorn's ``limit_concurrency``: with this many connections open (or requests in flight), a new request gets
uvicorn's plain-text 503. It also bounds the worker threads routes run in, and so the request bodies held at once."""

MAX_HEADER_BYTES = 16 * 1024
"""h11's bound on a request's line and headers (``h11_max_incomplete_event_size``, h11's default): more gets
uvicorn's plain-text 400 and the connection is closed."""

STOP_TIMEOUT = 5
"""Seconds :meth:`OpenAIServer.stop` lets responses in flight finish (uvicorn's ``timeout_graceful_shutdown``)."""

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
    limit_concurrency: object = LIMIT_CONCURRENCY,
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
    if not (_whole(limit_concurrency) and limit_concurrency >= 2):  # type: ignore[operator]
        # uvicorn counts the connection asking: at 1, every request would get 503
        raise ServerSettingError("limit_concurrency", f"must be a whole number >= 2, got {limit_concurrency}")


class ServerStateError(DrugprotError, RuntimeError):
    """An :class:`OpenAIServer` used in the wrong state (its URL before ``start``, a second ``start``)."""


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with one deadline for each request's line and headers: ``timeout_keep_alive``
    seconds from the moment a request is awaited (a new connection, or the end of the previous response), after
    which the connection is closed unless a request has begun. uvicorn alone arms ``timeout_keep_alive`` only after
    a response and cancels it on any byte, so a client that never finishes its first request's headers, or that
    trickles a byte at a time, would hold its connection (and a ``limit_concurrency`` place) for ever."""

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        super().connection_lost(exc)

    def _await_request(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.timeout_keep_alive, self._close_unless_requested, self.cycle)

    def _close_unless_requested(self, awaited: Any) -> None:
        # No request since the deadline was set: the same cycle (None on a new connection), its response sent.
        idle = self.cycle is awaited and (awaited is None or awaited.response_complete)
        if idle and not self.transport.is_closing():
            self.transport.close()


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, told to stop from another thread by an event (uvicorn's own main loop looks every 0.1 s)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        await super().startup(sockets)
        self.ready.set()

    async def main_loop(self) -> None:
        assert self._stopping is not None
        await self._stopping.wait()

    def request_stop(self) -> None:
        self.should_exit = True
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)


def _log_config(verbose: bool) -> dict[str, Any] | None:
    """uvicorn's own logging when ``verbose``: a line per request and its warnings, on stderr (not its start-up lines:
    the first line stays ``serving <url>``); else none (errors reach stderr through Python's last-resort handler)."""
    if not verbose:
        return None
    config = copy.deepcopy(LOGGING_CONFIG)
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config["loggers"]["uvicorn.error"]["level"] = "WARNING"
    return config


@dataclass
class OpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1, run by uvicorn in a background thread.

    ``with OpenAIServer(responder, port=0) as server`` starts it on a free port; ``server.base_url`` is
    ``http://127.0.0.1:PORT/v1``. ``requests`` holds every request received. ``delay`` sleeps before each
    completion, ``chunk_delay`` between streamed events, ``chunk_size`` (characters, None = whole) splits
    content and reasoning into deltas. With ``api_key`` set, other bearer tokens get 401.

    Limits: a body over ``max_body_bytes`` gets 413 unread (chunked: as soon as its count passes the bound); a body
    not received within ``body_timeout`` seconds of its headers gets 408 (each of those errors closes the
    connection); a connection that has not delivered a request's line and headers ``header_timeout`` seconds after
    the server began waiting for it (a new connection, or the next request on a kept-alive one) is closed. uvicorn's
    own limits: ``limit_concurrency`` open connections (503 beyond), h11's bound on the headers
    (:data:`MAX_HEADER_BYTES`). ``requests`` keeps the last ``max_records`` requests (``record=False``: none), and
    ``request_count`` counts them all. Every setting is checked by ``check_settings`` (``ServerSettingError``).
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
    limit_concurrency: int = LIMIT_CONCURRENCY
    verbose: bool = False
    _uvicorn: _Uvicorn | None = field(default=None, init=False, repr=False)
    _socket: socket.socket | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _executor: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)
    _failure: BaseException | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _requests: deque[RecordedRequest] = field(default_factory=deque, init=False, repr=False)
    _request_count: int = field(default=0, init=False, repr=False)
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
            limit_concurrency=self.limit_concurrency,
        )
        self._requests = deque(maxlen=self.max_records)

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) the server listens on."""
        if self._socket is None:
            raise ServerStateError("server is not running")
        host, port = self._socket.getsockname()[:2]
        return host, port

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.address[1]}/v1"

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
        """Bind 127.0.0.1:``port`` and serve from a background thread; returns once uvicorn accepts connections.

        Raises:
            OSError: the port cannot be bound.
            ServerStateError: already running, or uvicorn failed to start.
        """
        if self._socket is not None:
            raise ServerStateError("server is already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, self.port))
        except OSError:
            sock.close()
            raise
        self._executor = ThreadPoolExecutor(max_workers=self.limit_concurrency, thread_name_prefix="openai-server")
        config = uvicorn.Config(
            OpenAIApp(self, ROUTES, self._executor),
            http=HeaderDeadlineProtocol,
            ws="none",
            lifespan="off",
            interface="asgi3",
            limit_concurrency=self.limit_concurrency,
            timeout_keep_alive=self.header_timeout,  # type: ignore[arg-type]  # a float works: loop.call_later
            timeout_graceful_shutdown=STOP_TIMEOUT,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            backlog=1024,  # benchmarks open many connections at once
            server_header=False,
            log_config=_log_config(self.verbose),
            log_level=None if self.verbose else "error",
            access_log=self.verbose,
        )
        server = _Uvicorn(config)
        self._socket, self._uvicorn = sock, server
        self._failure = None
        self._thread = threading.Thread(target=self._serve, name="openai-server", daemon=True)
        self._thread.start()
        while not server.ready.wait(0.05):
            if not self._thread.is_alive():
                self._cleanup()
                raise ServerStateError(f"the server did not start: {self._failure!r}")
        return self

    def _serve(self) -> None:
        assert self._uvicorn is not None and self._socket is not None
        try:
            self._uvicorn.run(sockets=[self._socket])
        except BaseException as exc:  # reported by start(); a thread's exception would be lost
            self._failure = exc

    def stop(self) -> None:
        """Stop accepting, close open keep-alive connections, let responses in flight finish (at most
        :data:`STOP_TIMEOUT` seconds), and join the server thread."""
        server, thread = self._uvicorn, self._thread
        if server is None:
            return
        server.request_stop()
        if thread is not None:
            thread.join(timeout=STOP_TIMEOUT + 5)
        self._cleanup()

    def _cleanup(self) -> None:
        if self._socket is not None:
            self._socket.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        self._uvicorn = self._socket = self._thread = self._executor = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._request_count += 1
            if self.record:
                self._requests.append(request)  # the deque drops the oldest beyond max_records
