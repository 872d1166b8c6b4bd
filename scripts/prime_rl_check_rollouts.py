"""Rollouts for scripts/prime_rl_check.sh (``prime_rl_check.py rollouts``): the resolved ``rl --dry-run`` configs
pointed at the stand-ins (``configure``), prime-rl's ``env-server`` started from them, and groups of rollouts through
prime-rl's orchestrator ``Env`` client against the stand-in model (``prime_rl_check_model``); every rollout checked
and printed by ``prime_rl_check_report``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from prime_rl_check_model import Reply, Script, make_server, replies_for, save_byte_tokenizer
from prime_rl_check_report import Checked, GroupRun, check_trace, print_group, reply_of, tree_cpu_seconds

DEFAULT_TASKSET = ("format_weight=0.2",)
"""The rollouts' taskset fields unless ``--taskset`` says otherwise: a non-default reward weight (drugprot's
default is 0.1), set the way a user sets it, so the check sees the env-server score with it."""


# What the rollouts command uses of prime-rl, name -> module, at the pinned commit. prime-rl renames and moves
# these between commits (its branch feat/weight-broadcast-refactor removes InferencePool), so they are imported
# up front, before any server starts, and a missing one is named with what to do.
PRIME_RL_NAMES = {
    "OrchestratorConfig": "prime_rl.configs.orchestrator",
    "build_algorithm": "prime_rl.orchestrator.algo",
    "TrainEnv": "prime_rl.orchestrator.envs",
    "GenerationSource": "prime_rl.orchestrator.generation_source",
    "InferencePool": "prime_rl.utils.client",
    "cli": "prime_rl.utils.config",
    "trace_to_samples": "prime_rl.orchestrator.trajectories",
}


class PrimeRLMismatch(RuntimeError):
    """The installed prime-rl lacks a name this check drives (another commit than the pinned one)."""


def import_prime_rl(names: dict[str, str] = PRIME_RL_NAMES) -> dict[str, object]:
    """Each of ``names`` imported from its module.

    Raises:
        PrimeRLMismatch: a module does not import or lacks the name; the message lists every one and says
            which commit the check is written for.
    """
    import importlib

    found, missing = {}, []
    for name, module_name in names.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            missing.append(f"{module_name}.{name} (the module does not import: {exc})")
            continue
        if not hasattr(module, name):
            missing.append(f"{module_name}.{name}")
            continue
        found[name] = getattr(module, name)
    if missing:
        raise PrimeRLMismatch(
            "the installed prime-rl lacks what this check drives: " + "; ".join(missing) + ". The check is "
            "written for the prime-rl commit pinned as PRIME_RL_COMMIT in scripts/validate_prime_rl.sh; "
            "install that commit, or port PRIME_RL_NAMES and their uses in scripts/prime_rl_check_rollouts.py to the "
            "renamed ones."
        )
    return found


async def run_groups(
    orchestrator_json: Path, env_address: str, env_pid: int, group_size: int, groups: int, script: Script
) -> list[GroupRun]:
    """prime-rl's TrainEnv on the orchestrator config: start (loads the taskset), one group of rollouts on the
    first task, then the orchestrator's own scoring steps (GRPO advantages, training samples); checked."""
    import asyncio

    from drugprot.core.labels import letter_of, options

    prime_rl = import_prime_rl()
    cli, InferencePool, TrainEnv = prime_rl["cli"], prime_rl["InferencePool"], prime_rl["TrainEnv"]
    build_algorithm, GenerationSource = prime_rl["build_algorithm"], prime_rl["GenerationSource"]
    config = cli(prime_rl["OrchestratorConfig"], args=["@", str(orchestrator_json)])
    source = config.train.source[0]
    pool = InferencePool(
        config.model.client,
        model_name=config.model.name,
        train_client_type="renderer",
        renderer_config=config.renderer,
    )
    env = TrainEnv(
        source,
        env_address,
        GenerationSource(source.algo.sampling, pool, config.renderer),
        build_algorithm(source.algo, pool),
    )
    await env.start()
    task = next(env.tasks)
    data = task.data
    letters = "".join(label.letter for label in options(data.with_no_relation))
    taskset = source.env.taskset
    # the costs the task carries (a recipe may set f1_target instead of fp_cost, which then stays unset)
    replies = replies_for([letter_of(label) for label in data.labels], letters, data.fp_cost, data.fn_cost)
    script.register(data.prompt_text, replies)
    # the weights as the orchestrator's own validation of the config resolves them (the reward knob's preset, the
    # weight knobs over it); the env-server must score with the same ones (it rebuilds each task from the
    # config's task.rewards, and the utility's costs travel with the task data)
    weights = {
        "accuracy": taskset.accuracy_weight,
        "utility": taskset.utility_weight,
        "format": taskset.format_weight,
    }
    print(
        f"task {task.key}: gold {data.labels}; {groups} group(s) of {group_size}, replies {[r.kind for r in replies]}"
    )
    print(f"reward {taskset.reward}, weights: " + ", ".join(f"{name} {weight}" for name, weight in weights.items()))
    runs = []
    for _ in range(groups):
        cpu0, own0, wall0 = tree_cpu_seconds(env_pid), time.process_time(), time.perf_counter()
        episodes = list(
            await asyncio.gather(
                *(
                    env.run(
                        client=pool.train_client,
                        model_name=pool.model_name,
                        cache_salt="0",
                        task_data=data.model_dump(mode="json"),
                    )
                    for _ in range(group_size)
                )
            )
        )
        cpu1, own1, wall1 = tree_cpu_seconds(env_pid), time.process_time(), time.perf_counter()
        # what the orchestrator does with a finished group: the algorithm's scores, then training samples
        for episode in episodes:
            await env.algorithm.finalize_episode(episode)
        await env.algorithm.finalize_group(episodes)
        runs.append(
            GroupRun(_check_group(episodes, replies, weights, env.name), cpu1 - cpu0, own1 - own0, wall1 - wall0)
        )
    return runs


def _first_sampled(values: list[float], mask: list[bool]) -> float:
    return next(value for value, sampled in zip(values, mask, strict=True) if sampled)


def _check_group(episodes: list, replies: list[Reply], weights: dict[str, float], env_name: str) -> list[Checked]:
    trace_to_samples = import_prime_rl({"trace_to_samples": PRIME_RL_NAMES["trace_to_samples"]})["trace_to_samples"]
    checked = []
    for episode in episodes:
        for trace in episode.traces:
            reply = reply_of(trace, replies)
            samples = trace_to_samples(trace, env_name=env_name) if trace.ok else []
            advantages = samples[0].advantages if samples else None
            checked.append(
                Checked(
                    kind=reply.kind if reply else "?",
                    reward=trace.reward,
                    expected=sum(reply.expected(weights).values()) if reply else float("nan"),
                    advantage=_first_sampled(advantages, samples[0].mask) if advantages else None,
                    sampled_tokens=sum(samples[0].mask) if samples else 0,
                    problems=check_trace(trace, reply, weights, samples),
                )
            )
    if any(c.kind == "?" for c in checked):  # no group mean to check advantages against
        return checked
    mean = sum(c.expected for c in checked) / len(checked)
    return [
        c
        if c.advantage is not None and abs(c.advantage - (c.expected - mean)) < 1e-6
        else Checked(**{**c.__dict__, "problems": [*c.problems, f"advantage {c.advantage} != {c.expected - mean:.6f}"]})
        for c in checked
    ]


# -- the rollouts command ---------------------------------------------------------------------------------


def configure(
    resolved: dict, *, tokenizer: str, base_url: str, data: str, harness: str, taskset: dict | None = None
) -> dict:
    """A resolved orchestrator or env-server config pointed at the stand-ins: model/tokenizer = the byte-level
    tokenizer directory, the token-route server, the sample data, the harness under test, and any further
    taskset fields (pure)."""
    import copy

    from drugprot.core.rewards import REWARD_NAMES, weight_knob

    weight_knobs = {weight_knob(name) for name in REWARD_NAMES}
    config = copy.deepcopy(resolved)
    envs = [source["env"] for source in config["train"]["source"]] if "train" in config else [config["env"]]
    overrides = taskset or {}
    for env in envs:
        fields = env["taskset"]
        if overrides.keys() & {"reward", *weight_knobs}:
            # a resolved config states every weight twice (the knobs and task.rewards, folded from them): drop the
            # folded copy so validation folds the new values, and with a new reward its preset's weights
            fields.get("task", {}).pop("rewards", None)
            if "reward" in overrides:
                for knob in weight_knobs - overrides.keys():
                    fields.pop(knob, None)
        fields.update(overrides)
        fields["data_path"] = data
        env["agent"]["harness"] = {"id": harness}
    if "model" in config:
        config["model"]["name"] = tokenizer
        config["model"]["client"]["base_url"] = base_url
        config["model"]["client"]["admin_base_url"] = [base_url]
        if config.get("tokenizer") is not None:
            config["tokenizer"]["name"] = tokenizer
    return config


def _field(item: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``--taskset``; the value is read as JSON when it parses (numbers, booleans)."""
    import json

    key, sep, value = item.partition("=")
    if not sep or not key:
        raise SystemExit(f"--taskset {item!r}: expected KEY=VALUE, e.g. format_weight=0.2")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(proc) -> None:
    """Stop the env-server this script started: its process group, SIGTERM then SIGKILL."""
    import os
    import signal
    import subprocess

    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def cmd_rollouts(args: argparse.Namespace) -> int:
    import asyncio
    import json
    import os
    import subprocess
    import threading

    try:
        import_prime_rl()  # before any server starts
    except PrimeRLMismatch as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    configs, work = Path(args.configs), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = work / "byte-tokenizer"
    save_byte_tokenizer(tokenizer)
    orchestrator = json.loads((configs / "orchestrator.json").read_text(encoding="utf-8"))
    source_name = orchestrator["train"]["source"][0]["name"]
    env_server = json.loads((configs / "envs" / "train" / f"{source_name}.json").read_text(encoding="utf-8"))
    script = Script()
    server = make_server(script, str(tokenizer), int(orchestrator["seq_len"]))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    group_size = args.group_size or int(orchestrator["train"]["source"][0]["group_size"])
    print(f"token-route server {base_url}; byte-level tokenizer; data {Path(args.data).name}")
    child_env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_PROXY": "127.0.0.1,localhost"}
    failures = 0
    for harness in args.harness:
        knobs = {
            "tokenizer": str(tokenizer),
            "base_url": base_url,
            "data": str(Path(args.data).resolve()),
            "taskset": dict(_field(item) for item in args.taskset),
        }
        run_dir = work / f"harness-{harness}"
        run_dir.mkdir(exist_ok=True)
        orch_json, env_json = run_dir / "orchestrator.json", run_dir / "env-server.json"
        env_cfg = configure(env_server, harness=harness, **knobs)
        address = f"tcp://127.0.0.1:{_free_port()}"
        env_cfg["serve"]["address"] = address
        orch_json.write_text(json.dumps(configure(orchestrator, harness=harness, **knobs), indent=2))
        env_json.write_text(json.dumps(env_cfg, indent=2))
        print(f"\n-- harness {harness!r}: env-server @ {env_json.relative_to(work.parent)} at {address}")
        with open(run_dir / "env-server.log", "wb") as log:
            proc = subprocess.Popen(
                [str(Path(sys.executable).parent / "env-server"), "@", str(env_json)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=child_env,
                start_new_session=True,
            )
        try:
            runs = asyncio.run(run_groups(orch_json, address, proc.pid, group_size, args.groups, script))
        except Exception as exc:
            failures += 1
            print(f"FAILED: {type(exc).__name__}: {exc}\n(env-server log: {run_dir / 'env-server.log'})")
            continue
        finally:
            _stop(proc)
        for number, run in enumerate(runs, 1):
            failures += print_group(number, run, group_size)
    server.shutdown()
    print(f"\n{'FAIL' if failures else 'PASS'}: {failures} problem(s)")
    return 1 if failures else 0
