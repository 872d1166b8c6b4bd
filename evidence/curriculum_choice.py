"""``python -m evidence.curriculum_choice --data-path FILE --out DIR``: prime-rl's curriculum settings chosen on
training abstracts only, then judged against the standard sampler on held-out abstracts over many PMID splits.

Per outer PMID split ``s`` (``evidence.shared.split_by_pmid``, 70 / 30): the split's training abstracts are split again
by PMID (``split_by_pmid(train, split=INNER + s)``: inner train and inner validation). The standard sampler and every
setting of ``GRID`` (the sampler: uniform or ``difficulty_pool`` with pools on the default reward's scale,
``evidence.curriculum.utility_pools`` at weight 0.1 or 0.3; prime-rl's ``advantage_range`` gate at ``[0, 0]`` or none;
the NO-RELATION share of the task mix: every candidate, about 0.73, or 0.5) train with GRPO (``evidence.rl_sim``, the
``cues`` class, warm-started on the inner train abstracts) for ``--inner-steps`` steps; on the inner validation
abstracts each setting's rollouts to the standard's end F1 and its end F1 are measured. The chosen setting is the one
that ranks highest by (qualifies, speed-up, end F1): it qualifies when it reaches the standard's end F1 and its end F1
is at most ``TOLERANCE`` below the standard's; speed-up = the standard's rollouts to its own end F1 / the setting's.
A setting is always chosen, so the held-out comparison is standard vs the best curriculum the training data finds.

Then the standard sampler and the chosen setting train on the outer split's training abstracts for ``--steps`` steps
and are scored on its held-out abstracts: end F1 (mean of the last quarter of evaluations), paired difference, and
rollouts until the smoothed held-out F1 reaches the standard's end F1 (``evidence.sim_report.rollouts_to``). No
held-out abstract of a split is seen before its setting is chosen. Writes every run's prime-rl ``metrics.jsonl``
under ``DIR/split<k>/{inner,outer}/<setting>/`` and the summary to ``DIR/summary.json``; prints the table.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.common import add_overwrite, check_run_folders, load_data, positive_int, too_small, write_json
from drugprot.core.rewards import Costs
from drugprot.core.schema import Document
from evidence.rl_sim import BY_NAME, F1_KEY, NONE_KEY, Recipe, Settings, train
from evidence.shared import check_held_out, check_splits, single_thread, split_by_pmid, spread
from evidence.sim_data import Corpus, prepare, warm_start
from evidence.sim_report import rollouts_to

POLICY_CLASS = "cues"
TOLERANCE = 0.01
"""A setting qualifies on the inner validation abstracts when its end F1 is at most this far below the standard's."""
INNER = 1000
"""The inner split of outer split ``s`` is ``split_by_pmid(train, split=INNER + s)``: another salt than the outer
splits' (the same salt would hold out none of the outer training abstracts)."""
STANDARD = BY_NAME["pair-utility-all"]
"""The recipe's standard sampler: the default reward (utility, ``negatives="all"``), uniform draws, no gate."""


def _setting(sampler: str, weight: float, gate: bool, share: float | None) -> Recipe:
    name = "uniform" if sampler == "uniform" else f"pool{weight:g}"
    name += "-gate" if gate else ""
    name += f"-neg{share:g}" if share is not None else ""
    return replace(STANDARD, name=name, sampler=sampler, pool_weight=weight, gate=gate, negative_share=share)


GRID: tuple[Recipe, ...] = tuple(
    _setting(sampler, weight, gate, share)
    for sampler, weight in (("uniform", 0.1), ("pool", 0.1), ("pool", 0.3))
    for gate in (False, True)
    for share in (None, 0.5)
    if (sampler, gate, share) != ("uniform", False, None)
)
"""The curriculum settings the training abstracts choose from (11; the standard sampler is not among them)."""


def _outcome(run: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """A run against the reference (the standard on the same abstracts): end F1, rollouts to the reference's end F1."""
    target = reference["last"][F1_KEY]
    mine, theirs = rollouts_to(run["progress"], target), rollouts_to(reference["progress"], target)
    return {
        "end_f1": run["last"][F1_KEY],
        "end_none": run["last"][NONE_KEY],
        "start_f1": run["first"][F1_KEY],
        "rollouts_to_target": mine,
        "reference_rollouts_to_target": theirs,
        "speedup": theirs / mine if mine and theirs else None,
        "rollouts": run["rollouts"],
        "is_trainable": run["is_trainable"],
    }


def choose(inner: dict[str, dict[str, Any]]) -> str:
    """The setting ranked highest by (qualifies, speed-up, end F1) among ``inner`` (name -> outcome vs standard)."""
    standard_f1 = inner[STANDARD.name]["end_f1"]

    def rank(name: str) -> tuple[bool, float, float]:
        o = inner[name]
        qualifies = o["rollouts_to_target"] is not None and o["end_f1"] >= standard_f1 - TOLERANCE
        return qualifies, o["speedup"] or 0.0, o["end_f1"]

    return max((name for name in inner if name != STANDARD.name), key=rank)


def run_split(
    documents: Sequence[Document], split: int, grid: Sequence[Recipe], inner: Settings, outer: Settings, out: Path
) -> dict[str, Any]:
    """One outer split: every setting on the inner split of its training abstracts, the choice, and the standard and
    the chosen setting on the outer split."""
    with single_thread():
        costs = Costs()
        train_docs, _ = split_by_pmid(documents, split=split)
        inner_data = prepare(train_docs, INNER + split, POLICY_CLASS, Corpus.of(train_docs, [POLICY_CLASS]))
        w0, _ = warm_start(inner_data)
        folder = out / f"split{split}"
        runs = {r.name: train(inner_data, w0, r, split, inner, folder / "inner" / r.name, costs)
                for r in (STANDARD, *grid)}  # fmt: skip
        inner_outcomes = {name: _outcome(run, runs[STANDARD.name]) for name, run in runs.items()}
        chosen = choose(inner_outcomes)
        data = prepare(documents, split, POLICY_CLASS, Corpus.of(documents, [POLICY_CLASS]))
        w0, _ = warm_start(data)
        by_name = {r.name: r for r in grid}
        standard = train(data, w0, STANDARD, split, outer, folder / "outer" / STANDARD.name, costs)
        picked = train(data, w0, by_name[chosen], split, outer, folder / "outer" / chosen, costs)
    return {
        "split": split,
        "inner": inner_outcomes,
        "chosen": chosen,
        "standard": _outcome(standard, standard),
        "curriculum": _outcome(picked, standard),
    }


def summarise(splits: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean ± sd over splits of the standard and the chosen curriculum on held-out abstracts."""

    def column(side: str, key: str) -> list[float]:
        return [s[side][key] for s in splits if s[side][key] is not None]

    def over(side: str, key: str) -> dict[str, float] | None:
        return spread(column(side, key)) if column(side, key) else None

    diff = [s["curriculum"]["end_f1"] - s["standard"]["end_f1"] for s in splits]
    return {
        "splits": len(splits),
        "chosen": dict(Counter(s["chosen"] for s in splits)),
        "standard": {
            "end_f1": over("standard", "end_f1"),
            "rollouts_to_target": over("standard", "rollouts_to_target"),
            "reached": len(column("standard", "rollouts_to_target")),
            "rollouts": over("standard", "rollouts"),
            "is_trainable": over("standard", "is_trainable"),
            "gain": spread([s["standard"]["end_f1"] - s["standard"]["start_f1"] for s in splits]),
        },
        "curriculum": {
            "end_f1": over("curriculum", "end_f1"),
            "rollouts_to_target": over("curriculum", "rollouts_to_target"),
            "reached": len(column("curriculum", "rollouts_to_target")),
            "speedup": over("curriculum", "speedup"),
            "rollouts": over("curriculum", "rollouts"),
            "is_trainable": over("curriculum", "is_trainable"),
            "gain": spread([s["curriculum"]["end_f1"] - s["curriculum"]["start_f1"] for s in splits]),
            "minus_standard": spread(diff) | {"ahead": sum(d > 0 for d in diff)},
        },
    }


def _show(s: dict[str, float] | None, digits: int = 3) -> str:
    """``mean ± sd (min–max)`` of a ``spread``, thousands separated; ``-`` for none."""
    if not s:
        return "-"
    return f"{s['mean']:,.{digits}f} ± {s['sd']:,.{digits}f} ({s['min']:,.{digits}f}–{s['max']:,.{digits}f})"


def format_summary(summary: dict[str, Any]) -> str:
    s, c = summary["standard"], summary["curriculum"]
    n = summary["splits"]
    chosen = ", ".join(f"{name} {count}/{n}" for name, count in summary["chosen"].items())
    d = c["minus_standard"]
    lines = [
        f"chosen on the training abstracts (per split): {chosen}",
        "| sampler | F1 end, greedy | − standard (ahead) | reached the standard's end F1 | rollouts to it | speed-up "
        "| rollouts generated | groups with non-zero advantage |",
        "|---|---|---|---|---|---|---|---|",
        f"| standard | {_show(s['end_f1'])} | | {s['reached']}/{n} | {_show(s['rollouts_to_target'], 0)} | 1 "
        f"| {_show(s['rollouts'], 0)} | {_show(s['is_trainable'])} |",
        f"| chosen curriculum | {_show(c['end_f1'])} | {d['mean']:+.3f} ± {d['sd']:.3f} ({d['ahead']}/{n}) "
        f"| {c['reached']}/{n} | {_show(c['rollouts_to_target'], 0)} | {_show(c['speedup'], 2)} "
        f"| {_show(c['rollouts'], 0)} | {_show(c['is_trainable'])} |",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.curriculum_choice", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="DrugProt data (any file or TSV folder drugprot loads)")
    parser.add_argument("--out", required=True, help="folder for the runs' metrics.jsonl and summary.json")
    parser.add_argument("--splits", type=positive_int, default=10, help="outer PMID splits (default 10)")
    parser.add_argument("--steps", type=positive_int, default=600, help="GRPO steps on an outer split (default 600)")
    parser.add_argument("--inner-steps", type=positive_int, default=300, help="GRPO steps per setting on the inner "
                        "split (default 300)")  # fmt: skip
    parser.add_argument("--eval-every", type=positive_int, default=20, help="steps between evaluations (default 20)")
    parser.add_argument("--jobs", type=positive_int, default=1, help="outer splits run at a time (processes)")
    parser.add_argument("--smoke", action="store_true", help="a test-sized run: 1 split, 8 / 8 steps, 3 settings")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    splits, grid = (1, GRID[:3]) if args.smoke else (args.splits, GRID)
    outer = Settings(steps=8 if args.smoke else args.steps, eval_every=2 if args.smoke else args.eval_every)
    inner = replace(outer, steps=8 if args.smoke else args.inner_steps)
    out = Path(args.out)
    settings_all = (STANDARD, *grid)
    what = "the curriculum choice"
    documents = load_data(parser.prog, args.data_path, min_abstracts=2, relations=True, what=what)
    check_held_out(parser.prog, args.data_path, documents, what=what)
    check_splits(parser.prog, splits, documents, what=what)  # before the folder list: one name per split
    runs = [f"split{k}/{side}/{r.name}" for k in range(splits) for side in ("inner", "outer") for r in settings_all]
    check_run_folders(parser.prog, "--out", out, runs, inputs=[args.data_path], overwrite=args.overwrite)
    out.mkdir(parents=True, exist_ok=True)  # checked writable before any work (check_run_folders)
    with too_small(parser.prog, what):
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                done = list(pool.map(run_split, *zip(*[(documents, k, grid, inner, outer, out) for k in range(splits)],
                                                     strict=True)))  # fmt: skip
        else:
            done = [run_split(documents, k, grid, inner, outer, out) for k in range(splits)]
    summary = summarise(done)
    settings = {"inner": asdict(inner), "outer": asdict(outer), "tolerance": TOLERANCE, "policy_class": POLICY_CLASS}
    result = {"settings": settings, "grid": [r.name for r in grid], "summary": summary, "splits": done}
    write_json(result, str(out / "summary.json"))
    print(format_summary(summary))
    print(f"full results: {out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
