"""The demo's "model": the lexical baseline answering DrugProt prompts, served as a responder."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drugprot.core.labels import NO_RELATION
from drugprot.core.prompts import CHEMICAL_TAGS, GENE_TAGS
from drugprot.evaluation.baselines import Prediction, fallback_label, lexical_label, reply_text
from drugprot.tools.serve import Reply, last_user_text

_ABSTRACT = re.compile(r"Abstract \(PMID [^)]*\):\n(?P<text>.*?)\n\nChemical: \"(?P<chem>.*?)\"(?P<rest>.*)", re.DOTALL)
_GENE_NAME = re.compile(r"Gene/protein: \"(?P<gene>.*?)\"")


@dataclass(frozen=True, slots=True)
class PromptPair:
    """What the lexical baseline needs from a prompt: the plain text and the two mention spans."""

    text: str
    chemical: tuple[int, int]
    gene: tuple[int, int]
    with_no_relation: bool


def _unmark(marked: str) -> tuple[str, dict[str, int]]:
    """Text without the mention tags, and the plain-text position of each tag."""
    tags = (*CHEMICAL_TAGS, *GENE_TAGS)
    pattern = re.compile("|".join(re.escape(tag) for tag in tags))
    positions: dict[str, int] = {}
    parts, removed, last = [], 0, 0
    for match in pattern.finditer(marked):
        parts.append(marked[last : match.start()])
        positions.setdefault(match.group(0), match.start() - removed)
        removed += len(match.group(0))
        last = match.end()
    parts.append(marked[last:])
    return "".join(parts), positions


def pair_from_prompt(prompt: str) -> PromptPair | None:
    """The abstract and the pair's spans from a DrugProt user prompt (``drugprot.core.prompts.user_prompt``).

    Marked mentions give exact spans; without marks, the first occurrence of each quoted name is used.
    None when the prompt is not a DrugProt prompt or a mention cannot be found.
    """
    match = _ABSTRACT.search(prompt)
    if match is None:
        return None
    with_nr = f"\n{NO_RELATION.letter}. {NO_RELATION.name}" in prompt
    text, tags = _unmark(match.group("text"))
    if all(tag in tags for tag in (*CHEMICAL_TAGS, *GENE_TAGS)):
        chemical = (tags[CHEMICAL_TAGS[0]], tags[CHEMICAL_TAGS[1]])
        gene = (tags[GENE_TAGS[0]], tags[GENE_TAGS[1]])
        return PromptPair(text, chemical, gene, with_nr)
    gene_match = _GENE_NAME.search(match.group("rest"))
    chem_name, gene_name = match.group("chem"), gene_match.group("gene") if gene_match else ""
    chem_at, gene_at = text.find(chem_name), text.find(gene_name)
    if not chem_name or not gene_name or chem_at < 0 or gene_at < 0:
        return None
    return PromptPair(text, (chem_at, chem_at + len(chem_name)), (gene_at, gene_at + len(gene_name)), with_nr)


def lexical_reply(prompt: str) -> str:
    """The lexical baseline's reply to one DrugProt prompt, in the think/boxed format."""
    pair = pair_from_prompt(prompt)
    if pair is None:
        with_nr = f"\n{NO_RELATION.letter}. {NO_RELATION.name}" in prompt
        label = fallback_label(with_nr)
        return reply_text(Prediction(label, f"could not find the marked pair, so {label}"))
    return reply_text(lexical_label(pair.text, pair.chemical, pair.gene, with_no_relation=pair.with_no_relation))


def lexical_responder(body: Mapping[str, Any]) -> Reply:
    """A ``drugprot.tools.serve`` responder: the lexical baseline answering the request's last user message."""
    return Reply(content=lexical_reply(last_user_text(body)))
