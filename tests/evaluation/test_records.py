"""``drugprot.evaluation.records``: a rollout built from its pair and scored answer, a skipped record, the error."""

from __future__ import annotations

import pytest

from drugprot.core.errors import DrugprotError
from drugprot.core.scoring import score_reply
from drugprot.evaluation.records import GoldPair, ReportError, Rollout, ScoredAnswer, Skip

PAIR = GoldPair("12345", "T1", "T2", ("INHIBITOR", "SUBSTRATE"), False)


def test_a_rollout_takes_every_field_of_its_pair_and_answer() -> None:
    answer = ScoredAnswer("SUBSTRATE", None, "several_boxed_answers", rescored=True)
    rollout = Rollout.of(
        PAIR,
        answer,
        reward=1.0,
        input_tokens=120,
        output_tokens=7,
        truncated=True,
        error="TaskError",
        error_message="boom",
        versions=("0.1.0", "1", "2", "file"),
    )
    assert rollout == Rollout(
        "12345",
        "T1",
        "T2",
        ("INHIBITOR", "SUBSTRATE"),
        False,
        "SUBSTRATE",
        None,
        "several_boxed_answers",
        reward=1.0,
        input_tokens=120,
        output_tokens=7,
        truncated=True,
        rescored=True,
        error="TaskError",
        error_message="boom",
        versions=("0.1.0", "1", "2", "file"),
    )
    assert (rollout.key, rollout.correct, rollout.errored) == (("12345", "T1", "T2"), True, False)


def test_a_scored_answer_is_what_the_scorer_says() -> None:
    score = score_reply("<think>x</think>\\boxed{K}", None, ["SUBSTRATE"])
    assert ScoredAnswer.of(score, rescored=True) == ScoredAnswer("SUBSTRATE", None, None, True)
    invalid = score_reply("<think>x</think> no box", None, ["SUBSTRATE"])
    assert ScoredAnswer.of(invalid, rescored=False) == ScoredAnswer(None, "no_boxed_answer", "no_boxed_answer", False)


@pytest.mark.parametrize(
    ("label", "error", "correct", "errored"),
    [
        ("INHIBITOR", None, True, False),
        ("AGONIST", None, False, False),
        (None, None, False, False),  # an invalid reply is the model's failure, not the run's
        ("INHIBITOR", "TaskError", True, False),  # an answer despite an error is still an answer
        (None, "ProviderError", False, True),
    ],
)
def test_correct_and_errored(label: str | None, error: str | None, correct: bool, errored: bool) -> None:
    rollout = Rollout.of(PAIR, ScoredAnswer(label), error=error)
    assert (rollout.correct, rollout.errored) == (correct, errored)


def test_a_skip_names_its_file_line_and_trace() -> None:
    assert str(Skip("traces.jsonl", 4, None, "not an episode (no traces list)")) == (
        "traces.jsonl:4: not an episode (no traces list)"
    )
    assert (
        str(Skip("traces.jsonl", 1, 2, "trace is null", unidentified=True)) == "traces.jsonl:1 trace 2: trace is null"
    )


def test_a_report_error_is_a_drugprot_error() -> None:
    assert issubclass(ReportError, DrugprotError) and issubclass(ReportError, ValueError)
