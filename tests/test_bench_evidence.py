"""The alignment evidence (``bench.alignment``, ``bench.decision``, ``bench.rl_sim``) on the fixture.

The orderings the README's tables rest on, pinned on ``tests/fixtures/drugprot_fixture.jsonl``: every reward ranks
the policy family as the official micro-F1 does up to the listed Spearman, no degenerate policy outranks the
lexical baseline; the decision rules on hand-made probabilities; and a tiny sandbox run whose ``metrics.jsonl``
``drugprot curves`` reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench import alignment, decision, rl_sim
from bench.evidence import N_INDEX, load, reward_value, score_document, score_pair
from drugprot.core.rewards import Costs
from drugprot.evaluation.curves import read_metrics

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
        ("pair", "pair accuracy, negatives=all", 0.9519, 13),
        ("pair", "pair accuracy, negatives=0", 0.9555, 8),
        ("pair", "pair accuracy, negatives=1", 0.9678, 12),
        ("pair", "pair accuracy, negatives=2", 0.9636, 13),
        ("extraction", "extraction utility", 0.9672, 13),
        ("extraction", "extraction accuracy", 0.9774, 8),
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
    # extraction utility per abstract: TP - 0.5 FP - 1 FN, plus 0.1 format; the fixture has 9 abstracts.
    pair, extraction = tables["pair"], tables["extraction"]
    assert round(_value(extraction, "extraction utility", "gold"), 3) == 3.211
    assert round(_value(extraction, "extraction utility", "none / N (majority)"), 3) == -3.011
    assert round(_value(pair, "pair utility, negatives=all", "gold"), 3) == 0.719
    assert round(_value(pair, "pair utility, negatives=all", "lexical"), 3) == 0.005
    assert round(_value(pair, "pair utility, negatives=all", "none / N (majority)"), 3) == -0.567


def test_inversions_lists_every_pair_ordered_the_other_way() -> None:
    names = ["a", "b", "c"]
    assert alignment.inversions([0.1, 0.2, 0.3], [3.0, 2.0, 1.0], names) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert alignment.inversions([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], names) == []
    assert alignment.inversions([0.2, 0.2], [1.0, 2.0], names[:2]) == []  # equal F1 is no inversion


def test_reward_value_weights_the_knob_values() -> None:
    costs = Costs(fp=0.5, fn=1.0)
    wrong_type = score_pair("INHIBITOR", ("AGONIST",), with_no_relation=True)  # 1 FP, 1 FN
    assert reward_value(wrong_type, "accuracy", costs) == pytest.approx(0.1)
    assert reward_value(wrong_type, "utility", costs) == pytest.approx(-1.5 + 0.1)
    negative = score_pair("NO-RELATION", ("NO-RELATION",), with_no_relation=True)
    assert reward_value(negative, "utility", costs) == pytest.approx(0.1)
    assert reward_value(negative, "accuracy", costs) == pytest.approx(1.1)
    document = load(FIXTURE)[0]
    assert reward_value(score_document([], document), "utility", costs) == pytest.approx(
        -len({(r.arg1, r.arg2, r.type) for r in document.relations}) + 0.1
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


def test_a_sandbox_run_writes_metrics_drugprot_curves_reads(tmp_path: Path) -> None:
    assert rl_sim.main(["--data-path", FIXTURE, "--out", str(tmp_path), "--smoke"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [row["recipe"] for row in summary["table"]] == [r.name for r in rl_sim.RECIPES]
    start = {row["recipe"]: row["start_f1"] for row in summary["table"]}
    assert start["pair-accuracy-neg0"] == pytest.approx(4 / 19)  # N not offered: every candidate gets a type
    assert start["pair-utility-all"] == pytest.approx(2 / 19)
    run = read_metrics(tmp_path / "pair-utility-all-seed0")
    assert run.skipped == [] and run.steps == 5
    assert [s for s, _ in run.curves[("eval/heldout", "agent", "official F1")]] == [0, 2, 4]
    assert [s for s, _ in run.curves[("eval/heldout", "agent", "N / none share")]] == [0, 2, 4]
    assert [s for s, _ in run.curves[("train/agg", "agent", "reward")]] == [0, 1, 2, 3]
    assert [s for s, _ in run.curves[("train/agg", "agent", "accuracy")]] == [0, 1, 2, 3]


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
    grad, *_ = step(always, data, recipe, costs, work, settings, np.random.default_rng(0))
    assert not grad.any()
    grad, *_ = step(np.zeros_like(always), data, recipe, costs, work, settings, np.random.default_rng(0))
    assert grad.any()
