"""Framework-free task loading shared by both verifiers adapters: options in, prompted questions out.

``load_questions`` loads the split named by ``TaskOptions`` (``drugprot.core.options``) and asks the task mode the
``mode`` knob names (``drugprot.modes.task.TaskMode.questions``: pair tasks, or one task per abstract) to build,
select (the deterministic shuffle/limit) and prompt its tasks. ``Question``, the one record of a task that every
consumer reads, and ``select_tasks`` are ``drugprot.core.question``'s (re-exported here).

``validate_source`` is what the adapters run when their config is validated, before any run starts:
for a local ``data_path`` it loads, validates and builds the questions right away (so every data error
surfaces then) and keeps them for the next ``load_questions`` with the same options, as long as the
files are unchanged. The hub is checked when the questions are loaded.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from drugprot.core.options import TaskOptions
from drugprot.core.question import Question, select_tasks
from drugprot.core.sources import LoadStats, load_documents, source_files
from drugprot.modes.task import task_mode

__all__ = ["Question", "TaskOptions", "load_questions", "select_tasks", "validate_source"]


# Questions built by ``validate_source``: (options, file fingerprints) -> (questions, load stats). At most one
# entry; ``load_questions`` takes it out.
_prepared: dict[tuple[object, ...], tuple[list[Question], LoadStats]] = {}


def _fingerprint(options: TaskOptions, data_path: str) -> tuple[object, ...]:
    """The options and the identity of every file they read (path, inode, size, mtime): a changed file misses."""
    files = []
    for path in source_files(options.split, data_path):
        st = Path(path).stat()
        files.append((str(Path(path).resolve()), st.st_ino, st.st_size, st.st_mtime_ns))
    return (options, tuple(files))


def _build_questions(options: TaskOptions, path_hint: str, stats: LoadStats) -> list[Question]:
    documents = load_documents(
        options.split, options.data_path, stats=stats, path_hint=path_hint, revision=options.revision
    )
    return task_mode(options.mode).questions(documents, options)


def validate_source(options: TaskOptions, *, path_hint: str = "data_path={path}") -> None:
    """Check, before a run, the local data ``options`` name: everything about it that needs no network.

    A local ``data_path`` is loaded, validated and built into questions now, and they are kept for the next
    ``load_questions(options)`` (which then reads nothing, unless a file changed). Without ``data_path``
    nothing is checked here: the hub checks (``HF_HUB_OFFLINE`` without a cache, reachability) run when the
    questions are loaded. They cannot run at config time, because verifiers' CLI validates a *default*
    config (no ``data_path``) while it narrows the config class, before the user's values apply.

    Raises:
        DrugprotDataError: the local data cannot be read, breaks the schema, or selects no task.
    """
    if options.data_path is None:
        return
    key = _fingerprint(options, options.data_path)
    if key in _prepared:  # the same config validated again (vf-eval validates the env config twice)
        return
    _prepared.clear()
    stats = LoadStats()
    _prepared[key] = (_build_questions(options, path_hint, stats), stats)


def load_questions(
    options: TaskOptions, *, path_hint: str = "data_path={path}", stats: LoadStats | None = None
) -> list[Question]:
    """Load the split named by ``options`` and return its questions (one per abstract in extraction mode).

    ``path_hint`` is how the caller's user sets ``data_path`` (``{path}`` stands for the file), quoted
    in the hub error.

    Raises:
        DrugprotDataError / DrugprotHubError: from ``drugprot.core.sources.load_documents``, or no task selected.
    """
    if options.data_path is not None and _prepared:
        cached = _prepared.pop(_fingerprint(options, options.data_path), None)
        if cached is not None:
            questions, loaded = cached
            if stats is not None:
                for f in dataclasses.fields(LoadStats):
                    setattr(stats, f.name, getattr(stats, f.name) + getattr(loaded, f.name))
            return questions
    return _build_questions(options, path_hint, stats if stats is not None else LoadStats())
