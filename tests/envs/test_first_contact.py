"""The one line that says a model endpoint cannot be used (``drugprot.envs.first_contact``). The messages are the
ones verifiers' ``EvalClient`` relays through the interception server (``HTTP <status>: <message>``)."""

from __future__ import annotations

import logging

import pytest

from drugprot.envs.first_contact import LOGGER, FirstContact, first_contact_problem

URL = "https://api.pinference.ai/api/v1"


def test_a_rejected_key_names_the_endpoint_the_variable_and_the_fix() -> None:
    line = first_contact_problem('HTTP 401: upstream 401: {"error": "invalid api key"}', URL, "PRIME_API_KEY", False)
    assert line == (
        f'drugprot: the model endpoint {URL} rejected the API key (HTTP 401: upstream 401: {{"error": "invalid api '
        'key"}); the key is read from $PRIME_API_KEY (NOT set here). Fix: export PRIME_API_KEY=<a valid key> (Prime '
        "Inference: `prime login`), or name the variable that holds it with --client.api-key-var. Every rollout "
        "fails the same way: stop the run; `drugprot report RUN_DIR` flags such a run (exit 3)."
    )
    assert "from $MY_KEY (set here)" in str(first_contact_problem("HTTP 403: upstream 403: no", URL, "MY_KEY", True))


@pytest.mark.parametrize("status", [503, 504])
def test_an_unreachable_endpoint_names_the_endpoint_and_the_fix(status: int) -> None:
    line = first_contact_problem(f"HTTP {status}: All connection attempts failed", "http://127.0.0.1:9/v1", "K", True)
    assert line == (
        "drugprot: cannot reach the model endpoint http://127.0.0.1:9/v1 (All connection attempts failed). Fix: "
        "check --client.base-url, the network, and that the server is running (a local vLLM: `vllm serve ...`). "
        "Every rollout fails the same way: stop the run; `drugprot report RUN_DIR` flags such a run (exit 3)."
    )


@pytest.mark.parametrize(
    "failure",
    [
        "HTTP 503: upstream 503: overloaded",  # the provider answered: busy, not unreachable
        "HTTP 429: upstream 429: rate limited",
        "HTTP 400: rollout stopped: max_turns",
        "HTTP 502: malformed upstream response: ValueError",
        "ConnectError: [Errno 111] Connection refused",  # the interception server itself, not the model endpoint
        "chat completion without choices: {}",
    ],
)
def test_other_failures_are_not_diagnosed(failure: str) -> None:
    assert first_contact_problem(failure, URL, "PRIME_API_KEY", True) is None


def test_only_the_first_outcome_of_an_endpoint_counts_and_the_line_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    contact = FirstContact()
    LOGGER.propagate = True  # verifiers' logging setup may have routed it elsewhere; caplog listens at the root
    with caplog.at_level(logging.ERROR, logger=LOGGER.name):
        assert contact.observe("HTTP 401: upstream 401: bad key", URL, "PRIME_API_KEY") is not None
        assert contact.observe("HTTP 401: upstream 401: bad key", URL, "PRIME_API_KEY") is None
        assert contact.observe(None, "http://127.0.0.1:8000/v1", "VLLM_API_KEY") is None  # a success closes it
        assert contact.observe("HTTP 503: refused", "http://127.0.0.1:8000/v1", "VLLM_API_KEY") is None
    assert [r.getMessage()[:52] for r in caplog.records] == ["drugprot: the model endpoint " + URL[:23]]
