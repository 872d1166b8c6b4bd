"""Helper of scripts/prime_rl_check.sh: prime-rl's own rollout path with drugprot, without a GPU.

Subcommands (run with the Python of the prime-rl venv the shell script builds):

* ``requirements``: prime-rl's direct dependencies as PyPI requirements, its ``uv.lock`` versions as
  constraints and its ``override-dependencies`` as overrides, leaving out every package prime-rl takes from
  a git or URL source (vLLM among them); path sources become the local checkouts.
* ``rollouts``: a byte-level tokenizer, a local token-route model server, prime-rl's ``env-server`` from a
  resolved env config, and one group of rollouts through prime-rl's orchestrator ``Env`` client; checks every
  reward against the gold labels and prints CPU seconds per rollout.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

# -- requirements -----------------------------------------------------------------------------------------

LOCAL_VERSION = re.compile(r"^([A-Za-z0-9._-]+==[^+ ;]+)\+[^ ;]+")
CUDA_LIBRARIES = re.compile(r"^(nvidia-|cuda-)")
"""Locked CUDA 12.8 runtime packages (prime-rl takes torch from the cu128 index); PyPI's torch of the same
version brings its own CUDA libraries, so these are not constrained."""


@dataclass(frozen=True)
class Requirements:
    requirements: list[str]
    constraints: list[str]
    overrides: list[str]
    left_out: dict[str, str]
    """Package name -> why it is not installed."""


def _name(requirement: str) -> str:
    from packaging.requirements import Requirement

    return Requirement(requirement).name.lower().replace("_", "-")


def plan_requirements(pyproject: dict, export_lines: list[str], prime_rl: Path) -> Requirements:
    """What to install for prime-rl from PyPI (pure; ``export_lines`` is ``uv export --frozen`` output)."""
    from packaging.requirements import Requirement

    uv = pyproject["tool"]["uv"]
    sources = {name.lower().replace("_", "-"): src for name, src in uv["sources"].items()}
    requirements: list[str] = []
    left_out: dict[str, str] = {}
    for dep in pyproject["project"]["dependencies"]:
        name = _name(dep)
        source = sources.get(name)
        sources_list = source if isinstance(source, list) else [source] if source else []
        remote = [s.get("git") or s.get("url") for s in sources_list if "git" in s or "url" in s]
        if remote:
            left_out[name] = f"taken from {remote[0]}"
        elif sources_list and "path" in sources_list[0]:
            path = prime_rl / sources_list[0]["path"]
            if (path / "pyproject.toml").is_file():
                extras = Requirement(dep).extras
                requirements.append(f"-e {path}" + (f"[{','.join(sorted(extras))}]" if extras else ""))
            else:  # a submodule left unchecked out: PyPI's release
                requirements.append(dep)
        else:
            requirements.append(dep)
    constraints = []
    for line in export_lines:
        line = line.strip()
        if not line or line.startswith(("#", "-e ")) or " @ " in line.split(";")[0]:
            continue
        if CUDA_LIBRARIES.match(line):
            continue
        constraints.append(LOCAL_VERSION.sub(r"\1", line))
    overrides = list(uv.get("override-dependencies", []))
    # [[tool.uv.dependency-metadata]] replaces a package's published requirements (modelexpress 0.3.0 says
    # protobuf<6, which its code does not need); uv pip has no such setting, so its entries become overrides.
    overridden = {_name(o) for o in overrides}
    for meta in uv.get("dependency-metadata", []):
        for dep in meta.get("requires-dist", []):
            if _name(dep) not in overridden:
                overrides.append(dep)
                overridden.add(_name(dep))
    return Requirements(requirements, constraints, overrides, left_out)


def cmd_requirements(args: argparse.Namespace) -> int:
    prime_rl = Path(args.prime_rl).resolve()
    pyproject = tomllib.loads((prime_rl / "pyproject.toml").read_text(encoding="utf-8"))
    export = Path(args.export).read_text(encoding="utf-8").splitlines()
    plan = plan_requirements(pyproject, export, prime_rl)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "requirements.txt").write_text("\n".join(plan.requirements) + "\n")
    (out / "constraints.txt").write_text("\n".join(plan.constraints) + "\n")
    (out / "overrides.txt").write_text("\n".join(plan.overrides) + "\n")
    print(f"{len(plan.requirements)} direct requirements, {len(plan.constraints)} locked versions as constraints")
    for name, why in plan.left_out.items():
        print(f"  left out {name}: {why}")
    return 0


# -- byte-level tokenizer --------------------------------------------------------------------------------

SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>")
"""Token ids 256 and 257; every other token is one byte (id = byte value)."""
EOS = SPECIAL_TOKENS[1]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _byte_chars() -> list[str]:
    """GPT-2's reversible byte -> printable character table, indexed by byte value."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def save_byte_tokenizer(directory: Path) -> None:
    """A Hugging Face fast tokenizer with one token per UTF-8 byte and a ChatML-style chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {char: byte for byte, char in enumerate(_byte_chars())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(SPECIAL_TOKENS))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=EOS, chat_template=CHAT_TEMPLATE)
    fast.save_pretrained(str(directory))


def token_ids(text: str) -> list[int]:
    """Our tokenizer's ids of plain text (no special tokens): its UTF-8 bytes."""
    return list(text.encode("utf-8"))


def detokenize(ids: list[int]) -> str:
    return b"".join(bytes([i]) if i < 256 else SPECIAL_TOKENS[i - 256].encode() for i in ids).decode(
        "utf-8", errors="replace"
    )


# -- the scripted replies and what drugprot must score them ----------------------------------------------


@dataclass(frozen=True)
class Reply:
    kind: str
    text: str
    accuracy: float
    """What drugprot's accuracy reward must be: 1 when the boxed letter is one of the pair's gold letters."""
    format: float
    """What the format reward must be: closed reasoning and exactly one valid boxed answer."""
    utility: float = 0.0
    """What the utility reward must be: 1 per gold type named, minus fp_cost per type named that is not gold, minus
    fn_cost per gold type not named (NO-RELATION is never a gold type; no answer names nothing)."""

    def expected(self, weights: dict[str, float]) -> dict[str, float]:
        """Each reward's weighted value, as verifiers records it."""
        terms = {"accuracy": self.accuracy, "utility": self.utility, "format": self.format}
        return {name: terms[name] * weight for name, weight in weights.items()}


def replies_for(gold_letters: list[str], letters: str, fp_cost: float, fn_cost: float) -> list[Reply]:
    """Four replies per task, each with the rewards the DrugProt rules give it (``letters``: the options;
    ``fp_cost``/``fn_cost``: the utility's costs, the taskset's)."""
    right = gold_letters[0]
    wrong = next(letter for letter in letters if letter not in gold_letters)
    think = "<think>The chemical acts on the gene product.</think>"
    types = sum(letter != "N" for letter in gold_letters)  # the pair's gold relation types
    missed = -fn_cost * types  # no relation named: every gold type a false negative
    right_utility = 0.0 if right == "N" else 1.0 - fn_cost * (types - 1)
    return [
        Reply("gold answer", f"{think}\n\\boxed{{{right}}}", 1.0, 1.0, right_utility),
        Reply("wrong answer", f"{think}\n\\boxed{{{wrong}}}", 0.0, 1.0, missed - fp_cost),
        Reply("no boxed answer", f"{think}\nThe answer is {right}.", 0.0, 0.0, missed),
        # no completed reasoning: no answer (drugprot.core.parsing), so neither accuracy nor format
        Reply("gold, no reasoning", f"\\boxed{{{right}}}", 0.0, 0.0, missed),
    ]


DEFAULT_TASKSET = ("format_weight=0.2",)
"""The rollouts' taskset fields unless ``--taskset`` says otherwise: a non-default reward weight (drugprot's
default is 0.1), set the way a user sets it, so the check sees the env-server score with it."""


# -- the token-route model server -------------------------------------------------------------------------

LOGPROB = -0.25
"""The logprob the server reports for every sampled token."""


class Script:
    """Which replies the server gives: per registered user prompt, the replies in turn (thread-safe)."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._replies: dict[str, list[Reply]] = {}
        self._served: dict[str, int] = {}
        self.requests: list[dict] = []

    def register(self, user_prompt: str, replies: list[Reply]) -> None:
        with self._lock:
            self._replies[user_prompt] = replies
            self._served[user_prompt] = 0

    def next_reply(self, prompt_text: str, body: dict) -> Reply:
        with self._lock:
            keys = [k for k in self._replies if k in prompt_text]
            if len(keys) != 1:
                raise LookupError(f"prompt matches {len(keys)} registered tasks")
            key = keys[0]
            reply = self._replies[key][self._served[key] % len(self._replies[key])]
            self._served[key] += 1
            self.requests.append({"kind": reply.kind, "prompt_tokens": len(body["token_ids"]), **body})
            return reply


def make_server(script: Script, model: str, max_model_len: int):
    """A ThreadingHTTPServer on 127.0.0.1 (free port) speaking vLLM's token route and ``GET /v1/models``."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                card = {"id": model, "object": "model", "owned_by": "prime-rl-check", "max_model_len": max_model_len}
                self._send(200, {"object": "list", "data": [card]})
            else:
                self._send(404, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            if self.path != "/inference/v1/generate":
                self._send(404, {"error": f"no route {self.path}"})
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                reply = script.next_reply(detokenize(body["token_ids"]), body)
            except LookupError as exc:
                self._send(400, {"error": str(exc)})
                return
            ids = [*token_ids(reply.text), 256 + SPECIAL_TOKENS.index(EOS)]
            choice = {
                "index": 0,
                "token_ids": ids,
                "finish_reason": "stop",
                "logprobs": {"content": [{"token": f"token_id:{i}", "logprob": LOGPROB} for i in ids]},
            }
            self._send(200, {"request_id": f"gen-{len(script.requests)}", "choices": [choice]})

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


# -- CPU accounting ---------------------------------------------------------------------------------------


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of ``root`` and its live descendants, plus their reaped children (Linux /proc)."""
    import os

    ticks = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ppid = int(fields[1])
        cpu = sum(int(f) for f in fields[11:15]) / ticks  # utime stime cutime cstime
        stats[int(entry.name)] = (ppid, cpu)
    total, frontier = 0.0, [root]
    while frontier:
        pid = frontier.pop()
        total += stats.get(pid, (0, 0.0))[1]
        frontier += [child for child, (ppid, _) in stats.items() if ppid == pid]
    return total


# -- one group through prime-rl's orchestrator Env client -------------------------------------------------


@dataclass(frozen=True)
class Checked:
    """One rollout of the group, as prime-rl's orchestrator sees it, against what it must be."""

    kind: str
    reward: float
    expected: float
    advantage: float | None
    sampled_tokens: int
    problems: list[str]


def check_trace(trace, reply: Reply | None, weights: dict[str, float], samples: list) -> list[str]:
    """Every way this trace differs from the scripted reply and prime-rl's training sample of it."""
    if reply is None:
        return [f"no scripted reply matched (ok={trace.ok}, errors={[e.message[:200] for e in trace.errors]})"]
    problems = []
    if not trace.ok:
        problems.append(f"trace not ok: {[e.message[:200] for e in trace.errors]}")
    want = reply.expected(weights)
    expected = sum(want.values())
    got = {name: (r.value if r is not None else None) for name, r in trace.rewards.items()}
    if set(got) != set(want) or any(got[k] is None or abs(got[k] - want[k]) > 1e-9 for k in want):
        problems.append(f"rewards {got} != {want}")
    if abs(trace.reward - expected) > 1e-9:
        problems.append(f"reward {trace.reward} != {expected}")
    reply_ids = [*token_ids(reply.text), 256 + SPECIAL_TOKENS.index(EOS)]
    if len(samples) != 1:
        problems.append(f"{len(samples)} training samples, expected 1")
    else:
        sample = samples[0]
        sampled = [t for t, m in zip(sample.token_ids, sample.mask, strict=True) if m]
        logprobs = [lp for lp, m in zip(sample.logprobs, sample.mask, strict=True) if m]
        if sampled != reply_ids:
            problems.append(f"sampled tokens {detokenize(sampled)!r} != the server's {reply.text!r} + EOS")
        if logprobs != [LOGPROB] * len(reply_ids):
            problems.append("sampled-token logprobs differ from the server's")
    return problems


def reply_of(trace, replies: list[Reply]) -> Reply | None:
    """Which scripted reply this trace got (by the assistant message it recorded)."""
    messages = trace.assistant_messages
    if not messages:
        return None
    content = (messages[-1].content or "").strip()
    reasoning = (messages[-1].reasoning_content or "").strip()
    for reply in replies:
        text = reply.text
        if "</think>" in text:
            think, _, rest = text.partition("</think>")
            if reasoning == think.removeprefix("<think>").strip() and content == rest.strip():
                return reply
        elif content == text.strip() and not reasoning:
            return reply
    return None


@dataclass(frozen=True)
class GroupRun:
    checked: list[Checked]
    env_server_cpu_s: float
    """CPU seconds of the env-server process tree (workers, harness subprocesses) during the rollouts."""
    driver_cpu_s: float
    """CPU seconds of this process (orchestrator Env client and the model server) during the rollouts."""
    wall_s: float


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
            "install that commit, or port PRIME_RL_NAMES and their uses in scripts/prime_rl_check.py to the "
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
            print(f"group {number}: {'reply':<20} {'reward':>7} {'expected':>8} {'advantage':>9} {'sampled':>7}  check")
            for c in sorted(run.checked, key=lambda c: (-c.expected, c.kind)):
                adv = f"{c.advantage:+.4f}" if c.advantage is not None else "-"
                verdict = "ok" if not c.problems else "; ".join(c.problems)
                print(
                    f"         {c.kind:<20} {c.reward:7.3f} {c.expected:8.3f} {adv:>9} {c.sampled_tokens:7d}  {verdict}"
                )
            failures += sum(bool(c.problems) for c in run.checked) + (len(run.checked) != group_size)
            n = len(run.checked)
            print(
                f"         CPU-s per rollout: env-server tree {run.env_server_cpu_s / n:.2f}, orchestrator client + "
                f"model server {run.driver_cpu_s / n:.3f}; wall {run.wall_s:.1f} s for the group of {n}"
            )
    server.shutdown()
    print(f"\n{'FAIL' if failures else 'PASS'}: {failures} problem(s)")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    req = sub.add_parser("requirements", help="requirements, constraints and overrides files for uv pip")
    req.add_argument("--prime-rl", required=True, help="prime-rl checkout")
    req.add_argument("--export", required=True, help="output of `uv export --frozen` in that checkout")
    req.add_argument("--out", required=True, help="directory for the three files")
    req.set_defaults(func=cmd_requirements)
    rol = sub.add_parser("rollouts", help="env-server + one group through the orchestrator Env client, checked")
    rol.add_argument("--configs", required=True, help="the configs/ directory `rl --dry-run` wrote")
    rol.add_argument("--work", required=True, help="directory for the tokenizer, configs and logs")
    rol.add_argument("--data", required=True, help="data_path for the taskset (parquet/jsonl/TSV dir)")
    rol.add_argument("--harness", nargs="+", default=["null"], help="harness ids, one env-server each")
    rol.add_argument("--group-size", type=int, default=0, help="rollouts per group (default: the config's)")
    rol.add_argument("--groups", type=int, default=2, help="groups per harness (the first starts the workers)")
    rol.add_argument(
        "--taskset",
        nargs="*",
        default=list(DEFAULT_TASKSET),
        metavar="KEY=VALUE",
        help=f"taskset fields to set (default: {' '.join(DEFAULT_TASKSET)}, a weight other than drugprot's default, "
        "which the env-server must score with; pass --taskset alone for none)",
    )
    rol.set_defaults(func=cmd_rollouts)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
