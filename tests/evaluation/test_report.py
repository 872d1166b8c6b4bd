"""``drugprot report``: hand-computed figures on hand-written runs, a real vf-eval run, export, corrupt lines.

The traces below follow the real ``traces.jsonl`` layout of the verifiers v1 CLI (an episode per line with
``traces[]``; each trace with ``task.data``, ``nodes``, ``calls``, ``rewards``, ``metrics``, ``info``,
``errors`` and token counts), trimmed to the keys the report reads plus a few it must ignore.
"""

from __future__ import annotations

import json
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import drugprot
from drugprot.core.labels import RELATION_NAMES, letter_of
from drugprot.core.metrics import score_relations
from drugprot.core.official_tsv import read_relations_tsv
from drugprot.core.prompts import PROMPT_VERSION
from drugprot.core.scoring import SCORER_VERSION
from drugprot.evaluation import report
from drugprot.tools.cli import main as cli_main
from drugprot.tools.serve import OpenAIServer, count_tokens, scripted_responder
from tests.conftest import FixtureRun
from tests.e2e import run_vf_eval

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
    versions: Any = None,
) -> dict[str, Any]:
    """One v1 trace of a DrugProt task; ``record=False`` leaves out ``info["drugprot"]`` (an older run);
    ``versions`` goes to ``info["drugprot"]["versions"]`` (left out when None, as before it was recorded)."""
    data = {
        "idx": 0,
        "name": f"{pmid}:{arg1}:{arg2}",
        "prompt": "...",
        "system_prompt": "...",
        "pmid": pmid,
        "arg1": arg1,
        "arg2": arg2,
        "labels": gold,
        "chemical": "x",
        "gene": "y",
        "with_no_relation": with_nr,
    }
    correct = float(label is not None and label in gold)
    info = {}
    if record:
        info["drugprot"] = {
            "letter": letter_of(label) if label else None,
            "label": label,
            "invalid_reason": invalid_reason if label is None else None,
            "format_reason": invalid_reason if label is None else None,
        }
        if versions is not None:
            info["drugprot"]["versions"] = versions
    return {
        "version": 1,
        "id": "t",
        "verifiers": {"version": "0.4.0"},
        "task": {"type": "DrugprotTask", "data": data, "key": data["name"], "hash": "h"},
        "nodes": [
            {"message": {"role": "system", "content": "..."}, "sampled": False},
            {"parent": 0, "message": {"role": "user", "content": "..."}, "sampled": False},
            {"parent": 1, "message": {"role": "assistant", "content": reply_for(label, text=reply)}, "sampled": True},
        ],
        "calls": [
            {
                "node": 2,
                "model": "m",
                "finish_reason": "stop",
                "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
            }
        ],
        "rewards": {
            "accuracy": {"score": correct, "weight": 1.0},
            "format": {"score": 1.0 if label else 0.0, "weight": 0.1},
        },
        "metrics": {"answered": float(label is not None)},
        "info": info,
        "is_completed": True,
        "ok": not errors,
        "stop_condition": "agent_completed",
        "errors": errors or [],
        "num_input_tokens": tokens[0],
        "num_output_tokens": tokens[1],
        "num_total_tokens": sum(tokens),
    }


def episode(*traces: dict[str, Any]) -> str:
    """One ``traces.jsonl`` line."""
    return json.dumps(
        {
            "id": "e",
            "env": {"id": "drugprot"},
            "task": traces[0]["task"],
            "run": {"type": "eval"},
            "ok": True,
            "errors": [],
            "traces": list(traces),
        }
    )


def write_run(directory: Path, lines: list[str], *, negatives: Any = 0, limit: int | None = None) -> Path:
    """A v1 run dir: ``traces.jsonl`` plus the resolved config the report reads the setting from."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "traces.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    config = {
        "model": "test-model",
        "env": {"taskset": {"split": "validation", "data_path": None, "negatives": negatives, "num_tasks": None}},
        "select": {"limit": limit, "skip": 0, "include": {"idx": []}, "exclude": {"idx": []}},
    }
    (directory / "configs" / "resolved").mkdir(parents=True, exist_ok=True)
    (directory / "configs" / "resolved" / "eval.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def close(value: float, fraction: Fraction) -> bool:
    return value == pytest.approx(float(fraction), abs=1e-12)


# ------------------------------------------------------------------------------- hand-computed, multi-label


def multilabel_run(tmp_path: Path) -> Path:
    """Seven tasks with NO-RELATION offered, one rollout each (figures computed by hand in the tests)."""
    return write_run(
        tmp_path / "multilabel",
        [
            episode(trace("T1", "T2", ["INHIBITOR", "SUBSTRATE"], "INHIBITOR", with_nr=True)),  # TP E, FN K
            episode(trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE", with_nr=True)),  # TP K
            episode(trace("T4", "T5", ["AGONIST"], "ANTAGONIST", with_nr=True)),  # FP I, FN F
            episode(trace("T6", "T5", ["NO-RELATION"], "INHIBITOR", with_nr=True)),  # FP E
            episode(trace("T7", "T5", ["NO-RELATION"], "NO-RELATION", with_nr=True)),  # nothing
            episode(trace("T8", "T9", ["ACTIVATOR"], None, with_nr=True, invalid_reason="no_boxed_answer")),  # FN D
            episode(trace("T10", "T9", ["INDIRECT-UPREGULATOR", "ACTIVATOR"], "NO-RELATION", with_nr=True)),  # FN B, D
        ],
        negatives="all",
    )


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
        "INDIRECT-UPREGULATOR": 1,
        "ACTIVATOR": 2,
        "INHIBITOR": 1,
        "AGONIST": 1,
        "SUBSTRATE": 2,
    }
    # Accuracy: T1:T2 (E is gold), T3:T2 and the NO-RELATION T7:T5 are right.
    assert close(got["accuracy"], Fraction(3, 7))
    assert got["no_relation"] == {
        "letter": "N",
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "support": 2,
        "predicted": 2,
    }
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
        ("INHIBITOR", "INHIBITOR"): 1,  # right on a multi-label pair: its diagonal
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
    for expected in (
        "7 tasks, 7 rollouts",
        "micro, rollouts pooled      0.500  0.286  0.364      2      2      5",
        "NO-RELATION (not scored)",
        "Confusion matrix",
        "Invalid replies: 1 of 7 (14.3%): no_boxed_answer 1",
        "negatives=all over the whole validation split: comparable",
    ):
        assert expected in out


def test_json_has_the_documented_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", "--json", str(multilabel_run(tmp_path))]) == 0
    payload = json.loads(capsys.readouterr().out)
    for key in (
        "n_tasks",
        "n_rollouts",
        "accuracy",
        "micro_precision",
        "micro_recall",
        "micro_f1",
        "macro_f1",
        "per_class",
        "invalid_rate",
        "confusion",
        "majority",
        "tokens",
        "setting",
    ):
        assert key in payload
    assert list(payload["per_class"]) == list(RELATION_NAMES)


# ------------------------------------------------------------------------------- several rollouts per task


def rollouts_run(tmp_path: Path, name: str = "rollouts") -> Path:
    """Three positive-only tasks x three rollouts, written out of order (as async runs finish)."""
    a, b, c = (
        ("T1", "T2", ["INHIBITOR"]),
        ("T3", "T2", ["SUBSTRATE"]),
        ("T4", "T5", ["INDIRECT-DOWNREGULATOR", "INDIRECT-UPREGULATOR"]),
    )
    return write_run(
        tmp_path / name,
        [
            episode(trace(*a, "INHIBITOR")),
            episode(trace(*b, "INHIBITOR")),
            episode(trace(*c, "INDIRECT-UPREGULATOR")),
            episode(trace(*a, "INHIBITOR")),
            episode(trace(*b, None, invalid_reason="unterminated_think")),
            episode(trace(*c, "INDIRECT-DOWNREGULATOR")),
            episode(trace(*a, "SUBSTRATE")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*c, "DIRECT-REGULATOR")),
        ],
    )


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
    assert gold == [
        (PMID, "T1", "T2", "INHIBITOR"),
        (PMID, "T1", "T2", "SUBSTRATE"),
        (PMID, "T3", "T2", "SUBSTRATE"),
        (PMID, "T4", "T5", "AGONIST"),
        (PMID, "T8", "T9", "ACTIVATOR"),
        (PMID, "T10", "T9", "INDIRECT-UPREGULATOR"),
        (PMID, "T10", "T9", "ACTIVATOR"),
    ]
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
    run_dir = write_run(
        tmp_path / "corrupt",
        [
            good,
            "{not json",
            "",
            json.dumps(foreign),
            json.dumps({"hello": "world"}),
            episode(trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE")),
        ],
    )
    with (run_dir / "traces.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(good[: len(good) // 2])  # a crash mid-write: no newline, cut JSON
    run = report.load_run(run_dir)
    assert len(run.rollouts) == 2
    assert run.lines == 6
    skipped = [str(skip) for skip in run.corrupt]
    assert skipped == [
        "traces.jsonl:2: invalid JSON (JSONDecodeError: Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)); truncated write?",
        "traces.jsonl:4: field task.data.labels is null, expected a non-empty list of DrugProt type names",
        "traces.jsonl:5: not an episode (no traces list)",
        skipped[3],
    ]
    assert skipped[3].startswith("traces.jsonl:7: invalid JSON (JSONDecodeError: ")
    got = report.summarize(run)
    assert got["lines"] == {
        "read": 6,
        "blank": 1,
        "records": 6,
        "corrupt": 4,
        "unidentified": 0,
        "corrupt_lines": skipped,
        "unidentified_lines": [],
    }
    assert got["accuracy"] == 1.0


def test_a_run_without_any_rollout_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "empty", ["{broken"])
    with pytest.raises(report.ReportError, match="no DrugProt rollouts"):
        report.load_run(run_dir)
    assert cli_main(["report", str(tmp_path / "missing")]) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_traces_without_a_record_or_with_a_scoring_error_are_rescored(tmp_path: Path) -> None:
    task_error = [{"type": "TaskError", "message": "boom", "status_code": None, "traceback": None}]
    run_dir = write_run(
        tmp_path / "rescore",
        [
            # An older run: no info["drugprot"]; the reply names K.
            episode(trace("T1", "T2", ["SUBSTRATE"], "SUBSTRATE", record=False)),
            # Scoring failed: the record is ignored (it says E) and the reply (K) is re-scored.
            episode(
                {
                    **trace("T3", "T2", ["SUBSTRATE"], "INHIBITOR", reply="<think>x</think>\\boxed{K}"),
                    "errors": task_error,
                }
            ),
            # A usable record wins over the reply text.
            episode(trace("T4", "T2", ["SUBSTRATE"], "INHIBITOR", reply="<think>x</think>\\boxed{K}")),
            # No reply at all and a provider error: invalid, with the error type as the reason.
            episode(
                {
                    **trace("T5", "T2", ["SUBSTRATE"], None, record=False),
                    "nodes": [],
                    "errors": [{"type": "ProviderError", "message": "upstream 500"}],
                }
            ),
        ],
    )
    run = report.load_run(run_dir)
    assert [(r.label, r.rescored) for r in run.rollouts] == [
        ("SUBSTRATE", True),
        ("SUBSTRATE", True),
        ("INHIBITOR", False),
        (None, False),
    ]
    assert run.rollouts[3].invalid_reason == "rollout_error: ProviderError"
    got = report.summarize(run)
    assert got["rescored"] == 2 and got["invalid_reasons"] == {"rollout_error: ProviderError": 1}
    assert "re-scored 2 rollouts from their last assistant message" in report.format_report(got)


def test_tokens_come_from_the_trace_or_else_from_the_calls(tmp_path: Path) -> None:
    older = trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE", tokens=(300, 30))
    for key in ("num_input_tokens", "num_output_tokens", "num_total_tokens"):
        del older[key]  # verifiers 0.3.1 traces carry usage in calls only
    older["calls"][0]["finish_reason"] = "length"
    run = report.load_run(
        write_run(
            tmp_path / "tokens",
            [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", tokens=(100, 10))), episode(older)],
        )
    )
    tokens = report.summarize(run)["tokens"]
    assert tokens == {
        "rollouts_with_usage": 2,
        "mean_input": 200.0,
        "mean_output": 20.0,
        "max_output": 30,
        "total_input": 400,
        "total_output": 40,
        "truncated": 1,
    }
    assert report.summarize(run)["mean_reward"] == pytest.approx(1.1)


# ------------------------------------------------------------------------------- malformed records never stop it


def good_line(arg1: str = "T1") -> str:
    return episode(trace(arg1, "T2", ["INHIBITOR"], "INHIBITOR"))


def mutated(change: Any) -> str:
    """A good episode line with ``change(first trace)`` applied."""
    line = json.loads(episode(trace("T3", "T4", ["SUBSTRATE"], "SUBSTRATE")))
    change(line["traces"][0])
    return json.dumps(line)


def put(path: str, value: Any) -> Any:
    """``change`` setting the dotted ``path`` of a trace (``task.data.labels``) to ``value``."""

    def change(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            obj = obj[int(key)] if isinstance(obj, list) else obj[key]
        obj[int(last) if isinstance(obj, list) else last] = value

    return change


MALFORMED = [
    # (what the trace gets, the reason the report gives for skipping it)
    (
        put("task.data.labels", [["INHIBITOR"]]),
        "field task.data.labels[0] is a list of 1 items, not a DrugProt type name (or NO-RELATION)",
    ),
    (
        put("task.data.labels", ["INHIBITORS"]),
        "field task.data.labels[0] is the string 'INHIBITORS', not a DrugProt type name (or NO-RELATION)",
    ),
    (
        put("task.data.labels", "INHIBITOR"),
        "field task.data.labels is the string 'INHIBITOR', expected a non-empty list of DrugProt type names",
    ),
    (
        put("task.data.labels", ["SUBSTRATE", "SUBSTRATE"]),
        "field task.data.labels lists a type twice: SUBSTRATE, SUBSTRATE",
    ),
    (
        put("task.data.labels", ["NO-RELATION", "SUBSTRATE"]),
        "field task.data.labels: NO-RELATION must be the only label, of a task with with_no_relation true",
    ),
    (
        put("task.data.with_no_relation", "yes"),
        "field task.data.with_no_relation is the string 'yes', expected true or false",
    ),
    (put("task.data.pmid", ["12345"]), "field task.data.pmid is a list of 1 items, expected a string or an integer id"),
    (
        put("task.data.arg1", "T 1"),
        "field task.data.arg1 is the string 'T 1': an id cannot hold whitespace or control characters",
    ),
    (
        put("task.data.pmid", "\udc80"),
        "field task.data.pmid is the string '\\udc80': an id cannot hold whitespace or control characters",
    ),
    (put("task.data", []), "field task.data is a list of 0 items, expected an object"),
    (put("rewards.format.weight", "0.1"), "field rewards['format'].weight is the string '0.1', expected a number"),
    (put("rewards.format", 0.1), "field rewards['format'] is the number 0.1, expected an object with score and weight"),
    (put("reward", float("nan")), "field reward is the number nan, expected a finite number"),
    (put("reward", float("-inf")), "field reward is the number -inf, expected a finite number"),
    (put("reward", True), "field reward is true, expected a number"),
    (put("errors", 5), "field errors is the number 5, expected a list"),
    (put("errors", ["ProviderError"]), "field errors[0] is the string 'ProviderError', expected an object"),
    (put("errors", [{"type": 7, "message": "x"}]), "field errors[0].type is the number 7, expected a string"),
    (put("nodes", {"0": {}}), "field nodes is an object, expected a list"),
    (
        put("nodes.2.message.content", 7),
        "field nodes[2].message.content is the number 7, expected a string or a list of parts",
    ),
    (
        put("nodes.2.message.content", [{"type": "text", "text": ["E"]}]),
        "field nodes[2].message.content[0].text is a list of 1 items, expected a string",
    ),
    (put("nodes.2.sampled", "yes"), "field nodes[2].sampled is the string 'yes', expected true or false"),
    (
        put("num_output_tokens", -1),
        "field num_output_tokens is the number -1, expected a token count (a whole number >= 0)",
    ),
    (
        put("num_output_tokens", 1.5),
        "field num_output_tokens is the number 1.5, expected a token count (a whole number >= 0)",
    ),
    (
        put("num_input_tokens", 10**400),
        "field num_input_tokens is the number 10000000000000000000000…, expected a finite number",
    ),
    (put("calls.0.usage", [1]), "field calls[0].usage is a list of 1 items, expected an object"),
    (put("calls.0.finish_reason", 3), "field calls[0].finish_reason is the number 3, expected a string"),
    (put("info", "drugprot"), "field info is the string 'drugprot', expected an object"),
    (put("is_timeout", "no"), "field is_timeout is the string 'no', expected true or false"),
]


@pytest.mark.parametrize(("change", "reason"), MALFORMED)
def test_a_malformed_trace_is_skipped_with_its_line_and_reason(tmp_path: Path, change: Any, reason: str) -> None:
    run = report.load_run(write_run(tmp_path / "run", [good_line(), mutated(change), good_line("T5")]))
    assert [str(s) for s in run.corrupt] == [f"traces.jsonl:2: {reason}"]
    assert [r.key for r in run.rollouts] == [(PMID, "T1", "T2"), (PMID, "T5", "T2")]
    got = report.summarize(run)
    assert (got["n_rollouts"], got["accuracy"], got["lines"]["records"]) == (2, 1.0, 3)
    assert f"    traces.jsonl:2: {reason}" in report.format_report(got)


BAD_LINES = [
    (b"\xff\xfe{}", "not UTF-8 text (byte 0: invalid start byte); a corrupted file?"),
    (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply to read"),
    (
        b"1" * 5000,
        "invalid JSON (ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has "
        "5000 d…); truncated write?",
    ),
    (b"[]", "not an episode: the line is a list of 0 items, expected an object"),
    (b'"traces"', "not an episode: the line is the string 'traces', expected an object"),
    (b'{"traces": "abc"}', "not an episode (no traces list)"),
    (b'{"traces": []}', "episode without traces and without an error"),
    (b'{"traces": ["x"]}', "trace is the string 'x', expected an object"),
    (
        b'{"traces": [{"task": {"data": {"question": "?"}}}]}',
        "not a DrugProt rollout: task.data has none of pmid, arg1, arg2, labels",
    ),
]


@pytest.mark.parametrize(("raw", "reason"), BAD_LINES)
def test_a_bad_line_is_skipped_with_its_line_and_reason(tmp_path: Path, raw: bytes, reason: str) -> None:
    run_dir = write_run(tmp_path / "run", [good_line()])
    with (run_dir / "traces.jsonl").open("ab") as fh:
        fh.write(raw + b"\n")
    run = report.load_run(run_dir)
    assert [str(s) for s in run.corrupt] == [f"traces.jsonl:2: {reason}"]
    assert len(run.rollouts) == 1


def test_nesting_that_json_reads_is_reported_without_recursion(tmp_path: Path) -> None:
    deep: Any = "INHIBITOR"
    for _ in range(500):
        deep = [deep]
    run = report.load_run(write_run(tmp_path / "run", [good_line(), mutated(put("task.data.labels", deep))]))
    assert [str(s) for s in run.corrupt] == [
        "traces.jsonl:2: field task.data.labels[0] is a list of 1 items, not a DrugProt type name (or NO-RELATION)"
    ]


def test_a_malformed_prediction_record_is_rescored_not_skipped(tmp_path: Path) -> None:
    record_label_list = put("info.drugprot.label", ["K"])
    record_reason_object = put("info.drugprot", {"label": None, "invalid_reason": {"why": 1}, "format_reason": None})
    run = report.load_run(write_run(tmp_path / "run", [mutated(record_label_list), mutated(record_reason_object)]))
    assert run.corrupt == []
    assert [(r.label, r.rescored) for r in run.rollouts] == [("SUBSTRATE", True), ("SUBSTRATE", True)]


def test_a_multi_trace_episode_is_one_record_per_trace(tmp_path: Path) -> None:
    line = json.loads(episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"), trace("T3", "T2", ["SUBSTRATE"], None)))
    line["traces"][1]["task"]["data"]["labels"] = []
    run = report.load_run(write_run(tmp_path / "run", [json.dumps(line)]))
    assert [str(s) for s in run.corrupt] == [
        "traces.jsonl:1 trace 1: field task.data.labels is a list of 0 items, expected a non-empty list of DrugProt "
        "type names"
    ]
    assert (run.lines, len(run.rollouts), report.summarize(run)["lines"]["records"]) == (1, 1, 2)


def test_json_output_is_strict_even_for_extreme_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = [mutated(put("reward", 1e308)), mutated(put("reward", 1e308)), mutated(put("reward", float("nan")))]
    assert cli_main(["report", "--json", str(write_run(tmp_path / "run", huge))]) == 0

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    payload = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert (payload["mean_reward"], payload["n_rollouts"], payload["lines"]["corrupt"]) == (1e308, 2, 1)


def test_text_taken_from_a_trace_is_always_printable(tmp_path: Path) -> None:
    error_type = json.loads(provider_error("T1"))
    error_type["traces"][0]["errors"][0].update(type="Bad\udc80Error", message="no \ud800 route")
    reason = put("info.drugprot", {"label": None, "invalid_reason": "odd\udc80", "format_reason": None})
    run = report.load_run(write_run(tmp_path / "run", [json.dumps(error_type), mutated(reason), good_line()]))
    text = report.format_report(report.summarize(run))
    text.encode("utf-8")  # a lone surrogate would make print() fail here
    assert "and gave no answer: Bad\\udc80Error 1\n" in text
    assert "(66.7%): rollout_error: Bad\\udc80Error 1, odd\\udc80 1\n" in text
    assert run.rollouts[0].error_message == "no \\ud800 route"


# ------------------------------------------------------------------------------- unidentified tasks


def test_a_rollout_whose_task_cannot_be_identified_is_counted_not_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(
        tmp_path / "run",
        [
            good_line(),
            mutated(put("task.data.pmid", "")),
            mutated(put("task.data.arg2", None)),
            mutated(lambda t: t["task"]["data"].pop("arg1")),
        ],
    )
    run = report.load_run(run_dir)
    assert [str(s) for s in run.unidentified] == [
        "traces.jsonl:2: task cannot be identified: field task.data.pmid is empty",
        "traces.jsonl:3: task cannot be identified: field task.data.arg2 is missing",
        "traces.jsonl:4: task cannot be identified: field task.data.arg1 is missing",
    ]
    assert (run.corrupt, len(run.rollouts)) == ([], 1)
    assert cli_main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "  read 4 lines, 4 records: 1 rollouts, 0 skipped, 3 of unidentified tasks\n" in out
    assert "  3 rollouts of a task that cannot be identified (counted, not scored):\n" in out
    assert "    traces.jsonl:2: task cannot be identified: field task.data.pmid is empty\n" in out


def test_a_legacy_row_whose_task_cannot_be_identified_is_counted(tmp_path: Path) -> None:
    info = {"pmid": " ", "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"]}
    good = {**info, "pmid": PMID}
    rows = [{"completion": "\\boxed{E}", "info": good}, {"completion": "\\boxed{E}", "info": info}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = report.load_run(tmp_path / "results.jsonl")
    assert [str(s) for s in run.unidentified] == [
        "results.jsonl:2: task cannot be identified: field info.pmid is empty"
    ]
    assert len(run.rollouts) == 1


# ------------------------------------------------------------------------------- failed runs


def provider_error(arg1: str, message: str = "upstream 401: missing API key") -> str:
    """A rollout that failed before any reply (what a run without an API key writes)."""
    failed = trace(arg1, "T2", ["INHIBITOR"], None, record=False)
    failed.update(nodes=failed["nodes"][:2], calls=[], errors=[{"type": "ProviderError", "message": message}])
    failed.update(num_input_tokens=0, num_output_tokens=0, rewards={"accuracy": None, "format": None})
    return episode(failed)


def test_a_run_where_most_rollouts_errored_is_flagged_first_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / "nokey", [provider_error("T1"), provider_error("T3"), good_line("T5")])
    tsv = tmp_path / "pred.tsv"
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tsv)]) == report.EXIT_FAILED_RUN == 3
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:3] == [
        "drugprot report: FAILED RUN nokey: 2 of 3 rollouts (66.7%) errored without an answer (ProviderError 2)",
        "  first error: ProviderError: upstream 401: missing API key",
        "  The figures below measure the failure, not the model. Check the endpoint, model name and API key (or the "
        "harness log), then re-run.",
    ]
    assert captured.err.splitlines() == [
        "not written (--export-tsv): the run failed; pass --allow-errors to write them anyway",
        "nokey: FAILED RUN, 2 of 3 rollouts errored without an answer (ProviderError 2); exit 3 (--allow-errors "
        "reports it with exit 0)",
    ]
    assert not tsv.exists()
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tsv), "--allow-errors"]) == 0
    assert tsv.read_text(encoding="utf-8") == f"{PMID}\tINHIBITOR\tArg1:T5\tArg2:T2\n"
    assert capsys.readouterr().out.startswith("drugprot report: FAILED RUN nokey")
    assert cli_main(["report", "--json", str(run_dir)]) == 3
    payload = json.loads(capsys.readouterr().out)
    assert list(payload)[:2] == ["failed", "errored"]
    assert payload["errored"] == {
        "failed": True,
        "rollouts": 2,
        "rate": 2 / 3,
        "types": {"ProviderError": 2},
        "example": "ProviderError: upstream 401: missing API key",
    }
    assert payload["invalid_reasons"] == {"rollout_error: ProviderError": 2}


def test_half_the_rollouts_errored_is_not_a_failed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "half", [provider_error("T1"), good_line("T5")])
    assert cli_main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("drugprot report: half (verifiers v1 traces.jsonl)\n")
    assert "  errored: 1 of 2 rollouts (50.0%) recorded an error and gave no answer: ProviderError 1\n" in out


def test_an_error_with_an_answer_is_not_an_errored_rollout() -> None:
    answered = report.Rollout(PMID, "T1", "T2", ("INHIBITOR",), False, "INHIBITOR", error="TaskError")
    unanswered = report.Rollout(PMID, "T1", "T2", ("INHIBITOR",), False, None, error="TaskError")
    no_error = report.Rollout(PMID, "T1", "T2", ("INHIBITOR",), False, None, "no_boxed_answer")
    assert [r.errored for r in (answered, unanswered, no_error)] == [False, True, False]
    assert report.errored_summary([answered, unanswered, no_error])["failed"] is False
    assert report.errored_summary([answered, unanswered, unanswered])["failed"] is True


def test_an_episode_without_traces_that_errored_is_an_errored_rollout(tmp_path: Path) -> None:
    task = json.loads(good_line("T7"))["task"]
    env_error = {
        "id": "e",
        "task": task,
        "ok": False,
        "traces": [],
        "errors": [{"type": "EnvError", "message": "run() raised"}],
    }
    timed_out = trace("T8", "T2", ["INHIBITOR"], None, record=False)
    timed_out.update(nodes=timed_out["nodes"][:2], calls=[], is_timeout=True, stop_condition="agent_timeout")
    run = report.load_run(write_run(tmp_path / "run", [json.dumps(env_error), episode(timed_out)]))
    assert [(r.arg1, r.error, r.error_message, r.invalid_reason) for r in run.rollouts] == [
        ("T7", "EnvError", "run() raised", "rollout_error: EnvError"),
        ("T8", "agent_timeout", None, "rollout_error: agent_timeout"),
    ]


def test_a_legacy_row_with_an_error_object_is_an_errored_rollout(tmp_path: Path) -> None:
    info = {"pmid": PMID, "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"]}
    error = {"error": "ModelError", "message": "Connection error.", "error_chain_repr": "", "error_chain_str": ""}
    rows = [{"completion": [], "info": info, "error": error, "reward": 0.0}, {"completion": [], "info": "{nope"}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = report.load_run(tmp_path / "results.jsonl")
    assert [(r.error, r.error_message, r.errored) for r in run.rollouts] == [("ModelError", "Connection error.", True)]
    assert [str(s) for s in run.corrupt] == [
        "results.jsonl:2: field info is a string that is not JSON: invalid JSON (JSONDecodeError: Expecting property "
        "name enclosed in double quotes: line 1 column 2 (char 1)); truncated write?"
    ]
    assert report.summarize(run)["failed"] is True


def test_a_comparison_flags_the_failed_run_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = write_run(tmp_path / "nokey", [provider_error("T1")])
    assert cli_main(["report", str(multilabel_run(tmp_path)), str(failed)]) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "drugprot report: [2] FAILED RUN nokey: 1 of 1 rollouts errored without an answer (ProviderError: upstream "
        "401: missing API key); its figures measure the failure",
        "drugprot report: comparison",
    ]


# ------------------------------------------------------------------------------- property: random corruption

JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: json.dumps writes them, json.loads reads them back
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=6)  # lone surrogates included
    | st.sampled_from(["", " ", "\t", "\udc80", "INHIBITOR", "NO-RELATION", "E", "T1", PMID])
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
PROPERTY = settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON value (not the root itself)."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    out = []
    for key, child in children:
        out.append((*prefix, key))
        out += paths(child, (*prefix, key))
    return out


def corrupt(data: st.DataObject, value: Any) -> bytes:
    """``value`` serialized after 1-3 random edits (replace or delete anywhere), or its bytes cut or garbled."""
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(paths(value)))
        parent = value
        for key in where[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(JSON_VALUES)
        if not paths(value):
            break
    raw = json.dumps(value).encode("utf-8", "surrogatepass")
    damage = data.draw(st.sampled_from(["none", "none", "cut", "bytes"]))
    if damage == "cut":
        return raw[: data.draw(st.integers(0, len(raw)))]
    if damage == "bytes":
        at = data.draw(st.integers(0, len(raw)))
        return raw[:at] + data.draw(st.binary(min_size=1, max_size=4)) + raw[at:]
    return raw


def records_in(raw: bytes, legacy: bool) -> int:
    """How many records a non-blank line holds: one, or one per trace of an episode line."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return 1
    traces = value.get("traces") if isinstance(value, dict) and not legacy else None
    return len(traces) if isinstance(traces, list) and traces else 1


def check_report_survives(lines: list[bytes], legacy: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("results.jsonl" if legacy else "traces.jsonl")
        path.write_bytes(b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines))
        run = report.load_run(path)
        read = [line for line in lines if line.replace(b"\n", b" ").strip()]
        assert run.lines == len(read)
        assert len(run.rollouts) + len(run.corrupt) + len(run.unidentified) == sum(records_in(x, legacy) for x in read)
        got = report.summarize(run)
        assert got["lines"]["records"] == got["n_rollouts"] + got["lines"]["corrupt"] + got["lines"]["unidentified"]
        text = json.dumps(got, allow_nan=False)
        assert json.loads(text) == got
        report.format_report(got).encode("utf-8")  # printable: no lone surrogate reaches the text
        assert report.export_tsv(run, Path(tmp) / "pred.tsv") <= got["n_tasks"]


@PROPERTY
@given(st.data())
def test_random_corruption_of_v1_lines_never_crashes_and_counts_add_up(data: st.DataObject) -> None:
    good = [good_line().encode()]  # one intact line, so the run always has a rollout to report
    templates = [
        trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE"),
        trace("T4", "T5", ["NO-RELATION"], None, with_nr=True, invalid_reason="no_boxed_answer"),
        trace("T6", "T5", ["AGONIST", "ANTAGONIST"], "AGONIST", record=False),
        json.loads(provider_error("T7"))["traces"][0],
    ]
    bad = [corrupt(data, json.loads(episode(data.draw(st.sampled_from(templates))))) for _ in range(3)]
    check_report_survives(data.draw(st.permutations(good + bad)), legacy=False)


@PROPERTY
@given(st.data())
def test_random_corruption_of_legacy_rows_never_crashes_and_counts_add_up(data: st.DataObject) -> None:
    info = {"pmid": PMID, "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"], "with_no_relation": False}
    row = {
        "completion": [{"role": "assistant", "content": "<think>a</think>\\boxed{E}"}],
        "info": info,
        "reward": 1.1,
        "token_usage": {"input_tokens": 5.0, "output_tokens": 2.0},
        "is_truncated": False,
        "error": None,
    }
    rows = [
        {**row, "info": {**info, "drugprot": {"label": "INHIBITOR", "invalid_reason": None}}},
        {**row, "info": json.dumps(info)},
        {**row, "completion": "\\boxed{K}"},
    ]
    bad = [corrupt(data, json.loads(json.dumps(data.draw(st.sampled_from(rows))))) for _ in range(3)]
    check_report_survives(data.draw(st.permutations([json.dumps(row).encode(), *bad])), legacy=True)


# ------------------------------------------------------------------------------- legacy runs, comparison, plot


def test_legacy_results_jsonl(tmp_path: Path) -> None:
    run_dir = tmp_path / "outputs" / "evals" / "drugprot--m" / "abc123"
    run_dir.mkdir(parents=True)
    info = {
        "key": f"{PMID}:T1:T2",
        "pmid": PMID,
        "arg1": "T1",
        "arg2": "T2",
        "labels": ["INHIBITOR"],
        "chemical": "x",
        "gene": "y",
        "with_no_relation": False,
    }
    rows = [
        {
            "example_id": 0,
            "prompt": [],
            "completion": [{"role": "assistant", "content": "<think>a</think>\\boxed{E}"}],
            "answer": "E",
            "info": {
                **info,
                "drugprot": {
                    "letter": "E",
                    "label": "INHIBITOR",
                    "invalid_reason": None,
                    "format_reason": None,
                    "versions": versions_record(source="file"),
                },
            },
            "reward": 1.1,
            "metrics": {"accuracy": 1.0},
            "token_usage": {"input_tokens": 50.0, "output_tokens": 5.0},
        },
        {
            "example_id": 0,
            "prompt": [],
            "completion": [{"role": "assistant", "content": "<think>b</think>\\boxed{K}"}],
            "answer": "E",
            "info": json.dumps(info),
            "reward": 0.0,
            "metrics": {},
        },
    ]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "{trunc", encoding="utf-8")
    (run_dir / "metadata.json").write_text(
        json.dumps(
            {
                "env_id": "drugprot",
                "model": "m",
                "num_examples": 5,
                "env_args": {"split": "train", "negatives": 0, "data_label": "lab set A"},
            }
        )
    )
    run = report.load_run(tmp_path / "outputs")  # found below the given directory
    assert run.source == "legacy vf-eval results.jsonl"
    assert [(r.label, r.rescored) for r in run.rollouts] == [("INHIBITOR", False), ("SUBSTRATE", True)]
    assert len(run.corrupt) == 1
    got = report.summarize(run)
    assert (got["n_tasks"], got["n_rollouts"], got["accuracy"]) == (1, 2, 0.5)
    assert (got["run"]["model"], got["run"]["split"], got["run"]["limit"]) == ("m", "train", None)
    assert got["run"]["data_label"] == "lab set A"  # the data_label knob names the data in the report
    assert "  model m | data lab set A | negatives 0 | limit ?" in report.format_report(got).splitlines()
    # the second row, without a record, is an older rollout
    assert got["run"]["versions"] == {
        "env": "0.1.0 + unknown",
        "prompt": "1 + unknown",
        "scorer": "2 + unknown",
        "data": "file + unknown",
    }


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


def versions_record(scorer: str = "2", revision: str | None = None, source: str = "hub") -> dict[str, Any]:
    return {"env": "0.1.0", "prompt": "1", "scorer": scorer, "data": {"source": source, "revision": revision}}


def versioned_run(directory: Path, versions: Any) -> Path:
    """Two tasks, one rollout each, every trace recording ``versions``."""
    return write_run(
        directory,
        [
            episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", versions=versions)),
            episode(trace("T3", "T4", ["AGONIST"], "ANTAGONIST", versions=versions)),
        ],
    )


def header_versions(text: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith("  versions: ")]
    return line


def test_the_header_prints_the_recorded_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pinned = versioned_run(tmp_path / "pinned", versions_record(revision="3f2a9c1"))
    assert cli_main(["report", str(pinned)]) == 0
    assert header_versions(capsys.readouterr().out) == "  versions: env 0.1.0 | prompt 1 | scorer 2 | data hub@3f2a9c1"
    unpinned = report.summarize(report.load_run(versioned_run(tmp_path / "unpinned", versions_record())))
    assert unpinned["run"]["versions"] == {
        "env": "0.1.0",
        "prompt": "1",
        "scorer": "2",
        "data": "hub, default branch (unpinned)",
    }
    local = report.summarize(report.load_run(versioned_run(tmp_path / "tsv", versions_record(source="tsv"))))
    assert local["run"]["versions"]["data"] == "tsv"


def test_a_run_recorded_without_versions_prints_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = versioned_run(tmp_path / "old", None)
    assert cli_main(["report", str(old)]) == 0
    out = capsys.readouterr().out
    assert header_versions(out) == "  versions: env unknown | prompt unknown | scorer unknown | data unknown"
    assert cli_main(["report", "--json", str(old)]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["versions"] == dict.fromkeys(report.VERSION_NAMES, "unknown")
    # a report dict of an older drugprot (no run.versions) still formats
    got = report.summarize(report.load_run(old))
    del got["run"]["versions"]
    assert header_versions(report.format_report(got)) == (
        "  versions: env unknown | prompt unknown | scorer unknown | data unknown"
    )


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        ({"env": 3, "prompt": "", "scorer": None, "data": "hub"}, "env unknown | prompt unknown | scorer unknown | "
         "data unknown"),
        ({"env": "0.1.0", "data": {"source": "ftp", "revision": 7}}, "env 0.1.0 | prompt unknown | scorer unknown | "
         "data unknown"),
        ("2", "env unknown | prompt unknown | scorer unknown | data unknown"),
    ],
)  # fmt: skip
def test_a_malformed_versions_record_reads_as_unknown(tmp_path: Path, versions: Any, expected: str) -> None:
    run = report.load_run(versioned_run(tmp_path / "bad", versions))
    assert [(r.label, r.rescored) for r in run.rollouts] == [("INHIBITOR", False), ("ANTAGONIST", False)]
    assert header_versions(report.format_report(report.summarize(run))) == f"  versions: {expected}"


def test_rollouts_that_differ_show_every_value(tmp_path: Path) -> None:
    run_dir = write_run(
        tmp_path / "mixed",
        [
            episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", versions=versions_record(scorer="1"))),
            episode(trace("T3", "T4", ["AGONIST"], "AGONIST", versions=versions_record(scorer="2"))),
            episode(trace("T5", "T6", ["AGONIST"], "AGONIST")),
        ],
    )
    assert report.summarize(report.load_run(run_dir))["run"]["versions"] == {
        "env": "0.1.0 + unknown",
        "prompt": "1 + unknown",
        "scorer": "1 + 2 + unknown",
        "data": "hub, default branch (unpinned) + unknown",
    }


def test_a_comparison_warns_when_the_runs_differ_in_a_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = versioned_run(tmp_path / "a", versions_record(scorer="1"))
    second = versioned_run(tmp_path / "b", versions_record(scorer="2", revision="3f2a9c1"))
    same = versioned_run(tmp_path / "c", versions_record(scorer="1"))
    old = versioned_run(tmp_path / "d", None)
    assert cli_main(["report", "--bootstrap", "0", str(first), str(second)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert notes == [
        "  note: the runs differ in scorer, data (scorer [1] 1, [2] 2; data [1] hub, default branch (unpinned), "
        "[2] hub@3f2a9c1): compare with care"
    ]
    assert cli_main(["report", "--bootstrap", "0", str(first), str(same)]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")] == []
    assert cli_main(["report", "--bootstrap", "0", str(first), str(same), str(old)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]
    assert notes == [
        "  note: the runs differ in env, prompt, scorer, data (env [1] 0.1.0, [2] 0.1.0, [3] unknown; prompt [1] 1, "
        "[2] 1, [3] unknown; scorer [1] 1, [2] 1, [3] unknown; data [1] hub, default branch (unpinned), [2] hub, "
        "default branch (unpinned), [3] unknown): compare with care"
    ]


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "confusion.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), str(rollouts_run(tmp_path)), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(tmp_path / "x.png")]) == 2
    assert (
        "--plot needs matplotlib: from the drugprot repository root run "
        "uv pip install -e 'environments/drugprot[report]'"
    ) in capsys.readouterr().err
    assert cli_main(["report", str(multilabel_run(tmp_path))]) == 0  # everything else works without it


# ------------------------------------------------------------------------------- a real vf-eval run


def test_report_on_a_real_vf_eval_run(tmp_path: Path, fixture_run: FixtureRun) -> None:
    """The shared run (tests/conftest.py): every pair answered with reasoning + its first gold letter, except
    FIXTURE_RUN_REPLIES: 4 wrong, 4 invalid (2 without reasoning, 1 cut off while thinking, 1 without a box), and 1
    right whose format fails (two boxed answers)."""
    run_dir = fixture_run.run_dir
    got = report.summarize(report.load_run(run_dir))
    assert (got["n_tasks"], got["n_rollouts"], got["rescored"], got["lines"]["corrupt"]) == (27, 27, 0, 0)
    assert (got["run"]["split"], got["run"]["limit"], got["setting"]["mode"]) == ("train", "-n 27", "positive-only")
    assert got["run"]["versions"] == {
        "env": drugprot.__version__,
        "prompt": PROMPT_VERSION,
        "scorer": SCORER_VERSION,
        "data": "file",
    }
    # 19 right answers; 28 gold relations; FP: the 4 wrong types; FN: E of T1:T2, the 4 wrong and 4 invalid.
    assert close(got["accuracy"], Fraction(19, 27))
    assert got["micro_counts"] == {"tp": 19, "fp": 4, "fn": 9}
    assert close(got["micro_precision"], Fraction(19, 23))
    assert close(got["micro_recall"], Fraction(19, 28))
    assert close(got["micro_f1"], Fraction(38, 51))
    # F1 1 for A C D G J M; B 1/2 (1 TP, 2 invalid); E 1/2; F and K 3/4; I 2/5 (1 TP, 1 FP, 2 invalid); H and L 0.
    assert close(got["macro_f1"], Fraction(89, 130))
    assert close(got["per_class"]["INDIRECT-UPREGULATOR"]["f1"], Fraction(1, 2))
    assert close(got["per_class"]["ANTAGONIST"]["f1"], Fraction(2, 5))
    assert close(got["invalid_rate"], Fraction(4, 27))
    assert got["invalid_reasons"] == {"no_boxed_answer": 1, "reasoning_incomplete": 3}
    assert close(got["format_rate"], Fraction(22, 27))
    assert sorted(got["format_reasons"].items()) == [
        ("no_boxed_answer", 1),
        ("reasoning_incomplete", 3),
        ("several_boxed_answers", 1),
    ]
    assert close(got["mean_reward"], Fraction(19, 27) + Fraction(22, 270))
    replies = fixture_run.replies.values()
    outputs = sum(count_tokens(r.content) + count_tokens(r.reasoning_content) for r in replies)
    assert (got["tokens"]["rollouts_with_usage"], got["tokens"]["total_output"]) == (27, outputs)
    labels, matrix = got["confusion"]["columns"], got["confusion"]["matrix"]
    cells = {(labels[i], labels[j]): v for i, row in enumerate(matrix) for j, v in enumerate(row) if v}
    off_diagonal = {cell: v for cell, v in cells.items() if cell[0] != cell[1]}
    assert off_diagonal == {
        ("SUBSTRATE", "INHIBITOR"): 1,
        ("AGONIST", "ANTAGONIST"): 1,
        ("INDIRECT-UPREGULATOR", report.INVALID): 2,
        ("ANTAGONIST", report.INVALID): 2,
        ("SUBSTRATE_PRODUCT-OF", "SUBSTRATE"): 1,
        ("AGONIST-INHIBITOR", "AGONIST"): 1,
    }
    path = tmp_path / "pred.tsv"
    assert report.export_tsv(report.load_run(run_dir), path) == 23
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == [
        "90000001\tSUBSTRATE\tArg1:T1\tArg2:T2",
        "90000001\tINHIBITOR\tArg1:T3\tArg2:T4",
        "90000001\tSUBSTRATE\tArg1:T5\tArg2:T4",
    ]


def test_a_real_vf_eval_run_with_a_wrong_api_key_is_flagged_and_exits_3(
    tmp_path: Path, fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(scripted_responder({}), api_key="the-right-key") as server:
        extra = ["--env.taskset.data-path", str(fixture_jsonl), "--env.taskset.split", "train"]
        run_dir = run_vf_eval(
            "drugprot",
            server.base_url,
            tmp_path / "outputs",
            n=2,
            extra_args=extra,
            api_key="a-wrong-key",
            require_ok=False,
        )
    # vf-eval itself exits 0 here; the report does not let the run pass as a result.
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tmp_path / "pred.tsv")]) == 3
    banner, first_error = capsys.readouterr().out.splitlines()[:2]
    assert banner == (
        f"drugprot report: FAILED RUN {run_dir.name}: 2 of 2 rollouts (100.0%) errored without an answer "
        "(ProviderError 2)"
    )
    assert first_error.startswith("  first error: ProviderError: ")
    assert "invalid or missing API key" in first_error  # the server's own message, relayed
    assert not (tmp_path / "pred.tsv").exists()


# ------------------------------------------------------------------------------- intervals and paired comparison


def test_task_counts_resample_whole_tasks_and_sum_to_the_pooled_counts(tmp_path: Path) -> None:
    run = report.load_run(rollouts_run(tmp_path))
    keys, counts = report.task_counts(run.rollouts)
    assert keys == [(PMID, "T1", "T2"), (PMID, "T3", "T2"), (PMID, "T4", "T5")]
    # rollouts and right rollouts per task: a 2 of 3, b 1 of 3, c 2 of 3 (both of its types are gold).
    assert counts[:, :2].tolist() == [[3, 2], [3, 1], [3, 2]]
    total = counts.sum(axis=0)
    got = report.summarize(run)
    assert (total[2:15].sum(), total[15:28].sum(), total[28:41].sum()) == (5, 3, 7)
    assert got["micro_counts"] == {"tp": 5, "fp": 3, "fn": 7}


def test_the_report_shows_95_percent_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = multilabel_run(tmp_path)
    assert cli_main(["report", "--json", "--bootstrap", "500", "--seed", "3", str(run_dir)]) == 0
    intervals = json.loads(capsys.readouterr().out)["intervals"]
    assert {k: intervals[k] for k in ("level", "tasks", "resamples", "seed")} == {
        "level": 0.95,
        "tasks": 7,
        "resamples": 500,
        "seed": 3,
    }
    assert intervals["method"] == "percentile bootstrap over tasks"
    # The estimates are the report's own figures; 4/11 micro-F1 and 3/7 accuracy (see the multilabel test).
    assert close(intervals["micro_f1"]["estimate"], Fraction(4, 11))
    assert close(intervals["accuracy"]["estimate"], Fraction(3, 7))
    for name in ("accuracy", "micro_f1", "macro_f1"):
        assert 0.0 <= intervals[name]["low"] <= intervals[name]["estimate"] <= intervals[name]["high"] <= 1.0
    expected = report.summarize(report.load_run(run_dir), resamples=500, seed=3)["intervals"]
    assert intervals == expected  # the seed fixes them

    assert cli_main(["report", "--bootstrap", "500", "--seed", "3", str(run_dir)]) == 0
    out = capsys.readouterr().out
    acc, micro = intervals["accuracy"], intervals["micro_f1"]
    assert f"  mean over rollouts         0.429  [{acc['low']:.3f}, {acc['high']:.3f}]" in out
    assert f"micro, rollouts pooled      0.500  0.286  0.364      2      2      5  [{micro['low']:.3f}, " in out
    assert "95% percentile bootstrap over tasks (all rollouts of a task together), 500 resamples of the 7 tasks" in out


def test_bootstrap_zero_disables_the_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", "--json", "--bootstrap", "0", str(multilabel_run(tmp_path))]) == 0
    assert json.loads(capsys.readouterr().out)["intervals"] is None
    assert cli_main(["report", "--bootstrap", "0", str(multilabel_run(tmp_path))]) == 0
    out = capsys.readouterr().out
    metrics = out.split("Accuracy")[1].split("Per class")[0]
    assert "95%" not in out and "[" not in metrics and "mean over rollouts         0.429\n" in metrics


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_bad_bootstrap_count_is_a_usage_error(tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["report", "--bootstrap", value, str(multilabel_run(tmp_path))])
    assert exc.value.code == 2
    assert "expected a whole number of resamples >= 0" in capsys.readouterr().err


def test_one_task_has_no_interval_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "one", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))])
    assert cli_main(["report", str(run_dir)]) == 0
    assert "no 95% intervals: a bootstrap over tasks needs at least 2 tasks; this run has 1" in capsys.readouterr().out


def second_run(tmp_path: Path) -> Path:
    """``rollouts_run``'s three tasks again, other answers: the majority answer is right on a and b, wrong on c."""
    a, b, c = (
        ("T1", "T2", ["INHIBITOR"]),
        ("T3", "T2", ["SUBSTRATE"]),
        ("T4", "T5", ["INDIRECT-DOWNREGULATOR", "INDIRECT-UPREGULATOR"]),
    )
    return write_run(
        tmp_path / "second",
        [
            episode(trace(*c, "ACTIVATOR")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*a, "INHIBITOR")),
            episode(trace(*c, "ACTIVATOR")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*a, "AGONIST")),
            episode(trace(*c, "INDIRECT-UPREGULATOR")),
            episode(trace(*b, "SUBSTRATE")),
            episode(trace(*a, "INHIBITOR")),
        ],
    )


def test_runs_over_the_same_tasks_get_a_paired_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = rollouts_run(tmp_path), second_run(tmp_path)
    assert cli_main(["report", "--json", "--bootstrap", "400", str(first), str(second)]) == 0
    payload = json.loads(capsys.readouterr().out)
    [comparison] = payload["comparisons"]
    assert (comparison["paired"], comparison["tasks"]) == (True, 3)
    # Majority answers: first run a E (right), b E (wrong: tie E/K goes to E), c A (right);
    # second run a E (right), b K (right), c D (wrong). So b flipped to right, c to wrong.
    assert comparison["flips"] == {"first_only": 1, "second_only": 1, "both": 1, "neither": 0, "mcnemar_p": 1.0}
    delta = comparison["intervals"]
    # accuracy 5/9 -> 6/9 (a 2, b 3, c 1 of 3); micro-F1 (pooled): first TP 5, FP 3, FN 7 -> 10/20; second
    # TP 6, FP 3, FN 6 -> 12/21.
    assert close(delta["accuracy"]["estimate"], Fraction(6, 9) - Fraction(5, 9))
    assert close(delta["micro_f1"]["estimate"], Fraction(12, 21) - Fraction(10, 20))
    assert delta["tasks"] == 3 and delta["resamples"] == 400
    for name in ("accuracy", "micro_f1", "macro_f1"):
        assert delta[name]["low"] <= delta[name]["estimate"] <= delta[name]["high"]
    runs = report.load_run(first), report.load_run(second)
    assert report.compare_runs(*runs, resamples=400, seed=0) == comparison

    assert cli_main(["report", "--bootstrap", "400", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "Paired comparison [2] - [1] over the same 3 tasks (matched by task key)" in out
    acc = delta["accuracy"]
    assert f"  delta accuracy              +0.111  [{acc['low']:+.3f}, {acc['high']:+.3f}]" in out
    assert "tasks by majority answer: right in [1] only 1, right in [2] only 1, both 1, neither 0" in out
    assert "different tasks" not in out


def test_runs_over_different_tasks_get_no_paired_statistics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = multilabel_run(tmp_path), rollouts_run(tmp_path)
    assert cli_main(["report", "--json", str(first), str(second)]) == 0
    assert json.loads(capsys.readouterr().out)["comparisons"] == [
        {"paired": False, "reason": "the runs cover different tasks (7 and 3; 3 shared)"}
    ]
    assert cli_main(["report", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "the runs cover different tasks (7, 3; 3 shared): compare with care" in out
    assert "Paired comparison [2] - [1]: none, the runs cover different tasks (7 and 3; 3 shared)" in out
    assert "delta" not in out


def test_the_same_pairs_in_another_setting_are_not_paired(tmp_path: Path) -> None:
    positive = write_run(tmp_path / "positive", [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"))] * 2)
    negatives = write_run(
        tmp_path / "negatives",
        [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", with_nr=True))] * 2,
        negatives="all",
    )
    comparison = report.compare_runs(report.load_run(positive), report.load_run(negatives), resamples=10, seed=0)
    assert comparison == {
        "paired": False,
        "reason": "1 shared tasks differ in gold labels or in offering NO-RELATION (different settings)",
    }


@pytest.mark.parametrize("command", ["report", "baseline"])
def test_help_names_the_bootstrap_options(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main([command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert "resamples of the tasks for the 95% intervals" in " ".join(out.split())
    assert ("--seed S, --bootstrap-seed S" if command == "report" else "--bootstrap-seed S") in out
