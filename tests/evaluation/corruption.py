"""Random damage to run-file lines, for the property tests of the report's reading (``test_decode.py``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.evaluation.traces import PMID

JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: json.dumps writes them, json.loads reads them back
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=6)  # lone surrogates included
    | st.sampled_from(["", " ", "\t", "\udc80", "INHIBITOR", "NO-RELATION", "E", "T1", PMID])
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
PROPERTY = settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON value (not the root itself)."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    out = []
    for key, child in children:
        out.append((*prefix, key))
        out += paths(child, (*prefix, key))
    return out


def corrupt(data: st.DataObject, value: Any) -> bytes:
    """``value`` serialized after 1-3 random edits (replace or delete anywhere), or its bytes cut or garbled."""
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(paths(value)))
        parent = value
        for key in where[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(JSON_VALUES)
        if not paths(value):
            break
    raw = json.dumps(value).encode("utf-8", "surrogatepass")
    damage = data.draw(st.sampled_from(["none", "none", "cut", "bytes"]))
    if damage == "cut":
        return raw[: data.draw(st.integers(0, len(raw)))]
    if damage == "bytes":
        at = data.draw(st.integers(0, len(raw)))
        return raw[:at] + data.draw(st.binary(min_size=1, max_size=4)) + raw[at:]
    return raw


def records_in(raw: bytes, legacy: bool) -> int:
    """How many records a non-blank line holds: one, or one per trace of an episode line."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return 1
    traces = value.get("traces") if isinstance(value, dict) and not legacy else None
    return len(traces) if isinstance(traces, list) and traces else 1
