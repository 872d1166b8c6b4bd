"""A ``vf-replay`` output read as a run: its setting comes from its rollouts.

A replay saves ``configs/resolved/replay.json``, not the source run's ``eval.json``: it names no model, and its
taskset is the source's only when the knobs were given as ``--env.taskset.<knob>`` (with ``--taskset.<knob>``
verifiers starts the taskset from drugprot's defaults). The re-scored rollouts keep what the source run recorded:
the model in each trace's agent config, and the run's setting in ``info["drugprot"]["versions"]["setting"]``
(``drugprot.core.versions.setting``), so the report reads those. Best effort, never an error: what is missing or
of an unexpected type is unknown. Each value is read by the rule of the check it feeds: a line is an episode when
``decode.episode_traces`` says so (a ``"traces": 5`` line is skipped here as the report skips it), and
``negatives`` is known only when the knob's own ``parse_negatives`` accepts it (a list is unknown).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drugprot.core.options import parse_negatives
from drugprot.evaluation.decode import episode_traces
from drugprot.evaluation.records import RunConfig
from drugprot.evaluation.typed_json import BadRecord, decode_json, shorten

REPLAY_CONFIG = Path("configs") / "resolved" / "replay.json"
"""Where ``vf-replay`` saves its resolved config, inside its output directory."""
_LINES_READ = 50
"""Lines of ``traces.jsonl`` read for a trace that recorded the setting (the first one normally does)."""


def is_replay(run_dir: Path) -> bool:
    """Whether ``run_dir`` is a ``vf-replay`` output (a ``replay.json`` and no ``eval.json`` beside it)."""
    return (run_dir / REPLAY_CONFIG).is_file() and not (run_dir / REPLAY_CONFIG.with_name("eval.json")).is_file()


def _get(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _text(value: Any) -> str | None:
    return shorten(value, 400) if isinstance(value, str) and value else None


def _first_traces(file: Path) -> list[dict[str, Any]]:
    """The traces of the first lines of a ``traces.jsonl`` (episodes), those that read as JSON objects."""
    traces: list[dict[str, Any]] = []
    try:
        with file.open("rb") as fh:
            for _, raw in zip(range(_LINES_READ), fh, strict=False):
                try:
                    episode = decode_json(raw)
                except BadRecord:
                    continue
                traces += [t for t in episode_traces(episode) or [] if isinstance(t, dict)]  # read_line's rule
    except OSError:
        return []
    return traces


def replay_config(run_dir: Path) -> RunConfig:
    """The source run's setting as the replay's rollouts recorded it: model, split, negatives and data path."""
    for trace in _first_traces(run_dir / "traces.jsonl"):
        setting = _get(trace, "info", "drugprot", "versions", "setting")
        if not isinstance(setting, dict):
            setting = _get(trace, "task", "data", "versions", "setting")
        model = _text(_get(trace, "agent", "config", "model"))
        if model is None and not isinstance(setting, dict):
            continue
        setting = setting if isinstance(setting, dict) else {}
        try:
            negatives = None if setting.get("negatives") is None else str(parse_negatives(setting["negatives"]))
        except ValueError:
            negatives = None
        return RunConfig(
            model=model,
            split=_text(setting.get("split")),
            data_path=_text(setting.get("data_path")),
            negatives=negatives,
        )
    return RunConfig()
