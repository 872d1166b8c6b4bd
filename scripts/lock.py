"""The suite's locks: every install the test stages and the tests make outside ``uv.lock``, at exact versions.

``scripts/test.sh`` stage 1 installs ``uv.lock`` (``uv sync --locked``). Everything else the suite installs comes from
a file under ``locks/`` that this script writes with ``uv pip compile --universal --generate-hashes`` (exact versions
and their hashes, with markers, so the same file serves another OS or machine), and that is installed with no
resolution at run time (``uv pip sync``, or ``--no-deps``):

- ``v03.txt``: stage 2, verifiers 0.3.1 and the test tools (the package itself goes in editable, ``--no-deps``);
- ``adapters.txt``: stage 3, the ``adapters`` extra and the test tools, less torch and what only torch's CUDA build
  needs (``DROPPED``): torch is installed by pip at the version in the file's ``# torch==`` line, because pip honours a
  machine's local CPU wheel (find-links) where uv would fetch the multi-GB CUDA build, and torch pins its CUDA
  libraries exactly itself;
- ``clean-<verifiers>.txt``: the packaging test's clean venv (the package's declared dependencies, on each verifiers
  the suite runs);
- ``build.txt``: the build backend, for the wheel the packaging test builds and every editable install
  (``--build-constraint``);
- ``null-<verifiers>.txt``: the dependencies verifiers' ``null`` chat program declares (``NULL_PROGRAMS``), resolved;
  their pins (every package, markers kept) are also written into the package as
  ``drugprot/envs/null_pins.py`` (``NULL_PINS_MODULE``), which ``drugprot-null`` writes into the program's PEP 723
  header, so its uv script environment holds exactly these (``drugprot.envs.null_program``).

Each file's first line records the SHA-256 of its inputs (``inputs_digest``: the requirements below, the compile
options, and the package's declared dependencies in ``environments/drugprot/pyproject.toml``), so a lock that no
longer matches its inputs is found offline (``--check``, ``tests/test_locks.py``).

Usage (from the repository root; needs uv and PyPI)::

    python scripts/lock.py                              # regenerate every lock: today's newest releases
    python scripts/lock.py --as-of 2026-11-25T00:00:00Z  # ... the newest uploaded before that time
    python scripts/lock.py --check                      # exit 1 naming each lock whose inputs changed

The date a lock was resolved as of is recorded in its header (``# resolved as of``); it is a choice made when
locking, not an input (a lock is not stale because a newer release exists: the canary, ``scripts/canary.py``,
tries those).

Exit status: 0 done (or current), 1 stale (``--check``) or uv failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK_DIR = ROOT / "locks"
PACKAGE_PYPROJECT = ROOT / "environments" / "drugprot" / "pyproject.toml"
COMMAND = "python scripts/lock.py"
PYTHON = "3.11"
"""The lowest Python the package supports; ``--universal`` resolves for it and every later one."""
TORCH = "2.13.0"
"""The torch the adapters stage installs (pip, ``torch==TORCH``: a machine's local ``+cpu`` wheel matches it)."""
COMPILE_OPTIONS = ("--universal", "--generate-hashes", "--no-emit-package", "drugprot")
DIGEST_PREFIX = "# inputs-sha256: "
AS_OF_PREFIX = "# resolved as of: "
TORCH_PREFIX = "# torch=="
AS_OF = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
TEST_TOOLS = ("pytest>=8", "pytest-asyncio>=0.23")


@dataclass(frozen=True)
class Lock:
    name: str
    requirements: tuple[str, ...]
    """What the file locks: the package (``./environments/drugprot[extra]``) and what the stage adds."""
    purpose: str
    dropped: tuple[str, ...] = ()
    """Package-name patterns left out of the file (installed another way)."""
    python: str = PYTHON
    """The lowest Python the lock serves (``--universal`` resolves for it and every later one)."""

    @property
    def options(self) -> tuple[str, ...]:
        return (*COMPILE_OPTIONS, "--python-version", self.python)

    @property
    def path(self) -> Path:
        return LOCK_DIR / f"{self.name}.txt"


DROPPED = ("torch", "triton", "nvidia-*", "cuda-*")
NULL_PYTHON = {"0.4.0": "3.10", "0.3.1": "3.11"}
"""The ``requires-python`` floor of each ``null`` program's header: uv may build its environment on any of them."""
NULL_PROGRAMS: dict[str, tuple[str, ...]] = {
    "0.4.0": ("openai", "mcp==2.0.0", "httpx", "httpx2", "tenacity", "certifi"),
    "0.3.1": ("openai", "mcp>=1.24.0,<2", "httpx", "tenacity"),
}
"""The dependencies the ``null`` chat program declares, as its PEP 723 header lists them, per verifiers
(``verifiers.v1.harnesses.utils.launch.CHAT_PROGRAM`` on 0.4.0, ``verifiers/v1/harnesses/null/program.py`` on 0.3.1).
``tests/envs/test_null_program.py`` checks them against the installed verifiers."""
NULL_PINS_MODULE = ROOT / "environments" / "drugprot" / "drugprot" / "envs" / "null_pins.py"
LOCKS: tuple[Lock, ...] = (
    Lock("build", ("hatchling",), "the package's build backend (uv build / editable installs: --build-constraint)"),
    Lock(
        "v03",
        (
            "./environments/drugprot[report]",
            "verifiers==0.3.1",
            *TEST_TOOLS,
            "scikit-learn>=1.3",
            "hypothesis>=6.100",
            "renderers>=0.1.12",
            "scipy>=1.15",
        ),
        "scripts/test.sh stage 2 (verifiers 0.3.1)",
    ),  # fmt: skip
    Lock(
        "adapters",
        ("./environments/drugprot[adapters]", *TEST_TOOLS, "pip", f"torch=={TORCH}"),
        "scripts/test.sh stage 3 (adapters; torch itself is installed by pip, see the torch line)",
        dropped=DROPPED,
    ),
    Lock("clean-0.4.0", ("./environments/drugprot", "verifiers==0.4.0"), "the packaging test's clean venv"),
    Lock("clean-0.3.1", ("./environments/drugprot", "verifiers==0.3.1"), "the packaging test's clean venv"),
    *(
        Lock(
            f"null-{version}",
            requirements,
            f"the null chat program of verifiers {version} (drugprot-null)",
            python=NULL_PYTHON[version],
        )
        for version, requirements in NULL_PROGRAMS.items()
    ),
)


class LockError(Exception):
    """uv could not write a lock (its message says why)."""


def declared(pyproject: Mapping[str, object]) -> dict[str, object]:
    """The package metadata a lock depends on: its dependencies, extras and Python range."""
    project = pyproject["project"]
    assert isinstance(project, Mapping)
    return {key: project.get(key) for key in ("requires-python", "dependencies", "optional-dependencies")}


def inputs_digest(lock: Lock, pyproject: Mapping[str, object]) -> str:
    """SHA-256 of everything the lock's content follows from (not uv's version, nor the day)."""
    inputs = {
        "requirements": list(lock.requirements),
        "dropped": list(lock.dropped),
        "options": list(lock.options),
        "package": declared(pyproject),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def recorded_digest(text: str) -> str | None:
    """The inputs digest a lock file records in its first line, or None."""
    first = text.split("\n", 1)[0]
    return first[len(DIGEST_PREFIX) :].strip() if first.startswith(DIGEST_PREFIX) else None


def drop_packages(compiled: str, patterns: Sequence[str]) -> str:
    """``compiled`` (uv's requirements output) less the entries whose package name matches one of ``patterns``.

    An entry is a requirement line with its continuation lines (hashes) and ``# via`` comments."""
    kept: list[str] = []
    skipping = False
    for line in compiled.splitlines(keepends=True):
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
        if match:
            skipping = any(fnmatch.fnmatch(match.group(1).lower(), p) for p in patterns)
        elif not line.startswith((" ", "\t")):
            skipping = False
        if not skipping:
            kept.append(line)
    return "".join(kept)


def header(lock: Lock, digest: str, as_of: str | None) -> str:
    lines = [
        f"{DIGEST_PREFIX}{digest}",
        f"{AS_OF_PREFIX}{as_of or 'the day it was written'}",
        f"# {lock.purpose}. Regenerate every lock with: {COMMAND}",
    ]
    if lock.dropped:
        lines.append(f"{TORCH_PREFIX}{TORCH}  (not below: pip installs it, with these pins as constraints)")
    return "\n".join(lines) + "\n"


def compile_lock(lock: Lock, as_of: str | None = None, uv: str = "uv") -> str:
    """The lock file's text: uv's universal, hashed resolution of the inputs (the releases uploaded before
    ``as_of``, an RFC 3339 time; None: today's)."""
    command = [uv, "pip", "compile", "-", *lock.options, "--quiet", "--custom-compile-command", COMMAND]
    if as_of:
        command += ["--exclude-newer", as_of]
    proc = subprocess.run(command, input="\n".join(lock.requirements) + "\n", capture_output=True, text=True,
                          cwd=ROOT, timeout=1800)  # fmt: skip
    if proc.returncode != 0:
        raise LockError(f"{lock.name}: uv pip compile failed: {proc.stderr.strip()[-2000:]}")
    pyproject = tomllib.loads(PACKAGE_PYPROJECT.read_text(encoding="utf-8"))
    return header(lock, inputs_digest(lock, pyproject), as_of) + drop_packages(proc.stdout, lock.dropped)


def lock_pins(text: str) -> tuple[str, ...]:
    """A lock's requirements without their hashes: ``name==version`` with its marker (``; ...``), in the file's
    order."""
    found = []
    for line in text.splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            found.append(re.sub(r"\s*\\$", "", line).replace(" ; ", "; "))
    return tuple(found)


def null_pins_module(lock_texts: Mapping[str, str]) -> str:
    """The text of ``NULL_PINS_MODULE``: each ``null`` program's declared dependencies -> its locked pins."""
    lines = [
        '"""The exact dependencies of verifiers\' ``null`` chat program, per the dependency list its PEP 723 header',
        'declares. Generated by scripts/lock.py from locks/null-*.txt; do not edit."""',
        "",
        "# ruff: noqa: E501  (a pin's marker is as long as uv writes it)",
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        "NULL_PROGRAM_PINS: Final[dict[tuple[str, ...], tuple[str, ...]]] = {",
    ]
    for version, requirements in NULL_PROGRAMS.items():
        lines.append(f"    # verifiers {version}")
        lines.append(f"    ({', '.join(json.dumps(r) for r in requirements)}): (")
        lines.extend(f"        {json.dumps(pin)}," for pin in lock_pins(lock_texts[f"null-{version}"]))
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def null_pins_problem() -> str | None:
    """Why ``NULL_PINS_MODULE`` is not what the committed null locks give, or None."""
    try:
        texts = {f"null-{v}": (LOCK_DIR / f"null-{v}.txt").read_text(encoding="utf-8") for v in NULL_PROGRAMS}
    except FileNotFoundError as e:
        return f"{e.filename}: missing"
    shown = NULL_PINS_MODULE.read_text(encoding="utf-8") if NULL_PINS_MODULE.is_file() else None
    if shown != null_pins_module(texts):
        return f"{NULL_PINS_MODULE.relative_to(ROOT)}: not what locks/null-*.txt give"
    return None


def stale(locks: Sequence[Lock] | None = None) -> list[str]:
    """Why each lock (default: ``LOCKS``) is out of date with its inputs (missing, or written from other inputs);
    empty when none is."""
    pyproject = tomllib.loads(PACKAGE_PYPROJECT.read_text(encoding="utf-8"))
    problems = []
    for lock in LOCKS if locks is None else locks:
        if not lock.path.is_file():
            problems.append(f"{lock.path.relative_to(ROOT)}: missing")
        elif recorded_digest(lock.path.read_text(encoding="utf-8")) != inputs_digest(lock, pyproject):
            problems.append(f"{lock.path.relative_to(ROOT)}: written from other inputs than today's")
    if locks is None and (problem := null_pins_problem()) is not None:
        problems.append(problem)
    return problems


def write(locks: Sequence[Lock] = LOCKS, as_of: str | None = None) -> None:
    """Compile every lock first, then write them all (a failure leaves the committed files as they were)."""
    texts = {lock: compile_lock(lock, as_of) for lock in locks}
    outputs = {lock.path: text for lock, text in texts.items()}
    if all(f"null-{version}" in {lock.name for lock in texts} for version in NULL_PROGRAMS):
        outputs[NULL_PINS_MODULE] = null_pins_module({lock.name: text for lock, text in texts.items()})
    LOCK_DIR.mkdir(exist_ok=True)
    for path, text in outputs.items():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, checked (a malformed ``--as-of`` exits 2 with one line, before any work)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a lock is stale against its inputs")
    parser.add_argument("--as-of", metavar="TIME", help="resolve as of this RFC 3339 time (default: now)")
    args = parser.parse_args(argv)
    if args.as_of is not None and not AS_OF.fullmatch(args.as_of):
        parser.error(f"--as-of {args.as_of!r}: expected an RFC 3339 time, e.g. 2026-11-25T00:00:00Z")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.check:
        problems = stale()
        for problem in problems:
            print(f"{problem} (regenerate: {COMMAND})", file=sys.stderr)
        return 1 if problems else 0
    try:
        write(as_of=args.as_of)
    except (LockError, subprocess.TimeoutExpired) as e:
        print(f"lock: {e}", file=sys.stderr)
        return 1
    for path in [lock.path for lock in LOCKS] + [NULL_PINS_MODULE]:
        print(f"{path.relative_to(ROOT)}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
