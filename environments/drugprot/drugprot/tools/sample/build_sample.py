"""Rebuilds ``drugprot_sample.jsonl``, the SYNTHETIC sample set of the offline demo, from inline markup.

Every abstract below was written for this package: the chemicals are invented, the statements are not
biomedical facts, and the PMIDs (990001xx) are not PubMed ids. The file uses the real
``OpenMed/drugprot-parquet`` row schema (``pmid, title, abstract, text, entities, relations``), with
``text = title + " " + abstract`` and end-exclusive offsets into ``text``. A mention is written
``«T1|CHEMICAL|aspirin»``; this script turns the markup into offsets.

Run ``python -m drugprot.tools.sample.build_sample`` after editing; ``tests/tools/demo/test_sample_run.py`` checks
that the committed file is what this script writes and that it loads through ``drugprot.core.sources``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from drugprot.core.outputs import write_text_atomic

SAMPLE = Path(__file__).with_name("drugprot_sample.jsonl")
_MENTION = re.compile(r"«(T\d+)\|([A-Z-]+)\|([^«»]+)»")

# (pmid, title, abstract, [(relation type, arg1, arg2)])
ABSTRACTS: list[tuple[str, str, str, list[tuple[str, str, str]]]] = [
    (
        "99000101",
        "«T1|CHEMICAL|Velorimide» is a selective inhibitor of «T2|GENE-Y|cyclooxygenase-2».",
        "In isolated enzyme assays «T3|CHEMICAL|velorimide» inhibited «T4|GENE-Y|COX-2» with an IC50 of 40 nM, "
        "while «T5|GENE-Y|COX-1» activity was unaffected. Pretreatment with «T6|CHEMICAL|velorimide» reduced "
        "«T7|GENE-N|prostaglandin E synthase» expression in macrophages.",
        [("INHIBITOR", "T1", "T2"), ("INHIBITOR", "T3", "T4"), ("INDIRECT-DOWNREGULATOR", "T6", "T7")],
    ),
    (
        "99000102",
        "«T1|CHEMICAL|Tarquinol» is a substrate and an inhibitor of «T2|GENE-Y|CYP2D6».",
        "«T3|CHEMICAL|Tarquinol» was metabolized mainly by «T4|GENE-Y|CYP2D6» to "
        "«T5|CHEMICAL|4-hydroxytarquinol», and «T6|GENE-Y|CYP3A4» contributed little to its clearance.",
        [("SUBSTRATE", "T1", "T2"), ("INHIBITOR", "T1", "T2"), ("SUBSTRATE", "T3", "T4"), ("PRODUCT-OF", "T5", "T4")],
    ),
    (
        "99000103",
        "«T1|CHEMICAL|Morenadol» is a partial agonist at «T2|GENE-Y|mu-opioid receptors»",
        "In binding studies «T3|CHEMICAL|morenadol» bound «T4|GENE-Y|MOR» with high affinity and acted as an "
        "agonist, whereas «T5|CHEMICAL|naltrexone» was a competitive antagonist of «T6|GENE-Y|MOR». "
        "«T7|CHEMICAL|Morenadol» did not bind «T8|GENE-Y|delta-opioid receptors».",
        [("AGONIST", "T1", "T2"), ("AGONIST", "T3", "T4"), ("ANTAGONIST", "T5", "T6")],
    ),
    (
        "99000104",
        "«T1|CHEMICAL|Solvarin» induces hepatic «T2|GENE-Y|LDL receptor» expression",
        "Treatment of liver cells with «T3|CHEMICAL|solvarin» increased «T4|GENE-Y|LDLR» mRNA levels twofold "
        "and decreased «T5|GENE-Y|PCSK9» secretion. These effects were abolished by "
        "«T6|CHEMICAL|actinomycin D».",
        [
            ("INDIRECT-UPREGULATOR", "T1", "T2"),
            ("INDIRECT-UPREGULATOR", "T3", "T4"),
            ("INDIRECT-DOWNREGULATOR", "T3", "T5"),
        ],
    ),
    (
        "99000105",
        "Direct activation of «T1|GENE-Y|AMPK» by «T2|CHEMICAL|fenbutrazone»",
        "«T3|CHEMICAL|Fenbutrazone» allosterically activated purified «T4|GENE-Y|AMP-activated protein kinase» "
        "in a cell-free system. In muscle cells it also increased «T5|GENE-Y|GLUT4» translocation, an effect "
        "blocked by the «T6|GENE-Y|AMPK» inhibitor «T7|CHEMICAL|dorsomorphin».",
        [("ACTIVATOR", "T2", "T1"), ("ACTIVATOR", "T3", "T4"), ("INHIBITOR", "T7", "T6")],
    ),
    (
        "99000106",
        "«T1|CHEMICAL|Zinc» is a structural component of «T2|GENE-N|matrix metalloproteinases»",
        "The catalytic domain of «T3|GENE-Y|MMP-9» contains two «T4|CHEMICAL|zinc» ions. "
        "«T5|CHEMICAL|Dorlaprost» modulated «T6|GENE-Y|MMP-9» activity through an unknown mechanism.",
        [("PART-OF", "T1", "T2"), ("PART-OF", "T4", "T3"), ("DIRECT-REGULATOR", "T5", "T6")],
    ),
    (
        "99000107",
        "«T1|CHEMICAL|Pralitane» acts as an agonist and activator of «T2|GENE-Y|GPR40»",
        "«T3|CHEMICAL|Pralitane» behaved as an agonist-activator of «T4|GENE-Y|GPR40», whereas "
        "«T5|CHEMICAL|orvenide» was an agonist that inhibited «T6|GENE-Y|GPR120» signalling. "
        "«T7|CHEMICAL|Tesmolin» antagonized «T8|GENE-Y|GPR40».",
        [
            ("AGONIST-ACTIVATOR", "T1", "T2"),
            ("AGONIST-ACTIVATOR", "T3", "T4"),
            ("AGONIST-INHIBITOR", "T5", "T6"),
            ("ANTAGONIST", "T7", "T8"),
        ],
    ),
    (
        "99000108",
        "Transport of «T1|CHEMICAL|quarnitrexate» by «T2|GENE-Y|OATP1B1»",
        "«T3|CHEMICAL|Quarnitrexate» is a substrate of «T4|GENE-Y|OATP1B1» and «T5|GENE-Y|BCRP». "
        "«T6|CHEMICAL|Glutamyl-quarnitrexate» is both a substrate and a product of "
        "«T7|GENE-Y|folylpolyglutamate synthase».",
        [
            ("SUBSTRATE", "T1", "T2"),
            ("SUBSTRATE", "T3", "T4"),
            ("SUBSTRATE", "T3", "T5"),
            ("SUBSTRATE_PRODUCT-OF", "T6", "T7"),
        ],
    ),
    (
        "99000109",
        "«T1|CHEMICAL|Hexolamine» and «T2|GENE-Y|TNF-alpha» in a rat model of arthritis",
        "Rats received «T3|CHEMICAL|hexolamine» or vehicle, and serum «T4|GENE-Y|TNF-alpha» and "
        "«T5|GENE-Y|IL-1beta» were measured. «T6|CHEMICAL|Hexolamine» suppressed «T7|GENE-Y|IL-1beta» "
        "release from synovial cells.",
        [("INDIRECT-DOWNREGULATOR", "T6", "T7")],
    ),
    (
        "99000110",
        "«T1|CHEMICAL|Corvastine» binds the «T2|GENE-Y|glucocorticoid receptor»",
        "«T3|CHEMICAL|Corvastine» bound to «T4|GENE-Y|GR» with nanomolar affinity but did not change "
        "«T5|GENE-Y|FKBP5» expression. «T6|CHEMICAL|Betanolone» increased «T7|GENE-Y|FKBP5» expression in the "
        "same cells.",
        [("DIRECT-REGULATOR", "T1", "T2"), ("DIRECT-REGULATOR", "T3", "T4"), ("INDIRECT-UPREGULATOR", "T6", "T7")],
    ),
]


def unmark(marked: str, offset: int) -> tuple[str, list[dict[str, Any]]]:
    """Plain text of ``marked`` and its mentions, with offsets shifted by ``offset``."""
    parts: list[str] = []
    entities: list[dict[str, Any]] = []
    length, last = 0, 0
    for match in _MENTION.finditer(marked):
        before = marked[last : match.start()]
        parts.append(before)
        length += len(before)
        ent_id, ent_type, text = match.groups()
        entities.append(
            {"id": ent_id, "type": ent_type, "text": text, "start": offset + length, "end": offset + length + len(text)}
        )
        parts.append(text)
        length += len(text)
        last = match.end()
    parts.append(marked[last:])
    return "".join(parts), entities


def rows() -> list[dict[str, Any]]:
    """The sample's rows in the ``OpenMed/drugprot-parquet`` schema."""
    out = []
    for pmid, marked_title, marked_abstract, relations in ABSTRACTS:
        title, title_entities = unmark(marked_title, 0)
        abstract, abstract_entities = unmark(marked_abstract, len(title) + 1)
        out.append(
            {
                "pmid": pmid,
                "title": title,
                "abstract": abstract,
                "text": f"{title} {abstract}",
                "entities": title_entities + abstract_entities,
                "relations": [{"type": kind, "arg1": arg1, "arg2": arg2} for kind, arg1, arg2 in relations],
            }
        )
    return out


def render() -> str:
    """The file's content: one JSON row per line."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows())


def main() -> None:
    write_text_atomic(SAMPLE, render())  # never a half-written sample
    print(f"wrote {len(ABSTRACTS)} abstracts to {SAMPLE}")


if __name__ == "__main__":
    main()
