"""How fast a bad data source fails through the real eval CLIs, and what the user sees last.

For each CLI (verifiers 0.4.0 ``vf-eval``; verifiers 0.3.1 legacy ``vf-eval`` and its v1 ``eval``) and each
error kind, runs the CLI against a model URL nothing listens on and records the exit code, the wall time from
process start to exit, the CPU time of the process tree (user + sys, from ``RUSAGE_CHILDREN``) and the last
line printed (for the box of a config error: the last row inside it). ``startup`` is ``<cli> drugprot -h``:
the same imports and config narrowing with nothing validated, i.e. the CLI's own start-up, so
``time - startup`` is what the failing check adds. Medians over ``--repeat`` runs, interleaved.
``--in-process`` also times, in this interpreter, just the failing check itself: validating
``DrugprotConfig`` for the config-time cases, ``DrugprotTaskset.load()`` for the unreachable hub.

    python -m bench.failfast [--repeat 3] [--in-process] [--json OUT] [--cli NAME=PATH ...] [--case KIND ...]

No network: the hub is simulated unreachable with ``HF_ENDPOINT`` on a closed 127.0.0.1 port, and switched
off with ``HF_HUB_OFFLINE=1`` and an empty ``HF_HOME``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import add_overwrite, check_outputs, fail, write_json

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_JSONL = ROOT / "tests" / "fixtures" / "drugprot_fixture.jsonl"
FIXTURE_TSV = ROOT / "tests" / "fixtures" / "tsv"
DEFAULT_CLIS = {
    "v1 vf-eval (0.4.0)": ROOT / ".venv" / "bin" / "vf-eval",
    "legacy vf-eval (0.3.1)": ROOT / ".venv-v03" / "bin" / "vf-eval",
    "v1 eval (0.3.1)": ROOT / ".venv-v03" / "bin" / "eval",
}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_cases(work: Path) -> dict[str, tuple[str | None, dict[str, str]]]:
    """Error kind -> (data_path or None for the hub, extra environment)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in FIXTURE_JSONL.read_text(encoding="utf-8").splitlines()]
    good = work / "good.parquet"
    pq.write_table(pa.Table.from_pylist(rows), good)
    truncated = work / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    unreadable = work / "unreadable.jsonl"
    unreadable.symlink_to("/proc/self/mem")  # a regular file whose first read fails with EIO
    incomplete = work / "tsv"
    incomplete.mkdir()
    for name in ("drugprot_training_abstracs.tsv", "drugprot_training_entities.tsv"):
        (incomplete / name).write_bytes((FIXTURE_TSV / name).read_bytes())
    empty_home = work / "hf-home"
    empty_home.mkdir()
    return {
        "wrong path": (str(work / "data" / "validation.parquet"), {}),
        "unreadable file": (str(unreadable), {}),
        "truncated parquet": (str(truncated), {}),
        "incomplete TSV dir": (str(incomplete), {}),
        "hub offline, no cache": (None, {"HF_HUB_OFFLINE": "1", "HF_HOME": str(empty_home)}),
        "hub unreachable": (None, {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_HOME": str(empty_home)}),
    }


def argv_for(name: str, cli: Path, data_path: str | None, out: Path) -> list[str]:
    if "legacy" in name:
        argv = [str(cli), "drugprot", "-m", "trinity-mini", "-b", f"http://127.0.0.1:{closed_port()}/v1"]
        argv += ["-k", "DRUGPROT_BENCH_KEY", "-n", "1", "-r", "1", "-d", "--disable-env-server", "-o", str(out)]
        argv += ["-a", json.dumps({"split": "train", **({"data_path": data_path} if data_path else {})})]
        return argv
    argv = [str(cli), "drugprot", "-m", "trinity-mini", "-n", "1", "-o", str(out), "--no-push", "--no-rich"]
    argv += ["--client.base-url", f"http://127.0.0.1:{closed_port()}/v1", "--env.taskset.split", "train"]
    if data_path:
        argv += ["--env.taskset.data-path", data_path]
    if cli.name == "eval":  # verifiers 0.3.x: in-process
        argv.append("--no-serve")
    return argv


def last_line(stderr: str, stdout: str) -> str:
    lines = [line for line in (stderr or stdout).splitlines() if line.strip()]
    if lines and lines[-1].startswith("╰"):
        rows = [line[1:-1].strip() for line in lines if line.startswith("│") and line.endswith("│")]
        return "[box] " + rows[-1]
    return lines[-1] if lines else ""


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"rc": proc.returncode, "wall_s": wall, "cpu_s": cpu, "last": last_line(proc.stderr, proc.stdout)}


def in_process(cases: dict[str, tuple[str | None, dict[str, str]]], repeat: int) -> None:
    """Median CPU and wall time of the failing check alone (no CLI start-up), in this interpreter."""
    from pydantic import ValidationError

    from drugprot.core.errors import DrugprotError
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset

    print("| check (in process) | case | wall ms | CPU ms | error |")
    print("|---|---|---|---|---|")
    for case, (data_path, extra) in cases.items():
        saved = {k: os.environ.get(k) for k in extra}
        os.environ.update(extra)
        walls, cpus, error = [], [], ""
        try:
            for _ in range(repeat):
                wall, cpu = time.perf_counter(), time.process_time()
                try:
                    DrugprotTaskset(DrugprotConfig(id="drugprot", split="train", data_path=data_path)).load()
                except (ValidationError, DrugprotError) as exc:
                    error = type(exc).__name__
                cpus.append(time.process_time() - cpu)
                walls.append(time.perf_counter() - wall)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        where = "load()" if error.startswith("Drugprot") else "config"
        wall_ms, cpu_ms = 1000 * statistics.median(walls), 1000 * statistics.median(cpus)
        print(f"| {where} | {case} | {wall_ms:.1f} | {cpu_ms:.1f} | {error} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.failfast", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write every run here")
    parser.add_argument("--cli", action="append", default=[], help="NAME=PATH (default: the three of the repo venvs)")
    parser.add_argument("--case", action="append", default=[], help="only these error kinds (default: all)")
    parser.add_argument("--in-process", action="store_true", help="also time the failing check alone")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI runs")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    malformed = [c for c in args.cli if "=" not in c]
    if malformed:
        fail(parser.prog, f"--cli takes NAME=PATH, got {malformed[0]!r}")
    clis = dict(c.split("=", 1) for c in args.cli) if args.cli else DEFAULT_CLIS
    inputs = [FIXTURE_JSONL, FIXTURE_TSV, *clis.values()]  # what the runs read: never an output
    check_outputs(parser.prog, [("--json", args.json)], inputs=inputs, overwrite=args.overwrite)
    clis = {name: Path(path).resolve() for name, path in clis.items() if Path(path).exists()}
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="drugprot-failfast-") as tmp:
        work = Path(tmp)
        cases = make_cases(work)
        if args.case:
            cases = {k: v for k, v in cases.items() if k in args.case}
        if args.in_process:
            in_process(cases, max(args.repeat, 5))
        if args.no_cli:
            return 0
        base_env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
        base_env["DRUGPROT_BENCH_KEY"] = "sk-bench"
        jobs: list[tuple[str, str, Callable[[], list[str]], dict[str, str]]] = []
        for name, cli in clis.items():
            jobs.append((name, "startup (-h)", lambda cli=cli: [str(cli), "drugprot", "-h"], {}))
            for case, (data_path, extra) in cases.items():
                jobs.append((name, case, lambda n=name, c=cli, d=data_path: argv_for(n, c, d, work / "outputs"), extra))
        for repeat in range(args.repeat):
            for name, case, make_argv, extra in jobs:
                run = timed(make_argv(), {**base_env, **extra}, work)
                results.append({"cli": name, "case": case, "repeat": repeat, **run})
                print(f"{name:24} {case:24} rc={run['rc']} wall={run['wall_s']:.2f}s cpu={run['cpu_s']:.2f}s",
                      file=sys.stderr)  # fmt: skip
    print(f"| CLI | case | exit | wall s (median of {args.repeat}) | CPU s | last line printed |")
    print("|---|---|---|---|---|---|")
    for name, case, _, _ in jobs:
        runs = [r for r in results if r["cli"] == name and r["case"] == case]
        wall = statistics.median(float(r["wall_s"]) for r in runs)  # type: ignore[arg-type]
        cpu = statistics.median(float(r["cpu_s"]) for r in runs)  # type: ignore[arg-type]
        last = str(runs[-1]["last"])
        print(f"| {name} | {case} | {runs[-1]['rc']} | {wall:.2f} | {cpu:.2f} | {last[:160]} |")
    if args.json:
        write_json(results, args.json, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
