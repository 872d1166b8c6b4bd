"""verifiers' own model-free checker on drugprot: the command the docs show, run for real on the fixture.

``vf-validate`` (verifiers 0.4.x; the v1 ``validate`` on 0.3.x) builds the taskset alone, with no env and no agent,
so the seat ``DrugprotEnv`` pins (harness ``drugprot`` in a ``subprocess`` runtime) does not apply: the checks run
in ``--runtime.type``, whose default is a Prime sandbox that first asks for a Prime login. With
``--runtime.type subprocess`` they run locally. The checks per task: on 0.4.x *gold* (``Task.validate``: a perfect
reply scores full marks) and *noop* (scoring the untouched task must not already pass); on 0.3.x gold and *setup*.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURE_JSONL
from tests.e2e import verifiers_version
from tests.envs.test_legacy import FIXTURE_ANSWERS

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "docs" / "index.md", ROOT / "docs" / "evaluation" / "running.md")
"""Where the docs show the checker's command: Getting started (0.4.x) and Running evaluations (both stacks)."""

DOCUMENTED = {
    "vf-validate": "vf-validate drugprot --runtime.type subprocess --taskset.data-path FILE",
    "validate": "validate drugprot --runtime.type subprocess --taskset.data-path FILE",
}
"""The checker's command as the docs give it, per script name (``validate`` is 0.3.x's v1 CLI)."""

NO_LOGIN = "not authenticated with prime - run `prime login` or set $PRIME_API_KEY"

FIXTURE_KEYS = sorted(key for key, _ in FIXTURE_ANSWERS)  # the fixture's 27 train-split pair tasks


def _counts(valid: int, *, unchecked: bool) -> dict[str, int]:
    counts = {"valid": valid, "invalid": 0, "error": 0, "timeout": 0, "missing": 0}
    return counts | {"unchecked": 0} if unchecked else counts


def expected_summary(n: int) -> dict[str, Any]:
    """``summary.json`` of an all-valid run over ``n`` tasks, in the installed verifiers' format."""
    v04 = verifiers_version() >= (0, 4)
    second = "noop" if v04 else "setup"
    return {
        "checks": {"gold": _counts(n, unchecked=v04), second: _counts(n, unchecked=v04)},
        "mode": "all",
        "outcomes": _counts(n, unchecked=v04),
        "owed": 0,
        "recorded": n,
        "terminal": n,
        "total": n,
        "valid_rate": 1.0,
    }


def validate_script() -> Path:
    for name in DOCUMENTED:  # vf-validate first: 0.3.x has only `validate`, 0.4.x only `vf-validate`
        script = Path(sys.executable).with_name(name)
        if script.exists():
            return script
    pytest.skip(f"this verifiers ({'.'.join(map(str, verifiers_version()))}) installs no vf-validate or validate")


def run_validate(argv: list[str], home: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """The checker with no Prime credentials anywhere: no ``$PRIME_API_KEY``, a ``$HOME`` without ``~/.prime``."""
    env = {k: v for k, v in os.environ.items() if k != "PRIME_API_KEY"} | {"HOME": str(home)}
    argv = [*argv, "--taskset.split", "train", "-o", str(out), "--rich", "false"]
    return subprocess.run(argv, capture_output=True, text=True, cwd=home, env=env, timeout=600)


def documented_argv(script: Path, data_path: Path) -> list[str]:
    _, *args = shlex.split(DOCUMENTED[script.name])
    return [str(script), *(str(data_path) if a == "FILE" else a for a in args)]


def test_the_docs_show_the_command_for_both_stacks() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    for command in DOCUMENTED.values():  # as a command of its own: `validate …` not only inside `vf-validate …`
        assert re.search(r"(?<![\w-])" + re.escape(command), text), command


def test_validate_passes_on_the_fixture_without_a_prime_login(tmp_path: Path) -> None:
    """The documented command on the fixture: gold and noop (0.3.x: setup) checks valid for 27/27 tasks."""
    script = validate_script()
    proc = run_validate(documented_argv(script, FIXTURE_JSONL), tmp_path, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = (tmp_path / "out").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary == expected_summary(len(FIXTURE_KEYS))
    assert proc.stdout.startswith(f"results: {tmp_path / 'out' / run_dir.name}\n")
    assert json.loads(proc.stdout.split("\n", 1)[1]) == summary  # what it prints is the summary it wrote

    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(row["name"] for row in rows) == FIXTURE_KEYS  # one row per task, named by the task key
    assert {(row["valid"], row["reason"], row["gold"]["reason"]) for row in rows} == {(True, "valid", "valid")}
    if verifiers_version() >= (0, 4):  # the untouched task: no reply, so no accuracy and no format reward, and
        # under the default utility reward every gold type a false negative (-1 each; the fixture's pairs have 1 or 2)
        assert {json.dumps(row["noop"]["rewards"], sort_keys=True) for row in rows} == {
            '{"accuracy": 0.0, "format": 0.0, "utility": -1.0}',
            '{"accuracy": 0.0, "format": 0.0, "utility": -2.0}',
        }
        assert {row["noop"]["reward"] for row in rows} == {-1.0, -2.0}


def test_without_the_subprocess_runtime_it_asks_for_a_prime_login(tmp_path: Path) -> None:
    """Why the documented command carries ``--runtime.type subprocess``: the default runtime is a Prime sandbox."""
    script = validate_script()
    argv = [a for a in documented_argv(script, FIXTURE_JSONL) if a not in ("--runtime.type", "subprocess")]
    proc = run_validate([*argv, "-n", "1"], tmp_path, tmp_path / "out")  # one task is enough to fail
    assert proc.returncode == 1
    assert proc.stderr.rstrip().splitlines()[-1] == NO_LOGIN
