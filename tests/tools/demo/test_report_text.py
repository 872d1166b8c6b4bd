"""What a first reader of ``drugprot demo``'s report meets: the lines that plan RL training (calibration, step-0
forecast, power) are one line naming ``--full``, which shows them as ``drugprot report`` does."""

from __future__ import annotations

import pytest

from drugprot.core.options import TaskOptions
from drugprot.evaluation.baselines import baseline_run
from drugprot.modes.pair.render import format_report
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import build_parser
from drugprot.tools.demo.command import TRAINING_LINES_NOTE
from drugprot.tools.demo.sample_run import sample_path


@pytest.fixture(scope="module")
def report() -> dict:
    with sample_path() as path:
        run = baseline_run("lexical", TaskOptions(data_path=str(path), negatives="all", num_tasks=22))
    return summarize(run, resamples=200, seed=0)


def test_the_demo_shows_one_line_in_place_of_the_training_lines(report: dict) -> None:
    full = format_report(report).splitlines()
    short = format_report(report, instead_of_training_lines=TRAINING_LINES_NOTE).splitlines()
    at = full.index(next(line for line in full if line.startswith("  calibration:")))
    training = full[at : full.index("", at)]
    assert [line.split(":")[0].strip() for line in training if not line.startswith("      ")] == [
        "calibration",
        "the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at the run F",
        "at stake between calibrations (F*, F or the default cost)",
        "step-0 forecast",
        "power, two independent evals (different tasks)",
    ]
    assert short == [*full[:at], TRAINING_LINES_NOTE, *full[at + len(training) :]]
    assert TRAINING_LINES_NOTE == (
        "  (--full adds the lines that plan RL training on a real model's run: the calibration, the step-0 forecast "
        "and the eval size's power)"
    )


def test_the_ceiling_names_the_run_s_abstracts_not_the_sample_s(report: dict) -> None:
    """The sample has 10 abstracts (the data line); the demo's 22 tasks come from 5 of them (the ceiling line)."""
    (ceiling,) = [line for line in format_report(report).splitlines() if line.startswith("  ceiling")]
    assert ": 16 gold relations in this run's 5 abstracts, 16 on candidates, " in ceiling


def test_full_is_off_by_default() -> None:
    parser = build_parser(["demo"])
    assert parser.parse_args(["demo"]).full is False
    assert parser.parse_args(["demo", "--full"]).full is True
