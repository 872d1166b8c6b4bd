"""The demo's error type."""

from __future__ import annotations

from drugprot.core.errors import DrugprotError


class DemoError(DrugprotError, RuntimeError):
    """The demo could not run (no eval CLI, or the run failed); the message says what to do."""
