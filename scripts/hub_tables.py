"""The package README's generated tables (the Environments Hub page): relation options, environment arguments and
reward/metric keys, rendered from the code that defines them.

Each table sits between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in ``environments/drugprot/README.md``:

- ``options``: ``drugprot.core.labels.RELATION_LABELS`` (letter, official name, description);
- ``knobs``: ``drugprot.core.options.KNOBS`` (name, default, the stacks that take it, its help text: the same text
  ``vf-eval --help`` shows for ``--env.taskset.<knob>``), with its type as ``load_environment`` annotates it;
- ``metrics``: every reward and metric key a rollout records, in the order the environment records them
  (``drugprot.core.rewards.REWARD_NAMES``, ``answered``, ``drugprot.core.rewards.METRIC_NAMES``), with the default
  weight from ``DEFAULT_WEIGHTS`` and the meaning from ``MEANINGS`` below; ``tests/test_hub_tables.py`` checks that
  these keys are exactly the ones both adapters record.

Usage (from the repository root, in the workspace venv)::

    uv run python scripts/hub_tables.py --write    # re-render the three tables in place
    uv run python scripts/hub_tables.py --check    # exit 1 when a table differs from the code

Exit status: 0 done (or current), 1 stale (``--check``), 2 bad usage or a README that cannot be read as one
(not UTF-8, a block without its start or end marker, a block twice): one line naming the file and the problem.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from drugprot.core.errors import DrugprotDataError
from drugprot.core.labels import RELATION_LABELS
from drugprot.core.options import KNOBS
from drugprot.core.outputs import write_text_atomic
from drugprot.core.rewards import DEFAULT_WEIGHTS, METRIC_NAMES, REWARD_NAMES
from drugprot.envs.legacy import load_environment  # its import needs no verifiers

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "environments" / "drugprot" / "README.md"

RECORDED_KEYS: tuple[str, ...] = (*REWARD_NAMES, "answered", *METRIC_NAMES)
"""Every key a rollout records, rewards first (the ``reward`` knob's weights), then the zero-weight metrics."""

MEANINGS: dict[str, str] = {
    "accuracy": "1 when the answer is one of the pair's gold types, else 0 (extraction mode: the abstract's F1)",
    "utility": "TP − `fp_cost`·FP − `fn_cost`·FN over this task's official (pair, type) cells (default costs 0.5, 1)",
    "format": "1 when the answer is valid, is the only `\\boxed{` after the reasoning, and no think tag follows it",
    "answered": "1 when the reply gave a valid option letter (extraction mode: a relations block)",
    "correct": "the `accuracy` term, unweighted whatever the weights: the raw accuracy prime-rl logs",
    "official_tp": "true positives of the official metric on this task",
    "official_fp": "false positives of the official metric on this task (extraction: not lines the scorer ignores)",
    "official_fn": "false negatives of the official metric on this task",
}
"""What each recorded key means, one line each (the package README's metrics table)."""


def _code(value: object) -> str:
    return f"`{value}`"


def render_options() -> str:
    rows = [f"| {label.letter} | `{label.name}` | {label.description} |" for label in RELATION_LABELS]
    return "\n".join(["| Letter | Relation | Meaning |", "|---|---|---|", *rows]) + "\n"


def _tags_as_code(text: str) -> str:
    """``<chemical>/<gene>`` shown as code, not read as HTML tags by a Markdown renderer."""
    return re.sub(r"(?<!`)(<\w+>(?:/<\w+>)*)(?!`)", r"`\1`", text)


def knob_types() -> dict[str, str]:
    """Each knob's type as ``load_environment`` (which takes every knob) annotates it, ``X | None`` as ``X or None``."""
    params = inspect.signature(load_environment).parameters
    shown = {name: str(param.annotation).replace(" | ", " or ") for name, param in params.items()}
    return {name: 'int or "all"' if kind == "Negatives" else kind for name, kind in shown.items()}


def render_knobs() -> str:
    """One row per knob, in ``KNOBS`` order: ``| `name` | type | `default` | stacks | help |``."""
    types = knob_types()
    rows = [
        f"| `{knob.name}` | {types[knob.name]} | `{knob.default}` | {', '.join(knob.stacks)} | "
        f"{_tags_as_code(knob.help)} |"
        for knob in KNOBS
    ]
    return "\n".join(["| Arg | Type | Default | Stacks | Description |", "|---|---|---|---|---|", *rows]) + "\n"


def render_metrics() -> str:
    """One row per recorded key: its kind (reward or metric), its default weight and its meaning."""
    missing = set(RECORDED_KEYS) ^ set(MEANINGS)
    if missing:
        raise ValueError(f"MEANINGS and the recorded keys differ: {sorted(missing)}")
    rows = []
    for key in RECORDED_KEYS:
        reward = key in REWARD_NAMES
        weight = f"{DEFAULT_WEIGHTS.of(key):g} (`{key}_weight`)" if reward else "0 (never rewarded)"
        rows.append(f"| `{key}` | {'reward' if reward else 'metric'} | {weight} | {MEANINGS[key]} |")
    return "\n".join(["| Metric | Kind | Default weight | Meaning |", "|---|---|---|---|", *rows]) + "\n"


RENDERERS = {"options": render_options, "knobs": render_knobs, "metrics": render_metrics}


def _marker_lines(text: str, marker: str) -> list[int]:
    """The line numbers (1-based) of the lines that are exactly ``marker``."""
    return [n for n, line in enumerate(text.split("\n"), start=1) if line == marker]


def splice(text: str, name: str, body: str, source: str = "README.md") -> str:
    """``text`` with the block ``name`` replaced by ``body``.

    Raises:
        DrugprotDataError: no such block, a start marker without its end (or an end before its start), or the
            block more than once (a second copy would never be checked); ``source`` names the file.
    """
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    starts, ends = _marker_lines(text, start), _marker_lines(text, end)
    if len(starts) > 1 or len(ends) > 1:
        lines = ", ".join(str(n) for n in sorted(starts + ends))
        raise DrugprotDataError(
            f"{source}: the {name} block is there more than once (markers on lines {lines}); keep one copy"
        )
    if not starts and not ends:
        raise DrugprotDataError(f"{source}: no '{start}' ... '{end}' block; add the two markers")
    if not starts:
        raise DrugprotDataError(f"{source}: '{start}' is missing before '{end}' (line {ends[0]}); restore it")
    if not ends or ends[0] < starts[0]:
        raise DrugprotDataError(f"{source}: '{end}' is missing after '{start}' (line {starts[0]}); restore it")
    match = re.search(rf"^{re.escape(start)}\n.*?^{re.escape(end)}$", text, re.S | re.M)
    assert match is not None  # one start line, then one end line
    return text[: match.start()] + f"{start}\n{body}{end}" + text[match.end() :]


def render_readme(text: str, source: str = "README.md") -> str:
    for name, render in RENDERERS.items():
        text = splice(text, name, render(), source)
    return text


def read_page(path: Path, shown: str) -> str:
    """The page's text (``shown``: the path as messages name it).

    Raises:
        DrugprotDataError: the file is missing or not UTF-8 (the offset of the first bad byte named).
    """
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise DrugprotDataError(f"{shown}: no such file; run from a checkout of the repository") from None
    except UnicodeDecodeError as err:
        raise DrugprotDataError(
            f"{shown}: not UTF-8 (byte 0x{err.object[err.start]:02x} at offset {err.start}); save it as UTF-8"
        ) from None


def main(argv: Sequence[str] | None = None, readme: Path | None = None) -> int:
    """The command; ``readme`` (tests) stands for the package README."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="re-render the tables in place")
    mode.add_argument("--check", action="store_true", help="exit 1 when a table differs from the code")
    args = parser.parse_args(argv)
    readme = README if readme is None else readme
    shown = str(readme.relative_to(ROOT) if readme.is_relative_to(ROOT) else readme)
    try:
        text = read_page(readme, shown)
        new = render_readme(text, shown)
    except DrugprotDataError as err:
        print(f"hub_tables: {err}", file=sys.stderr)
        return 2
    if args.check:
        if new != text:
            print(
                f"hub_tables: {shown} is stale; regenerate with: uv run python scripts/hub_tables.py --write",
                file=sys.stderr,
            )
            return 1
        print("hub_tables: current", file=sys.stderr)
        return 0
    if new != text:
        write_text_atomic(readme, new)
    print(f"hub_tables: {'rewrote' if new != text else 'nothing to rewrite in'} {shown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
