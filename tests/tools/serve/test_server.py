"""The server object: records, limits, loopback binding, concurrency, delay and a clean stop (``server``)."""

from __future__ import annotations

import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import openai
import pytest

from drugprot.tools.serve import (
    OpenAIServer,
    Reply,
    ServerSettingError,
    ServerStateError,
    build_server,
    fixed_responder,
    scripted_responder,
)
from tests.tools.serve.wire import (
    MESSAGES,
    raw,
)

# -- limits and binding -------------------------------------------------------------------------------------


def test_request_recording_keeps_the_last_max_records() -> None:
    with OpenAIServer(fixed_responder("x"), max_records=3) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        for i in range(5):
            client.chat.completions.create(model=f"m{i}", messages=MESSAGES)

        assert [body["model"] for body in srv.chat_requests] == ["m2", "m3", "m4"]
        assert srv.request_count == 5
        srv.clear()
        assert (srv.requests, srv.request_count) == ([], 0)


def test_record_false_still_counts_requests() -> None:
    with OpenAIServer(fixed_responder("x"), record=False) as srv:
        raw(srv, "GET", "/v1/models")
        assert (srv.requests, srv.request_count) == ([], 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_records": -1}, "max_records must be >= 0, got -1"),
        ({"max_body_bytes": -1}, "max_body_bytes must be >= 0, got -1"),
        ({"body_timeout": 0}, "body_timeout must be above 0 and at most 86400 seconds, got 0"),
        ({"body_timeout": float("inf")}, "body_timeout must be above 0 and at most 86400 seconds, got inf"),
        ({"header_timeout": -1.0}, "header_timeout must be above 0 and at most 86400 seconds, got -1.0"),
        ({"port": 65536}, "port must be a whole number from 0 (any free port) to 65535, got 65536"),
        ({"port": True}, "port must be a whole number from 0 (any free port) to 65535, got True"),
        ({"delay": float("nan")}, "delay must be from 0 to 86400 seconds, got nan"),
        ({"chunk_delay": -0.5}, "chunk_delay must be from 0 to 86400 seconds, got -0.5"),
        ({"limit_concurrency": 1}, "limit_concurrency must be a whole number >= 2, got 1"),
        (
            {"chunk_size": 0},
            "chunk_size must be at least 1 character, or 0 / None for the whole text in one delta, got 0",
        ),
    ],
)
def test_bad_limits_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ServerSettingError) as excinfo:
        OpenAIServer(**kwargs)
    assert str(excinfo.value) == message


def test_binds_loopback_only_and_offers_no_host_option(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAIServer() as srv:
        assert srv.address[0] == "127.0.0.1"
        assert srv.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(SystemExit):
        build_server(["--host", "0.0.0.0"])
    assert "unrecognized arguments: --host 0.0.0.0" in capsys.readouterr().err


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
            t.join(timeout=600)  # a bound only so a hang fails; the work is asserted, not its speed

        assert results == {i: (f"\\boxed{{{i}}}", f"why {i}") for i in range(32)}
        assert len(srv.chat_requests) == 32


def test_delay_is_applied() -> None:
    # A lower bound only: load can slow the reply down, never speed it up.
    with OpenAIServer(fixed_responder("x"), delay=0.2) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        start = time.monotonic()
        client.chat.completions.create(model="m", messages=MESSAGES)
        assert time.monotonic() - start >= 0.2


def test_stop_closes_idle_keep_alive_connections_and_port() -> None:
    srv = OpenAIServer(fixed_responder("x")).start()
    url = urlsplit(srv.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    conn.request("GET", "/v1/models")
    conn.getresponse().read()  # the connection now idles in keep-alive

    thread = srv._thread
    srv.stop()
    assert thread is not None and not thread.is_alive()
    assert conn.sock.recv(1) == b""  # the server closed the idle connection
    with pytest.raises(ServerStateError, match="server is not running"):
        _ = srv.base_url
    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection(url.hostname, url.port, timeout=60).connect()
    srv.stop()  # idempotent


def test_a_client_that_never_finishes_its_headers_is_closed_after_the_header_timeout() -> None:
    """Each stalled client holds its connection (and a ``limit_concurrency`` place) only ``header_timeout`` seconds.
    Bounds are one-sided or generous (load can only make the close later, never earlier)."""
    import socket

    timeout, clients = 0.5, 8
    with OpenAIServer(fixed_responder("x"), header_timeout=timeout) as srv:
        url = urlsplit(srv.base_url)
        start = time.monotonic()  # before the connections: the server's deadline starts when it accepts each
        socks = [socket.create_connection((url.hostname, url.port), timeout=60) for _ in range(clients)]
        for sock in socks:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # no blank line: headers unfinished
        for sock in socks:
            assert sock.recv(1) == b""  # closed by the server, not by our 60 s
            sock.close()
        assert time.monotonic() - start >= timeout
        silent = socket.create_connection((url.hostname, url.port), timeout=60)  # a client that never sends a byte
        assert silent.recv(1) == b""
        silent.close()
        # a kept-alive connection that idles is closed the same way; a request in time is answered
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        conn.request("GET", "/v1/models")
        assert conn.getresponse().read().startswith(b"{")
        assert conn.sock.recv(1) == b""


def test_at_limit_concurrency_open_connections_a_request_gets_503() -> None:
    """uvicorn's ``limit_concurrency`` counts the connection asking: at 2, one other open connection fills it."""
    import socket

    with OpenAIServer(fixed_responder("x"), limit_concurrency=2) as srv:
        url = urlsplit(srv.base_url)
        with socket.create_connection((url.hostname, url.port), timeout=60):  # open, silent, accepted first
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
            conn.request("GET", "/v1/models")
            response = conn.getresponse()
            assert (response.status, response.read()) == (503, b"Service Unavailable")
            conn.close()
        # the other connection closed, there is room again once the server has seen the close (60 s: a hang bound)
        deadline = time.monotonic() + 60
        while _status(srv) != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _status(srv) == 200


def _status(srv: OpenAIServer) -> int:
    url = urlsplit(srv.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request("GET", "/v1/models")
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_client_that_trickles_its_headers_is_closed_at_one_deadline_not_one_per_byte() -> None:
    """A byte every 0.05 s never leaves the socket silent for ``header_timeout``; the deadline is for the headers
    whole, so the server still closes it. The bound is generous: 1,200 bytes (60 s of trickling at the least)."""
    import select
    import socket

    timeout = 0.5
    with OpenAIServer(fixed_responder("x"), header_timeout=timeout) as srv:
        url = urlsplit(srv.base_url)
        start = time.monotonic()  # before the connection: the server's deadline starts when it accepts it
        with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
            sent, closed = 0, False
            while sent < 1200 and not closed:
                try:
                    sock.sendall(b"X")
                except OSError:  # the server closed it: a reset or a broken pipe
                    closed = True
                    break
                sent += 1
                readable, _, _ = select.select([sock], [], [], 0.05)
                try:
                    closed = bool(readable) and sock.recv(1) == b""
                except OSError:  # closed with trickled bytes still unread: a reset
                    closed = True
            assert closed, f"still open after {sent} trickled bytes"
            assert time.monotonic() - start >= timeout


def test_record_false_keeps_no_requests() -> None:
    with OpenAIServer(fixed_responder("x"), record=False) as srv:
        openai.OpenAI(base_url=srv.base_url, api_key="k").chat.completions.create(model="m", messages=MESSAGES)
        assert srv.requests == []


def test_one_large_request_peaks_at_a_small_multiple_of_its_body() -> None:
    """A 15.4 MiB prompt (under the 16 MiB bound) costs the server its body, the decoded text and the parsed
    string: about 3x the body at the peak (it was 14x, when token counting held a string per token). tracemalloc
    sees every Python allocation, the server's threads' included; the client's body is made before it starts."""
    import tracemalloc

    text = ("Aspirin inhibits COX-1 in platelets. " * 500_000)[: int(15.4 * 1024 * 1024) - 100]
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()
    del text
    with OpenAIServer(fixed_responder("x"), record=False) as srv:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            status, _, reply = raw(srv, "POST", "/v1/chat/completions", body)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert (status, reply["usage"]["prompt_tokens"]) == (200, 3_491_453)  # 8 per 37-character sentence, and 5
    assert peak - before < 4 * len(body)
