"""A deterministic synthetic DrugProt corpus with the shape of the official training split.

The benchmarks need the size of the real train split (3,500 abstracts), which the project cannot ship or
download at run time, so this module writes one: the real schema (``OpenMed/drugprot-parquet`` rows, or
the official BioCreative VII TSVs), the real totals and realistic text. Per 3,500 abstracts it has exactly
the census of the official training split:

- 46,274 CHEMICAL, 28,421 GENE-Y and 14,834 GENE-N mentions (25.6 per abstract, 12 to 70 each);
- 17,274 relations with the official per-type counts (INHIBITOR 5,388 ... AGONIST-INHIBITOR 13), about
  1.7 % of them a second type on an already related pair (the real multi-label rate);
- 1,067 abstracts without any relation;
- text of title + " " + abstract, 1,550 characters on average (at most 3,500), in sentences of filler
  words with the mentions in place: repeated names, multi-word names, names with brackets and digits,
  and chemicals nested inside gene names (``NADPH oxidase``), like the real data.

Relations only join a chemical and a gene of the same sentence, and the mention density gives about as
many same-sentence candidate pairs per gold pair as the real data, so ``negatives="all"`` does a realistic
amount of work. Fewer abstracts (``--docs``) scale every total in proportion.

Everything comes from one ``random.Random(seed)``: the same arguments give byte-identical files.

    python -m bench.corpus --out corpus.jsonl            # 3,500 abstracts, jsonl
    python -m bench.corpus --out corpus.parquet          # the same rows as parquet (needs pyarrow)
    python -m bench.corpus --out corpus_tsv --format tsv # the official TSV layout
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import add_overwrite, check_outputs
from drugprot.core.outputs import atomic_path, write_text_atomic

FULL_DOCS = 3500
"""Abstracts in the official training split; the totals below are for this many."""
ENTITY_TOTALS = {"CHEMICAL": 46_274, "GENE-Y": 28_421, "GENE-N": 14_834}
RELATION_TOTALS = {
    "INDIRECT-DOWNREGULATOR": 1_329,
    "INDIRECT-UPREGULATOR": 1_378,
    "DIRECT-REGULATOR": 2_247,
    "ACTIVATOR": 1_428,
    "INHIBITOR": 5_388,
    "AGONIST": 658,
    "AGONIST-ACTIVATOR": 29,
    "AGONIST-INHIBITOR": 13,
    "ANTAGONIST": 972,
    "PRODUCT-OF": 920,
    "SUBSTRATE": 2_003,
    "SUBSTRATE_PRODUCT-OF": 24,
    "PART-OF": 885,
}
DOCS_WITHOUT_RELATIONS = 1_067
MULTI_LABEL_RATE = 29 / 1_759
"""Share of relations that add a second type to an already related pair (29 of 1,759 in the real sample)."""
MAX_TEXT = 3_500
PMID_BASE = 30_000_000

# fmt: off
_CHEMICALS = (
    "imatinib", "tamoxifen", "Ca(2+)", "cAMP", "NADPH", "5-HT", "L-NAME", "H2O2", "nitric oxide", "glucose",
    "ATP", "dopamine", "17beta-estradiol", "cholesterol", "ethanol", "Zn(2+)", "forskolin", "rapamycin",
    "dexamethasone", "metformin", "cisplatin", "atorvastatin", "captopril", "losartan", "nifedipine",
    "verapamil", "haloperidol", "clozapine", "fluoxetine", "morphine", "naloxone", "acetylcholine",
    "norepinephrine", "arachidonic acid", "prostaglandin E2", "retinoic acid", "vitamin D3", "insulin-like",
    "[3H]ketanserin", "Na(+)", "K(+)", "Mg(2+)", "lipopolysaccharide", "thapsigargin", "genistein",
    "quercetin", "resveratrol", "curcumin", "bisphenol A", "benzo[a]pyrene", "N-acetylcysteine",
)
_CHEM_PREFIXES = ("ima", "tamo", "flu", "cis", "carbo", "dexa", "meto", "ator", "simva", "lova", "rani", "cime",
                  "vala", "lisino", "halo", "clo", "ami", "nife", "vera", "sora", "suni", "erlo", "gefi", "pazo")
_CHEM_SUFFIXES = ("tinib", "xifen", "oxetine", "platin", "methasone", "prolol", "vastatin", "pril", "sartan",
                  "dipine", "pamil", "peridol", "zole", "olol", "amine", "azepam", "mycin", "cillin")
_GENES_Y = (
    "CYP3A4", "CYP2D6", "CYP1A2", "PDGFR", "c-kit", "c-fms", "EGFR", "COX-2", "P-glycoprotein", "MAO-B", "ACE",
    "HMG-CoA reductase", "Na(+)/Ca(2+) exchanger", "beta2-adrenergic receptor", "5-HT2A receptor", "ERK1/2",
    "Akt", "mTOR", "PPARgamma", "TNF-alpha", "IL-6", "NF-kappaB", "p53", "Bcl-2", "caspase-3", "VEGF", "AMPK",
    "eNOS", "iNOS", "JNK", "STAT3", "HER2", "BCR-ABL", "SERT", "DAT", "GABA(A) receptor", "hERG", "OATP1B1",
    "UGT1A1", "SULT1A1", "estrogen receptor alpha", "androgen receptor", "glucocorticoid receptor", "TRPV1",
)
_GENES_N = (
    "kinase", "tyrosine kinases", "cytochrome P450", "receptors", "protein kinase C", "ion channels",
    "transporter", "phosphodiesterase", "ATPase", "oxidase", "metalloproteinases", "cytokines", "integrins",
    "calcium channels", "serine proteases", "hydroxylase", "dehydrogenase", "esterases",
)
# Gene names that start with a chemical name: the chemical mention is nested in the gene mention.
_NESTED = (
    ("NADPH", "oxidase"), ("glucose", "transporter 1"), ("dopamine", "D2 receptor"), ("ATP", "synthase"),
    ("acetylcholine", "esterase"), ("5-HT", "transporter"), ("cAMP", "response element binding protein"),
    ("insulin-like", "growth factor 1"), ("retinoic acid", "receptor alpha"), ("Ca(2+)", "-ATPase"),
)
_STARTERS = ("The", "We", "These", "In", "This", "Treatment", "Our", "Both", "Furthermore,", "However,",
             "Moreover,", "Here", "Finally,", "Taken together,", "Consistent with this,", "Interestingly,")
_FILLER = (
    "the", "of", "and", "in", "to", "was", "were", "by", "with", "that", "for", "on", "cells", "expression",
    "activity", "effect", "effects", "increased", "decreased", "inhibited", "induced", "levels", "treatment",
    "significantly", "human", "rat", "mouse", "protein", "mRNA", "binding", "response", "dose-dependent",
    "concentration", "administration", "results", "suggest", "study", "observed", "showed", "associated",
    "compared", "patients", "mechanism", "pathway", "signaling", "role", "potent", "selective", "inhibition",
    "stimulation", "uptake", "release", "metabolism", "plasma", "tissue", "liver", "brain", "cultured",
    "vitro", "vivo", "markedly", "whereas", "however", "reduced", "enhanced", "blocked", "mediated",
    "(n = 12)", "(P < 0.05)", "0.5 mM", "10 microM", "IC50", "Ki", "approximately", "2-fold", "(Fig. 2)",
)
# fmt: on


@dataclass
class _Mention:
    type: str
    text: str
    nested_in: int | None = None
    """Index (in the document's mention list) of the gene mention this chemical is nested in."""
    start: int = -1
    end: int = -1


def scaled(total: int, docs: int) -> int:
    """A full-split total scaled to ``docs`` abstracts (exact at 3,500)."""
    return round(total * docs / FULL_DOCS)


def _spread(total: int, weights: Sequence[float], rng: random.Random, low: int, high: int) -> list[int]:
    """Integers within ``[low, high]`` summing exactly to ``total``, roughly proportional to ``weights``."""
    norm = sum(weights) or 1.0
    counts = [min(high, max(low, round(total * w / norm))) for w in weights]
    order = list(range(len(counts)))
    while (diff := total - sum(counts)) != 0:
        rng.shuffle(order)
        step = 1 if diff > 0 else -1
        for i in order:
            if counts[i] + step < low or counts[i] + step > high:
                continue
            counts[i] += step
            diff -= step
            if diff == 0:
                break
        else:
            if all(c + step < low or c + step > high for c in counts):
                raise ValueError(f"cannot spread {total} over {len(counts)} slots within [{low}, {high}]")
    return counts


def _chemical_name(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return rng.choice(_CHEMICALS)
    return rng.choice(_CHEM_PREFIXES) + rng.choice(_CHEM_SUFFIXES)


def _gene_name(rng: random.Random, kind: str) -> str:
    if kind == "GENE-N":
        return rng.choice(_GENES_N)
    if rng.random() < 0.7:
        return rng.choice(_GENES_Y)
    letters = "".join(rng.choice("ABCDEFGHKLMNPRSTUVZ") for _ in range(rng.randint(2, 4)))
    return f"{letters}{rng.randint(1, 20)}"


def _doc_names(rng: random.Random, count: int, make: Any) -> list[str]:
    """About half as many distinct names as mentions: names repeat within an abstract, as in the real data."""
    return [make() for _ in range(max(1, math.ceil(count * 0.5)))]


def _render_sentence(
    rng: random.Random, mentions: list[int], ments: list[_Mention], budget: int, title: bool
) -> tuple[str, list[tuple[int, int, int]]]:
    """One sentence of about ``budget`` characters with the given mentions in place.

    Returns the sentence and ``(mention index, start, end)`` offsets relative to the sentence start.
    """
    pieces: list[tuple[str, int | None]] = [(rng.choice(_STARTERS), None)]
    mention_chars = sum(len(ments[m].text) + 1 for m in mentions)
    fillers = max(2, round((budget - mention_chars - len(pieces[0][0])) / 7.6))
    body: list[tuple[str, int | None]] = [(rng.choice(_FILLER), None) for _ in range(fillers)]
    for m in mentions:  # each mention at a random place, never first (the starter is capitalised)
        body.insert(rng.randint(0, len(body)), (ments[m].text, m))
    pieces += body
    if not title or rng.random() < 0.8:
        pieces.append((rng.choice(_FILLER).strip("()") + ".", None))
    out: list[str] = []
    offsets: list[tuple[int, int, int]] = []
    pos = 0
    for text, m in pieces:
        if out:
            out.append(" ")
            pos += 1
        if m is not None:
            offsets.append((m, pos, pos + len(text)))
        out.append(text)
        pos += len(text)
    return "".join(out), offsets


def _document(
    rng: random.Random, index: int, types: list[str], want_relations: bool, target_len: int
) -> tuple[dict[str, Any], list[list[int]], list[_Mention]]:
    """One abstract's text and mentions (relations are added by ``generate``), plus mentions per sentence."""
    n_sent = max(2, round(target_len / 140))
    chem_names = _doc_names(rng, types.count("CHEMICAL"), lambda: _chemical_name(rng))
    gene_y = _doc_names(rng, types.count("GENE-Y"), lambda: _gene_name(rng, "GENE-Y"))
    gene_n = _doc_names(rng, types.count("GENE-N"), lambda: _gene_name(rng, "GENE-N"))
    ments: list[_Mention] = []
    for kind in types:
        pool = chem_names if kind == "CHEMICAL" else gene_y if kind == "GENE-Y" else gene_n
        ments.append(_Mention(kind, rng.choice(pool)))
    # Mentions cluster: most sentences of an abstract name a few entities, some name none.
    weights = [rng.random() + 0.5 for _ in range(n_sent)]
    if want_relations:
        weights[rng.randrange(n_sent)] += 0.3  # the sentence stating the main finding
    sentence_of = rng.choices(range(n_sent), weights=weights, k=len(ments))
    by_sentence: list[list[int]] = [[] for _ in range(n_sent)]
    for m, s in enumerate(sentence_of):
        by_sentence[s].append(m)
    # Nest some chemicals inside gene mentions of the same sentence ("NADPH oxidase").
    for members in by_sentence:
        chems = [m for m in members if ments[m].type == "CHEMICAL"]
        genes = [m for m in members if ments[m].type != "CHEMICAL"]
        while chems and genes and rng.random() < 0.15:
            chem, gene = chems.pop(), genes.pop()
            prefix, rest = rng.choice(_NESTED)
            ments[chem].text = prefix
            ments[gene].text = prefix + ("" if rest.startswith("-") else " ") + rest
            ments[chem].nested_in = gene
    # Text: sentence 0 is the title; the rest share the remaining length.
    title_len = min(240, max(40, round(rng.gauss(110, 35))))
    body_len = max(200, target_len - title_len - 1)
    budgets = _spread(body_len, [rng.uniform(0.6, 1.4) for _ in range(n_sent - 1)], rng, 40, 10_000)
    sentences: list[str] = []
    pos = 0
    for s, members in enumerate(by_sentence):
        placed = [m for m in members if ments[m].nested_in is None]
        text, offsets = _render_sentence(rng, placed, ments, title_len if s == 0 else budgets[s - 1], s == 0)
        for m, start, end in offsets:
            ments[m].start, ments[m].end = pos + start, pos + end
        sentences.append(text)
        pos += len(text) + 1
    for m in ments:
        if m.nested_in is not None:
            outer = ments[m.nested_in]
            m.start, m.end = outer.start, outer.start + len(m.text)
    text = " ".join(sentences)
    if len(text) > MAX_TEXT:  # rare: drop trailing filler words of the last sentence
        raise _TooLong
    title, abstract = sentences[0], " ".join(sentences[1:])
    row = {
        "pmid": str(PMID_BASE + index),
        "title": title,
        "abstract": abstract,
        "text": text,
        "entities": [],
        "relations": [],
    }
    return row, by_sentence, ments


class _TooLong(Exception):
    pass


def generate(docs: int = FULL_DOCS, seed: int = 0) -> list[dict[str, Any]]:
    """The corpus rows (``OpenMed/drugprot-parquet`` schema), deterministic in ``docs`` and ``seed``."""
    if docs < 1:
        raise ValueError(f"docs must be >= 1, got {docs}")
    rng = random.Random(seed)
    entity_types = [t for t, n in ENTITY_TOTALS.items() for _ in range(scaled(n, docs))]
    rng.shuffle(entity_types)
    per_doc = _spread(len(entity_types), [rng.lognormvariate(0, 0.5) for _ in range(docs)], rng, 2, 70)
    starts = [0]
    for n in per_doc:
        starts.append(starts[-1] + n)
    doc_types = [entity_types[starts[i] : starts[i + 1]] for i in range(docs)]

    def can_relate(i: int) -> bool:
        return "CHEMICAL" in doc_types[i] and any(t != "CHEMICAL" for t in doc_types[i])

    # Abstracts with more mentions are likelier to have relations.
    weight = {i: per_doc[i] * rng.uniform(0.5, 1.5) * can_relate(i) for i in range(docs)}
    ranked = sorted(range(docs), key=lambda i: -weight[i])
    with_relations = set(ranked[: docs - scaled(DOCS_WITHOUT_RELATIONS, docs)])
    if not all(can_relate(i) for i in with_relations):
        raise ValueError(f"too few abstracts ({docs}) to place the relations")

    rows: list[dict[str, Any]] = []
    capacity: list[list[tuple[int, int]]] = []  # same-sentence (chemical, gene) mention pairs per doc
    mentions: list[list[_Mention]] = []
    for i in range(docs):
        types = doc_types[i]
        target = min(MAX_TEXT - 100, max(350, round(470 + 38 * len(types) + rng.gauss(0, 280))))
        for _ in range(50):  # a related abstract needs a chemical and a gene in one sentence
            try:
                row, by_sentence, ments = _document(rng, i, types, i in with_relations, target)
            except _TooLong:
                target -= 150
                continue
            pairs = [
                (c, g)
                for members in by_sentence
                for c in members
                if ments[c].type == "CHEMICAL"
                for g in members
                if ments[g].type != "CHEMICAL"
            ]
            if pairs or i not in with_relations:
                break
        else:  # pragma: no cover - 50 placements of >= 1 chemical and >= 1 gene always meet
            raise RuntimeError(f"could not lay out abstract {i}")
        rng.shuffle(pairs)
        rows.append(row)
        capacity.append(pairs if i in with_relations else [])
        mentions.append(ments)

    # Relations: exactly the census per type, spread over the related abstracts by their capacity.
    rel_types = [t for t, n in RELATION_TOTALS.items() for _ in range(scaled(n, docs))]
    rng.shuffle(rel_types)
    extra = round(len(rel_types) * MULTI_LABEL_RATE)
    n_pairs = len(rel_types) - extra
    related = [i for i in range(docs) if capacity[i]]
    caps = [max(1, round(len(capacity[i]) * 0.6)) for i in related]
    caps = [min(c, len(capacity[i])) for c, i in zip(caps, related, strict=True)]
    if sum(caps) < n_pairs:
        caps = [len(capacity[i]) for i in related]
    counts = _spread(n_pairs, [c**1.2 for c in caps], rng, 1, max(caps))
    counts = [min(c, len(capacity[i])) for c, i in zip(counts, related, strict=True)]
    shortfall = n_pairs - sum(counts)
    for k, i in enumerate(related):  # put back what the caps cut, where there is room
        room = min(shortfall, len(capacity[i]) - counts[k])
        counts[k] += room
        shortfall -= room
    if shortfall:
        raise RuntimeError("not enough same-sentence pairs for the relations")
    gold: list[tuple[int, int, int, str]] = []  # (doc, chemical mention, gene mention, type)
    type_iter = iter(rel_types)
    for k, i in enumerate(related):
        for chem, gene in capacity[i][: counts[k]]:
            gold.append((i, chem, gene, next(type_iter)))
    for rel_type in type_iter:  # the multi-label extras: a second type on an existing pair
        while True:
            doc, chem, gene, first = gold[rng.randrange(n_pairs)]
            if first != rel_type and (doc, chem, gene, rel_type) not in gold[n_pairs:]:
                gold.append((doc, chem, gene, rel_type))
                break

    # Entity ids: T1..Tn in a shuffled order (the real files do not number mentions by offset).
    for i, row in enumerate(rows):
        ments = mentions[i]
        ids = list(range(1, len(ments) + 1))
        rng.shuffle(ids)
        row["entities"] = [
            {"id": f"T{ids[m]}", "type": mn.type, "text": mn.text, "start": mn.start, "end": mn.end}
            for m, mn in enumerate(ments)
        ]
        row["_ids"] = ids
    for doc, chem, gene, rel_type in gold:
        ids = rows[doc]["_ids"]
        rows[doc]["relations"].append({"type": rel_type, "arg1": f"T{ids[chem]}", "arg2": f"T{ids[gene]}"})
    for row in rows:
        del row["_ids"]
    return rows


def corpus_stats(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts a reader can check against the census (and the smoke test asserts on)."""
    lengths = sorted(len(r["text"]) for r in rows)
    entity_types: dict[str, int] = {}
    relation_types: dict[str, int] = {}
    for r in rows:
        for e in r["entities"]:
            entity_types[e["type"]] = entity_types.get(e["type"], 0) + 1
        for rel in r["relations"]:
            relation_types[rel["type"]] = relation_types.get(rel["type"], 0) + 1
    return {
        "documents": len(rows),
        "entities": sum(entity_types.values()),
        "entity_types": dict(sorted(entity_types.items())),
        "relations": sum(relation_types.values()),
        "relation_pairs": sum(len({(x["arg1"], x["arg2"]) for x in r["relations"]}) for r in rows),
        "relation_types": dict(sorted(relation_types.items(), key=lambda kv: -kv[1])),
        "documents_without_relations": sum(not r["relations"] for r in rows),
        "text_chars_mean": round(sum(lengths) / len(lengths), 1),
        "text_chars_median": lengths[len(lengths) // 2],
        "text_chars_max": lengths[-1],
    }


TSV_FILES = ("drugprot_training_abstracs.tsv", "drugprot_training_entities.tsv", "drugprot_training_relations.tsv")
"""The official files ``write`` puts in a TSV directory."""


def write(rows: Sequence[dict[str, Any]], out: Path, fmt: str | None = None) -> Path:
    """Write the rows as ``jsonl``, ``parquet`` or an official ``tsv`` directory (format from the suffix)."""
    fmt = fmt or {".jsonl": "jsonl", ".parquet": "parquet", ".json": "json"}.get(out.suffix.lower(), "tsv")
    if fmt == "jsonl":
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out) as tmp, tmp.open("x", encoding="utf-8") as fh:  # whole or not at all
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif fmt == "json":
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, json.dumps(list(rows), ensure_ascii=False))
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out) as tmp:
            pq.write_table(pa.Table.from_pylist(list(rows)), tmp)
    elif fmt == "tsv":
        out.mkdir(parents=True, exist_ok=True)
        with (out / "drugprot_training_abstracs.tsv").open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(f"{r['pmid']}\t{r['title']}\t{r['abstract']}\n")
        with (out / "drugprot_training_entities.tsv").open("w", encoding="utf-8") as fh:
            for r in rows:
                for e in r["entities"]:
                    fh.write(f"{r['pmid']}\t{e['id']}\t{e['type']}\t{e['start']}\t{e['end']}\t{e['text']}\n")
        with (out / "drugprot_training_relations.tsv").open("w", encoding="utf-8") as fh:
            for r in rows:
                for rel in r["relations"]:
                    fh.write(f"{r['pmid']}\t{rel['type']}\tArg1:{rel['arg1']}\tArg2:{rel['arg2']}\n")
    else:
        raise ValueError(f"unknown format {fmt!r}; expected jsonl, json, parquet or tsv")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="file (.jsonl/.json/.parquet) or TSV directory")
    parser.add_argument("--format", choices=("jsonl", "json", "parquet", "tsv"), help="default: from --out")
    parser.add_argument("--docs", type=int, default=FULL_DOCS, help="abstracts (default: the train split's 3,500)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stats", action="store_true", help="print the corpus counts as JSON")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    fmt = args.format or {".jsonl": "jsonl", ".parquet": "parquet", ".json": "json"}.get(args.out.suffix.lower(), "tsv")
    if fmt == "tsv":
        files = [("--out", args.out / name) for name in TSV_FILES] if args.out.is_dir() else []
        check_outputs(parser.prog, files, folders=[("--out", args.out)], overwrite=args.overwrite)
    else:
        check_outputs(parser.prog, [("--out", args.out)], overwrite=args.overwrite)
    rows = generate(args.docs, args.seed)
    write(rows, args.out, args.format)
    if args.stats:
        json.dump(corpus_stats(rows), sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
