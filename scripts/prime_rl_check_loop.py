"""prime-rl's real orchestrator loop with drugprot on CPU (helper of scripts/prime_rl_check.sh, step 4).

``run``: starts prime-rl's ``env-server`` for the train and the eval source of a resolved ``rl --dry-run`` config,
a local scripted inference server on 127.0.0.1 (vLLM's token route for training, chat completions for eval, the
admin routes the orchestrator calls) and a stand-in trainer (it reads each step's micro-batches with prime-rl's
own receiver and publishes the next policy version as ``broadcasts/step_N/STABLE``), then runs
``prime_rl.orchestrator.orchestrator.main`` (the ``orchestrator`` entry point) as a subprocess for ``max_steps``
steps of the recipe scaled down. It then checks the batches handed to the trainer: every sample's advantage is its
reward minus its group's mean, with each reward the one DrugProt's rules give the scripted reply; every group is
shipped whole, and a group of equal rewards is never shipped (prime-rl's zero-advantage rule,
``train.filter_zero_advantages``, must drop it: a problem, not a note, since such a group costs trainer time and
teaches nothing); and every eval and training request prime-rl sent carries the TOML's sampling in fields vLLM
reads.

``orchestrator``: the orchestrator entry point behind placeholders for the four packages the CPU install leaves
out (vLLM, torchtitan, flash-linear-attention: GitHub sources; ring_flash_attn needs flash_attn, a CUDA build).
prime-rl's orchestrator imports them only through the trainer's model code (``watcher.py`` -> ``transports.weights``
-> ``trainer.lora`` -> ``trainer.models``) and never calls them: a placeholder raises when called, except as a
decorator at import time, where it returns the function unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import prime_rl_check_model as model  # noqa: E402
import prime_rl_check_rollouts as rollouts  # noqa: E402

PLACEHOLDER_PACKAGES = ("vllm", "torchtitan", "fla", "ring_flash_attn")
"""Import-only dependencies of the orchestrator that the CPU install leaves out (see the module docstring)."""

UNIFORM_EVERY = 3
"""Every third train task (in order of first request) gets the gold answer on all its rollouts: a group with one
reward, which prime-rl must leave out of the batch (zero advantage), and only that."""

VLLM_SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "max_tokens", "max_completion_tokens")


# -- placeholders for the orchestrator subprocess ------------------------------------------------------------


def install_placeholders(packages: tuple[str, ...] = PLACEHOLDER_PACKAGES) -> None:
    """Make ``packages`` importable as placeholder modules (every attribute a :class:`Placeholder`)."""
    import importlib.abc
    import importlib.machinery
    import types

    class Module(types.ModuleType):
        def __getattr__(self, item: str) -> object:
            if item.startswith("__"):
                raise AttributeError(item)
            return Placeholder(f"{self.__name__}.{item}")

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201
            if name.split(".")[0] in packages:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):  # noqa: ANN001, ANN201
            return Module(spec.name)

        def exec_module(self, module) -> None:  # noqa: ANN001
            module.__path__ = []

    sys.meta_path.insert(0, Finder())


class Placeholder:
    """A name of a left-out package: raises when called, except as a bare decorator (returns the function)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: object, **kwargs: object) -> object:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        raise RuntimeError(f"{self._name} is a placeholder of prime_rl_check_loop.py: the orchestrator called it")

    def __getattr__(self, item: str) -> Placeholder:
        return Placeholder(f"{self._name}.{item}")

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (object,)


def cmd_orchestrator(argv: list[str]) -> int:
    install_placeholders()
    from prime_rl.orchestrator.orchestrator import main

    sys.argv = ["orchestrator", *argv]
    main()
    return 0


# -- the scripted inference server -----------------------------------------------------------------------------


@dataclass
class Task:
    key: str
    """The user prompt (how the server finds the task)."""
    name: str
    """drugprot's task key (PMID:ARG1:ARG2)."""
    gold: list[str]
    replies: list[model.Reply]
    uniform: bool = False
    served: list[model.Reply] = field(default_factory=list)
    """The replies given to its training rollouts."""
    evaluated: list[model.Reply] = field(default_factory=list)


class Scripted:
    """Replies by task (looked up by the user prompt): the four scripted replies in turn, or the gold answer only for
    every ``UNIFORM_EVERY``-th train task. Records every request (route and body). Thread-safe."""

    def __init__(self, tasks: dict[str, Task]) -> None:
        self._lock = threading.Lock()
        self.tasks = tasks
        self.order: list[str] = []
        self.requests: list[tuple[str, dict]] = []

    def find(self, prompt_text: str) -> Task:
        for marker in ("<|im_start|>user\n",):
            if marker in prompt_text:
                user = prompt_text.split(marker)[-1].split("<|im_end|>")[0]
                if user in self.tasks:
                    return self.tasks[user]
        if prompt_text in self.tasks:
            return self.tasks[prompt_text]
        raise LookupError("prompt matches no task")

    def reply(self, route: str, task: Task, body: dict, train: bool) -> model.Reply:
        with self._lock:
            self.requests.append((route, body))
            if not train:
                reply = task.replies[len(task.evaluated) % len(task.replies)]
                task.evaluated.append(reply)
                return reply
            if task.key not in self.order:
                self.order.append(task.key)
                task.uniform = len(self.order) % UNIFORM_EVERY == 1
            reply = task.replies[0] if task.uniform else task.replies[len(task.served) % len(task.replies)]
            task.served.append(reply)
            return reply


def make_server(scripted: Scripted, models: list[str]):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    eos = 256 + model.SPECIAL_TOKENS.index(model.EOS)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, payload: dict | str) -> None:
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if isinstance(payload, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.rstrip("/")
            if path.endswith("/models"):
                cards = [{"id": m, "object": "model", "owned_by": "prime-rl-check"} for m in models]
                self._send(200, {"object": "list", "data": cards})
            elif path.endswith("/metrics"):
                self._send(200, "")
            else:  # /health
                self._send(200, {})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            try:
                if self.path.endswith("/inference/v1/generate"):
                    task = scripted.find(model.detokenize(body["token_ids"]))
                    reply = scripted.reply("generate", task, body, train=True)
                    ids = [*model.token_ids(reply.text), eos]
                    logprobs = [{"token": f"token_id:{i}", "logprob": model.LOGPROB} for i in ids]
                    choice = {"index": 0, "token_ids": ids, "finish_reason": "stop", "logprobs": {"content": logprobs}}
                    self._send(200, {"request_id": f"gen-{len(scripted.requests)}", "choices": [choice]})
                elif self.path.endswith("/chat/completions"):
                    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
                    task = scripted.find(user if isinstance(user, str) else user[0]["text"])
                    reply = scripted.reply("chat", task, body, train=False)
                    message = {"role": "assistant", "content": reply.text}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    n = len(model.token_ids(reply.text))
                    usage = {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1}
                    completion = {"id": "chat-1", "object": "chat.completion", "created": int(time.time())}
                    self._send(200, {**completion, "model": body.get("model"), "choices": [choice], "usage": usage})
                else:  # admin: /update_weights, /v1/load_lora_adapter, ...
                    scripted.requests.append((self.path, body))
                    self._send(200, {})
            except LookupError as exc:
                self._send(400, {"error": str(exc)})

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


# -- the stand-in trainer ----------------------------------------------------------------------------------------


def split_samples(micro_batch) -> list[dict]:  # noqa: ANN001
    """The samples packed into one micro-batch (position ids restart at 0 at each), with their token ids, loss mask
    and advantages."""
    samples: list[dict] = []
    for i, pos in enumerate(micro_batch.position_ids):
        if pos == 0:
            samples.append({"ids": [], "mask": [], "adv": []})
        if not samples:
            continue
        samples[-1]["ids"].append(micro_batch.input_ids[i])
        samples[-1]["mask"].append(micro_batch.loss_mask[i])
        samples[-1]["adv"].append(micro_batch.advantages[i])
    return [s for s in samples if any(s["mask"])]


def stand_in_trainer(output_dir: Path, max_steps: int, shipped: dict[int, list[dict]], stop: threading.Event) -> None:
    """Publish v0, then per shipped step k: read it with prime-rl's FileSystemMicroBatchReceiver, publish vk."""
    from prime_rl.transports.rollouts.filesystem import FileSystemMicroBatchReceiver

    def publish(step: int) -> None:
        path = output_dir / "broadcasts" / f"step_{step}"
        path.mkdir(parents=True, exist_ok=True)
        (path / "STABLE").touch()

    publish(0)
    receiver = FileSystemMicroBatchReceiver(output_dir, data_rank=0, current_step=1)
    while not stop.is_set() and receiver.current_step <= max_steps:
        if not receiver.can_receive():
            time.sleep(0.2)
            continue
        step = receiver.current_step
        shipped[step] = [s for mb in receiver.receive() for s in split_samples(mb)]
        publish(step)


# -- the checks ---------------------------------------------------------------------------------------------------


def sampling_problems(route: str, body: dict, want: dict) -> list[str]:
    """How a request's sampling differs from ``want`` (the TOML's), in the fields vLLM reads."""
    fields = body.get("sampling_params", {}) if route == "generate" else body
    problems = [f"{route}: {k} = {fields.get(k)!r}, the TOML says {v!r}" for k, v in want.items() if fields.get(k) != v]
    hidden = [k for k in VLLM_SAMPLING_FIELDS if k in (body.get("extra_body") or {})]
    if hidden:
        problems.append(f"{route}: {hidden} inside a literal extra_body key, which vLLM does not read")
    return problems


def expected_sampling(orchestrator: dict, inference: dict) -> tuple[dict, dict, list[str]]:
    """The sampling fields vLLM must receive for training (token route) and eval (chat), from the resolved config;
    and what is wrong with the config itself (the model's generation config must not fill unset fields)."""
    train = orchestrator["train"]["sampling"]
    extra = orchestrator["train"]["source"][0].get("sampling", {}).get("extra_body", {})
    want_train = {"temperature": train["temperature"], "top_p": 1.0, "max_tokens": train["max_completion_tokens"]}
    want_train |= {k: extra[k] for k in ("top_k", "min_p") if k in extra}
    ev = orchestrator["eval"]["sampling"]
    # verifiers' SamplingConfig sends max_completion_tokens as max_tokens (vLLM reads both)
    want_eval = {"temperature": ev["temperature"], "top_p": ev["top_p"], "max_tokens": ev["max_completion_tokens"]}
    problems = []
    if inference.get("vllm", {}).get("generation_config") != "vllm":
        problems.append(
            "inference.vllm.generation_config is not 'vllm': the model's generation config sets top_k/min_p "
            "(and any other field a request leaves unset) for eval requests"
        )
    if ev.get("top_k") is not None or ev.get("min_p") is not None:
        problems.append("eval sampling sets top_k/min_p: prime-rl sends them in a literal extra_body vLLM ignores")
    return want_train, want_eval, problems


@dataclass(frozen=True)
class Row:
    step: int
    task: str
    kind: str
    reward: float
    advantage: float
    expected_advantage: float


def check_batches(
    shipped: dict[int, list[dict]], scripted: Scripted, weights: dict[str, float]
) -> tuple[list[Row], list[str], list[str]]:
    """Every shipped sample against the scripted replies: its reward (DrugProt's rules), its advantage (reward minus
    the group mean), whole groups only, and groups left out only for zero advantage."""
    by_text = {task.key: task for task in scripted.tasks.values()}
    rows: list[Row] = []
    problems: list[str] = []
    notes: list[str] = []
    shipped_tasks: Counter[str] = Counter()
    for step, samples in sorted(shipped.items()):
        for sample in samples:
            text = model.detokenize(sample["ids"])
            completion = model.detokenize([t for t, m in zip(sample["ids"], sample["mask"], strict=True) if m])
            task = next((t for t in by_text.values() if t.key in text), None)
            reply = next((r for r in (task.replies if task else []) if completion.startswith(r.text)), None)
            if task is None or reply is None:
                problems.append(f"step {step}: a sample matches no scripted task/reply")
                continue
            rewards = [sum(r.expected(weights).values()) for r in task.served]
            reward = sum(reply.expected(weights).values())
            want = reward - sum(rewards) / len(rewards)
            advs = {a for a, m in zip(sample["adv"], sample["mask"], strict=True) if m}
            if len(advs) != 1:
                problems.append(f"step {step}: advantages differ within one sample: {sorted(advs)}")
            adv = advs.pop()
            if abs(adv - want) > 1e-6:
                problems.append(f"step {step} task {task.key[:40]!r}: advantage {adv} != {want}")
            rows.append(Row(step, task.name, reply.kind, reward, adv, want))
            shipped_tasks[task.key] += 1
    for task in (t for t in scripted.tasks.values() if t.served):
        n = shipped_tasks.get(task.key, 0)
        if task.uniform and n:
            reward = sum(task.served[0].expected(weights).values())
            advantages = sorted({row.advantage for row in rows if row.task == task.name})
            problems.append(
                f"a group of {len(task.served)} equal rewards ({task.served[0].kind}, reward {reward!r}) reached the "
                f"trainer ({n} samples, advantages {advantages}, not 0.0): prime-rl's float32 mean of the group is "
                "not the reward, so filter_zero_advantages kept it; every reward must have exact float32 group means "
                "(drugprot.core.rewards.exact_group_means)"
            )
        if n and n != len(task.served):
            problems.append(f"a group was shipped in part: {n} of {len(task.served)} samples")
        if not n and not task.uniform:
            notes.append(f"a group of {len(task.served)} rollouts with differing rewards was not shipped")
    return rows, problems, notes


# -- the run command ----------------------------------------------------------------------------------------------


def load_tasks(orchestrator_json: Path) -> tuple[dict[str, Task], dict[str, float]]:
    """Every train and eval task of the (configured) orchestrator config, keyed by its user prompt; the train
    taskset's resolved reward weights."""
    import verifiers.v1 as vf
    from prime_rl.configs.orchestrator import OrchestratorConfig
    from prime_rl.utils.config import cli

    from drugprot.core.labels import letter_of, options

    config = cli(OrchestratorConfig, args=["@", str(orchestrator_json)])
    tasks: dict[str, Task] = {}
    for source in [*config.train.source, *config.eval.source]:
        ts = source.env.taskset
        for task in vf.load_taskset(ts):
            data = task.data
            letters = "".join(label.letter for label in options(data.with_no_relation))
            gold = [letter_of(label) for label in data.labels]
            replies = model.replies_for(gold, letters, ts.fp_cost, ts.fn_cost)
            tasks.setdefault(data.prompt_text, Task(data.prompt_text, task.key, list(data.labels), replies))
    ts = config.train.source[0].env.taskset
    weights = {"accuracy": ts.accuracy_weight, "utility": ts.utility_weight, "format": ts.format_weight}
    return tasks, weights


def scale_down(orchestrator: dict, *, max_steps: int, batch_size: int, eval_tasks: int, output_dir: Path) -> dict:
    """The recipe's resolved orchestrator config at CPU size: a few steps, a smaller batch of whole groups (the
    group size stays), a small eval every step, rollouts to the trainer over the filesystem transport (pure)."""
    config = json.loads(json.dumps(orchestrator))
    config["max_steps"] = max_steps
    config["batch_size"] = batch_size
    config["output_dir"] = str(output_dir)
    config["rollout_transport"] = {"type": "filesystem"}
    config["eval"]["interval"] = 1
    for source in config["eval"]["source"]:
        source["interval"] = 1
        source["env"]["taskset"]["num_tasks"] = eval_tasks
    for source in config["train"]["source"]:
        source["env"]["taskset"]["num_tasks"] = 200
    return config


def cmd_run(args: argparse.Namespace) -> int:
    configs, work = Path(args.configs), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = work / "byte-tokenizer"
    model.save_byte_tokenizer(tokenizer)
    orchestrator = json.loads((configs / "orchestrator.json").read_text(encoding="utf-8"))
    inference = json.loads((configs / "inference.json").read_text(encoding="utf-8"))
    want_train, want_eval, problems = expected_sampling(orchestrator, inference)
    output_dir = work / "run"
    scaled = scale_down(
        orchestrator,
        max_steps=args.steps,
        batch_size=args.batch_size,
        eval_tasks=args.eval_tasks,
        output_dir=output_dir,
    )
    lora = (orchestrator["model"].get("lora") or {}).get("name") or "r16-a64.0"
    tasks: dict[str, Task] = {}
    scripted = Scripted(tasks)
    server = make_server(scripted, [str(tokenizer), lora])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    knobs = {"tokenizer": str(tokenizer), "base_url": base_url, "data": str(Path(args.data).resolve())}
    knobs["taskset"] = {}
    orch = rollouts.configure(scaled, harness=args.harness, **knobs)
    for source in orch["eval"]["source"]:
        source["env"]["taskset"]["data_path"] = knobs["data"]
        source["env"]["agent"]["harness"] = {"id": args.harness}
    orch["model"]["client"]["admin_base_url"] = [base_url.removesuffix("/v1")]
    servers, procs = [], []
    for kind, source in [("train", s) for s in orch["train"]["source"]] + [("eval", s) for s in orch["eval"]["source"]]:
        env_cfg = json.loads((configs / "envs" / kind / f"{source['name']}.json").read_text(encoding="utf-8"))
        env_cfg = rollouts.configure(env_cfg, harness=args.harness, **knobs)
        address = f"tcp://127.0.0.1:{rollouts._free_port()}"
        env_cfg["serve"]["address"] = address
        source["serve"] = {**source.get("serve", {}), "address": address}
        path = work / f"env-server-{kind}.json"
        path.write_text(json.dumps(env_cfg, indent=2))
        servers.append(path)
    orch_json = work / "orchestrator.json"
    orch_json.write_text(json.dumps(orch, indent=2))
    loaded, weights = load_tasks(orch_json)
    tasks.update(loaded)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_PROXY": "127.0.0.1,localhost"}
    bin_dir = Path(sys.executable).parent
    for path in servers:
        log = open(path.with_suffix(".log"), "wb")  # noqa: SIM115
        procs.append(
            subprocess.Popen([str(bin_dir / "env-server"), "@", str(path)], stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        )  # fmt: skip
    shipped: dict[int, list[dict]] = {}
    stop = threading.Event()
    trainer = threading.Thread(target=stand_in_trainer, args=(output_dir, args.steps, shipped, stop), daemon=True)
    trainer.start()
    print(f"orchestrator @ {orch_json.relative_to(work.parent)}: {args.steps} steps, batch {args.batch_size}, "
          f"eval {args.eval_tasks} tasks every step; harness {args.harness}; data {Path(args.data).name}")  # fmt: skip
    t0 = time.perf_counter()
    try:
        with open(work / "orchestrator.log", "wb") as log:
            rc = subprocess.run(
                [sys.executable, __file__, "orchestrator", "@", str(orch_json)], stdout=log, stderr=subprocess.STDOUT,
                env=env, timeout=args.timeout, check=False,
            ).returncode  # fmt: skip
    except subprocess.TimeoutExpired:
        rc = 124
    finally:
        stop.set()
        for proc in procs:
            rollouts._stop(proc)
        server.shutdown()
    print(f"orchestrator exit {rc} after {time.perf_counter() - t0:.0f} s (log: {work.name}/orchestrator.log)")
    if rc != 0:
        problems.append(f"the orchestrator exited with {rc}")
    for route, body in scripted.requests:
        if route in ("generate", "chat"):
            problems += sampling_problems(route, body, want_train if route == "generate" else want_eval)
    routes = Counter(route for route, _ in scripted.requests)
    print(f"requests: {dict(routes)}")
    for route, want in (("generate", want_train), ("chat", want_eval)):
        sent = next((body for r, body in scripted.requests if r == route), None)
        fields = (sent or {}).get("sampling_params", {}) if route == "generate" else (sent or {})
        got = {k: fields.get(k) for k in VLLM_SAMPLING_FIELDS if k in fields}
        print(f"{'train' if route == 'generate' else 'eval'} request sampling {got}; TOML {want}")
    if len(shipped) < args.steps:
        problems.append(f"{len(shipped)} of {args.steps} steps reached the trainer")
    rows, batch_problems, notes = check_batches(shipped, scripted, weights)
    problems += batch_problems
    by_step: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        by_step[row.step].append(row)
    for step, step_rows in sorted(by_step.items()):
        print(f"step {step}: {len(step_rows)} samples to the trainer")
        print(f"   {'task':<20} {'reply':<20} {'env reward':>10} {'advantage':>10} {'reward - group mean':>19}")
        for r in sorted(step_rows, key=lambda r: (r.task, -r.reward, r.kind)):
            adv = f"{r.advantage:+.4f}" if abs(r.advantage) >= 5e-5 else f"{r.advantage:+.1e}"
            print(f"   {r.task:<20} {r.kind:<20} {r.reward:10.3f} {adv:>10} {r.expected_advantage:+19.4f}")
    table, curve_problems = curves_check(work)
    print("\n".join(table))
    problems += curve_problems
    uniform = [t for t in tasks.values() if t.uniform and t.served]
    print(f"one-reward groups scripted (every {UNIFORM_EVERY}rd train task): {len(uniform)}")
    for note in notes:
        print(f"NOTE: {note}")
    for p in problems:
        print(f"PROBLEM: {p}")
    print(f"\n{'FAIL' if problems else 'PASS'}: {len(problems)} problem(s)")
    return 1 if problems else 0


def curves_check(work: Path) -> tuple[list[str], list[str]]:
    """``drugprot curves`` on the loop's own ``metrics.jsonl`` (prime-rl's file monitor, under ``work``) with its
    ``orchestrator.log``: the table, and a problem unless both of prime-rl's scopes were read and the all-rollouts
    trainable share falls below 1 (one group in ``UNIFORM_EVERY`` is scripted all-equal); a note when the run wrote
    no metrics file."""
    from drugprot.evaluation import curves
    from drugprot.evaluation.curves_log import count_log

    found = sorted(work.rglob(curves.METRICS_FILE))
    if not found:
        return [f"NOTE: no {curves.METRICS_FILE} under {work.name}/ (the file monitor is off): curves not checked"], []
    run = curves.read_metrics(found[0])
    log = work / "orchestrator.log"
    run.log = count_log([log]) if log.is_file() else None
    problems = []
    if run.subsets.get("train/agg") != curves.SUBSETS:
        problems.append(f"drugprot curves read the train scopes {run.subsets.get('train/agg')}, not all and effective")
    shares = [value for _, value in run.curves.get(("train/agg", "agent", "trainable share"), [])]
    if not shares or min(shares) >= 1:
        problems.append(
            f"drugprot curves shows an all-rollouts trainable share of {shares}: one group in {UNIFORM_EVERY} is "
            "all-equal, so it must fall below 1"
        )
    return curves.format_table(run).splitlines(), problems


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["orchestrator"]:
        return cmd_orchestrator(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="the orchestrator loop against the scripted server, checked")
    run.add_argument("--configs", required=True, help="the configs/ directory `rl --dry-run` wrote (the recipe)")
    run.add_argument("--work", required=True, help="directory for the run")
    run.add_argument("--data", required=True, help="data_path for both sources")
    run.add_argument("--harness", default="drugprot")
    run.add_argument("--steps", type=int, default=2)
    run.add_argument("--batch-size", type=int, default=24, help="rollouts per step (3 groups of the recipe's 8)")
    run.add_argument("--eval-tasks", type=int, default=4)
    run.add_argument("--timeout", type=int, default=900)
    args = parser.parse_args(argv)
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
