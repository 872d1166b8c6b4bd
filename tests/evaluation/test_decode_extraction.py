"""``drugprot.modes.extraction.decode``: an extraction rollout read from a run line; bad gold records are
skipped with the field named; a run mixing pair and extraction rollouts is refused."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drugprot.core.official_tsv import read_relations_tsv
from drugprot.core.rewards import Reward
from drugprot.core.scoring import score_extraction
from drugprot.evaluation.decode import read_line
from drugprot.evaluation.export import export_tsv
from drugprot.evaluation.records import ExtractionAnswer, ExtractionRollout, ReportError, Skip
from drugprot.evaluation.runs import load_run
from drugprot.modes.extraction.render import format_extraction_report
from drugprot.modes.extraction.summary import summarize_extraction
from tests.evaluation.corruption import PROPERTY, corrupt, records_in
from tests.evaluation.extraction_traces import GOLD_100, block, episode, extraction_trace, legacy_row, write_v1_run
from tests.evaluation.traces import good_line


def test_an_extraction_trace_is_an_extraction_rollout() -> None:
    line = episode(extraction_trace("100", GOLD_100, block("T1 | T2 | E", "T1 | T2 | inhibitor", "x")))
    (rollout,) = read_line(line.encode(), file="traces.jsonl", line=1, legacy=False)
    assert rollout == ExtractionRollout(
        "100",
        GOLD_100,
        # the recorded accuracy reward: the per-document F1 2/3 on the 1/64 reward grid
        ExtractionAnswer(
            (("T1", "T2", "INHIBITOR"),), 43 / 64, malformed=1, duplicate=1, format_reason="malformed_line"
        ),
        reward=43 / 64,
        input_tokens=900,
        output_tokens=60,
        ceiling=(2, 2, None),  # a two-count record (a run made before the one-answer-per-pair count)
    )
    (legacy,) = read_line(json.dumps(legacy_row("100", GOLD_100, block("T1 | T2 | E"))).encode(), file="r", line=1,
                          legacy=True)  # fmt: skip
    assert isinstance(legacy, ExtractionRollout) and legacy.answer.relations == (("T1", "T2", "INHIBITOR"),)
    assert (legacy.answer.accuracy, legacy.rescored) == (43 / 64, False)


def test_a_scorer_2_record_that_rejected_a_swapped_line_is_re_scored(tmp_path: Path) -> None:
    # Scorer versions 1 and 2 rejected "T2 | T1 | E" (gene id first) as wrong_entity_type; the current scorer reads
    # it as T1 -> T2 INHIBITOR, as the official scorer does. The old record is not trusted, so the report and
    # the export agree with the reward.
    reply = block("T2 | T1 | E")
    trace = extraction_trace("100", GOLD_100, reply)
    record = trace["info"]["drugprot"]
    assert (record["relations"], record["wrong_entity_type"]) == ([["T1", "T2", "INHIBITOR"]], 0)  # the scorer now
    old = {**record, "relations": [], "tp": 0, "fp": 0, "fn": 2, "wrong_entity_type": 1,
           "format_reason": "wrong_entity_type", "versions": {"scorer": "2"}}  # fmt: skip
    trace["info"]["drugprot"], trace["rewards"]["accuracy"]["score"] = old, 0.0
    (rollout,) = read_line(episode(trace).encode(), file="traces.jsonl", line=1, legacy=False)
    assert (rollout.answer.relations, rollout.answer.accuracy, rollout.rescored) == (
        (("T1", "T2", "INHIBITOR"),),
        2 / 3,
        True,
    )
    run_dir = write_v1_run(tmp_path / "old", [episode(trace)])
    assert export_tsv(load_run(run_dir), tmp_path / "pred.tsv") == 1
    assert read_relations_tsv(tmp_path / "pred.tsv") == [("100", "T1", "T2", "INHIBITOR")]
    # A scorer-3 record with a genuinely wrong type (two chemicals) is trusted as it is.
    kept = extraction_trace("100", GOLD_100, block("T1 | T3 | E"))
    kept["info"]["drugprot"]["versions"] = {"scorer": "3"}
    (rollout,) = read_line(episode(kept).encode(), file="traces.jsonl", line=1, legacy=False)
    assert (rollout.answer.wrong_type, rollout.rescored) == (1, False)


def gold_changed(path: str, value: Any) -> bytes:
    trace = extraction_trace("100", GOLD_100, block("none"))
    record = trace["task"]["data"]["extraction"]
    if path == "extraction":
        trace["task"]["data"]["extraction"] = value
    elif path == "pmid":
        trace["task"]["data"]["pmid"] = value
    else:
        record[path] = value
    return episode(trace).encode()


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("extraction", ["T1"], "field task.data.extraction is a list of 1 items, expected an object with chemicals, "
         "genes, relations"),
        ("chemicals", "T1", "field task.data.extraction.chemicals is the string 'T1', expected a list of mention ids"),
        ("genes", [1], "field task.data.extraction.genes is a list of 1 items, expected a list of mention ids"),
        ("relations", {}, "field task.data.extraction.relations is an object, expected a list of [chemical, gene, "
         "type]"),
        ("relations", [["T2", "T1", "INHIBITOR"]], "field task.data.extraction.relations[0] is ['T2', 'T1', "
         "'INHIBITOR'], expected [chemical id, gene id, DrugProt type] with the ids among the record's chemicals and "
         "genes"),
        ("relations", [["T1", "T2", "NO-RELATION"]], "field task.data.extraction.relations[0] is ['T1', 'T2', "
         "'NO-RELATION'], expected [chemical id, gene id, DrugProt type] with the ids among the record's chemicals "
         "and genes"),
        ("relations", [None], "field task.data.extraction.relations[0] is null, expected [chemical id, gene id, "
         "DrugProt type] with the ids among the record's chemicals and genes"),
    ],
)  # fmt: skip
def test_a_bad_gold_record_is_skipped_naming_the_field(path: str, value: Any, reason: str) -> None:
    assert read_line(gold_changed(path, value), file="traces.jsonl", line=4, legacy=False) == [
        Skip("traces.jsonl", 4, None, reason)
    ]


def test_an_abstract_without_pmid_is_unidentified() -> None:
    assert read_line(gold_changed("pmid", ""), file="traces.jsonl", line=2, legacy=False) == [
        Skip("traces.jsonl", 2, None, "task cannot be identified: field task.data.pmid is empty", unidentified=True)
    ]


def test_a_run_mixing_pair_and_extraction_rollouts_is_refused(tmp_path: Path) -> None:
    run_dir = write_v1_run(tmp_path / "mixed", [episode(extraction_trace("100", GOLD_100, block("none"))), good_line()])
    with pytest.raises(ReportError) as err:
        load_run(run_dir)
    assert str(err.value) == (
        f"{run_dir / 'traces.jsonl'}: mixes 1 pair-mode rollouts (one task per chemical-gene pair) and 1 "
        "extraction-mode rollouts (one task per abstract); one run has one mode (--env.taskset.mode): report the two "
        "modes' runs separately"
    )


@PROPERTY
@given(st.data())
def test_random_corruption_of_extraction_lines_never_crashes_and_counts_add_up(data: st.DataObject) -> None:
    """Damaged extraction lines (a relation replaced by a list or an object, a gold record cut ...) are read as
    rollouts or skips, never a traceback; a damaged line that turned into a pair-mode rollout makes the run a
    mixed one, which is refused with its ``ReportError``."""
    good = episode(extraction_trace("100", GOLD_100, block("T1 | T2 | E", "T3 | T4 | K"))).encode()
    templates = [
        extraction_trace("100", GOLD_100, block("T1 | T2 | E", "T9 | T4 | K")),
        extraction_trace("200", GOLD_100, "no block"),
        extraction_trace("300", GOLD_100, block("none"), record=False),
    ]
    bad = [corrupt(data, json.loads(episode(data.draw(st.sampled_from(templates))))) for _ in range(3)]
    lines = data.draw(st.permutations([good, *bad]))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        try:
            run = load_run(path)
        except ReportError as exc:
            assert "mixes" in str(exc) and "pair-mode rollouts" in str(exc)
            return
        read = [line for line in lines if line.replace(b"\n", b" ").strip()]
        assert len(run.extraction) + len(run.corrupt) + len(run.unidentified) == sum(records_in(x, False) for x in read)
        got = summarize_extraction(run, resamples=20)
        assert json.loads(json.dumps(got, allow_nan=False)) == got
        format_extraction_report(got).encode("utf-8")  # printable: no lone surrogate reaches the text
        assert export_tsv(run, Path(tmp) / "pred.tsv") == len(read_relations_tsv(Path(tmp) / "pred.tsv"))


def test_a_utility_run_decodes_from_its_recorded_accuracy() -> None:
    """A run with the default reward (utility) still records the accuracy term, at weight 0: the record is trusted
    as in an accuracy run (not re-scored), and the rollout's reward is the weighted sum, utility + 0.1 x format."""
    reply = block("T1 | T2 | E", "T3 | T4 | E", "T9 | T4 | E")  # TP 1, FP 1 and an unknown id, FN 1
    score = score_extraction(reply, None, GOLD_100)
    trace = extraction_trace("100", GOLD_100, reply)
    reward = Reward()
    trace["rewards"] = {name: {"score": term, "weight": reward.weighting.of(name)}
                        for name, term in reward.terms(score).items()}  # fmt: skip
    assert trace["rewards"]["accuracy"] == {"score": 0.5, "weight": 0.0}
    (rollout,) = read_line(episode(trace).encode(), file="traces.jsonl", line=1, legacy=False)
    assert isinstance(rollout, ExtractionRollout) and rollout.rescored is False
    assert (rollout.answer.accuracy, rollout.answer.unknown_id, rollout.answer.format_reason) == (0.5, 1, "unknown_id")
    assert rollout.reward == pytest.approx(1 - 0.5 * 2 - 1)  # format 0 (the unknown id)
