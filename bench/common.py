"""Shared helpers of the benchmarks: machine facts, repeated timing, child processes, JSON output."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from drugprot.core.outputs import write_text_atomic

REPO = Path(__file__).resolve().parent.parent


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """CPU model, cores, RAM, load, Python and package versions: the context every figure needs."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "load_avg_1_5_15": load,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": platform.platform(terse=True),
        "bytecode_cache": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
        "verifiers": _version("verifiers"),
        "drugprot": _version("drugprot"),
    }


def measure(fn: Callable[[], Any], repeats: int, warmup: int = 0) -> dict[str, Any]:
    """Run ``fn`` ``repeats`` times; medians (and all runs) of wall and CPU seconds of this process.

    CPU seconds (``time.process_time``) are reported beside wall seconds because a shared 2-core box
    inflates wall time with other processes' work; on an idle machine the two agree for this
    single-threaded code.
    """
    for _ in range(warmup):
        fn()
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(max(1, repeats)):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
        del result  # freeing the result is not part of what is timed
    return {
        "wall_s": round(statistics.median(walls), 4),
        "cpu_s": round(statistics.median(cpus), 4),
        "wall_runs": [round(w, 4) for w in walls],
        "cpu_runs": [round(c, 4) for c in cpus],
    }


def maxrss_mib() -> float:
    """Peak resident set size of this process so far, in MiB.

    Linux's ``VmHWM`` when there is one: ``ru_maxrss`` survives ``exec``, so in a child it can report the
    parent's peak. Elsewhere ``ru_maxrss`` (KiB on Linux, bytes on macOS).
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def run_child(module: str, args: Sequence[str], timeout: float = 600) -> dict[str, Any]:
    """Run ``python -m module args`` in a fresh interpreter and return the JSON object it prints last."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_json(result: Any, out: str, *, indent: int = 2) -> None:
    """Write ``result`` as JSON to ``out`` whole or not at all (``drugprot.core.outputs.write_text_atomic``: a
    temporary file beside it, then a rename)."""
    write_text_atomic(out, json.dumps(result, indent=indent) + "\n")


def emit(result: dict[str, Any], json_path: str | None) -> None:
    """Print the result as indented JSON, and also write it to ``json_path`` when given."""
    text = json.dumps(result, indent=2)
    print(text)
    if json_path:
        Path(json_path).write_text(text + "\n", encoding="utf-8")


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("inf")
