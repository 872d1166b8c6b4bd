"""The DrugProt relation types: the one table every prompt, parser, metric and doc reads.

Order and spelling are the official ones (``rel_types`` in the BioCreative VII DrugProt evaluation
library), so letters A-M are stable across versions and comparable with the hub environment
``maziyar/OpenMed_DrugProt``. ``NO-RELATION`` (letter N) is not a DrugProt class: it only exists
when a taskset asks for negative candidates, and it is never scored by the official metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from drugprot.core.errors import DrugprotLookupError


@dataclass(frozen=True, slots=True)
class Label:
    """One answer option: its letter, official name and a one-line description for the prompt."""

    letter: str
    name: str
    description: str


RELATION_LABELS: tuple[Label, ...] = (
    Label(
        "A",
        "INDIRECT-DOWNREGULATOR",
        "the chemical indirectly decreases the gene product's activity or expression",
    ),
    Label(
        "B",
        "INDIRECT-UPREGULATOR",
        "the chemical indirectly increases the gene product's activity or expression",
    ),
    Label(
        "C",
        "DIRECT-REGULATOR",
        "the chemical binds or directly regulates the gene product, mechanism unspecified",
    ),
    Label("D", "ACTIVATOR", "the chemical directly activates the gene product"),
    Label("E", "INHIBITOR", "the chemical directly inhibits the gene product"),
    Label("F", "AGONIST", "the chemical is an agonist of the gene product (a receptor)"),
    Label("G", "AGONIST-ACTIVATOR", "the chemical is an agonist that also activates the gene product"),
    Label(
        "H",
        "AGONIST-INHIBITOR",
        "the chemical is an agonist that inhibits the gene product's downstream effects",
    ),
    Label("I", "ANTAGONIST", "the chemical is an antagonist of the gene product (a receptor)"),
    Label("J", "PRODUCT-OF", "the chemical is a product of the enzyme encoded by the gene"),
    Label("K", "SUBSTRATE", "the chemical is a substrate of the enzyme or transporter encoded by the gene"),
    Label("L", "SUBSTRATE_PRODUCT-OF", "the chemical is both a substrate and a product of the enzyme"),
    Label("M", "PART-OF", "the chemical is part of the gene product (e.g. a component of the protein complex)"),
)
"""The 13 official DrugProt relation types, letters A-M in the official order."""

NO_RELATION = Label("N", "NO-RELATION", "the text states none of the relations above between the two")
"""The extra option offered only when a taskset includes negative (no-relation) candidates."""

RELATION_NAMES: tuple[str, ...] = tuple(label.name for label in RELATION_LABELS)
"""Official names of the 13 scored classes, in order (what the official scorer calls ``rel_types``)."""


LABEL_ORDER: dict[str, int] = {label.name: i for i, label in enumerate((*RELATION_LABELS, NO_RELATION))}
"""Official name -> rank in the official order (A..M, then NO-RELATION): the one sort order of labels."""


@cache
def options(with_no_relation: bool = False) -> tuple[Label, ...]:
    """The answer options offered to the model: A-M, plus N=NO-RELATION when asked for."""
    return RELATION_LABELS + ((NO_RELATION,) if with_no_relation else ())


@cache
def by_letter(with_no_relation: bool = False) -> dict[str, Label]:
    """Letter -> label for the given option set."""
    return {label.letter: label for label in options(with_no_relation)}


@cache
def by_name(with_no_relation: bool = False) -> dict[str, Label]:
    """Official name -> label for the given option set."""
    return {label.name: label for label in options(with_no_relation)}


def letter_of(name: str) -> str:
    """The letter of an official relation name (or ``NO-RELATION``).

    Raises:
        DrugprotLookupError: ``name`` is not an official DrugProt type; the message lists the valid ones.
    """
    label = by_name(True).get(name)
    if label is None:
        raise DrugprotLookupError(
            f"unknown DrugProt relation type {name!r}; expected one of {', '.join(RELATION_NAMES)}"
        )
    return label.letter
