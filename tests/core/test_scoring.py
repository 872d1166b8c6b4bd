"""Tests of drugprot.core.scoring: the score of a reply (accuracy, format, cells) and its caches (the reward terms
and weights: ``tests/core/test_rewards.py``)."""

from __future__ import annotations

import pytest

from drugprot.core.errors import DrugprotArgumentError
from drugprot.core.scoring import ExtractionScoreCache, ScoreCache, score_reply
from tests.core.test_parsing import GOLD, NR_CASES, T


@pytest.mark.parametrize(("content", "letter", "accuracy", "fmt"), NR_CASES)
def test_no_relation_option(content, letter, accuracy, fmt) -> None:
    score = score_reply(content, None, ["NO-RELATION"], with_no_relation=True)
    assert (score.letter, score.accuracy, score.format) == (letter, accuracy, fmt)


@pytest.mark.parametrize("junk", ["\\boxed{" * 50, "}" * 10 + "\\boxed{}", "\x00\\boxed{\ud800}", "</think>" * 3])
def test_scoring_never_raises(junk: str) -> None:
    score = score_reply(junk, junk, GOLD)
    assert score.accuracy == 0.0 and score.letter is None and score.invalid_reason is not None


def test_score_cache_keeps_digests_not_replies() -> None:
    from drugprot.core.scoring import ScoreCache

    cache = ScoreCache(size=4)
    replies = [T + f"\\boxed{{{letter}}}" + " " * 1_000_000 for letter in "ABCDEFGH"]
    scores = [cache.score(reply, None, GOLD) for reply in replies]
    assert [s.letter for s in scores] == list("ABCDEFGH")
    assert len(cache) == 4
    assert all(len(key) == 16 for key in cache._entries)
    assert all(len(str(value)) < 300 for value in cache._entries.values())  # scores only, no reply text
    assert cache.score(replies[-1], None, GOLD) is scores[-1]  # a hit
    assert cache.score(replies[-1], None, ["AGONIST"]).accuracy == 0.0  # the gold is part of the key
    assert cache.score(replies[-1], None, GOLD, with_no_relation=True) is not scores[-1]
    assert cache.score(None, None, GOLD) is not cache.score("", None, GOLD)  # None and "" are different keys
    assert len(cache) == 4


def test_score_cache_scores_non_text_as_an_error_instead_of_raising() -> None:
    from drugprot.core.scoring import ScoreCache

    score = ScoreCache().score([{"type": "text", "text": "x"}], None, GOLD)  # type: ignore[arg-type]
    assert (score.accuracy, score.format) == (0.0, 0.0)
    assert score.invalid_reason is not None and score.invalid_reason.startswith("scoring_error")


@pytest.mark.parametrize("cache", [ScoreCache, ExtractionScoreCache])
def test_a_cache_needs_room_for_one_score(cache: type) -> None:
    with pytest.raises(DrugprotArgumentError) as err:
        cache(size=0)
    assert str(err.value) == f"{cache.__name__} size must be at least 1, got 0"
