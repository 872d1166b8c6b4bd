"""Finding and loading a run: its ``traces.jsonl``/``results.jsonl``, its saved setting and its abstracts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from drugprot.core.options import parse_negatives
from drugprot.core.outputs import expand_inputs
from drugprot.core.schema import Document
from drugprot.core.sources import load_documents
from drugprot.evaluation.decode import read_line
from drugprot.evaluation.records import LEGACY_FILE, V1_FILE, ReportError, Run, RunConfig, Skip
from drugprot.evaluation.replays import is_replay, replay_config
from drugprot.evaluation.typed_json import BadRecord, decode_json, shorten
from drugprot.modes.base import get_mode, mode_of_rollout, registered_modes


def not_an_eval_run(run_dir: Path) -> str | None:
    """Why ``run_dir`` is an output folder of verifiers' CLIs but not an eval run the report can read; None if it
    is not such a folder (it may still be a run)."""
    resolved = run_dir / "configs" / "resolved"
    if (resolved / "validate.json").is_file():
        return "vf-validate output: task checks, no model replies"
    has_run_file = (run_dir / V1_FILE).is_file() or (run_dir / LEGACY_FILE).is_file()
    if (resolved / "eval.json").is_file() and not has_run_file:
        return f"no {V1_FILE}: a --dry-run, or an eval that wrote no rollout"
    return None


def skipped_folders(path: str | os.PathLike[str]) -> list[tuple[Path, str]]:
    """The output folders under the directory ``path`` that are not eval runs, with why (``not_an_eval_run``)."""
    root = Path(path)
    if not root.is_dir():
        return []
    folders = {p.parents[2] for name in ("validate.json", "eval.json") for p in root.rglob(f"configs/resolved/{name}")}
    return [(folder, why) for folder in sorted(folders) if (why := not_an_eval_run(folder))]


def find_run_file(path: str | os.PathLike[str]) -> Path:
    """The ``traces.jsonl`` or ``results.jsonl`` of a run dir (or the file itself).

    A directory holding neither is searched below; exactly one run must be found there. Folders that are not eval
    runs (``not_an_eval_run``: ``vf-validate`` output, a ``--dry-run``) are skipped (``skipped_folders`` lists them).

    Raises:
        ReportError: the path does not exist, is not an eval run, or holds no run or several runs (the message lists
            them and the folders skipped).
    """
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise ReportError(f"{path}: no such run directory or file")
    why = not_an_eval_run(path)
    if why is not None:
        raise ReportError(f"{path}: not an eval run ({why}); drugprot report reads the run directories of vf-eval")
    for name in (V1_FILE, LEGACY_FILE):
        if (path / name).is_file():
            return path / name
    skipped = skipped_folders(path)
    not_runs = {folder for folder, _ in skipped}
    found = sorted(p for name in (V1_FILE, LEGACY_FILE) for p in path.rglob(name) if p.parent not in not_runs)
    if len(found) == 1:
        return found[0]
    listed = "".join(f"\n  skipped {folder}: {reason}" for folder, reason in skipped)
    if not found:
        raise ReportError(
            f"{path}: no {V1_FILE} (verifiers v1) or {LEGACY_FILE} (legacy vf-eval) in this directory{listed}"
        )
    listing = "\n  ".join(str(p.parent) for p in found)
    raise ReportError(f"{path} holds {len(found)} runs; pass one (or several) of:\n  {listing}{listed}")


def run_inputs(path: str | os.PathLike[str]) -> list[Path]:
    """The files reading the run at ``path`` opens: its run file, saved setting (``metadata.json``,
    ``configs/resolved/eval.json``) and the local data file or TSV directory that setting names (for the
    abstracts of ``--export-gold``). What no command may write over (``drugprot.core.outputs``).

    Raises:
        ReportError: as ``find_run_file``.
    """
    file = find_run_file(path)
    config = _legacy_config(file.parent) if _looks_legacy(file) else _v1_config(file.parent)
    saved = [file, file.parent / "metadata.json", file.parent / "configs" / "resolved" / "eval.json"]
    return expand_inputs([*saved, config.data_path])


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read one run (a run dir, or its ``traces.jsonl``/``results.jsonl``).

    A bad line never stops the reading: it becomes a ``Skip`` with its line number and reason.

    Raises:
        ReportError: no run file, no DrugProt rollout in it (the message gives the first skipped records), or
            rollouts of both modes (pair and extraction) in it.
        OSError: the file cannot be read.
    """
    file = find_run_file(path)
    legacy = file.name == LEGACY_FILE or _looks_legacy(file)
    v1_source = "vf-replay traces.jsonl (re-scored)" if is_replay(file.parent) else "verifiers v1 traces.jsonl"
    run = Run(
        name=file.parent.name,
        path=str(file.parent),
        source="legacy vf-eval results.jsonl" if legacy else v1_source,
        rollouts=[],
        config=_legacy_config(file.parent) if legacy else _v1_config(file.parent),
    )
    seen: set[str] = set()
    with file.open("rb") as fh:
        for line_no, raw in enumerate(fh, 1):
            run.cut_off = False
            if not raw.strip():
                run.blank += 1
                continue
            run.lines += 1
            corrupt_before = len(run.corrupt)
            for item in read_line(raw, file=file.name, line=line_no, legacy=legacy):
                if isinstance(item, Skip):
                    (run.unidentified if item.unidentified else run.corrupt).append(item)
                else:
                    mode = mode_of_rollout(item)
                    seen.add(mode.name)
                    mode.records(run).append(item)
            # A last line without its line end is cut off only when it does not read as a whole record: a complete
            # record that lacks just the final newline (an editor, a tool that strips it) is a complete run.
            run.cut_off = not raw.endswith(b"\n") and len(run.corrupt) > corrupt_before
    held = [mode for mode in registered_modes() if mode.name in seen]
    if len(held) > 1:
        mixed = " and ".join(f"{len(mode.records(run))} {mode.name}-mode rollouts ({mode.task_unit})" for mode in held)
        raise ReportError(
            f"{file}: mixes {mixed}; one run has one mode (--env.taskset.mode): report the two modes' runs separately"
        )
    if not held:
        skipped = [*run.corrupt, *run.unidentified]
        detail = "; ".join(str(s) for s in skipped[:3]) or "the file is empty"
        raise ReportError(f"{file}: no DrugProt rollouts ({run.lines} lines; {detail})")
    run.mode = held[0].name
    run.warnings = run_warnings(run)
    return run


# --- what makes a readable run doubtful: a warning at the top of its report, never an error


def missing_rollouts(run: Run) -> str | None:
    """The warning of a run that wrote fewer rollouts than it asked for, or whose last line is cut off; else None.

    The count is every record read (rollouts and skipped ones) against tasks x rollouts per task of the run's
    config. Fewer means the eval stopped early (killed, out of time, still running) or its data holds fewer tasks
    than ``-n``; the report cannot tell which, so it names both.
    """
    records = len(run.rollouts) + len(run.extraction) + len(run.corrupt) + len(run.unidentified)
    cut = " and its last line is cut off mid-record (a half-written file)" if run.cut_off else ""
    if run.config.requested is None:
        return f"INCOMPLETE RUN: {records} records read{cut}; the run may have stopped early" if cut else None
    tasks, per_task = run.config.requested
    asked = tasks * per_task
    if records >= asked and not cut:
        return None
    missing = max(asked - records, 0)
    return (
        f"INCOMPLETE RUN: {missing} of the {asked} rollouts the run asked for are missing ({tasks} tasks x {per_task} "
        f"rollouts per task; {records} records read){cut}. Either the eval stopped early (interrupted, killed, "
        "out of time, still running: re-run it, or resume it with vf-eval's --resume) or its data holds fewer than "
        f"{tasks} tasks; the figures cover only the rollouts read"
    )


def gold_conflicts(run: Run) -> str | None:
    """The warning of a run in which rollouts of one task (one task key) disagree on its gold; else None.

    That happens when the runs of different data (another split, revision or data file) are concatenated into one
    file: each rollout is still scored against its own gold, but the task's majority vote reads the first.
    """
    golds: dict[str, set[tuple[str, ...]]] = {}
    mode = get_mode(run.mode)
    for rollout in mode.records(run):
        key, gold = mode.task_gold(rollout)
        golds.setdefault(key, set()).add(gold)
    conflicts = {key: sorted(found) for key, found in golds.items() if len(found) > 1}
    if not conflicts:
        return None
    key, found = next(iter(conflicts.items()))
    shown = " vs ".join("{" + ", ".join(gold) + "}" for gold in found[:3])
    return (
        f"GOLD CONFLICT: {len(conflicts)} tasks have rollouts that disagree on their gold, first {key}: {shown}. "
        "The file mixes runs of different data (split, revision or data file); report each run on its own"
    )


def run_warnings(run: Run) -> list[str]:
    """The run's warnings (``Run.warnings``): rollouts missing, gold conflicts."""
    return [w for w in (missing_rollouts(run), gold_conflicts(run)) if w]


def _looks_legacy(file: Path) -> bool:
    return (file.parent / "metadata.json").is_file() and file.name != V1_FILE


# --- the run's saved setting (best effort: a field of an unexpected type is unknown, never an error)


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = decode_json(path.read_bytes())
    except (OSError, BadRecord):
        return {}
    return data if isinstance(data, dict) else {}


def _config_text(value: Any) -> str | None:
    """A config string (model, split, data path), or None when missing or not a string."""
    return shorten(value, 400) if isinstance(value, str) and value else None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _negatives(value: Any) -> str | None:
    try:
        return None if value is None else str(parse_negatives(value))
    except ValueError:
        return shorten(str(value)) if isinstance(value, str | int | float) else None


def _v1_config(run_dir: Path) -> RunConfig:
    """The setting from ``configs/resolved/eval.json`` (verifiers 0.4 and 0.3.1 layouts)."""
    config = _json_file(run_dir / "configs" / "resolved" / "eval.json")
    if not config:
        return replay_config(run_dir) if is_replay(run_dir) else RunConfig()  # a vf-replay: from its rollouts
    taskset = _mapping(_mapping(config.get("env")).get("taskset"))
    select = _mapping(config.get("select"))

    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    limits, counts = [], []
    if whole(select.get("limit")):
        counts.append(select["limit"])
        limits.append(f"-n {select['limit']}")
    if whole(config.get("num_tasks")) and config["num_tasks"] >= 0:  # 0.3.1's -n
        limits.append(f"-n {config['num_tasks']}")
        counts.append(config["num_tasks"])
    if whole(taskset.get("num_tasks")):
        limits.append(f"num_tasks={taskset['num_tasks']}")
        counts.append(taskset["num_tasks"])
    if select.get("skip"):
        limits.append(f"skip={shorten(str(select['skip']), 20)}")
    for kind in ("include", "exclude"):
        if any(_mapping(select.get(kind)).values()):
            limits.append(f"select.{kind}")
    return RunConfig(
        model=_config_text(config.get("model")),
        split=_config_text(taskset.get("split")),
        data_path=_config_text(taskset.get("data_path")),
        data_label=_config_text(taskset.get("data_label")),
        negatives=_negatives(taskset.get("negatives", 0)),
        limit=", ".join(limits),
        requested=_requested(min(counts, default=None), config.get("num_rollouts")),
    )


def _requested(tasks: Any, per_task: Any) -> tuple[int, int] | None:
    """``RunConfig.requested`` from the config's task count and rollouts per task (None unless both are whole > 0)."""
    numbers = (tasks, per_task)
    if all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in numbers):
        return (tasks, per_task)
    return None


def _legacy_config(run_dir: Path) -> RunConfig:
    """The setting from a legacy run's ``metadata.json`` (``env_args``, ``num_examples``)."""
    meta = _json_file(run_dir / "metadata.json")
    if not meta:
        return RunConfig()
    args = _mapping(meta.get("env_args"))
    num_tasks = args.get("num_tasks")
    return RunConfig(
        model=_config_text(meta.get("model")),
        split=_config_text(args.get("split", "validation")),
        data_path=_config_text(args.get("data_path")),
        data_label=_config_text(args.get("data_label")),
        negatives=_negatives(args.get("negatives", 0)),
        # The legacy metadata records how many examples ran, not whether -n cut the split short.
        limit=f"num_tasks={num_tasks}" if isinstance(num_tasks, int) and not isinstance(num_tasks, bool) else None,
        # num_examples is how many examples the legacy CLI ran, so a whole file holds that many x rollouts.
        requested=_requested(meta.get("num_examples"), meta.get("rollouts_per_example")),
    )


def run_documents(run: Run, data_path: str | None = None) -> list[Document] | None:
    """The run's abstracts: the run's own, else loaded from ``data_path`` or the run's saved local data path.

    None when neither names a local file (the hub is never contacted for this).
    """
    if run.documents is not None:
        return run.documents
    path = data_path or run.config.data_path
    return None if path is None else load_documents(run.config.split or "validation", path)
