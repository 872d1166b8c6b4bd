"""The one registry of task modes, by name: what the ``mode`` knob may name and what a task's data is.

It sits in the core layer and imports nothing of the modes, so the knob check (``drugprot.core.options``) can ask
it. An entry is the mode object itself (a ``drugprot.modes.task.TaskMode``, for pair and extraction the whole
``drugprot.modes.base.Mode``); the typed look-ups are ``drugprot.modes.task`` (what the environment asks) and
``drugprot.modes.base`` (what the report asks). ``drugprot/__init__.py`` registers pair and extraction
(``drugprot.modes.builtin``) before anything else of the package runs, so every import sees them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from drugprot.core.errors import DrugprotArgumentError, DrugprotLookupError


class Registered(Protocol):
    """What the registry itself reads of a mode (the rest is ``TaskMode``'s and ``Mode``'s)."""

    name: str

    def claims(self, data: Mapping[str, Any]) -> bool: ...

    def check_options(self, options: Any) -> None: ...


_MODES: dict[str, Registered] = {}


def check_mode_name(name: object) -> str:
    """``name`` when it can name a mode: a non-empty string of printable characters without whitespace, so the
    ``mode`` knob (``--env.taskset.mode NAME``) can give it exactly and every message can print it.

    Raises:
        DrugprotArgumentError: anything else (None, ``""``, ``"pair "``, 5), saying what a name must be.
    """
    if not isinstance(name, str) or not name or not all(c.isprintable() and not c.isspace() for c in name):
        raise DrugprotArgumentError(
            f"a mode name must be a non-empty string without whitespace or control characters (what the mode knob "
            f"gives), got {name!r}"
        )
    return name


def register_mode(mode: Registered) -> None:
    """Add ``mode`` under ``mode.name``: the ``mode`` knob may name it, its tasks are built, scored and reported
    by it.

    Raises:
        DrugprotArgumentError: ``mode.name`` cannot name a mode (``check_mode_name``), or a mode of that name is
            registered already (a ``ValueError``, as before).
    """
    name = check_mode_name(getattr(mode, "name", None))
    if name in _MODES:
        raise DrugprotArgumentError(f"a mode named {name!r} is registered already")
    _MODES[name] = mode


def unregister_mode(name: str) -> None:
    """Take the mode ``name`` away (a test's toy mode)."""
    del _MODES[name]


def registered() -> tuple[Registered, ...]:
    """The modes in the order they were registered (pair, extraction, then any other)."""
    return tuple(_MODES.values())


def mode_names() -> tuple[str, ...]:
    """The names the ``mode`` knob accepts, in registration order."""
    return tuple(_MODES)


def lookup(name: str) -> Registered:
    """The mode named ``name``.

    Raises:
        DrugprotLookupError: no such mode, naming the known ones (a ``KeyError``, as before).
    """
    try:
        return _MODES[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name (a list) is no mode either
        raise DrugprotLookupError(f"no task mode {name!r} (known: {', '.join(_MODES)})") from None


def claiming(data: Mapping[str, Any]) -> Registered:
    """The mode of a task's data (v1 ``task.data``, legacy ``info``): the most recently registered mode that claims
    it (pair, registered first, claims every task: it is the fallback)."""
    return next(mode for mode in reversed(_MODES.values()) if mode.claims(data))
