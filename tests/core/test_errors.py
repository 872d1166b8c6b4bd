"""Tests of drugprot.core.errors: one base class, the builtin each error also is, and where a data error points."""

from __future__ import annotations

import pytest

from drugprot.core.errors import (
    DrugprotArgumentError,
    DrugprotConfigError,
    DrugprotDataError,
    DrugprotError,
    DrugprotHubError,
    DrugprotLookupError,
)


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (DrugprotConfigError("x", knob="seed"), ValueError),
        (DrugprotDataError("x"), ValueError),
        (DrugprotArgumentError("x"), ValueError),
        (DrugprotLookupError("x"), KeyError),
        (DrugprotHubError("x"), RuntimeError),
    ],
)
def test_every_error_is_a_drugprot_error_and_the_builtin_callers_caught(error: Exception, builtin: type) -> None:
    assert isinstance(error, DrugprotError) and isinstance(error, builtin)


def test_a_data_error_names_source_pmid_and_field() -> None:
    error = DrugprotDataError("missing field", source="a.jsonl#row3", pmid="123", field="entities[0].start")
    assert str(error) == "missing field (source a.jsonl#row3, pmid 123, field entities[0].start)"
    assert (error.source, error.pmid, error.field) == ("a.jsonl#row3", "123", "entities[0].start")
    assert str(DrugprotDataError("empty", field="pmid")) == "empty (field pmid)"
    assert str(DrugprotDataError("no abstract")) == "no abstract"


def test_a_config_error_names_its_knob() -> None:
    error = DrugprotConfigError("seed must be an integer, got '7'", knob="seed")
    assert (str(error), error.knob) == ("seed must be an integer, got '7'", "seed")
