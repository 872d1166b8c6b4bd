"""``drugprot.evaluation.typed_json``: a JSON value of the expected type, or a ``BadRecord`` naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from drugprot.evaluation.typed_json import (
    BadRecord,
    UnidentifiedTask,
    decode_json,
    describe,
    get_count,
    get_flag,
    get_list,
    get_number,
    get_object,
    get_objects,
    get_string,
    shorten,
)

TOO_BIG = "1" + "0" * 22
"""The first 23 characters of 10**400: a number is shown in at most 24."""
COUNT = "expected a token count (a whole number >= 0)"


def reason(call: Any) -> str:
    with pytest.raises(BadRecord) as raised:
        call()
    return str(raised.value)


def test_decode_json_reads_text_and_bytes() -> None:
    assert decode_json(b'{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    assert decode_json('"\\u00e9"') == "é"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"\xff", "not UTF-8 text (byte 0: invalid start byte); a corrupted file?"),
        (b"[" * 100_000, "JSON nested too deeply to read"),
        ('{"a": ', "invalid JSON (JSONDecodeError: Expecting value: line 1 column 7 (char 6)); truncated write?"),
    ],
)
def test_decode_json_says_why_a_line_has_no_value(raw: bytes | str, expected: str) -> None:
    assert reason(lambda: decode_json(raw)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (False, "false"),
        (7, "the number 7"),
        (1.5, "the number 1.5"),
        ("x" * 50, "the string '" + "x" * 38 + "…"),  # the repr cut to 40 characters
        ([[1], 2], "a list of 2 items"),
        ({"a": 1}, "an object"),
    ],
)
def test_describe_is_short_and_never_recursive(value: Any, expected: str) -> None:
    assert describe(value) == expected


def test_shorten_cuts_and_escapes_lone_surrogates() -> None:
    assert shorten("abcdef", 4) == "abc…"
    assert shorten("ok") == "ok"
    assert shorten("a\udc80b") == "a\\udc80b"


def test_missing_or_null_fields_are_none_or_empty() -> None:
    record: dict[str, Any] = {"n": None}
    assert (get_object(record, "x", "x"), get_string(record, "n", "n"), get_number(record, "x", "x")) == (None,) * 3
    assert (get_list(record, "x", "x"), get_objects(record, "n", "n"), get_flag(record, "x", "x")) == ([], [], False)
    assert get_count(record, "x", "x") is None


def test_fields_of_the_expected_type_are_returned() -> None:
    record = {"o": {"k": 1}, "s": "text", "f": 0.25, "i": 10, "b": True, "l": [{"a": 1}, {}], "c": 3.0}
    assert get_object(record, "o", "o") == {"k": 1}
    assert get_string(record, "s", "s") == "text"
    assert (get_number(record, "f", "f"), get_number(record, "i", "i")) == (0.25, 10.0)
    assert get_flag(record, "b", "b") is True
    assert get_objects(record, "l", "l") == [{"a": 1}, {}]
    assert get_count(record, "c", "c") == 3 and isinstance(get_count(record, "c", "c"), int)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: get_object({"a": []}, "a", "x.a"), "field x.a is a list of 0 items, expected an object"),
        (lambda: get_string({"a": 1}, "a", "a"), "field a is the number 1, expected a string"),
        (lambda: get_number({"a": True}, "a", "a"), "field a is true, expected a number"),
        (lambda: get_number({"a": float("inf")}, "a", "a"), "field a is the number inf, expected a finite number"),
        (lambda: get_number({"a": 10**400}, "a", "a"), f"field a is the number {TOO_BIG}…, expected a finite number"),
        (lambda: get_flag({"a": 1}, "a", "a"), "field a is the number 1, expected true or false"),
        (lambda: get_objects({"a": [{}, 3]}, "a", "a"), "field a[1] is the number 3, expected an object"),
        (lambda: get_count({"a": -1}, "a", "a"), f"field a is the number -1, {COUNT}"),
        (lambda: get_count({"a": 2.5}, "a", "a"), f"field a is the number 2.5, {COUNT}"),
        (lambda: get_count({"a": 2**53 + 2}, "a", "a"), f"field a is the number 9007199254740994, {COUNT}"),
    ],
)  # fmt: skip
def test_a_field_of_the_wrong_type_is_a_bad_record_naming_it(call: Any, expected: str) -> None:
    assert reason(call) == expected


def test_an_unidentified_task_is_a_bad_record_counted_apart() -> None:
    assert issubclass(UnidentifiedTask, BadRecord)
    assert (UnidentifiedTask.unidentified, BadRecord.unidentified) == (True, False)
