"""The reward: accuracy (the reply names one of the pair's gold types) plus a small format term.

This is the one place rewards are computed; the verifiers v1 taskset and the v0 rubric both call
``score_reply`` (through ``SCORES``, so the signals of one rollout share one parse) and take their
weights from ``Weights``: the defaults from ``DEFAULT_WEIGHTS``, a run's from the knobs named by
``weight_knob`` (folded into verifiers' ``task.rewards`` on the v1 stack, the rubric's weights on v0).
The reply rules, and why an answer counts only after completed reasoning, are in ``drugprot.parsing``.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Final

from drugprot.labels import by_letter
from drugprot.parsing import ParsedReply, parse_reply

SCORING_ERROR = "scoring_error"
INFO_KEY = "drugprot"
"""Where both adapters store ``Score.as_info()`` (v1 ``trace.info``, v0 ``state['info']``) for the report."""


@dataclass(frozen=True, slots=True)
class Weights:
    """Reward weights: ``reward = accuracy * accuracy_weight + format * format_weight``."""

    accuracy: float = 1.0
    format: float = 0.1

    def of(self, reward: str) -> float:
        """The weight of the reward named ``reward`` (one of :data:`REWARD_NAMES`)."""
        if reward not in REWARD_NAMES:
            raise KeyError(f"no reward named {reward!r}; the weighted rewards are {', '.join(REWARD_NAMES)}")
        return float(getattr(self, reward))


DEFAULT_WEIGHTS: Final = Weights()
REWARD_NAMES: Final = tuple(f.name for f in fields(Weights))
"""The weighted rewards by name, in order: the v1 ``@vf.reward`` methods and the v0 rubric functions."""


def weight_knob(reward: str) -> str:
    """The knob that sets a reward's weight (``--env.taskset.<knob>``, ``load_environment(<knob>=...)``)."""
    return f"{reward}_weight"


@dataclass(frozen=True, slots=True)
class Score:
    """A scored reply: the two reward terms and what the report needs to explain them."""

    accuracy: float
    format: float
    letter: str | None
    """The predicted option letter, None when the reply gave no valid answer."""
    label: str | None
    """The predicted official name (``NO-RELATION`` for N), None when invalid."""
    invalid_reason: str | None
    format_reason: str | None

    def reward(self, weights: Weights | None = None) -> float:
        weights = weights or DEFAULT_WEIGHTS
        return self.accuracy * weights.accuracy + self.format * weights.format

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
    return Score(
        accuracy=1.0 if label is not None and label in gold_labels else 0.0,
        format=1.0 if format_reason is None else 0.0,
        letter=parsed.letter,
        label=label,
        invalid_reason=parsed.invalid_reason,
        format_reason=format_reason,
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


class ScoreCache:
    """``score_reply`` memoised on a digest of the reply, least recently used first out.

    The adapters score each rollout several times (accuracy, format, answered); this makes that one
    parse. Keys are 16-byte digests, never the replies themselves, so memory stays at ``size`` small
    entries (a few hundred bytes each) however long the replies are.
    """

    def __init__(self, size: int = 4096) -> None:
        if size < 1:
            raise ValueError(f"ScoreCache size must be at least 1, got {size}")
        self.size = size
        self._entries: OrderedDict[bytes, Score] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def score(
        self,
        content: str | None,
        reasoning: str | None,
        gold_labels: Sequence[str],
        *,
        with_no_relation: bool = False,
    ) -> Score:
        """``score_reply(content, reasoning, gold_labels, with_no_relation=...)``, from the cache when seen."""
        try:
            key = reply_key(content, reasoning, gold_labels, with_no_relation)
        except (AttributeError, TypeError):  # not text: no cache, and score_reply records why it scores 0
            return score_reply(content, reasoning, tuple(gold_labels), with_no_relation=with_no_relation)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
        score = score_reply(content, reasoning, tuple(gold_labels), with_no_relation=with_no_relation)
        with self._lock:
            self._entries[key] = score
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return score


SCORES = ScoreCache()
"""The process-wide cache both adapters score through."""
