"""Shared fixtures: the synthetic DrugProt fixture (``fixtures/``) in both real formats.

Also marks the slowest tests ``slow`` (see :data:`SLOW_TESTS`): each one runs a real CLI in a subprocess
(``vf-eval``, ``drugprot demo``, a benchmark's quick mode, a wheel install). ``scripts/test.sh`` and CI run
them; ``-m "not slow"`` leaves them out of a quick local loop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_JSONL = FIXTURES / "drugprot_fixture.jsonl"
FIXTURE_TSV = FIXTURES / "tsv"

SLOW_TESTS = frozenset(
    {
        # a real vf-eval (or the legacy one, or the demo that runs it) against drugprot.serve
        "test_e2e_v1.py::test_vf_eval_drugprot_end_to_end",
        "test_report.py::test_report_on_a_real_vf_eval_run",
        "test_demo.py::test_demo_end_to_end",
        "test_legacy.py::test_legacy_vf_eval_end_to_end",
        "test_legacy.py::test_eval_config_dry_run",
        # the benchmarks' quick modes, each in its own interpreter
        "test_bench_smoke.py::test_build_quick",
        "test_bench_smoke.py::test_score_quick",
        "test_bench_smoke.py::test_pipeline_quick",
        # uv build + a clean venv
        "test_packaging.py::test_wheel_installs_and_imports_in_a_clean_venv",
    }
)
"""``<file name>::<test function>`` (all parametrizations) of the tests marked ``slow``."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Runs before -k/-m deselect anything, so every test of a collected file is seen here.
    collected = {f"{item.path.name}::{getattr(item, 'originalname', item.name)}": item for item in items}
    for key, item in collected.items():
        if key in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    files = {item.path.name for item in items}
    whole_files = not any("::" in arg for arg in config.args)  # no single test picked on the command line
    stale = sorted(key for key in SLOW_TESTS if key.split("::")[0] in files and key not in collected)
    if whole_files and stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {stale}; update it")


@pytest.fixture(scope="session")
def fixture_jsonl() -> Path:
    return FIXTURE_JSONL


@pytest.fixture(scope="session")
def fixture_tsv() -> Path:
    return FIXTURE_TSV
