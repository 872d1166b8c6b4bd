"""The output policy (``drugprot.core.outputs``): what a command may write, checked before any work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import (
    OutputError,
    OutputSpec,
    atomic_path,
    check_folder_output,
    check_outputs,
    error_line,
    expand_inputs,
    write_text_atomic,
    wrote_line,
)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "run").mkdir()
    path = tmp_path / "run" / "traces.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    return path


def refused(path: Path, inputs: list[Path], *, overwrite: bool = False) -> str:
    with pytest.raises(OutputError) as info:
        check_outputs([OutputSpec.of("--export-tsv", path)], inputs, overwrite=overwrite)
    return str(info.value)


def test_the_input_itself_is_refused_even_with_overwrite(data: Path) -> None:
    message = refused(data, [data], overwrite=True)
    assert message == (
        f"--export-tsv {data}: this is an input of the command ({data}); writing it would destroy it. "
        "Choose another path"
    )


def test_a_path_resolving_to_an_input_is_refused(data: Path, tmp_path: Path) -> None:
    (tmp_path / "link.jsonl").symlink_to(data)
    os.link(data, tmp_path / "hard.jsonl")
    dotted = tmp_path / "run" / ".." / "run" / "traces.jsonl"
    for path in (tmp_path / "link.jsonl", tmp_path / "hard.jsonl", dotted):
        assert "this is an input of the command" in refused(path, [data], overwrite=True)
    # and the other way round: the input named through a symlink
    assert "this is an input of the command" in refused(data, [tmp_path / "link.jsonl"], overwrite=True)


def test_an_existing_file_needs_overwrite_and_is_reported_as_replaced(data: Path, tmp_path: Path) -> None:
    other = tmp_path / "old.tsv"
    other.write_text("keep me", encoding="utf-8")
    assert refused(other, [data]) == (
        f"--export-tsv {other}: exists; pass --overwrite to replace it, or choose another path"
    )
    (checked,) = check_outputs([OutputSpec.of("--export-tsv", other)], [data], overwrite=True)
    assert checked.replaces
    assert wrote_line("3 predictions", other, checked.replaces) == (
        f"wrote 3 predictions to {other} (replaced the existing file: --overwrite)"
    )
    (new,) = check_outputs([OutputSpec.of("--plot", tmp_path / "new.png")], [data], overwrite=False)
    assert not new.replaces
    assert wrote_line("the curves", new.path, new.replaces) == f"wrote the curves to {tmp_path / 'new.png'}"


def test_a_missing_folder_or_a_file_as_folder_is_refused_before_any_work(data: Path, tmp_path: Path) -> None:
    assert refused(tmp_path / "nowhere" / "x.tsv", [data]) == (
        f"--export-tsv {tmp_path / 'nowhere' / 'x.tsv'}: its folder {tmp_path / 'nowhere'} does not exist; "
        "create it first"
    )
    assert refused(data / "x.tsv", []) == f"--export-tsv {data / 'x.tsv'}: {data} is not a folder"
    assert refused(tmp_path / "run", []) == f"--export-tsv {tmp_path / 'run'}: is a folder; name a file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert refused(folder / "x.tsv", []) == f"--export-tsv {folder / 'x.tsv'}: its folder {folder} is not writable"
    finally:
        folder.chmod(0o755)


def test_two_outputs_on_one_file_are_refused(tmp_path: Path) -> None:
    specs = [OutputSpec.of("--plot", tmp_path / "a.png"), OutputSpec.of("--plot-classes", tmp_path / "a.png")]
    with pytest.raises(OutputError, match=r"--plot .*a\.png: is also the path of --plot-classes"):
        check_outputs(specs, [], overwrite=True)


def test_a_folder_output_may_be_created_but_never_be_an_input(data: Path, tmp_path: Path) -> None:
    assert check_folder_output("--export-gold", tmp_path / "new" / "deeper", [data]) == tmp_path / "new" / "deeper"
    with pytest.raises(OutputError, match="this is an input of the command"):
        check_folder_output("--export-gold", data, [data])
    with pytest.raises(OutputError, match="exists and is not a folder"):
        check_folder_output("--output-dir", data, [])


def test_expand_inputs_lists_the_files_of_a_folder_and_skips_what_is_missing(data: Path, tmp_path: Path) -> None:
    assert expand_inputs([None, tmp_path / "missing", data, tmp_path / "run"]) == [data, data]


def test_an_atomic_write_leaves_the_old_file_on_failure_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.tsv"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("interrupted")
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]
    write_text_atomic(target, "new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]


def test_an_atomic_write_replaces_a_hard_link_without_writing_through_it(data: Path, tmp_path: Path) -> None:
    link = tmp_path / "hard.jsonl"
    os.link(data, link)
    write_text_atomic(link, "new")
    assert (data.read_bytes(), link.read_text(encoding="utf-8")) == (b'{"a": 1}\n', "new")


def test_the_error_is_a_drugprot_error_and_the_line_names_the_command(tmp_path: Path) -> None:
    error = OutputError("exists", flag="--plot", path=tmp_path / "x.png")
    assert isinstance(error, DrugprotError) and isinstance(error, ValueError)
    assert (error.flag, error.path) == ("--plot", str(tmp_path / "x.png"))
    assert error_line("curves", error) == f"drugprot curves: error: --plot {tmp_path / 'x.png'}: exists"


@pytest.mark.parametrize("name", ["traces.jsonl", "results.jsonl", "metadata.json", "metrics.jsonl"])
def test_a_run_file_name_in_a_run_folder_is_refused_even_with_overwrite(data: Path, name: str) -> None:
    """A file named like a run's record inside a run folder would replace it, or shadow it (a ``traces.jsonl``
    beside a legacy ``results.jsonl`` is read first afterwards), so it is refused whatever ``--overwrite`` says."""
    before = data.read_bytes()
    target = data.parent / name
    message = refused(target, [], overwrite=True)
    assert message == (
        f"--export-tsv {target}: {name} is a file that defines a run, and {data.parent} is a run folder (it holds "
        "traces.jsonl): writing it would replace the run's record or change how the run is read, even with "
        "--overwrite. Choose another name or folder"
    )
    assert data.read_bytes() == before and sorted(p.name for p in data.parent.iterdir()) == ["traces.jsonl"]


def test_a_resolved_eval_config_in_a_run_folder_is_refused_and_run_names_elsewhere_are_not(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "configs" / "resolved").mkdir(parents=True)
    (run / "configs" / "resolved" / "eval.json").write_text("{}")
    assert "is a run folder (it holds configs/resolved/eval.json)" in refused(run / "traces.jsonl", [])
    assert "eval.json is a file that defines a run" in refused(run / "configs" / "resolved" / "eval.json", [])
    fresh = tmp_path / "fresh"
    fresh.mkdir()  # a folder that is no run: a writer may start one there
    (checked,) = check_outputs([OutputSpec.of("--out", fresh / "metrics.jsonl")], [], overwrite=False)
    assert checked.replaces is False


def test_an_output_that_is_a_symlink_loop_is_one_refusal_line(tmp_path: Path) -> None:
    loop = tmp_path / "loop.tsv"
    loop.symlink_to(loop)
    message = refused(loop, [], overwrite=True)
    # RuntimeError on Python 3.11 and 3.12, OSError (ELOOP) on later versions
    assert message.startswith(f"--export-tsv {loop}: cannot be resolved (")
    assert message.endswith(": a symlink loop?); remove the link or choose another path")
    with pytest.raises(OutputError, match="cannot be resolved"):
        check_folder_output("--export-gold", loop, [])
