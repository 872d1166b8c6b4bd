"""Fixtures of the server's tests: a server with a fixed reply streamed in 5-character deltas, and a client."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from drugprot.tools.serve import OpenAIServer, fixed_responder
from tests.tools.serve.wire import REPLY


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(fixed_responder(REPLY), chunk_size=5) as srv:
        yield srv


@pytest.fixture
def client(server: OpenAIServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
