"""Typed access to a run file's JSON: each accessor returns the value or raises ``BadRecord`` naming the field."""

from __future__ import annotations

import json
import math
from typing import Any


class BadRecord(Exception):
    """A record that is not a readable DrugProt rollout; the message names the field and what is wrong."""

    unidentified = False


class UnidentifiedTask(BadRecord):
    """A DrugProt rollout whose task cannot be identified."""

    unidentified = True


def decode_json(raw: bytes | str) -> Any:
    """The JSON value of one line; ``BadRecord`` says why it has none (never another exception)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRecord(f"not UTF-8 text (byte {exc.start}: {exc.reason}); a corrupted file?") from None
    try:
        return json.loads(raw)
    except RecursionError:
        raise BadRecord("JSON nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, or an integer literal too long to convert
        raise BadRecord(f"invalid JSON ({type(exc).__name__}: {shorten(str(exc))}); truncated write?") from None


_MAX_COUNT = 2**53
"""Largest token count accepted (the largest integer a JSON double holds exactly)."""
_SHORT = 80


def shorten(text: str, limit: int = _SHORT) -> str:
    """``text`` cut to ``limit`` characters, with lone surrogates escaped so it can always be printed."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(value: Any) -> str:
    """A short description of a JSON value for a message (never recursive: values may be deeply nested)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"the number {shorten(repr(value), 24)}"
    if isinstance(value, str):
        return f"the string {shorten(repr(value), 40)}"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    return "an object" if isinstance(value, dict) else type(value).__name__


def typed(obj: dict[str, Any], key: str, path: str, kind: type | tuple[type, ...], expected: str) -> Any:
    """``obj[key]`` when it is a ``kind`` (bools never count as numbers); None when missing or null."""
    value = obj.get(key)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if value is None or (isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))):
        return value
    raise BadRecord(f"field {path} is {describe(value)}, expected {expected}")


def get_object(obj: dict[str, Any], key: str, path: str) -> dict[str, Any] | None:
    return typed(obj, key, path, dict, "an object")


def get_list(obj: dict[str, Any], key: str, path: str) -> list[Any]:
    return typed(obj, key, path, list, "a list") or []


def get_objects(obj: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    """A list of objects (``errors``, ``calls``, ``nodes``, ``completion`` ...); empty when missing."""
    items = get_list(obj, key, path)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadRecord(f"field {path}[{i}] is {describe(item)}, expected an object")
    return items


def get_string(obj: dict[str, Any], key: str, path: str) -> str | None:
    return typed(obj, key, path, str, "a string")


def get_number(obj: dict[str, Any], key: str, path: str) -> float | None:
    """A finite number (an int or float, not a bool, NaN or infinity), or None when missing."""
    value = typed(obj, key, path, (int, float), "a number")
    if value is None:
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer literal beyond the float range
        number = math.inf
    if not math.isfinite(number):
        raise BadRecord(f"field {path} is {describe(value)}, expected a finite number")
    return number


def get_count(obj: dict[str, Any], key: str, path: str) -> int | None:
    """A token count: a whole number from 0 to 2**53, or None when missing."""
    number = get_number(obj, key, path)
    if number is None:
        return None
    if number < 0 or number > _MAX_COUNT or not number.is_integer():
        raise BadRecord(f"field {path} is {describe(obj[key])}, expected a token count (a whole number >= 0)")
    return int(number)


def get_flag(obj: dict[str, Any], key: str, path: str) -> bool:
    return bool(typed(obj, key, path, bool, "true or false"))


def identity(data: dict[str, Any], key: str, path: str) -> str:
    """A pmid or mention id: a non-empty string or integer without whitespace or control characters."""
    value = data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise UnidentifiedTask(f"task cannot be identified: field {path} is {'missing' if value is None else 'empty'}")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadRecord(f"field {path} is {describe(value)}, expected a string or an integer id")
    text = str(value)
    if not all(c.isprintable() and not c.isspace() for c in text):
        raise BadRecord(f"field {path} is {describe(value)}: an id cannot hold whitespace or control characters")
    return text
