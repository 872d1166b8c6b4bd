"""A local OpenAI-compatible chat-completions server for tests, benchmarks and the offline demo.

Served by uvicorn (h11) from a background thread, bound to 127.0.0.1. Replies come from a *responder*: a function
from the parsed request body to a :class:`Reply`, called in a worker thread. It speaks what verifiers'
harness programs and the ``openai`` client expect: ``POST /v1/chat/completions`` streamed as SSE (role
chunk, ``reasoning_content`` deltas, ``content`` deltas, finish chunk, optional usage chunk,
``data: [DONE]``) or as one JSON object, and ``GET /v1/models``.

Malformed requests never drop the connection: bad JSON, wrong field types or JSON nested too deeply get a 4xx JSON
error in OpenAI's ``{"error": {...}}`` shape; what h11 cannot parse (a garbled request line, a bad ``Content-Length``)
gets uvicorn's plain-text 400. Request bodies are bounded (:data:`MAX_BODY_BYTES`, 413 above it, before the body is
read whole), a body that does not arrive within :data:`BODY_TIMEOUT` seconds gets 408, a connection that does not
deliver a request's headers within :data:`HEADER_TIMEOUT` seconds is closed, and at most :data:`MAX_RECORDS` requests
are kept for inspection.

Token counts are a deterministic stand-in for a tokenizer (see :func:`count_tokens`)::

    with OpenAIServer(scripted_responder({"PMID 123": "\\\\boxed{A}"})) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")

Standalone, for debugging: ``python -m drugprot.tools.serve --port 8000 --reply '\\boxed{A}'``
(or ``python <this folder>/__main__.py ...``).

Modules: ``replies`` (what is answered), ``app`` (the ASGI application: body bound and deadline, JSON errors),
``openai_routes`` (the chat and models routes), ``server`` (:class:`OpenAIServer`: uvicorn, its limits, the header
deadline), ``cli`` (the standalone command line).
"""

from __future__ import annotations

from drugprot.tools.serve.app import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_BODY_BYTES, RecordedRequest
from drugprot.tools.serve.cli import build_server, main
from drugprot.tools.serve.replies import (
    Reply,
    Responder,
    ResponderError,
    count_tokens,
    fixed_responder,
    last_user_text,
    prompt_tokens,
    scripted_responder,
)
from drugprot.tools.serve.server import (
    HOST,
    LIMIT_CONCURRENCY,
    MAX_HEADER_BYTES,
    MAX_RECORDS,
    OpenAIServer,
    ServerSettingError,
    ServerStateError,
)

__all__ = [
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "HOST",
    "LIMIT_CONCURRENCY",
    "MAX_HEADER_BYTES",
    "MAX_BODY_BYTES",
    "MAX_RECORDS",
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ResponderError",
    "ServerSettingError",
    "ServerStateError",
    "count_tokens",
    "fixed_responder",
    "last_user_text",
    "build_server",
    "main",
    "prompt_tokens",
    "scripted_responder",
]
