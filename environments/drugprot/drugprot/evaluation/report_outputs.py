"""The files ``drugprot report`` and ``drugprot baseline`` write, checked by the output policy before any work.

``--plot``, ``--plot-classes`` and ``--export-tsv`` name one file each; ``--export-gold DIR`` names three in
``DIR`` (``gold_relations.tsv``, ``pmids.txt``, ``entities.tsv``), and ``DIR`` is created when missing. Every one is
checked with ``drugprot.core.outputs.check_outputs`` against the command's inputs and ``--overwrite``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from pathlib import Path

from drugprot.core.outputs import CheckedOutput, OutputSpec, check_folder_output, check_outputs, wrote_line
from drugprot.evaluation.plots import check_plot_paths

GOLD_FILES = ("gold_relations.tsv", "pmids.txt", "entities.tsv")
"""What ``--export-gold DIR`` writes in ``DIR`` (``entities.tsv`` only when the abstracts are known)."""
_FILE_FLAGS = (("plot", "--plot"), ("plot_classes", "--plot-classes"), ("export_tsv", "--export-tsv"))


def add_overwrite_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace files that --plot/--plot-classes/--export-tsv/--export-gold name and that already exist "
        "(default: refuse them before any work; an input of the command is never replaced)",
    )


def output_specs(args: argparse.Namespace) -> list[OutputSpec]:
    """Every file the options name, flag by flag (``--export-gold``'s three files when its folder exists)."""
    specs = [OutputSpec.of(flag, value) for name, flag in _FILE_FLAGS if (value := getattr(args, name, None))]
    gold = getattr(args, "export_gold", None)
    if gold and Path(gold).is_dir():
        specs += [OutputSpec.of("--export-gold", Path(gold) / name) for name in GOLD_FILES]
    return specs


def prepare_outputs(args: argparse.Namespace, inputs: Iterable[Path]) -> dict[Path, CheckedOutput]:
    """Check the outputs ``args`` name against ``inputs`` (``drugprot.core.outputs``); nothing is written.

    Returns:
        The checked outputs by path, for ``written_line``.

    Raises:
        OutputError: an output is an input, exists without ``--overwrite``, or its folder is missing or read-only.
        DrugprotError: a ``--plot``/``--plot-classes`` extension that names no picture format we write.
    """
    sources = list(inputs)
    gold = getattr(args, "export_gold", None)
    if gold:
        check_folder_output("--export-gold", gold, sources)
    checked = check_outputs(output_specs(args), sources, overwrite=getattr(args, "overwrite", False))
    check_plot_paths(getattr(args, "plot", None), getattr(args, "plot_classes", None))  # a picture format we write
    return {c.path: c for c in checked}


def written_line(what: str, path: str | Path, outputs: Mapping[Path, CheckedOutput]) -> str:
    """``wrote <what> to <path>``, with the note that it replaced a file when it did."""
    checked = outputs.get(Path(path))
    return wrote_line(what, path, checked is not None and checked.replaces)


__all__ = ["GOLD_FILES", "add_overwrite_argument", "output_specs", "prepare_outputs", "written_line"]
