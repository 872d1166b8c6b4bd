"""The reply parser's specification (``CASES``), run against the framework-free core; ``tests/envs`` runs the
same table through the v1 taskset and the v0 rubric."""

from __future__ import annotations

import sys

import pytest

from drugprot.core import parsing
from drugprot.core.rewards import PRESETS, Reward
from drugprot.core.scoring import score_reply

GOLD = ["INHIBITOR", "SUBSTRATE"]  # a multi-label pair: E and K are both correct
T = "<think>The text says the chemical inhibits the enzyme.</think>"

# (content, reasoning_content, expected letter, accuracy, format, invalid reason, format reason)
INCOMPLETE = ("reasoning_incomplete", "reasoning_incomplete")
CASES = [
    (T + "\\boxed{E}", None, "E", 1, 1, None, None),
    (T + "\\boxed{K}", None, "K", 1, 1, None, None),
    (T + "\\boxed{A}", None, "A", 0, 1, None, None),
    (T + "\\boxed{ e }", None, "E", 1, 1, None, None),
    (T + "\\boxed{\u00a0E\u00a0}", None, "E", 1, 1, None, None),  # no-break spaces around the letter are whitespace
    (T + "\\boxed{\u2003e\u3000}", None, "E", 1, 1, None, None),  # em space, ideographic space
    (T + "\\boxed{\u00a0\\text{\u202fE\u202f}\u00a0}", None, "E", 1, 1, None, None),
    (T + "\\boxed{\\text{E}}", None, "E", 1, 1, None, None),
    (T + "\\boxed{\\textbf{e}}", None, "E", 1, 1, None, None),
    (T + "\\boxed{$E$}", None, "E", 1, 1, None, None),
    (T + "\\boxed{ \\text { $ \\mathbf{E} $ } }", None, "E", 1, 1, None, None),
    (T + "\\boxed{(E)}", None, "E", 1, 1, None, None),
    (T + "\\boxed{E. INHIBITOR}", None, "E", 1, 1, None, None),
    (T + "\\boxed{E) INHIBITOR}", None, "E", 1, 1, None, None),
    (T + "\\boxed{e. Inhibitor}", None, "E", 1, 1, None, None),
    (T + "\\boxed{E: inhibitor}", None, "E", 1, 1, None, None),
    (T + "\\boxed{inhibitor}", None, "E", 1, 1, None, None),
    (T + "\\boxed{Substrate}", None, "K", 1, 1, None, None),
    (T + "\\boxed{substrate_product_of}", None, "L", 0, 1, None, None),
    (T + "\\boxed{SUBSTRATE-PRODUCT-OF}", None, "L", 0, 1, None, None),
    (T + "\\boxed{indirect_downregulator}", None, "A", 0, 1, None, None),
    (T + "\\boxed{Indirect Upregulator}", None, "B", 0, 1, None, None),
    (T + "\\boxed{Part-Of}", None, "M", 0, 1, None, None),
    (T + "\n\n**Answer:** \\boxed{E}", None, "E", 1, 1, None, None),
    ("The chemical inhibits it.</think>\\boxed{E}", None, "E", 1, 1, None, None),  # template opened <think>
    ("\\boxed{E}", "It inhibits the enzyme.", "E", 1, 1, None, None),  # reasoning_content (vLLM parser)
    ("<think>\\boxed{A}</think>\\boxed{E}", None, "E", 1, 1, None, None),  # a box inside reasoning is ignored
    # no completed, non-empty reasoning block before the answer: no accuracy, one reason
    ("\\boxed{E}", None, None, 0, 0, *INCOMPLETE),  # a non-reasoning model
    ("The answer is \\boxed{E}.", "  \n", None, 0, 0, *INCOMPLETE),  # blank reasoning_content
    ("<think>  </think>\\boxed{E}", None, None, 0, 0, *INCOMPLETE),
    ("<think><think></think>\\boxed{E}", None, None, 0, 0, *INCOMPLETE),  # a block made only of tags
    ("<think></think></think>\\boxed{E}", None, None, 0, 0, *INCOMPLETE),
    ("\\boxed{E}", "<think></think>", None, 0, 0, *INCOMPLETE),
    ("<think>it inhibits", None, None, 0, 0, *INCOMPLETE),  # cut off while thinking
    ("<think>so \\boxed{E}", None, None, 0, 0, *INCOMPLETE),  # ... with a box written while thinking
    ("so \\boxed{E}", None, None, 0, 0, *INCOMPLETE),  # ... after a template that opened <think>
    (T, None, None, 0, 0, *INCOMPLETE),  # nothing after the reasoning
    ("", "thinking only", None, 0, 0, *INCOMPLETE),  # vLLM's split of a reply without </think>
    (T + "<think>second thoughts \\boxed{E}", None, None, 0, 0, *INCOMPLETE),  # thinking again, cut off
    # format: one box after the reasoning and no think tag there
    (T + "\\boxed{E}", "separate reasoning too", "E", 1, 0, None, "stray_think_tag"),
    (T + "\\boxed{A} or rather \\boxed{E}", None, "E", 1, 0, None, "several_boxed_answers"),
    (T + "\\boxed{E} or rather \\boxed{A}", None, "A", 0, 0, None, "several_boxed_answers"),
    (T + "\\boxed{A}</think>\\boxed{E}", None, "E", 1, 0, None, "several_boxed_answers"),  # a stray </think>
    (T + "\\boxed{\\boxed{E}}", None, "E", 1, 0, None, "several_boxed_answers"),
    (T + "Final answer:</think> \\boxed{E}", None, "E", 1, 0, None, "stray_think_tag"),
    (T + "<think>checked again</think>\\boxed{E}", None, "E", 1, 0, None, "stray_think_tag"),
    (T + "<think>maybe \\boxed{E}</think>", None, None, 0, 0, "no_boxed_answer", "no_boxed_answer"),
    (
        "<think>I pick \\boxed{E}</think>Final answer above.",
        None,
        None,
        0,
        0,
        "no_boxed_answer",
        "no_boxed_answer",
    ),
    (T + "The answer is E.", None, None, 0, 0, "no_boxed_answer", "no_boxed_answer"),
    (T + "\\boxed{E", None, None, 0, 0, "no_boxed_answer", "no_boxed_answer"),
    (T + "\\boxed{A} then \\boxed{E", None, None, 0, 0, "no_boxed_answer", "no_boxed_answer"),  # last box cut off
    (T + "\\boxed{Z}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{N}", None, None, 0, 0, "unknown_answer", "unknown_answer"),  # N is not offered here
    (T + "\\boxed{NO-RELATION}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{EK}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{E or K}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{Inhibitor of CYP3A4}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{\u0131}", None, None, 0, 0, "unknown_answer", "unknown_answer"),  # dotless i is not I
    (T + "\\boxed{\u0131nhibitor}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{\u017fubstrate}", None, None, 0, 0, "unknown_answer", "unknown_answer"),  # long s is not S
    (T + "\\boxed{\uff25}", None, None, 0, 0, "unknown_answer", "unknown_answer"),  # fullwidth E
    (T + "\\boxed{E.\u00a0INHIBITOR}", None, None, 0, 0, "unknown_answer", "unknown_answer"),  # NBSP
    (T + "\\boxed{" + "\\text{" * 40 + "E" + "}" * 40 + "}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{E. AGONIST}", None, None, 0, 0, "letter_label_mismatch", "letter_label_mismatch"),
    ("  \n", "  ", None, 0, 0, "empty_reply", "empty_reply"),
    ("<think></think>", None, None, 0, 0, "empty_reply", "empty_reply"),
    (None, None, None, 0, 0, "empty_reply", "empty_reply"),
]

# Replies when the task offers N. NO-RELATION and the pair has no gold relation.
NR_CASES = [
    (T + "\\boxed{N}", "N", 1, 1),
    (T + "\\boxed{no relation}", "N", 1, 1),
    (T + "\\boxed{NO_RELATION}", "N", 1, 1),
    (T + "\\boxed{N. NO-RELATION}", "N", 1, 1),
    (T + "\\boxed{E}", "E", 0, 1),
]


def test_the_table_covers_every_reason() -> None:
    covered = {case[5] for case in CASES} | {case[6] for case in CASES}
    assert set(parsing.REASONS) - covered == set()


@pytest.mark.parametrize(("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES)
def test_reply_table(content, reasoning, letter, accuracy, fmt, invalid, fmt_reason) -> None:
    """The specification, against the framework-free core (``tests/envs`` runs it through each adapter)."""
    parsed = parsing.parse_reply(content, reasoning)
    assert (parsed.letter, parsed.invalid_reason) == (letter, invalid)
    score = score_reply(content, reasoning, GOLD)
    assert (score.letter, score.accuracy, score.format) == (letter, accuracy, fmt)
    assert (score.invalid_reason, score.format_reason) == (invalid, fmt_reason)
    assert Reward("accuracy").value(score) == accuracy + 0.125 * fmt  # exact: every term on the 1/64 grid
    assert PRESETS["accuracy"].format == 0.125


def test_braces_balance_inside_the_box() -> None:
    assert parsing.parse_reply(T + "\\boxed{\\text{E}}").letter == "E"
    assert parsing.parse_reply(T + "\\boxed{\\text{E}} {x}").letter == "E"
    assert parsing.parse_reply(T + "\\boxed{{E}").invalid_reason == "no_boxed_answer"


# ------------------------------------------------------------------------------------ properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Pieces that matter to the parser, and some that look like letters but are not ASCII.
PIECES = [
    "<think>", "</think>", "\\boxed{", "{", "}", "\\text{", "\\textbf {", "$", "(", ")", ".", ":", " ", "\n",
    "E", "e", "K", "N", "INHIBITOR", "inhibitor", "_", "-", "or", "\u0131", "\u017f", "\uff25", "\ud800", "\U0001f600",
]  # fmt: skip
replies = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
LETTERS = "ABCDEFGHIJKLM"


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(content=st.one_of(st.none(), replies, st.text()), reasoning=st.one_of(st.none(), replies, st.text()))
def test_parser_never_raises_and_explains_every_failure(content, reasoning) -> None:
    parsed = parsing.parse_reply(content, reasoning)
    assert (parsed.letter is None) == (parsed.invalid_reason is not None)
    assert parsed.invalid_reason is None or parsed.invalid_reason in parsing.REASONS
    assert parsed.format_reason is None or parsed.format_reason in parsing.REASONS
    score = score_reply(content, reasoning, GOLD)
    assert score.invalid_reason is None or not score.invalid_reason.startswith("scoring_error")


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    first=st.sampled_from(LETTERS),
    second=st.sampled_from(LETTERS),
    joiner=st.sampled_from([" or ", "/", ", ", "-", " and ", "", " | ", " to ", "\\text{ or }", "; "]),
    lower=st.booleans(),
)
def test_hedges_ranges_and_several_letters_never_answer(first, second, joiner, lower) -> None:
    hedge = f"{first}{joiner}{second}"
    hedge = hedge.lower() if lower else hedge
    parsed = parsing.parse_reply(f"{T}\\boxed{{{hedge}}}")  # "EE" is no letter either
    assert parsed.letter is None and parsed.invalid_reason in ("unknown_answer", "letter_label_mismatch")


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(char=st.characters(exclude_categories=["Cs"]).filter(lambda c: not c.isascii()))
def test_no_non_ascii_character_is_a_letter_or_part_of_a_name(char) -> None:
    assert parsing.parse_reply(f"{T}\\boxed{{{char}}}").letter is None
    assert parsing.parse_reply(f"{T}\\boxed{{{char}NHIBITOR}}").letter is None
    assert parsing.parse_reply(f"{T}\\boxed{{E. {char}NHIBITOR}}").letter is None


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(reasoning=replies, answer=replies)
def test_no_answer_without_completed_reasoning(reasoning, answer) -> None:
    """Whatever the reply holds, without a </think> or separate reasoning no letter is read."""
    content = reasoning.replace("</think>", "") + answer.replace("</think>", "")
    assert parsing.parse_reply(content).letter is None


def python_lines(fn, *args) -> int:
    """How many Python lines ``fn(*args)`` executes (C-level string searches count as one line each)."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return count


WORK_BOUND = 3_000
"""Python lines one parse may execute, whatever the reply: a constant, so no step loops over the reply."""

ADVERSARIAL = {  # a unit, repeated to any length
    "nested text wrappers": ("<think>r</think>\\boxed{", "\\text{", "E", "}", "}"),
    "nested dollars": ("<think>r</think>\\boxed{", "$", "E", "$", "}"),
    "nested mixed wrappers": ("<think>r</think>\\boxed{", "\\textbf {$ ", "E", " $}", "}"),
    "open braces": ("<think>r</think>\\boxed{", "{", "", "", ""),
    "balanced braces": ("<think>r</think>\\boxed{", "{", "", "}", "}"),
    "many boxes": ("<think>r</think>", "\\boxed{E}", "", "", ""),
    "many think blocks": ("", "<think>r</think>", "\\boxed{E}", "", ""),
    "stray closes": ("<think>r", "</think>", "\\boxed{E}", "", ""),
    "tag-only reasoning": ("", "<think>", "</think>\\boxed{E}", "", ""),
    "long label": ("<think>r</think>\\boxed{E.", " ", "INHIBITOR", "_", "}"),
    "no reasoning end": ("<think>", "so \\boxed{E} ", "", "", ""),
}


def adversarial(shape: str, n: int) -> str:
    head, unit, middle, closer, tail = ADVERSARIAL[shape]
    return head + unit * n + middle + closer * n + tail


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_parse_work_does_not_grow_with_the_reply(shape) -> None:
    small = python_lines(parsing.parse_reply, adversarial(shape, 10))
    large = python_lines(parsing.parse_reply, adversarial(shape, 20_000))
    assert len(adversarial(shape, 20_000)) > 20_000
    assert small <= WORK_BOUND and large <= WORK_BOUND


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(unit=replies.filter(bool), reasoning=st.one_of(st.none(), replies))
def test_parse_work_is_bounded_for_any_repeated_shape(unit, reasoning) -> None:
    assert python_lines(parsing.parse_reply, unit * 2_000, reasoning) <= WORK_BOUND


# ------------------------------------------------------------------------------------ score cache
