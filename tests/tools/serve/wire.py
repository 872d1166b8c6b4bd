"""Shared by the server's tests: the reply and messages they send, and raw HTTP for what no SDK sends."""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit

from drugprot.tools.serve import OpenAIServer, Reply

REPLY = Reply(content="The answer is \\boxed{A}.", reasoning_content="Chemical X inhibits gene Y.")
MESSAGES = [
    {"role": "system", "content": "Answer with a letter."},
    {"role": "user", "content": "Does aspirin inhibit COX-1?"},
]
# count_tokens: "Answer with a letter." -> 5; "Does aspirin inhibit COX-1?" -> Does aspirin inhibit COX - 1 ? = 7
PROMPT_TOKENS = 12
# "The answer is \boxed{A}." -> The answer is \ boxed { A } . = 9; "Chemical X inhibits gene Y." -> 6
CONTENT_TOKENS, REASONING_TOKENS = 9, 6


def raw(server: OpenAIServer, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """One raw HTTP request (for what the SDK cannot send): returns (status, headers, parsed JSON body)."""
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, _headers(response), json.loads(response.read())
    finally:
        conn.close()


def _headers(response: http.client.HTTPResponse) -> dict[str, str]:
    """The response's headers, each name capitalized as HTTP/1.1 prints it (``Content-Type``; uvicorn sends
    lowercase)."""
    return {name.title(): value for name, value in response.getheaders()}


def exchange(server: OpenAIServer, data: bytes) -> tuple[int, dict, dict | str, bool]:
    """Send raw bytes (for what no client library sends), read one response.

    Returns (status, headers, body: parsed when JSON, else text, whether the server then closed the connection).
    The 60 s socket timeout only bounds a hang.
    """
    url = urlsplit(server.base_url)
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        status, headers, data = response.status, _headers(response), response.read()
        body = json.loads(data) if headers.get("Content-Type") == "application/json" else data.decode()
        closed = headers.get("Connection") == "close" and sock.recv(1) == b""
        return status, headers, body, closed


def closed_unanswered(server: OpenAIServer, data: bytes) -> bool:
    """Send raw bytes, then end the upload: whether the server closes the connection without a byte of answer."""
    url = urlsplit(server.base_url)
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        return sock.recv(1) == b""


def post(length: str | int, body: bytes = b"", extra: str = "") -> bytes:
    """A raw chat-completions POST with the given Content-Length header and (possibly shorter) body."""
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n{extra}\r\n"
    return head.encode() + body


H11_400 = "Invalid HTTP request received."
"""uvicorn's plain-text answer to what h11 cannot parse."""


def error_body(status: int, message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": status}}
