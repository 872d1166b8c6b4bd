"""``evidence.step_time``: docs/training/step-time.md's step-time block is the one its committed inputs render, and the
arithmetic behind it (shipped share before and after issue 41's fix, tokens, seconds, hours) is as specified."""

from __future__ import annotations

import json
import sys
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


PROG = "python -m evidence.step_time: error: "


def sandbox(root: Path, lines: list[str]) -> Path:
    """An ``evidence.rl_sim --out`` folder holding one pair-utility-all run whose metrics.jsonl has ``lines``."""
    run = root / "cues" / "pair-utility-all-split0"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


def good_lines(n: int = 10) -> list[str]:
    return [json.dumps(x) for x in steps(0.5, {"0.1": 0.25, "1.1": 0.25}, n)]


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a run of ``argv`` that exits 2."""
    with pytest.raises(SystemExit) as exited:
        step_time.main(argv)
    assert exited.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line.removeprefix(PROG)


def test_measure_never_writes_over_an_input_even_with_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = sandbox(tmp_path / "sim", good_lines())
    metrics = sim / "cues" / "pair-utility-all-split0" / "metrics.jsonl"
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    before = metrics.read_bytes()
    for output, source in ((data, ["--data-path", str(data)]), (metrics, ["--prompt-tokens", "1000"])):
        argv = ["measure", "--sim", str(sim), *source, "--json", str(output), "--overwrite"]
        assert refused(argv, capsys) == (
            f"--json {output}: this is an input of the command ({output}); writing it would destroy it. Choose "
            "another path"
        )
    assert data.read_text(encoding="utf-8") == "{}\n" and metrics.read_bytes() == before
    out = tmp_path / "summary.json"
    assert step_time.main(["measure", "--sim", str(sim), "--prompt-tokens", "1000", "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["runs"] == 1


@pytest.mark.parametrize(
    ("given", "shown"), [("nan", "nan"), ("Infinity", "inf"), ("-inf", "-inf"), ("-5000", "-5000.0"), ("0", "0.0")]
)
def test_measure_refuses_prompt_tokens_that_are_not_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, shown: str
) -> None:
    sim = sandbox(tmp_path / "sim", good_lines())
    out = tmp_path / "summary.json"
    argv = ["measure", "--sim", str(sim), f"--prompt-tokens={given}", "--json", str(out)]
    assert refused(argv, capsys) == (
        f"--prompt-tokens: {shown} is not a finite number of tokens above 0; pass the mean prompt tokens per rollout"
    )
    assert not out.exists()


AT = f"{AGENT}/zero_advantage/at/0.1/mean"
TRAINABLE = f"{AGENT}/is_trainable/mean"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (good_lines(1), "{path}: 1 training step, fewer than the 3 that put one in each phase (first 10 %, middle "
         "80 %, last 10 %); rerun evidence.rl_sim with more --steps"),
        (good_lines(2), "{path}: 2 training steps, fewer than the 3 that put one in each phase (first 10 %, middle "
         "80 %, last 10 %); rerun evidence.rl_sim with more --steps"),
        ([*good_lines(3), json.dumps({TRAINABLE: "0.5"})],
         f"{{path}} line 4: {TRAINABLE} is '0.5', expected a share from 0 to 1"),
        ([*good_lines(3), f'{{"{TRAINABLE}": NaN}}'],
         f"{{path}} line 4: {TRAINABLE} is nan, expected a share from 0 to 1"),
        ([f'{{"{AT}": -Infinity}}', *good_lines(3)], f"{{path}} line 1: {AT} is -inf, expected a share from 0 to 1"),
        ([*good_lines(3), json.dumps({TRAINABLE: True})],
         f"{{path}} line 4: {TRAINABLE} is True, expected a share from 0 to 1"),
        ([*good_lines(3), "[1, 2]"], "{path} line 4: not a JSON object"),
        ([*good_lines(3), '{"step": '], "{path} line 4: not JSON (JSONDecodeError)"),
        (["[" * 200_000], "{path} line 1: not JSON (RecursionError)"),
    ],
)  # fmt: skip
def test_measure_refuses_a_sandbox_it_cannot_read_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], message: str
) -> None:
    sim = sandbox(tmp_path / "sim", lines)
    out = tmp_path / "summary.json"
    argv = ["measure", "--sim", str(sim), "--prompt-tokens", "1000", "--json", str(out)]
    path = sim / "cues" / "pair-utility-all-split0" / "metrics.jsonl"
    assert refused(argv, capsys) == message.format(path=path)
    assert not out.exists()


def test_measure_without_mistral_common_says_so_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked before the sandbox is read: a missing --sim is not reached."""
    monkeypatch.setitem(sys.modules, "mistral_common", None)  # what an environment without it imports
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    out = tmp_path / "summary.json"
    argv = ["measure", "--sim", str(tmp_path / "missing"), "--data-path", str(data), "--json", str(out)]
    assert refused(argv, capsys) == (
        "--data-path counts prompt tokens with mistral-common's Tekken and tiktoken, and mistral-common is not "
        "installed: run it with `uv run --with mistral-common`, or pass --prompt-tokens N"
    )
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--write", "--check"])
def test_render_refuses_a_page_without_exactly_one_well_formed_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    begin, end = step_time.BEGIN, step_time.END
    pages: dict[str, bytes | None] = {
        "missing.md": None,
        "latin1.md": f"caf\xe9\n{begin}\nold\n{end}\n".encode("latin-1"),
        "none.md": b"no block here\n",
        "two.md": f"{begin}\na\n{end}\n{begin}\nb\n{end}\n".encode(),
        "reversed.md": f"{end}\nold\n{begin}\n".encode(),
        "unclosed.md": f"{begin}\nold\n".encode(),
    }
    expected = {
        "missing.md": "no such file; name the page that holds the block (docs/training/step-time.md)",
        "latin1.md": "not UTF-8 text (byte 3); name the page that holds the block",
        "none.md": f"expected one {begin} line and, after it, one {end} line; found 0 {begin} and 0 {end}",
        "two.md": f"expected one {begin} line and, after it, one {end} line; found 2 {begin} and 2 {end}",
        "reversed.md": f"expected one {begin} line and, after it, one {end} line; found {end} before {begin}",
        "unclosed.md": f"expected one {begin} line and, after it, one {end} line; found 1 {begin} and 0 {end}",
    }
    for name, content in pages.items():
        page = tmp_path / name
        if content is not None:
            page.write_bytes(content)
        assert refused(["render", flag, str(page)], capsys) == f"{flag} {page}: {expected[name]}"
        assert (page.read_bytes() if content is not None else None) == content  # left as it was
    assert refused(["render", flag, str(tmp_path)], capsys) == (
        f"{flag} {tmp_path}: is a folder; name a file"
        if flag == "--write"
        else f"{flag} {tmp_path}: cannot be read (Is a directory)"
    )


def test_render_write_never_writes_over_the_files_the_block_is_rendered_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for source in (step_time.SUMMARY, step_time.CONFIG, step_time.TRAINER):
        before = source.read_bytes()
        assert refused(["render", "--write", str(source)], capsys) == (
            f"--write {source}: this is an input of the command ({source}); writing it would destroy it. Choose "
            "another path"
        )
        assert source.read_bytes() == before


def test_the_trainer_busy_hours_range_over_the_one_pass_and_multi_pass_mappings() -> None:
    def summary(zero: float) -> dict:
        share = {"zero": {"mean": zero, "sd": 0.0}, "leaked": {"mean": 0.0, "sd": 0.0}}
        return {"prompt_tokens": 1000.0, "phases": dict.fromkeys(step_time.PHASE_KEYS, share), "runs": 10,
                "recipe": "pair-utility-all", "command": "measure"}  # fmt: skip

    config = {
        "max_steps": 100,
        "orchestrator": {"batch_size": 128, "train": {"sampling": {"max_completion_tokens": 2048}}},
    }
    rate = {"tokens_per_s": 4000.0, "optimizer_s": 0.0}
    # after the fix 100 steps ship (1 - zero) x 128 x (1000 + completion) tokens each
    one_pass, multi = summary(0.6), summary(0.8)
    hours = {c: 100 * 128 * (1000 + c) / 4000 / 3600 for c in (2048, 830)}
    assert step_time.after_hours(one_pass, config, rate) == pytest.approx({c: 0.4 * h for c, h in hours.items()})
    last = step_time.one_pass_lines(one_pass, multi, config, rate)[-1]
    assert last.startswith(
        f"**Trainer-busy hours after the fix, default run of 100 steps: 2,048-token completions "
        f"{0.2 * hours[2048]:.2f}–{0.4 * hours[2048]:.2f} h; 830-token completions {0.2 * hours[830]:.2f}–"
        f"{0.4 * hours[830]:.2f} h** (one-pass and multi-pass phase mappings). Not counted: the adapter broadcast"
    )
    assert "generation, which likely dominates" in last
