"""One clear line when the model endpoint cannot be used at all: unreachable, or the API key rejected.

Without it a run with no key or no route ends with every rollout a bare ``ProviderError`` and, on verifiers 0.4.0,
``vf-eval`` exits 0; only ``drugprot report`` says what went wrong. The drugprot harness sees the model endpoint's
failure as the status the interception server relays (verifiers ``EvalClient``: the provider's own 401/403 for a
rejected key, 503/504 for a connection or timeout failure, with the transport error as the message). On the first
outcome of each endpoint in a process, ``first_contact_problem`` turns such a failure into one line naming the
endpoint, the key's variable and the fix, and ``FirstContact`` logs it once (later rollouts fail the same way and
are not repeated). Any other first outcome, success included, closes the check for that endpoint.

An old habit gets the same treatment: ``-m trinity-mini`` is an endpoint alias of verifiers 0.3.x's registry
(``configs/endpoints.toml``), which verifiers 0.4 sends to the provider as the model id. When the provider refuses the
model on the first call (an ``upstream 4xx`` other than a rejected key or a rate limit), the line names the flags to
type instead (``legacy_alias_fix``); ``drugprot report`` adds the same advice to a failed run's banner.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass

LOGGER = logging.getLogger("verifiers.v1.drugprot")
"""Under verifiers' library logger, so ``vf-eval`` shows the line where it shows its own warnings."""

_STATUS = re.compile(r"HTTP (\d{3}): ?(.*)", re.DOTALL)
_REJECTED = frozenset({401, 403})
_UNREACHABLE = frozenset({503, 504})


_REFUSED_MODEL = re.compile(r"upstream 4\d\d\b")


@dataclass(frozen=True, slots=True)
class LegacyAlias:
    """One endpoint of verifiers 0.3.x's alias registry: the provider's model id, base URL and key variable."""

    model: str
    url: str
    key_var: str


DEFAULT_ENDPOINT = "https://api.pinference.ai/api/v1"
"""Where verifiers 0.4's ``vf-eval`` sends a model without ``--client.base-url``: Prime Inference."""

LEGACY_ALIASES: dict[str, LegacyAlias] = {
    "trinity-mini": LegacyAlias("arcee/trinity-mini", DEFAULT_ENDPOINT, "PRIME_API_KEY"),
    "trinity-mini-openrouter": LegacyAlias(
        "arcee-ai/trinity-mini", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"
    ),
    "trinity-mini-arcee": LegacyAlias("trinity-mini", "https://api.arcee.ai/api/v1", "ARCEE_API_KEY"),
    "trinity-mini-local": LegacyAlias("trinity-mini", "http://localhost:8000/v1", "VLLM_API_KEY"),
}
"""The repository's ``configs/endpoints.toml`` (the legacy ``vf-eval -m ALIAS`` registry), which a hub install does not
have; ``tests/envs/test_first_contact.py`` checks that the two agree."""


def legacy_alias_fix(model: str | None) -> str | None:
    """What to type on verifiers 0.4 for ``-m model`` when ``model`` is a 0.3.x endpoint alias; None otherwise."""
    alias = LEGACY_ALIASES.get(model or "")
    if alias is None:
        return None
    flags = f"-m {alias.model}"
    if alias.url != DEFAULT_ENDPOINT:
        flags += f" --client.base-url {alias.url} --client.api-key-var {alias.key_var}"
    return (
        f"`-m {model}` is an endpoint alias of verifiers 0.3.x (configs/endpoints.toml), which verifiers 0.4 sends "
        f"as the model id: for its endpoint type `{flags}`"
    )


def first_contact_problem(
    failure: str, base_url: str, key_var: str, key_set: bool, model: str | None = None
) -> str | None:
    """The line that explains a failed model call when it means the endpoint cannot be used; None otherwise.

    ``failure`` is the harness's message for the call (``HTTP <status>: <message>``); ``key_set`` whether the
    variable ``key_var`` is set in this process; ``model`` the model id the call sent.
    """
    match = _STATUS.match(failure)
    if match is None:
        return None
    status, message = int(match.group(1)), match.group(2).strip()[:200]
    fix = legacy_alias_fix(model)
    served = any(alias.model == model and alias.url == base_url for alias in LEGACY_ALIASES.values())
    if fix is not None and not served and status not in (*_REJECTED, 429) and _REFUSED_MODEL.match(message):
        return (
            f"drugprot: the model endpoint {base_url} refused the model `{model}` (HTTP {status}: {message}); {fix}. "
            "Every rollout fails the same way: stop the run; `drugprot report RUN_DIR` flags such a run (exit 3)."
        )
    if status in _REJECTED:
        state = "set" if key_set else "NOT set"
        return (
            f"drugprot: the model endpoint {base_url} rejected the API key (HTTP {status}: {message}); the key is read "
            f"from ${key_var} ({state} here). Fix: export {key_var}=<a valid key> (Prime Inference: `prime login`), or "
            "name the variable that holds it with --client.api-key-var. Every rollout fails the same way: stop the "
            "run; `drugprot report RUN_DIR` flags such a run (exit 3)."
        )
    if status in _UNREACHABLE and not message.startswith("upstream"):
        return (
            f"drugprot: cannot reach the model endpoint {base_url} ({message or f'HTTP {status}'}). Fix: check "
            "--client.base-url, the network, and that the server is running (a local vLLM: `vllm serve ...`). Every "
            "rollout fails the same way: stop the run; `drugprot report RUN_DIR` flags such a run (exit 3)."
        )
    return None


class FirstContact:
    """Which endpoints have had their first outcome in this process (thread-safe); logs a problem once each."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def observe(self, failure: str | None, base_url: str, key_var: str, model: str | None = None) -> str | None:
        """Record a model call's outcome (``failure`` None: it succeeded; ``model`` the model id it sent); return
        and log the problem line when this is the endpoint's first outcome and it means the endpoint cannot be
        used."""
        with self._lock:
            if base_url in self._seen:
                return None
            self._seen.add(base_url)
        if failure is None:
            return None
        line = first_contact_problem(failure, base_url, key_var, bool(os.environ.get(key_var)), model)
        if line is not None:
            LOGGER.error(line)
        return line


FIRST_CONTACT = FirstContact()
"""The process's record, shared by every rollout's harness."""

__all__ = [
    "DEFAULT_ENDPOINT",
    "FIRST_CONTACT",
    "LEGACY_ALIASES",
    "LOGGER",
    "FirstContact",
    "LegacyAlias",
    "first_contact_problem",
    "legacy_alias_fix",
]
