"""Check ``drugprot.core.candidates`` on real abstracts: sentence-splitter agreement and candidate-pair counts.

Usage::

    python scripts/check_sentences.py --data ABSTRACTS.jsonl [--sentences SENTENCES.jsonl] [--show N]

``--data`` is any file ``drugprot.core.sources.load_documents`` reads (``OpenMed/drugprot-parquet`` rows as
``.jsonl``/``.parquet``, or an official TSV directory). ``--sentences`` is a JSON-lines file of reference
sentence boundaries, one object per abstract: ``{"pmid": "...", "sentences": [[start, end], ...]}``
(end-exclusive offsets into ``text``). Prints:

* boundary precision/recall/F1: a boundary is the end offset of every sentence but the last of an abstract;
  exact offsets must match (spans are compared after trimming whitespace);
* exact sentence-span precision/recall;
* gold relations whose two mentions fall in one predicted sentence (the candidate rule), and in one
  reference sentence;
* candidate pairs, gold pairs covered, negatives available (``negatives="all"``) and their ratio per
  positive pair, with and without overlapping mentions, and the ratio reached by ``k = 1, 2, 5`` sampling.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from drugprot.core.candidates import (
    candidate_pairs,
    document_sentences,
    gold_pairs,
    negative_pairs,
    negative_ratio,
    sample_negatives,
    sentence_index,
)
from drugprot.core.schema import Document

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for bench.common
from bench.common import fail, load_data  # noqa: E402  (the CLI convention of every bench module and script)

Span = tuple[int, int]


def read_reference(path: Path) -> dict[str, list[Span]]:
    """pmid -> reference sentence spans, from a JSON-lines file of ``{"pmid", "sentences"}`` objects."""
    reference: dict[str, list[Span]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                reference[str(row["pmid"])] = [(int(a), int(b)) for a, b in row["sentences"]]
    return reference


def trim(text: str, spans: Sequence[Span]) -> list[Span]:
    """Spans shrunk to their first and last non-whitespace characters (empty spans dropped)."""
    out = []
    for start, end in spans:
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((start + lead, start + len(piece.rstrip())))
    return out


def same_sentence(spans: Sequence[Span], doc: Document, arg1: str, arg2: str) -> bool:
    """Both mentions start in the same sentence of ``spans``."""
    starts = list(spans)
    return sentence_index(starts, doc.entity(arg1).start) == sentence_index(starts, doc.entity(arg2).start)


def prf_line(name: str, tp: int, n_pred: int, n_gold: int) -> str:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0
    return f"{name}: precision {p:.4f} ({tp}/{n_pred})  recall {r:.4f} ({tp}/{n_gold})  F1 {f:.4f}"


def sentence_report(docs: Sequence[Document], reference: dict[str, list[Span]], show: int) -> None:
    """Print splitter agreement with the reference sentences."""
    b_tp = b_pred = b_gold = s_tp = s_pred = s_gold = 0
    rel_ours = rel_ref = rel_total = 0
    shown = 0
    missing = [doc.pmid for doc in docs if doc.pmid not in reference]
    for doc in docs:
        if doc.pmid not in reference:
            continue
        ours = document_sentences(doc)
        ref = trim(doc.text, reference[doc.pmid])
        ours_b, ref_b = {end for _, end in ours[:-1]}, {end for _, end in ref[:-1]}
        b_tp, b_pred, b_gold = b_tp + len(ours_b & ref_b), b_pred + len(ours_b), b_gold + len(ref_b)
        s_tp, s_pred, s_gold = s_tp + len(set(ours) & set(ref)), s_pred + len(ours), s_gold + len(ref)
        for rel in doc.relations:
            rel_total += 1
            rel_ours += same_sentence(ours, doc, rel.arg1, rel.arg2)
            rel_ref += same_sentence(ref, doc, rel.arg1, rel.arg2)
        for kind, offsets in (("extra", sorted(ours_b - ref_b)), ("missed", sorted(ref_b - ours_b))):
            for end in offsets:
                if shown < show:
                    shown += 1
                    context = doc.text[max(0, end - 50) : end] + " || " + doc.text[end : end + 30].lstrip()
                    print(f"  {kind} boundary, pmid {doc.pmid}: {context!r}")
    print(f"documents with reference sentences: {len(docs) - len(missing)} (without: {len(missing)})")
    print(f"sentences: ours {s_pred}, reference {s_gold}")
    print(prf_line("boundaries (exact offsets)", b_tp, b_pred, b_gold))
    print(prf_line("sentence spans (exact)", s_tp, s_pred, s_gold))
    print(f"gold relations with both mentions in one of our sentences: {rel_ours}/{rel_total}")
    print(f"gold relations with both mentions in one reference sentence: {rel_ref}/{rel_total}")


def candidate_report(docs: Sequence[Document]) -> None:
    """Print candidate, positive and negative counts."""
    positives = sum(len(gold_pairs(doc)) for doc in docs)
    relations = sum(len(doc.relations) for doc in docs)
    for overlapping in (True, False):
        cands = sum(len(candidate_pairs(doc, overlapping=overlapping)) for doc in docs)
        covered = sum(len(gold_pairs(doc) & set(candidate_pairs(doc, overlapping=overlapping))) for doc in docs)
        negatives = sum(len(negative_pairs(doc, overlapping=overlapping)) for doc in docs)
        label = "all mention pairs" if overlapping else "without overlapping mentions"
        print(
            f"candidates ({label}): {cands}; gold pairs covered {covered}/{positives}; "
            f"negatives {negatives} = {negatives / positives if positives else 0.0:.3f} per gold pair"
        )
    print(
        f"documents {len(docs)}, gold relations {relations}, gold pairs {positives}, "
        f"documents without relations {sum(1 for doc in docs if not doc.relations)}"
    )
    for k in (1, 2, 5):
        sampled = sample_negatives(docs, k, seed=0)
        print(
            f"negatives={k} (seed 0): {sum(map(len, sampled.values()))} sampled, "
            f"{negative_ratio(docs, sampled):.3f} per gold pair"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="check_sentences.py", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="abstracts (.jsonl/.parquet/TSV directory)")
    parser.add_argument("--sentences", type=Path, help="reference sentence boundaries (.jsonl)")
    parser.add_argument("--show", type=int, default=0, help="print up to N boundary disagreements")
    args = parser.parse_args(argv)
    docs = load_data(parser.prog, args.data, flag="--data")
    if args.sentences is not None:
        try:
            reference = read_reference(args.sentences)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            fail(
                parser.prog,
                f"--sentences {args.sentences}: cannot read it ({type(exc).__name__}: {exc}); pass a JSON-lines file "
                'of {"pmid", "sentences"} objects',
            )
        sentence_report(docs, reference, args.show)
    candidate_report(docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
