"""The suite's locks (``scripts/lock.py``, ``locks/*.txt``): current with their inputs, exact, hashed, universal.

Every install the test stages and the tests make outside ``uv.lock`` comes from one of these files with no resolution
at run time, so each must pin every package it installs, with its hashes, and must have been written from the inputs
as they are now (``pyproject.toml``'s declared dependencies, the stage's requirements, the compile options).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib

import pytest

from .scripts import load_script

lock = load_script("lock")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ ;\\]+)")


def pins(text: str) -> dict[str, list[str]]:
    """Package name -> the versions a lock pins it to (one per marker branch)."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = PIN.match(line)
        if match:
            found.setdefault(match.group(1).lower(), []).append(match.group(2))
    return found


def test_every_lock_is_current_with_its_inputs() -> None:
    """Fails when pyproject.toml's dependencies or a stage's requirements changed since the locks were written."""
    assert lock.stale() == []


def test_a_changed_input_makes_its_lock_stale() -> None:
    v03 = next(entry for entry in lock.LOCKS if entry.name == "v03")
    changed = dataclasses.replace(v03, requirements=(*v03.requirements, "rich>=13"))
    assert lock.stale((v03,)) == []
    assert lock.stale((changed,)) == ["locks/v03.txt: written from other inputs than today's"]
    pyproject = tomllib.loads(lock.PACKAGE_PYPROJECT.read_text(encoding="utf-8"))
    bumped = {**pyproject, "project": {**pyproject["project"], "dependencies": ["verifiers>=0.4.0,<0.5"]}}
    assert lock.inputs_digest(v03, bumped) != lock.inputs_digest(v03, pyproject)
    # the version, description, tags of the package are no input of a lock
    retagged = {**pyproject, "project": {**pyproject["project"], "version": "9.9.9", "tags": []}}
    assert lock.inputs_digest(v03, retagged) == lock.inputs_digest(v03, pyproject)
    missing = dataclasses.replace(v03, name="no-such-lock")
    assert lock.stale((missing,)) == ["locks/no-such-lock.txt: missing"]


@pytest.mark.parametrize("entry", lock.LOCKS, ids=lambda entry: entry.name)
def test_each_lock_pins_every_package_with_hashes(entry: object) -> None:
    text = entry.path.read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert text.startswith(lock.DIGEST_PREFIX)
    assert re.search(r"^# resolved as of: \S+", text, re.M)
    requirements = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert requirements, "an empty lock"
    assert [line for line in requirements if not PIN.match(line)] == []  # no range, no URL, no -e
    assert [line for line in requirements if not line.endswith("\\")] == []  # each followed by its hashes
    assert text.count("--hash=sha256:") >= len(requirements)
    assert "drugprot" not in pins(text)  # the package itself is installed editable, --no-deps


def test_the_stage_locks_hold_what_each_stage_tests() -> None:
    v03 = pins(lock.LOCKS[1].path.read_text(encoding="utf-8"))
    adapters_text = next(e for e in lock.LOCKS if e.name == "adapters").path.read_text(encoding="utf-8")
    adapters = pins(adapters_text)
    assert v03["verifiers"] == ["0.3.1"]
    assert {"pytest", "pytest-asyncio", "matplotlib", "scikit-learn", "hypothesis", "scipy"} <= set(v03)
    assert {"peft", "transformers", "safetensors", "pip", "pytest"} <= set(adapters)
    # torch and what only its CUDA build needs are pip's to install (test.sh), at the version the header names
    assert [name for name in adapters if name == "torch" or name.startswith(("nvidia-", "triton", "cuda-"))] == []
    assert f"\n# torch=={lock.TORCH}  " in adapters_text
    for version in ("0.4.0", "0.3.1"):
        clean = next(e for e in lock.LOCKS if e.name == f"clean-{version}").path.read_text(encoding="utf-8")
        assert pins(clean)["verifiers"] == [version]
        assert "pytest" not in pins(clean)  # the clean venv gets only the package's declared dependencies
    assert list(pins(lock.LOCKS[0].path.read_text(encoding="utf-8")))[:1] == ["hatchling"]


def test_drop_packages_removes_whole_entries() -> None:
    compiled = (
        "# header\n"
        "filelock==3.20.0 \\\n    --hash=sha256:aa\n    # via torch\n"
        "nvidia-cublas==13.1 ; sys_platform == 'linux' \\\n    --hash=sha256:bb\n    # via torch\n"
        "torch==2.13.0 \\\n    --hash=sha256:cc\n"
        "    # via peft\n"
        "triton==3.6.0 ; sys_platform == 'linux' \\\n    --hash=sha256:dd\n"
        "tqdm==4.67.1 \\\n    --hash=sha256:ee\n"
    )
    assert lock.drop_packages(compiled, lock.DROPPED) == (
        "# header\nfilelock==3.20.0 \\\n    --hash=sha256:aa\n    # via torch\ntqdm==4.67.1 \\\n    --hash=sha256:ee\n"
    )


def test_recorded_digest_reads_the_first_line_only() -> None:
    assert lock.recorded_digest("# inputs-sha256: abc\nx==1\n") == "abc"
    assert lock.recorded_digest("x==1\n# inputs-sha256: abc\n") is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--as-of", "2026-11-25"], "--as-of '2026-11-25': expected an RFC 3339 time, e.g. 2026-11-25T00:00:00Z"),
        (["--as-of", "P7D"], "--as-of 'P7D': expected an RFC 3339 time"),
    ],
)
def test_a_malformed_as_of_is_refused_before_any_work(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        lock.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_check_exits_1_naming_a_stale_lock(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert lock.main(["--check"]) == 0
    v03 = next(entry for entry in lock.LOCKS if entry.name == "v03")
    monkeypatch.setattr(lock, "LOCKS", (dataclasses.replace(v03, requirements=("verifiers==0.3.0",)),))
    assert lock.main(["--check"]) == 1
    assert capsys.readouterr().err == (
        "locks/v03.txt: written from other inputs than today's (regenerate: python scripts/lock.py)\n"
    )


def test_the_lock_commands_shown_parse() -> None:
    """Each ``python scripts/lock.py ...`` the docs show is a valid command line (tests/test_docs.py finds them)."""
    from .test_docs import SHOWN

    shown = [s for s in SHOWN if s.command.startswith("python scripts/lock.py")]
    assert len(shown) >= 2
    for command in shown:
        args = lock.parse_args(command.argv()[2:])
        assert args.check is False
