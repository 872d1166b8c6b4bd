"""Every install of the suite comes from a committed lock, with no resolution at run time, so it tests the project,
not the day's PyPI.

scripts/test.sh's stage 1 installs ``uv.lock``; stages 2 and 3 install ``locks/v03.txt`` and ``locks/adapters.txt``
(``uv pip sync --require-hashes``), then the package editable with ``--no-deps``. A date cutoff is no lock: when the
suite's moved past peft 0.22's release, stage 3 failed on a release nobody had chosen (issue 48). The locks themselves:
tests/test_locks.py; the packaging test's clean venv: tests/test_packaging.py; the ``null`` harness's chat program:
tests/envs/test_harness.py.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .test_locks import PIN, pins

ROOT = Path(__file__).resolve().parents[1]
TEST_SH = ROOT / "scripts" / "test.sh"


def logical_lines(text: str) -> list[str]:
    """The script's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_every_install_of_the_test_script_is_a_lock() -> None:
    lines = logical_lines(TEST_SH.read_text())
    installs = [line for line in lines if re.search(r"\bpip\b.* (install|sync)|uv venv|uv sync", line)]
    assert len(installs) == 4  # synced (uv venv + uv pip sync), editable, uv sync --locked, pip (torch)
    synced, editable, workspace, torch = installs
    assert synced == 'rm -rf "$1" && uv venv --quiet "$1" && uv pip sync --quiet --require-hashes -p "$1" "$2"'
    assert editable == (
        'uv pip install --quiet -p "$1" --no-deps --build-constraint locks/build.txt -e environments/drugprot'
    )
    assert workspace == "uv sync --locked --group dev --quiet || return"
    assert torch == (
        ".venv-adapters/bin/python -m pip install --quiet --disable-pip-version-check -c <(pins locks/adapters.txt) "
        '"torch==$torch" || return'
    )
    assert "synced .venv-v03 locks/v03.txt || return" in lines
    assert "synced .venv-adapters locks/adapters.txt || return" in lines
    # no date cutoff anywhere: a date is not a lock
    assert not re.search(r"exclude-newer|EXCLUDE_NEWER|uploaded-prior-to|cutoff", TEST_SH.read_text())


def test_torch_gets_the_adapters_locks_pins_as_constraints() -> None:
    """``pins`` turns the lock into what pip takes with ``-c`` (no hashes: pip refuses hashed constraints for an
    unhashed requirement), and the torch version is the lock's."""
    script = TEST_SH.read_text()
    helpers = "\n".join(line for line in script.splitlines() if line.startswith("pins()"))
    lock = ROOT / "locks" / "adapters.txt"
    shown = subprocess.run(["bash", "-c", f"{helpers}\npins locks/adapters.txt"], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    constraints = shown.stdout.splitlines()
    assert [line for line in constraints if not PIN.match(line) or "--hash" in line or line.endswith("\\")] == []
    assert pins("\n".join(constraints)) == pins(lock.read_text(encoding="utf-8"))
    (torch_line,) = [line for line in logical_lines(script) if line.startswith("torch=$(")]
    version = subprocess.run(["bash", "-c", f'{torch_line}; printf %s "$torch"'], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    assert (version.returncode, version.stdout) == (0, "2.13.0")
