"""The demo's "model": the lexical baseline answering a run's questions by prompt (``drugprot.tools.demo.replier``)."""

from __future__ import annotations

import dataclasses

import pytest

from drugprot.core.options import TaskOptions
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from drugprot.evaluation.baselines import predict, reply_text
from drugprot.modes.pair.task import question_for
from drugprot.tools import demo
from drugprot.tools.serve import Reply


@pytest.mark.parametrize("mark_entities", [True, False])
@pytest.mark.parametrize("negatives", [0, "all"])
def test_each_prompt_gets_the_baseline_s_answer_for_its_pair(mark_entities: bool, negatives: int | str) -> None:
    """Served or offline, the lexical baseline gives the same answer: the spans come from the question record,
    so unmarked prompts (where a name can occur before the annotated mention) are answered right too."""
    with_nr = negatives != 0
    with demo.sample_path() as path:
        tasks = build_tasks(load_documents("validation", path), negatives=negatives)
    questions = [question_for(task, mark_entities=mark_entities, with_no_relation=with_nr) for task in tasks]
    replier = demo.LexicalReplier(questions, with_no_relation=with_nr)
    first: dict[str, str] = {}  # prompt -> the answer for the first task with it
    for task, question in zip(tasks, questions, strict=True):
        first.setdefault(question.prompt, reply_text(predict("lexical", task, with_no_relation=with_nr)))
    # Marked prompts are one per task; unmarked, two pairs of the same names share one (answered as the first).
    expected = {(0, True): (30, 30), (0, False): (30, 28), ("all", True): (43, 43), ("all", False): (43, 39)}
    assert (len(tasks), len(replier), len(first)) == (*expected[negatives, mark_entities], len(replier))
    assert {prompt: replier.reply(prompt) for prompt in first} == first


@pytest.mark.parametrize(
    ("with_no_relation", "reply"),
    [
        (False, "<think>the prompt is not one of this run's questions, so INHIBITOR.</think>\n\\boxed{E}"),
        (True, "<think>the prompt is not one of this run's questions, so NO-RELATION.</think>\n\\boxed{N}"),
    ],
)
def test_a_prompt_of_no_question_gets_the_setting_s_fallback(with_no_relation: bool, reply: str) -> None:
    replier = demo.LexicalReplier([], with_no_relation=with_no_relation)
    assert replier.reply("What is 2 + 2?") == reply


def test_the_replier_of_a_run_knows_every_question_of_its_split_whatever_the_limit() -> None:
    with demo.sample_path() as path:
        options = demo.sample_options(path, negatives="all")
        limited = dataclasses.replace(options, num_tasks=3, shuffle=True, seed=7)
        replier = demo.lexical_replier(limited)
        assert (options.split, options.negatives, options.mark_entities) == ("validation", "all", True)
        tasks = build_tasks(load_documents("validation", path), negatives="all")
    assert len(replier) == 43
    last = question_for(tasks[-1], with_no_relation=True)
    assert replier.reply(last.prompt) == reply_text(predict("lexical", tasks[-1], with_no_relation=True))


def test_it_answers_the_last_user_message_of_a_chat_request() -> None:
    with demo.sample_path() as path:
        task = build_tasks(load_documents("validation", path))[0]
    question = question_for(task)
    replier = demo.LexicalReplier([question], with_no_relation=False)
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": question.system_prompt},
            {"role": "user", "content": question.prompt},
        ],
    }
    assert replier(body) == Reply(content=reply_text(predict("lexical", task)))


def test_extraction_questions_name_no_pair_and_are_not_served() -> None:
    with demo.sample_path() as path:
        replier = demo.lexical_replier(TaskOptions(data_path=str(path), mode="extraction"))
    assert len(replier) == 0


def _label(reply: str) -> str:
    return reply.rsplit("\\boxed{", 1)[1][0]


def test_the_sampling_replier_draws_each_prompts_answers_alike_in_any_order() -> None:
    """``drugprot serve --temperature``: the n-th request with a prompt draws from (seed, prompt, n), so the answers
    a prompt gets are the same multiset whatever order the requests come in; the lexical answer is the likeliest."""
    with demo.sample_path() as path:
        options = demo.sample_options(path, negatives="all")
        tasks = build_tasks(load_documents("validation", path), negatives="all")
    prompts = [question_for(task, with_no_relation=True).prompt for task in tasks]
    lexical = [_label(reply_text(predict("lexical", task, with_no_relation=True))) for task in tasks]
    forward = demo.lexical_replier(options, temperature=0.3, seed=0)
    backward = demo.lexical_replier(options, temperature=0.3, seed=0)
    asked = [p for p in prompts for _ in range(8)]
    got = [_label(forward.reply(p)) for p in asked]
    back = [_label(backward.reply(p)) for p in reversed(asked)][::-1]
    per_prompt = {p: sorted(got[i * 8 : i * 8 + 8]) for i, p in enumerate(prompts)}
    assert per_prompt == {p: sorted(back[i * 8 : i * 8 + 8]) for i, p in enumerate(prompts)}
    agree = sum(g == lex for g, lex in zip(got, [x for x in lexical for _ in range(8)], strict=True)) / len(got)
    assert 0.55 < agree < 0.8  # e^(1/0.3) / (e^(1/0.3) + 13) = 0.68
    assert any(len(set(answers)) > 1 for answers in per_prompt.values())
    other = demo.lexical_replier(options, temperature=0.3, seed=1)
    assert [_label(other.reply(p)) for p in asked] != got  # the seed changes the draws


def test_a_tiny_temperature_answers_as_the_lexical_baseline() -> None:
    with demo.sample_path() as path:
        options = demo.sample_options(path, negatives="all")
        tasks = build_tasks(load_documents("validation", path), negatives="all")
    replier = demo.lexical_replier(options, temperature=1e-6, seed=0)
    for task in tasks:
        lexical = _label(reply_text(predict("lexical", task, with_no_relation=True)))
        assert _label(replier.reply(question_for(task, with_no_relation=True).prompt)) == lexical


@pytest.mark.parametrize(
    ("negatives", "fallback"),
    [("all", "<think>the prompt is not one of this run's questions, so NO-RELATION.</think>\n\\boxed{N}"),
     (0, "<think>the prompt is not one of this run's questions, so INHIBITOR.</think>\n\\boxed{E}")],
)  # fmt: skip
def test_a_tiny_temperature_answers_a_prompt_of_no_question_with_the_setting_s_fallback(
    negatives: int | str, fallback: str
) -> None:
    """At T 0.001 every other option's weight underflows to 0: the fallback is still drawn (it is among the options
    of the run's setting), as at T 0."""
    with demo.sample_path() as path:
        replier = demo.lexical_replier(demo.sample_options(path, negatives=negatives), temperature=0.001, seed=0)
    assert [replier.reply("What is 2 + 2?") for _ in range(3)] == [fallback] * 3


def test_a_prompt_of_no_question_keeps_the_fallback_s_mass_at_a_temperature() -> None:
    """At T 0.25 the fallback N is drawn with probability e^4 / (e^4 + 13) = 0.81, not uniformly over the 13 types."""
    with demo.sample_path() as path:
        replier = demo.lexical_replier(demo.sample_options(path, negatives="all"), temperature=0.25, seed=0)
    labels = [_label(replier.reply("What is 2 + 2?")) for _ in range(400)]
    assert labels.count("N") == 324  # 0.81 of 400; seeded by (0, n, prompt): the same count every run
    assert len(set(labels)) == 14  # every option of the setting, N among them


def test_prompts_of_no_question_are_counted_by_digest_and_boundedly(monkeypatch: pytest.MonkeyPatch) -> None:
    """150 prompts of 512 KiB keep 150 digests, not 75 MiB of keys; beyond the bound the least recently asked is
    forgotten, and its next request is drawn as its first was."""
    import tracemalloc

    from drugprot.tools.demo import replier as replier_module

    with demo.sample_path() as path:
        options = demo.sample_options(path, negatives="all")
        replier, fresh, again = (demo.lexical_replier(options, temperature=0.5, seed=0) for _ in range(3))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(150):
            replier.reply(f"{i:03d}" + "x" * (512 * 1024))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1024 * 1024  # a digest and a count each (the prompts themselves were 75 MiB)
    monkeypatch.setattr(replier_module, "MAX_UNKNOWN_PROMPTS", 3)
    first = [fresh.reply(p) for p in ("a", "b", "c", "d")]  # "a" is forgotten when "d" comes
    assert [fresh.count(p) for p in ("b", "c", "d", "a")] == [1, 1, 1, 0]
    assert again.reply("a") == first[0]
