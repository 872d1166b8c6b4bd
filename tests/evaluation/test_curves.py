"""``drugprot curves``: prime-rl's metrics.jsonl -> last/best table and overlaid curves.

The fixture is written the way prime-rl 559b447 writes the file:

* ``src/prime_rl/monitors/file.py`` ``FileMonitor.log_metrics``: ``row = {"step": step, "time": time.time(),
  **sanitized}``, ``json.dumps(row) + "\\n"`` appended, one line per ``monitors.log`` call; trainer and
  orchestrator append to the same ``<output_dir>/<run.name>/metrics.jsonl``.
* ``src/prime_rl/trainer/rl/train.py`` (the train loop): five calls per step, perf/optim/tensor stats/time/disk,
  each with ``"step": progress.step``.
* ``src/prime_rl/orchestrator/orchestrator.py`` (after shipping a batch): one call per step with
  ``EpisodeMetrics.to_wandb`` for ``train/agg`` and ``train/<env>``, each ``all`` and ``effective``, plus
  ``progress/*``, ``time/*``, ``off_policy/*``, ``batch/<env>`` and ``"step": step``.
* ``src/prime_rl/orchestrator/orchestrator.py`` ``finalize_eval_batch``: one call per eval env, keys
  ``eval/<env>/<subset>/<agent>/...`` (``EvalMetrics.to_wandb``: ``avg@<group_size>``, ``pass@k`` on effective),
  ``eval/<env>/policy_version`` and ``"step": float(batch.step)``.
* ``src/prime_rl/orchestrator/metrics.py``: ``Stat.to_dict`` gives ``<name>/{mean,max,min,p10,p90}``;
  ``TraceMetrics.to_dict`` gives the distributions, ``is_truncated/mean``, ``is_completed/mean``,
  ``timing/*``, ``metrics/<metric>`` (drugprot: answered), ``rewards/<reward fn>`` (drugprot: accuracy,
  format), on ``all`` also ``has_error``, ``cancelled``, ``solved_*``, and ``stop_condition/*``. The agent is
  ``agent`` (verifiers a60a606 ``AgentInfo.name``, the env's agent field).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.errors import DrugprotError
from drugprot.evaluation import curves
from drugprot.tools.cli import main as cli_main
from tests.evaluation.test_plots import assert_png, no_temporary_files

T0 = 1_764_763_200.0  # a fixed clock: the "time" field never changes what is read


def stat(prefix: str, values: list[float]) -> dict[str, float]:
    """``Stat.to_dict``: mean, max, min and linear-interpolated 10th/90th percentiles."""

    def percentile(q: float) -> float:
        ordered = sorted(values)
        rank = q / 100 * (len(ordered) - 1)
        low = int(rank)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)

    return {
        f"{prefix}/mean": sum(values) / len(values),
        f"{prefix}/max": float(max(values)),
        f"{prefix}/min": float(min(values)),
        f"{prefix}/p10": percentile(10),
        f"{prefix}/p90": percentile(90),
    }


def agent_metrics(prefix: str, subset: str, accuracy: list[float], output_tokens: list[int]) -> dict[str, float]:
    """``EpisodeMetrics.to_wandb`` + ``TraceMetrics.to_dict`` for single-trace drugprot episodes (format 1,
    answered 1; reward = accuracy + 0.1 x format)."""
    n = len(accuracy)
    reward = [a + 0.1 for a in accuracy]
    base = f"{prefix}/{subset}"
    agent = f"{base}/agent"
    total = [300.0 + t for t in output_tokens]
    out: dict[str, float] = {}
    for name, values in (
        ("num_total_tokens", total),
        ("num_input_tokens", [300.0] * n),
        ("num_output_tokens", [float(t) for t in output_tokens]),
        ("num_turns", [1.0] * n),
        ("num_branches", [1.0] * n),
    ):
        out |= stat(f"{base}/{name}", values)
    if subset == "all":
        out[f"{base}/has_error/mean"] = 0.0
        out[f"{base}/cancelled/mean"] = 0.0
    for name, values in (
        ("reward", reward),
        ("num_total_tokens", total),
        ("num_input_tokens", [300.0] * n),
        ("num_output_tokens", [float(t) for t in output_tokens]),
        ("num_turns", [1.0] * n),
        ("num_branches", [1.0] * n),
    ):
        out |= stat(f"{agent}/{name}", values)
    out[f"{agent}/is_truncated/mean"] = 0.0
    out[f"{agent}/is_completed/mean"] = 1.0
    for phase in ("setup", "agent", "finalize", "scoring", "agent/model", "agent/harness", "total"):
        out |= stat(f"{agent}/timing/{phase}", [0.5] * n)
    out |= stat(f"{agent}/metrics/answered", [1.0] * n)
    out |= stat(f"{agent}/rewards/accuracy", accuracy)
    out |= stat(f"{agent}/rewards/format", [1.0] * n)
    if subset == "all":
        out[f"{agent}/has_error/mean"] = 0.0
        out[f"{agent}/cancelled/mean"] = 0.0
        out[f"{agent}/solved_none"] = 0.0
        out[f"{agent}/solved_all"] = 0.0
        out[f"{agent}/solved_some"] = 1.0
    out[f"{agent}/stop_condition/generation_truncated"] = 0.0
    out[f"{agent}/stop_condition/agent_completed"] = 1.0
    return out


def train_line(step: int, accuracy: list[float], output_tokens: list[int]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for subset in ("all", "effective"):
        for prefix in ("train/agg", "train/drugprot"):
            metrics |= agent_metrics(prefix, subset, accuracy, output_tokens)
            metrics[f"{prefix}/{subset}/agent/is_trainable/mean"] = 1.0
            metrics[f"{prefix}/{subset}/agent/is_admitted/mean"] = 1.0
    n = len(accuracy)
    return metrics | {
        "progress/tokens": n * 400,
        "progress/input_tokens": n * 300,
        "progress/output_tokens": sum(output_tokens),
        "progress/rollouts": n,
        "progress/tasks": n // 2,
        "progress/total_tokens": (step + 1) * n * 400,
        "progress/total_rollouts": (step + 1) * n,
        "progress/total_tasks": (step + 1) * n // 2,
        "time/step": 12.5,
        "time/pack": 0.01,
        "time/save_ckpt": 0.0,
        "time/wait_for_policy": 0.2,
        "step": step,
        "off_policy/mean": 0.5,
        "off_policy/max": 1.0,
        "off_policy/in_flight/mean": 0.5,
        "off_policy/in_flight/max": 1.0,
        "off_policy/in_queue/mean": 0.0,
        "off_policy/in_queue/max": 0.0,
        "off_policy/dropped": 0.0,
        "batch/drugprot": 1.0,
    }


def eval_line(step: int, env: str, accuracy: list[float]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for subset in ("all", "effective"):
        metrics |= agent_metrics(f"eval/{env}", subset, accuracy, [200] * len(accuracy))
        metrics[f"eval/{env}/{subset}/agent/avg@2"] = sum(a + 0.1 for a in accuracy) / len(accuracy)
    metrics[f"eval/{env}/policy_version"] = float(step)
    metrics["step"] = float(step)  # finalize_eval_batch logs the step as a float
    return metrics


def trainer_lines(step: int) -> list[dict[str, Any]]:
    return [
        {"perf/throughput": 2100.0, "perf/throughput_per_gpu": 1050.0, "perf/mfu": 21.5, "perf/peak_memory": 61.2},
        {"optim/lr": 3e-6, "optim/grad_norm": 0.42},
        {"loss/mean": 0.01, "entropy/all/mean": 0.61, "mismatch_kl/all/mean": 0.001, "kl_ent_ratio/mean": 0.0016},
        {"time/step": 11.0, "time/wait_for_batch": 1.0, "time/load_data": 0.1, "time/forward_backward": 9.0},
        {"disk/ckpt_used_gb": 0.0},
    ]


def log_metrics(lines: list[str], metrics: dict[str, Any], step: int, clock: float) -> None:
    """``FileMonitor.log_metrics``: the step and time first, the metrics after (a metric ``step`` overwrites)."""
    lines.append(json.dumps({"step": step, "time": clock, **metrics}) + "\n")


# per step: train accuracy of 4 rollouts and their completion tokens; eval accuracy of 4 rollouts at steps 0, 2
TRAIN = {
    0: ([0.0, 0.0, 1.0, 0.0], [900, 800, 700, 600]),
    1: ([1.0, 0.0, 1.0, 0.0], [500, 500, 500, 500]),
    2: ([1.0, 1.0, 1.0, 0.0], [400, 400, 300, 300]),
    3: ([1.0, 1.0, 1.0, 0.0], [300, 300, 300, 300]),  # as good as step 2: the best is the earliest
}
EVAL = {0: [0.0, 1.0, 0.0, 0.0], 2: [1.0, 1.0, 0.0, 1.0]}


def prime_rl_run(directory: Path, *, steps: range = range(4), partial_tail: bool = True) -> Path:
    """A run directory whose metrics.jsonl holds what trainer and orchestrator log for ``steps``; the last line is
    cut mid-write (the run is still going) when ``partial_tail``."""
    lines: list[str] = []
    for step in steps:
        clock = T0 + 10 * step
        if step in EVAL:
            log_metrics(lines, eval_line(step, "drugprot-validation", EVAL[step]), step, clock)
        log_metrics(lines, train_line(step, *TRAIN[step]), step, clock + 1)
        for metrics in trainer_lines(step):
            log_metrics(lines, {**metrics, "step": step}, step, clock + 2)
    text = "".join(lines)
    if partial_tail:
        text += json.dumps({"step": steps[-1] + 1, "time": T0, "perf/mfu": 20.0})[:25]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metrics.jsonl").write_text(text, encoding="utf-8")
    return directory


# ------------------------------------------------------------------------------------------------ reading


def test_the_curves_of_a_prime_rl_metrics_file(tmp_path: Path) -> None:
    run = curves.read_metrics(prime_rl_run(tmp_path / "drugprot-r16"))
    assert run.name == "drugprot-r16"
    assert (run.lines, run.steps) == (2 + 4 * 6 + 1, 4)
    assert run.skipped == [
        "line 27: invalid JSON (Expecting ',' delimiter: line 1 column 26 (char 25)); a partial write?"
    ]
    train = ("train/agg", "agent")
    assert run.curves[(*train, "accuracy")] == [(0, 0.25), (1, 0.5), (2, 0.75), (3, 0.75)]
    steps, rewards = zip(*run.curves[(*train, "reward")], strict=True)  # accuracy + 0.1 x format, in floats
    assert steps == (0, 1, 2, 3) and rewards == pytest.approx((0.35, 0.6, 0.85, 0.85), abs=1e-12)
    assert run.curves[(*train, "format")] == [(s, 1.0) for s in range(4)]
    assert run.curves[(*train, "answered")] == [(s, 1.0) for s in range(4)]
    assert run.curves[(*train, "completion tokens")] == [(0, 750.0), (1, 500.0), (2, 350.0), (3, 300.0)]
    evals = ("eval/drugprot-validation", "agent")
    assert run.curves[(*evals, "accuracy")] == [(0, 0.25), (2, 0.75)]
    # a run made before the reward knob logs no rewards/utility, and prime-rl none of the sandbox's held-out F1 / N
    # share (bench.rl_sim): every other curve
    not_logged = {"utility", "official F1", "N / none share"}
    logged = [s.name for s in curves.SERIES if s.name not in not_logged]
    assert set(run.curves) == {(*train, name) for name in logged} | {(*evals, name) for name in logged}


def test_the_table_gives_last_and_best_values_with_their_steps(tmp_path: Path) -> None:
    run = curves.read_metrics(prime_rl_run(tmp_path / "r", partial_tail=False))
    assert curves.format_table(run).splitlines()[2:] == [
        "  26 lines, 4 steps; skipped 0 bad lines",
        "  curve                                              last (step)       best (step)  points",
        "  train reward                                         0.850 (3)         0.850 (2)       4",
        "  train accuracy                                       0.750 (3)         0.750 (2)       4",
        "  train format                                         1.000 (3)         1.000 (0)       4",
        "  train answered                                       1.000 (3)         1.000 (0)       4",
        "  train completion tokens                              300.0 (3)                 -       4",
        "  eval/drugprot-validation reward                      0.850 (2)         0.850 (2)       2",
        "  eval/drugprot-validation accuracy                    0.750 (2)         0.750 (2)       2",
        "  eval/drugprot-validation format                      1.000 (2)         1.000 (0)       2",
        "  eval/drugprot-validation answered                    1.000 (2)         1.000 (0)       2",
        "  eval/drugprot-validation completion tokens           200.0 (2)                 -       2",
    ]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[1, 2]", "line 2: a JSON list, not an object"),
        (b'{"time": 1.0, "perf/mfu": 3}', "line 2: no numeric 'step' (got 'None')"),
        (b'{"step": true}', "line 2: no numeric 'step' (got 'True')"),
        (b'{"step": "3"}', "line 2: no numeric 'step' (got '3')"),
        (b'{"step": 1.5}', "line 2: 'step' 1.5 is not a whole number from 0 to 1,000,000,000,000"),
        (b'{"step": -1}', "line 2: 'step' -1 is not a whole number from 0 to 1,000,000,000,000"),
        (b'{"step": Infinity}', "line 2: 'step' inf is not a whole number from 0 to 1,000,000,000,000"),
        (  # a 400-digit integer: exact in JSON, beyond any float (it raised OverflowError)
            b'{"step": 1' + b"0" * 399 + b"}",
            "line 2: 'step' 100000000000...(400 characters) is not a whole number from 0 to 1,000,000,000,000",
        ),
        (
            b'{"step": 1, "train/agg/effective/agent/reward/mean": 9' + b"9" * 399 + b"}",
            "line 2: 'train/agg/effective/agent/reward/mean' is 999999999999...(400 characters), out of range "
            "(magnitude above 1e+300)",
        ),
        (b'{"step": NaN}', "line 2: no numeric 'step' (got 'nan')"),
        (b'{"step": 1, "x": "\xff"}', "line 2: not UTF-8 (byte 18)"),
        (b"[" * 100_000, "line 2: JSON nested too deeply"),
    ],
)
def test_a_bad_line_is_skipped_and_named(tmp_path: Path, raw: bytes, reason: str) -> None:
    good = json.dumps({"step": 0, "time": T0, "train/agg/effective/agent/reward/mean": 0.5}).encode()
    (tmp_path / "metrics.jsonl").write_bytes(good + b"\n" + raw + b"\n\n")
    run = curves.read_metrics(tmp_path)
    assert run.skipped == [reason]
    assert (run.lines, run.steps) == (2, 1)
    assert run.curves == {("train/agg", "agent", "reward"): [(0, 0.5)]}


def test_a_bad_line_is_a_typed_error_of_its_own() -> None:
    with pytest.raises(curves.MetricsLineError, match="^a JSON list, not an object$") as raised:
        curves.parse_line(b"[1, 2]")
    assert isinstance(raised.value, curves.CurvesError) and isinstance(raised.value, DrugprotError)
    assert curves.parse_line(b'{"step": 3.0, "a/b": 1, "ok": true}') == (3, {"step": 3.0, "a/b": 1.0})


def test_non_numeric_and_non_finite_values_are_ignored_not_the_line(tmp_path: Path) -> None:
    line = '{"step": 2, "time": 1.0, "train/agg/effective/agent/reward/mean": Infinity, '
    line += '"train/agg/effective/agent/rewards/accuracy/mean": 0.5, "note": "x", "flag": true}'
    (tmp_path / "metrics.jsonl").write_text(line + "\n", encoding="utf-8")
    run = curves.read_metrics(tmp_path / "metrics.jsonl")
    assert run.skipped == []
    assert run.curves == {("train/agg", "agent", "accuracy"): [(2, 0.5)]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no metrics.jsonl here"),
        ("", "empty; prime-rl writes one line per logged step"),
        ("\n  \n", "empty; prime-rl writes one line per logged step"),
        ("not json\n[]\n", "none of its 2 lines is a metrics line (line 1: invalid JSON"),
    ],
)
def test_a_missing_empty_or_unreadable_file_is_a_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    if content is not None:
        (tmp_path / "metrics.jsonl").write_text(content, encoding="utf-8")
    with pytest.raises(curves.CurvesError, match=message.replace("(", r"\(")):
        curves.read_metrics(tmp_path)
    assert cli_main(["curves", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"drugprot curves: error: {tmp_path}") and "Traceback" not in err


def test_a_trainer_only_file_reads_and_says_it_has_no_rl_curves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines: list[str] = []
    for metrics in trainer_lines(0):
        log_metrics(lines, {**metrics, "step": 0}, 0, T0)
    (tmp_path / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    assert cli_main(["curves", str(tmp_path)]) == 0
    assert "no reward, accuracy, utility, format, answered or completion-length metrics" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------ CLI, plots


def test_cli_prints_the_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = prime_rl_run(tmp_path / "r1")
    assert cli_main(["curves", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"drugprot curves: r1\n  {run_dir / 'metrics.jsonl'}\n  27 lines, 4 steps; skipped 1 bad")
    assert cli_main(["curves", "--json", str(run_dir), str(run_dir / "metrics.jsonl")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in payload["runs"]] == ["r1", "r1"]
    first = payload["runs"][0]["curves"][1]
    assert first == {
        "curve": "train accuracy",
        "key": "train/agg/effective/agent/rewards/accuracy/mean",
        "points": 4,
        "last": 0.75,
        "last_step": 3,
        "best": 0.75,
        "best_step": 2,
    }


def test_overlaid_curves_of_two_runs_are_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    short_run = prime_rl_run(tmp_path / "baseline-lr1e-6", steps=range(3))
    long_name = "drugprot-trinity-mini-lora-r16-alpha64-lr3e-6-batch128-group8-temperature0.7-seed0"
    long_run = prime_rl_run(tmp_path / long_name)
    png = tmp_path / "curves.png"
    assert cli_main(["curves", str(short_run), str(long_run), "--plot", str(png)]) == 0
    assert f"wrote the curves to {png}" in capsys.readouterr().err
    assert_png(png, min_size=(1600, 800), max_size=(2200, 1200))
    assert no_temporary_files(tmp_path)

    fig = curves.curves_figure([curves.read_metrics(short_run), curves.read_metrics(long_run)])
    title = fig._suptitle.get_text()
    assert title == f"drugprot curves\n[1] baseline-lr1e-6\n[2] {long_name}"  # whole names: the middle tells them apart
    assert [ax.get_title() for ax in fig.axes] == [title for title, _, _ in curves.PANELS]
    assert [ax.get_title() for ax in fig.axes] == [
        "train reward / utility",
        "train accuracy",
        "train format / answered",
        "eval reward / utility",
        "eval accuracy / official F1",
        "train completion length (tokens)",
    ]  # one kind of number per column, train above eval
    shared_x = fig.axes[0].get_shared_x_axes()
    assert all(shared_x.joined(fig.axes[0], ax) for ax in fig.axes[1:])  # train and eval on one step axis
    # train and eval reward (0.35 ... 0.85 over both) share one y-range
    assert fig.axes[0].get_ylim() == fig.axes[3].get_ylim() == pytest.approx((0.325, 0.875))
    assert fig.axes[1].get_ylim() == fig.axes[4].get_ylim() == fig.axes[2].get_ylim() == (-0.03, 1.03)
    accuracy = fig.axes[1].get_lines()
    assert [line.get_label() for line in accuracy] == [
        "[1] baseline-lr1e-6",
        "[2] drugprot-trinity-m…perature0.7-seed0",
    ]
    assert fig.axes[1].get_ylim() == (-0.03, 1.03)
    assert list(accuracy[1].get_xdata()) == [0, 1, 2, 3] and list(accuracy[1].get_ydata()) == [0.25, 0.5, 0.75, 0.75]
    assert [line.get_label() for line in fig.axes[2].get_lines()] == [
        "[1] baseline-lr1e-6 train answered",
        "[1] baseline-lr1e-6 train format",
        "[2] drugprot-trinity-m…perature0.7-seed0 train answered",
        "[2] drugprot-trinity-m…perature0.7-seed0 train format",
    ]
    assert list(fig.axes[4].get_lines()[0].get_xdata()) == [0, 2]


def test_a_panel_without_data_says_so(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    lines: list[str] = []
    log_metrics(lines, train_line(0, *TRAIN[0]), 0, T0)
    (tmp_path / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    fig = curves.curves_figure([curves.read_metrics(tmp_path)])
    eval_panel = fig.axes[4]
    assert [t.get_text() for t in eval_panel.texts] == ["not in metrics.jsonl"]
    png = tmp_path / "one.png"
    curves.plot_curves([curves.read_metrics(tmp_path)], png)
    assert_png(png, min_size=(1600, 800), max_size=(2200, 1200))


def test_a_long_curve_is_drawn_faint_under_its_trailing_mean(tmp_path: Path) -> None:
    assert [curves.smoothing_window(n) for n in (1, 20, 21, 300, 1000)] == [1, 1, 5, 6, 20]
    assert curves.trailing_mean([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3) == [1.0, 1.5, 2.0, 3.0, 4.0, 5.0]
    assert curves.trailing_mean([2.0, 4.0], 1) == [2.0, 4.0]
    lines: list[str] = []
    for step in range(40):
        log_metrics(lines, {"train/agg/effective/agent/rewards/accuracy/mean": float(step % 2)}, step, T0)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    raw, mean = curves.curves_figure([curves.read_metrics(tmp_path / "run")]).axes[1].get_lines()
    assert list(raw.get_ydata()) == [float(s % 2) for s in range(40)] and raw.get_alpha() == 0.25
    assert mean.get_label() == "[1] run (mean of 5)"
    assert list(mean.get_ydata())[:6] == [0.0, 0.5, 1 / 3, 0.5, 0.4, 0.6]


def test_the_utility_reward_is_a_curve_drawn_with_the_reward(tmp_path: Path) -> None:
    """A run with the ``reward`` knob logs ``rewards/utility/mean``: it is read, tabled and drawn in the reward
    panels next to the total reward."""
    lines: list[str] = []
    for step, (utility, accuracy) in enumerate(((-0.4, 0.3), (0.2, 0.5))):
        agent = "train/agg/effective/agent"
        metrics = {f"{agent}/reward/mean": utility + 0.1, f"{agent}/rewards/utility/mean": utility,
                   f"{agent}/rewards/accuracy/mean": accuracy}  # fmt: skip
        log_metrics(lines, metrics, step, T0)
    run_dir = tmp_path / "utility-run"
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    run = curves.read_metrics(run_dir)
    assert run.curves[("train/agg", "agent", "utility")] == [(0, -0.4), (1, 0.2)]
    assert [row["curve"] for row in curves.summary(run)] == ["train reward", "train accuracy", "train utility"]
    assert [(row["last"], row["best"], row["best_step"]) for row in curves.summary(run)][2] == (0.2, 0.2, 1)
    pytest.importorskip("matplotlib")
    fig = curves.curves_figure([run])
    assert fig.axes[0].get_title() == "train reward / utility"
    assert [line.get_label() for line in fig.axes[0].get_lines()] == [
        "[1] utility-run train reward",
        "[1] utility-run train utility",
    ]


# ------------------------------------------------------------------------------------------------ outputs


def test_plot_never_replaces_the_metrics_file_and_an_existing_file_needs_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = prime_rl_run(tmp_path / "run")
    metrics = run / "metrics.jsonl"
    before = metrics.read_bytes()
    assert cli_main(["curves", str(run), "--plot", str(metrics), "--overwrite"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        f"drugprot curves: error: --plot {metrics}: this is an input of the command ({metrics}); writing it would "
        "destroy it. Choose another path\n",
    )
    assert metrics.read_bytes() == before
    other = tmp_path / "old.png"
    other.write_bytes(b"keep")
    assert cli_main(["curves", str(run), "--plot", str(other)]) == 2
    assert capsys.readouterr().err.endswith("exists; pass --overwrite to replace it, or choose another path\n")
    assert other.read_bytes() == b"keep"
    missing = tmp_path / "no" / "curves.png"
    assert cli_main(["curves", str(run), "--plot", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"drugprot curves: error: --plot {missing}: its folder {tmp_path / 'no'} does not exist; create it first\n"
    )


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.35, 0.6, 0.85], (0.325, 0.875)),  # padded by 5% of the span
        ([2.0, 2.0], (1.9, 2.1)),  # a flat curve: 5% of its value
        ([0.0], (-0.05, 0.05)),
        ([], None),
    ],
)
def test_shared_range_shows_every_value(values: list[float], expected: tuple[float, float] | None) -> None:
    got = curves.shared_range(values)
    assert got == (None if expected is None else pytest.approx(expected))
