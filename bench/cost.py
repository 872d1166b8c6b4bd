"""Benchmark: the prompt cost of the official DrugProt metric on a split, pair mode vs extraction mode.

The official metric (micro P/R/F1 over every same-sentence chemical-gene pair) can be obtained two ways:

- **pair mode with ``negatives="all"``**: one task per same-sentence candidate pair (gold and NO-RELATION),
  each prompt the whole abstract with that pair marked;
- **extraction mode** (``mode="extraction"``): one task per abstract listing all its relations.

For each, this counts what a run over the whole split sends: prompts, system + user characters and UTF-8
bytes exactly as the taskset renders them (built through ``drugprot.DrugprotConfig`` and
``drugprot.DrugprotTaskset``, as a run builds them), mean and max prompt characters, and the token bound of
the longest prompt (``scripts/prompt_lengths.py``: one token per UTF-8 byte plus the chat template's
overhead), and the ratios pair / extraction. Target: extraction needs at least 10x fewer prompt characters.

Data: ``--data-path FILE`` (any file or TSV directory drugprot loads, e.g. the real 350-abstract sample) and
the generated train-size corpus of ``bench.corpus`` (``--corpus-scale`` abstracts, default 3,500: synthetic
text with the official train split's census of mentions and relations; its prompt counts and lengths are a
proxy for the real split's, not a measurement of it). Prompt counts and characters are exact and involve no
timing.

    python -m bench.cost --data-path FILE --split train        # FILE + the generated 3,500 abstracts
    python -m bench.cost --corpus-scale 3500 --json            # the generated corpus only, JSON on stdout
    python -m bench.cost --quick                                # 100 generated abstracts
    python -m bench.cost --data-path FILE --corpus-scale 0 --json cost.json   # table, and JSON to a file
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import corpus
from bench.common import REPO, add_overwrite, check_outputs, load_data, machine, write_json

TARGET_CHARS_RATIO = 10.0
"""Extraction mode must send at least this many times fewer prompt characters than pair mode with all negatives."""

QUICK_DOCS = 100
"""Generated abstracts of ``--quick``."""

MODES: dict[str, dict[str, Any]] = {
    "pair": {"mode": "pair", "negatives": "all"},
    "extraction": {"mode": "extraction"},
}
"""The two settings that yield the official metric on a whole split, as ``DrugprotConfig`` knobs."""

MODE_TITLES = {"pair": "pair, negatives=all", "extraction": "extraction"}


def _prompt_lengths() -> ModuleType:
    """``scripts/prompt_lengths.py`` (the token bound's one definition), loaded from the repository."""
    path = REPO / "scripts" / "prompt_lengths.py"
    loaded = sys.modules.get("prompt_lengths")
    if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == path.resolve():
        return loaded
    spec = importlib.util.spec_from_file_location("prompt_lengths", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the script is part of the repository
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["prompt_lengths"] = module  # its dataclass looks its module up while the class is created
    spec.loader.exec_module(module)
    return module


prompt_lengths = _prompt_lengths()


@dataclass(frozen=True)
class ModeCost:
    """What one mode sends over a whole split: every task's system + user prompt."""

    prompts: int
    system_chars: int
    user_chars: int
    bytes: int
    """System + user UTF-8 bytes over all prompts."""
    max_chars: int
    longest: Any
    """``prompt_lengths.PromptLengths`` of the prompt with the most UTF-8 bytes."""

    @property
    def chars(self) -> int:
        return self.system_chars + self.user_chars

    @property
    def mean_chars(self) -> float:
        return self.chars / self.prompts

    @property
    def token_bound(self) -> int:
        """Worst-case tokens of the longest prompt (``prompt_lengths``: 1 per byte + the template's overhead)."""
        return int(self.longest.token_bound)

    @property
    def total_token_bound(self) -> int:
        """The same bound over every prompt: all bytes plus the template's overhead once per prompt."""
        return self.bytes + self.prompts * prompt_lengths.TEMPLATE_OVERHEAD_TOKENS

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompts": self.prompts,
            "chars": self.chars,
            "system_chars": self.system_chars,
            "user_chars": self.user_chars,
            "bytes": self.bytes,
            "mean_chars": round(self.mean_chars, 1),
            "max_chars": self.max_chars,
            "longest": {
                "key": self.longest.key,
                "chars": self.longest.chars,
                "bytes": self.longest.utf8_bytes,
                "token_bound": self.token_bound,
            },
            "total_token_bound": self.total_token_bound,
        }


def prompt_cost(tasks: Sequence[Any]) -> ModeCost:
    """Sum the system + user prompt of every task (anything with ``.data.system_prompt`` / ``.data.prompt``).

    Raises:
        ValueError: there are no tasks.
    """
    system_chars = user_chars = nbytes = max_chars = 0
    for task in tasks:
        system = prompt_lengths._text(task.data.system_prompt)
        user = prompt_lengths._text(task.data.prompt)
        system_chars += len(system)
        user_chars += len(user)
        nbytes += len(system.encode("utf-8")) + len(user.encode("utf-8"))
        max_chars = max(max_chars, len(system) + len(user))
    longest = prompt_lengths.measure(tasks)  # raises ValueError on no tasks
    return ModeCost(len(tasks), system_chars, user_chars, nbytes, max_chars, longest)


def build_tasks(data_path: str, split: str, knobs: dict[str, Any]) -> list[Any]:
    """Every task of the split, built as a run builds them: ``DrugprotConfig`` -> ``DrugprotTaskset``."""
    import drugprot

    config = drugprot.DrugprotConfig.model_validate({"id": "drugprot", "split": split, "data_path": data_path, **knobs})
    return list(drugprot.DrugprotTaskset(config))


def ratios(pair: ModeCost, extraction: ModeCost) -> dict[str, float]:
    """pair / extraction of every figure (above 1: pair mode costs more)."""
    a, b = pair.as_dict(), extraction.as_dict()
    keys = ("prompts", "chars", "system_chars", "user_chars", "bytes", "mean_chars", "max_chars", "total_token_bound")
    out = {k: round(a[k] / b[k], 3) for k in keys}
    out["token_bound"] = round(pair.token_bound / extraction.token_bound, 3)
    return out


def dataset_cost(name: str, description: str, data_path: str, split: str) -> dict[str, Any]:
    """Both modes on one data source, their ratios and the target."""
    costs = {mode: prompt_cost(build_tasks(data_path, split, knobs)) for mode, knobs in MODES.items()}
    r = ratios(costs["pair"], costs["extraction"])
    met = costs["pair"].chars >= TARGET_CHARS_RATIO * costs["extraction"].chars
    return {
        "name": name,
        "description": description,
        "data_path": data_path,
        "split": split,
        "abstracts": costs["extraction"].prompts,  # extraction mode: one task per abstract, none left out
        "modes": {mode: {"knobs": MODES[mode], **cost.as_dict()} for mode, cost in costs.items()},
        "ratio_pair_over_extraction": r,
        "target": {"chars_ratio_min": TARGET_CHARS_RATIO, "chars_ratio": r["chars"], "met": met},
    }


def corpus_description(docs: int, seed: int) -> str:
    return (
        f"bench.corpus, {docs:,} abstracts, seed {seed}: SYNTHETIC text in the real schema with the official "
        "train split's census of mentions and relations (scaled per 3,500 abstracts), laid out to give about the "
        "real sample's same-sentence candidate pairs per abstract; its prompt counts and lengths are a proxy for "
        "the real train split's, not a measurement of them"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    datasets: list[dict[str, Any]] = []
    if args.data_path:
        description = f"from {args.data_path}"
        datasets.append(dataset_cost("data", description, args.data_path, args.split))
    if args.corpus_scale:
        with tempfile.TemporaryDirectory(prefix="drugprot-cost-") as tmp:
            path = corpus.write(corpus.generate(args.corpus_scale, args.seed), Path(tmp) / "corpus.jsonl")
            entry = dataset_cost("corpus", corpus_description(args.corpus_scale, args.seed), str(path), "train")
        entry["data_path"] = None  # a temporary file, gone now
        entry["corpus"] = {"docs": args.corpus_scale, "seed": args.seed}
        datasets.append(entry)
    return {
        "benchmark": "cost",
        "machine": machine(),
        "template_overhead_tokens": prompt_lengths.TEMPLATE_OVERHEAD_TOKENS,
        "target_chars_ratio": TARGET_CHARS_RATIO,
        "datasets": datasets,
    }


FIGURES = (
    ("prompts", "prompts"),
    ("prompt chars, system + user", "chars"),
    ("  of them system prompts", "system_chars"),
    ("  of them user prompts", "user_chars"),
    ("prompt bytes (UTF-8)", "bytes"),
    ("mean prompt chars", "mean_chars"),
    ("max prompt chars", "max_chars"),
    ("token bound, longest prompt", "token_bound"),
    ("token bound, all prompts", "total_token_bound"),
)
"""The table's rows: label and key of a mode's figures (and of the ratios)."""


def _cell(mode: dict[str, Any], key: str) -> str:
    if key == "token_bound":
        return f"{mode['longest']['token_bound']:,}"
    return f"{mode[key]:,.1f}" if key == "mean_chars" else f"{mode[key]:,}"


def _row(label: str, values: Iterable[str]) -> str:
    a, b, c = values
    return f"  {label:<42}{a:>20}{b:>16}{c:>20}"


def render(result: dict[str, Any]) -> str:
    """The human-readable table of ``run``'s result."""
    lines: list[str] = []
    bound = f"1 token per UTF-8 byte + {result['template_overhead_tokens']} for the chat template"
    for ds in result["datasets"]:
        pair, ext, ratio = ds["modes"]["pair"], ds["modes"]["extraction"], ds["ratio_pair_over_extraction"]
        title = "real data" if ds["name"] == "data" else "generated corpus"
        lines.append(f"{title}: {ds['abstracts']:,} abstracts ({ds['split']} split)")
        lines += textwrap.wrap(ds["description"], width=100, initial_indent="  ", subsequent_indent="  ")
        lines.append(_row("", (MODE_TITLES["pair"], MODE_TITLES["extraction"], "pair / extraction")))
        for label, key in FIGURES:
            cells = [_cell(pair, key), _cell(ext, key), f"{ratio[key]:.2f}x"]
            lines.append(_row(label, cells))
        target = ds["target"]
        verdict = "MET" if target["met"] else "NOT MET"
        lines.append(
            f"  target: extraction needs >= {target['chars_ratio_min']:g}x fewer prompt chars: {verdict} "
            f"({target['chars_ratio']:.2f}x)"
        )
        lines.append("")
    m = result["machine"]
    lines.append(f"token bound: {bound} (scripts/prompt_lengths.py). Longest prompt = most UTF-8 bytes.")
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, verifiers {m['verifiers']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", help="a file or TSV directory drugprot loads (e.g. the real sample)")
    parser.add_argument("--split", default="train", choices=("train", "validation"), help="split of --data-path")
    parser.add_argument(
        "--corpus-scale",
        type=int,
        default=corpus.FULL_DOCS,
        metavar="DOCS",
        help=f"abstracts of the generated corpus (default {corpus.FULL_DOCS:,}, the train split's size; 0: none)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    parser.add_argument("--quick", action="store_true", help="at most 100 generated abstracts (a CI-sized run)")
    parser.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="OUT",
        help="machine output: --json alone prints JSON instead of the table; --json OUT also writes it to OUT",
    )
    add_overwrite(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.corpus_scale = min(args.corpus_scale, QUICK_DOCS)
    if args.corpus_scale < 0:
        parser.error(f"--corpus-scale must be >= 0, got {args.corpus_scale}")
    if not args.data_path and not args.corpus_scale:
        parser.error("nothing to measure: give --data-path FILE and/or --corpus-scale DOCS > 0")
    out = args.json if args.json != "-" else None
    check_outputs(parser.prog, [("--json", out)], inputs=[args.data_path], overwrite=args.overwrite)
    if args.data_path:
        load_data(parser.prog, args.data_path, split=args.split)
    try:
        result = run(args)
    except ValueError as exc:  # drugprot's data and config errors (and pydantic's) are ValueErrors
        print(f"python -m bench.cost: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.json == "-":
        print(json.dumps(result, indent=2))
        return 0
    print(render(result))
    if args.json:
        write_json(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
