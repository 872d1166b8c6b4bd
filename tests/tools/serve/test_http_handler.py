"""The hardened HTTP side: malformed requests always get a 4xx JSON answer, never a dropped connection."""

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
    MESSAGES,
    error_body,
    exchange,
    post,
    raw,
)

# -- malformed requests: always a 4xx JSON answer, never a dropped connection ----------------------------


@pytest.mark.parametrize(
    ("length", "status", "message"),
    [
        ("abc", 400, "Content-Length must be a non-negative integer, got 'abc'"),
        ("-5", 400, "Content-Length must be a non-negative integer, got '-5'"),
        ("1.5", 400, "Content-Length must be a non-negative integer, got '1.5'"),
        ("", 400, "Content-Length must be a non-negative integer, got ''"),
        (
            "9" * 40,
            413,
            f"request body of {'9' * 40} bytes is over the limit of {serve.MAX_BODY_BYTES} bytes "
            "(OpenAIServer(max_body_bytes=...), --max-body-bytes)",
        ),
    ],
)
def test_bad_content_length_is_a_4xx_and_closes(server: OpenAIServer, length: str, status: int, message: str) -> None:
    got_status, headers, body, closed = exchange(server, post(length, b"{}"))

    assert (got_status, body, closed) == (status, error_body(status, message), True)
    assert headers["Content-Type"] == "application/json"
    assert [(r.method, r.path, r.body) for r in server.requests] == [("POST", "/v1/chat/completions", None)]


def test_conflicting_content_lengths_are_a_400(server: OpenAIServer) -> None:
    status, _, body, closed = exchange(server, post(2, b"{}", extra="Content-Length: 3\r\n"))

    assert (status, body, closed) == (400, error_body(400, "conflicting Content-Length headers ['2', '3']"), True)


def test_chunked_upload_is_a_411(server: OpenAIServer) -> None:
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    status, _, body, closed = exchange(server, request)

    message = "Transfer-Encoding request bodies are not supported; send the body with a Content-Length"
    assert (status, body, closed) == (411, error_body(411, message), True)


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


def test_stalled_body_times_out_with_a_408() -> None:
    with OpenAIServer(fixed_responder("ok"), body_timeout=0.2) as srv:
        status, _, body, closed = exchange(srv, post(100, b'{"model": "m"'))  # 13 of 100 bytes, then silence
        assert srv.chat_requests == [None]

    assert (status, body, closed) == (
        408,
        error_body(408, "request body not received within 0.2 s (13 of 100 bytes arrived)"),
        True,
    )


def test_body_cut_short_is_a_400() -> None:
    with OpenAIServer(fixed_responder("ok")) as srv:
        status, _, body, _ = exchange(srv, post(100, b'{"model": "m"'), end_upload=True)

    assert (status, body) == (400, error_body(400, "request body ended after 13 of 100 bytes (Content-Length)"))


def test_deeply_nested_json_is_a_400(server: OpenAIServer) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    status, _, body = raw(server, "POST", "/v1/chat/completions", nested)

    assert (status, body) == (400, error_body(400, "invalid JSON body: JSON nested too deeply"))


def test_malformed_request_line_is_a_json_400(server: OpenAIServer) -> None:
    status, _, body, closed = exchange(server, b"GARBAGE\r\n\r\n")

    message = "Bad request syntax ('GARBAGE'): Bad request syntax or unsupported method"
    assert (status, body, closed) == (400, error_body(400, message), True)


def test_unknown_method_is_a_json_501(server: OpenAIServer) -> None:
    status, _, body, closed = exchange(server, b"BREW /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")

    message = "Unsupported method ('BREW'): Server does not support this operation"
    assert (status, body, closed) == (501, error_body(501, message), True)


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
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    body = json.dumps({"model": "m", "messages": MESSAGES, "stream": True}).encode()
    for _ in range(3):
        conn.request("POST", "/v1/chat/completions", body=body)
        response = conn.getresponse()
        assert response.getheader("Transfer-Encoding") == "chunked"
        assert response.read().endswith(b"data: [DONE]\n\n")
        conn.request("GET", "/v1/models")
        assert json.loads(conn.getresponse().read())["data"][0]["id"] == "trinity-mini"
    sock = conn.sock
    conn.close()

    assert sock is not None
    assert len(server.requests) == 6
