"""``scripts/hub_tables.py``: the package README's (the Environments Hub page's) options, arguments and metrics
tables are rendered from the code, and the metrics table names exactly the keys a scored rollout records."""

from __future__ import annotations

import asyncio

import pytest

from drugprot.core.options import KNOBS
from drugprot.core.rewards import METRIC_NAMES, REWARD_NAMES
from tests.conftest import FIXTURE_JSONL
from tests.scripts import load_script

tables = load_script("hub_tables")


def test_the_readme_tables_are_the_rendered_ones() -> None:
    """A knob, label or metric meaning changed without ``scripts/hub_tables.py --write`` fails here."""
    text = tables.README.read_text(encoding="utf-8")
    assert tables.render_readme(text) == text
    assert tables.main(["--check"]) == 0


def test_the_arguments_table_has_one_row_per_knob_in_order() -> None:
    rows = tables.render_knobs().splitlines()
    assert rows[:2] == ["| Arg | Type | Default | Stacks | Description |", "|---|---|---|---|---|"]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows[2:]] == [f"`{knob.name}`" for knob in KNOBS]
    assert rows[2] == (
        "| `split` | str | `validation` | v1, v0 | "
        "the split to evaluate: `train` (3,500 abstracts) or `validation` (750) |"
    )
    assert rows[-1] == "| `train_split` | str | `train` | v0 | legacy only: the split of the env's training dataset |"
    assert '| `negatives` | int or "all" | `0` | v1, v0 |' in tables.render_knobs()
    assert "| `fp_cost` | float or None | `None` | v1, v0 |" in tables.render_knobs()
    # a tag in a help text is shown as code, not swallowed as HTML
    assert "| mark the pair's two mentions with `<chemical>/<gene>` tags |" in tables.render_knobs()


def test_the_metrics_table_lists_the_rewards_then_the_metrics() -> None:
    header, rule, *rows = tables.render_metrics().splitlines()
    assert (header, rule) == ("| Metric | Kind | Default weight | Meaning |", "|---|---|---|---|")
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == [f"`{k}`" for k in tables.RECORDED_KEYS]
    assert rows[0].startswith("| `accuracy` | reward | 0 (`accuracy_weight`) | ")
    assert rows[1].startswith("| `utility` | reward | 1 (`utility_weight`) | ")
    assert rows[2].startswith("| `format` | reward | 0.125 (`format_weight`) | ")
    assert all(" | metric | 0 (never rewarded) | " in row for row in rows[3:])


def test_a_meaning_missing_or_left_over_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "MEANINGS", {**tables.MEANINGS, "stale_metric": "x"})
    with pytest.raises(ValueError, match=r"MEANINGS and the recorded keys differ: \['stale_metric'\]"):
        tables.render_metrics()


def test_the_recorded_keys_are_what_a_scored_v1_rollout_records() -> None:
    """Score one fixture task through verifiers' own ``task.score``: its rewards and metrics are the table's keys."""
    from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset
    from tests.envs.traces import make_trace

    config = DrugprotConfig(id="drugprot", split="train", data_path=str(FIXTURE_JSONL))
    task = DrugprotTaskset(config).load()[0]
    trace = make_trace(task, "\\boxed{E}", "the abstract says it inhibits")
    asyncio.run(task.score(trace))
    assert sorted(trace.rewards) == sorted(REWARD_NAMES)
    assert sorted(trace.metrics) == sorted(["answered", *METRIC_NAMES])
    assert (*REWARD_NAMES, "answered", *METRIC_NAMES) == tables.RECORDED_KEYS
