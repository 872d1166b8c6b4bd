"""Extraction mode: one task per abstract; the model lists every related (chemical, gene) mention pair and type.

This is the DrugProt task as the shared task defined it (and as every published number scores it): the model
sees the whole abstract, one sentence per line, with every chemical mention marked
``<chemical id="T3">...</chemical>`` and every gene/protein mention ``<gene id="T7">...</gene>`` (the official
mention ids, which the official relation rows name), and answers, after its reasoning, with one block::

    <relations>
    T3 | T7 | INHIBITOR
    T3 | T9 | E
    </relations>

one relation per line: the chemical id, the gene id and the type (letter or official name, read by
``drugprot.core.parsing.answer_letter``, so with pair mode's tolerance). ``<relations>none</relations>`` is the
explicit empty answer. The block is read only in the answer region of ``drugprot.core.parsing.answer_region`` (after
a completed reasoning block, the rule of pair mode); the last block there counts.

Reading never raises on model output: a line that is not ``id | id | type`` is ``malformed``; ids that are no
mention of the abstract are ``unknown_id``; two chemicals or two genes are ``wrong_entity_type``; a repeated
triple is a ``duplicate``. Such lines are counted, never scored, and spoil the format. A line with its arguments
swapped (``gene id | chemical id | type``) is the same relation, read chemical-first (``resolve``): the official
scorer (``prepro_relations`` of tonifuc3m/drugprot-evaluation-library) finds the chemical of a row by its id
whichever column it is in, a DrugProt relation always goes from the chemical to the gene, and the ids say which
is which, so the line is unambiguous. The reward itself (per-document F1 over triples) is
``drugprot.core.scoring.score_extraction``.

Sentence lines: relations are annotated only within a sentence; ``drugprot.core.candidates.document_sentences``
keeps all 1,730 gold pairs of the 350-abstract real training sample inside one sentence, so the prompt shows
its sentences one per line and says the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from drugprot.core.candidates import document_sentences
from drugprot.core.errors import DrugprotDataError
from drugprot.core.labels import RELATION_LABELS, RELATION_NAMES, by_letter
from drugprot.core.parsing import STRAY_THINK_TAG, answer_letter, answer_region
from drugprot.core.schema import Document, Entity

Triple = tuple[str, str, str]
"""``(chemical id, gene id, official type name)``: one scored cell of the official metric."""

RELATIONS_OPEN, RELATIONS_CLOSE = "<relations>", "</relations>"
NONE_ANSWER = "none"
"""The explicit empty answer, alone in the block (ASCII case ignored)."""
SEPARATOR = "|"

# Why an extraction reply has no answer (``invalid_reason``, after parsing's EMPTY / REASONING_INCOMPLETE)
# or a bad format (``format_reason``).
NO_BLOCK = "no_relations_block"
SEVERAL_BLOCKS = "several_relations_blocks"
EMPTY_BLOCK = "empty_block"
MALFORMED = "malformed_line"
UNKNOWN_ID = "unknown_id"
WRONG_TYPE = "wrong_entity_type"
DUPLICATE = "duplicate_relation"
TOO_LONG = "relations_block_too_long"

MAX_RELATIONS_CHARS = 65_536
"""The longest relations block read as an answer (characters between the tags). The longest gold answer of the
350-abstract real training sample is 908 bytes (``scripts/prompt_lengths.py``), and even every same-sentence pair
listed with all 13 types is at most 33,700 characters there, so no answer made of an abstract's candidate pairs
reaches it. A longer block is no answer (``relations_block_too_long``): this bounds the work of reading and
resolving any reply, as ``drugprot.core.parsing.MAX_ANSWER_CHARS`` bounds a box in pair mode."""

_ASCII_SPACE = " \t\n\r\f\v"
_ID_FORBIDDEN = frozenset(_ASCII_SPACE + '|<>"')
CHEMICAL_TAG = ('<chemical id="{id}">', "</chemical>")
GENE_TAG = ('<gene id="{id}">', "</gene>")


# --------------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractionGold:
    """What an extraction reply is scored against: the abstract's mention ids and its gold triples."""

    chemicals: frozenset[str]
    genes: frozenset[str]
    relations: frozenset[Triple]
    """Distinct gold (chemical, gene, type) triples; a multi-label pair is one triple per type."""

    def as_record(self) -> dict[str, list[Any]]:
        """JSON-ready form (sorted), the wire format of both adapters' task data."""
        return {
            "chemicals": sorted(self.chemicals),
            "genes": sorted(self.genes),
            "relations": [list(t) for t in sorted(self.relations)],
        }

    @classmethod
    def from_record(cls, record: Any) -> ExtractionGold:
        """Inverse of ``as_record`` (lists of lists, as JSON and the adapters give them back).

        Raises:
            DrugprotDataError: ``record`` is not such a mapping (names the field and what it holds).
        """

        def strings(value: Any, field: str) -> list[str]:
            if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
                raise DrugprotDataError(f"expected a list of id strings, got {str(value)[:80]!r}", field=field)
            return list(value)

        if not isinstance(record, dict):
            raise DrugprotDataError(f"expected a mapping, got {type(record).__name__}", field="extraction")
        relations = record.get("relations")
        if not isinstance(relations, list | tuple):
            raise DrugprotDataError(f"expected a list, got {str(relations)[:80]!r}", field="extraction.relations")
        triples = [strings(t, f"extraction.relations[{i}]") for i, t in enumerate(relations)]
        if any(len(t) != 3 for t in triples):
            raise DrugprotDataError("expected [chemical, gene, type] triples", field="extraction.relations")
        return cls(
            frozenset(strings(record.get("chemicals"), "extraction.chemicals")),
            frozenset(strings(record.get("genes"), "extraction.genes")),
            frozenset((a, b, t) for a, b, t in triples),
        )


def gold_of(document: Document) -> ExtractionGold:
    """The extraction gold of one abstract: its chemical ids, gene ids and distinct scored triples."""
    chemicals = frozenset(e.id for e in document.entities if e.is_chemical)
    genes = frozenset(e.id for e in document.entities if e.is_gene)
    relations = frozenset(
        (r.arg1, r.arg2, r.type)
        for r in document.relations
        if r.type in RELATION_NAMES and r.arg1 in chemicals and r.arg2 in genes
    )
    return ExtractionGold(chemicals, genes, relations)


def check_ids(document: Document, source: str) -> None:
    """Every mention id must be citable in the answer format: no whitespace, ``|``, ``<``, ``>`` or ``"``.

    Raises:
        DrugprotDataError: naming the source, pmid and the entity's field.
    """
    for i, entity in enumerate(document.entities):
        if any(ch in _ID_FORBIDDEN for ch in entity.id):
            raise DrugprotDataError(
                f"entity id {entity.id!r} cannot be cited in extraction mode (it holds whitespace, '|', '<', '>' "
                'or \'"\'); rename it (the official ids are T1, T2, ...) or use mode "pair"',
                source=source,
                pmid=document.pmid,
                field=f"entities[{i}].id",
            )


# --------------------------------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------------------------------


def _tags(entity: Entity) -> tuple[str, str]:
    opening, closing = CHEMICAL_TAG if entity.is_chemical else GENE_TAG
    return opening.format(id=entity.id), closing


def marked_sentences(document: Document) -> str:
    """The title + abstract, one sentence per line, every chemical and gene mention tagged with its id.

    Tags go in by offset: at one position closing tags come before opening ones, an outer (longer) mention
    opens before and closes after an inner one, so nested mentions stay nested. The whitespace between two
    sentences (``document_sentences``) becomes one newline; a tag that falls inside it moves to its end.
    """
    text = document.text
    events: list[tuple[int, int, int, int, str]] = []
    for i, entity in enumerate(e for e in document.entities if e.is_chemical or e.is_gene):
        opening, closing = _tags(entity)
        events.append((entity.start, 2, entity.start - entity.end, i, opening))
        events.append((entity.end, 0, -entity.start, -i, closing))
    spans = document_sentences(document)
    gap_end = {spans[k][1]: spans[k + 1][0] for k in range(len(spans) - 1)}
    events.extend((start, 1, 0, 0, "\n") for start in gap_end)  # after the closing tags there, before opening
    events.sort()
    parts: list[str] = []
    cursor = 0
    for pos, kind, _, _, insert in events:
        pos = max(pos, cursor)  # a tag inside a skipped gap goes to its end
        parts.append(text[cursor:pos])
        parts.append(insert)
        cursor = gap_end[pos] if kind == 1 else pos
    parts.append(text[cursor:])
    return "".join(parts)


@cache
def system_prompt() -> str:
    """The extraction system prompt: protocol, the 13 types with their descriptions, the answer format."""
    defs = "\n".join(f"{o.letter}. {o.name}: {o.description}" for o in RELATION_LABELS)
    return (
        "You are an expert biomedical curator annotating drug-protein relations in PubMed abstracts "
        "(the BioCreative VII DrugProt guidelines).\n"
        "You are given an abstract, one sentence per line, in which every chemical mention is marked "
        '<chemical id="...">...</chemical> and every gene/protein mention <gene id="...">...</gene>. Find every '
        "relation the text states between a chemical mention and a gene/protein mention, and its type. "
        "Relations only hold between a chemical and a gene/protein of the same sentence. A relation links two "
        "mentions, so cite their ids: the same names elsewhere are other mentions. A pair may have several "
        "types; most pairs of a sentence have none.\n\n"
        f"The relation types:\n{defs}\n\n"
        "First reason step by step inside <think> </think> tags. After </think>, give your final answer as "
        f"one block, one relation per line: chemical id {SEPARATOR} gene/protein id {SEPARATOR} type (its "
        "letter or its name), for example\n"
        f"{RELATIONS_OPEN}\nT3 {SEPARATOR} T7 {SEPARATOR} INHIBITOR\nT3 {SEPARATOR} T9 {SEPARATOR} E\n"
        f"{RELATIONS_CLOSE}\n"
        f"List each relation once. If the abstract states none, answer {RELATIONS_OPEN}{NONE_ANSWER}"
        f"{RELATIONS_CLOSE}."
    )


def user_prompt(document: Document) -> str:
    """The user turn of one abstract: the marked text and the request."""
    return (
        f"Abstract (PMID {document.pmid}):\n{marked_sentences(document)}\n\n"
        "List every relation between a marked chemical and a marked gene/protein of the same sentence, "
        f"one per line as chemical id {SEPARATOR} gene/protein id {SEPARATOR} type, inside "
        f"{RELATIONS_OPEN}...{RELATIONS_CLOSE} ({RELATIONS_OPEN}{NONE_ANSWER}{RELATIONS_CLOSE} if there is none)."
    )


def answer_block(relations: Iterable[Triple]) -> str:
    """The answer block naming ``relations`` (``none`` when there are none): a perfect reply's answer."""
    lines = [f"{a} {SEPARATOR} {b} {SEPARATOR} {t}" for a, b, t in relations] or [NONE_ANSWER]
    return RELATIONS_OPEN + "\n" + "\n".join(lines) + "\n" + RELATIONS_CLOSE


# --------------------------------------------------------------------------------------------------
# Reading the answer
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedExtraction:
    """What an extraction reply says, before its ids are checked against the abstract."""

    lines: tuple[Triple, ...] | None
    """``(arg1, arg2, type name)`` of every well-formed relation line, in order; None without an answer."""
    invalid_reason: str | None
    blocks: int = 0
    """How many ``<relations>`` follow the reasoning."""
    stray_tag: bool = False
    malformed: int = 0
    explicit_none: bool = False
    """The block is exactly ``none``."""

    @property
    def relation_lines(self) -> int:
        """Lines that claim a relation: the well-formed ones and the malformed ones (``none`` alone excluded)."""
        return len(self.lines or ()) + self.malformed


def _read_line(line: str) -> Triple | None:
    fields = line.split(SEPARATOR)
    if len(fields) != 3:
        return None
    arg1, arg2 = fields[0].strip(_ASCII_SPACE), fields[1].strip(_ASCII_SPACE)
    if not arg1 or not arg2 or any(ch in _ID_FORBIDDEN for ch in arg1 + arg2):
        return None
    letter, _ = answer_letter(fields[2])
    return None if letter is None else (arg1, arg2, by_letter()[letter].name)


def parse_extraction(content: str | None, reasoning: str | None = None) -> ParsedExtraction:
    """Read the relations block of a reply. Never raises on string input; linear in the input's length, and a block
    longer than ``MAX_RELATIONS_CHARS`` is no answer (``TOO_LONG``) without being read."""
    found = answer_region(content, reasoning)
    if found.invalid_reason is not None:
        return ParsedExtraction(None, found.invalid_reason)
    region = found.text
    blocks = region.count(RELATIONS_OPEN)
    start = region.rfind(RELATIONS_OPEN)
    end = region.find(RELATIONS_CLOSE, start) if start != -1 else -1
    if start == -1 or start < found.last_close or end == -1:  # none, inside a later think block, or unclosed
        return ParsedExtraction(None, NO_BLOCK, blocks, found.stray_tag)
    if end - start - len(RELATIONS_OPEN) > MAX_RELATIONS_CHARS:
        return ParsedExtraction(None, TOO_LONG, blocks, found.stray_tag)
    rows = [row.strip(_ASCII_SPACE) for row in region[start + len(RELATIONS_OPEN) : end].split("\n")]
    rows = [row for row in rows if row]
    if len(rows) == 1 and rows[0].isascii() and rows[0].lower() == NONE_ANSWER:
        return ParsedExtraction((), None, blocks, found.stray_tag, 0, True)
    lines, malformed = [], 0
    for row in rows:
        triple = _read_line(row)
        if triple is None:
            malformed += 1
        else:
            lines.append(triple)
    return ParsedExtraction(tuple(lines), None, blocks, found.stray_tag, malformed)


@dataclass(frozen=True, slots=True)
class ResolvedExtraction:
    """A parsed reply checked against the abstract's mentions: the predicted triples and the rejected lines."""

    relations: tuple[Triple, ...]
    """Distinct predicted triples, chemical id first and gene id second (a swapped line normalised), in answer
    order."""
    unknown_id: int
    wrong_type: int
    duplicate: int


def resolve(lines: Sequence[Triple], gold: ExtractionGold) -> ResolvedExtraction:
    """Sort well-formed lines into predicted triples, unknown ids, wrong entity types and duplicates.

    A gene id first and a chemical id second is read as the chemical-first triple (the official scorer's
    matching; see the module docstring), so it scores, and repeats an earlier line naming the same relation the
    other way round as a duplicate.
    """
    known = gold.chemicals | gold.genes
    kept: dict[Triple, None] = {}
    unknown = wrong = duplicate = 0
    for triple in lines:
        arg1, arg2, kind = triple
        if arg1 in gold.genes and arg2 in gold.chemicals:
            triple = (arg2, arg1, kind)
        if arg1 not in known or arg2 not in known:
            unknown += 1
        elif triple[0] not in gold.chemicals or triple[1] not in gold.genes:
            wrong += 1
        elif triple in kept:
            duplicate += 1
        else:
            kept[triple] = None
    return ResolvedExtraction(tuple(kept), unknown, wrong, duplicate)


def format_reason(parsed: ParsedExtraction, resolved: ResolvedExtraction | None) -> str | None:
    """The first reason the format is not perfect, or None when it is."""
    if parsed.invalid_reason is not None:
        return parsed.invalid_reason
    if parsed.blocks != 1:
        return SEVERAL_BLOCKS
    if parsed.stray_tag:
        return STRAY_THINK_TAG
    if parsed.malformed:
        return MALFORMED
    if resolved is not None:
        for count, reason in ((resolved.unknown_id, UNKNOWN_ID), (resolved.wrong_type, WRONG_TYPE),
                              (resolved.duplicate, DUPLICATE)):  # fmt: skip
            if count:
                return reason
    if not parsed.explicit_none and not parsed.lines:
        return EMPTY_BLOCK
    return None
