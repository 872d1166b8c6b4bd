"""The test-suite figures the docs show (tests per stage, passed/skipped, CPU seconds, wall time), generated.

Two kinds of figure, kept apart:

- **Counts of collected tests** per stage (``pytest --collect-only -q``, the stages of ``scripts/test.sh`` plus the
  fast loop, ``-m "not slow"``): deterministic, so ``--check`` recounts them and fails when the shown ones differ.
- **Measurements** (passed/skipped, CPU seconds, wall): they depend on the machine and its load, so they are
  recorded once each, with the machine, the command and the date, in ``scripts/suite_figures.json``
  (``--measure fast`` runs the fast loop, ``--measure suite`` runs ``scripts/test.sh``, and each appends what it
  measured), and the docs show them as measured, never as a property of the code. A measurement also records
  how many tests were collected when it ran, so the table says when it is older than the current test set.

Two generated blocks, ``<!-- suite-figures: NAME -->`` ... ``<!-- /suite-figures -->`` (``BLOCK_FILES``):
``summary``, one sentence near the top of README.md, and ``tests``, the table of docs/testing.md's Tests section.

Usage (from the repository root, in the workspace venv)::

    .venv/bin/python scripts/suite_figures.py --write            # recount, re-render both blocks
    .venv/bin/python scripts/suite_figures.py --check            # exit 1 when a block is stale
    .venv/bin/python scripts/suite_figures.py --measure fast     # run the fast loop once, record it, re-render
    .venv/bin/python scripts/suite_figures.py --measure suite    # run scripts/test.sh once, record it, re-render

Exit status: 0 done (or current), 1 stale (``--check``) or a measured run failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drugprot.core.outputs import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TESTING = ROOT / "docs" / "testing.md"
BLOCK_FILES: dict[str, Path] = {"summary": README, "tests": TESTING}
"""Which file holds each generated block."""
FIGURES = ROOT / "scripts" / "suite_figures.json"
_END = "<!-- /suite-figures -->"


@dataclass(frozen=True)
class Stage:
    """One stage of ``scripts/test.sh``: its title there, its venv and the pytest arguments it passes."""

    name: str
    title: str
    venv: str
    args: tuple[str, ...]


STAGES = (
    Stage("v04", "[1/3] verifiers 0.4.0 (uv.lock)", ".venv", ("--ignore=tests/tools/adapters",)),
    Stage("v03", "[2/3] verifiers 0.3.1", ".venv-v03", ("--ignore=tests/tools/adapters",)),
    Stage("adapters", "[3/3] adapters (torch CPU, transformers, peft)", ".venv-adapters", ("tests/tools/adapters",)),
)
FAST_ARGS = ("-q", "-m", "not slow", "--ignore=tests/tools/adapters")
FAST_COMMAND = ".venv/bin/python -m pytest " + " ".join(a if " " not in a else f'"{a}"' for a in FAST_ARGS)
SUITE_COMMAND = "scripts/test.sh"

_COLLECTED = re.compile(
    r"^(?:(?P<selected>\d+)/)?(?P<total>\d+) tests? collected(?: \((?P<deselected>\d+) deselected\))?"
)
_OUTCOME = re.compile(r"(\d+) (passed|skipped|failed|errors?|deselected|xfailed|xpassed)")


# ------------------------------------------------------------------------------------------------- counting


def parse_collected(output: str) -> tuple[int, int]:
    """``(selected, total)`` from ``pytest --collect-only -q``'s last line (``1959/1989 tests collected (30
    deselected) in 30.5s``, or ``171 tests collected in 2.0s``).

    Raises:
        ValueError: no such line (a collection error: the output's tail is in the message).
    """
    for line in reversed(output.splitlines()):
        match = _COLLECTED.match(line.strip())
        if match:
            total = int(match["total"])
            return (int(match["selected"]) if match["selected"] else total), total
    raise ValueError(f"no 'tests collected' line in pytest's output:\n{output[-2000:]}")


def stage_python(stage: Stage) -> str:
    """The stage's own interpreter when its venv is set up, else the one running this script."""
    own = ROOT / stage.venv / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def collect(python: str, args: Sequence[str]) -> tuple[int, int]:
    done = subprocess.run(
        [python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return parse_collected(done.stdout)


def count_tests() -> dict[str, int]:
    """Tests collected now: per stage of ``scripts/test.sh`` and for the fast loop (the 0.4.0 stage's
    ``-m "not slow"`` selection)."""
    counts: dict[str, int] = {}
    for stage in STAGES:
        args = [*FAST_ARGS[1:]] if stage.name == "v04" else list(stage.args)
        selected, total = collect(stage_python(stage), args)
        counts[stage.name] = total
        if stage.name == "v04":
            counts["fast"] = selected
    return counts


# ------------------------------------------------------------------------------------------------ measuring


def parse_outcomes(line: str) -> dict[str, int]:
    """``{"passed": 1625, "skipped": 260, ...}`` from a pytest summary line."""
    return {("errors" if kind == "error" else kind): int(n) for n, kind in _OUTCOME.findall(line)}


def machine() -> str:
    """The machine in words: cores, CPU model, memory, load average when the measurement started."""
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(encoding="utf-8"), re.M)
        model = found.group(1).strip() if found else model
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()[0]
    return f"{os.cpu_count()}-core {model}, {memory:.1f} GiB, load average {load:.1f} at the start"


def timed(argv: Sequence[str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run ``argv`` from the repository root; its result, wall seconds and CPU seconds (user + system, every
    descendant it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_fast(counts: Mapping[str, int]) -> dict[str, Any]:
    """Run the fast loop once and return its record."""
    where = machine()
    done, wall, cpu = timed([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *FAST_ARGS])
    if done.returncode != 0:
        raise SystemExit(f"suite_figures: the fast loop failed (exit {done.returncode}):\n{done.stdout[-3000:]}")
    outcomes = parse_outcomes(done.stdout.strip().splitlines()[-1])
    return {
        "scope": "fast",
        "date": datetime.date.today().isoformat(),
        "command": FAST_COMMAND + (" (DRUGPROT_REAL_SAMPLE set)" if os.environ.get("DRUGPROT_REAL_SAMPLE") else ""),
        "machine": where,
        "collected": {"fast": counts["fast"]},
        "stages": {"fast": {**outcomes, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}},
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
    }


def parse_suite(output: str) -> dict[str, dict[str, Any]]:
    """Each stage's outcome counts (its log's last pytest summary) and its wall and CPU seconds (the script's own
    summary table) from the output of ``scripts/test.sh``."""
    stages: dict[str, dict[str, Any]] = {}
    sections = re.split(r"^== (.+) ==$", output, flags=re.M)
    logs = dict(zip(sections[1::2], sections[2::2], strict=True))
    for stage in STAGES:
        log = logs.get(stage.title, "")
        summaries = [line for line in log.splitlines() if _OUTCOME.search(line) and " in " in line]
        row = re.search(
            rf"^{re.escape(stage.title)}\s+exit (\d+)\s+([\d.]+) wall\s+([\d.]+) user\s+([\d.]+) sys$", output, re.M
        )
        if not summaries or row is None:
            raise ValueError(f"scripts/test.sh's output has no summary for stage {stage.title!r}")
        stages[stage.name] = {
            **parse_outcomes(summaries[-1]),
            "exit": int(row[1]),
            "wall_s": float(row[2]),
            "cpu_s": round(float(row[3]) + float(row[4]), 1),
        }
    return stages


def measure_suite(counts: Mapping[str, int]) -> dict[str, Any]:
    """Run ``scripts/test.sh`` once (its stages side by side) and return its record."""
    where = machine()
    done, wall, cpu = timed(["bash", SUITE_COMMAND])
    stages = parse_suite(done.stdout)
    if done.returncode != 0:
        raise SystemExit(f"suite_figures: scripts/test.sh failed (exit {done.returncode}): {stages}")
    return {
        "scope": "suite",
        "date": datetime.date.today().isoformat(),
        "command": SUITE_COMMAND,
        "machine": where,
        "collected": {stage.name: counts[stage.name] for stage in STAGES},
        "stages": stages,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
    }


# ------------------------------------------------------------------------------------------------ rendering


def thousands(n: int | float | None) -> str:
    return "?" if n is None else f"{n:,.0f}"


def minutes(seconds: float | None) -> str:
    """``8 min 39 s``, ``52 s``; ``?`` when not recorded."""
    if seconds is None:
        return "?"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min" + (f" {whole % 60} s" if whole % 60 else "")


def latest(records: Sequence[Mapping[str, Any]], scope: str, stage: str) -> Mapping[str, Any] | None:
    """The latest record of ``scope`` that measured ``stage``'s CPU time, else the latest that has the stage."""
    found = [r for r in records if r["scope"] == scope and stage in (r.get("stages") or {})]
    timed_ = [r for r in found if r["stages"][stage].get("cpu_s") is not None]
    return (timed_ or found or [None])[-1]


def cpu_range(records: Sequence[Mapping[str, Any]], scope: str) -> str:
    cpus = sorted(r["cpu_s"] for r in records if r["scope"] == scope and r.get("cpu_s") is not None)
    if not cpus:
        return "not measured"
    return f"{thousands(cpus[0])} CPU-s" if cpus[0] == cpus[-1] else f"{thousands(cpus[0])}–{thousands(cpus[-1])} CPU-s"


def _outcome_text(stage: Mapping[str, Any] | None) -> str:
    if not stage or "passed" not in stage:
        return "?"
    return f"{thousands(stage['passed'])} / {thousands(stage.get('skipped'))}"


def _when(record: Mapping[str, Any], scope_counts: Mapping[str, int]) -> str:
    """The measurement's date, and a warning when it ran on a different set of tests than the one collected now."""
    then = record.get("collected")
    older = then is None or any(then.get(name) != count for name, count in scope_counts.items() if name in then)
    return record["date"] + (" (an older test set)" if older else "")


def _row(what: str, count: int, record: Mapping[str, Any] | None, stage: str) -> str:
    measured = (record or {}).get("stages", {}).get(stage) or {}
    when = _when(record, {stage: count}) if record else "never"
    return (
        f"| {what} | {thousands(count)} | {_outcome_text(measured)} | {thousands(measured.get('cpu_s'))} | "
        f"{minutes(measured.get('wall_s'))} | {when} |"
    )


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, width=120, break_long_words=False, break_on_hyphens=False)


def render_tests(counts: Mapping[str, int], records: Sequence[Mapping[str, Any]]) -> str:
    """The Tests section's table: tests collected now (checked) and the latest measurement of each stage."""
    lines = [
        "| what | tests collected now | last measured: passed / skipped | CPU-s | wall | measured |",
        "|---|---:|---:|---:|---:|---|",
        _row(f"fast loop: `{FAST_COMMAND}`", counts["fast"], latest(records, "fast", "fast"), "fast"),
        *(
            _row(f"`scripts/test.sh` stage {stage.title}", counts[stage.name], latest(records, "suite", stage.name),
                 stage.name)
            for stage in STAGES
        ),
        "",
        *_wrapped(
            "Collected counts are checked: `scripts/suite_figures.py --check` recounts them (`pytest --collect-only`, "
            "each stage in its own venv where it is set up) and fails when this table differs. Timings are not: they "
            "vary with the machine and its load, so each is a measurement with its machine, command and date "
            "(`scripts/suite_figures.json`; `--measure fast` or `--measure suite` adds one, on the machine it runs "
            "on). The measured runs:"
        ),
        "",
    ]  # fmt: skip
    for record in records:
        wall = "wall not recorded" if record.get("wall_s") is None else f"{minutes(record['wall_s'])} wall"
        scope = "fast loop" if record["scope"] == "fast" else "whole suite (stages side by side)"
        item = (
            f"{record['date']}, {scope}, `{record['command']}`: {thousands(record.get('cpu_s'))} CPU-s, {wall}; "
            f"{record['machine']}."
        )
        lines += [("- " if k == 0 else "  ") + line for k, line in enumerate(_wrapped(item))]
    return "\n".join(lines) + "\n"


def render_summary(counts: Mapping[str, int], records: Sequence[Mapping[str, Any]]) -> str:
    """The sentence near the README's top: the size of the suite and of the fast loop, and their measured cost."""
    stages = " + ".join(thousands(counts[stage.name]) for stage in STAGES)
    walls = sorted(r["wall_s"] for r in records if r["scope"] == "suite" and r.get("wall_s") is not None)
    span = minutes(walls[0]) if walls else ""
    if walls and walls[-1] != walls[0]:
        span += f" to {minutes(walls[-1])}"
    wall = f" ({span} wall, by machine and load)" if walls else ""
    fast = latest(records, "fast", "fast")
    cpu = (fast or {}).get("stages", {}).get("fast", {}).get("cpu_s")
    fast_cost = "not measured" if fast is None or cpu is None else f"{thousands(cpu)} CPU-s on {fast['date']}"
    text = (
        f"The whole suite (`scripts/test.sh`: {stages} tests on its three stages) has taken "
        f"**{cpu_range(records, 'suite')}**{wall}. While working, run the fast loop first "
        f"({thousands(counts['fast'])} tests; {fast_cost}; [Tests](docs/testing.md#tests) has each measurement)."
    )
    return "\n".join(_wrapped(text)) + "\n"


def splice(text: str, name: str, body: str) -> str:
    """``text`` with the block ``name`` replaced by ``body``.

    Raises:
        ValueError: no such marker pair.
    """
    start = re.search(rf"^<!-- suite-figures: {re.escape(name)} -->\n", text, re.M)
    if start is None:
        raise ValueError(f"no '<!-- suite-figures: {name} -->' marker")
    end = text.find(_END, start.end())
    if end < 0:
        raise ValueError(f"suite-figures {name}: no {_END} after its marker")
    return text[: start.end()] + body + text[end:]


def render_file(path: Path, text: str, counts: Mapping[str, int], records: Sequence[Mapping[str, Any]]) -> str:
    """``text`` (the file ``path``) with the blocks ``BLOCK_FILES`` puts there re-rendered."""
    renderers = {"summary": render_summary, "tests": render_tests}
    for name, where in BLOCK_FILES.items():
        if where == path:
            text = splice(text, name, renderers[name](counts, records))
    return text


def load_records(path: Path = FIGURES) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["measurements"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="recount the tests and re-render the blocks")
    mode.add_argument("--check", action="store_true", help="exit 1 when a block is stale")
    mode.add_argument(
        "--measure",
        choices=("fast", "suite"),
        help="run the fast loop (fast) or scripts/test.sh (suite) once, record it, re-render",
    )
    args = parser.parse_args(argv)
    records = load_records()
    counts = count_tests()
    if args.measure:
        record = measure_fast(counts) if args.measure == "fast" else measure_suite(counts)
        records.append(record)
        write_text_atomic(FIGURES, json.dumps({"measurements": records}, indent=2) + "\n")
        print(f"suite_figures: recorded {json.dumps(record)}", file=sys.stderr)
    files = dict.fromkeys(BLOCK_FILES.values())
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    new = {path: render_file(path, text, counts, records) for path, text in texts.items()}
    stale = [str(path.relative_to(ROOT)) for path in texts if new[path] != texts[path]]
    if args.check:
        if stale:
            print(
                f"suite_figures: {', '.join(stale)} stale (tests collected now: {counts}); regenerate with "
                ".venv/bin/python scripts/suite_figures.py --write",
                file=sys.stderr,
            )
            return 1
        print(f"suite_figures: current (tests collected: {counts})", file=sys.stderr)
        return 0
    for path in texts:
        if new[path] != texts[path]:
            write_text_atomic(path, new[path])
    print(f"suite_figures: rewrote {', '.join(stale) or 'nothing'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
