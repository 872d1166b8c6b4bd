"""Checking and reporting for ``prime_rl_check.py rollouts``: each rollout prime-rl's orchestrator produced against
the scripted reply it got (rewards, sampled tokens, logprobs), the CPU it cost, and the printed table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prime_rl_check_model import EOS, LOGPROB, SPECIAL_TOKENS, Reply, detokenize, token_ids

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


def print_group(number: int, run: GroupRun, group_size: int) -> int:
    """Print one group's rollouts (reward, expected, advantage, sampled tokens, verdict) and its CPU per rollout;
    return its number of problems (a rollout with problems, or a group of the wrong size)."""
    print(f"group {number}: {'reply':<20} {'reward':>7} {'expected':>8} {'advantage':>9} {'sampled':>7}  check")
    for c in sorted(run.checked, key=lambda c: (-c.expected, c.kind)):
        adv = f"{c.advantage:+.4f}" if c.advantage is not None else "-"
        verdict = "ok" if not c.problems else "; ".join(c.problems)
        print(f"         {c.kind:<20} {c.reward:7.3f} {c.expected:8.3f} {adv:>9} {c.sampled_tokens:7d}  {verdict}")
    n = len(run.checked)
    print(
        f"         CPU-s per rollout: env-server tree {run.env_server_cpu_s / n:.2f}, orchestrator client + "
        f"model server {run.driver_cpu_s / n:.3f}; wall {run.wall_s:.1f} s for the group of {n}"
    )
    return sum(bool(c.problems) for c in run.checked) + (n != group_size)
