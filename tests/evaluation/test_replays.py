"""A ``vf-replay`` output's setting is read from its rollouts (``drugprot.evaluation.replays``), best effort."""

from __future__ import annotations

import json
from pathlib import Path

from drugprot.evaluation.records import RunConfig
from drugprot.evaluation.replays import is_replay, replay_config

SETTING = {"split": "train", "negatives": "all", "mode": "pair", "data_path": "data/train.jsonl"}


def _replay(tmp_path: Path, *lines: str, eval_json: bool = False) -> Path:
    resolved = tmp_path / "configs" / "resolved"
    resolved.mkdir(parents=True)
    (resolved / "replay.json").write_text("{}", encoding="utf-8")
    if eval_json:
        (resolved / "eval.json").write_text("{}", encoding="utf-8")
    (tmp_path / "traces.jsonl").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return tmp_path


def _episode(model: object, setting: object) -> str:
    trace = {"agent": {"config": {"model": model}}, "info": {"drugprot": {"versions": {"setting": setting}}}}
    return json.dumps({"traces": [trace]})


def test_the_model_and_setting_come_from_the_first_trace_that_records_them(tmp_path: Path) -> None:
    run = _replay(tmp_path, "not json", json.dumps({"traces": "x"}), _episode("trinity-mini", SETTING))
    assert is_replay(run)
    assert replay_config(run) == RunConfig(model="trinity-mini", split="train", data_path="data/train.jsonl",
                                           negatives="all")  # fmt: skip


def test_an_older_or_odd_record_leaves_what_it_lacks_unknown(tmp_path: Path) -> None:
    older = _replay(tmp_path / "a", _episode("m", None))  # recorded before the setting was
    assert replay_config(older) == RunConfig(model="m")
    odd = _replay(tmp_path / "b", _episode(3, {"split": 5, "negatives": "many", "data_path": ""}))
    assert replay_config(odd) == RunConfig()
    assert replay_config(_replay(tmp_path / "c")) == RunConfig()  # no rollout at all


def test_an_eval_run_is_not_a_replay(tmp_path: Path) -> None:
    assert not is_replay(_replay(tmp_path, _episode("m", SETTING), eval_json=True))
