"""``scripts/suite_figures.py``: the suite figures of README.md and docs/testing.md are generated; the counts of
collected tests are checked.

The slow test recounts the tests of the fast loop, of the 0.4.0 stage and of the adapters stage with this interpreter
(``pytest --collect-only``) and fails when the docs' table differs: a test added or removed without
``scripts/suite_figures.py --write`` is drift. The others pin parsing and rendering.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]

figures = load_script("suite_figures")


def test_the_collected_line_is_read_with_and_without_deselection() -> None:
    assert figures.parse_collected("a\n\n1959/1989 tests collected (30 deselected) in 30.52s\n") == (1959, 1989)
    assert figures.parse_collected("171 tests collected in 1.98s") == (171, 171)
    assert figures.parse_collected("1 test collected in 0.1s") == (1, 1)
    with pytest.raises(ValueError, match="no 'tests collected' line"):
        figures.parse_collected("ERROR tests/x.py\n1 error in 0.2s")


def test_outcomes_are_read_from_a_summary_line() -> None:
    line = "1625 passed, 260 skipped, 30 deselected, 1 error, 2 warnings in 412.34s (0:06:52)"
    assert figures.parse_outcomes(line) == {"passed": 1625, "skipped": 260, "deselected": 30, "errors": 1}


def test_the_suite_s_output_gives_each_stage_its_outcomes_and_seconds() -> None:
    output = "\n".join(
        [
            "== [1/3] verifiers 0.4.0 (uv.lock) ==",
            "..s.",
            "1900 passed, 89 skipped in 500.1s (0:08:20)",
            "== [2/3] verifiers 0.3.1 ==",
            "1950 passed, 39 skipped in 510.0s",
            "== [3/3] adapters (torch CPU, transformers, peft) ==",
            "171 passed in 220.0s",
            "== summary (seconds: wall, user CPU, system CPU) ==",
            "[1/3] verifiers 0.4.0 (uv.lock)                  exit 0     509.20 wall   420.10 user    15.00 sys",
            "[2/3] verifiers 0.3.1                            exit 0     519.00 wall   430.00 user    12.00 sys",
            "[3/3] adapters (torch CPU, transformers, peft)   exit 0     223.00 wall    95.00 user     6.00 sys",
        ]
    )
    assert figures.parse_suite(output) == {
        "v04": {"passed": 1900, "skipped": 89, "exit": 0, "wall_s": 509.2, "cpu_s": 435.1},
        "v03": {"passed": 1950, "skipped": 39, "exit": 0, "wall_s": 519.0, "cpu_s": 442.0},
        "adapters": {"passed": 171, "exit": 0, "wall_s": 223.0, "cpu_s": 101.0},
    }
    with pytest.raises(ValueError, match="no summary for stage"):
        figures.parse_suite(output.split("== summary")[0])


RECORDS = [
    {
        "scope": "suite",
        "date": "2026-12-03",
        "command": "scripts/test.sh",
        "machine": "2-core",
        "collected": None,
        "stages": {"v04": {"passed": 1523, "wall_s": 509, "cpu_s": 435}},
        "wall_s": 519,
        "cpu_s": 978,
    },
    {
        "scope": "fast",
        "date": "2026-12-05",
        "command": "pytest -m 'not slow'",
        "machine": "2-core, load 3",
        "collected": {"fast": 1959},
        "stages": {"fast": {"passed": 1700, "skipped": 259, "wall_s": 400.4, "cpu_s": 150.2}},
        "wall_s": 400.4,
        "cpu_s": 150.2,
    },
]
COUNTS = {"fast": 1959, "v04": 1989, "v03": 1989, "adapters": 171}


def test_the_table_shows_counts_now_and_each_stage_s_latest_measurement() -> None:
    lines = figures.render_tests(COUNTS, RECORDS).splitlines()
    assert lines[2:6] == [
        f"| fast loop: `{figures.FAST_COMMAND}` | 1,959 | 1,700 / 259 | 150 | 6 min 40 s | 2026-12-05 |",
        "| `scripts/test.sh` stage [1/3] verifiers 0.4.0 (uv.lock) | 1,989 | 1,523 / ? | 435 | 8 min 29 s | "
        "2026-12-03 (an older test set) |",
        "| `scripts/test.sh` stage [2/3] verifiers 0.3.1 | 1,989 | ? | ? | ? | never |",
        "| `scripts/test.sh` stage [3/3] adapters (torch CPU, transformers, peft) | 171 | ? | ? | ? | never |",
    ]
    assert lines[-2:] == [
        "- 2026-12-03, whole suite (stages side by side), `scripts/test.sh`: 978 CPU-s, 8 min 39 s wall; 2-core.",
        "- 2026-12-05, fast loop, `pytest -m 'not slow'`: 150 CPU-s, 6 min 40 s wall; 2-core, load 3.",
    ]
    # a test added since the measurement: the fast loop's row says its figures are of an older test set
    assert (
        figures.render_tests({**COUNTS, "fast": 1960}, RECORDS)
        .splitlines()[2]
        .endswith("| 2026-12-05 (an older test set) |")
    )


def test_the_summary_states_the_measured_range() -> None:
    assert figures.render_summary(COUNTS, RECORDS) == (
        "The whole suite (`scripts/test.sh`: 1,989 + 1,989 + 171 tests on its three stages) has taken **978 CPU-s** "
        "(8 min 39 s\nwall, by machine and load). While working, run the fast loop first (1,959 tests; 150 CPU-s on "
        "2026-12-05;\n[Tests](docs/testing.md#tests) has each measurement).\n"
    )
    slower = {**RECORDS[0], "wall_s": 1560, "cpu_s": 855}
    assert "has taken **855–978 CPU-s** (8 min 39\ns to 26 min wall, by machine and load)" in figures.render_summary(
        COUNTS, [*RECORDS, slower]
    )


def test_splice_needs_both_markers() -> None:
    text = "a\n<!-- suite-figures: tests -->\nold\n<!-- /suite-figures -->\nb\n"
    assert figures.splice(text, "tests", "new\n") == text.replace("old", "new")
    with pytest.raises(ValueError, match="no '<!-- suite-figures: summary -->' marker"):
        figures.splice(text, "summary", "")
    with pytest.raises(ValueError, match="no <!-- /suite-figures --> after its marker"):
        figures.splice("<!-- suite-figures: tests -->\nx\n", "tests", "")


def readme_count(row_start: str) -> int:
    """The "tests collected now" cell of docs/testing.md's table row that starts with ``row_start``."""
    text = figures.TESTING.read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith(row_start)]
    return int(row.split(" | ")[1].replace(",", ""))


def test_the_readme_blocks_render_the_recorded_measurements() -> None:
    """The README's blocks are what the script renders from scripts/suite_figures.json and the README's own counts:
    a measurement recorded (or edited) without re-rendering fails here."""
    counts = {
        "fast": readme_count("| fast loop: "),
        **{stage.name: readme_count(f"| `scripts/test.sh` stage {stage.title} ") for stage in figures.STAGES},
    }
    for path in (figures.README, figures.TESTING):
        text = path.read_text(encoding="utf-8")
        assert figures.render_file(path, text, counts, figures.load_records()) == text, path.name


def test_each_block_is_in_its_file() -> None:
    """The summary sentence is README.md's, the table docs/testing.md's: each once, in its file only."""
    assert figures.BLOCK_FILES == {"summary": ROOT / "README.md", "tests": ROOT / "docs" / "testing.md"}
    for name, path in figures.BLOCK_FILES.items():
        for other in set(figures.BLOCK_FILES.values()):
            count = other.read_text(encoding="utf-8").count(f"<!-- suite-figures: {name} -->")
            assert count == (1 if other == path else 0), (name, other.name)


def test_the_fast_loop_shown_is_the_one_measured() -> None:
    """Every fast-loop command README.md and docs/testing.md show (``uv run pytest -m "not slow" ...``) runs pytest
    with exactly the arguments the figures' fast loop was counted and measured with (``FAST_ARGS``, less ``-q``)."""
    shown = [
        shlex.split(command)[3:]
        for path in (figures.README, figures.TESTING)
        for command in re.findall(r'uv run pytest -m "not slow"[^`\n]*', path.read_text(encoding="utf-8"))
    ]
    assert len(shown) >= 2 and all(args == list(figures.FAST_ARGS[1:]) for args in shown), shown


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("verifiers.legacy") is not None,
    reason="the README counts the tests with the 0.4.0 stage's interpreter; the 0.4.0 stage checks them",
)
def test_the_readme_counts_the_tests_collected_now() -> None:
    """Fails when tests were added or removed without `.venv/bin/python scripts/suite_figures.py --write`."""
    fast, v04 = figures.collect(sys.executable, figures.FAST_ARGS[1:])
    _, adapters = figures.collect(sys.executable, ["tests/tools/adapters"])
    assert {
        "fast": readme_count("| fast loop: "),
        "v04": readme_count("| `scripts/test.sh` stage [1/3]"),
        "adapters": readme_count("| `scripts/test.sh` stage [3/3]"),
    } == {"fast": fast, "v04": v04, "adapters": adapters}
    summary = re.search(
        r"`scripts/test\.sh`: ([\d,]+) \+ ([\d,]+) \+ ([\d,]+) tests", ROOT.joinpath("README.md").read_text()
    )
    assert summary is not None and summary.group(1).replace(",", "") == str(v04)
