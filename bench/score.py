"""Benchmark: parsing and scoring realistic replies, through the core and through verifiers' ``task.score``.

Replies are what a reasoning model sends back in an RL run: about 600 tokens of reasoning (2,400-3,000
characters) and a final answer, in every shape ``drugprot.core.parsing`` accepts or rejects (the table in
``tests/core/test_parsing.py``): inline ``<think>``, a template-opened ``...</think>``, separate
``reasoning_content``, ``\\text{E}``, ``E. INHIBITOR``, label names, a box inside the reasoning, several
boxes, no box, an unclosed box, a cut-off ``<think>``, unknown letters, a letter that contradicts its
label, empty replies, and ``N``/``NO-RELATION`` when offered. Golds come from the tasks of the data
(positives, and negatives of a ``negatives=1`` build); about 70 % of answers are right.

Three timings (medians; completions per CPU second of one process, i.e. per core):

- ``parse``: ``drugprot.core.parsing.parse_reply`` alone;
- ``core``: ``drugprot.core.scoring.score_reply`` (parse + score), what both adapters call;
- ``verifiers``: ``await DrugprotTask.score(trace)`` on hand-built ``vf.Trace``s, as verifiers scores a
  rollout (trace construction is timed separately and not included).

The core and verifiers results are compared reply by reply; ``agree`` must equal ``replies``.

``worst_case``: CPU milliseconds to score one 1 MB reply of each adversarial shape (deeply nested
``\\text{}``/``$`` wrappers inside one box, unclosed or balanced brace runs, 100k boxes, think blocks,
stray ``</think>``s, tag-only reasoning, a cut-off reply, separator runs, ...); the bound is 50 ms each.

    python -m bench.score                     # generated corpus, 5,000 replies
    python -m bench.score --data-path FILE    # golds from a real file
    python -m bench.score --quick             # CI smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import add_overwrite, check_outputs, emit, load_data, machine, measure, rate

_OPENERS = (
    "Let me read the abstract carefully and find the sentence that links the two marked mentions.",
    "The question asks for the relation between the marked chemical and the marked gene/protein.",
    "First, I locate the chemical mention and the gene mention in the text.",
)
_STEPS = (
    "The sentence says that {chem} {verb} the activity of {gene} in a dose-dependent manner.",
    "There is no mention of binding to a receptor, so agonist and antagonist seem less likely.",
    "The authors measured {gene} expression after treatment with {chem} and saw a {change}.",
    "An indirect effect would go through expression levels, whereas a direct one acts on the protein.",
    "Option {letter} ({label}) fits best because the text describes {chem} acting on {gene} directly.",
    "I should check whether {chem} could instead be a substrate or a product of {gene}.",
    "The enzyme {gene} metabolises several compounds, but the abstract does not say it converts {chem}.",
    "Looking at the options again: INHIBITOR, ACTIVATOR, SUBSTRATE and DIRECT-REGULATOR are plausible.",
    "The phrase '{verb}' is the key word here; the guidelines map it to {label}.",
    "Other chemicals in the abstract relate to other genes, which is not what is asked.",
    "Taken together, the evidence points to {label} for this pair, with {letter} as the letter.",
)
_VERBS = ("inhibited", "blocked", "activated", "increased", "decreased", "was metabolised by", "bound to")
_CHANGES = ("marked decrease", "two-fold increase", "significant reduction", "slight rise")


@dataclass(frozen=True, slots=True)
class Reply:
    shape: str
    content: str | None
    reasoning: str | None
    gold: tuple[str, ...]
    with_no_relation: bool


def _reasoning(rng: random.Random, chem: str, gene: str, letter: str, label: str, min_chars: int) -> str:
    parts = [rng.choice(_OPENERS)]
    while sum(len(p) + 1 for p in parts) < min_chars:
        parts.append(
            rng.choice(_STEPS).format(
                chem=chem, gene=gene, letter=letter, label=label, verb=rng.choice(_VERBS), change=rng.choice(_CHANGES)
            )
        )
    return " ".join(parts)


# Shape name -> (weight, expected (invalid reason, format reason), builder(reasoning, letter, label) -> (content,
# reasoning_content)). The expectations restate the parser's spec; ``shape_check`` counts the replies that meet them.
Builder = Callable[[str, str, str], tuple[str | None, str | None]]
SHAPES: dict[str, tuple[int, tuple[str | None, str | None], Builder]] = {
    "think_letter": (34, (None, None), lambda r, ltr, lab: (f"<think>{r}</think>\n\n\\boxed{{{ltr}}}", None)),
    "think_text_letter": (5, (None, None), lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{\\text{{{ltr}}}}}", None)),
    "think_letter_label": (5, (None, None), lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{{ltr}. {lab}}}", None)),
    "think_label_name": (4, (None, None), lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{{lab.lower()}}}", None)),
    "think_answer_line": (
        5,
        (None, None),
        lambda r, ltr, lab: (f"<think>{r}</think>\n\n**Answer:** \\boxed{{{ltr}}}", None),
    ),
    "template_opened": (6, (None, None), lambda r, ltr, lab: (f"{r}\n</think>\n\n\\boxed{{{ltr}}}", None)),
    "reasoning_content": (10, (None, None), lambda r, ltr, lab: (f"\\boxed{{{ltr}}}", r)),
    "box_in_reasoning": (
        3,
        (None, None),
        lambda r, ltr, lab: (f"<think>{r} Maybe \\boxed{{A}}?</think>\\boxed{{{ltr}}}", None),
    ),
    "no_reasoning": (
        2,
        ("reasoning_incomplete", "reasoning_incomplete"),
        lambda r, ltr, lab: (f"The answer is \\boxed{{{ltr}}}.", None),
    ),
    "several_boxes": (
        3,
        (None, "several_boxed_answers"),
        lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{C}} or rather \\boxed{{{ltr}}}", None),
    ),
    "unterminated_think": (
        8,
        ("reasoning_incomplete", "reasoning_incomplete"),
        lambda r, ltr, lab: (f"<think>{r} So the answer might be \\boxed{{{ltr}}}", None),
    ),
    "no_box": (
        4,
        ("no_boxed_answer", "no_boxed_answer"),
        lambda r, ltr, lab: (f"<think>{r}</think>The answer is {ltr}.", None),
    ),
    "unclosed_box": (
        1,
        ("no_boxed_answer", "no_boxed_answer"),
        lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{{ltr}", None),
    ),
    "unknown_answer": (
        2,
        ("unknown_answer", "unknown_answer"),
        lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{Z}}", None),
    ),
    "label_mismatch": (
        1,
        ("letter_label_mismatch", "letter_label_mismatch"),
        lambda r, ltr, lab: (f"<think>{r}</think>\\boxed{{{ltr}. {'AGONIST' if ltr == 'I' else 'ANTAGONIST'}}}", None),
    ),
    "stray_close": (
        1,
        (None, "stray_think_tag"),
        lambda r, ltr, lab: (f"<think>{r}</think>Final answer:</think> \\boxed{{{ltr}}}", None),
    ),
    "empty": (1, ("empty_reply", "empty_reply"), lambda r, ltr, lab: ("  ", None)),
}

# Worst-case shapes: (head, unit, middle, closer, tail) -> head + unit * n + middle + closer * n + tail, with n
# chosen so the reply is about WORST_CASE_CHARS long. Each is scored with score_reply; the bound is 50 ms.
WORST_CASE_CHARS = 1_000_000
WORST_CASES: dict[str, tuple[str, str, str, str, str]] = {
    "nested \\text{} wrappers in one box": ("<think>r</think>\\boxed{", "\\text{", "E", "}", "}"),
    "nested $ wrappers in one box": ("<think>r</think>\\boxed{", "$", "E", "$", "}"),
    "nested \\textbf {$ wrappers in one box": ("<think>r</think>\\boxed{", "\\textbf {$ ", "E", " $}", "}"),
    "unclosed open braces in one box": ("<think>r</think>\\boxed{", "{", "", "", ""),
    "balanced braces in one box": ("<think>r</think>\\boxed{", "{", "E", "}", "}"),
    "one huge box": ("<think>r</think>\\boxed{", "x", "", "", "}"),
    "100k boxes": ("<think>r</think>", "\\boxed{E} ", "", "", ""),
    "nested boxes": ("<think>r</think>", "\\boxed{", "E", "}", ""),
    "think blocks": ("", "<think>r</think>", "\\boxed{E}", "", ""),
    "stray </think>s": ("<think>r", "</think>", "\\boxed{E}", "", ""),
    "reasoning of tags only": ("", "<think>", "</think>\\boxed{E}", "", ""),
    "no </think> (cut off)": ("<think>", "so \\boxed{E} ", "", "", ""),
    "letter + 1 MB of separators": ("<think>r</think>\\boxed{E.", " _-", "INHIBITOR", "", "}"),
    "plain reasoning + answer": ("<think>", "The chemical inhibits the enzyme. ", "</think>\\boxed{E}", "", ""),
    "astral characters": ("<think>", "\U0001f600", "</think>\\boxed{E}", "", ""),
    "whitespace": ("", " \n", "", "", ""),
}


def worst_case_reply(shape: str, chars: int = WORST_CASE_CHARS) -> str:
    head, unit, middle, closer, tail = WORST_CASES[shape]
    n = max(1, (chars - len(head) - len(middle) - len(tail)) // (len(unit) + len(closer)))
    return head + unit * n + middle + closer * n + tail


def worst_case(repeats: int, chars: int = WORST_CASE_CHARS) -> dict[str, Any]:
    """CPU milliseconds (median of ``repeats``) to score one reply of each worst-case shape."""
    from drugprot.core.scoring import score_reply

    result: dict[str, Any] = {"chars": chars, "bound_ms": 50, "shapes": {}}
    for shape in WORST_CASES:
        reply = worst_case_reply(shape, chars)
        score = score_reply(reply, None, ("INHIBITOR",))
        timing = measure(lambda r=reply: score_reply(r, None, ("INHIBITOR",)), repeats, warmup=1)
        result["shapes"][shape] = {
            "chars": len(reply),
            "cpu_ms": round(timing["cpu_s"] * 1000, 2),
            "wall_ms": round(timing["wall_s"] * 1000, 2),
            "outcome": [score.letter, score.format_reason],
        }
    result["max_cpu_ms"] = max(s["cpu_ms"] for s in result["shapes"].values())
    return result


def make_replies(
    golds: Sequence[tuple[tuple[str, ...], bool, str, str]], count: int, seed: int, min_reasoning_chars: int = 2400
) -> list[Reply]:
    """``count`` replies over the given ``(gold labels, with_no_relation, chemical, gene)`` tasks."""
    from drugprot.core.labels import letter_of, options

    rng = random.Random(seed)
    names = list(SHAPES)
    weights = [SHAPES[n][0] for n in names]
    replies: list[Reply] = []
    for i in range(count):
        gold, with_nr, chem, gene = golds[i % len(golds)]
        offered = options(with_nr)
        letter = letter_of(rng.choice(gold)) if rng.random() < 0.7 else rng.choice(offered).letter
        label = next(o.name for o in offered if o.letter == letter)
        shape = names[i] if i < len(names) else rng.choices(names, weights)[0]  # every shape at least once
        reasoning = _reasoning(rng, chem, gene, letter, label, min_reasoning_chars + rng.randrange(600))
        content, separate = SHAPES[shape][2](reasoning, letter, label)
        replies.append(Reply(shape, content, separate, gold, with_nr))
    return replies


def _golds(data_path: str, split: str, seed: int) -> list[tuple[tuple[str, ...], bool, str, str]]:
    from drugprot.core.sources import load_documents
    from drugprot.core.tasks import build_tasks

    documents = load_documents(split, data_path)
    golds = [(t.labels, False, t.chemical.text, t.gene.text) for t in build_tasks(documents)]
    golds += [(t.labels, True, t.chemical.text, t.gene.text) for t in build_tasks(documents, negatives=1, seed=seed)]
    random.Random(seed).shuffle(golds)
    return golds


def _v1_cases(replies: Sequence[Reply]) -> tuple[Callable[[], list[Any]], Any]:
    """A factory of fresh (task, trace) pairs for the replies, and the task type."""
    import verifiers.v1 as vf
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.types import AssistantMessage, UserMessage

    from drugprot.envs.taskset import DrugprotConfig, DrugprotData, DrugprotTask

    config = DrugprotConfig(id="drugprot").task
    tasks = {}
    for reply in replies:
        key = (reply.gold, reply.with_no_relation)
        if key not in tasks:
            data = DrugprotData(
                prompt="q",
                system_prompt="s",
                pmid="1",
                arg1="T1",
                arg2="T2",
                labels=list(reply.gold),
                chemical="c",
                gene="g",
                with_no_relation=reply.with_no_relation,
            )
            tasks[key] = DrugprotTask(data, config)

    def build() -> list[Any]:
        cases = []
        for reply in replies:
            task = tasks[(reply.gold, reply.with_no_relation)]
            trace = vf.Trace(
                agent=vf.AgentInfo(config=vf.AgentConfig()),
                task=vf.TraceTask(type="DrugprotTask", data=task.data),
                nodes=[
                    MessageNode(parent=None, message=UserMessage(content="q"), sampled=False),
                    MessageNode(
                        parent=0,
                        message=AssistantMessage(content=reply.content, reasoning_content=reply.reasoning),
                        sampled=True,
                    ),
                ],
            )
            cases.append((task, trace))
        return cases

    return build, DrugprotTask


def run(args: argparse.Namespace) -> dict[str, Any]:
    from drugprot.core.parsing import parse_reply
    from drugprot.core.scoring import score_reply

    result: dict[str, Any] = {"benchmark": "score", "machine": machine(), "repeats": args.repeats}
    with tempfile.TemporaryDirectory(prefix="drugprot-bench-") as tmp:
        if args.data_path:
            data_path = args.data_path
            result["data"] = {"path": data_path}
        else:
            rows = corpus.generate(args.docs, args.seed)
            data_path = str(corpus.write(rows, Path(tmp) / "corpus.jsonl"))
            result["data"] = {"generated": True, "docs": args.docs, "seed": args.seed}
        golds = _golds(data_path, args.split, args.seed)
    replies = make_replies(golds, args.replies, args.seed)
    n = len(replies)
    chars = [len(r.content or "") + len(r.reasoning or "") for r in replies]
    result["replies"] = n
    result["reply_chars_mean"] = round(sum(chars) / n, 1)
    result["shapes"] = dict(sorted(Counter(r.shape for r in replies).items()))

    def parse_all() -> None:
        for r in replies:
            parse_reply(r.content, r.reasoning, with_no_relation=r.with_no_relation)

    def score_all() -> list[Any]:
        return [score_reply(r.content, r.reasoning, r.gold, with_no_relation=r.with_no_relation) for r in replies]

    scores = score_all()
    result["shape_check"] = sum(
        (s.invalid_reason, s.format_reason) == SHAPES[r.shape][1] for r, s in zip(replies, scores, strict=True)
    )
    result["outcomes"] = {
        "accuracy_sum": int(sum(s.accuracy for s in scores)),
        "format_sum": int(sum(s.format for s in scores)),
        "answered": sum(s.letter is not None for s in scores),
        "invalid_reasons": dict(sorted(Counter(s.invalid_reason for s in scores if s.invalid_reason).items())),
        "format_reasons": dict(sorted(Counter(s.format_reason for s in scores if s.format_reason).items())),
    }
    for name, fn in (("parse", parse_all), ("core", score_all)):
        timing = measure(fn, args.repeats, warmup=1)
        timing["completions_per_s_cpu"] = rate(n, timing["cpu_s"])
        timing["completions_per_s_wall"] = rate(n, timing["wall_s"])
        timing["us_per_completion_cpu"] = round(timing["cpu_s"] / n * 1e6, 2)
        result[name] = timing

    if not args.no_v1:
        from drugprot.envs.taskset import INFO_KEY

        build, _ = _v1_cases(replies)
        result["v1_trace_build"] = measure(build, 1)
        agree = 0

        async def score_cases(cases: list[Any]) -> None:
            for task, trace in cases:
                await task.score(trace)

        timings = []
        for i in range(max(1, args.repeats // 2) + 1):  # the first pass is a warm-up
            cases = build()
            timing = measure(lambda c=cases: asyncio.run(score_cases(c)), 1)
            if i:
                timings.append(timing)
            else:
                for (_, trace), s in zip(cases, scores, strict=True):
                    info = trace.info[INFO_KEY]
                    agree += (
                        trace.rewards["accuracy"].score == s.accuracy
                        and trace.rewards["format"].score == s.format
                        and info["letter"] == s.letter
                        and not trace.errors
                    )
        cpu = sorted(t["cpu_s"] for t in timings)[len(timings) // 2]
        wall = sorted(t["wall_s"] for t in timings)[len(timings) // 2]
        result["verifiers"] = {
            "wall_s": wall,
            "cpu_s": cpu,
            "cpu_runs": [t["cpu_s"] for t in timings],
            "completions_per_s_cpu": rate(n, cpu),
            "completions_per_s_wall": rate(n, wall),
            "us_per_completion_cpu": round(cpu / n * 1e6, 2),
            "agree": agree,
        }
    if not args.no_worst_case:
        result["worst_case"] = worst_case(args.repeats, args.worst_case_chars)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.score", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", help="file or TSV directory the golds come from (default: generated corpus)")
    parser.add_argument("--split", default="train")
    parser.add_argument("--docs", type=int, default=corpus.FULL_DOCS, help="abstracts of the generated corpus")
    parser.add_argument("--replies", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200 replies over 100 abstracts, 1 repeat")
    parser.add_argument("--no-v1", action="store_true", help="skip the verifiers task.score path")
    parser.add_argument("--no-worst-case", action="store_true", help="skip the 1 MB worst-case shapes")
    parser.add_argument("--worst-case-chars", type=int, default=WORST_CASE_CHARS, help="size of a worst-case reply")
    parser.add_argument("--json", help="also write the result to this file")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    check_outputs(parser.prog, [("--json", args.json)], inputs=[args.data_path], overwrite=args.overwrite)
    if args.data_path:
        load_data(parser.prog, args.data_path, split=args.split, relations=True, what="scoring against the gold")
    if args.quick:
        args.docs, args.replies, args.repeats = min(args.docs, 100), min(args.replies, 200), 1
        args.worst_case_chars = min(args.worst_case_chars, 10_000)
    emit(run(args), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
