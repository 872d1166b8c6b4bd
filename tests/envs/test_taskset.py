"""The v1 taskset scores replies exactly as the core does: the parser table through ``await task.score``."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.envs.taskset import INFO_KEY, DrugprotConfig, DrugprotTask
from tests.core.test_parsing import CASES, GOLD, NR_CASES, T
from tests.envs.traces import make_task, make_trace


@pytest.mark.parametrize(("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES)
async def test_reply_through_verifiers(content, reasoning, letter, accuracy, fmt, invalid, fmt_reason) -> None:
    task = make_task(GOLD)
    trace = make_trace(task, content, reasoning)
    await task.score(trace)
    assert trace.errors == []
    assert trace.rewards["accuracy"].score == accuracy
    assert trace.rewards["format"].score == fmt
    assert trace.rewards["accuracy"].weight == 1.0
    assert trace.rewards["format"].weight == 0.1
    assert trace.reward == pytest.approx(accuracy * 1.0 + fmt * 0.1)
    assert trace.metrics["answered"] == float(letter is not None)
    assert trace.info[INFO_KEY] == {
        "letter": letter,
        "label": {
            "E": "INHIBITOR",
            "K": "SUBSTRATE",
            "A": "INDIRECT-DOWNREGULATOR",
            "L": "SUBSTRATE_PRODUCT-OF",
            "B": "INDIRECT-UPREGULATOR",
            "M": "PART-OF",
            None: None,
        }[letter],
        "invalid_reason": invalid,
        "format_reason": fmt_reason,
        "versions": None,  # what the task data carries (a task built by hand: nothing)
    }


@pytest.mark.parametrize(("content", "letter", "accuracy", "fmt"), NR_CASES)
async def test_no_relation_option(content, letter, accuracy, fmt) -> None:
    task = make_task(["NO-RELATION"], with_no_relation=True)
    trace = make_trace(task, content, None)
    await task.score(trace)
    assert (
        trace.info[INFO_KEY]["letter"],
        trace.rewards["accuracy"].score,
        trace.rewards["format"].score,
    ) == (letter, accuracy, fmt)


async def test_weights_come_from_config() -> None:
    config = DrugprotConfig(id="drugprot", accuracy_weight=0.7, format_weight=0.3).task
    task = DrugprotTask(make_task(GOLD).data, config)
    trace = make_trace(task, T + "\\boxed{E} \\boxed{E}", None)  # accurate, bad format
    await task.score(trace)
    assert trace.rewards["accuracy"].weight == 0.7
    assert trace.rewards["format"].weight == 0.3
    assert trace.reward == pytest.approx(0.7)


def test_v1_config_validates_knobs_and_data(fixture_jsonl: Path, tmp_path: Path) -> None:
    from pydantic import ValidationError

    missing = tmp_path / "missing.jsonl"
    with pytest.raises(ValidationError) as err:
        DrugprotConfig(id="drugprot", data_path=str(missing))
    assert err.value.errors()[0]["msg"] == (
        f"Value error, no such file or directory: {missing}; pass a .parquet, .jsonl or .json file or a directory "
        f"of the official BioCreative VII TSV files (source {missing}, field data_path)"
    )
    with pytest.raises(ValidationError, match="num_tasks must be a positive integer"):
        DrugprotConfig(id="drugprot", data_path=str(fixture_jsonl), num_tasks=0)
    with pytest.raises(ValidationError, match="negatives must be a non-negative integer or 'all', got -2"):
        DrugprotConfig(id="drugprot", data_path=str(fixture_jsonl), negatives=-2)
    with pytest.raises(ValidationError, match="revision 'abc123' selects a version of the hub dataset, but data_path"):
        DrugprotConfig(id="drugprot", data_path=str(fixture_jsonl), revision="abc123")
    assert DrugprotConfig(id="drugprot", split="train", data_path=str(fixture_jsonl)).negatives == 0
    assert DrugprotConfig(id="drugprot", revision="abc123").options().revision == "abc123"  # hub checks: at load


def test_the_default_config_validates_offline_without_a_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """vf-eval validates a default config (no data_path) before it applies the user's flags: offline and with
    nothing cached that must pass (the hub is checked when the tasks are loaded)."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert DrugprotConfig(id="drugprot").data_path is None
