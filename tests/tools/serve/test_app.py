"""The HTTP side over a real server on 127.0.0.1 (``app``, served by uvicorn): malformed requests get a 4xx answer,
never a dropped connection; bodies are bounded before they are read whole; keep-alive holds."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from drugprot.tools import serve
from drugprot.tools.serve import (
    OpenAIServer,
    fixed_responder,
)
from tests.tools.serve.wire import (
    H11_400,
    MESSAGES,
    closed_unanswered,
    error_body,
    exchange,
    post,
    raw,
)

# -- what h11 cannot parse: uvicorn's plain-text 400, and the connection closed --------------------------------


@pytest.mark.parametrize(
    "request_bytes",
    [
        post("abc", b"{}"),
        post("-5", b"{}"),
        post("1.5", b"{}"),
        post("", b"{}"),
        post("9" * 40, b"{}"),  # more digits than h11 reads
        post(2, b"{}", extra="Content-Length: 3\r\n"),  # conflicting lengths
        b"GARBAGE\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",  # HTTP/1.1 without Host
        # headers still unfinished past h11's bound on what it buffers: refused without waiting for their end
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * serve.MAX_HEADER_BYTES,
    ],
    ids=["letters", "negative", "fraction", "empty", "40-digits", "conflicting", "garbage", "no-host", "headers-bound"],
)
def test_what_h11_cannot_parse_is_a_400_and_closes(server: OpenAIServer, request_bytes: bytes) -> None:
    status, headers, body, closed = exchange(server, request_bytes)

    assert (status, body, closed) == (400, H11_400, True)
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert server.requests == []  # it never reached the application


# -- the body bound: 413 before the body is read whole -----------------------------------------------------------


def test_body_over_the_limit_is_a_413_unread_and_at_the_limit_is_served() -> None:
    payload = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    with OpenAIServer(fixed_responder("ok"), max_body_bytes=len(payload)) as srv:
        # Only the headers are sent: the 413 must come without waiting for a body it will never read.
        status, _, body, closed = exchange(srv, post(len(payload) + 1))
        ok_status, _, ok_body = raw(srv, "POST", "/v1/chat/completions", payload)

    message = (
        f"request body of {len(payload) + 1} bytes is over the limit of {len(payload)} bytes "
        "(OpenAIServer(max_body_bytes=...), --max-body-bytes)"
    )
    assert (status, body, closed) == (413, error_body(413, message), True)
    assert (ok_status, ok_body["choices"][0]["message"]["content"]) == (200, "ok")


def _chunked(*parts: bytes, end: bool = True) -> bytes:
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + (b"0\r\n\r\n" if end else b"")


def test_a_chunked_body_within_the_limit_is_served() -> None:
    payload = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    with OpenAIServer(fixed_responder("ok"), max_body_bytes=len(payload)) as srv:
        status, _, body, closed = exchange(srv, _chunked(payload[:10], payload[10:]))
        assert srv.chat_requests == [{"model": "m", "messages": MESSAGES}]

    assert (status, body["choices"][0]["message"]["content"], closed) == (200, "ok", False)


def test_a_chunked_body_is_counted_as_it_arrives_and_refused_when_the_count_passes_the_limit() -> None:
    """Two 600-byte chunks of a 1,000-byte bound and no end: the 413 comes without the rest of the body."""
    with OpenAIServer(fixed_responder("ok"), max_body_bytes=1000) as srv:
        status, _, body, closed = exchange(srv, _chunked(b"x" * 600, b"x" * 600, end=False))

    message = (
        "chunked request body over the limit of 1000 bytes after 1200 bytes "
        "(OpenAIServer(max_body_bytes=...), --max-body-bytes)"
    )
    assert (status, body, closed) == (413, error_body(413, message), True)


# -- the body deadline, a body cut short, bad JSON --------------------------------------------------------------


def test_stalled_body_times_out_with_a_408() -> None:
    with OpenAIServer(fixed_responder("ok"), body_timeout=0.2) as srv:
        status, _, body, closed = exchange(srv, post(100, b'{"model": "m"'))  # 13 of 100 bytes, then silence
        assert srv.chat_requests == [None]

    assert (status, body, closed) == (
        408,
        error_body(408, "request body not received within 0.2 s (13 of 100 bytes arrived)"),
        True,
    )


def test_a_stalled_chunked_body_times_out_with_a_408() -> None:
    with OpenAIServer(fixed_responder("ok"), body_timeout=0.2) as srv:
        status, _, body, closed = exchange(srv, _chunked(b'{"model": "m"', end=False))

    assert (status, body, closed) == (
        408,
        error_body(408, "request body not received within 0.2 s (13 bytes arrived)"),
        True,
    )


def test_body_cut_short_is_closed_unanswered() -> None:
    """The client ended its upload 87 bytes early: no one is left to read an answer."""
    with OpenAIServer(fixed_responder("ok")) as srv:
        assert closed_unanswered(srv, post(100, b'{"model": "m"'))


def test_deeply_nested_json_is_a_400(server: OpenAIServer) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    status, _, body = raw(server, "POST", "/v1/chat/completions", nested)

    assert (status, body) == (400, error_body(400, "invalid JSON body: JSON nested too deeply"))


def test_an_unknown_method_is_a_json_405_and_the_connection_stays(server: OpenAIServer) -> None:
    status, headers, body, closed = exchange(server, b"BREW /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")

    assert (status, body, closed) == (405, error_body(405, "BREW not allowed on /v1/models; use GET"), False)
    assert headers["Allow"] == "GET"


# -- keep-alive ------------------------------------------------------------------------------------------------


def test_keep_alive_survives_a_400_whose_body_was_read(server: OpenAIServer) -> None:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    conn.request("POST", "/v1/chat/completions", body=b"{not json")
    first = conn.getresponse()
    assert (first.status, first.getheader("Connection"), first.read()[:30]) == (
        400,
        None,
        b'{"error": {"message": "invalid',
    )
    sock = conn.sock
    conn.request("GET", "/v1/models")
    assert conn.getresponse().status == 200
    assert conn.sock is sock  # the same connection served the next request
    conn.close()


def test_a_server_bug_is_a_json_500_not_a_dropped_connection() -> None:
    with OpenAIServer(models=(object(),)) as srv:  # a model id json cannot encode
        status, _, body = raw(srv, "GET", "/v1/models")

    assert status == 500
    assert body["error"]["type"] == "server_error"
    assert body["error"]["message"] == "server error: TypeError('Object of type object is not JSON serializable')"


def test_keep_alive_serves_many_requests_on_one_connection(server: OpenAIServer) -> None:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    body = json.dumps({"model": "m", "messages": MESSAGES, "stream": True}).encode()
    socks = set()
    for _ in range(3):
        conn.request("POST", "/v1/chat/completions", body=body)
        response = conn.getresponse()
        assert response.getheader("Transfer-Encoding") == "chunked"
        assert response.read().endswith(b"data: [DONE]\n\n")
        conn.request("GET", "/v1/models")
        assert json.loads(conn.getresponse().read())["data"][0]["id"] == "trinity-mini"
        socks.add(conn.sock)
    conn.close()

    assert len(socks) == 1  # one connection served all six
    assert len(server.requests) == 6
