"""``python -m evidence.alignment --data-path FILE``: does each reward rank policies as the official micro-F1 does?

A family of deterministic policies (gold with controlled missing, spurious and wrong-type relations; the lexical
baseline at several thresholds; majority / always ``none`` / N; every pair with one type; every pair with every
type) answers every task of the data file. Every answer is rendered as a model's reply and scored through the
environment's own path (``drugprot.modes.task.score_task``); its reward is ``evidence.shared.reward_value``.
Per reward value the script prints the mean reward next to the official micro-F1 of the same answers
(``drugprot.core.metrics.score_relations``), the Spearman rank correlation (scipy) and every inversion (a policy
with a lower F1 but a higher reward).

Pair mode: rewards at ``negatives="all"`` (every same-sentence candidate pair, N offered), the policy's official
F1 being that of those answers; for the record, today's accuracy at ``negatives`` 0, 1 and 2 (at 0, N is not
offered, and a policy's N becomes the majority type, as the lexical baseline does). Extraction mode: one reply per
abstract listing the policy's relations on the candidate pairs (gold-derived policies also on cross-sentence gold
pairs), the official F1 over all replies.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scipy.stats import spearmanr

from bench.common import add_overwrite, check_outputs, fail, load_data, write_json
from drugprot.core.errors import DrugprotConfigError
from drugprot.core.labels import NO_RELATION, RELATION_NAMES
from drugprot.core.rewards import Costs
from drugprot.core.schema import Document
from drugprot.core.tasks import build_tasks
from drugprot.evaluation.baselines import MAJORITY, lexical_label
from evidence.operating_points import format_points, operating_points
from evidence.shared import (
    REWARDS,
    PairRow,
    official_f1,
    pair_rows,
    reward_value,
    score_document,
    score_pair,
    stable_unit,
)

Answer = tuple[str, ...]
"""The relation types a policy states for one pair (empty: none / N)."""
EPS = 1e-9


@dataclass(frozen=True)
class Policy:
    """A named rule from a pair to the types it states; ``oracle`` rules (gold-derived) also answer the gold pairs
    that are no same-sentence candidate, ``degenerate`` ones ignore the text."""

    name: str
    rule: Callable[[PairRow], Answer]
    oracle: bool = False
    degenerate: bool = False
    modes: tuple[str, ...] = ("pair", "extraction")


def _key(row: PairRow, salt: str) -> float:
    return stable_unit(f"{salt}:{row.document.pmid}:{row.chemical}:{row.gene}")


def _random_type(row: PairRow, salt: str, avoid: Answer = ()) -> str:
    choices = [t for t in RELATION_NAMES if t not in avoid]
    return choices[int(_key(row, salt) * len(choices))]


def _gold(missing: float = 0.0, spurious: float = 0.0, wrong: float = 0.0) -> Callable[[PairRow], Answer]:
    def rule(row: PairRow) -> Answer:
        if row.gold:
            if _key(row, "miss") < missing:
                return ()
            return (_random_type(row, "type", row.gold),) if _key(row, "wrong") < wrong else row.gold
        return (_random_type(row, "type"),) if _key(row, "spurious") < spurious else ()

    return rule


def _lexical(region: str = "any", max_gap: int | None = None, fallback: bool = False) -> Callable[[PairRow], Answer]:
    """The lexical baseline (N offered); ``region="between"`` keeps only cues between the mentions, ``max_gap`` only
    pairs at most that many characters apart, ``fallback`` answers the majority type where it would say N."""

    def rule(row: PairRow) -> Answer:
        entities = {e.id: e for e in row.document.entities}
        chemical, gene = entities[row.chemical], entities[row.gene]
        gap = max(chemical.start, gene.start) - min(chemical.end, gene.end)
        answer = lexical_label(
            row.document.text, (chemical.start, chemical.end), (gene.start, gene.end), with_no_relation=True
        )
        stated = answer.label != NO_RELATION.name
        if stated and region == "between" and "between" not in answer.rationale:
            stated = False
        if stated and max_gap is not None and gap > max_gap:
            stated = False
        if stated:
            return (answer.label,)
        return (MAJORITY,) if fallback else ()

    return rule


def policies() -> list[Policy]:
    """The policy family, from the perfect answer down to answers that ignore the text."""
    family = [Policy("gold", _gold(), oracle=True)]
    family += [Policy(f"gold, {int(m * 100)}% missing", _gold(missing=m), oracle=True) for m in (0.25, 0.5, 0.75)]
    family += [Policy(f"gold, {int(s * 100)}% spurious", _gold(spurious=s), oracle=True) for s in (0.1, 0.3, 0.6, 1.0)]
    family += [
        Policy("gold, 50% missing, 30% spurious", _gold(missing=0.5, spurious=0.3), oracle=True),
        Policy("gold, 50% wrong type", _gold(wrong=0.5), oracle=True),
        Policy("lexical", _lexical()),
        Policy("lexical, cue between only", _lexical(region="between")),
        Policy("lexical, gap <= 60", _lexical(max_gap=60)),
        Policy("lexical, gap <= 20", _lexical(max_gap=20)),
        Policy("lexical, between and gap <= 60", _lexical(region="between", max_gap=60)),
        Policy("lexical, else INHIBITOR", _lexical(fallback=True)),
        Policy("none / N (majority)", lambda row: (), degenerate=True),
    ]
    family += [
        Policy(f"every pair {t}", lambda row, t=t: (t,), degenerate=True)
        for t in ("INHIBITOR", "INDIRECT-DOWNREGULATOR", "SUBSTRATE")
    ]
    family += [
        Policy("every pair a random type", lambda row: (_random_type(row, "any"),), degenerate=True),
        Policy("every pair every type", lambda row: RELATION_NAMES, degenerate=True, modes=("extraction",)),
    ]
    return family


@dataclass
class Column:
    """One reward setting: its name, whether it is one of today's rewards, and each policy's mean reward."""

    name: str
    today: bool
    values: list[float] = field(default_factory=list)


def _pair_column(
    documents: Sequence[Document], family: Sequence[Policy], rows: dict[tuple[str, str, str], PairRow], **spec: Any
) -> Column:
    negatives, kind = spec["negatives"], spec["reward"]
    with_nr = negatives != 0
    tasks = build_tasks(documents, negatives=negatives, seed=0)
    column = Column(f"pair {kind}, negatives={negatives}", today=kind == "accuracy")
    for policy in family:
        total = 0.0
        for task in tasks:
            answer = policy.rule(rows[(task.pmid, task.chemical.id, task.gene.id)])
            label = answer[0] if answer else NO_RELATION.name if with_nr else MAJORITY
            total += reward_value(score_pair(label, task.labels, with_no_relation=with_nr), kind, spec["costs"])
        column.values.append(total / len(tasks))
    return column


def pair_table(documents: Sequence[Document], costs: Costs) -> dict[str, Any]:
    family = [p for p in policies() if "pair" in p.modes]
    all_rows, _ = pair_rows(documents)
    rows = {(r.document.pmid, r.chemical, r.gene): r for r in all_rows}
    f1 = []
    for policy in family:
        predicted = []
        for r in all_rows:
            answer = policy.rule(r)
            if answer and (r.candidate or r.gold):  # the negatives="all" tasks: candidates and gold pairs
                predicted.append((r.document.pmid, r.chemical, r.gene, answer[0]))
        f1.append(official_f1(documents, predicted))
    settings = [{"negatives": "all", "reward": k} for k in reversed(REWARDS)]
    settings += [{"negatives": k, "reward": "accuracy"} for k in (0, 1, 2)]
    columns = [_pair_column(documents, family, rows, costs=costs, **s) for s in settings]
    return _table("pair", family, f1, columns, costs)


def extraction_table(documents: Sequence[Document], costs: Costs) -> dict[str, Any]:
    family = [p for p in policies() if "extraction" in p.modes]
    all_rows, _ = pair_rows(documents)
    by_pmid: dict[str, list[PairRow]] = {}
    for r in all_rows:
        by_pmid.setdefault(r.document.pmid, []).append(r)
    columns = [Column(f"extraction {kind}", today=kind == "accuracy") for kind in reversed(REWARDS)]
    f1 = []
    for policy in family:
        predicted, totals = [], [0.0] * len(columns)
        for document in documents:
            triples = [
                (r.chemical, r.gene, t)
                for r in by_pmid.get(document.pmid, ())
                if r.candidate or policy.oracle
                for t in policy.rule(r)
            ]
            predicted += [(document.pmid, *triple) for triple in triples]
            score = score_document(triples, document)
            for i, kind in enumerate(reversed(REWARDS)):
                totals[i] += reward_value(score, kind, costs)
        f1.append(official_f1(documents, predicted))
        for column, total in zip(columns, totals, strict=True):
            column.values.append(total / len(documents))
    return _table("extraction", family, f1, columns, costs)


def inversions(f1: Sequence[float], values: Sequence[float], names: Sequence[str]) -> list[tuple[str, str]]:
    """Every (lower-F1 policy, higher-F1 policy) pair whose reward order is the other way round."""
    return [
        (names[i], names[j])
        for i in range(len(f1))
        for j in range(len(f1))
        if f1[i] < f1[j] - EPS and values[i] > values[j] + EPS
    ]


def _table(mode: str, family: Sequence[Policy], f1: list[float], columns: list[Column], costs: Costs) -> dict[str, Any]:
    names = [p.name for p in family]
    lexical = names.index("lexical")
    out: dict[str, Any] = {"mode": mode, "costs": {"fp": costs.fp, "fn": costs.fn}, "policies": names, "f1": f1}
    out["columns"] = []
    for column in columns:
        rho = float(spearmanr(f1, column.values).statistic)
        above = [
            p.name for p, v in zip(family, column.values, strict=True) if p.degenerate and v > column.values[lexical]
        ]
        out["columns"].append(
            {
                "name": column.name,
                "today": column.today,
                "values": column.values,
                "spearman": rho,
                "inversions": inversions(f1, column.values, names),
                "degenerate_above_lexical": above,
            }
        )
    return out


def format_table(table: dict[str, Any]) -> str:
    columns = table["columns"]
    width = max(len(n) for n in table["policies"]) + 2
    heads = [c["name"] + (" (today)" if c["today"] else "") for c in columns]
    out = [f"{table['mode']} mode (utility costs fp={table['costs']['fp']}, fn={table['costs']['fn']})"]
    out.append(f"{'policy':<{width}}{'official F1':>12}" + "".join(f"{h:>36}" for h in heads))
    for i, name in enumerate(table["policies"]):
        out.append(f"{name:<{width}}{table['f1'][i]:>12.3f}" + "".join(f"{c['values'][i]:>36.3f}" for c in columns))
    out.append(f"{'Spearman vs F1':<{width}}{'':>12}" + "".join(f"{c['spearman']:>36.3f}" for c in columns))
    out.append(f"{'inversions':<{width}}{'':>12}" + "".join(f"{len(c['inversions']):>36d}" for c in columns))
    out.append(
        f"{'degenerate > lexical':<{width}}{'':>12}"
        + "".join(f"{len(c['degenerate_above_lexical']):>36d}" for c in columns)
    )
    for column in columns:
        for low, high in column["inversions"]:
            out.append(f"  {column['name']}: '{low}' has the lower F1 but the higher reward than '{high}'")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.alignment", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="a data file or TSV directory drugprot loads")
    parser.add_argument(
        "--mode",
        choices=("pair", "extraction", "both", "operating", "all"),
        default="all",
        help="pair / extraction tables (both), the operating-point check (evidence.operating_points), or all",
    )
    parser.add_argument("--fp-cost", type=float, default=None, help="the utility's fp cost (default: the knob's)")
    parser.add_argument("--fn-cost", type=float, default=None, help="the utility's fn cost (default: the knob's)")
    parser.add_argument("--json", metavar="OUT", help="also write the tables as JSON")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    check_outputs(parser.prog, [("--json", args.json)], inputs=[args.data_path], overwrite=args.overwrite)
    defaults = Costs()
    try:
        costs = Costs(
            fp=defaults.fp if args.fp_cost is None else args.fp_cost,
            fn=defaults.fn if args.fn_cost is None else args.fn_cost,
        )
    except DrugprotConfigError as exc:
        fail(parser.prog, f"--{exc.knob.replace('_', '-') if exc.knob else 'fp-cost'}: {exc}")
    documents = load_data(parser.prog, args.data_path, min_abstracts=2, relations=True, what="the alignment analysis")
    tables = []
    if args.mode in ("pair", "both", "all"):
        tables.append(pair_table(documents, costs))
    if args.mode in ("extraction", "both", "all"):
        tables.append(extraction_table(documents, costs))
    points = operating_points(documents, fn=costs.fn) if args.mode in ("operating", "all") else None
    print("\n\n".join([*(format_table(t) for t in tables), *([format_points(points)] if points else [])]))
    if args.json:
        result = {"data_path": args.data_path, "documents": len(documents), "tables": tables}
        write_json(result | ({"operating_points": points} if points else {}), args.json, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
