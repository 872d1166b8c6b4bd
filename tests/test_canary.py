"""The canary (``scripts/canary.py``): what it installs, how it reads a stage's pytest output, the record it writes.

Its real run (the suite three times, on today's releases) is not part of the suite; its committed record is
docs/compatibility.md, checked here for shape.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from .scripts import load_script

canary = load_script("canary")

LOG = """\
tests/tools/adapters/test_peft_loading.py ..F.
=========================== short test summary info ============================
SKIPPED [1] tests/tools/adapters/test_x.py:3: no GPU
FAILED tests/tools/adapters/test_peft_loading.py::test_peft_refuses - AssertionError: Regex pattern did not match.
FAILED tests/tools/adapters/test_peft_verify.py::test_silent - assert 4.59e-06 > 0.1
============ 2 failed, 183 passed, 1 skipped in 965.12s (0:16:05) =============
"""


def test_pytest_outcome_is_the_summary_and_the_first_failure() -> None:
    assert canary.pytest_outcome(LOG) == (
        "2 failed, 183 passed, 1 skipped",
        "tests/tools/adapters/test_peft_loading.py::test_peft_refuses - AssertionError: Regex pattern did not match.",
    )
    assert canary.pytest_outcome("==== 12 passed in 3.20s ====\n") == ("12 passed", None)
    assert canary.pytest_outcome("Traceback: ImportError\n") == ("no summary", None)


def test_each_stage_installs_its_locks_inputs_resolved_today() -> None:
    """The same requirements as the lock (scripts/lock.py), the package editable, torch left to pip."""
    assert canary.stage_requirements("v03")[:2] == ("-e", "./environments/drugprot[report]")
    assert "verifiers==0.3.1" in canary.stage_requirements("v03")
    adapters = canary.stage_requirements("adapters")
    assert adapters[:2] == ("-e", "./environments/drugprot[adapters]")
    assert [r for r in adapters if r.startswith("torch")] == []
    v04 = canary.stage_requirements("v04")
    assert v04[:2] == ("-e", "./environments/drugprot[report]") and "pytest>=8" in v04


def test_the_newest_local_cpu_torch_wheel_is_taken(tmp_path: Path) -> None:
    tag = canary.sys.version_info
    for version in ("2.9.1", "2.13.0", "2.10.0"):
        (
            tmp_path
            / f"torch-{version}+cpu-cp{tag.major}{tag.minor}-cp{tag.major}{tag.minor}-manylinux_2_28_x86_64.whl"
        ).touch()
    (tmp_path / "torch-2.99.0-cp311-cp311-manylinux_2_28_x86_64.whl").touch()  # a CUDA build: not taken
    found = canary.local_torch_wheel([str(tmp_path), str(tmp_path / "missing")])
    assert found is not None and found.name.startswith("torch-2.13.0+cpu-")
    assert canary.local_torch_wheel([str(tmp_path / "missing")]) is None


def test_a_record_names_versions_stages_and_first_failures_and_goes_first() -> None:
    results = [
        canary.StageResult("v04", {"verifiers": "0.4.0", "openai": "2.54.0"}, "2045 passed", 0, 2096.4, None),
        canary.StageResult("v03"),
        canary.StageResult("adapters", {}, "install failed", None, 12.0, "uv pip install --quiet -p … (see the log)"),
    ]
    newest = {"verifiers": "0.4.0", "openai": "3.63.0"}
    record = canary.render_record(datetime.date(2026, 12, 7), results, newest, "python scripts/canary.py")
    assert record == (
        "### 2026-12-07\n\n"
        f"`python scripts/canary.py` on {canary.platform_line()}.\n\n"
        "| package | newest on the index | [1/3] |\n|---|---|---|\n"
        "| verifiers | 0.4.0 | 0.4.0 |\n| peft | ? | – |\n| transformers | ? | – |\n| torch | ? | – |\n"
        "| openai | 3.63.0 | 2.54.0 |\n| httpx | ? | – |\n\n"
        "| stage | result | exit | wall | first failure |\n|---|---|---:|---:|---|\n"
        "| [1/3] verifiers 0.4.0 (newest the ranges allow) | 2045 passed | 0 | 2096 s | – |\n"
        "| [2/3] verifiers 0.3.1 | not run | – | – | – |\n"
        "| [3/3] adapters (torch CPU, transformers, peft) | install failed | – | 12 s | "
        "`uv pip install --quiet -p … (see the log)` |\n"
    )
    page = f"# C\n\n{canary.BEGIN}\n### 2026-11-30\n\nold\n{canary.END}\n"
    assert canary.add_record(page, "### 2026-12-07\n\nnew\n") == (
        f"# C\n\n{canary.BEGIN}\n### 2026-12-07\n\nnew\n\n### 2026-11-30\n\nold\n{canary.END}\n"
    )
    with pytest.raises(canary.CanaryError, match="has no <!-- canary-records -->"):
        canary.add_record("# C\n", "x")


def test_bad_stages_exit_2_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        canary.main(["--stages", "v05"])
    assert exit_info.value.code == 2
    assert "--stages 'v05': choose from v04, v03, adapters" in capsys.readouterr().err


def test_the_committed_page_holds_a_record_of_a_real_run() -> None:
    page = canary.PAGE.read_text(encoding="utf-8")
    records = page.split(canary.BEGIN, 1)[1].split(canary.END, 1)[0]
    assert "\n### 20" in "\n" + records
    assert "| stage | result | exit | wall | first failure |" in records
