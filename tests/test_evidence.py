"""The alignment evidence (``evidence.alignment``, ``evidence.operating_points``, ``evidence.decision``,
``evidence.rl_sim``) on the fixture.

The orderings docs/evidence.md's tables rest on, pinned on ``tests/fixtures/drugprot_fixture.jsonl``: every reward ranks
the policy family as the official micro-F1 does up to the listed Spearman, no degenerate policy outranks the
lexical baseline; the calibrated cost and the agreement around operating points; the decision rules on hand-made
probabilities, constants chosen on training folds only; and a tiny sandbox run whose ``metrics.jsonl`` carries the
official cells, ``correct`` and ``is_trainable`` that ``drugprot curves`` reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from drugprot.core.rewards import Costs, Reward, on_grid
from drugprot.evaluation.curves import read_metrics
from evidence import alignment, decision, operating_points, rl_sim
from evidence.shared import (
    N_INDEX,
    calibrated_fp,
    folds,
    load,
    reward_value,
    score_document,
    score_pair,
    split_by_pmid,
    stable_unit,
)

FIXTURE = str(Path(__file__).parent / "fixtures" / "drugprot_fixture.jsonl")


@pytest.fixture(scope="module")
def tables() -> dict[str, dict]:
    documents = load(FIXTURE)
    costs = Costs(fp=0.5, fn=1.0)
    return {"pair": alignment.pair_table(documents, costs), "extraction": alignment.extraction_table(documents, costs)}


def _column(table: dict, name: str) -> dict:
    return next(c for c in table["columns"] if c["name"] == name)


def _value(table: dict, column: str, policy: str) -> float:
    return _column(table, column)["values"][table["policies"].index(policy)]


@pytest.mark.parametrize(
    ("mode", "column", "spearman", "inversions"),
    [
        ("pair", "pair utility, negatives=all", 0.9766, 9),
        ("pair", "pair accuracy, negatives=all", 0.9593, 13),
        ("pair", "pair accuracy, negatives=0", 0.9557, 8),
        ("pair", "pair accuracy, negatives=1", 0.9675, 12),
        ("pair", "pair accuracy, negatives=2", 0.9646, 13),
        ("extraction", "extraction utility", 0.9672, 13),
        ("extraction", "extraction accuracy", 0.9805, 8),
    ],
)
def test_each_reward_ranks_the_family_like_the_official_f1(
    tables: dict, mode: str, column: str, spearman: float, inversions: int
) -> None:
    found = _column(tables[mode], column)
    assert round(found["spearman"], 4) == spearman
    assert len(found["inversions"]) == inversions
    assert found["degenerate_above_lexical"] == []


def test_the_family_spans_precision_and_recall(tables: dict) -> None:
    pair, extraction = tables["pair"], tables["extraction"]
    assert len(pair["policies"]) == 21 and len(extraction["policies"]) == 22
    f1 = dict(zip(extraction["policies"], extraction["f1"], strict=True))
    assert f1["gold"] == 1.0 and f1["none / N (majority)"] == 0.0
    assert f1["gold"] > f1["gold, 25% missing"] > f1["gold, 50% missing"] > f1["gold, 75% missing"]
    assert f1["gold, 10% spurious"] > f1["gold, 30% spurious"] > f1["gold, 60% spurious"] > f1["gold, 100% spurious"]
    assert round(f1["lexical"], 3) == 0.533


def test_utility_values_are_the_official_cells_costed(tables: dict) -> None:
    # extraction utility per abstract: TP - 0.5 FP - 1 FN, plus 1/8 format; the fixture has 9 abstracts.
    pair, extraction = tables["pair"], tables["extraction"]
    assert round(_value(extraction, "extraction utility", "gold"), 3) == 3.236
    assert round(_value(extraction, "extraction utility", "none / N (majority)"), 3) == -2.986
    assert round(_value(pair, "pair utility, negatives=all", "gold"), 3) == 0.744
    assert round(_value(pair, "pair utility, negatives=all", "lexical"), 3) == 0.03
    assert round(_value(pair, "pair utility, negatives=all", "none / N (majority)"), 3) == -0.542


def test_inversions_lists_every_pair_ordered_the_other_way() -> None:
    names = ["a", "b", "c"]
    assert alignment.inversions([0.1, 0.2, 0.3], [3.0, 2.0, 1.0], names) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert alignment.inversions([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], names) == []
    assert alignment.inversions([0.2, 0.2], [1.0, 2.0], names[:2]) == []  # equal F1 is no inversion


def test_reward_value_weights_the_knob_values() -> None:
    costs = Costs(fp=0.5, fn=1.0)
    wrong_type = score_pair("INHIBITOR", ("AGONIST",), with_no_relation=True)  # 1 FP, 1 FN
    assert reward_value(wrong_type, "accuracy", costs) == 0.125
    assert reward_value(wrong_type, "utility", costs) == -1.5 + 0.125
    negative = score_pair("NO-RELATION", ("NO-RELATION",), with_no_relation=True)
    assert reward_value(negative, "utility", costs) == 0.125
    assert reward_value(negative, "accuracy", costs) == 1.125
    document = load(FIXTURE)[0]
    assert reward_value(score_document([], document), "utility", costs) == (
        -len({(r.arg1, r.arg2, r.type) for r in document.relations}) + 0.125
    )


def test_the_utility_states_a_relation_above_its_threshold() -> None:
    p = np.zeros((3, 14))
    p[0, 4], p[0, N_INDEX] = 0.25, 0.75  # INHIBITOR at 0.25 > 0.2: stated
    p[1, 4], p[1, N_INDEX] = 0.15, 0.85  # 0.15 < 0.2: N
    p[2, 0], p[2, 9], p[2, N_INDEX] = 0.3, 0.1, 0.6  # the most probable type
    assert Costs(fp=0.5, fn=1.0).threshold == pytest.approx(0.2)
    assert decision.threshold_rule(p, 0.2).tolist() == [4, N_INDEX, 0]


def test_prior_shift_reweights_n_by_bayes_rule() -> None:
    p = np.zeros((1, 14))
    p[0, 4], p[0, N_INDEX] = 0.2, 0.8
    shifted = decision.prior_shift(p, from_negative=0.8, to_negative=0.5)
    assert shifted[0, 4] == pytest.approx(0.5) and shifted[0, N_INDEX] == pytest.approx(0.5)


def test_the_per_document_f1_rule_answers_none_when_likely_empty() -> None:
    rng = np.random.default_rng(0)
    sure, unlikely = np.zeros((1, 14)), np.zeros((1, 14))
    sure[0, 4], sure[0, N_INDEX] = 0.9, 0.1
    unlikely[0, 4], unlikely[0, N_INDEX] = 0.1, 0.9
    assert decision.expected_f1_prefix(sure, rng).tolist() == [4]
    # stating the relation earns F1 1 with probability 0.1; answering none earns 1 with probability 0.9
    assert decision.expected_f1_prefix(unlikely, rng).tolist() == [N_INDEX]


def test_the_calibrated_cost_puts_the_threshold_at_half_the_f1() -> None:
    assert calibrated_fp(0.4) == pytest.approx(0.5)
    assert calibrated_fp(0.3) == pytest.approx(0.6 / 1.7)
    assert calibrated_fp(0.6) == pytest.approx(1.2 / 1.4)
    for f1 in (0.2, 0.3, 0.5, 0.7):  # the cost on the 1/64 grid moves the threshold by at most 1/384 (fn_cost 2)
        assert abs(Costs(calibrated_fp(f1, 2.0), 2.0).threshold - f1 / 2) <= 1 / 384


def test_splits_vary_the_held_out_abstracts_and_folds_stay_inside_train() -> None:
    documents = load(FIXTURE)
    train, test = split_by_pmid(documents)  # split 0: the single split of the earlier figures
    assert [d.pmid for d in test] == [d.pmid for d in documents if stable_unit(f"split:{d.pmid}") < 0.3]
    assert [d.pmid for d in test] == ["90000001", "90000002", "90000006", "90000007", "90000009"]
    assert [d.pmid for d in split_by_pmid(documents, split=1)[1]] == ["90000003", "90000005", "90000008"]
    assert folds(train, 3, 0) == [1, 2, 2, 2]


def test_constants_are_chosen_on_out_of_fold_decisions_of_the_train_abstracts() -> None:
    documents = load(FIXTURE)
    pairs = decision.Pairs.of(documents, ["cues"])
    train, test = split_by_pmid(documents)
    oof = decision.cross_fit(pairs, "cues", train, 0, 2, 1.0)
    assert {r.document.pmid for r in oof.rows} <= {d.pmid for d in train}
    assert not {r.document.pmid for r in oof.rows} & {d.pmid for d in test}
    result = decision.analysis(documents, Costs(), splits=2, k=2, classes=["cues"])
    block = result["classes"]["cues"]
    assert [r["split"] for r in block["runs"]] == [0, 1]
    assert block["summary"]["fp_cv_chosen"] == [0.05, 0.75]
    assert set(block["summary"]["rules"]) == set(decision.RULES)
    assert round(block["summary"]["rules"]["oracle"]["f1"]["mean"], 3) == 0.291


def test_agreement_counts_pairs_ordered_like_f1() -> None:
    assert operating_points.agreement([0.1, 0.2, 0.3], [1.0, 2.0, 3.0]) == 1.0
    assert operating_points.agreement([0.1, 0.2, 0.3], [1.0, 3.0, 2.0]) == pytest.approx(2 / 3)
    assert operating_points.agreement([0.1, 0.2, 0.2], [1.0, 1.0, 5.0]) == 0.5  # a tie counts against; equal F1 skipped


def test_the_calibrated_utility_ranks_nearby_policies_like_f1() -> None:
    result = operating_points.operating_points(load(FIXTURE), points=(0.3, 0.5))
    agreement = {
        p["point"]: {name.split(" (")[0]: r["agreement"] for name, r in p["rewards"].items()} for p in result["points"]
    }
    assert [len(p["policies"]) for p in result["points"]] == [24, 24]
    assert all(abs(q["f1"] - p["point"]) <= 0.05 for p in result["points"] for q in p["policies"])
    assert round(agreement[0.3]["utility fp=0.359375"], 3) == 1.0  # 0.353 on the 1/64 grid
    assert round(agreement[0.3]["utility fp=0.5"], 3) == 0.963
    assert round(agreement[0.5]["utility fp=0.671875"], 3) == 1.0  # 0.667 on the grid
    assert round(agreement[0.5]["utility fp=0.5"], 3) == 0.931
    assert round(agreement[0.5]["accuracy, negatives=all"], 3) == 0.651


def test_the_reward_tables_are_the_environments_rewards() -> None:
    data = rl_sim.prepare(load(FIXTURE))
    for with_n in (True, False):
        for reward in (Reward("utility", Costs(0.37, 1.3)), Reward("accuracy")):
            table = data.table(with_n, reward=reward)
            expected = [[reward.value(s) for s in row] for row in data.scores(with_n)]
            assert np.abs(table - np.array(expected)).max() < 1e-12


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    assert rl_sim.main(["--data-path", FIXTURE, "--out", str(out), "--smoke"]) == 0
    return out


def test_a_sandbox_run_writes_metrics_drugprot_curves_reads(smoke: Path) -> None:
    tmp_path = smoke
    summary = json.loads((tmp_path / "summary.json").read_text())
    table = summary["classes"]["cues"]["table"]
    assert [row["recipe"] for row in table] == [r.name for r in rl_sim.RECIPES]
    start = {row["recipe"]: row["start_f1"]["mean"] for row in table}
    assert all(v == pytest.approx(2 / 19) for v in start.values())  # every recipe answers with the same 14 options
    run = read_metrics(tmp_path / "cues" / "pair-utility-all-split0")
    assert run.skipped == [] and run.steps == 5
    assert [s for s, _ in run.curves[("eval/heldout", "agent", "official F1")]] == [0, 2, 4]
    assert [s for s, _ in run.curves[("eval/heldout", "agent", "N / none share")]] == [0, 2, 4]
    assert [s for s, _ in run.curves[("train/agg", "agent", "reward")]] == [0, 1, 2, 3]
    assert [s for s, _ in run.curves[("train/agg", "agent", "accuracy reward")]] == [0, 1, 2, 3]
    assert [s for s, _ in run.curves[("train/agg", "agent", "utility reward")]] == [0, 1, 2, 3]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


def test_the_sandbox_logs_the_official_cells_correct_and_is_trainable(smoke: Path) -> None:
    tmp_path = smoke
    agent, held = "train/agg/all/agent", "eval/heldout/effective/agent"
    for recipe in rl_sim.RECIPES:
        lines = _lines(tmp_path / "cues" / f"{recipe.name}-split0")
        for line in lines[:-1]:  # every training step
            for name in ("official_tp", "official_fp", "official_fn", "correct"):
                assert line[f"{agent}/metrics/{name}/mean"] >= 0
            assert 0 <= line[f"{agent}/is_trainable/mean"] <= 1
        for line in lines[::2]:  # every evaluation: F1 from the mean cells is the official F1, exactly
            tp, fp, fn = (line[f"{held}/metrics/official_{c}/mean"] for c in ("tp", "fp", "fn"))
            assert 2 * tp / (2 * tp + fp + fn) == pytest.approx(line[f"{held}/metrics/official_f1/mean"])


def test_the_adaptive_cost_follows_the_running_f1_of_the_training_rollouts(smoke: Path) -> None:
    tmp_path = smoke
    agent = "train/agg/all/agent"
    lines = _lines(tmp_path / "cues" / "pair-utility-adaptive-split0")[:-1]
    fixed = _lines(tmp_path / "cues" / "pair-utility-calibrated-split0")[:-1]
    assert {line[f"{agent}/metrics/fp_cost/mean"] for line in fixed} == {lines[0][f"{agent}/metrics/fp_cost/mean"]}
    running = np.zeros(3)
    for step, (line, after) in enumerate(zip(lines, lines[1:], strict=False)):
        cells = np.array([line[f"{agent}/metrics/official_{c}/mean"] for c in ("tp", "fp", "fn")])
        running = rl_sim.RUNNING * running + (1 - rl_sim.RUNNING) * cells
        tp, fp, fn = running / (1 - rl_sim.RUNNING ** (step + 1))
        expected = on_grid(calibrated_fp(2 * tp / (2 * tp + fp + fn)))  # the cost in effect: on the reward grid
        assert after[f"{agent}/metrics/fp_cost/mean"] == pytest.approx(expected)


@pytest.mark.parametrize("recipe", [r for r in rl_sim.RECIPES if r.negatives != 0], ids=lambda r: r.name)
def test_a_group_that_answers_alike_gets_no_gradient(recipe: rl_sim.Recipe) -> None:
    # GRPO's advantage is the reward minus its group's mean: a policy that always answers INHIBITOR has 8 equal
    # rollouts per prompt, so nothing to learn from; a uniform policy's groups differ and move the weights.
    data = rl_sim.prepare(load(FIXTURE))
    settings = rl_sim.Settings(pair_prompts=4, documents=2)
    costs = Costs(fp=0.5, fn=1.0)
    step = rl_sim.pair_step if recipe.mode == "pair" else rl_sim.extraction_step
    work = data.tasks(data.train, recipe.negatives) if recipe.mode == "pair" else data.candidates(data.train)
    always = np.zeros((14, data.x.shape[1]))
    always[4, 0] = 100.0  # the bias column: INHIBITOR everywhere
    grad, logged = step(always, data, recipe, costs, work, settings, np.random.default_rng(0))
    assert not grad.any() and logged["is_trainable"] == 0.0
    assert logged["effective"] == {}  # prime-rl's filter ships nothing: an empty batch
    grad, logged = step(np.zeros_like(always), data, recipe, costs, work, settings, np.random.default_rng(0))
    assert grad.any() and logged["is_trainable"] > 0
    assert logged["effective"]["is_trainable"] == 1.0


def test_the_two_scopes_are_prime_rl_s_all_rollouts_and_the_shipped_groups() -> None:
    from evidence.sim_data import scoped_means

    rewards = np.array([[1.0, 1.0], [0.0, 1.0], [0.5, 0.0]])  # the first group all-equal: prime-rl drops it
    trainable = np.array([False, True, True])
    means = scoped_means({"reward": rewards}, trainable)
    assert means == {
        "reward": 3.5 / 6,
        "is_trainable": 2 / 3,
        "effective": {"reward": 1.5 / 4, "is_trainable": 1.0},
    }
    gated = scoped_means({"reward": rewards}, trainable, kept=np.array([False, True, False]))
    assert gated["effective"] == {"reward": 0.5, "is_trainable": 1.0}
    assert scoped_means({"reward": rewards[:1]}, trainable[:1])["effective"] == {}


def test_a_collapsed_sandbox_run_shows_in_the_curves_as_documented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a policy that answers INHIBITOR everywhere: every group all-equal, every batch empty; the all-rollouts trainable
    # share is 0, the trained-on scope is never logged, and the orchestrator log holds prime-rl's warnings
    from drugprot.tools.cli import main as cli_main

    data = rl_sim.prepare(load(FIXTURE))
    recipe = rl_sim.BY_NAME["pair-utility-all"]
    always = np.zeros((14, data.x.shape[1]))
    always[4, 0] = 100.0
    settings = rl_sim.Settings(steps=3, eval_every=3, pair_prompts=4)
    rl_sim.train(data, always, recipe, 0, settings, tmp_path / "run", Costs(fp=0.5, fn=1.0))
    assert (tmp_path / "run" / "orchestrator.log").read_text().splitlines() == [
        f"WARNING Step {s}: empty train batch after 32 finalized episodes (consecutive empty batches: {s + 1}/10)"
        for s in range(3)
    ]
    run = read_metrics(tmp_path / "run")
    assert run.curves[("train/agg", "agent", "trainable share")] == [(0, 0.0), (1, 0.0), (2, 0.0)]
    assert run.subsets["train/agg"] == ("all",) and not any(key[0] == "train/agg" for key in run.effective)
    assert cli_main(["curves", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "  empty train batches: 3 of 3 (100.0%; longest run 3/10); expected from the all-rollouts trainable share: "
        "100.0%",
        "  'Only n/m effective traces are trainable' warnings: 0",
    ]


def test_sim_report_reads_a_sandbox_out_folder(smoke: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evidence import sim_report

    assert sim_report.main([str(smoke)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "cues extraction-accuracy (1 runs): first 10 % / middle / last 10 % of steps"
    assert lines[1].startswith("    rollouts in zero-advantage groups ")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "{path}: no such folder; pass the --out directory of python -m evidence.rl_sim"),
        (lambda p: p / "f.txt", "{path}: a file; pass the --out directory of python -m evidence.rl_sim"),
        (lambda p: p / "empty", "{path}: holds no run folder (<class>/<recipe>-split<k>/); is it an evidence.rl_sim "
         "--out?"),
        (lambda p: p / "no-metrics", "{path}/cues/pair-accuracy-split0: no metrics.jsonl here. Pass a prime-rl run "
         "directory (<output_dir>/<run.name>, written when the file monitor is on, the default) or the metrics.jsonl "
         "file itself"),
    ],
)  # fmt: skip
def test_sim_report_refuses_what_is_not_a_sandbox_out_folder_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    from evidence import sim_report

    (tmp_path / "f.txt").write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "no-metrics" / "cues" / "pair-accuracy-split0").mkdir(parents=True)
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(SystemExit) as exited:
        sim_report.main([str(path)])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"python -m evidence.sim_report: error: {message.format(path=path)}"
    ]
