"""The official metric a training run sees: every rollout records its official cells (``official_tp``,
``official_fp``, ``official_fn``) and its raw accuracy (``correct``) as verifiers metrics; prime-rl logs each step's
mean of each metric; ``drugprot curves`` computes the step's official micro-F1, precision and recall from those
means. On real rollouts (the shared ``vf-eval`` run of the fixture, scored by the real taskset) they equal
``drugprot report``'s micro figures on the same rollouts, exactly.

prime-rl's aggregation at the pinned commit 559b447 (``src/prime_rl/orchestrator/metrics.py``): ``TraceMetrics.metrics``
is ``CustomMetrics(records, "metrics")``, one ``Stat`` per metric name over the traces that carry it (an unscored
``None`` counts 0.0), and ``Stat.mean`` is ``sum(values) / len(values)``, logged as
``<prefix>/<subset>/<agent>/metrics/<name>/mean``. ``step_means`` does the same; a second test runs prime-rl's own
classes where prime-rl is installed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.rewards import METRIC_NAMES
from drugprot.evaluation import curves
from drugprot.evaluation.runs import load_run
from drugprot.modes.extraction.summary import summarize_extraction
from drugprot.modes.pair.summary import summarize
from tests.conftest import FIXTURE_JSONL, FixtureRun
from tests.e2e import read_episodes

SCOPES = ("train/agg", "eval/drugprot-validation")
STEPS = 3
"""The shared run's 27 rollouts, read as 3 steps of 9."""


def step_means(traces: list[dict[str, Any]]) -> dict[str, float]:
    """prime-rl's ``CustomMetrics(records, "metrics")`` means: per metric name, over the traces that carry it."""
    names = sorted({name for trace in traces for name in trace["metrics"]})
    means = {}
    for name in names:
        values = [float(t["metrics"][name] or 0.0) for t in traces if name in t["metrics"]]
        means[name] = sum(values) / len(values)
    return means


def metrics_file(directory: Path, lines: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return directory


def sub_run(run_dir: Path, episodes: list[dict[str, Any]], directory: Path) -> Path:
    """A copy of the run holding only ``episodes`` (its resolved config kept), for ``drugprot report``."""
    shutil.copytree(run_dir / "configs", directory / "configs")
    (directory / "traces.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes), encoding="utf-8")
    return directory


def report(run_dir: Path) -> dict[str, Any]:
    """``drugprot report --json``'s summary of a run (either mode)."""
    run = load_run(run_dir)
    return summarize_extraction(run) if run.extraction else summarize(run)


def report_figures(run_dir: Path) -> dict[str, float]:
    got = report(run_dir)
    return {
        "official F1": got["micro_f1"],
        "official precision": got["micro_precision"],
        "official recall": got["micro_recall"],
        "raw accuracy": got["accuracy"],
    }


def test_the_f1_curves_reads_is_the_reports_micro_f1_of_the_steps_rollouts(
    tmp_path: Path, fixture_run: FixtureRun
) -> None:
    episodes = read_episodes(fixture_run.run_dir)
    traces = [trace for episode in episodes for trace in episode["traces"]]
    assert len(traces) == 27 and all(set(METRIC_NAMES) <= set(trace["metrics"]) for trace in traces)
    size = len(episodes) // STEPS
    lines, expected = [], []
    for step in range(STEPS):
        chunk = episodes[step * size : (step + 1) * size]
        means = step_means([trace for episode in chunk for trace in episode["traces"]])
        metrics = {f"{scope}/effective/agent/metrics/{name}/mean": v for scope in SCOPES for name, v in means.items()}
        lines.append({"step": step, **metrics})
        expected.append(report_figures(sub_run(fixture_run.run_dir, chunk, tmp_path / f"step-{step}")))
    run = curves.read_metrics(metrics_file(tmp_path / "run", lines))
    for scope in SCOPES:
        for name in curves.FROM_CELLS:
            assert run.curves[(scope, "agent", name)] == [
                (step, figures[name]) for step, figures in enumerate(expected)
            ]
    # the raw accuracy is the mean of ``correct``: the report's accuracy (a mean of 0s and 1s, summed alike)
    accuracy = run.curves[("train/agg", "agent", "raw accuracy")]
    assert accuracy == [(step, figures["raw accuracy"]) for step, figures in enumerate(expected)]
    # the whole run as one step: the report's micro figures of the run (19 TP, 4 FP, 9 FN: F1 38/51)
    whole = curves.read_metrics(metrics_file(tmp_path / "whole", [{"step": 0} | {
        f"train/agg/effective/agent/metrics/{name}/mean": v for name, v in step_means(traces).items()}]))  # fmt: skip
    figures = report_figures(fixture_run.run_dir)
    assert [whole.curves[("train/agg", "agent", name)] for name in curves.FROM_CELLS] == [
        [(0, figures[name])] for name in curves.FROM_CELLS
    ]
    assert figures["official F1"] == 38 / 51


def test_prime_rl_s_own_metric_classes_give_the_reports_micro_f1(tmp_path: Path, fixture_run: FixtureRun) -> None:
    """The same rollouts through prime-rl's ``TrainMetrics`` / ``EvalMetrics.to_wandb`` (what the orchestrator
    logs), then ``drugprot curves``; skipped where prime-rl is not installed (``scripts/prime_rl_check.sh`` builds
    an environment with it)."""
    prime_rl = pytest.importorskip(
        "prime_rl.orchestrator.metrics",
        reason="prime-rl is not installed in this environment (scripts/prime_rl_check.sh installs the pinned commit)",
    )
    import verifiers.v1 as vf
    from verifiers.v1.episode import GroupInfo

    episodes = [vf.Episode.model_validate(episode) for episode in read_episodes(fixture_run.run_dir)]
    # the orchestrator stamps each episode with its rollout group (the ``all`` scope's solve rates read it)
    episodes = [episode.model_copy(update={"group": GroupInfo(id=f"g{i}")}) for i, episode in enumerate(episodes)]
    records = [
        prime_rl.TraceRecord(episode=episode, trace=trace, sampled=True, admitted=True, cancelled=False)
        for episode in episodes
        for trace in episode.traces
    ]
    line: dict[str, float] = {}
    for subset in ("all", "effective"):  # both of the orchestrator's scopes (here over the same rollouts)
        line |= prime_rl.TrainMetrics(episodes, records).to_wandb(prefix="train/agg", subset=subset)
        line |= prime_rl.EvalMetrics(episodes, records, group_size=1).to_wandb(
            prefix="eval/drugprot-validation", subset=subset
        )
    run = curves.read_metrics(metrics_file(tmp_path / "run", [{"step": 0, **line}]))
    figures = report_figures(fixture_run.run_dir)
    for scope in SCOPES:
        assert run.subsets[scope] == ("all", "effective")
        assert [run.curves[(scope, "agent", name)] for name in curves.FROM_CELLS] == [
            [(0, figures[name])] for name in curves.FROM_CELLS
        ]
        assert [run.effective[(scope, "agent", name)] for name in curves.FROM_CELLS] == [
            [(0, figures[name])] for name in curves.FROM_CELLS
        ]


# ------------------------------------------------------------------------------------------------ scored traces


def _reply(question: Any, rng: Any) -> str:
    """A reply of one of several shapes: the gold, a wrong type, N, no answer (pair); the gold, part of it, a
    spurious line, a line the official scorer ignores, ``none``, no block (extraction)."""
    from drugprot.core.extraction import answer_block
    from drugprot.core.labels import RELATION_NAMES, letter_of

    think = "<think>The abstract says how the chemical acts.</think>"
    if question.gold is None:
        letters = [question.answers[0], letter_of(rng.choice(RELATION_NAMES))]
        letters += ["N"] if question.with_no_relation else []
        return rng.choice([*(f"{think}\\boxed{{{letter}}}" for letter in letters), f"{think}no answer"])
    gold = sorted(question.gold.relations)
    chemical, gene = sorted(question.gold.chemicals)[0], sorted(question.gold.genes)[0]
    lines = rng.choice(
        [gold, gold[: len(gold) // 2], [*gold, (chemical, gene, "AGONIST")], [("T999", gene, "AGONIST")], []]
    )
    return rng.choice([think + answer_block(lines), f"{think}no block"])


@pytest.mark.parametrize(
    "knobs", [{"negatives": "all"}, {"mode": "extraction"}], ids=["pair-all-negatives", "extraction"]
)
async def test_cells_scored_by_the_taskset_give_the_reports_micro_scores(tmp_path: Path, knobs: dict[str, Any]) -> None:
    """Traces scored by the real v1 taskset (``await task.score``) on the fixture, with NO-RELATION candidates (false
    positives on negatives) and in extraction mode (lines the official scorer ignores): the step means of their
    recorded cells give ``drugprot report``'s micro figures of the same traces, exactly."""
    import random

    from drugprot.core.options import TaskOptions
    from drugprot.core.questions import load_questions
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTask, task_data
    from tests.envs.traces import make_trace
    from tests.evaluation.traces import write_run

    options = TaskOptions(split="train", data_path=str(FIXTURE_JSONL), **knobs)
    config = DrugprotConfig(id="drugprot", split="train", data_path=str(FIXTURE_JSONL), **knobs)
    rng = random.Random(0)
    episodes = []
    for question in load_questions(options) * 3:  # 3 rollouts a task
        task = DrugprotTask(task_data(question), config.task)
        trace = make_trace(task, _reply(question, rng), None)
        await task.score(trace)
        dumped = trace.model_dump(mode="json")
        episode = {"id": "e", "env": {"id": "drugprot"}, "task": dumped["task"], "run": {"type": "eval"}, "ok": True}
        episodes.append(json.dumps(episode | {"errors": [], "traces": [dumped]}))
    run_dir = write_run(tmp_path / "eval", episodes, negatives=knobs.get("negatives", 0))
    traces = [json.loads(line)["traces"][0] for line in episodes]
    run = curves.read_metrics(metrics_file(tmp_path / "train", [{"step": 0} | {
        f"train/agg/effective/agent/metrics/{name}/mean": v for name, v in step_means(traces).items()}]))  # fmt: skip
    counts = report(run_dir)["micro_counts"]
    assert counts["fp"] > 0 and counts["fn"] > 0 and counts["tp"] > 0  # every cell occurs
    figures = report_figures(run_dir)
    assert [run.curves[("train/agg", "agent", name)] for name in curves.FROM_CELLS] == [
        [(0, figures[name])] for name in curves.FROM_CELLS
    ]
