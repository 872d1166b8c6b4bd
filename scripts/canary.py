"""The canary: the suite on today's newest releases, outside the gate, written down as a dated compatibility record.

``scripts/test.sh`` (and CI, ``.ci/run``) installs only committed locks, so a new release cannot fail it. This command
is the other half: it installs the same inputs as the locks (``scripts/lock.py``'s ``LOCKS``, and the workspace's
dev group for the 0.4.0 stage) resolved today, so verifiers, peft, transformers, openai and httpx come at their newest
releases that the package's ranges allow, and torch as the machine's newest CPU wheel (pip's find-links) where it has
one, else PyPI's. Then it runs each stage's tests as ``scripts/test.sh`` does and adds a record to
``docs/compatibility.md`` (``PAGE``): the date, each package's installed and newest version, and per stage the
result and the first failure. Users read there whether today's releases break something before their own run does.

Usage (from the repository root; needs uv, pip and PyPI; CPU-heavy: the whole suite, three times)::

    python scripts/canary.py                          # every stage, record added to docs/compatibility.md
    python scripts/canary.py --stages adapters        # only these stages (the record says which ran)
    python scripts/canary.py -- -m "not slow"         # pytest arguments after --, for every stage

Venvs, logs and pytest caches go to a new temporary directory, removed at the end (``--keep`` keeps it). A stage
that fails to install is recorded as such. Exit status: 0 every stage that ran passed, 1 one failed (the record is
written either way), 2 bad usage; on SIGINT the stage's process group is stopped and no record is written.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import lock

from drugprot.tools.demo.eval_cli import stop_process_group

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "compatibility.md"
BEGIN, END = "<!-- canary-records -->", "<!-- /canary-records -->"
WATCHED = ("verifiers", "peft", "transformers", "torch", "openai", "httpx")
"""The packages whose newest releases the canary exists to try (each stage's installed version is recorded)."""
STAGES = ("v04", "v03", "adapters")
TITLES = {
    "v04": "[1/3] verifiers 0.4.0 (newest the ranges allow)",
    "v03": "[2/3] verifiers 0.3.1",
    "adapters": "[3/3] adapters (torch CPU, transformers, peft)",
}
STOP_GRACE_SECONDS = 30.0
"""How long an interrupted stage's process group gets after SIGTERM before it is killed."""
PYTEST_ARGS = {
    "v04": ("--ignore=tests/tools/adapters",),
    "v03": ("--ignore=tests/tools/adapters",),
    "adapters": ("tests/tools/adapters",),
}


class CanaryError(Exception):
    """A stage could not be set up (its message says which command failed)."""


@dataclass
class StageResult:
    name: str
    installed: dict[str, str] = field(default_factory=dict)
    outcome: str = "not run"
    """pytest's summary (``3 failed, 183 passed, 1 skipped``), ``install failed``, or ``not run``."""
    exit_code: int | None = None
    wall_s: float | None = None
    first_failure: str | None = None

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


def stage_requirements(name: str) -> tuple[str, ...]:
    """What a stage installs with uv: the lock's inputs (``scripts/lock.py``), the 0.4.0 stage's from the workspace."""
    if name == "v04":
        dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]["dev"]
        return ("-e", "./environments/drugprot[report]", *dev)
    entry = next(entry for entry in lock.LOCKS if entry.name == name)
    requirements = [r for r in entry.requirements if not r.startswith("torch==")]
    package = requirements.pop(0)
    return ("-e", package, *requirements)


def local_torch_wheel(find_links: Sequence[str]) -> Path | None:
    """The newest torch CPU wheel (``+cpu``) for this Python in the given find-links directories, or None."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    wheels = [p for d in find_links if Path(d).is_dir() for p in Path(d).glob(f"torch-*+cpu-{tag}-*.whl")]

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", path.name.split("-")[1].split("+")[0]))

    return max(wheels, key=version, default=None)


def pip_find_links() -> list[str]:
    """pip's find-links (``PIP_FIND_LINKS``, else its configuration), which is where a machine keeps a CPU torch."""
    value = os.environ.get("PIP_FIND_LINKS")
    if value is None:
        shown = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True,
                               text=True, timeout=120)  # fmt: skip
        value = shown.stdout if shown.returncode == 0 else ""
    return [part.removeprefix("file://") for part in value.split()]


def pytest_outcome(log: str) -> tuple[str, str | None]:
    """pytest's last summary (``3 failed, 183 passed in 965.2s`` -> ``3 failed, 183 passed``) and the first
    ``FAILED``/``ERROR`` line of its short summary (``-ra``), or ``no summary`` when it printed none."""
    summaries = re.findall(r"^=+ (.*?) in [\d.]+s(?: \([\d:]+\))? =+$", log, flags=re.M)
    failures = re.findall(r"^(?:FAILED|ERROR) (\S+.*)$", log, flags=re.M)
    return (summaries[-1] if summaries else "no summary"), (failures[0] if failures else None)


def render_record(day: datetime.date, results: Sequence[StageResult], newest: dict[str, str], command: str) -> str:
    """One dated record: the versions (installed per stage, and the newest on the index), then each stage."""
    ran = [r for r in results if r.installed]
    lines = [f"### {day.isoformat()}", "", f"`{command}` on {platform_line()}.", ""]
    lines.append("| package | newest on the index | " + " | ".join(TITLES[r.name].split(" ", 1)[0] for r in ran) + " |")
    lines.append("|---|---|" + "---|" * len(ran))
    for package in WATCHED:
        cells = [r.installed.get(package, "–") for r in ran]
        lines.append(f"| {package} | {newest.get(package, '?')} | " + " | ".join(cells) + " |")
    lines += ["", "| stage | result | exit | wall | first failure |", "|---|---|---:|---:|---|"]
    for r in results:
        wall = f"{r.wall_s:.0f} s" if r.wall_s is not None else "–"
        exit_code = "–" if r.exit_code is None else str(r.exit_code)
        failure = f"`{r.first_failure}`" if r.first_failure else "–"
        lines.append(f"| {TITLES[r.name]} | {r.outcome} | {exit_code} | {wall} | {failure} |")
    return "\n".join(lines) + "\n"


def platform_line() -> str:
    return f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {sys.platform}"


def add_record(page: str, record: str) -> str:
    """``page`` with ``record`` first among its records (newest first)."""
    if BEGIN not in page or END not in page:
        raise CanaryError(f"{PAGE.name} has no {BEGIN} ... {END} block")
    head, rest = page.split(BEGIN, 1)
    return f"{head}{BEGIN}\n{record}\n{rest.lstrip(chr(10))}"


def run_logged(argv: Sequence[str], log: Path, env: dict[str, str] | None = None) -> int:
    """Run ``argv`` from the repository root in its own process group, output appended to ``log``; on SIGINT the
    group is stopped before the interrupt goes on."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            return proc.wait()
        except BaseException:
            stop_process_group(proc, grace=STOP_GRACE_SECONDS)
            raise


def installed_versions(python: Path) -> dict[str, str]:
    code = (
        "import importlib.metadata as m\n"
        f"for p in {WATCHED!r}:\n"
        "    try: print(p, m.version(p))\n"
        "    except m.PackageNotFoundError: pass\n"
    )
    shown = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, timeout=300)
    return dict(line.split(" ", 1) for line in shown.stdout.splitlines())


def newest_versions() -> dict[str, str]:
    """Each watched package's newest release on the index (``uv pip compile --no-deps`` of its bare name)."""
    found = {}
    for package in WATCHED:
        proc = subprocess.run(["uv", "pip", "compile", "-", "--no-deps", "--quiet", "--no-header"], input=package,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        match = re.search(rf"^{package}==(\S+)", proc.stdout, flags=re.M)
        found[package] = match.group(1) if match else "?"
    return found


def run_stage(name: str, work: Path, pytest_args: Sequence[str], torch_wheel: Path | None) -> StageResult:
    result = StageResult(name)
    venv, log = work / name, work / f"{name}.log"
    python = venv / "bin" / "python"
    started = time.monotonic()
    steps: list[list[str]] = [["uv", "venv", "--quiet", "--python", lock.PYTHON, *(["--seed"] if name == "adapters"
                                                                                     else []), str(venv)]]  # fmt: skip
    if name == "adapters":
        torch = [str(torch_wheel)] if torch_wheel else ["torch"]
        steps.append([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *torch])
    steps.append(["uv", "pip", "install", "--quiet", "-p", str(python), *stage_requirements(name)])
    for step in steps:
        if run_logged(step, log) != 0:
            result.outcome, result.wall_s = "install failed", time.monotonic() - started
            result.first_failure = f"{' '.join(step[:4])} … (see the log)"
            return result
    result.installed = installed_versions(python)
    argv = [str(python), "-m", "pytest", *PYTEST_ARGS[name], "-o", f"cache_dir={work / ('cache-' + name)}",
            *pytest_args]  # fmt: skip
    env = {**os.environ, "TMPDIR": str(work)}
    result.exit_code = run_logged(["nice", "-n", "10", *argv], log, env=env)
    result.wall_s = time.monotonic() - started
    result.outcome, result.first_failure = pytest_outcome(log.read_text(encoding="utf-8", errors="replace"))
    return result


def main(argv: Sequence[str] | None = None, today: Callable[[], datetime.date] = datetime.date.today) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (venvs, logs) and print it")
    parser.add_argument("pytest_args", nargs="*", help="arguments for every pytest run (after --)")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in STAGES]
    if unknown or not chosen:
        parser.error(f"--stages {args.stages!r}: choose from {', '.join(STAGES)}")
    if shutil.which("uv") is None:
        parser.error("uv is not on PATH (https://docs.astral.sh/uv/)")
    page = PAGE.read_text(encoding="utf-8")
    add_record(page, "")  # the page can take a record: checked before any work
    work = Path(tempfile.mkdtemp(prefix="drugprot-canary-"))
    try:
        torch_wheel = local_torch_wheel(pip_find_links())
        results = [run_stage(s, work, args.pytest_args, torch_wheel) if s in chosen else StageResult(s) for s in STAGES]
        newest = newest_versions()
    except KeyboardInterrupt:
        print("canary: interrupted; no record written", file=sys.stderr)
        return 130
    finally:
        if args.keep:
            print(f"canary: work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    command = "python scripts/canary.py" + (f" --stages {','.join(chosen)}" if chosen != list(STAGES) else "")
    command += (" -- " + shlex.join(args.pytest_args)) if args.pytest_args else ""
    record = render_record(today(), results, newest, command)
    tmp = PAGE.with_suffix(".tmp")
    tmp.write_text(add_record(page, record), encoding="utf-8")
    tmp.replace(PAGE)
    print(record)
    return 0 if all(r.passed for r in results if r.name in chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
