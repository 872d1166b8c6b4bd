"""``publish.staged_directory``: the target holds its old contents or the complete new ones, never a mix."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.tools.adapters.publish import staged_directory


def tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def test_a_new_target_appears_complete_with_its_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out"
    with staged_directory(target, replace=False) as stage:
        assert stage.parent == target.parent and stage.name.startswith(".out.partial-")
        (stage / "x.safetensors").write_bytes(b"new")
        assert not target.exists()  # nothing visible until the end
    assert tree(tmp_path) == {"a": None, "a/b": None, "a/b/out": None, "a/b/out/x.safetensors": b"new"}


def test_an_empty_target_directory_is_filled(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with staged_directory(tmp_path / "out", replace=False) as stage:
        (stage / "x").write_bytes(b"new")
    assert tree(tmp_path) == {"out": None, "out/x": b"new"}


def test_replace_swaps_the_whole_directory(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old-only").write_bytes(b"old")
    (tmp_path / "out" / "x").write_bytes(b"old")
    with staged_directory(tmp_path / "out", replace=True) as stage:
        (stage / "x").write_bytes(b"new")
    assert tree(tmp_path) == {"out": None, "out/x": b"new"}


@pytest.mark.parametrize("error", [ValueError("bad"), KeyboardInterrupt()])
def test_an_error_inside_leaves_the_target_as_it_was_and_no_staging_directory(
    tmp_path: Path, error: BaseException
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_bytes(b"old")
    with pytest.raises(type(error)), staged_directory(tmp_path / "out", replace=True) as stage:
        (stage / "x").write_bytes(b"half")
        raise error
    assert tree(tmp_path) == {"out": None, "out/x": b"old"}


def test_without_replace_a_non_empty_target_is_not_touched(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_bytes(b"old")
    with pytest.raises(OSError), staged_directory(tmp_path / "out", replace=False) as stage:
        (stage / "x").write_bytes(b"new")
    assert tree(tmp_path) == {"out": None, "out/x": b"old"}


def test_the_published_directory_is_as_readable_as_one_made_by_mkdir(tmp_path: Path) -> None:
    (tmp_path / "by_mkdir").mkdir()
    with staged_directory(tmp_path / "out", replace=False):
        pass
    assert (tmp_path / "out").stat().st_mode == (tmp_path / "by_mkdir").stat().st_mode
