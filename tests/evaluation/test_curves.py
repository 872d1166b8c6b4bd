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
import re
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.errors import DrugprotError
from drugprot.evaluation import curves, curves_plot
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
    assert run.curves[(*train, "accuracy reward")] == [(0, 0.25), (1, 0.5), (2, 0.75), (3, 0.75)]
    steps, rewards = zip(*run.curves[(*train, "reward")], strict=True)  # accuracy + 0.1 x format, in floats
    assert steps == (0, 1, 2, 3) and rewards == pytest.approx((0.35, 0.6, 0.85, 0.85), abs=1e-12)
    assert run.curves[(*train, "format reward")] == [(s, 1.0) for s in range(4)]
    assert run.curves[(*train, "answered")] == [(s, 1.0) for s in range(4)]
    assert run.curves[(*train, "completion tokens")] == [(0, 750.0), (1, 500.0), (2, 350.0), (3, 300.0)]
    evals = ("eval/drugprot-validation", "agent")
    assert run.curves[(*evals, "accuracy reward")] == [(0, 0.25), (2, 0.75)]
    assert (
        run.curves[(*train, "trainable share")]
        == run.curves[(*train, "admitted share")]
        == [(s, 1.0) for s in range(4)]
    )
    # a run made before the reward knob logs no rewards/utility, before the official metrics no cells nor correct, and
    # prime-rl none of the sandbox's held-out F1 / N share (evidence.rl_sim): every other curve; the trainable and
    # admitted shares are train metrics (TrainMetrics)
    not_logged = {"utility reward", *curves.FROM_CELLS, "raw accuracy", "N / none share"}
    logged = {s.name for s in curves.SERIES} - not_logged
    shares = {"trainable share", "admitted share"}
    assert set(run.curves) == {(*train, name) for name in logged} | {(*evals, name) for name in logged - shares}


def test_the_table_gives_last_and_best_values_with_their_steps(tmp_path: Path) -> None:
    run = curves.read_metrics(prime_rl_run(tmp_path / "r", partial_tail=False))
    assert curves.format_table(run).splitlines()[2:] == [
        "  26 lines, 4 steps; skipped 0 bad lines",
        "  scope: all rollouts; effective last = the trained-on batch (eval: the rollouts without an error), where it "
        "differs",
        "  curve                                              last (step)       best (step)  points",
        "  train reward                                         0.850 (3)         0.850 (2)       4",
        "  train accuracy reward                                0.750 (3)         0.750 (2)       4",
        "  train format reward                                  1.000 (3)         1.000 (0)       4",
        "  train answered                                       1.000 (3)         1.000 (0)       4",
        "  train trainable share                                1.000 (3)                 -       4",
        "  train admitted share                                 1.000 (3)                 -       4",
        "  train completion tokens                              300.0 (3)                 -       4",
        "  eval/drugprot-validation reward                      0.850 (2)         0.850 (2)       2",
        "  eval/drugprot-validation accuracy reward             0.750 (2)         0.750 (2)       2",
        "  eval/drugprot-validation format reward               1.000 (2)         1.000 (0)       2",
        "  eval/drugprot-validation answered                    1.000 (2)         1.000 (0)       2",
        "  eval/drugprot-validation completion tokens           200.0 (2)                 -       2",
        "  empty train batches: not in metrics.jsonl (an empty batch logs nothing); "
        "--log <run>/logs/latest/orchestrator.log counts them",
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
    assert run.curves == {("train/agg", "agent", "accuracy reward"): [(2, 0.5)]}


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
    assert "no reward, official-metric, accuracy, answered or completion-length metrics" in capsys.readouterr().out


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
    stats = {"points": 4, "last": 0.75, "last_step": 3, "best": 0.75, "best_step": 2}
    assert first == {
        "curve": "train accuracy reward",
        "scope": "all",
        "key": "train/agg/all/agent/rewards/accuracy/mean",
        **stats,
        "effective": {"key": "train/agg/effective/agent/rewards/accuracy/mean", **stats},
        "differs": False,  # this fixture logs the same rollouts in both scopes
    }
    assert payload["runs"][0]["empty_batches"] == {"shipped_steps": 4, "expected_rate": 0.0, "observed": None}


def test_overlaid_curves_of_two_runs_are_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    short_run = prime_rl_run(tmp_path / "baseline-lr1e-6", steps=range(3))
    long_name = "drugprot-trinity-mini-lora-r16-alpha64-lr3e-6-batch128-group8-temperature0.7-seed0"
    long_run = prime_rl_run(tmp_path / long_name)
    png = tmp_path / "curves.png"
    assert cli_main(["curves", str(short_run), str(long_run), "--plot", str(png)]) == 0
    assert f"wrote the curves to {png}" in capsys.readouterr().err
    assert_png(png, min_size=(1600, 700), max_size=(2800, 1300))
    assert no_temporary_files(tmp_path)

    fig = curves_plot.curves_figure([curves.read_metrics(short_run), curves.read_metrics(long_run)])
    assert fig._suptitle.get_text() == "drugprot curves: 2 runs"  # a short title; the runs are in the legend
    # only the panels with data (these runs log no official cells), train above eval
    assert [ax.get_title() for ax in fig.axes] == [
        "train reward",
        "train answered / shares",
        "train completion length (tokens)",
        "eval reward",
        "eval answered",  # a panel of one curve is named after it
        "eval completion length (tokens)",
    ]
    assert all(ax.get_xlim() == fig.axes[0].get_xlim() for ax in fig.axes)  # one step axis
    # train and eval reward (0.25 ... 1.0 over both: reward, accuracy and format rewards) share one y-range
    assert fig.axes[0].get_ylim() == fig.axes[3].get_ylim() == pytest.approx((0.2125, 1.0375))
    assert fig.axes[1].get_ylim() == fig.axes[4].get_ylim() == (-0.03, 1.03)
    reward_lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in reward_lines] == [
        "[1] train reward",
        "[1] train accuracy reward",
        "[1] train format reward",
        "[2] train reward",
        "[2] train accuracy reward",
        "[2] train format reward",
    ]
    assert list(reward_lines[4].get_xdata()) == [0, 1, 2, 3]
    assert list(reward_lines[4].get_ydata()) == [0.25, 0.5, 0.75, 0.75]
    assert reward_lines[0].get_color() != reward_lines[3].get_color()  # colour: the run
    assert [line.get_linestyle() for line in reward_lines[:3]] == ["-", "--", ":"]  # style: the curve
    assert [line.get_marker() for line in reward_lines] == ["o", "s", "^"] * 2  # and a marker of its own
    legend_handles = fig.axes[0].get_legend().legend_handles
    assert [(h.get_linestyle(), h.get_marker()) for h in legend_handles] == [("-", "o"), ("--", "s"), (":", "^")]
    assert list(fig.axes[3].get_lines()[0].get_xdata()) == [0, 2]
    # the legends stay off the data: line styles above each panel, the runs (whole names) under the panels
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "reward",
        "accuracy reward",
        "format reward",
    ]
    assert fig.axes[2].get_legend() is None  # one curve: the title says it
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if ax.get_legend() is not None:
            assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    (runs_legend,) = fig.legends
    assert [t.get_text() for t in runs_legend.get_texts()] == ["[1] baseline-lr1e-6", f"[2] {long_name}"]
    lowest = min(ax.get_window_extent(renderer).y0 for ax in fig.axes)
    assert runs_legend.get_window_extent(renderer).y1 < lowest


def run_with(directory: Path, series: dict[str, list[float]]) -> curves.RunMetrics:
    """A run logging ``series`` (key -> value per step from 0) on the train line."""
    lines: list[str] = []
    steps = len(next(iter(series.values())))
    for step in range(steps):
        log_metrics(lines, {key: values[step] for key, values in series.items()}, step, T0)
    directory.mkdir(parents=True)
    (directory / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    return curves.read_metrics(directory)


AGENT = "train/agg/effective/agent"


def test_runs_of_scales_orders_of_magnitude_apart_get_a_panel_each(tmp_path: Path) -> None:
    """Pair utilities (-1.5 .. 1.1) next to extraction utilities (-14 .. 2) are not flattened onto one range."""
    pytest.importorskip("matplotlib")
    assert curves_plot.scale_groups([1.2, 14.0, 1.5, 0.0]) == [[0, 2, 3], [1]]
    assert curves_plot.scale_groups([1.0, 4.9]) == [[0, 1]] and curves_plot.scale_groups([1.0, 5.1]) == [[0], [1]]
    pair = run_with(tmp_path / "pair", {f"{AGENT}/rewards/utility/mean": [-1.5, -0.5, 1.1]})
    extraction = run_with(tmp_path / "extraction", {f"{AGENT}/rewards/utility/mean": [-14.0, -6.0, 2.0]})
    pair_too = run_with(tmp_path / "pair-2", {f"{AGENT}/rewards/utility/mean": [-1.0, 0.0, 0.5]})
    fig = curves_plot.curves_figure([pair, extraction, pair_too])
    assert [ax.get_title() for ax in fig.axes] == [
        "train utility reward · runs [1] [3]",
        "train utility reward · runs [2]",
    ]
    assert fig.axes[0].get_ylim() == pytest.approx((-1.63, 1.23))
    assert fig.axes[1].get_ylim() == pytest.approx((-14.8, 2.8))


def test_the_official_metric_and_the_shares_are_drawn_on_the_rate_axis(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    run = run_with(
        tmp_path / "run",
        {
            f"{AGENT}/metrics/official_tp/mean": [0.25, 0.5],
            f"{AGENT}/metrics/official_fp/mean": [0.5, 0.25],
            f"{AGENT}/metrics/official_fn/mean": [0.75, 0.5],
            f"{AGENT}/metrics/correct/mean": [0.5, 0.75],
            f"{AGENT}/is_trainable/mean": [0.9, 0.6],
            f"{AGENT}/is_admitted/mean": [1.0, 0.8],
        },
    )
    assert run.curves[("train/agg", "agent", "official F1")] == [(0, 2 / 7), (1, 4 / 7)]
    assert run.curves[("train/agg", "agent", "official precision")] == [(0, 1 / 3), (1, 2 / 3)]
    assert run.curves[("train/agg", "agent", "official recall")] == [(0, 0.25), (1, 0.5)]
    fig = curves_plot.curves_figure([run])
    assert [ax.get_title() for ax in fig.axes] == ["train official F1 / raw accuracy", "train answered / shares"]
    assert [line.get_label() for line in fig.axes[0].get_lines()] == [
        "[1] train official F1",
        "[1] train official precision",
        "[1] train official recall",
        "[1] train raw accuracy",
    ]
    assert [line.get_label() for line in fig.axes[1].get_lines()] == [
        "[1] train trainable share",
        "[1] train admitted share",
    ]
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim() == (-0.03, 1.03)


def test_a_file_without_curves_draws_one_panel_that_says_so(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    lines: list[str] = []
    for metrics in trainer_lines(0):
        log_metrics(lines, {**metrics, "step": 0}, 0, T0)
    (tmp_path / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    fig = curves_plot.curves_figure([curves.read_metrics(tmp_path)])
    (panel,) = fig.axes
    assert [t.get_text() for t in panel.texts] == [
        "no reward, official-metric, accuracy, answered or completion-length curves in metrics.jsonl"
    ]
    png = tmp_path / "one.png"
    curves_plot.plot_curves([curves.read_metrics(tmp_path)], png)
    assert_png(png, min_size=(500, 300), max_size=(1000, 800), min_ink=0.005)  # one line of text


def test_a_long_curve_is_drawn_faint_under_its_trailing_mean(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    assert [curves_plot.smoothing_window(n) for n in (1, 20, 21, 300, 1000)] == [1, 1, 5, 6, 20]
    assert curves_plot.trailing_mean([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3) == [1.0, 1.5, 2.0, 3.0, 4.0, 5.0]
    assert curves_plot.trailing_mean([2.0, 4.0], 1) == [2.0, 4.0]
    run = run_with(tmp_path / "run", {f"{AGENT}/rewards/accuracy/mean": [float(s % 2) for s in range(40)]})
    fig = curves_plot.curves_figure([run])
    raw, mean = fig.axes[0].get_lines()
    assert list(raw.get_ydata()) == [float(s % 2) for s in range(40)] and raw.get_alpha() == 0.25
    assert mean.get_label() == "[1] train accuracy reward (mean of 5)"
    assert list(mean.get_ydata())[:6] == [0.0, 0.5, 1 / 3, 0.5, 0.4, 0.6]
    assert (raw.get_marker(), mean.get_marker(), mean.get_markevery()) == ("None", "o", 2)  # 40 points: 20 marked
    assert [t.get_text() for t in fig.legends[0].get_texts()][-1].startswith("faint: every step")


def test_one_huge_value_does_not_zero_the_trailing_mean_after_it() -> None:
    """A running total that adds 1e17 and subtracts it again has lost every small value around it (issue 31): the
    smoothing stays the mean of the plotted values whatever their magnitude."""
    values = [0.5] * 10 + [1e17] + [0.5] * 10
    smoothed = curves_plot.trailing_mean(values, 5)
    assert smoothed[:10] == [0.5] * 10
    assert smoothed[10:15] == [(0.5 * 4 + 1e17) / 5] * 5
    assert smoothed[15:] == [0.5] * 6


def test_the_utility_reward_is_a_curve_drawn_with_the_reward(tmp_path: Path) -> None:
    """A run with the ``reward`` knob logs ``rewards/utility/mean``: it is read, tabled and drawn in the reward
    panel next to the total reward."""
    run = run_with(
        tmp_path / "utility-run",
        {
            f"{AGENT}/reward/mean": [-0.3, 0.3],
            f"{AGENT}/rewards/utility/mean": [-0.4, 0.2],
            f"{AGENT}/rewards/accuracy/mean": [0.3, 0.5],
        },
    )
    assert run.curves[("train/agg", "agent", "utility reward")] == [(0, -0.4), (1, 0.2)]
    assert [row["curve"] for row in curves.summary(run)] == [
        "train reward",
        "train accuracy reward",
        "train utility reward",
    ]
    assert [(row["last"], row["best"], row["best_step"]) for row in curves.summary(run)][2] == (0.2, 0.2, 1)
    pytest.importorskip("matplotlib")
    fig = curves_plot.curves_figure([run])
    assert fig.axes[0].get_title() == "train reward"
    assert [line.get_label() for line in fig.axes[0].get_lines()] == [
        "[1] train reward",
        "[1] train utility reward",
        "[1] train accuracy reward",
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
    got = curves_plot.shared_range(values)
    assert got == (None if expected is None else pytest.approx(expected))


# ------------------------------------------------------------------------------------------------ official metric


def test_the_official_scores_of_step_means_are_the_micro_scores_of_the_sums_bit_for_bit() -> None:
    """prime-rl logs ``sum / n`` of each cell; ``official_scores`` of those means equals ``prf`` of the integer
    sums exactly (not to a tolerance), for every batch size up to ``MAX_ROLLOUTS``."""
    import random

    from drugprot.core.metrics import prf

    rng = random.Random(0)
    for _ in range(3000):
        n = rng.choice([1, 2, 3, 7, 27, 64, 100, 256, 1000, 4096, rng.randint(1, curves.MAX_ROLLOUTS)])
        per_rollout = rng.choice([1, 3, 40])  # pair tasks have a few cells, extraction abstracts dozens
        tp, fp, fn = (rng.randint(0, per_rollout * n) for _ in range(3))
        assert curves.official_scores(tp / n, fp / n, fn / n) == prf(tp, fp, fn), (n, tp, fp, fn)
    assert curves.official_scores(0.0, 0.0, 0.0) == (0.0, 0.0, 0.0)  # no cell at all: 0, as the report
    assert curves.official_scores(0.1234, 0.5, 0.25) == pytest.approx(prf(1234, 5000, 2500))  # rounded means: theirs


def test_cells_give_the_official_curves_and_replace_a_logged_f1_at_their_steps(tmp_path: Path) -> None:
    lines: list[str] = []
    evals = "eval/heldout/effective/agent"
    for step, (tp, fp, fn) in enumerate(((1, 1, 2), (2, 1, 1))):
        cells = {
            f"{evals}/metrics/official_{name}/mean": value / 3 for name, value in (("tp", tp), ("fp", fp), ("fn", fn))
        }
        log_metrics(lines, {f"{evals}/metrics/official_f1/mean": 0.99, **cells}, step, T0)
    log_metrics(lines, {f"{evals}/metrics/official_f1/mean": 0.42}, 2, T0)  # the sandbox's logged F1, no cells
    (tmp_path / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    run = curves.read_metrics(tmp_path)
    assert run.curves[("eval/heldout", "agent", "official F1")] == [(0, 2 / 5), (1, 4 / 6), (2, 0.42)]
    rows = {row["curve"]: row for row in curves.summary(run)}
    assert rows["eval/heldout official F1"]["key"] == (
        "eval/heldout/effective/agent/metrics/official_f1/mean + metrics/official_{tp,fp,fn}/mean"
    )
    assert rows["eval/heldout official precision"]["key"] == (
        "eval/heldout/effective/agent/metrics/official_{tp,fp,fn}/mean"
    )
    assert list(rows) == ["eval/heldout official F1", "eval/heldout official precision", "eval/heldout official recall"]
    # two of three cells: nothing computed, the logged F1 read as it is
    (tmp_path / "metrics.jsonl").write_text(
        json.dumps({"step": 0, f"{evals}/metrics/official_tp/mean": 0.5, f"{evals}/metrics/official_fp/mean": 0.5,
                    f"{evals}/metrics/official_f1/mean": 0.42}) + "\n", encoding="utf-8")  # fmt: skip
    run = curves.read_metrics(tmp_path)
    assert run.curves == {("eval/heldout", "agent", "official F1"): [(0, 0.42)]}
    assert curves.summary(run)[0]["key"] == f"{evals}/metrics/official_f1/mean"


def test_a_run_that_switched_from_a_logged_f1_to_the_cells_keeps_every_point(tmp_path: Path) -> None:
    """Early steps log ``metrics/official_f1`` (before the cells existed), later steps log the cells: the curve keeps
    all 8 steps, and its best is the early 0.9, not the best of the last 3."""
    lines: list[str] = []
    train = "train/agg/effective/agent"
    for step, f1 in enumerate((0.1, 0.3, 0.9, 0.6, 0.7)):
        log_metrics(lines, {f"{train}/metrics/official_f1/mean": f1}, step, T0)
    for step in (5, 6, 7):  # TP 1, FP 1, FN 0 per rollout: F1 = 2/3
        cells = {f"{train}/metrics/official_{name}/mean": value for name, value in (("tp", 1), ("fp", 1), ("fn", 0))}
        log_metrics(lines, cells, step, T0)
    (tmp_path / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    run = curves.read_metrics(tmp_path)
    assert run.curves[("train/agg", "agent", "official F1")] == [
        (0, 0.1), (1, 0.3), (2, 0.9), (3, 0.6), (4, 0.7), (5, 2 / 3), (6, 2 / 3), (7, 2 / 3)
    ]  # fmt: skip
    row = next(row for row in curves.summary(run) if row["curve"] == "train official F1")
    assert (row["points"], row["best"], row["best_step"], row["last"], row["last_step"]) == (8, 0.9, 2, 2 / 3, 7)


@pytest.mark.parametrize(
    ("cell", "value", "reason"),
    [
        ("fp", -1, "official cell fp = -1 is negative; TP, FP and FN are counts"),
        ("tp", -0.5, "official cell tp = -0.5 is negative; TP, FP and FN are counts"),
        ("fn", -1e300, "official cell fn = -1e+300 is negative; TP, FP and FN are counts"),
    ],
)
def test_a_negative_official_cell_skips_its_line_by_the_rule_prf_applies(
    tmp_path: Path, cell: str, value: float, reason: str
) -> None:
    from drugprot.core.errors import DrugprotArgumentError
    from drugprot.core.metrics import prf

    train = "train/agg/effective/agent"
    good = {f"{train}/metrics/official_{name}/mean": 1.0 for name in ("tp", "fp", "fn")}
    bad = good | {f"{train}/metrics/official_{cell}/mean": value}
    lines = [json.dumps({"step": 0, **good}), json.dumps({"step": 1, **bad})]
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = curves.read_metrics(tmp_path)
    assert run.skipped == [f"line 2: '{train}/metrics/official_{cell}/mean': {reason}"]
    assert run.curves[("train/agg", "agent", "official F1")] == [(0, 2 / 4)]
    with pytest.raises(DrugprotArgumentError, match=f"^{re.escape(reason)}$"):  # the same rule, one source
        prf(**{"tp": 1, "fp": 1, "fn": 1} | {cell: value})


@pytest.mark.parametrize(
    "cells",
    [(5e299, 0.0, 0.0), (5e299, 1e300, 5e-324), (5e-324, 5e299, 1e300), (1e300, 1e300, 1e300), (5e-324, 0.0, 0.0)],
)
def test_huge_and_tiny_in_range_cells_give_scores_in_0_1(tmp_path: Path, cells: tuple[float, float, float]) -> None:
    """Means up to ``MAX_VALUE`` and down to the smallest float: precision, recall and F1 stay in 0..1, exact
    (``Fraction``), no ``OverflowError``."""
    from fractions import Fraction

    train = "train/agg/effective/agent"
    names = ("tp", "fp", "fn")
    row = {f"{train}/metrics/official_{name}/mean": value for name, value in zip(names, cells, strict=True)}
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 0, **row}) + "\n", encoding="utf-8")
    assert cli_main(["curves", str(tmp_path), "--json"]) == 0
    tp, fp, fn = map(Fraction, cells)
    expected = (tp / (tp + fp), tp / (tp + fn), 2 * tp / (2 * tp + fp + fn))
    run = curves.read_metrics(tmp_path)
    got = tuple(run.curves[("train/agg", "agent", name)] for name in curves.FROM_CELLS)
    assert got == tuple([(0, float(value))] for value in expected)
    assert all(0 <= value <= 1 for value in map(float, expected))


def test_curves_of_several_eval_environments_are_told_apart_by_style_and_name(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    keys = {f"eval/{env}/effective/agent/metrics/{name}/mean": [0.2, 0.4] for env in ("a", "b")
            for name in ("official_f1", "correct")}  # fmt: skip
    keys["eval/a/effective/agent/metrics/none_share/mean"] = [0.5, 0.5]
    fig = curves_plot.curves_figure([run_with(tmp_path / "run", keys)])
    panel = fig.axes[0]
    assert panel.get_title() == "eval official F1 / raw accuracy"
    assert [t.get_text() for t in panel.get_legend().get_texts()] == [
        "official F1 (eval/a)",
        "official F1 (eval/b)",
        "raw accuracy (eval/a)",
        "raw accuracy (eval/b)",
    ]
    assert len({str(line.get_linestyle()) for line in panel.get_lines()}) == 4  # one style per curve
    assert [line.get_marker() for line in panel.get_lines()] == ["o", "s", "^", "D"]  # and one marker
    assert fig.axes[1].get_title() == "eval N / none share"  # a panel of one curve is named after it


# ------------------------------------------------------------------------------------------------ both scopes


def loop_check_line(step: int, groups: list[list[float]]) -> dict[str, Any]:
    """The orchestrator's train line at a step of ``groups`` (each a group's accuracies), as the loop check's
    ``metrics.jsonl`` has it: ``all`` over every rollout, ``effective`` over the groups whose accuracies differ
    (prime-rl's zero-advantage filter drops the others, ``train_sink.py`` 361-381); ``is_trainable`` per trace."""
    everything = [a for group in groups for a in group]
    kept = [a for group in groups if len(set(group)) > 1 for a in group]
    metrics: dict[str, Any] = {}
    for subset, accuracy in (("all", everything), ("effective", kept)):
        trainable = sum(len(g) for g in groups if len(set(g)) > 1) / len(everything) if subset == "all" else 1.0
        for prefix in ("train/agg", "train/drugprot"):
            metrics |= agent_metrics(prefix, subset, accuracy, [300] * len(accuracy))
            metrics[f"{prefix}/{subset}/agent/metrics/correct/mean"] = sum(accuracy) / len(accuracy)
            metrics[f"{prefix}/{subset}/agent/is_trainable/mean"] = trainable
            metrics[f"{prefix}/{subset}/agent/is_admitted/mean"] = 1.0
    return metrics | {"progress/rollouts": len(everything), "progress/tasks": len(groups), "step": step}


ANSI_WARNING = "\x1b[2m12:00:{s:02d}\x1b[0m\x1b[33m\x1b[1m WARNING\x1b[0m \x1b[33m[orchestrator] {m}\x1b[0m\n"
"""A warning line as prime-rl's loguru console format writes it to ``orchestrator.log`` (colours kept)."""


def empty_batch_warning(step: int, episodes: int, streak: int) -> str:
    """prime-rl 559b447 ``orchestrator.py`` 641-646, word for word."""
    return (
        f"Step {step}: empty train batch after {episodes} finalized episodes (consecutive empty batches: {streak}/10)"
    )


def loop_check_run(directory: Path, *, log: str | None) -> Path:
    """Two steps of 3 groups of 8 with one all-equal group each (the loop check's ``UNIFORM_EVERY = 3``), and
    the orchestrator log with two empty batches before step 1 and one few-trainable warning."""
    uniform, mixed = [1.0] * 8, [1.0, 1.0] + [0.0] * 6
    lines: list[str] = []
    for step in range(2):
        log_metrics(lines, loop_check_line(step, [uniform, mixed, mixed]), step, T0 + step)
    directory.mkdir(parents=True)
    (directory / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
    if log is not None:
        (directory / "logs" / "attempt_0").mkdir(parents=True)
        (directory / "logs" / "attempt_0" / "orchestrator.log").write_text(log, encoding="utf-8")
    return directory


ORCHESTRATOR_LOG = "".join(
    [
        "\x1b[2m12:00:00\x1b[0m\x1b[1m    INFO\x1b[0m [orchestrator] Starting orchestrator\n",
        ANSI_WARNING.format(s=1, m=empty_batch_warning(1, 24, 1)),
        ANSI_WARNING.format(s=2, m=empty_batch_warning(1, 24, 2)),
        ANSI_WARNING.format(
            s=3, m="Only 2/24 effective traces are trainable (8.3%) — consider reviewing task difficulty"
        ),
    ]
)


def test_the_curves_show_all_rollouts_with_the_trained_on_batch_beside(tmp_path: Path) -> None:
    run = curves.read_metrics(loop_check_run(tmp_path / "run", log=None))
    assert run.subsets == {"train/agg": ("all", "effective")}
    assert run.curves[("train/agg", "agent", "trainable share")] == [(0, 16 / 24), (1, 16 / 24)]
    assert run.effective[("train/agg", "agent", "trainable share")] == [(0, 1.0), (1, 1.0)]
    assert run.curves[("train/agg", "agent", "raw accuracy")] == [(0, 0.5), (1, 0.5)]
    assert run.effective[("train/agg", "agent", "raw accuracy")] == [(0, 0.25), (1, 0.25)]
    assert curves.format_table(run).splitlines()[3:] == [
        "  scope: all rollouts; effective last = the trained-on batch (eval: the rollouts without an error), where it "
        "differs",
        "  curve                           last (step)       best (step)  points    effective last",
        "  train reward                      0.600 (1)         0.600 (0)       2         0.350 (1)",
        "  train accuracy reward             0.500 (1)         0.500 (0)       2         0.250 (1)",
        "  train format reward               1.000 (1)         1.000 (0)       2",
        "  train raw accuracy                0.500 (1)         0.500 (0)       2         0.250 (1)",
        "  train answered                    1.000 (1)         1.000 (0)       2",
        "  train trainable share             0.667 (1)                 -       2         1.000 (1)",
        "  train admitted share              1.000 (1)                 -       2",
        "  train completion tokens           300.0 (1)                 -       2",
        "  empty train batches: not in metrics.jsonl (an empty batch logs nothing); "
        "--log <run>/logs/latest/orchestrator.log counts them",
    ]


def test_the_orchestrator_log_gives_the_empty_batches_beside_their_expected_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = loop_check_run(tmp_path / "run", log=ORCHESTRATOR_LOG)
    assert cli_main(["curves", str(run_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    # 2 empty of 4 batches; expected (1/3)**3 = 3.7% at 3 groups a step with one in three all-equal
    assert out[-3:] == [
        f"  orchestrator log: {run_dir / 'logs' / 'attempt_0' / 'orchestrator.log'}",
        "  empty train batches: 2 of 4 (50.0%; longest run 2/10); expected from the all-rollouts trainable share: 3.7%",
        "  'Only n/m effective traces are trainable' warnings: 1",
    ]
    assert cli_main(["curves", "--json", str(run_dir)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["subsets"] == {"train/agg": ["all", "effective"]}
    assert payload["empty_batches"] == {
        "shipped_steps": 2,
        "expected_rate": pytest.approx(1 / 27),
        "observed": {
            "logs": [str(run_dir / "logs" / "attempt_0" / "orchestrator.log")],
            "empty": 2,
            "longest_streak": 2,
            "few_trainable_warnings": 1,
            "stopped": False,
            "rate": 0.5,
        },
    }
    row = next(r for r in payload["curves"] if r["curve"] == "train raw accuracy")
    assert (row["scope"], row["key"], row["last"]) == ("all", "train/agg/all/agent/metrics/correct/mean", 0.5)
    assert row["differs"] is True
    assert (row["effective"]["key"], row["effective"]["last"]) == (
        "train/agg/effective/agent/metrics/correct/mean",
        0.25,
    )


def test_ten_empty_batches_in_a_row_say_the_run_stopped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warnings = [ANSI_WARNING.format(s=i, m=empty_batch_warning(2, 24, i)) for i in range(1, 11)]
    stop = "RuntimeError: 10 consecutive empty train batches — check algorithm credit and task difficulty.\n"
    log = tmp_path / "orchestrator.log"
    log.write_text("".join(warnings) + stop, encoding="utf-8")
    run_dir = loop_check_run(tmp_path / "run", log=None)
    assert cli_main(["curves", str(run_dir), "--log", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-3].startswith("  empty train batches: 10 of 12 (83.3%; longest run 10/10)")
    assert out[-1] == (
        "  the run stopped: 10 empty batches in a row (every group all-equal: a collapse, or tasks too easy or too "
        "hard)"
    )


def test_a_run_with_one_scope_reads_and_says_which(tmp_path: Path) -> None:
    run = run_with(tmp_path / "old", {"train/agg/effective/agent/is_trainable/mean": [1.0, 1.0]})
    assert run.subsets == {"train/agg": ("effective",)} and run.effective == {}
    assert curves.format_table(run).splitlines()[3] == (
        "  train/agg: effective only (logged before drugprot read both scopes, or by an older sandbox): without the "
        "all-equal groups prime-rl drops"
    )
    assert curves.summary(run)[0]["key"] == "train/agg/effective/agent/is_trainable/mean"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--log", "missing.log"], "--log missing.log: no such file"),
        (["{run}", "--log", "{log}"], "--log names one run's log; 2 runs given"),
    ],
)
def test_a_bad_log_flag_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    run_dir = loop_check_run(tmp_path / "run", log=None)
    log = tmp_path / "orchestrator.log"
    log.write_text("", encoding="utf-8")
    argv = ["curves", str(run_dir), *(a.format(log=log, run=run_dir) for a in extra)]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_the_docs_table_of_healthy_empty_batch_rates_is_z_to_the_groups() -> None:
    from drugprot.evaluation.curves_log import expected_empty_rate, rate_table

    page = (Path(__file__).resolve().parents[2] / "docs" / "training" / "watch.md").read_text(encoding="utf-8")
    begin = "<!-- empty-batch-rates: drugprot.evaluation.curves_log.rate_table -->\n"
    assert page.count(begin) == 1
    assert page.split(begin)[1].split("\n<!-- /empty-batch-rates -->")[0] == rate_table()
    # the figures: 16 groups a step, 6% of the steps empty at z = 0.84, 13% at z = 0.88
    assert "| 0.84 | 49.8% | 24.8% | 6.1% | 0.4% |" in rate_table()
    assert round(expected_empty_rate([0.88], [16]), 3) == 0.129
    assert expected_empty_rate([0.5, 1.0], [2, 3]) == 0.625 and expected_empty_rate([], []) is None


def test_the_logs_of_every_attempt_are_counted_in_order_and_json_logging_counts_too(tmp_path: Path) -> None:
    from drugprot.evaluation.curves_log import count_log, find_logs

    run_dir = tmp_path / "run"
    for attempt, text in ((10, empty_batch_warning(9, 24, 1)), (2, empty_batch_warning(3, 24, 1))):
        (run_dir / "logs" / f"attempt_{attempt}").mkdir(parents=True)
        json_line = json.dumps({"timestamp": "2026-12-07T12:00:00", "level": "WARNING", "message": text})
        (run_dir / "logs" / f"attempt_{attempt}" / "orchestrator.log").write_text(json_line + "\n", encoding="utf-8")
    found = find_logs(run_dir)
    assert [p.parent.name for p in found] == ["attempt_2", "attempt_10"]  # by number, not by name
    counts = count_log(found)
    assert (counts.empty, counts.longest_streak, counts.few_trainable, counts.stopped) == (2, 1, 0, False)
    assert find_logs(tmp_path / "none") == []
