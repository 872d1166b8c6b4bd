"""Shared fixtures: the synthetic DrugProt fixture (``fixtures/``) in both real formats."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_JSONL = FIXTURES / "drugprot_fixture.jsonl"
FIXTURE_TSV = FIXTURES / "tsv"


@pytest.fixture(scope="session")
def fixture_jsonl() -> Path:
    return FIXTURE_JSONL


@pytest.fixture(scope="session")
def fixture_tsv() -> Path:
    return FIXTURE_TSV
