"""Drive the real verifiers CLIs end to end from tests (a helper module, not a test file).

Two paths, both run as a subprocess of the *current* Python environment (the scripts are looked up next to
``sys.executable``), against a model server such as :class:`drugprot.tools.serve.OpenAIServer`:

* **v1** (:func:`run_vf_eval`): ``vf-eval`` on verifiers ≥0.4, ``eval`` on 0.3.x (where ``vf-eval`` is the
  legacy CLI). Results: ``<out_dir>/<run>/traces.jsonl``, one episode per line (:func:`read_episodes`,
  :func:`trace_results`). The taskset must pin a local seat: drugprot pins its own in-process harness
  (``drugprot``) in a ``subprocess`` runtime; pass ``--env.agent.harness.id null`` for verifiers' ``null``
  harness, which runs its chat program in a uv-managed script environment: it needs ``uv`` on PATH and PyPI (or
  a warm uv cache). drugprot's env config runs it as ``drugprot-null``, that program with every dependency
  pinned exactly (``drugprot.envs.null_program``); the children get no ``UV_EXCLUDE_NEWER`` of the machine's
  (:func:`_child_env`), which would keep verifiers' own program resolved as of that date.
* **legacy v0** (:func:`run_legacy_vf_eval`, verifiers 0.3.x only): ``vf-eval <env> -m <alias> -s`` with the
  alias resolved through ``./configs/endpoints.toml`` (:func:`write_endpoints_toml`). Results:
  ``<out_dir>/evals/<env>--<model>/<8 hex>/{results.jsonl,metadata.json}`` (:func:`read_legacy_results`).

A v1 ``vf-eval`` exits 0 even when every rollout failed, so :func:`run_vf_eval` checks the episodes too
(``require_ok``). The model server's API key is passed in the environment variable :data:`API_KEY_VAR`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

API_KEY_VAR = "DRUGPROT_E2E_API_KEY"
"""Environment variable that carries the model server's key (``--client.api-key-var`` / endpoints ``key``)."""

DEFAULT_API_KEY = "sk-drugprot-e2e"


class E2EError(RuntimeError):
    """A CLI run failed, timed out, or produced no (or failed) results; the message has the output tails."""


def verifiers_version() -> tuple[int, int]:
    """(major, minor) of the installed verifiers."""
    major, minor = (int(re.match(r"\d+", part).group()) for part in version("verifiers").split(".")[:2])
    return major, minor


def v1_cli_name() -> str:
    """The v1 eval script: ``vf-eval`` on verifiers ≥0.4, ``eval`` on 0.3.x (whose ``vf-eval`` is legacy)."""
    return "vf-eval" if verifiers_version() >= (0, 4) else "eval"


def has_legacy_cli() -> bool:
    """Whether the installed verifiers still ships the legacy (v0) ``vf-eval`` (0.3.x does, 0.4 does not)."""
    return verifiers_version() < (0, 4)


def script_path(name: str) -> Path:
    """A console script of the current environment (next to ``sys.executable``)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise E2EError(f"no {name!r} script next to {sys.executable}; is verifiers installed in this env?")
    return path


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _run(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in its own process group, so a timeout also kills the harness processes it spawned."""
    proc = subprocess.Popen(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise E2EError(
            f"timed out after {timeout:.0f}s: {' '.join(argv)}\n"
            f"--- stdout (tail) ---\n{_tail(stdout)}\n--- stderr (tail) ---\n{_tail(stderr)}"
        ) from None
    result = subprocess.CompletedProcess(list(argv), proc.returncode, stdout, stderr)
    if result.returncode != 0:
        raise E2EError(
            f"exit {result.returncode}: {' '.join(argv)}\n"
            f"--- stdout (tail) ---\n{_tail(stdout)}\n--- stderr (tail) ---\n{_tail(stderr)}"
        )
    return result


def _child_env(api_key: str, env: Mapping[str, str] | None) -> dict[str, str]:
    """The CLI's environment: this process's, less a ``UV_EXCLUDE_NEWER`` of the machine's (it would turn ``null``
    back into verifiers' own program, resolved as of that date: ``drugprot.envs.harness.choose_null_program``), with
    the key, and ``env`` over it."""
    merged = {k: v for k, v in os.environ.items() if k != "UV_EXCLUDE_NEWER"}
    merged.update({API_KEY_VAR: api_key, "PYTHONUNBUFFERED": "1"})
    # The model server is on loopback: never send that traffic through a configured proxy.
    no_proxy = [p for p in merged.get("NO_PROXY", "").split(",") if p]
    merged["NO_PROXY"] = ",".join([*no_proxy, "127.0.0.1", "localhost"])
    merged.update(env or {})
    return merged


def _new_run_dir(out_dir: Path, before: set[Path], marker: str, stderr: str, pattern: str) -> Path:
    """The run directory a CLI just created: from its log line, else the one new dir holding ``marker``."""
    match = re.findall(pattern, stderr)
    if match and (Path(match[-1].strip()) / marker).exists():
        return Path(match[-1].strip())
    created = sorted({p.parent for p in out_dir.glob(f"**/{marker}")} - before)
    if len(created) != 1:
        raise E2EError(f"expected one new run dir with {marker} under {out_dir}, found {created}\n{_tail(stderr)}")
    return created[0]


# -- v1 -------------------------------------------------------------------------------------------------------


def run_vf_eval(
    taskset: str,
    base_url: str,
    out_dir: Path,
    *,
    model: str = "trinity-mini",
    n: int,
    rollouts: int = 1,
    extra_args: Sequence[str] = (),
    cli: str | None = None,
    timeout: float = 300,
    api_key: str = DEFAULT_API_KEY,
    env: Mapping[str, str] | None = None,
    require_ok: bool = True,
    stderr_file: Path | None = None,
) -> Path:
    """Run the v1 eval CLI on ``taskset`` against ``base_url`` and return the run directory (``stderr_file``: where
    to keep the CLI's stderr, its log).

    ``cli`` defaults to :func:`v1_cli_name`. Always passes ``--no-push --no-rich``; on verifiers 0.3.x also
    ``--no-serve`` (in-process: its default env-server worker pool re-imports verifiers in extra processes).
    ``extra_args`` go last, e.g. ``["--sampling.temperature", "0.15", "--env.taskset.split", "dev"]``.
    ``env`` overrides variables of the child (e.g. ``{"HOME": ...}``).

    Raises :class:`E2EError` on a non-zero exit, a timeout, a missing ``traces.jsonl``, or — with
    ``require_ok`` — any episode with ``ok: false`` (the CLI itself exits 0 then).
    """
    cli = cli or v1_cli_name()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [str(script_path(cli)), taskset, "-m", model, "-n", str(n), "-r", str(rollouts)]
    argv += ["-o", str(out_dir), "--client.base-url", base_url, "--client.api-key-var", API_KEY_VAR]
    argv += ["--no-push", "--no-rich"]
    if verifiers_version() < (0, 4):
        argv.append("--no-serve")
    argv += list(extra_args)
    before = {p.parent for p in out_dir.glob("**/traces.jsonl")}
    result = _run(argv, env=_child_env(api_key, env), cwd=None, timeout=timeout)
    if stderr_file is not None:
        Path(stderr_file).write_text(result.stderr, encoding="utf-8")
    run_dir = _new_run_dir(out_dir, before, "traces.jsonl", result.stderr, r"INFO results: (\S+)")
    if require_ok:
        failed = [e for e in read_episodes(run_dir) if not e.get("ok")]
        if failed:
            errors = [err.get("message", "")[:500] for e in failed for t in e.get("traces", []) for err in t["errors"]]
            errors += [err.get("message", "")[:500] for e in failed for err in e.get("errors") or []]
            raise E2EError(
                f"{len(failed)} episode(s) not ok in {run_dir}: {errors[:3]}\n--- stderr ---\n{_tail(result.stderr)}"
            )
    return run_dir


def read_episodes(run_dir: Path) -> list[dict[str, Any]]:
    """The episodes of a v1 run, one dict per line of ``traces.jsonl`` (completion order, not task order)."""
    path = Path(run_dir) / "traces.jsonl"
    if not path.exists():
        raise E2EError(f"no traces.jsonl in {run_dir}")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class TraceResult:
    """The scoring-relevant view of one v1 trace, the same on verifiers 0.3.1 and 0.4.0.

    ``rewards`` are raw scores (None where the scorer failed) with their ``weights``; ``reward`` is
    Σ score·weight, as ``Trace.reward`` computes it (a failed scorer counts 0). ``reply`` is the last
    sampled assistant content, stripped (``trace.last_reply``); ``reasoning`` its separate reasoning.
    """

    task_key: str
    task_data: dict[str, Any]
    ok: bool
    reward: float
    rewards: dict[str, float | None]
    weights: dict[str, float]
    metrics: dict[str, float | None]
    info: dict[str, Any]
    reply: str
    reasoning: str | None
    stop_condition: str | None
    errors: list[str] = field(default_factory=list)
    sampling: dict[str, Any] = field(default_factory=dict)


def trace_results(episodes: Sequence[Mapping[str, Any]]) -> list[TraceResult]:
    """One :class:`TraceResult` per trace, sorted by (task key, position) for stable assertions."""
    results = []
    for episode in episodes:
        for trace in episode.get("traces", []):
            rewards = trace.get("rewards") or {}
            scores = {k: None if v is None else v["score"] for k, v in rewards.items()}
            weights = {k: v["weight"] for k, v in rewards.items() if v is not None}
            sampled = [
                node["message"]
                for node in trace.get("nodes", [])
                if node.get("sampled") and node["message"].get("role") == "assistant"
            ]
            last = sampled[-1] if sampled else {}
            calls = trace.get("calls") or []
            results.append(
                TraceResult(
                    task_key=trace["task"]["key"],
                    task_data=trace["task"]["data"],
                    ok=bool(trace.get("ok")),
                    reward=sum((scores[k] or 0.0) * w for k, w in weights.items()),
                    rewards=scores,
                    weights=weights,
                    metrics=dict(trace.get("metrics") or {}),
                    info=dict(trace.get("info") or {}),
                    reply=(last.get("content") or "").strip(),
                    reasoning=last.get("reasoning_content"),
                    stop_condition=trace.get("stop_condition"),
                    errors=[f"{e.get('type')}: {e.get('message')}" for e in trace.get("errors") or []],
                    sampling=dict(calls[-1].get("sampling") or {}) if calls else {},
                )
            )
    return sorted(results, key=lambda r: r.task_key)


# -- legacy v0 (verifiers 0.3.x) ------------------------------------------------------------------------------


def write_endpoints_toml(directory: Path, alias: str, model: str, base_url: str, *, key_var: str = API_KEY_VAR) -> Path:
    """Write ``directory/configs/endpoints.toml`` with one ``[[endpoint]]`` mapping ``alias`` to ``model``."""
    path = Path(directory) / "configs" / "endpoints.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[[endpoint]]\n"
        f"endpoint_id = {json.dumps(alias)}\n"
        f"model = {json.dumps(model)}\n"
        f"url = {json.dumps(base_url)}\n"
        f"key = {json.dumps(key_var)}\n",
        encoding="utf-8",
    )
    return path


def run_legacy_vf_eval(
    env: str,
    alias: str,
    endpoints_dir: Path,
    out_dir: Path,
    *,
    n: int,
    rollouts: int = 1,
    env_args: Mapping[str, Any] | None = None,
    sampling_args: Mapping[str, Any] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 300,
    api_key: str = DEFAULT_API_KEY,
    child_env: Mapping[str, str] | None = None,
) -> Path:
    """Run the legacy ``vf-eval`` (verifiers 0.3.x) and return its results directory.

    Runs in ``endpoints_dir``, so ``-m alias`` resolves through ``endpoints_dir/configs/endpoints.toml``
    exactly as a user's ``vf-eval drugprot -m trinity-mini`` does (see :func:`write_endpoints_toml`).
    Passes ``-s`` (nothing is saved without it), ``-d`` (no TUI), ``--disable-env-server`` (in-process),
    ``-a`` JSON ``env_args`` and ``-S`` JSON ``sampling_args``. Raises :class:`E2EError` on failure.
    """
    if not has_legacy_cli():
        raise E2EError(f"verifiers {version('verifiers')} has no legacy vf-eval (removed in 0.4.0)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [str(script_path("vf-eval")), env, "-m", alias, "-n", str(n), "-r", str(rollouts)]
    argv += ["-s", "-d", "--disable-env-server", "-o", str(out_dir)]
    if env_args:
        argv += ["-a", json.dumps(dict(env_args))]
    if sampling_args:
        argv += ["-S", json.dumps(dict(sampling_args))]
    argv += list(extra_args)
    before = {p.parent for p in out_dir.glob("**/results.jsonl")}
    started = time.time()
    result = _run(argv, env=_child_env(api_key, child_env), cwd=Path(endpoints_dir), timeout=timeout)
    run_dir = _new_run_dir(out_dir, before, "results.jsonl", result.stderr, r"Saved final results to (\S+)")
    if not (run_dir / "metadata.json").exists() or (run_dir / "results.jsonl").stat().st_mtime < started - 1:
        raise E2EError(f"incomplete legacy results in {run_dir}\n{_tail(result.stderr)}")
    return run_dir


def read_legacy_results(run_dir: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(rows, metadata)`` of a legacy run: ``results.jsonl`` rows (one per rollout) and ``metadata.json``.

    Row keys: ``example_id, prompt, completion, answer, info, reward, error, timing, is_completed,
    is_truncated, stop_condition, metrics, tool_defs, token_usage`` plus one top-level key per reward/metric
    function. ``completion`` is a list of message dicts (``role, content`` and ``reasoning_content`` when the
    server sent it).
    """
    run_dir = Path(run_dir)
    rows = [
        json.loads(line)
        for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    metadata = json.loads((run_dir / "metadata.json").read_text(encoding="utf-8"))
    return rows, metadata
