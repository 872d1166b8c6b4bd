"""``drugprot report``: hand-computed figures on hand-written runs, a real vf-eval run, export, corrupt lines.

The traces below follow the real ``traces.jsonl`` layout of the verifiers v1 CLI (an episode per line with
``traces[]``; each trace with ``task.data``, ``nodes``, ``calls``, ``rewards``, ``metrics``, ``info``,
``errors`` and token counts), trimmed to the keys the report reads plus a few it must ignore.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from drugprot import report
from drugprot.cli import main as cli_main
from drugprot.labels import RELATION_NAMES, letter_of
from drugprot.metrics import read_relations_tsv, score_relations
from drugprot.serve import count_tokens

from .conftest import FixtureRun

PMID = "12345"


def reply_for(label: str | None, *, text: str | None = None) -> str:
    """A well-formed reply naming ``label`` (or the given raw text)."""
    if text is not None:
        return text
    return f"<think>reasoning</think>\n\\boxed{{{letter_of(label)}}}" if label else "I am not sure."


def trace(
    arg1: str,
    arg2: str,
    gold: list[str],
    label: str | None,
    *,
    with_nr: bool = False,
    reply: str | None = None,
    record: bool = True,
    invalid_reason: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    tokens: tuple[int, int] = (100, 10),
    pmid: str = PMID,
) -> dict[str, Any]:
    """One v1 trace of a DrugProt task; ``record=False`` leaves out ``info["drugprot"]`` (an older run)."""
    data = {"idx": 0, "name": f"{pmid}:{arg1}:{arg2}", "prompt": "...", "system_prompt": "...", "pmid": pmid,
            "arg1": arg1, "arg2": arg2, "labels": gold, "chemical": "x", "gene": "y", "with_no_relation": with_nr}
    correct = float(label is not None and label in gold)
    info = {}
    if record:
        info["drugprot"] = {"letter": letter_of(label) if label else None, "label": label,
                            "invalid_reason": invalid_reason if label is None else None,
                            "format_reason": invalid_reason if label is None else None}
    return {
        "version": 1, "id": "t", "verifiers": {"version": "0.4.0"},
        "task": {"type": "DrugprotTask", "data": data, "key": data["name"], "hash": "h"},
        "nodes": [
            {"message": {"role": "system", "content": "..."}, "sampled": False},
            {"parent": 0, "message": {"role": "user", "content": "..."}, "sampled": False},
            {"parent": 1, "message": {"role": "assistant", "content": reply_for(label, text=reply)}, "sampled": True},
        ],
        "calls": [{"node": 2, "model": "m", "finish_reason": "stop",
                   "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]}}],
        "rewards": {"accuracy": {"score": correct, "weight": 1.0},
                    "format": {"score": 1.0 if label else 0.0, "weight": 0.1}},
        "metrics": {"answered": float(label is not None)},
        "info": info,
        "is_completed": True, "ok": not errors, "stop_condition": "agent_completed", "errors": errors or [],
        "num_input_tokens": tokens[0], "num_output_tokens": tokens[1], "num_total_tokens": sum(tokens),
    }


def episode(*traces: dict[str, Any]) -> str:
    """One ``traces.jsonl`` line."""
    return json.dumps({"id": "e", "env": {"id": "drugprot"}, "task": traces[0]["task"], "run": {"type": "eval"},
                       "ok": True, "errors": [], "traces": list(traces)})


def write_run(directory: Path, lines: list[str], *, negatives: Any = 0, limit: int | None = None) -> Path:
    """A v1 run dir: ``traces.jsonl`` plus the resolved config the report reads the setting from."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "traces.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    config = {"model": "test-model", "env": {"taskset": {"split": "validation", "data_path": None,
                                                          "negatives": negatives, "num_tasks": None}},
              "select": {"limit": limit, "skip": 0, "include": {"idx": []}, "exclude": {"idx": []}}}
    (directory / "configs" / "resolved").mkdir(parents=True, exist_ok=True)
    (directory / "configs" / "resolved" / "eval.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def close(value: float, fraction: Fraction) -> bool:
    return value == pytest.approx(float(fraction), abs=1e-12)


# ------------------------------------------------------------------------------- hand-computed, multi-label


def multilabel_run(tmp_path: Path) -> Path:
    """Seven tasks with NO-RELATION offered, one rollout each (figures computed by hand in the tests)."""
    return write_run(tmp_path / "multilabel", [
        episode(trace("T1", "T2", ["INHIBITOR", "SUBSTRATE"], "INHIBITOR", with_nr=True)),   # TP E, FN K
        episode(trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE", with_nr=True)),                # TP K
        episode(trace("T4", "T5", ["AGONIST"], "ANTAGONIST", with_nr=True)),                 # FP I, FN F
        episode(trace("T6", "T5", ["NO-RELATION"], "INHIBITOR", with_nr=True)),              # FP E
        episode(trace("T7", "T5", ["NO-RELATION"], "NO-RELATION", with_nr=True)),            # nothing
        episode(trace("T8", "T9", ["ACTIVATOR"], None, with_nr=True, invalid_reason="no_boxed_answer")),  # FN D
        episode(trace("T10", "T9", ["INDIRECT-UPREGULATOR", "ACTIVATOR"], "NO-RELATION", with_nr=True)),  # FN B, D
    ], negatives="all")


def test_multilabel_micro_macro_and_per_class_are_the_hand_computed_ones(tmp_path: Path) -> None:
    got = report.summarize(report.load_run(multilabel_run(tmp_path)))
    # TP = 2 (E on T1:T2, K on T3:T2); FP = 2 (I on T4:T5, E on the negative T6:T5);
    # FN = 5 (K on T1:T2, F on T4:T5, D on T8:T9, B and D on T10:T9). N is never scored.
    assert got["micro_counts"] == {"tp": 2, "fp": 2, "fn": 5}
    assert close(got["micro_precision"], Fraction(2, 4))
    assert close(got["micro_recall"], Fraction(2, 7))
    assert close(got["micro_f1"], Fraction(4, 11))
    # F1: E 2/3 (P 1/2, R 1), K 2/3 (P 1, R 1/2), every other type 0; 13 types, 5 with gold support.
    assert close(got["macro_f1"], Fraction(4, 39))
    assert close(got["macro_f1_supported"], Fraction(4, 15))
    per = got["per_class"]
    assert (per["INHIBITOR"]["precision"], per["INHIBITOR"]["recall"]) == (0.5, 1.0)
    assert close(per["INHIBITOR"]["f1"], Fraction(2, 3))
    assert (per["INHIBITOR"]["support"], per["INHIBITOR"]["predicted"]) == (1, 2)
    assert (per["SUBSTRATE"]["precision"], per["SUBSTRATE"]["recall"], per["SUBSTRATE"]["support"]) == (1.0, 0.5, 2)
    assert (per["ANTAGONIST"]["f1"], per["ANTAGONIST"]["support"], per["ANTAGONIST"]["predicted"]) == (0.0, 0, 1)
    assert {name: c["support"] for name, c in per.items() if c["support"]} == {
        "INDIRECT-UPREGULATOR": 1, "ACTIVATOR": 2, "INHIBITOR": 1, "AGONIST": 1, "SUBSTRATE": 2}
    # Accuracy: T1:T2 (E is gold), T3:T2 and the NO-RELATION T7:T5 are right.
    assert close(got["accuracy"], Fraction(3, 7))
    assert got["no_relation"] == {"letter": "N", "precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2,
                                  "predicted": 2}
    assert close(got["invalid_rate"], Fraction(1, 7))
    assert got["invalid_reasons"] == {"no_boxed_answer": 1}
    assert (got["n_tasks"], got["n_rollouts"], got["rescored"]) == (7, 7, 0)
    assert got["setting"]["mode"] == "negatives" and got["setting"]["comparable_with_official"] is True


def test_multilabel_confusion_matrix(tmp_path: Path) -> None:
    confusion = report.summarize(report.load_run(multilabel_run(tmp_path)))["confusion"]
    labels, columns, matrix = confusion["labels"], confusion["columns"], confusion["matrix"]
    assert labels[-1] == "NO-RELATION" and columns[-1] == report.INVALID and len(matrix) == 14
    cells = {(labels[i], columns[j]): v for i, row in enumerate(matrix) for j, v in enumerate(row) if v}
    assert cells == {
        ("INHIBITOR", "INHIBITOR"): 1,          # right on a multi-label pair: its diagonal
        ("SUBSTRATE", "SUBSTRATE"): 1,
        ("AGONIST", "ANTAGONIST"): 1,
        ("NO-RELATION", "INHIBITOR"): 1,
        ("NO-RELATION", "NO-RELATION"): 1,
        ("ACTIVATOR", report.INVALID): 1,
        ("INDIRECT-UPREGULATOR", "NO-RELATION"): 1,  # wrong on {B, D}: the row of its first type, B
    }


def test_text_report_names_every_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", str(multilabel_run(tmp_path))]) == 0
    out = capsys.readouterr().out
    for expected in ("7 tasks, 7 rollouts", "micro, rollouts pooled      0.500  0.286  0.364      2      2      5",
                     "NO-RELATION (not scored)", "Confusion matrix", "Invalid replies: 1 of 7 (14.3%): "
                     "no_boxed_answer 1", "negatives=all over the whole validation split: comparable"):
        assert expected in out


def test_json_has_the_documented_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", "--json", str(multilabel_run(tmp_path))]) == 0
    payload = json.loads(capsys.readouterr().out)
    for key in ("n_tasks", "n_rollouts", "accuracy", "micro_precision", "micro_recall", "micro_f1", "macro_f1",
                "per_class", "invalid_rate", "confusion", "majority", "tokens", "setting"):
        assert key in payload
    assert list(payload["per_class"]) == list(RELATION_NAMES)


# ------------------------------------------------------------------------------- several rollouts per task


def rollouts_run(tmp_path: Path, name: str = "rollouts") -> Path:
    """Three positive-only tasks x three rollouts, written out of order (as async runs finish)."""
    a, b, c = ("T1", "T2", ["INHIBITOR"]), ("T3", "T2", ["SUBSTRATE"]), ("T4", "T5", ["INDIRECT-DOWNREGULATOR",
                                                                                     "INDIRECT-UPREGULATOR"])
    return write_run(tmp_path / name, [
        episode(trace(*a, "INHIBITOR")),
        episode(trace(*b, "INHIBITOR")),
        episode(trace(*c, "INDIRECT-UPREGULATOR")),
        episode(trace(*a, "INHIBITOR")),
        episode(trace(*b, None, invalid_reason="unterminated_think")),
        episode(trace(*c, "INDIRECT-DOWNREGULATOR")),
        episode(trace(*a, "SUBSTRATE")),
        episode(trace(*b, "SUBSTRATE")),
        episode(trace(*c, "DIRECT-REGULATOR")),
    ])


def test_accuracy_over_rollouts_and_majority_vote(tmp_path: Path) -> None:
    got = report.summarize(report.load_run(rollouts_run(tmp_path)))
    assert got["rollouts_per_task"] == {"min": 3, "max": 3}
    assert close(got["accuracy"], Fraction(5, 9))
    assert close(got["mean_at_k"], Fraction(5, 9))
    assert got["pass_at_k"] == 1.0
    # Majority: a -> E (2 votes, right); b -> E vs K tie -> E (first in A-M order, wrong); c -> A/B/C tie -> A.
    assert close(got["majority_accuracy"], Fraction(2, 3))
    # Pooled: every rollout scores its own copy of the pair. TP 5, FP 3, FN 7.
    assert got["micro_counts"] == {"tp": 5, "fp": 3, "fn": 7}
    assert close(got["micro_f1"], Fraction(10, 20))
    assert got["majority"]["micro_counts"] == {"tp": 2, "fp": 1, "fn": 2}
    assert close(got["majority"]["micro_f1"], Fraction(4, 7))
    assert got["setting"]["mode"] == "positive-only" and got["setting"]["comparable_with_official"] is False


def test_majority_ties_follow_the_official_label_order() -> None:
    def rollout(label: str | None) -> report.Rollout:
        return report.Rollout(PMID, "T1", "T2", ("SUBSTRATE",), False, label)

    assert report.majority_label([rollout("SUBSTRATE"), rollout("INHIBITOR")]) == "INHIBITOR"
    assert report.majority_label([rollout("INHIBITOR"), rollout("SUBSTRATE")]) == "INHIBITOR"
    assert report.majority_label([rollout(None), rollout(None), rollout("PART-OF")]) == "PART-OF"
    assert report.majority_label([rollout(None)]) is None


def test_export_tsv_official_rows_and_round_trip(tmp_path: Path) -> None:
    run = report.load_run(rollouts_run(tmp_path))
    path = tmp_path / "pred.tsv"
    assert report.export_tsv(run, path) == 3
    assert path.read_text(encoding="utf-8") == (
        f"{PMID}\tINHIBITOR\tArg1:T1\tArg2:T2\n"
        f"{PMID}\tINHIBITOR\tArg1:T3\tArg2:T2\n"
        f"{PMID}\tINDIRECT-DOWNREGULATOR\tArg1:T4\tArg2:T5\n"
    )
    assert read_relations_tsv(path) == report.prediction_rows(run.rollouts)


def test_export_skips_no_relation_and_invalid_and_sorts_ids_naturally(tmp_path: Path) -> None:
    run = report.load_run(multilabel_run(tmp_path))
    path = tmp_path / "pred.tsv"
    assert cli_main(["report", str(run.path), "--export-tsv", str(path), "--export-gold", str(tmp_path / "gold")]) == 0
    assert path.read_text(encoding="utf-8") == (
        f"{PMID}\tINHIBITOR\tArg1:T1\tArg2:T2\n"
        f"{PMID}\tSUBSTRATE\tArg1:T3\tArg2:T2\n"
        f"{PMID}\tANTAGONIST\tArg1:T4\tArg2:T5\n"
        f"{PMID}\tINHIBITOR\tArg1:T6\tArg2:T5\n"
    )
    assert read_relations_tsv(path) == report.prediction_rows(run.rollouts)
    gold = read_relations_tsv(tmp_path / "gold" / "gold_relations.tsv")
    assert gold == [(PMID, "T1", "T2", "INHIBITOR"), (PMID, "T1", "T2", "SUBSTRATE"), (PMID, "T3", "T2", "SUBSTRATE"),
                    (PMID, "T4", "T5", "AGONIST"), (PMID, "T8", "T9", "ACTIVATOR"),
                    (PMID, "T10", "T9", "INDIRECT-UPREGULATOR"), (PMID, "T10", "T9", "ACTIVATOR")]
    assert (tmp_path / "gold" / "pmids.txt").read_text(encoding="utf-8") == f"{PMID}\n"
    # The exported predictions against the exported gold give the report's majority figures.
    scores = score_relations(gold, read_relations_tsv(path))
    assert (scores.tp, scores.fp, scores.fn) == (2, 2, 5)


# ------------------------------------------------------------------------------- corrupt lines and re-scoring


def test_corrupt_truncated_and_foreign_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    good = episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))
    foreign = json.loads(good)
    del foreign["traces"][0]["task"]["data"]["labels"]
    foreign["task"] = foreign["traces"][0]["task"]
    run_dir = write_run(tmp_path / "corrupt", [
        good,
        "{not json",
        "",
        json.dumps(foreign),
        json.dumps({"hello": "world"}),
        episode(trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE")),
    ])
    with (run_dir / "traces.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(good[: len(good) // 2])  # a crash mid-write: no newline, cut JSON
    run = report.load_run(run_dir)
    assert len(run.rollouts) == 2
    assert run.lines == 6
    assert len(run.corrupt) == 4
    assert run.corrupt[0].startswith("traces.jsonl:2: invalid JSON")
    assert run.corrupt[1].startswith("traces.jsonl:4: field task.data.labels")
    assert run.corrupt[2] == "traces.jsonl:5: not an episode (no traces list)"
    assert run.corrupt[3].startswith("traces.jsonl:7: invalid JSON")
    got = report.summarize(run)
    assert got["lines"]["corrupt"] == 4 and got["accuracy"] == 1.0


def test_a_run_without_any_rollout_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "empty", ["{broken"])
    with pytest.raises(report.ReportError, match="no DrugProt rollouts"):
        report.load_run(run_dir)
    assert cli_main(["report", str(tmp_path / "missing")]) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_traces_without_a_record_or_with_a_scoring_error_are_rescored(tmp_path: Path) -> None:
    task_error = [{"type": "TaskError", "message": "boom", "status_code": None, "traceback": None}]
    run_dir = write_run(tmp_path / "rescore", [
        # An older run: no info["drugprot"]; the reply names K.
        episode(trace("T1", "T2", ["SUBSTRATE"], "SUBSTRATE", record=False)),
        # Scoring failed: the record is ignored (it says E) and the reply (K) is re-scored.
        episode({**trace("T3", "T2", ["SUBSTRATE"], "INHIBITOR", reply="<think>x</think>\\boxed{K}"),
                 "errors": task_error}),
        # A usable record wins over the reply text.
        episode(trace("T4", "T2", ["SUBSTRATE"], "INHIBITOR", reply="<think>x</think>\\boxed{K}")),
        # No reply at all and a provider error: invalid, with the error type as the reason.
        episode({**trace("T5", "T2", ["SUBSTRATE"], None, record=False),
                 "nodes": [], "errors": [{"type": "ProviderError", "message": "upstream 500"}]}),
    ])
    run = report.load_run(run_dir)
    assert [(r.label, r.rescored) for r in run.rollouts] == [
        ("SUBSTRATE", True), ("SUBSTRATE", True), ("INHIBITOR", False), (None, False)]
    assert run.rollouts[3].invalid_reason == "rollout_error: ProviderError"
    got = report.summarize(run)
    assert got["rescored"] == 2 and got["invalid_reasons"] == {"rollout_error: ProviderError": 1}
    assert "re-scored 2 rollouts from their last assistant message" in report.format_report(got)


def test_tokens_come_from_the_trace_or_else_from_the_calls(tmp_path: Path) -> None:
    older = trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE", tokens=(300, 30))
    for key in ("num_input_tokens", "num_output_tokens", "num_total_tokens"):
        del older[key]  # verifiers 0.3.1 traces carry usage in calls only
    older["calls"][0]["finish_reason"] = "length"
    run = report.load_run(write_run(tmp_path / "tokens", [
        episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", tokens=(100, 10))), episode(older)]))
    tokens = report.summarize(run)["tokens"]
    assert tokens == {"rollouts_with_usage": 2, "mean_input": 200.0, "mean_output": 20.0, "max_output": 30,
                      "total_input": 400, "total_output": 40, "truncated": 1}
    assert report.summarize(run)["mean_reward"] == pytest.approx(1.1)


# ------------------------------------------------------------------------------- legacy runs, comparison, plot


def test_legacy_results_jsonl(tmp_path: Path) -> None:
    run_dir = tmp_path / "outputs" / "evals" / "drugprot--m" / "abc123"
    run_dir.mkdir(parents=True)
    info = {"key": f"{PMID}:T1:T2", "pmid": PMID, "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"],
            "chemical": "x", "gene": "y", "with_no_relation": False}
    rows = [
        {"example_id": 0, "prompt": [], "completion": [{"role": "assistant", "content": "<think>a</think>\\boxed{E}"}],
         "answer": "E", "info": {**info, "drugprot": {"letter": "E", "label": "INHIBITOR", "invalid_reason": None,
                                                      "format_reason": None}},
         "reward": 1.1, "metrics": {"accuracy": 1.0}, "token_usage": {"input_tokens": 50.0, "output_tokens": 5.0}},
        {"example_id": 0, "prompt": [], "completion": [{"role": "assistant", "content": "\\boxed{K}"}],
         "answer": "E", "info": json.dumps(info), "reward": 0.0, "metrics": {}},
    ]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "{trunc", encoding="utf-8")
    (run_dir / "metadata.json").write_text(json.dumps({"env_id": "drugprot", "model": "m", "num_examples": 5,
                                                       "env_args": {"split": "train", "negatives": 0}}))
    run = report.load_run(tmp_path / "outputs")  # found below the given directory
    assert run.source == "legacy vf-eval results.jsonl"
    assert [(r.label, r.rescored) for r in run.rollouts] == [("INHIBITOR", False), ("SUBSTRATE", True)]
    assert len(run.corrupt) == 1
    got = report.summarize(run)
    assert (got["n_tasks"], got["n_rollouts"], got["accuracy"]) == (1, 2, 0.5)
    assert (got["run"]["model"], got["run"]["split"], got["run"]["limit"]) == ("m", "train", None)


def test_comparison_of_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = multilabel_run(tmp_path), rollouts_run(tmp_path)
    assert cli_main(["report", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "[1] multilabel" in out and "[2] rollouts" in out
    assert "the runs cover different tasks (7, 3; 3 shared)" in out
    assert "positive-only and negatives runs mixed" in out
    assert "  micro F1                         0.364    0.500" in out
    assert "  accuracy                         0.429    0.556" in out
    assert cli_main(["report", "--json", str(first), str(second)]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["n_rollouts"] for r in runs] == [7, 9]
    assert cli_main(["report", str(first), str(second), "--export-tsv", str(tmp_path / "x.tsv")]) == 2


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "confusion.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), str(rollouts_run(tmp_path)), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(tmp_path / "x.png")]) == 2
    assert "--plot needs matplotlib: pip install 'drugprot[report]'" in capsys.readouterr().err
    assert cli_main(["report", str(multilabel_run(tmp_path))]) == 0  # everything else works without it


# ------------------------------------------------------------------------------- a real vf-eval run

def test_report_on_a_real_vf_eval_run(tmp_path: Path, fixture_run: FixtureRun) -> None:
    """The shared run (tests/conftest.py): every pair answered with reasoning + its first gold letter, except
    FIXTURE_RUN_REPLIES: 4 wrong, 2 invalid, and 3 right whose format fails (2 without reasoning, 1 with two
    boxed answers)."""
    run_dir = fixture_run.run_dir
    got = report.summarize(report.load_run(run_dir))
    assert (got["n_tasks"], got["n_rollouts"], got["rescored"], got["lines"]["corrupt"]) == (27, 27, 0, 0)
    assert (got["run"]["split"], got["run"]["limit"], got["setting"]["mode"]) == ("train", "-n 27", "positive-only")
    # 21 right answers; 28 gold relations; FP: the 4 wrong types; FN: E of T1:T2, the 4 wrong and 2 invalid.
    assert close(got["accuracy"], Fraction(21, 27))
    assert got["micro_counts"] == {"tp": 21, "fp": 4, "fn": 7}
    assert close(got["micro_precision"], Fraction(21, 25))
    assert close(got["micro_recall"], Fraction(3, 4))
    assert close(got["micro_f1"], Fraction(42, 53))
    # F1 1 for A C D G J M; B 4/5; E 1/2; F and K 3/4; I 2/3; H and L 0.
    assert close(got["macro_f1"], Fraction(142, 195))
    assert close(got["per_class"]["INDIRECT-UPREGULATOR"]["f1"], Fraction(4, 5))
    assert close(got["per_class"]["ANTAGONIST"]["f1"], Fraction(2, 3))
    assert close(got["invalid_rate"], Fraction(2, 27))
    assert got["invalid_reasons"] == {"no_boxed_answer": 1, "unterminated_think": 1}
    assert close(got["format_rate"], Fraction(22, 27))
    assert sorted(got["format_reasons"].items()) == [("no_boxed_answer", 1), ("no_reasoning", 2),
                                                     ("several_boxed_answers", 1), ("unterminated_think", 1)]
    assert close(got["mean_reward"], Fraction(21, 27) + Fraction(22, 270))
    replies = fixture_run.replies.values()
    outputs = sum(count_tokens(r.content) + count_tokens(r.reasoning_content) for r in replies)
    assert (got["tokens"]["rollouts_with_usage"], got["tokens"]["total_output"]) == (27, outputs)
    labels, matrix = got["confusion"]["columns"], got["confusion"]["matrix"]
    cells = {(labels[i], labels[j]): v for i, row in enumerate(matrix) for j, v in enumerate(row) if v}
    off_diagonal = {cell: v for cell, v in cells.items() if cell[0] != cell[1]}
    assert off_diagonal == {("SUBSTRATE", "INHIBITOR"): 1, ("AGONIST", "ANTAGONIST"): 1,
                            ("INDIRECT-UPREGULATOR", report.INVALID): 1, ("ANTAGONIST", report.INVALID): 1,
                            ("SUBSTRATE_PRODUCT-OF", "SUBSTRATE"): 1, ("AGONIST-INHIBITOR", "AGONIST"): 1}
    path = tmp_path / "pred.tsv"
    assert report.export_tsv(report.load_run(run_dir), path) == 25
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["90000001\tSUBSTRATE\tArg1:T1\tArg2:T2", "90000001\tINHIBITOR\tArg1:T3\tArg2:T4",
                         "90000001\tSUBSTRATE\tArg1:T5\tArg2:T4"]
