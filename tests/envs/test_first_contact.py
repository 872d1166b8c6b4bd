"""The one line that says a model endpoint cannot be used (``drugprot.envs.first_contact``). The messages are the
ones verifiers' ``EvalClient`` relays through the interception server (``HTTP <status>: <message>``)."""

from __future__ import annotations

import logging

import pytest

from drugprot.envs.first_contact import LEGACY_ALIASES, LOGGER, FirstContact, first_contact_problem, legacy_alias_fix

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


# ------------------------------------------------------------------------------ verifiers 0.3.x's aliases on 0.4


def test_the_alias_table_is_the_repository_s_endpoint_registry() -> None:
    """``LEGACY_ALIASES`` is ``configs/endpoints.toml`` (which an installed package does not have)."""
    import tomllib
    from pathlib import Path

    registry = Path(__file__).resolve().parents[2] / "configs" / "endpoints.toml"
    entries = tomllib.loads(registry.read_text(encoding="utf-8"))["endpoint"]
    assert {e["endpoint_id"]: (e["model"], e["url"], e["key"]) for e in entries} == {
        alias: (entry.model, entry.url, entry.key_var) for alias, entry in LEGACY_ALIASES.items()
    }


def test_an_alias_names_the_flags_to_type_on_0_4() -> None:
    assert legacy_alias_fix("trinity-mini") == (
        "`-m trinity-mini` is an endpoint alias of verifiers 0.3.x (configs/endpoints.toml), which verifiers 0.4 "
        "sends as the model id: for its endpoint type `-m arcee/trinity-mini`"
    )
    assert str(legacy_alias_fix("trinity-mini-openrouter")).endswith(
        "type `-m arcee-ai/trinity-mini --client.base-url https://openrouter.ai/api/v1 --client.api-key-var "
        "OPENROUTER_API_KEY`"
    )
    assert legacy_alias_fix("arcee/trinity-mini") is None and legacy_alias_fix(None) is None


def test_a_refused_alias_on_the_first_call_names_the_model_to_type() -> None:
    failure = 'HTTP 404: upstream 404: {"error": "model trinity-mini not found"}'
    assert first_contact_problem(failure, URL, "PRIME_API_KEY", True, "trinity-mini") == (
        f'drugprot: the model endpoint {URL} refused the model `trinity-mini` (HTTP 404: upstream 404: {{"error": '
        '"model trinity-mini not found"}); `-m trinity-mini` is an endpoint alias of verifiers 0.3.x '
        "(configs/endpoints.toml), which verifiers 0.4 sends as the model id: for its endpoint type "
        "`-m arcee/trinity-mini`. Every rollout fails the same way: stop the run; `drugprot report RUN_DIR` flags "
        "such a run (exit 3)."
    )
    # not the model's fault: a rejected key, a rate limit, a stopped rollout, or the model id served there
    assert "rejected the API key" in str(
        first_contact_problem("HTTP 401: upstream 401: no", URL, "K", True, "trinity-mini")
    )
    assert first_contact_problem("HTTP 429: upstream 429: slow down", URL, "K", True, "trinity-mini") is None
    assert first_contact_problem("HTTP 400: rollout stopped: max_turns", URL, "K", True, "trinity-mini") is None
    local = "http://localhost:8000/v1"  # vLLM serving --served-model-name trinity-mini: a real model id there
    assert first_contact_problem("HTTP 400: upstream 400: too long", local, "K", True, "trinity-mini") is None
    assert first_contact_problem(failure, URL, "K", True, "arcee/trinity-mini") is None


def test_the_first_contact_passes_the_model_it_sent(caplog: pytest.LogCaptureFixture) -> None:
    contact = FirstContact()
    LOGGER.propagate = True
    with caplog.at_level(logging.ERROR, logger=LOGGER.name):
        line = contact.observe("HTTP 400: upstream 400: unknown model", URL, "PRIME_API_KEY", "trinity-mini")
    assert line is not None and "type `-m arcee/trinity-mini`" in line
    assert [record.getMessage() for record in caplog.records] == [line]
