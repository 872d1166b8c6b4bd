"""Sentence splitting and THE candidate rule: the (chemical, gene) mention pairs a run can ask about or predict.

The rule, one for gold and NO-RELATION pairs alike: a candidate is a (chemical, gene) mention pair whose two
mentions start in the same sentence (``document_sentences``), gold or not. A gold relation of a pair that is not a
candidate (its mentions in two sentences, e.g. after a splitting error) is not a task in pair mode in any setting,
so no question can reveal it: asking it while NO-RELATION comes only from same-sentence pairs would make "the
mentions are in different sentences" mean "related", a label leak. Such relations stay in the gold of their
abstract and count in the report's ceiling (``ceiling_of``): relations the run can never predict (in pair mode
also the second gold type of a multi-label pair: one answer names one type). Extraction
mode's prompt shows the same sentences, one per line, and states the same rule. On the 350-abstract real
training sample every one of the 1,759 gold relations is on a candidate (6,049 candidates, of the 54,358 chemical
x gene combinations the official script scores), and 29 of them are a second type of a multi-label pair, so pair
mode reaches at most 1,730 (``Ceiling.one_per_pair``).

DrugProt lists only positive relations; a no-relation example is a candidate pair that has no gold relation of
any type. This module defines, deterministically and without dependencies:

* ``split_sentences``: a rule-based splitter tuned for PubMed titles and abstracts;
* ``candidate_pairs``: every same-sentence (chemical id, gene id) mention pair of a document;
* ``negative_pairs``: the candidates with no gold relation (the ``negatives="all"`` setting, i.e. the
  official extraction setting restricted to same-sentence pairs);
* ``sample_negatives``: ``k`` negatives per positive, sampled per document with a
  stable hash, so a document's sample never depends on the other documents or on iteration order.
"""

from __future__ import annotations

import bisect
import hashlib
import operator
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from drugprot.core.errors import DrugprotArgumentError
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.schema import CHEMICAL_TYPES, GENE_TYPES, Document, Entity

Span = tuple[int, int]
Pair = tuple[str, str]
_SCORED = frozenset(RELATION_NAMES)

# --------------------------------------------------------------------------------------------------
# Sentence splitting
# --------------------------------------------------------------------------------------------------

# Abbreviations after which a period never ends a sentence, whatever follows ("e.g. PEG", "vs. 2007",
# "et al. (2004)", "Fig. 2"). Compared case-sensitively, without the final period and any opening bracket,
# so that chemical symbols and acronyms still end sentences ("Ca.", "Al.", "CF.", "MR.").
_LOWER_ONLY = ("al", "ca", "eg", "ie")
_CAPITALISABLE = (
    "e.g",
    "i.e",
    "vs",
    "cf",
    "approx",
    "viz",
    "resp",
    "fig",
    "figs",
    "ref",
    "refs",
    "eq",
    "eqs",
    "expt",
    "expts",
)
_NEVER_FINAL = frozenset(_LOWER_ONLY + _CAPITALISABLE + tuple(w[0].upper() + w[1:] for w in _CAPITALISABLE))
# Abbreviations that do not end a sentence when a number follows ("No. 5", "pp. 12-15"; case-sensitive).
_NOT_FINAL_BEFORE_NUMBER = frozenset({"No", "no", "Nos", "nos", "Nr", "Vol", "vol", "p", "pp"})
# Spelled-out Greek letters that may start a sentence in lower case ("beta 2-Adrenoceptor ...").
_GREEK_NAMES = frozenset(
    {
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "omicron",
        "pi",
        "rho",
        "sigma",
        "tau",
        "upsilon",
        "phi",
        "chi",
        "psi",
        "omega",
    }
)
_TERMINAL = ".?!"
_CLOSERS = ")]}\"'\u201d\u2019"
_OPENERS = "([{\"'\u201c\u2018"
_TOKEN = re.compile(r"\S+")
# The end of a token whose last character, ignoring closing brackets and quotes, is a terminal: the only
# tokens that can end a sentence (at most one match per token).
_CANDIDATE_END = re.compile(r"[.?!][)\]}\"'\u201d\u2019]*(?!\S)")
_LIST_MARKER = re.compile(r"\d{1,2}")
_GREEK_WORD = re.compile(r"([a-z]+)(?:$|[-\d(])")
_INITIAL = re.compile(r"\(?(?:[A-Z]\.)+,?")
_SURNAME = re.compile(r"[A-Z][a-z'\-]+,")


def _is_lowercase_word(token: str) -> bool:
    """True if ``token`` reads as an ordinary lower-case continuation word (``coli``, ``and``, ``is``).

    Lower-case-initial biomedical names that carry an upper-case letter or a digit (``cAMP``, ``mRNA``,
    ``p53``, ``siRNAs``) and spelled Greek letters (``beta``, ``gamma-Globin``) are not: they can start
    a sentence.
    """
    if not token[0].islower() or not token[0].isascii():
        return False
    if any(ch.isupper() or ch.isdigit() for ch in token):
        return False
    greek = _GREEK_WORD.match(token)
    return not (greek and greek.group(1) in _GREEK_NAMES)


def _ends_sentence(token: str, following: str, previous: str, first_in_sentence: bool) -> bool:
    """Whether the sentence ends after ``token`` given the next whitespace-separated ``following`` token.

    Args:
        token: the token that may close the sentence (e.g. ``"cells."``, ``"Ca(2+)."``, ``"(e.g."``).
        following: the next token.
        previous: the token before ``token`` (``""`` at the start of the region).
        first_in_sentence: ``token`` is the first token of the current sentence.

    Returns:
        True when ``token`` ends with ``.``, ``?`` or ``!`` (optionally followed by closing brackets or
        quotes) and none of the exceptions applies; see ``split_sentences`` for the rules.
    """
    body = token.rstrip(_CLOSERS)
    if not body or body[-1] not in _TERMINAL:
        return False
    nxt = following[0]
    if nxt in ",;:)]}" or _is_lowercase_word(following):
        return False
    if body[-1] != ".":
        return True
    word = body.rstrip(".").lstrip(_OPENERS)
    if word in _NEVER_FINAL:
        return False
    if nxt.isdigit() and word in _NOT_FINAL_BEFORE_NUMBER:
        return False
    # Author initials: "Salem, M. A. E. L., Holtz", "Moulin, P. Inhibitory", "(J. A. Gilbert".
    if _INITIAL.fullmatch(token) and (
        _INITIAL.fullmatch(following) or _INITIAL.fullmatch(previous) or _SURNAME.fullmatch(previous)
    ):
        return False
    # "1. The ...", "3. DHE and ...": a numbered-paragraph marker opening a sentence stays with it.
    return not (first_in_sentence and _LIST_MARKER.fullmatch(word) and token == body)


def _split_region(text: str, start: int, end: int) -> list[Span]:
    """Sentence spans of ``text[start:end]``, as absolute offsets; see ``split_sentences``.

    Only tokens that can end a sentence (``_CANDIDATE_END``: a terminal, then closers, at the token's end)
    are examined, and the neighbours ``_ends_sentence`` needs are looked up for those alone (6 % of the
    tokens of the generated corpus). The result equals testing every token in turn, which
    ``tests/core/test_candidates.py`` checks on random text.
    """
    region = text[start:end]
    stripped = region.rstrip()
    if not stripped:
        return []
    last_end = len(stripped)  # end of the last token: it always closes the final sentence
    sentence_start = len(region) - len(region.lstrip())  # first token of the current sentence
    spans: list[Span] = []
    for match in _CANDIDATE_END.finditer(region, 0, last_end):
        tok_end = match.end()
        if tok_end == last_end:
            break
        # [..., previous token, token] of the current sentence up to the candidate; one item: it opens it.
        head = region[sentence_start:tok_end].rsplit(None, 2)
        following = _TOKEN.search(region, tok_end)
        if following is None:  # cannot happen before the last token; kept for the type checker
            break
        first = len(head) == 1
        if _ends_sentence(head[-1], following.group(), "" if first else head[-2], first):
            spans.append((sentence_start + start, tok_end + start))
            sentence_start = following.start()
    spans.append((sentence_start + start, last_end + start))
    return spans


def split_sentences(text: str, title_end: int | None = None) -> list[Span]:
    """Split a PubMed title + abstract into sentences with deterministic rules.

    Tokens are maximal runs of non-whitespace (Unicode whitespace, so no-break and thin spaces separate
    tokens too). A sentence ends after a token whose last character, ignoring closing brackets and quotes,
    is ``.``, ``?`` or ``!`` (so ``Ca(2+).`` and ``(n = 5).`` end sentences but ``0.5`` and ``Ca(2+).The``
    never do), unless:

    * the next token starts with ``, ; : ) ] }``, or is an ordinary lower-case word (``E. coli``,
      ``i.c.v. is``); a lower-case-initial token with an upper-case letter or digit (``cAMP``, ``mRNA``,
      ``p53``) or a spelled Greek letter (``beta``, ``gamma-Globin``) can still start a sentence;
    * the token is an abbreviation that never ends a sentence: e.g., i.e., eg., ie., et al., vs., cf., ca.,
      approx., viz., resp., fig(s)., ref(s)., eq(s)., expt(s)., also capitalised (``Fig.``, ``E.g.``) except
      al./ca. (``Al.``, ``Ca.`` are elements), and also after an opening bracket (``(e.g.``);
    * the token is No./no./Nos./nos./Nr./Vol./vol./p./pp. and the next token starts with a digit;
    * the token is a one- or two-digit list marker (``1.``) that opens the current sentence: numbered
      paragraphs ``1. The ...`` stay one sentence.

    Single upper-case letters end sentences before a capitalised word (``protein kinase C. Upon``,
    ``antimycin A. Our``), so author initials followed by a capitalised surname are split (rare in
    abstracts).

    Args:
        text: the document text (``title + " " + abstract`` in DrugProt).
        title_end: if given, a sentence boundary is forced at this offset (the title is its own sentence
            or sentences, even without a final period); the title is split further by the same rules.

    Returns:
        Sentence spans ``(start, end)``, end-exclusive, in order, each starting and ending on a
        non-whitespace character; together they cover every non-whitespace character of ``text`` once.
        Empty or all-whitespace ``text`` gives ``[]``.

    Raises:
        DrugprotArgumentError: ``title_end`` is outside ``[0, len(text)]``.
    """
    if title_end is None:
        return _split_region(text, 0, len(text))
    if not 0 <= title_end <= len(text):
        raise DrugprotArgumentError(f"title_end {title_end} is outside the text (length {len(text)})")
    return _split_region(text, 0, title_end) + _split_region(text, title_end, len(text))


def document_sentences(doc: Document) -> list[Span]:
    """The sentence spans of a document, with the title forced to end a sentence.

    The title boundary is ``len(doc.title)`` when ``doc.text`` starts with ``doc.title`` (the DrugProt
    layout ``title + " " + abstract``); otherwise no boundary is forced.
    """
    title_end = len(doc.title) if doc.title and doc.text.startswith(doc.title) else None
    return split_sentences(doc.text, title_end=title_end)


# --------------------------------------------------------------------------------------------------
# Candidate pairs
# --------------------------------------------------------------------------------------------------

_AFTER_ANY_END = float("inf")  # (offset, inf) sorts after every span starting at or before offset


def sentence_index(spans: list[Span], offset: int) -> int:
    """Index of the sentence containing ``offset``: the last span starting at or before it.

    An offset in the whitespace between two sentences belongs to the earlier one; an offset before the
    first sentence belongs to sentence 0. Returns -1 only when ``spans`` is empty.
    """
    return max(bisect.bisect_right(spans, (offset, _AFTER_ANY_END)) - 1, 0) if spans else -1


_POSITION = operator.attrgetter("start", "end", "id")


def _overlap(a: Entity, b: Entity) -> bool:
    return a.start < b.end and b.start < a.end


def candidate_pairs(doc: Document, *, overlapping: bool = True) -> list[Pair]:
    """Every (chemical id, gene id) mention pair whose two mentions are in the same sentence.

    A mention belongs to the sentence containing its start offset (``sentence_index``), so a mention
    that crosses a sentence boundary (a splitting error) counts in the sentence where it starts. Sentences
    come from ``document_sentences``. Chemicals are mentions of type ``CHEMICAL``, genes ``GENE``,
    ``GENE-Y`` or ``GENE-N``; other types are ignored.

    Args:
        doc: the document.
        overlapping: keep pairs whose two spans overlap (a chemical nested in a gene mention, e.g.
            ``NADPH`` in ``NADPH oxidase``). They are kept by default because the official scorer scores
            every chemical x gene combination; pass False to drop them.

    Returns:
        Distinct ``(chemical id, gene id)`` pairs ordered by the chemical mention's ``(start, end, id)``,
        then the gene mention's ``(start, end, id)``: deterministic and independent of entity order.
    """
    spans = document_sentences(doc)
    chems: list[tuple[int, Entity]] = []
    genes_by_sentence: dict[int, list[Entity]] = {}
    # In (start, end, id) order, so pairs come out sorted without sorting them: a sentence's mentions start
    # after every mention of an earlier sentence.
    for entity in sorted(doc.entities, key=_POSITION):
        if entity.type in CHEMICAL_TYPES:
            chems.append((sentence_index(spans, entity.start), entity))
        elif entity.type in GENE_TYPES:
            genes_by_sentence.setdefault(sentence_index(spans, entity.start), []).append(entity)
    pairs = [
        (chem.id, gene.id)
        for sentence, chem in chems
        for gene in genes_by_sentence.get(sentence, ())
        if overlapping or not _overlap(chem, gene)
    ]
    return list(dict.fromkeys(pairs))  # distinct even for a hand-built document with repeated ids


@dataclass(frozen=True, slots=True)
class Ceiling:
    """What the candidate rule leaves predictable of one abstract's gold (the report sums it over abstracts)."""

    gold: int
    """Distinct gold relations (chemical id, gene id, type) of the 13 scored types."""
    candidates: int
    """Those whose (chemical, gene) pair is a candidate (``candidate_pairs``); the others can never be predicted.
    Extraction mode can reach all of them: a reply may list several types for one pair."""
    one_per_pair: int
    """The distinct candidate pairs with a gold relation: what pair mode can reach at most, because one answer
    names one type, so a multi-label pair's other gold types are false negatives of every pair-mode run."""

    def as_record(self) -> list[int]:
        """``[gold, candidates, one_per_pair]``: the task data's ``ceiling`` (JSON)."""
        return [self.gold, self.candidates, self.one_per_pair]


def ceiling_of(doc: Document, candidates: Collection[Pair] | None = None) -> Ceiling:
    """The abstract's gold relations, how many of them are on candidate pairs (``candidates``, computed with
    ``candidate_pairs`` when not given) and how many one answer per candidate pair can reach."""
    relations = {(rel.arg1, rel.arg2, rel.type) for rel in doc.relations if rel.type in _SCORED}
    if not relations:
        return Ceiling(0, 0, 0)
    pairs = set(candidate_pairs(doc) if candidates is None else candidates)
    reached = [(chemical, gene) for chemical, gene, _ in relations if (chemical, gene) in pairs]
    return Ceiling(len(relations), len(reached), len(set(reached)))


def gold_pairs(doc: Document) -> set[Pair]:
    """The distinct (chemical id, gene id) pairs with at least one gold relation (any type)."""
    return {(rel.arg1, rel.arg2) for rel in doc.relations}


def negative_pairs(doc: Document, *, overlapping: bool = True, candidates: Iterable[Pair] | None = None) -> list[Pair]:
    """Same-sentence candidate pairs with no gold relation of any type, in ``candidate_pairs`` order
    (``candidates``: the document's ``candidate_pairs``, when the caller has them)."""
    gold = gold_pairs(doc)
    pool = candidate_pairs(doc, overlapping=overlapping) if candidates is None else candidates
    return [pair for pair in pool if pair not in gold]


def _rank(seed: int, pmid: str, pair: Pair) -> bytes:
    """Stable pseudo-random rank of a pair: SHA-256 of ``seed, pmid, chemical, gene``."""
    return hashlib.sha256(f"{seed}\t{pmid}\t{pair[0]}\t{pair[1]}".encode()).digest()


def sample_negatives(
    docs: Iterable[Document], per_positive: int, seed: int, *, overlapping: bool = True
) -> dict[str, list[Pair]]:
    """Sample ``per_positive`` no-relation pairs per positive pair, per document, deterministically.

    Rule, per document: ``n = min(k * max(P, 1), N)`` where ``k = per_positive``, ``P`` is the number of
    distinct gold (chemical, gene) pairs of the document (one positive question per gold pair, whatever its
    number of relation types) and ``N`` the number of its ``negative_pairs``. So an abstract without any
    relation still gives ``k`` negatives: such abstracts are common in DrugProt (about 30% of the training
    abstracts) and hold a fifth of the same-sentence negatives of the 350-abstract sample; leaving them
    out would teach that every abstract relates something. The ``n`` negatives kept are those with the
    smallest SHA-256 of ``(seed, pmid, chemical id, gene id)``.

    Why per document and hashed: a document's sample depends only on that document and the seed (not on
    the other documents, their order, or Python's salted ``hash``), so subsets and splits stay stable;
    negatives come mostly from the abstracts of the positives, so the text does not give the label away;
    and samples are nested (the negatives for ``k`` are a subset of those for ``k + 1``). The cost:
    documents with fewer than ``k * P`` candidates give all they have, so the overall ratio is below ``k``
    (on the 350-abstract training sample: 0.85 for ``k = 1``, 1.31 for ``k = 2``; ``"all"`` is 2.50);
    ``negative_ratio`` reports it.

    Args:
        docs: the documents.
        per_positive: ``k >= 0``; 0 gives no negatives.
        seed: any integer.
        overlapping: passed to ``negative_pairs``.

    Returns:
        pmid -> sampled pairs in ``candidate_pairs`` order, for every document (possibly an empty list).

    Raises:
        DrugprotArgumentError: ``per_positive`` is negative or not an int.
    """
    if isinstance(per_positive, bool) or not isinstance(per_positive, int) or per_positive < 0:
        raise DrugprotArgumentError(f"per_positive must be a non-negative int, got {per_positive!r}")
    sampled: dict[str, list[Pair]] = {}
    for doc in docs:
        pool = negative_pairs(doc, overlapping=overlapping)
        n = min(per_positive * max(len(gold_pairs(doc)), 1), len(pool))
        keep = set(sorted(pool, key=lambda pair, pmid=doc.pmid: _rank(seed, pmid, pair))[:n])
        sampled[doc.pmid] = [pair for pair in pool if pair in keep]
    return sampled


def negative_ratio(docs: Iterable[Document], negatives: Mapping[str, list[Pair]]) -> float:
    """Negatives per positive pair over ``docs`` (0.0 when there are no positives)."""
    positives = 0
    count = 0
    for doc in docs:
        positives += len(gold_pairs(doc))
        count += len(negatives.get(doc.pmid, []))
    return count / positives if positives else 0.0
