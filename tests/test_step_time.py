"""``evidence.step_time``: docs/training/step-time.md's step-time block is the one its committed inputs render, and the
arithmetic behind it (shipped share before and after issue 41's fix, tokens, seconds, hours) is as specified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence import step_time

AGENT = "train/agg/all/agent"  # the sandbox logs its zero-advantage diagnostics over all rollouts


def steps(zero: float, at: dict[str, float], n: int) -> list[dict[str, float]]:
    return [{"step": i, f"{AGENT}/is_trainable/mean": 1 - zero} | {
        f"{AGENT}/zero_advantage/at/{v}/mean": share for v, share in at.items()} for i in range(n)]  # fmt: skip


def test_the_readme_block_is_the_rendered_one() -> None:
    text = step_time.README.read_text(encoding="utf-8")
    assert step_time.splice(text, step_time.current_block()) == text
    assert step_time.main(["render", "--check", str(step_time.README)]) == 0


def test_a_stale_block_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "README.md"
    stale.write_text(f"head\n{step_time.BEGIN}\nold\n{step_time.END}\ntail\n", encoding="utf-8")
    assert step_time.main(["render", "--check", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert step_time.main(["render", "--write", str(stale)]) == 0
    assert step_time.main(["render", "--check", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8").startswith(f"head\n{step_time.BEGIN}\n")


def test_phases_are_the_first_tenth_the_middle_and_the_last_tenth() -> None:
    # 20 steps: 2 / 16 / 2; only the leaking rewards (0.1, -0.4, -0.9, -1.4) count as leaked
    lines = (
        steps(0.5, {"1.1": 0.2, "0.1": 0.3}, 2)
        + steps(0.8, {"1.1": 0.1, "-0.9": 0.25, "0.1": 0.45}, 16)
        + steps(0.9, {"-1": 0.5, "-0.4": 0.4}, 2)
    )
    shares = step_time.phase_shares(lines)
    assert shares["first"] == {"zero": 0.5, "leaked": 0.3}
    assert shares["middle"]["zero"] == pytest.approx(0.8) and shares["middle"]["leaked"] == pytest.approx(0.7)
    assert shares["last"]["zero"] == pytest.approx(0.9) and shares["last"]["leaked"] == pytest.approx(0.4)


def test_before_ships_the_leaking_groups_and_after_none() -> None:
    share = {"zero": {"mean": 0.5, "sd": 0.0}, "leaked": {"mean": 0.25, "sd": 0.0}}
    summary = {"prompt_tokens": 1000.0, "phases": dict.fromkeys(step_time.PHASE_KEYS, share)}
    config = {
        "max_steps": 100,
        "orchestrator": {"batch_size": 128, "train": {"sampling": {"max_completion_tokens": 2048}}},
    }
    rate = {"tokens_per_s": 4000.0, "optimizer_s": 2.0}
    rows = step_time.rows(summary, config, rate)
    assert [(r["completion"], r["steps"]) for r in rows] == [
        (2048, 10),
        (2048, 80),
        (2048, 10),
        (830, 10),
        (830, 80),
        (830, 10),
    ]
    first = rows[0]
    assert first["before"]["shipped"] == 0.75 and first["after"]["shipped"] == 0.5
    assert first["before"]["tokens"] == 128 * 0.75 * 3048 and first["after"]["tokens"] == 128 * 0.5 * 3048
    assert first["after"]["seconds"] == 128 * 0.5 * 3048 / 4000 + 2.0


def test_measure_reads_the_sandbox_runs_and_refuses_runs_without_rewards(tmp_path: Path) -> None:
    for split, zero in ((0, 0.4), (1, 0.6)):
        run = tmp_path / "cues" / f"pair-utility-all-split{split}"
        run.mkdir(parents=True)
        lines = [{"step": 0, "eval": 1}, *steps(zero, {"0.1": zero / 2, "1.1": zero / 2}, 10)]
        (run / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    summary = step_time.measure(tmp_path, 1015.4, "cmd")
    assert summary["runs"] == 2 and summary["prompt_tokens"] == 1015.4
    assert summary["phases"]["middle"]["zero"]["mean"] == pytest.approx(0.5)
    assert summary["phases"]["middle"]["leaked"]["mean"] == pytest.approx(0.25)
    assert summary["phases"]["first"]["zero"]["sd"] == pytest.approx(0.1414213, rel=1e-5)
    bare = tmp_path / "bare" / "c" / "pair-utility-all-split0"
    bare.mkdir(parents=True)
    (bare / "metrics.jsonl").write_text(json.dumps({"step": 0}) + "\n" + json.dumps(steps(0.5, {}, 1)[0]) + "\n")
    with pytest.raises(ValueError, match="rerun evidence.rl_sim"):
        step_time.measure(tmp_path / "bare", 1000.0, "cmd")
