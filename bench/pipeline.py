"""Benchmark: the whole ``vf-eval`` run on drugprot against the framework's floor (a minimal echo taskset).

Both runs use the same command line (``-n``, ``-r``, ``-c``, model, client), the same seat (``--harness``:
drugprot's own by default, or ``null``, in a ``subprocess`` runtime) and the same instant local streaming
OpenAI-compatible server (``drugprot.tools.serve.OpenAIServer`` on 127.0.0.1), which answers every request with
the same realistic reply (about 600 tokens of reasoning and a boxed letter). So the ratio of their times is
what drugprot adds to an eval or RL run: loading the split, building prompts and scoring. Runs alternate
drugprot/echo so slow drifts of a shared machine hit both alike.

Per run: wall seconds of the ``vf-eval`` process, CPU seconds of it and all its children (the harness
programs), episodes per second over the rollout phase (first episode start to last episode end, from
``traces.jsonl``), and a per-episode breakdown from the traces' ``timing`` (setup, harness program,
model call, scoring). ``--profile DIR`` also writes a cProfile of one drugprot ``vf-eval`` process.

The echo taskset lives in ``bench/echo_taskset`` and is put on ``PYTHONPATH`` (or install it with
``uv pip install -e bench/echo_taskset``). The ``null`` harness needs ``uv`` and PyPI, or a warm uv cache
(drugprot's harness serves the echo taskset too: it only carries messages). Both envs run ``null`` as
``drugprot-null``, its chat program pinned by content (drugprot's env turns ``null`` into it; the echo taskset is
given that id), so both run one program in one locked environment.
verifiers 0.4 runs ``vf-eval``; 0.3.x runs the v1 CLI ``eval`` (its ``vf-eval`` is the legacy one).

    python -m bench.pipeline                                  # generated corpus, n=16 r=2, c in 1 4 16
    python -m bench.pipeline --data-path FILE --split train   # real data for drugprot
    python -m bench.pipeline --quick                          # CI smoke test: n=2 r=1 c=2, one run each

``--harnesses`` measures the harness instead, side by side in one run: drugprot's in-process harness and
verifiers' ``null`` chat program, each serving drugprot rollouts from verifiers' env server (``EnvServer``,
what prime-rl's ``env-server`` runs) in its own process, driven by verifiers' ``EnvClient`` from this one
against the same instant local model server. The env side's cost is the server process's CPU time, its
children's included (``/proc/<pid>/stat``: utime + stime + cutime + cstime), over a window of ``-n`` rollouts
at ``-c`` concurrency that starts after warm-up rollouts (imports, the first ``uv sync --script``); the model
server runs in this process and is not counted. Linux only.

    python -m bench.pipeline --harnesses                      # -n 32 -c 8, 2 repeats, generated corpus
    python -m bench.pipeline --harnesses --data-path FILE --split train -n 64 -c 16
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import REPO, add_overwrite, check_outputs, emit, load_data, machine

ECHO_DIR = Path(__file__).resolve().parent / "echo_taskset"
MODEL = "trinity-mini"
ENVS = ("drugprot", "echo-taskset")
HARNESSES = ("drugprot", "null")
"""``--harnesses``: drugprot's in-process harness (``drugprot.envs.harness.HARNESS_ID``) and verifiers' chat program."""


def reply_text(min_reasoning_chars: int = 2400) -> str:
    """The server's one reply: ~600 tokens of reasoning in ``<think>`` and a boxed letter."""
    sentence = (
        "The abstract states that the marked chemical reduces the activity of the marked enzyme, "
        "which the guidelines call an inhibitor relation. "
    )
    reasoning = sentence * (min_reasoning_chars // len(sentence) + 1)
    return f"<think>{reasoning.strip()}</think>\n\nThe chemical inhibits the enzyme.\n\n\\boxed{{E}}"


def default_cli() -> str:
    """``vf-eval`` on verifiers 0.4, the v1 ``eval`` on 0.3.x, next to this interpreter."""
    from tests.e2e import script_path, v1_cli_name

    return str(script_path(v1_cli_name()))


def _span(timing: dict[str, Any], name: str) -> float:
    part = timing.get(name) or {}
    if "start" in part and "end" in part and part["end"] is not None:
        return part["end"] - part["start"]
    return 0.0


def summarise(episodes: list[dict[str, Any]], launched: float | None = None) -> dict[str, Any]:
    """Counts, rewards and the per-episode timing breakdown of one run's traces.

    ``launched`` is the epoch time the process was started: ``startup_s`` (launch to first episode start)
    is then the CLI's start-up, including the taskset's ``load()``.
    """
    traces = [t for ep in episodes for t in ep.get("traces", [])]
    starts = [t["timing"]["start"] for t in traces if t.get("timing")]
    ends = [t["timing"]["scoring"]["end"] for t in traces if (t.get("timing") or {}).get("scoring")]
    phase = (max(ends) - min(starts)) if starts and ends else 0.0
    breakdown: dict[str, list[float]] = {"setup": [], "agent": [], "harness_program": [], "model": [], "scoring": []}
    for t in traces:
        timing = t.get("timing") or {}
        breakdown["setup"].append(_span(timing, "setup"))
        breakdown["agent"].append(_span(timing, "agent"))
        agent = timing.get("agent") or {}
        breakdown["harness_program"].append((agent.get("harness") or {}).get("duration") or 0.0)
        breakdown["model"].append((agent.get("model") or {}).get("duration") or 0.0)
        breakdown["scoring"].append(_span(timing, "scoring"))
    rewards = [
        sum((r or {}).get("score", 0) * (r or {}).get("weight", 0) for r in (t.get("rewards") or {}).values())
        for t in traces
    ]
    return {
        "episodes": len(episodes),
        "ok": sum(bool(ep.get("ok")) for ep in episodes),
        "errors": sum(len(ep.get("errors") or []) for ep in episodes),
        "reward_mean": round(sum(rewards) / len(rewards), 4) if rewards else None,
        "rewards": {
            k: sum((t.get("rewards") or {}).get(k, {}).get("score", 0) or 0 for t in traces)
            for k in sorted({k for t in traces for k in (t.get("rewards") or {})})
        },
        "startup_s": round(min(starts) - launched, 3) if starts and launched is not None else None,
        "rollout_phase_s": round(phase, 3),
        "episodes_per_s": round(len(episodes) / phase, 3) if phase > 0 else None,
        "per_episode_median_s": {k: round(statistics.median(v), 4) if v else None for k, v in breakdown.items()},
    }


def run_eval(
    cli: str,
    env: str,
    base_url: str,
    n: int,
    rollouts: int,
    concurrency: int,
    data_path: str,
    split: str,
    out_dir: Path,
    timeout: float = 1800,
    profile: Path | None = None,
    harness: str = HARNESSES[0],
) -> dict[str, Any]:
    """One ``vf-eval`` process; its wall and CPU seconds (with its children) and its traces' summary.

    Runs through ``tests.e2e.run_vf_eval`` (the project's CLI driver: same flags as the e2e tests, process
    group killed on timeout, every episode must be ok); with ``profile``, in-process under cProfile instead.
    """
    from drugprot.envs.harness import NULL_HARNESS_ID
    from drugprot.envs.null_program import PINNED_NULL_HARNESS_ID
    from tests.e2e import API_KEY_VAR, DEFAULT_API_KEY, read_episodes, run_vf_eval, verifiers_version

    # drugprot's env runs null as drugprot-null (the chat program pinned by content); the echo taskset's config does
    # not, so it names drugprot-null itself: both run the same program in the same locked environment
    if harness == NULL_HARNESS_ID and env != "drugprot":
        harness = PINNED_NULL_HARNESS_ID
    args = ["-c", str(concurrency), "--env.agent.harness.id", harness]
    if env == "drugprot":
        args += ["--env.taskset.data-path", data_path, "--env.taskset.split", split]
    else:
        args += ["--env.taskset.num-tasks", str(n)]
    child_env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ECHO_DIR), str(REPO), os.environ.get("PYTHONPATH")]))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    launched = time.time()
    t0 = time.perf_counter()
    if profile is None:
        run_dir = run_vf_eval(
            env,
            base_url,
            out_dir,
            model=MODEL,
            n=n,
            rollouts=rollouts,
            extra_args=args,
            cli=Path(cli).name,
            timeout=timeout,
            env=child_env,
        )
    else:
        argv = [
            env,
            "-m",
            MODEL,
            "-n",
            str(n),
            "-r",
            str(rollouts),
            "-o",
            str(out_dir),
            "--client.base-url",
            base_url,
            "--client.api-key-var",
            API_KEY_VAR,
            "--no-push",
            "--no-rich",
            *args,
        ]
        if verifiers_version() < (0, 4):
            argv.append("--no-serve")
        cmd = [sys.executable, "-m", "bench.pipeline", "--child-profile", str(profile), "--cli", cli, "--", *argv]
        subprocess.run(
            cmd,
            env={**os.environ, **child_env, API_KEY_VAR: DEFAULT_API_KEY},
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=True,
        )
        run_dir = next(out_dir.glob("*/traces.jsonl")).parent
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), **summarise(read_episodes(run_dir), launched)}


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(values), 3) if values else None


def bench_data(args: argparse.Namespace, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """The data file a benchmark runs on (``--data-path``, else a generated corpus written to ``tmp_path``) and
    how the result names it."""
    if args.data_path:
        return args.data_path, {"path": args.data_path, "split": args.split}
    path = corpus.write(corpus.generate(args.docs, args.seed), tmp_path / "corpus.jsonl")
    return str(path), {"generated": True, "docs": args.docs, "seed": args.seed}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from drugprot.tools.serve import OpenAIServer, Reply, fixed_responder

    cli = args.cli or default_cli()
    result: dict[str, Any] = {
        "benchmark": "pipeline",
        "machine": machine(),
        "cli": Path(cli).name,
        "harness": args.harness,
        "n": args.n,
        "rollouts": args.rollouts,
        "repeats": args.repeats,
        "reply_chars": len(reply_text()),
    }
    with tempfile.TemporaryDirectory(prefix="drugprot-bench-") as tmp:
        tmp_path = Path(tmp)
        data_path, result["data"] = bench_data(args, tmp_path)
        server = OpenAIServer(fixed_responder(Reply(reply_text())), chunk_size=args.chunk_size or None, record=False)
        levels: dict[str, Any] = {}
        with server:
            result["server"] = {"chunk_size": args.chunk_size}
            counter = 0
            for concurrency in args.concurrency:
                runs: dict[str, list[dict[str, Any]]] = {env: [] for env in ENVS}
                for _ in range(args.repeats):
                    for env in ENVS:
                        counter += 1
                        out = tmp_path / f"run{counter}" / "outputs"
                        out.parent.mkdir()
                        runs[env].append(
                            run_eval(
                                cli,
                                env,
                                server.base_url,
                                args.n,
                                args.rollouts,
                                concurrency,
                                data_path,
                                args.split,
                                out,
                                harness=args.harness,
                            )
                        )
                level: dict[str, Any] = {}
                for env in ENVS:
                    level[env] = {
                        "wall_s": _median(runs[env], "wall_s"),
                        "cpu_s": _median(runs[env], "cpu_s"),
                        "startup_s": _median(runs[env], "startup_s"),
                        "rollout_phase_s": _median(runs[env], "rollout_phase_s"),
                        "episodes_per_s": _median(runs[env], "episodes_per_s"),
                        "runs": runs[env],
                    }
                d, e = level["drugprot"], level["echo-taskset"]
                level["ratio_wall"] = round(d["wall_s"] / e["wall_s"], 3) if e["wall_s"] else None
                level["ratio_cpu"] = round(d["cpu_s"] / e["cpu_s"], 3) if e["cpu_s"] else None
                if d["rollout_phase_s"] and e["rollout_phase_s"]:
                    level["ratio_rollout_phase"] = round(d["rollout_phase_s"] / e["rollout_phase_s"], 3)
                levels[str(concurrency)] = level
            result["concurrency"] = levels
            if args.profile:
                profile_dir = Path(args.profile)
                profile_dir.mkdir(parents=True, exist_ok=True)
                out = tmp_path / "profile" / "outputs"
                out.parent.mkdir()
                prof = profile_dir / "vf-eval-drugprot.prof"
                run_eval(
                    cli,
                    "drugprot",
                    server.base_url,
                    args.n,
                    args.rollouts,
                    args.concurrency[-1],
                    data_path,
                    args.split,
                    out,
                    profile=prof,
                    harness=args.harness,
                )
                result["profile"] = {"file": str(prof), "top": _top(prof, 25)}
    return result


# -- --harnesses: the env server's cost per rollout, drugprot harness vs null ----------------------------------


def proc_cpu_s(pid: int) -> float:
    """CPU seconds of process ``pid`` and of its children it has waited for (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # after "(comm)": state is field 3, so utime/stime/cutime/cstime (fields 14-17) sit at 11..14
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def env_server_config(harness: str, data_path: str, split: str) -> dict[str, Any]:
    """The served env: drugprot with ``harness`` in a ``subprocess`` runtime (what configs/drugprot.toml sets)."""
    return {
        "taskset": {"id": "drugprot", "data_path": data_path, "split": split},
        "agent": {"harness": {"id": harness}, "runtime": {"type": "subprocess"}},
    }


def _child_env_server(address: str, harness: str, data_path: str, split: str) -> int:
    """Serve drugprot with ``harness`` at ``address`` until terminated (``--child-env-server``)."""
    from verifiers.v1.serve import EnvServer
    from verifiers.v1.utils.loaders import resolve_env_config

    EnvServer.run_server(config=resolve_env_config(env_server_config(harness, data_path, split)), address=address)
    return 0


def bench_task_data(data_path: str, split: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` drugprot tasks as the orchestrator ships them: dumped ``TaskData``."""
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset

    tasks = DrugprotTaskset(DrugprotConfig(id="drugprot", data_path=data_path, split=split, num_tasks=count)).load()
    return [task.data.model_dump(mode="json") for task in tasks]


async def _drive(address: str, pid: int, base_url: str, tasks: list[dict], warmup: int, n: int, c: int) -> dict:
    """Warm up, then time ``n`` rollouts at concurrency ``c`` through the env server at ``address``."""
    import verifiers.v1 as vf
    from verifiers.v1.serve import EnvClient

    from tests.e2e import API_KEY_VAR

    client = EnvClient(address)
    config = vf.EvalClientConfig(base_url=base_url, api_key_var=API_KEY_VAR)
    sampling = vf.SamplingConfig()
    gate = asyncio.Semaphore(c)

    async def one(i: int) -> Any:
        async with gate:
            return await client.run(config, MODEL, sampling, tasks[i % len(tasks)])

    try:
        await client.wait_for_server_startup(timeout=600)
        await asyncio.gather(*(one(i) for i in range(warmup)))
        cpu0, t0 = proc_cpu_s(pid), time.perf_counter()
        episodes = await asyncio.gather(*(one(warmup + i) for i in range(n)))
        wall, cpu = time.perf_counter() - t0, proc_cpu_s(pid) - cpu0
    finally:
        await client.close()
    traces = [t for ep in episodes for t in ep.traces]
    return {
        "rollouts": n,
        "ok": sum(bool(t.ok) for t in traces),
        "reward_sum": round(sum(t.reward for t in traces), 4),
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "cpu_s_per_rollout": round(cpu / n, 4),
        "wall_s_per_rollout": round(wall / n, 4),
        "rollouts_per_s": round(n / wall, 2),
    }


def run_harness(
    harness: str, base_url: str, data_path: str, split: str, tasks: list[dict], args: Any, tmp: Path
) -> dict:
    """One env-server process serving drugprot with ``harness``, measured over one window (see module doc)."""
    from tests.e2e import API_KEY_VAR, DEFAULT_API_KEY

    address = f"ipc://{tmp}/env-{harness}-{time.monotonic_ns()}"
    cmd = [sys.executable, "-m", "bench.pipeline", "--child-env-server", address, "--child-harness", harness,
           "--data-path", data_path, "--split", split]  # fmt: skip
    env = {**os.environ, API_KEY_VAR: DEFAULT_API_KEY}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    log = (tmp / f"env-server-{harness}.log").open("w")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        warmup = args.warmup
        concurrency = args.concurrency[0]
        result = asyncio.run(_drive(address, proc.pid, base_url, tasks, warmup, args.n, concurrency))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    if result["ok"] != args.n:
        tail = (tmp / f"env-server-{harness}.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{harness}: {args.n - result['ok']} of {args.n} rollouts failed\n{tail}")
    return {"harness": harness, "concurrency": concurrency, "warmup": warmup, **result}


def run_harnesses(args: argparse.Namespace) -> dict[str, Any]:
    """Both harnesses, alternating over ``--repeats`` (drifts of a shared machine hit both); medians."""
    from drugprot.tools.serve import OpenAIServer, Reply, fixed_responder

    result: dict[str, Any] = {
        "benchmark": "pipeline --harnesses",
        "machine": machine(),
        "n": args.n,
        "concurrency": args.concurrency[0],
        "repeats": args.repeats,
        "reply_chars": len(reply_text()),
    }
    with tempfile.TemporaryDirectory(prefix="drugprot-bench-") as tmp:
        tmp_path = Path(tmp)
        data_path, result["data"] = bench_data(args, tmp_path)
        tasks = bench_task_data(data_path, args.split, max(args.n, 64))
        server = OpenAIServer(fixed_responder(Reply(reply_text())), chunk_size=args.chunk_size or None, record=False)
        runs: dict[str, list[dict[str, Any]]] = {h: [] for h in HARNESSES}
        with server:
            for repeat in range(args.repeats):
                order = HARNESSES if repeat % 2 == 0 else HARNESSES[::-1]
                for harness in order:
                    runs[harness].append(
                        run_harness(harness, server.base_url, data_path, args.split, tasks, args, tmp_path)
                    )
    summary: dict[str, Any] = {}
    for harness in HARNESSES:
        summary[harness] = {
            key: _median(runs[harness], key) for key in ("cpu_s_per_rollout", "wall_s_per_rollout", "rollouts_per_s")
        }
        summary[harness]["runs"] = runs[harness]
    ours, null = summary["drugprot"], summary["null"]
    summary["null_over_drugprot_cpu"] = round(null["cpu_s_per_rollout"] / ours["cpu_s_per_rollout"], 2)
    summary["null_over_drugprot_wall"] = round(null["wall_s_per_rollout"] / ours["wall_s_per_rollout"], 2)
    result["harnesses"] = summary
    return result


def _top(path: Path, limit: int) -> list[dict[str, Any]]:
    """The functions with the most cumulative time in a cProfile dump, as rows."""
    import pstats

    stats = pstats.Stats(str(path))
    rows = []
    for (file, line, func), (_, ncalls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append(
            {
                "function": f"{Path(file).name}:{line}({func})",
                "file": file,
                "calls": ncalls,
                "tottime_s": round(tottime, 4),
                "cumtime_s": round(cumtime, 4),
            }
        )
    rows.sort(key=lambda r: -r["cumtime_s"])
    return rows[:limit]


def _child_profile(out: str, cli: str, argv: list[str]) -> int:
    """Run the CLI's ``main`` in this process under cProfile (``--child-profile``)."""
    import cProfile

    text = Path(cli).read_text(encoding="utf-8") if Path(cli).is_file() else ""
    target = "verifiers.v1.cli.eval.main"
    for line in text.splitlines():  # console scripts say "from MODULE import main"
        if line.startswith("from ") and " import main" in line:
            target = line.split()[1]
    module = __import__(target, fromlist=["main"])
    sys.argv = [cli, *argv]
    profiler = cProfile.Profile()
    try:
        profiler.runcall(module.main)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    finally:
        profiler.dump_stats(out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", help="drugprot data file or TSV directory (default: generated corpus)")
    parser.add_argument("--split", default="train")
    parser.add_argument("--docs", type=int, default=corpus.FULL_DOCS, help="abstracts of the generated corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "-n", type=int, help="tasks per run (vf-eval -n; default 16); timed rollouts with --harnesses (32)"
    )
    parser.add_argument("-r", "--rollouts", type=int, default=2, help="rollouts per task (vf-eval -r)")
    parser.add_argument(
        "-c", "--concurrency", type=int, nargs="+", help="vf-eval -c levels (default 1 4 16); with --harnesses one (8)"
    )
    parser.add_argument("--repeats", type=int, help="runs per env and level, medians reported (default 3; 2)")
    parser.add_argument("--chunk-size", type=int, default=16, help="characters per streamed delta (0 = one delta)")
    parser.add_argument("--cli", help="the v1 eval CLI (default: vf-eval on verifiers 0.4, eval on 0.3.x)")
    parser.add_argument("--profile", help="also cProfile one drugprot vf-eval process into this directory")
    parser.add_argument("--quick", action="store_true", help="n=2 r=1 c=2, one run each, 100 abstracts")
    parser.add_argument("--json", help="also write the result to this file")
    parser.add_argument(
        "--harnesses", action="store_true", help="env-server CPU/wall per rollout, drugprot harness vs null"
    )
    parser.add_argument(
        "--harness", default=HARNESSES[0], choices=HARNESSES, help="the seat of both vf-eval runs (default drugprot)"
    )
    parser.add_argument("--warmup", type=int, help="--harnesses: untimed rollouts first (default max(2, c))")
    parser.add_argument("--child-profile", help=argparse.SUPPRESS)
    parser.add_argument("--child-env-server", help=argparse.SUPPRESS)
    parser.add_argument("--child-harness", help=argparse.SUPPRESS)
    add_overwrite(parser)
    args, rest = parser.parse_known_args(argv)
    if args.child_profile:
        return _child_profile(args.child_profile, args.cli, [a for a in rest if a != "--"])
    if args.child_env_server:
        return _child_env_server(args.child_env_server, args.child_harness, args.data_path, args.split)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    outputs, folders = [("--json", args.json)], [("--profile", args.profile)]
    inputs = [args.data_path, args.cli]  # the data and the eval CLI it runs (and reads): never an output
    check_outputs(parser.prog, outputs, inputs=inputs, folders=folders, overwrite=args.overwrite)
    if args.data_path:
        load_data(parser.prog, args.data_path, split=args.split)
    # each mode's defaults for what was not given
    if args.harnesses:
        args.n, args.concurrency, args.repeats = args.n or 32, args.concurrency or [8], args.repeats or 2
    else:
        args.n, args.concurrency, args.repeats = args.n or 16, args.concurrency or [1, 4, 16], args.repeats or 3
    if args.quick:
        args.docs, args.n, args.rollouts, args.concurrency, args.repeats = min(args.docs, 100), 2, 1, [2], 1
    args.warmup = args.warmup or max(2, args.concurrency[0])
    emit(run_harnesses(args) if args.harnesses else run(args), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
