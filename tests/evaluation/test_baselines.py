"""``drugprot baseline``: the lexical rule's table, and both baselines' exact figures on the fixture.

The fixture (``tests/fixtures/drugprot_fixture.jsonl``, train split) has 27 gold pairs with 28 relations
(``90000001:T1:T2`` is INHIBITOR + SUBSTRATE) and 15 same-sentence no-relation candidates.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from drugprot.core.errors import DrugprotError
from drugprot.core.labels import letter_of
from drugprot.core.metrics import official_pairs, score_relations
from drugprot.core.official_tsv import read_relations_tsv
from drugprot.core.options import TaskOptions
from drugprot.core.scoring import score_reply
from drugprot.core.sources import load_documents
from drugprot.core.tasks import PairTask, build_tasks
from drugprot.evaluation.baselines import (
    BaselineAnswer,
    UnknownBaselineError,
    baseline_run,
    extraction_reply,
    lexical_label,
    predict,
    reply_text,
)
from drugprot.modes.extraction.summary import summarize_extraction
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main

REAL_SAMPLE = os.environ.get("DRUGPROT_REAL_SAMPLE")


def close(value: float, fraction: Fraction) -> bool:
    return value == pytest.approx(float(fraction), abs=1e-12)


def spans(text: str, chemical: str, gene: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The first occurrence of each name in ``text`` as a ``[start, end)`` span."""
    c, g = text.index(chemical), text.index(gene)
    return (c, c + len(chemical)), (g, g + len(gene))


# (text, chemical, gene, with NO-RELATION offered, expected label): the lexical rule, case by case.
LEXICAL = [
    ("Xamol is an antagonist of GENE1.", "Xamol", "GENE1", False, "ANTAGONIST"),
    ("Xamol antagonized GENE1.", "Xamol", "GENE1", False, "ANTAGONIST"),
    ("Xamol is an agonist of GENE1.", "Xamol", "GENE1", False, "AGONIST"),
    ("Xamol inhibited GENE1 activity.", "Xamol", "GENE1", False, "INHIBITOR"),
    ("GENE1 metabolizes Xamol.", "Xamol", "GENE1", False, "SUBSTRATE"),
    ("Xamol activates GENE1.", "Xamol", "GENE1", False, "ACTIVATOR"),
    ("Xamol up-regulated GENE1.", "Xamol", "GENE1", False, "INDIRECT-UPREGULATOR"),
    ("Xamol suppressed GENE1.", "Xamol", "GENE1", False, "INDIRECT-DOWNREGULATOR"),
    ("Xamol is produced by GENE1.", "Xamol", "GENE1", False, "PRODUCT-OF"),
    ("Xamol binds GENE1.", "Xamol", "GENE1", False, "DIRECT-REGULATOR"),
    # Between the mentions, the cue nearest the gene wins (the gene second: the last cue; first: the first).
    ("Xamol, an inhibitor of GENE2, increased GENE1.", "Xamol", "GENE1", False, "INDIRECT-UPREGULATOR"),
    ("GENE1 was inhibited, not increased, by Xamol.", "Xamol", "GENE1", False, "INHIBITOR"),
    # No cue between: the window after the pair, then the one before; a window stops at ". ".
    ("Xamol and GENE1 binding was measured.", "Xamol", "GENE1", False, "DIRECT-REGULATOR"),
    ("As an agonist, Xamol at GENE1 was tested.", "Xamol", "GENE1", False, "AGONIST"),
    ("Cells were inhibited. Xamol and GENE1 were measured.", "Xamol", "GENE1", False, "INHIBITOR"),
    ("Cells were inhibited. Xamol and GENE1 were measured.", "Xamol", "GENE1", True, "NO-RELATION"),
    ("Xamol and GENE1 were measured. Cells were inhibited.", "Xamol", "GENE1", True, "NO-RELATION"),
    # "inactivation" is not activation.
    ("Xamol caused inactivation of GENE1.", "Xamol", "GENE1", True, "NO-RELATION"),
]


@pytest.mark.parametrize(("text", "chemical", "gene", "with_nr", "expected"), LEXICAL)
def test_lexical_rule(text: str, chemical: str, gene: str, with_nr: bool, expected: str) -> None:
    chem, gene_span = spans(text, chemical, gene)
    assert lexical_label(text, chem, gene_span, with_no_relation=with_nr).label == expected


def test_reply_text_is_a_well_formed_reply() -> None:
    reply = reply_text(BaselineAnswer("SUBSTRATE", 'a "metaboli" cue'))
    assert reply == '<think>a "metaboli" cue.</think>\n\\boxed{K}'
    score = score_reply(reply, None, ["SUBSTRATE"])
    assert (score.accuracy, score.format, score.label) == (1.0, 1.0, "SUBSTRATE")


def test_an_unknown_baseline_is_a_drugprot_error_naming_the_choices(fixture_jsonl: Path) -> None:
    message = "unknown baseline 'oracle'; expected one of majority, lexical"
    with pytest.raises(UnknownBaselineError) as raised:
        baseline_run("oracle", TaskOptions())
    assert isinstance(raised.value, DrugprotError) and str(raised.value) == message
    with pytest.raises(UnknownBaselineError, match=f"^{message}$"):
        predict("oracle", fixture_task(fixture_jsonl, "90000001:T3:T4"))


# ------------------------------------------------------------------------------------------------ fixture

LEXICAL_POSITIVE = {
    "90000001:T1:T2": "E",
    "90000001:T3:T4": "K",
    "90000001:T5:T4": "E",
    "90000002:T3:T4": "I",
    "90000002:T5:T6": "F",
    "90000002:T7:T8": "A",
    "90000003:T3:T4": "B",
    "90000003:T7:T6": "E",
    "90000005:T1:T2": "I",
    "90000005:T3:T4": "I",
    "90000005:T5:T6": "F",
    "90000005:T7:T8": "D",
    "90000005:T7:T9": "D",
    "90000006:T1:T2": "B",
    "90000006:T1:T3": "B",
    "90000006:T4:T5": "B",
    "90000006:T4:T6": "A",
    "90000007:T1:T2": "E",
    "90000007:T4:T3": "E",
    "90000007:T5:T3": "E",
    "90000007:T6:T7": "E",
    "90000008:T3:T4": "D",
    "90000008:T5:T6": "E",
    "90000008:T7:T8": "D",
    "90000009:T1:T2": "C",
    "90000009:T3:T2": "C",
    "90000009:T4:T5": "C",
}
"""The lexical baseline's letter per fixture task, positive-only (17 of 27 right)."""

LEXICAL_ALL = {
    # the 27 gold pairs: as above, except that no cue now means N (90000003:T7:T6 and 90000007's four)
    "90000001:T1:T2": "E",
    "90000001:T3:T4": "K",
    "90000001:T5:T4": "E",
    "90000002:T3:T4": "I",
    "90000002:T5:T6": "F",
    "90000002:T7:T8": "A",
    "90000003:T3:T4": "B",
    "90000003:T7:T6": "N",
    "90000005:T1:T2": "I",
    "90000005:T3:T4": "I",
    "90000005:T5:T6": "F",
    "90000005:T7:T8": "D",
    "90000005:T7:T9": "D",
    "90000006:T1:T2": "B",
    "90000006:T1:T3": "B",
    "90000006:T4:T5": "B",
    "90000006:T4:T6": "A",
    "90000007:T1:T2": "N",
    "90000007:T4:T3": "N",
    "90000007:T5:T3": "N",
    "90000007:T6:T7": "N",
    "90000008:T3:T4": "D",
    "90000008:T5:T6": "E",
    "90000008:T7:T8": "D",
    "90000009:T1:T2": "C",
    "90000009:T3:T2": "C",
    "90000009:T4:T5": "C",
    # the 15 no-relation candidates
    "90000001:T6:T7": "K",
    "90000002:T1:T2": "N",
    "90000003:T1:T2": "B",
    "90000003:T3:T6": "B",
    "90000003:T5:T4": "B",
    "90000003:T5:T6": "N",
    "90000003:T7:T4": "B",
    "90000004:T1:T2": "N",
    "90000004:T3:T4": "N",
    "90000005:T3:T6": "I",
    "90000005:T5:T4": "F",
    "90000008:T1:T2": "F",
    "90000008:T3:T6": "E",
    "90000008:T5:T4": "F",
    "90000009:T6:T7": "N",
}
"""With every same-sentence candidate (``negatives=all``): no cue now means N."""


def fixture_run(baseline: str, fixture_jsonl: Path, negatives: int | str) -> dict:
    return summarize(
        baseline_run(baseline, TaskOptions(split="train", data_path=str(fixture_jsonl), negatives=negatives))
    )


def test_lexical_predictions_on_the_fixture(fixture_jsonl: Path) -> None:
    for negatives, expected in ((0, LEXICAL_POSITIVE), ("all", LEXICAL_ALL)):
        run = baseline_run("lexical", TaskOptions(split="train", data_path=str(fixture_jsonl), negatives=negatives))
        got = {":".join(r.key): letter_of(r.label) for r in run.rollouts}
        assert got == expected


def test_lexical_figures_on_the_fixture_positive_only(fixture_jsonl: Path) -> None:
    got = fixture_run("lexical", fixture_jsonl, 0)
    assert (got["n_tasks"], got["n_rollouts"]) == (27, 27)
    assert close(got["accuracy"], Fraction(17, 27))
    # One answer per pair: TP 17; the 10 wrong answers are FP; FN = 28 gold - 17.
    assert got["micro_counts"] == {"tp": 17, "fp": 10, "fn": 11}
    assert close(got["micro_precision"], Fraction(17, 27))
    assert close(got["micro_recall"], Fraction(17, 28))
    assert close(got["micro_f1"], Fraction(34, 55))
    # F1: A 4/5, B 6/7, C 1, D 2/5, E 2/5, F 2/3, I 1, K 2/5; G, H, J, L, M 0.
    assert close(got["macro_f1"], Fraction(116, 273))
    assert close(got["per_class"]["INDIRECT-UPREGULATOR"]["f1"], Fraction(6, 7))
    assert (got["invalid_rate"], got["format_rate"], got["setting"]["mode"]) == (0.0, 1.0, "positive-only")
    # the default reward, utility + 1/8 x format: (17 TP - 0.5 x 10 FP - 11 FN) / 27 + 1/8 = 1/27 + 1/8
    assert close(got["mean_reward"], Fraction(1, 27) + Fraction(1, 8))
    options = TaskOptions(split="train", data_path=str(fixture_jsonl), reward="accuracy")
    assert close(summarize(baseline_run("lexical", options))["mean_reward"], Fraction(17, 27) + Fraction(1, 8))


def test_lexical_figures_on_the_fixture_with_all_negatives(fixture_jsonl: Path) -> None:
    got = fixture_run("lexical", fixture_jsonl, "all")
    # Local data the report cannot recognise as a whole official split: comparability unknown, never "true".
    assert (got["n_tasks"], got["setting"]["comparable_with_official"]) == (42, None)
    # 16 gold pairs and 5 negatives right.
    assert close(got["accuracy"], Fraction(21, 42))
    # FP: 6 wrong types on gold pairs + 10 types on no-relation pairs; FN = 28 - 16.
    assert got["micro_counts"] == {"tp": 16, "fp": 16, "fn": 12}
    assert close(got["micro_f1"], Fraction(32, 60))
    assert got["no_relation"]["support"] == 15 and got["no_relation"]["predicted"] == 10


def test_majority_figures_on_the_fixture(fixture_jsonl: Path) -> None:
    got = fixture_run("majority", fixture_jsonl, 0)
    # Always INHIBITOR: right on the 2 pairs that carry it.
    assert close(got["accuracy"], Fraction(2, 27))
    assert got["micro_counts"] == {"tp": 2, "fp": 25, "fn": 26}
    assert close(got["micro_f1"], Fraction(4, 55))
    assert close(got["macro_f1"], Fraction(4, 29) / 13)
    got = fixture_run("majority", fixture_jsonl, "all")
    # Always NO-RELATION: right on the 15 negatives, and no relation is ever predicted.
    assert close(got["accuracy"], Fraction(15, 42))
    assert got["micro_counts"] == {"tp": 0, "fp": 0, "fn": 28}
    assert (got["micro_precision"], got["micro_recall"], got["micro_f1"], got["macro_f1"]) == (0.0, 0.0, 0.0, 0.0)


def test_baseline_cli_json_and_comparison(fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["baseline", "--split", "train", "--data-path", str(fixture_jsonl)]
    assert cli_main([*base, "lexical", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["run"]["model"] == "baseline:lexical" and payload["n_tasks"] == 27
    # a baseline run records what made it, as a model's run does
    import drugprot

    assert payload["run"]["versions"] == {
        "env": drugprot.__version__,
        "prompt": "1",
        "scorer": "4",
        "data": "file",
        "reward": "utility (TP 1, FP -0.5, FN -1; states a relation when p > 0.200), "
        "weights accuracy 0, utility 1, format 0.125",
    }
    assert close(payload["mean_reward"], Fraction(1, 27) + Fraction(1, 8))
    assert cli_main([*base, "lexical", "--json", "--reward", "accuracy", "--fn-cost", "2"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["run"]["versions"]["reward"] == "accuracy, weights accuracy 1, utility 0, format 0.125"
    assert close(payload["mean_reward"], Fraction(17, 27) + Fraction(1, 8))
    assert cli_main([*base, "majority", "lexical", "--negatives", "1"]) == 0
    out = capsys.readouterr().out
    assert "[1] baseline majority" in out and "[2] baseline lexical" in out and "negatives 1" in out


def test_baseline_cli_errors_name_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["baseline", "lexical", "--data-path", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert cli_main(["baseline", "lexical", "--data-path", str(tmp_path), "--negatives", "many"]) == 2
    assert "negatives must be a non-negative integer or 'all'" in capsys.readouterr().err
    assert cli_main(["baseline", "lexical", "--data-path", str(tmp_path), "--revision", "abc"]) == 2
    assert capsys.readouterr().err == (
        f"drugprot baseline: error: revision 'abc' selects a version of the hub dataset, but data_path "
        f"'{tmp_path}' loads local data; unset one of them (a local file is versioned by its contents)\n"
    )


def fixture_task(fixture_jsonl: Path, key: str) -> PairTask:
    """The positive fixture task ``pmid:arg1:arg2``."""
    (task,) = [t for t in build_tasks(load_documents("train", fixture_jsonl)) if t.key == key]
    return task


def test_majority_answers_its_constant_whatever_the_task_says(fixture_jsonl: Path) -> None:
    task = fixture_task(fixture_jsonl, "90000001:T3:T4")  # a SUBSTRATE pair; the lexical rule finds its cue
    assert predict("lexical", task).label == "SUBSTRATE"
    assert predict("majority", task) == BaselineAnswer("INHIBITOR", "the majority class of this setting is INHIBITOR")
    assert predict("majority", task, with_no_relation=True) == BaselineAnswer(
        "NO-RELATION", "the majority class of this setting is NO-RELATION"
    )


@pytest.mark.parametrize(("negatives", "setting"), [(" ALL", "all"), ("2", "2"), (0, "0")])
def test_a_baseline_run_takes_the_setting_from_the_normalised_options(
    fixture_jsonl: Path, negatives: int | str, setting: str
) -> None:
    options = TaskOptions(split="train", data_path=str(fixture_jsonl), negatives=negatives)
    run = baseline_run("majority", options)
    assert run.config.negatives == setting
    assert {r.with_no_relation for r in run.rollouts} == {setting != "0"}
    assert {r.label for r in run.rollouts} == {"INHIBITOR" if setting == "0" else "NO-RELATION"}


def test_exports_feed_the_official_scorer_inputs(
    fixture_jsonl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, gold = tmp_path / "pred.tsv", tmp_path / "gold"
    args = [
        "baseline",
        "lexical",
        "--split",
        "train",
        "--data-path",
        str(fixture_jsonl),
        "--negatives",
        "all",
        "--export-tsv",
        str(pred),
        "--export-gold",
        str(gold),
        "--json",
    ]
    assert cli_main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    documents = load_documents("train", fixture_jsonl)
    assert sorted(p.name for p in gold.iterdir()) == ["entities.tsv", "gold_relations.tsv", "pmids.txt"]
    assert len(read_relations_tsv(gold / "gold_relations.tsv")) == 28
    assert len(read_relations_tsv(pred)) == 32  # 16 right + 16 wrong positive answers; N gives no row
    entities = (gold / "entities.tsv").read_text(encoding="utf-8").splitlines()
    assert len(entities) == sum(len(doc.entities) for doc in documents)
    assert entities[1] == "90000001\tT2\tGENE\t58\t64\tCYP3A4"
    # The official scorer's own computation (its vector layout included) on these files gives the report's figures.
    scores = score_relations(
        read_relations_tsv(gold / "gold_relations.tsv"),
        read_relations_tsv(pred),
        pairs=official_pairs(documents),
        official_layout=True,
    )
    assert {"tp": scores.tp, "fp": scores.fp, "fn": scores.fn} == payload["majority"]["micro_counts"]


# ------------------------------------------------------------------------------------- extraction mode


def extraction_run(baseline: str, data_path: Path | str) -> Any:
    return baseline_run(baseline, TaskOptions(split="train", data_path=str(data_path), mode="extraction"))


def test_the_extraction_reply_lists_the_pair_rule_on_every_same_sentence_pair(fixture_jsonl: Path) -> None:
    docs = {d.pmid: d for d in load_documents("train", fixture_jsonl)}
    up = "INDIRECT-UPREGULATOR"
    assert extraction_reply("lexical", docs["90000003"]) == (
        f'<think>T1-T2: "increas" just after the pair suggests {up}; T3-T4: "increas" between the two mentions '
        f'suggests {up}; T3-T6: "increas" between the two mentions suggests {up}; T5-T4: "increas" just before the '
        f'pair suggests {up}; T5-T6: no cue word near the pair, so NO-RELATION; T7-T4: "increas" just before the pair '
        f"suggests {up}; T7-T6: no cue word near the pair, so NO-RELATION.</think>\n"
        f"<relations>\nT1 | T2 | {up}\nT3 | T4 | {up}\nT3 | T6 | {up}\nT5 | T4 | {up}\nT7 | T4 | {up}\n</relations>"
    )
    assert extraction_reply("majority", docs["90000004"]) == (
        "<think>T1-T2: the majority class of this setting is NO-RELATION; T3-T4: the majority class of this setting "
        "is NO-RELATION.</think>\n<relations>\nnone\n</relations>"
    )
    with pytest.raises(UnknownBaselineError):
        extraction_reply("oracle", docs["90000004"])


def test_lexical_extraction_figures_on_the_fixture(fixture_jsonl: Path) -> None:
    run = extraction_run("lexical", fixture_jsonl)
    assert [r.pmid for r in run.extraction] == [f"9000000{i}" for i in range(1, 10)]
    assert [r.answer.accuracy for r in run.extraction] == pytest.approx(
        [1 / 2, 1.0, 2 / 7, 1.0, 1 / 2, 3 / 4, 0.0, 2 / 9, 1.0], abs=1e-12
    )
    got = summarize_extraction(run)
    # The same answers as pair mode's negatives=all (every gold pair of the fixture is a same-sentence candidate):
    # 16 right types, 16 wrong ones, 12 gold relations missed.
    assert got["micro_counts"] == got["majority"]["micro_counts"] == {"tp": 16, "fp": 16, "fn": 12}
    assert got["micro_counts"] == fixture_run("lexical", fixture_jsonl, "all")["micro_counts"]
    assert (got["micro_precision"], got["micro_recall"]) == (0.5, pytest.approx(4 / 7, abs=1e-12))
    assert close(got["micro_f1"], Fraction(8, 15))
    mean = (Fraction(1, 2) * 2 + 3 + Fraction(2, 7) + Fraction(3, 4) + Fraction(2, 9)) / 9
    # the default reward: utility (16 TP - 0.5 x 16 FP - 12 FN, over 9 abstracts) + 1/8 x format
    assert close(got["accuracy"], mean) and close(got["mean_reward"], Fraction(16 - 8 - 12, 9) + Fraction(1, 8))
    assert (got["format_rate"], got["invalid_rate"], got["quality"]["predicted_relations"]) == (1.0, 0.0, 32)
    assert close(got["exact_match"], Fraction(3, 9))
    assert got["setting"]["comparable_with_official"] is False and got["run"]["model"] == "baseline:lexical"
    assert "NOT comparable with BioCreative VII: a subset: 9 abstracts of " in got["setting"]["note"]


def test_majority_extraction_lists_nothing(fixture_jsonl: Path) -> None:
    got = summarize_extraction(extraction_run("majority", fixture_jsonl))
    assert got["micro_counts"] == {"tp": 0, "fp": 0, "fn": 28}
    assert (got["micro_f1"], got["macro_f1"]) == (0.0, 0.0)
    # Only the abstract without relations (90000004) is answered exactly: none.
    assert close(got["accuracy"], Fraction(1, 9)) and close(got["exact_match"], Fraction(1, 9))


def official_check(
    data_path: Path | str, tmp_path: Path, capsys: pytest.CaptureFixture[str], *, official_layout: bool
) -> tuple[dict[str, Any], Any]:
    """``drugprot baseline lexical --mode extraction`` with both exports; the report's majority figures and the
    official computation (``score_relations`` on the exported files, the documents' pairs) side by side."""
    pred, gold = tmp_path / "pred.tsv", tmp_path / "gold"
    args = ["baseline", "lexical", "--mode", "extraction", "--split", "train", "--data-path", str(data_path)]
    assert cli_main([*args, "--export-tsv", str(pred), "--export-gold", str(gold), "--json", "--bootstrap", "0"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in gold.iterdir()) == ["entities.tsv", "gold_relations.tsv", "pmids.txt"]
    scores = score_relations(
        read_relations_tsv(gold / "gold_relations.tsv"),
        read_relations_tsv(pred),
        pairs=official_pairs(load_documents("train", data_path)),
        official_layout=official_layout,
    )
    return payload, scores


def assert_same_figures(report: dict[str, Any], scores: Any) -> None:
    assert {"tp": scores.tp, "fp": scores.fp, "fn": scores.fn} == report["micro_counts"]
    assert (scores.precision, scores.recall, scores.f1) == pytest.approx(
        (report["micro_precision"], report["micro_recall"], report["micro_f1"]), abs=1e-9
    )


def test_extraction_exports_reproduce_the_report_with_the_official_scorer(
    fixture_jsonl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The official script's own computation (its vector layout included) on the exported files gives the report's
    micro P/R/F1 (majority per abstract, what is exported)."""
    payload, scores = official_check(fixture_jsonl, tmp_path, capsys, official_layout=True)
    assert_same_figures(payload["majority"], scores)
    assert payload["majority"]["micro_counts"] == {"tp": 16, "fp": 16, "fn": 12}


@pytest.mark.skipif(not REAL_SAMPLE, reason="set DRUGPROT_REAL_SAMPLE to the 350-abstract real training sample")
def test_extraction_exports_reproduce_the_report_on_the_real_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the real sample the report equals the official metric as specified (every pair its own cell) to 1e-9.
    The official script's layout quirk (``drugprot.core.metrics``: the last pair of one PMID shares a cell with the
    first pair of the next) moves its figures here by one cell of each count, under 1e-5 of F1."""
    payload, scores = official_check(REAL_SAMPLE, tmp_path, capsys, official_layout=False)
    assert_same_figures(payload["majority"], scores)
    assert payload["majority"]["micro_counts"] == {"tp": 921, "fp": 2902, "fn": 838}
    quirk = score_relations(
        read_relations_tsv(tmp_path / "gold" / "gold_relations.tsv"),
        read_relations_tsv(tmp_path / "pred.tsv"),
        pairs=official_pairs(load_documents("train", REAL_SAMPLE)),
        official_layout=True,
    )
    assert (quirk.tp, quirk.fp, quirk.fn) == (920, 2899, 837)
    assert abs(quirk.f1 - payload["majority"]["micro_f1"]) < 1e-5
    # The same answers as pair mode's negatives=all on the sample (docs' results row): 0.241 / 0.524 / 0.330.
    assert [round(payload[k], 3) for k in ("micro_precision", "micro_recall", "micro_f1")] == [0.241, 0.524, 0.33]


def test_extraction_mode_takes_no_negatives(fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["baseline", "lexical", "--mode", "extraction", "--negatives", "all", "--data-path", str(fixture_jsonl)]
    assert cli_main(args) == 2
    assert "negatives is a pair-mode knob" in capsys.readouterr().err
