"""The server object: records, limits, loopback binding, concurrency, delay and a clean stop (``server``)."""

from __future__ import annotations

import http.client
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
        ({"body_timeout": 0}, "body_timeout must be > 0 seconds, got 0"),
    ],
)
def test_bad_limits_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ServerSettingError) as excinfo:
        OpenAIServer(**kwargs)
    assert str(excinfo.value) == message


def test_binds_loopback_only_and_offers_no_host_option(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAIServer() as srv:
        assert srv._httpd is not None and srv._httpd.server_address[0] == "127.0.0.1"
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
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", "/v1/models")
    conn.getresponse().read()  # the connection now idles in keep-alive

    thread = srv._thread
    srv.stop()
    assert thread is not None and not thread.is_alive()
    assert conn.sock.recv(1) == b""  # the server closed the idle connection
    with pytest.raises(ServerStateError, match="server is not running"):
        _ = srv.base_url
    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection(url.hostname, url.port, timeout=2).connect()
    srv.stop()  # idempotent


def test_record_false_keeps_no_requests() -> None:
    with OpenAIServer(fixed_responder("x"), record=False) as srv:
        openai.OpenAI(base_url=srv.base_url, api_key="k").chat.completions.create(model="m", messages=MESSAGES)
        assert srv.requests == []
