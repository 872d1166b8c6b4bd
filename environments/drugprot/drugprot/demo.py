"""``drugprot demo``: the whole evaluation flow offline, with no model, API key or dataset download.

1. Serves the ``lexical`` baseline (``drugprot.baselines``) as an OpenAI-compatible streaming endpoint on
   127.0.0.1 (``drugprot.serve.OpenAIServer``). It reads the marked pair from each prompt and replies in
   the environment's format: reasoning in ``<think></think>``, then one ``\\boxed{}`` letter.
2. Runs the real verifiers v1 eval CLI on the package's SYNTHETIC sample set (``drugprot/sample/``):
   ``vf-eval drugprot`` on verifiers 0.4, the ``eval`` script on 0.3.1 (whose ``vf-eval`` is the legacy
   CLI), with ``--env.taskset.data-path <sample> --client.base-url <local server> --no-push``.
3. Prints ``drugprot report`` of the run.

The taskset's ``null`` harness runs its chat program with ``uv``: the first run needs ``uv`` and PyPI (or
a warm uv cache); the demo says so when the run fails that way.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path
from typing import Any

from drugprot.baselines import Prediction, fallback_label, lexical_label, reply_text
from drugprot.errors import DrugprotError
from drugprot.labels import NO_RELATION
from drugprot.prompts import CHEMICAL_TAGS, GENE_TAGS
from drugprot.report import V1_FILE, format_report, load_run, summarize
from drugprot.serve import OpenAIServer, Reply, last_user_text
from drugprot.tasks import parse_negatives

EVAL_ENTRY_POINT = "verifiers.v1.cli.eval.main:main"
"""The console-script target of verifiers' v1 eval CLI (``vf-eval`` in 0.4.0, ``eval`` in 0.3.1)."""
MODEL = "drugprot-lexical-baseline"
DEFAULT_TASKS = 22
"""Tasks a plain ``drugprot demo`` evaluates: the sample's first five abstracts with ``negatives=all``."""
KEY_VAR = "DRUGPROT_DEMO_API_KEY"
_ABSTRACT = re.compile(r"Abstract \(PMID [^)]*\):\n(?P<text>.*?)\n\nChemical: \"(?P<chem>.*?)\"(?P<rest>.*)", re.DOTALL)
_GENE_NAME = re.compile(r"Gene/protein: \"(?P<gene>.*?)\"")
_UV_HINT = (
    "The taskset's null harness runs its chat program with uv: it needs `uv` on PATH and, the first time, "
    "PyPI access (or a warm uv cache). Install uv (https://docs.astral.sh/uv/) and run the demo once online."
)
_UV_FAILURE = re.compile(r"\buv\b|pypi|failed to (download|fetch|resolve)|network|dns|connection", re.IGNORECASE)


class DemoError(DrugprotError, RuntimeError):
    """The demo could not run (no eval CLI, or the run failed); the message says what to do."""


# ------------------------------------------------------------------------------------------- the "model"


@dataclass(frozen=True, slots=True)
class PromptPair:
    """What the lexical baseline needs from a prompt: the plain text and the two mention spans."""

    text: str
    chemical: tuple[int, int]
    gene: tuple[int, int]
    with_no_relation: bool


def _unmark(marked: str) -> tuple[str, dict[str, int]]:
    """Text without the mention tags, and the plain-text position of each tag."""
    tags = (*CHEMICAL_TAGS, *GENE_TAGS)
    pattern = re.compile("|".join(re.escape(tag) for tag in tags))
    positions: dict[str, int] = {}
    parts, removed, last = [], 0, 0
    for match in pattern.finditer(marked):
        parts.append(marked[last : match.start()])
        positions.setdefault(match.group(0), match.start() - removed)
        removed += len(match.group(0))
        last = match.end()
    parts.append(marked[last:])
    return "".join(parts), positions


def pair_from_prompt(prompt: str) -> PromptPair | None:
    """The abstract and the pair's spans from a DrugProt user prompt (``drugprot.prompts.user_prompt``).

    Marked mentions give exact spans; without marks, the first occurrence of each quoted name is used.
    None when the prompt is not a DrugProt prompt or a mention cannot be found.
    """
    match = _ABSTRACT.search(prompt)
    if match is None:
        return None
    with_nr = f"\n{NO_RELATION.letter}. {NO_RELATION.name}" in prompt
    text, tags = _unmark(match.group("text"))
    if all(tag in tags for tag in (*CHEMICAL_TAGS, *GENE_TAGS)):
        chemical = (tags[CHEMICAL_TAGS[0]], tags[CHEMICAL_TAGS[1]])
        gene = (tags[GENE_TAGS[0]], tags[GENE_TAGS[1]])
        return PromptPair(text, chemical, gene, with_nr)
    gene_match = _GENE_NAME.search(match.group("rest"))
    chem_name, gene_name = match.group("chem"), gene_match.group("gene") if gene_match else ""
    chem_at, gene_at = text.find(chem_name), text.find(gene_name)
    if not chem_name or not gene_name or chem_at < 0 or gene_at < 0:
        return None
    return PromptPair(text, (chem_at, chem_at + len(chem_name)), (gene_at, gene_at + len(gene_name)), with_nr)


def lexical_reply(prompt: str) -> str:
    """The lexical baseline's reply to one DrugProt prompt, in the think/boxed format."""
    pair = pair_from_prompt(prompt)
    if pair is None:
        with_nr = f"\n{NO_RELATION.letter}. {NO_RELATION.name}" in prompt
        label = fallback_label(with_nr)
        return reply_text(Prediction(label, f"could not find the marked pair, so {label}"))
    return reply_text(lexical_label(pair.text, pair.chemical, pair.gene, with_no_relation=pair.with_no_relation))


def lexical_responder(body: Mapping[str, Any]) -> Reply:
    """A ``drugprot.serve`` responder: the lexical baseline answering the request's last user message."""
    return Reply(content=lexical_reply(last_user_text(body)))


# ------------------------------------------------------------------------------------------- the eval CLI


@contextlib.contextmanager
def sample_path() -> Iterator[Path]:
    """The packaged synthetic sample file as a real path (``drugprot/sample/drugprot_sample.jsonl``)."""
    resource = importlib.resources.files("drugprot").joinpath("sample", "drugprot_sample.jsonl")
    with importlib.resources.as_file(resource) as path:
        if not path.is_file():
            raise DemoError(f"the sample set is missing from the installed package ({path}); reinstall drugprot")
        yield path


def eval_command() -> list[str]:
    """The command that starts verifiers' v1 eval CLI in this environment.

    The console script whose target is ``EVAL_ENTRY_POINT`` (``vf-eval`` on 0.4.0, ``eval`` on 0.3.1),
    looked up next to this Python first, then on PATH; if the script file is missing, the same entry
    point through this interpreter.

    Raises:
        DemoError: the installed verifiers has no v1 eval CLI.
    """
    names = [ep.name for ep in entry_points(group="console_scripts") if ep.value.replace(" ", "") == EVAL_ENTRY_POINT]
    if not names:
        raise DemoError("no verifiers v1 eval CLI is installed: pip install 'verifiers>=0.3.1.dev59,<0.5'")
    name = "vf-eval" if "vf-eval" in names else names[0]
    script = Path(sys.executable).parent / name
    if script.is_file():
        return [str(script)]
    found = shutil.which(name)
    if found:
        return [found]
    module, attr = EVAL_ENTRY_POINT.split(":")
    code = f"import sys; sys.argv[0] = {name!r}; from {module} import {attr}; sys.exit({attr}())"
    return [sys.executable, "-c", code]


def serves_env_workers() -> bool:
    """Whether the installed verifiers' v1 eval CLI runs rollouts in env-server worker processes by default.

    verifiers 0.3.x does (``--no-serve`` runs them in-process, which spares re-importing verifiers in a
    worker); 0.4 has no such option.
    """
    try:
        major_minor = tuple(int(part) for part in re.findall(r"\d+", version("verifiers"))[:2])
    except PackageNotFoundError:
        return False
    return major_minor < (0, 4)


def eval_arguments(base_url: str, data_path: Path, output_dir: Path, *, rollouts: int = 1, negatives: str = "all",
                   num_tasks: int | None = None, in_process: bool = False) -> list[str]:
    """The eval CLI's arguments for the demo run (after the command itself); ``in_process`` adds ``--no-serve``."""
    args = [
        "drugprot", "-m", MODEL,
        "--client.base-url", base_url, "--client.api-key-var", KEY_VAR,
        "--no-push", "--no-rich",
        "-r", str(rollouts), "-o", str(output_dir),
        "--env.taskset.data-path", str(data_path),
        "--env.taskset.negatives", str(negatives),
    ]
    if num_tasks is not None:
        args += ["-n", str(num_tasks)]
    if in_process:
        args.append("--no-serve")
    return args


def _run_cli(argv: list[str], env: Mapping[str, str], log_path: Path | None, timeout: float) -> int:
    """Run the eval CLI (output to ``log_path``, or the terminal) and return its exit code.

    It runs in its own process group, so a timeout also stops the harness processes it started.

    Raises:
        DemoError: it did not finish within ``timeout`` seconds.
    """
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(log_path.open("w", encoding="utf-8")) if log_path else None
        proc = subprocess.Popen(argv, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT if log else None, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise DemoError(f"the eval CLI did not finish in {timeout:.0f} s; log: {log_path}") from None


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run_demo(output_dir: Path, *, rollouts: int = 1, negatives: str = "all", num_tasks: int | None = None,
             timeout: float = 600.0, verbose: bool = False) -> dict[str, Any]:
    """Serve the lexical baseline, run the eval CLI on the sample set into ``output_dir``, and report it.

    Returns:
        ``{"report": <summarize() dict>, "run_dir", "command", "seconds", "eval_seconds"}``.

    Raises:
        DemoError: no eval CLI, the run failed or timed out, or most rollouts errored (the message carries
            the end of the CLI's log and, when it looks like one, the uv/PyPI hint).
    """
    started = time.monotonic()
    negatives = str(parse_negatives(negatives))
    command = eval_command()
    output_dir.mkdir(parents=True, exist_ok=True)
    log_path = output_dir / "eval-cli.log"
    with sample_path() as data_path, OpenAIServer(lexical_responder, port=0, models=(MODEL,)) as server:
        argv = command + eval_arguments(server.base_url, data_path, output_dir, rollouts=rollouts,
                                        negatives=negatives, num_tasks=num_tasks, in_process=serves_env_workers())
        before = set(output_dir.rglob(V1_FILE))
        eval_started = time.monotonic()
        returncode = _run_cli(argv, {**os.environ, KEY_VAR: "demo"}, None if verbose else log_path, timeout)
        eval_seconds = time.monotonic() - eval_started
    if returncode != 0:
        tail = _tail(log_path)
        hint = f"\n{_UV_HINT}" if _UV_FAILURE.search(tail) or shutil.which("uv") is None else ""
        raise DemoError(f"the eval CLI failed (exit {returncode}): {' '.join(argv)}\n{tail}{hint}")
    created = sorted(set(output_dir.rglob(V1_FILE)) - before)
    if len(created) != 1:
        raise DemoError(f"expected one new run with {V1_FILE} under {output_dir}, found {len(created)}; "
                        f"log: {log_path}")
    run = load_run(created[0])
    report = summarize(run)
    errored = report["errored"]
    if report["failed"]:  # most rollouts errored: the figures would describe the failure, not the baseline
        raise DemoError(f"{errored['rollouts']} of {report['n_rollouts']} rollouts failed (first: "
                        f"{errored['example']}); see {run.path}/traces.jsonl\n{_UV_HINT}")
    return {"report": report, "run_dir": run.path, "command": argv, "seconds": time.monotonic() - started,
            "eval_seconds": eval_seconds}


# ------------------------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--negatives", default="all",
                        help="NO-RELATION candidates of the sample tasks: all (default), k per gold pair, or 0")
    parser.add_argument("-r", "--rollouts", type=int, default=1, help="rollouts per task (default 1)")
    parser.add_argument("-n", "--num-tasks", type=int, default=DEFAULT_TASKS,
                        help=f"evaluate the first N tasks (default {DEFAULT_TASKS}: the first five abstracts, about a "
                             "minute on 2 cores; every rollout starts the harness's chat program)")
    parser.add_argument("--all", action="store_true",
                        help="evaluate every task of the sample (43 with negatives=all)")
    parser.add_argument("--output-dir", help="keep the run here (default: a temporary directory, removed)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to allow the eval CLI (default 600)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the eval CLI's output as it runs")


def _footer(result: Mapping[str, Any], kept: bool) -> list[str]:
    where = f"run kept in {result['run_dir']}" if kept else "run removed (pass --output-dir to keep it)"
    return [
        "",
        f"demo: {result['seconds']:.1f} s in all, {result['eval_seconds']:.1f} s in the eval CLI; {where}",
        f"ran: {' '.join(result['command'])}",
        *(["`drugprot demo --all` evaluates every task of the sample (the negatives=all setting over the whole "
           "file, which the report then calls comparable)."] if result["report"]["run"]["limit"] else []),
        "The data is SYNTHETIC (drugprot/sample/README.md) and the 'model' is the lexical baseline: the numbers "
        "show the flow, not DrugProt performance.",
    ]


def run(args: argparse.Namespace) -> int:
    keep = args.output_dir is not None
    with contextlib.ExitStack() as stack:
        output_dir = Path(args.output_dir) if keep else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="drugprot-demo-")))
        if not args.json:
            print(f"drugprot demo: serving the lexical baseline on 127.0.0.1 and running the eval CLI on the "
                  f"synthetic sample set (negatives={args.negatives}) ...", file=sys.stderr, flush=True)
        try:
            result = run_demo(output_dir, rollouts=args.rollouts, negatives=args.negatives,
                              num_tasks=None if args.all else args.num_tasks, timeout=args.timeout,
                              verbose=args.verbose)
        except (DrugprotError, ValueError, OSError) as exc:
            print(f"drugprot demo: error: {exc}", file=sys.stderr)
            return 1
        if args.json:
            payload = {**result["report"], "demo": {k: result[k] for k in ("run_dir", "command", "seconds",
                                                                            "eval_seconds")}}
            print(json.dumps(payload, indent=2, allow_nan=False))
        else:
            print(format_report(result["report"]))
            print("\n".join(_footer(result, keep)))
    return 0


__all__ = [
    "DemoError",
    "PromptPair",
    "eval_arguments",
    "eval_command",
    "lexical_reply",
    "lexical_responder",
    "pair_from_prompt",
    "run_demo",
    "sample_path",
    "serves_env_workers",
]

