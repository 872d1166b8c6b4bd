"""A ``vf-replay`` output's setting is read from its rollouts (``drugprot.evaluation.replays``), best effort."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotConfigError
from drugprot.core.options import parse_negatives
from drugprot.evaluation.records import RunConfig
from drugprot.evaluation.replays import is_replay, replay_config
from drugprot.tools.cli import main as cli_main
from tests.evaluation import traces

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


def test_a_first_line_that_is_no_episode_is_skipped_as_the_report_skips_it(tmp_path: Path) -> None:
    """``"traces": 5`` / ``true``: not an episode by ``decode.episode_traces`` (``read_line``'s rule), so the setting
    comes from the next line, never a TypeError."""
    for bad in (5, True, {"a": 1}):
        run = _replay(tmp_path / str(bad), json.dumps({"traces": bad}), _episode("trinity-mini", SETTING))
        assert replay_config(run) == RunConfig(model="trinity-mini", split="train", data_path="data/train.jsonl",
                                               negatives="all")  # fmt: skip


@pytest.mark.parametrize("negatives", [[1, 2], ["all"], {"k": 1}, -1, 1.5, True])
def test_negatives_the_knob_refuses_are_unknown(tmp_path: Path, negatives: object) -> None:
    with pytest.raises(DrugprotConfigError):
        parse_negatives(negatives)  # the knob's own rule, the one the reader applies
    run = _replay(tmp_path, _episode("m", SETTING | {"negatives": negatives}))
    assert replay_config(run) == RunConfig(model="m", split="train", data_path="data/train.jsonl", negatives=None)


def test_the_report_of_a_replay_whose_first_line_is_no_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setting = {"split": "validation", "negatives": 0, "mode": "pair", "data_path": None}
    good = json.loads(traces.good_line())
    good["traces"][0]["agent"] = {"config": {"model": "trinity-mini"}}
    good["traces"][0]["info"]["drugprot"]["versions"] = {"setting": setting}
    run = _replay(tmp_path / "replay", json.dumps({"traces": 5}), json.dumps(good))
    assert cli_main(["report", str(run), "--json", "--bootstrap", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["run"]["model"], report["setting"]["negatives"]) == ("trinity-mini", "0")
    assert report["lines"]["corrupt_lines"] == ["traces.jsonl:1: not an episode (no traces list)"]
