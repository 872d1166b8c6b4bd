"""``scripts/hub_tables.py``: the package README's (the Environments Hub page's) options, arguments and metrics
tables are rendered from the code, and the metrics table names exactly the keys a scored rollout records."""

from __future__ import annotations

import asyncio
from pathlib import Path

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


# ------------------------------------------------------------------------------------- a README it cannot read


def _page(tmp_path: Path, text: str | bytes) -> Path:
    page = tmp_path / "README.md"
    (page.write_bytes if isinstance(text, bytes) else page.write_text)(text)
    return page


def _current() -> str:
    return tables.README.read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["--check", "--write"])
def test_a_missing_end_marker_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    text = _current().replace("<!-- knobs:end -->\n", "", 1)
    page = _page(tmp_path, text)
    line = text.split("\n").index("<!-- knobs:start -->") + 1
    assert tables.main([mode], readme=page) == 2
    assert capsys.readouterr().err == (
        f"hub_tables: {page}: '<!-- knobs:end -->' is missing after '<!-- knobs:start -->' (line {line}); restore it\n"
    )
    assert page.read_text(encoding="utf-8") == text  # --write left it as it was


def test_a_missing_start_marker_or_block_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _current().replace("<!-- options:start -->\n", "", 1)
    line = text.split("\n").index("<!-- options:end -->") + 1
    assert tables.main(["--check"], readme=_page(tmp_path, text)) == 2
    assert f"'<!-- options:start -->' is missing before '<!-- options:end -->' (line {line}); restore it\n" in (
        capsys.readouterr().err
    )
    bare = _current().replace("<!-- metrics:start -->\n", "").replace("<!-- metrics:end -->", "")
    assert tables.main(["--check"], readme=_page(tmp_path, bare)) == 2
    assert capsys.readouterr().err.endswith(
        ": no '<!-- metrics:start -->' ... '<!-- metrics:end -->' block; add the two markers\n"
    )


def test_a_non_utf8_byte_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _current().encode("utf-8")
    page = _page(tmp_path, data[:100] + b"\xff" + data[100:])
    assert tables.main(["--check"], readme=page) == 2
    assert capsys.readouterr().err == f"hub_tables: {page}: not UTF-8 (byte 0xff at offset 100); save it as UTF-8\n"
    assert tables.main(["--check"], readme=tmp_path / "absent.md") == 2
    assert (
        capsys.readouterr().err
        == f"hub_tables: {tmp_path / 'absent.md'}: no such file; run from a checkout of the repository\n"
    )  # noqa: E501


def test_a_second_tampered_copy_of_a_block_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first copy is current; a second, edited copy further down would never be checked, so it is refused."""
    text = _current()
    block = text[
        text.index("<!-- options:start -->") : text.index("<!-- options:end -->") + len("<!-- options:end -->")
    ]
    tampered = text + "\n" + block.replace("INHIBITOR", "ENHANCER") + "\n"
    lines = [n for n, line in enumerate(tampered.split("\n"), start=1) if line.startswith("<!-- options:")]
    assert tables.main(["--check"], readme=_page(tmp_path, tampered)) == 2
    assert capsys.readouterr().err.endswith(
        f": the options block is there more than once (markers on lines {', '.join(map(str, lines))}); keep one copy\n"
    )


def test_a_stale_table_is_exit_1_and_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = _page(tmp_path, _current().replace("| A | `INDIRECT-DOWNREGULATOR` |", "| A | `X` |"))
    assert tables.main(["--check"], readme=page) == 1
    assert capsys.readouterr().err.startswith(f"hub_tables: {page} is stale; regenerate with: ")
