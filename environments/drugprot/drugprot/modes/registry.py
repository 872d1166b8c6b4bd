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


class Registered(Protocol):
    """What the registry itself reads of a mode (the rest is ``TaskMode``'s and ``Mode``'s)."""

    name: str

    def claims(self, data: Mapping[str, Any]) -> bool: ...

    def check_options(self, options: Any) -> None: ...


_MODES: dict[str, Registered] = {}


def register_mode(mode: Registered) -> None:
    """Add ``mode`` under ``mode.name``: the ``mode`` knob may name it, its tasks are built, scored and reported
    by it.

    Raises:
        ValueError: a mode of that name is registered already.
    """
    if mode.name in _MODES:
        raise ValueError(f"a mode named {mode.name!r} is registered already")
    _MODES[mode.name] = mode


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
        KeyError: no such mode, naming the known ones.
    """
    try:
        return _MODES[name]
    except KeyError:
        raise KeyError(f"no task mode {name!r} (known: {', '.join(_MODES)})") from None


def claiming(data: Mapping[str, Any]) -> Registered:
    """The mode of a task's data (v1 ``task.data``, legacy ``info``): the most recently registered mode that claims
    it (pair, registered first, claims every task: it is the fallback)."""
    return next(mode for mode in reversed(_MODES.values()) if mode.claims(data))
