"""Scoring a reply: its accuracy and format terms and its official-metric cells (TP, FP, FN).

This is the one place replies are scored; the verifiers v1 taskset and the v0 rubric both call
``drugprot.modes.task.score_task``, which asks the task's mode (pair: ``score_reply`` through ``SCORES``, so the
signals of one rollout share one parse), and turn the score into reward terms with ``drugprot.core.rewards.Reward``
(accuracy, utility, format and their weights).
The reply rules, and why an answer counts only after completed reasoning, are in ``drugprot.core.parsing``.

Extraction mode (one task per abstract, ``drugprot.core.extraction``) is scored here too: ``score_extraction``
(through ``EXTRACTION_SCORES``) gives the per-document F1 over (chemical, gene, type) triples, the cells and the
same format term.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from drugprot.core.errors import DrugprotArgumentError
from drugprot.core.extraction import ExtractionGold, ParsedExtraction, format_reason, parse_extraction, resolve
from drugprot.core.labels import RELATION_NAMES, by_letter
from drugprot.core.metrics import prf
from drugprot.core.parsing import ParsedReply, parse_reply

SCORER_VERSION = "4"
"""Version of the reply rules and the rewards (``drugprot.core.parsing``, this module and ``drugprot.core.rewards``),
recorded in every rollout (``drugprot.core.versions``) and printed by ``drugprot report``. Bump it (a new integer)
whenever a change makes some reply parse or score differently: a reward, letter, label or reason. Version 2: an
answer counts only after completed, non-empty reasoning in every path (reason ``reasoning_incomplete``, which
replaced version 1's ``unterminated_think`` and ``no_reasoning``). Version 3: the utility reward term over the
official cells (TP, FP, FN) every score now carries, and the ``reward`` knob (default ``utility``); an
extraction line with its arguments swapped (gene id first) is the same relation, read chemical-first, as the
official scorer reads it (it was ``wrong_entity_type``); Unicode whitespace (NBSP ...) around a boxed answer is
whitespace; an extraction relations block over ``MAX_RELATIONS_CHARS`` is no answer (``relations_block_too_long``).
Version 4: every cost and weight, and the accuracy term, on the reward grid (multiples of 1/64, ``rewards.on_grid``),
the format weight 1/8 (was 0.1), so prime-rl's float32 advantage of a group of equal rewards is exactly 0
(``rewards.exact_group_means``).
``tests/core/test_versions.py`` pins a digest of the scores of a table of replies per version and fails until the
bump is made."""

_RELATION_TYPES: Final = frozenset(RELATION_NAMES)
SCORING_ERROR = "scoring_error"
INFO_KEY = "drugprot"
"""Where both adapters store ``Score.as_info()`` (v1 ``trace.info``, v0 ``state['info']``) for the report."""


@dataclass(frozen=True, slots=True)
class Score:
    """A scored reply: the accuracy and format terms, the official cells and what the report needs to explain them."""

    accuracy: float
    format: float
    letter: str | None
    """The predicted option letter, None when the reply gave no valid answer."""
    label: str | None
    """The predicted official name (``NO-RELATION`` for N), None when invalid."""
    invalid_reason: str | None
    format_reason: str | None
    tp: int = 0
    """Official-metric cells of this pair's reply (one per relation type, multi-label gold): 1 when the answered
    type is one of the gold types."""
    fp: int = 0
    """1 when the reply names a relation type (not N) that is not a gold type of the pair."""
    fn: int = 0
    """Gold relation types of the pair the reply does not name (NO-RELATION is never a gold type)."""

    @property
    def answered(self) -> bool:
        """Whether the reply gave a valid option letter."""
        return self.letter is not None

    def as_info(self) -> dict[str, str | None]:
        """JSON-ready record of the prediction, stored on traces for ``drugprot report``."""
        return {
            "letter": self.letter,
            "label": self.label,
            "invalid_reason": self.invalid_reason,
            "format_reason": self.format_reason,
        }


def score_parsed(
    parsed: ParsedReply, gold_labels: tuple[str, ...] | list[str], *, with_no_relation: bool = False
) -> Score:
    """Score an already-parsed reply against the pair's gold label names."""
    label = by_letter(with_no_relation)[parsed.letter].name if parsed.letter is not None else None
    format_reason = parsed.format_reason  # a property: computed once, not twice
    gold_types = {name for name in gold_labels if name in _RELATION_TYPES}
    stated = label if label in _RELATION_TYPES else None  # N and no answer state no relation
    tp = int(stated is not None and stated in gold_types)
    return Score(
        accuracy=1.0 if label is not None and label in gold_labels else 0.0,
        format=1.0 if format_reason is None else 0.0,
        letter=parsed.letter,
        label=label,
        invalid_reason=parsed.invalid_reason,
        format_reason=format_reason,
        tp=tp,
        fp=int(stated is not None and not tp),
        fn=len(gold_types) - tp,
    )


def score_reply(
    content: str | None,
    reasoning: str | None,
    gold_labels: tuple[str, ...] | list[str],
    *,
    with_no_relation: bool = False,
) -> Score:
    """Parse and score one reply. Never raises: an unexpected failure is a zero score with its reason."""
    try:
        parsed = parse_reply(content, reasoning, with_no_relation=with_no_relation)
        return score_parsed(parsed, gold_labels, with_no_relation=with_no_relation)
    except Exception as exc:  # a scorer bug must not lose the rollout: record it instead
        return Score(0.0, 0.0, None, None, f"{SCORING_ERROR}: {type(exc).__name__}: {exc}", SCORING_ERROR)


def _frame(digest: hashlib.blake2b, text: str | None) -> None:
    """Feed ``text`` to ``digest`` so that None, "" and every string hash apart (length-prefixed)."""
    if text is None:
        digest.update(b"\x00")
        return
    data = text.encode("utf-8", "surrogatepass")
    digest.update(b"\x01" + len(data).to_bytes(8, "little"))
    digest.update(data)


def reply_key(content: str | None, reasoning: str | None, gold_labels: Sequence[str], with_no_relation: bool) -> bytes:
    """A 16-byte digest of everything a score depends on (BLAKE2b: collisions are not a practical concern)."""
    digest = hashlib.blake2b(digest_size=16)
    _frame(digest, content)
    _frame(digest, reasoning)
    for label in gold_labels:
        _frame(digest, label)
    digest.update(b"\x01" if with_no_relation else b"\x00")
    return digest.digest()


T = TypeVar("T")


class _DigestCache(Generic[T]):  # noqa: UP046 (the package supports Python 3.11)
    """An LRU memo keyed on 16-byte reply digests, shared by both modes' caches: least recently used first out,
    thread-safe, and never holding the replies themselves, so memory stays at ``size`` small entries."""

    def __init__(self, size: int = 4096) -> None:
        if size < 1:
            raise DrugprotArgumentError(f"{type(self).__name__} size must be at least 1, got {size}")
        self.size = size
        self._entries: OrderedDict[bytes, T] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def _through(self, key: bytes, compute: Callable[[], T]) -> T:
        """The entry for ``key``, computed (outside the lock) and stored on a miss."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
        value = compute()
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value


class ScoreCache(_DigestCache[Score]):
    """``score_reply`` memoised on a digest of the reply, least recently used first out.

    The adapters score each rollout several times (accuracy, format, answered); this makes that one
    parse. Keys are 16-byte digests, never the replies themselves, so memory stays at ``size`` small
    entries (a few hundred bytes each) however long the replies are.
    """

    def score(
        self,
        content: str | None,
        reasoning: str | None,
        gold_labels: Sequence[str],
        *,
        with_no_relation: bool = False,
    ) -> Score:
        """``score_reply(content, reasoning, gold_labels, with_no_relation=...)``, from the cache when seen."""

        def compute() -> Score:
            return score_reply(content, reasoning, tuple(gold_labels), with_no_relation=with_no_relation)

        try:
            key = reply_key(content, reasoning, gold_labels, with_no_relation)
        except (AttributeError, TypeError):  # not text: no cache, and score_reply records why it scores 0
            return compute()
        return self._through(key, compute)


SCORES = ScoreCache()
"""The process-wide cache both adapters score through."""


# --------------------------------------------------------------------------------------------------
# Extraction mode (``mode="extraction"``, one task per abstract; see ``drugprot.core.extraction``)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractionScore:
    """A scored extraction reply: the two reward terms, per-document counts and the rejected lines.

    ``accuracy`` is the document's F1 over (chemical, gene, type) triples with the official matching:
    ``2TP / (2TP + FP + FN)``; 1 when the gold and the answer are both empty; 0 without an answer, and 0 when
    the gold is empty and the answer claims any relation (even one that names no mention of the abstract).
    """

    accuracy: float
    format: float
    relations: tuple[tuple[str, str, str], ...]
    """The predicted triples that were scored, in answer order (None-free, distinct)."""
    tp: int
    fp: int
    fn: int
    malformed: int
    unknown_id: int
    wrong_type: int
    duplicate: int
    invalid_reason: str | None
    format_reason: str | None

    @property
    def answered(self) -> bool:
        """Whether a relations block was read (``none`` included)."""
        return self.invalid_reason is None

    def as_info(self) -> dict[str, object]:
        """JSON-ready record of the prediction, stored under ``INFO_KEY`` for ``drugprot report``."""
        return {
            "mode": "extraction",
            "relations": [list(t) for t in self.relations],
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "malformed": self.malformed,
            "unknown_id": self.unknown_id,
            "wrong_entity_type": self.wrong_type,
            "duplicate": self.duplicate,
            "invalid_reason": self.invalid_reason,
            "format_reason": self.format_reason,
        }


def score_extraction_parsed(parsed: ParsedExtraction, gold: ExtractionGold) -> ExtractionScore:
    """Score an already-parsed extraction reply against one abstract's gold."""
    if parsed.lines is None:
        return ExtractionScore(0.0, 0.0, (), 0, 0, len(gold.relations), 0, 0, 0, 0, parsed.invalid_reason,
                               format_reason(parsed, None))  # fmt: skip
    resolved = resolve(parsed.lines, gold)
    tp = sum(1 for triple in resolved.relations if triple in gold.relations)
    fp, fn = len(resolved.relations) - tp, len(gold.relations) - tp
    # Empty gold: 1 only for an answer that claims nothing (``none``, or no line); otherwise the official F1.
    accuracy = float(parsed.relation_lines == 0) if not gold.relations else prf(tp, fp, fn)[2]
    reason = format_reason(parsed, resolved)
    return ExtractionScore(
        accuracy=accuracy,
        format=1.0 if reason is None else 0.0,
        relations=resolved.relations,
        tp=tp,
        fp=fp,
        fn=fn,
        malformed=parsed.malformed,
        unknown_id=resolved.unknown_id,
        wrong_type=resolved.wrong_type,
        duplicate=resolved.duplicate,
        invalid_reason=None,
        format_reason=reason,
    )


def score_extraction(content: str | None, reasoning: str | None, gold: ExtractionGold) -> ExtractionScore:
    """Parse and score one extraction reply. Never raises: an unexpected failure is a zero score with its reason."""
    try:
        return score_extraction_parsed(parse_extraction(content, reasoning), gold)
    except Exception as exc:  # a scorer bug must not lose the rollout: record it instead
        reason = f"{SCORING_ERROR}: {type(exc).__name__}: {exc}"
        return ExtractionScore(0.0, 0.0, (), 0, 0, 0, 0, 0, 0, 0, reason, SCORING_ERROR)


class ExtractionScoreCache(_DigestCache[ExtractionScore]):
    """``score_extraction`` memoised on a digest of the reply and the gold (see ``ScoreCache``)."""

    def score(self, content: str | None, reasoning: str | None, gold: ExtractionGold) -> ExtractionScore:
        try:
            digest = hashlib.blake2b(digest_size=16)
            _frame(digest, content)
            _frame(digest, reasoning)
            for part in (sorted(gold.chemicals), sorted(gold.genes), ["\t".join(t) for t in sorted(gold.relations)]):
                digest.update(b"\x02")
                for item in part:
                    _frame(digest, item)
            key = digest.digest()
        except (AttributeError, TypeError):  # not text: no cache, and score_extraction records why it scores 0
            return score_extraction(content, reasoning, gold)
        return self._through(key, lambda: score_extraction(content, reasoning, gold))


EXTRACTION_SCORES = ExtractionScoreCache()
"""The process-wide extraction cache both adapters score through."""
