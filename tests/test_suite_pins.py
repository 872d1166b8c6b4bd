"""What the suite installs outside uv.lock is resolved as of one date, so it tests the project, not the day's PyPI.

scripts/test.sh's stages 2 and 3 install with open ranges (``uv pip install``, and ``pip install`` for torch), and
verifiers' ``null`` harness resolves its chat program's unpinned dependencies at run time: on 2026-12-06 an empty uv
cache resolved httpx 0.29 there, which broke every ``null`` rollout. Each of these resolves as of
``drugprot.envs.harness.NULL_HARNESS_EXCLUDE_NEWER`` (the ``null`` pin itself: tests/envs/test_harness.py and the
end-to-end runs in tests/envs/test_e2e_v1.py; the packaging test's clean venv: tests/test_packaging.py).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from drugprot.envs.harness import NULL_HARNESS_EXCLUDE_NEWER

ROOT = Path(__file__).resolve().parents[1]
TEST_SH = ROOT / "scripts" / "test.sh"


def logical_lines(text: str) -> list[str]:
    """The script's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_test_script_reads_the_packages_date() -> None:
    (line,) = [line for line in logical_lines(TEST_SH.read_text()) if line.startswith("cutoff=")]
    shown = subprocess.run(["bash", "-c", f'{line}; printf %s "$cutoff"'], cwd=ROOT, capture_output=True, text=True)
    assert (shown.returncode, shown.stdout) == (0, NULL_HARNESS_EXCLUDE_NEWER)


def test_every_install_of_the_test_script_is_dated() -> None:
    lines = logical_lines(TEST_SH.read_text())
    installs = [line for line in lines if re.search(r"\bpip\b.* install|uv venv", line)]
    assert len(installs) == 4  # the v03 stage's uv pip install, the adapters stage's pip (torch) and uv pip, uv venv
    dated = ('--exclude-newer "$cutoff"', '--uploaded-prior-to "$cutoff"', "UV_EXCLUDE_NEWER=$cutoff uv venv")
    assert [line for line in installs if not any(d in line for d in dated)] == []
    # the workspace stage installs exactly uv.lock
    assert "uv sync --locked --group dev --quiet || return" in lines
