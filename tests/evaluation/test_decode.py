"""``drugprot.evaluation.decode``: each line of a run file as rollouts or skips naming the field, never a crash."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drugprot.evaluation.export import export_tsv
from drugprot.evaluation.runs import load_run
from drugprot.modes.pair.render import format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main
from tests.evaluation.corruption import PROPERTY, corrupt, records_in
from tests.evaluation.traces import (
    PMID,
    episode,
    good_line,
    header_versions,
    mutated,
    provider_error,
    put,
    trace,
    versioned_run,
    write_run,
)

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
    run = load_run(write_run(tmp_path / "run", [good_line(), mutated(change), good_line("T5")]))
    assert [str(s) for s in run.corrupt] == [f"traces.jsonl:2: {reason}"]
    assert [r.key for r in run.rollouts] == [(PMID, "T1", "T2"), (PMID, "T5", "T2")]
    got = summarize(run)
    assert (got["n_rollouts"], got["accuracy"], got["lines"]["records"]) == (2, 1.0, 3)
    assert f"    traces.jsonl:2: {reason}" in format_report(got)


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
    run = load_run(run_dir)
    assert [str(s) for s in run.corrupt] == [f"traces.jsonl:2: {reason}"]
    assert len(run.rollouts) == 1


def test_nesting_that_json_reads_is_reported_without_recursion(tmp_path: Path) -> None:
    deep: Any = "INHIBITOR"
    for _ in range(500):
        deep = [deep]
    run = load_run(write_run(tmp_path / "run", [good_line(), mutated(put("task.data.labels", deep))]))
    assert [str(s) for s in run.corrupt] == [
        "traces.jsonl:2: field task.data.labels[0] is a list of 1 items, not a DrugProt type name (or NO-RELATION)"
    ]


def test_a_malformed_prediction_record_is_rescored_not_skipped(tmp_path: Path) -> None:
    record_label_list = put("info.drugprot.label", ["K"])
    record_reason_object = put("info.drugprot", {"label": None, "invalid_reason": {"why": 1}, "format_reason": None})
    run = load_run(write_run(tmp_path / "run", [mutated(record_label_list), mutated(record_reason_object)]))
    assert run.corrupt == []
    assert [(r.label, r.rescored) for r in run.rollouts] == [("SUBSTRATE", True), ("SUBSTRATE", True)]


def test_a_multi_trace_episode_is_one_record_per_trace(tmp_path: Path) -> None:
    line = json.loads(episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR"), trace("T3", "T2", ["SUBSTRATE"], None)))
    line["traces"][1]["task"]["data"]["labels"] = []
    run = load_run(write_run(tmp_path / "run", [json.dumps(line)]))
    assert [str(s) for s in run.corrupt] == [
        "traces.jsonl:1 trace 1: field task.data.labels is a list of 0 items, expected a non-empty list of DrugProt "
        "type names"
    ]
    assert (run.lines, len(run.rollouts), summarize(run)["lines"]["records"]) == (1, 1, 2)


def test_text_taken_from_a_trace_is_always_printable(tmp_path: Path) -> None:
    error_type = json.loads(provider_error("T1"))
    error_type["traces"][0]["errors"][0].update(type="Bad\udc80Error", message="no \ud800 route")
    reason = put("info.drugprot", {"label": None, "invalid_reason": "odd\udc80", "format_reason": None})
    run = load_run(write_run(tmp_path / "run", [json.dumps(error_type), mutated(reason), good_line()]))
    text = format_report(summarize(run))
    text.encode("utf-8")  # a lone surrogate would make print() fail here
    assert "and gave no answer: Bad\\udc80Error 1\n" in text
    assert "(66.7%): rollout_error: Bad\\udc80Error 1, odd\\udc80 1\n" in text
    assert run.rollouts[0].error_message == "no \\ud800 route"


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
    run = load_run(run_dir)
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
    run = load_run(tmp_path / "results.jsonl")
    assert [str(s) for s in run.unidentified] == [
        "results.jsonl:2: task cannot be identified: field info.pmid is empty"
    ]
    assert len(run.rollouts) == 1


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
    run = load_run(run_dir)
    assert [(r.label, r.rescored) for r in run.rollouts] == [
        ("SUBSTRATE", True),
        ("SUBSTRATE", True),
        ("INHIBITOR", False),
        (None, False),
    ]
    assert run.rollouts[3].invalid_reason == "rollout_error: ProviderError"
    got = summarize(run)
    assert got["rescored"] == 2 and got["invalid_reasons"] == {"rollout_error: ProviderError": 1}
    assert "re-scored 2 rollouts from their last assistant message" in format_report(got)


def test_tokens_come_from_the_trace_or_else_from_the_calls(tmp_path: Path) -> None:
    older = trace("T3", "T2", ["SUBSTRATE"], "SUBSTRATE", tokens=(300, 30))
    for key in ("num_input_tokens", "num_output_tokens", "num_total_tokens"):
        del older[key]  # verifiers 0.3.1 traces carry usage in calls only
    older["calls"][0]["finish_reason"] = "length"
    run = load_run(
        write_run(
            tmp_path / "tokens",
            [episode(trace("T1", "T2", ["INHIBITOR"], "INHIBITOR", tokens=(100, 10))), episode(older)],
        )
    )
    tokens = summarize(run)["tokens"]
    assert tokens == {
        "rollouts_with_usage": 2,
        "mean_input": 200.0,
        "mean_output": 20.0,
        "max_output": 30,
        "total_input": 400,
        "total_output": 40,
        "truncated": 1,
    }
    assert summarize(run)["mean_reward"] == pytest.approx(1.1)


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
    run = load_run(write_run(tmp_path / "run", [json.dumps(env_error), episode(timed_out)]))
    assert [(r.arg1, r.error, r.error_message, r.invalid_reason) for r in run.rollouts] == [
        ("T7", "EnvError", "run() raised", "rollout_error: EnvError"),
        ("T8", "agent_timeout", None, "rollout_error: agent_timeout"),
    ]


def test_a_legacy_row_with_an_error_object_is_an_errored_rollout(tmp_path: Path) -> None:
    info = {"pmid": PMID, "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"]}
    error = {"error": "ModelError", "message": "Connection error.", "error_chain_repr": "", "error_chain_str": ""}
    rows = [{"completion": [], "info": info, "error": error, "reward": 0.0}, {"completion": [], "info": "{nope"}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = load_run(tmp_path / "results.jsonl")
    assert [(r.error, r.error_message, r.errored) for r in run.rollouts] == [("ModelError", "Connection error.", True)]
    assert [str(s) for s in run.corrupt] == [
        "results.jsonl:2: field info is a string that is not JSON: invalid JSON (JSONDecodeError: Expecting property "
        "name enclosed in double quotes: line 1 column 2 (char 1)); truncated write?"
    ]
    assert summarize(run)["failed"] is True


CONNECT_CHAIN = (
    "ModelError() -> APIConnectionError('Connection error.') -> ConnectError('[Errno -2] Name or service not "
    "known') -> ConnectError(gaierror(-2, 'Name or service not known'))"
)
"""What verifiers 0.3.1's legacy vf-eval saved for a rollout with no route to Prime Inference (a real run)."""


@pytest.mark.parametrize(
    ("error", "row_chain", "message"),
    [
        (  # 0.3.1: the bare ModelError; the cause is only in its chain
            {"error": "ModelError", "message": "ModelError", "error_chain_repr": CONNECT_CHAIN},
            CONNECT_CHAIN,
            CONNECT_CHAIN.removeprefix("ModelError() -> "),
        ),
        (  # the chain kept only on the row
            {"error": "ModelError", "message": ""},
            "ModelError() -> AuthenticationError('Error code: 401 - invalid or missing API key')",
            "AuthenticationError('Error code: 401 - invalid or missing API key')",
        ),
        ({"error": "ModelError", "message": "ModelError", "error_chain_repr": "ModelError()"}, None, "ModelError"),
        ({"error": "ModelError", "message": "timed out", "error_chain_repr": CONNECT_CHAIN}, None, "timed out"),
    ],
)
def test_a_legacy_model_error_names_its_cause(
    tmp_path: Path, error: dict[str, Any], row_chain: Any, message: str
) -> None:
    info = {"pmid": PMID, "arg1": "T1", "arg2": "T2", "labels": ["INHIBITOR"]}
    row = {"completion": [], "info": info, "error": error, "error_chain": row_chain, "reward": 0.0}
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    run = load_run(tmp_path / "results.jsonl")
    assert [(r.error, r.error_message) for r in run.rollouts] == [("ModelError", message)]
    assert summarize(run)["errored"]["example"] == f"ModelError: {message}"


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
    run = load_run(versioned_run(tmp_path / "bad", versions))
    assert [(r.label, r.rescored) for r in run.rollouts] == [("INHIBITOR", False), ("ANTAGONIST", False)]
    assert header_versions(format_report(summarize(run))) == f"  versions: {expected}"


def check_report_survives(lines: list[bytes], legacy: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("results.jsonl" if legacy else "traces.jsonl")
        path.write_bytes(b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines))
        run = load_run(path)
        read = [line for line in lines if line.replace(b"\n", b" ").strip()]
        assert run.lines == len(read)
        assert len(run.rollouts) + len(run.corrupt) + len(run.unidentified) == sum(records_in(x, legacy) for x in read)
        got = summarize(run)
        assert got["lines"]["records"] == got["n_rollouts"] + got["lines"]["corrupt"] + got["lines"]["unidentified"]
        text = json.dumps(got, allow_nan=False)
        assert json.loads(text) == got
        format_report(got).encode("utf-8")  # printable: no lone surrogate reaches the text
        assert export_tsv(run, Path(tmp) / "pred.tsv") <= got["n_tasks"]


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
