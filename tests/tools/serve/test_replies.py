"""Replies, responders and the stand-in token counts (``drugprot.tools.serve.replies``)."""

from __future__ import annotations

import openai
import pytest

from drugprot.tools import serve
from drugprot.tools.serve import (
    OpenAIServer,
    Reply,
    ResponderError,
    count_tokens,
    last_user_text,
    scripted_responder,
)
from tests.tools.serve.wire import (
    MESSAGES,
)

# -- token approximation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (None, 0),
        ("", 0),
        ("   ", 0),
        ("Hello, world!", 4),
        ("\\boxed{A}", 5),
        ("COX-1", 3),
        ("naïve  café", 2),
        ("<think>x</think>", 8),
    ],
)
def test_count_tokens(text: str | None, tokens: int) -> None:
    assert count_tokens(text) == tokens


def test_prompt_tokens_sum_message_texts_including_text_parts() -> None:
    messages = [
        {"role": "system", "content": "a b"},
        {"role": "user", "content": [{"type": "text", "text": "c d e"}, {"type": "image_url", "image_url": {}}]},
        {"role": "assistant", "content": None},
    ]
    assert serve.prompt_tokens(messages) == 5


# -- responders -----------------------------------------------------------------------------------------------


def test_last_user_text() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": "reply"},
        ]
    }
    assert last_user_text(body) == "a\nb"
    assert last_user_text({"messages": [{"role": "system", "content": "s"}]}) == ""


def test_scripted_responder_longest_key_wins_and_default() -> None:
    respond = scripted_responder({"task-1": "one", "task-10": Reply("ten", "why")}, default="fallback")

    def ask(text: str) -> Reply:
        return respond({"messages": [{"role": "user", "content": text}]})

    assert ask("this is task-10 now") == Reply("ten", "why")
    assert ask("this is task-1 now") == Reply("one")
    assert ask("nothing") == Reply("fallback")


def test_scripted_responder_miss_is_a_500_naming_the_text() -> None:
    with OpenAIServer(scripted_responder({"known": "x"})) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError) as excinfo:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "other"}])

    assert excinfo.value.status_code == 500
    assert excinfo.value.body == {
        "message": "scripted_responder: no script key occurs in the last user message 'other'",
        "type": "server_error",
        "param": None,
        "code": 500,
    }


def test_responder_sees_request_body_and_picks_per_task() -> None:
    seen = []

    def respond(body: dict) -> Reply:
        seen.append(body["model"])
        return Reply(f"echo {last_user_text(body)}")

    with OpenAIServer(respond) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        reply = client.chat.completions.create(model="arcee/trinity-mini", messages=MESSAGES)

    assert reply.choices[0].message.content == "echo Does aspirin inhibit COX-1?"
    assert seen == ["arcee/trinity-mini"]


def test_responder_error_status_reaches_client() -> None:
    def respond(body: dict) -> Reply:
        raise ResponderError(429, "slow down", "rate_limit_error")

    with OpenAIServer(respond) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError) as excinfo:
            client.chat.completions.create(model="m", messages=MESSAGES, stream=True)

    assert excinfo.value.body == {"message": "slow down", "type": "rate_limit_error", "param": None, "code": 429}


def test_broken_responder_is_a_500() -> None:
    with OpenAIServer(lambda body: 1 / 0) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError) as excinfo:
            client.chat.completions.create(model="m", messages=MESSAGES)

    assert excinfo.value.body["message"] == "responder failed: ZeroDivisionError('division by zero')"
