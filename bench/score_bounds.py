"""Benchmark: the worst-case CPU time to score one reply, per mode (pair and extraction); the bound is 50 ms.

Pair mode: ``bench.score``'s adversarial 1 MB shapes, scored with ``drugprot.core.scoring.score_reply``.
Extraction mode: 1 MB replies aimed at the relations block, scored with ``score_extraction`` against the gold of a
synthetic abstract with 40 chemical and 40 gene mentions: a block of repeated valid lines, of distinct unknown ids,
of malformed lines, of wrong-type lines (each once just under ``MAX_RELATIONS_CHARS``, the most that is read, and
once at 1 MB, which is refused unread as ``relations_block_too_long``), many small blocks, an unclosed block, and
1 MB of reasoning before a capped block. CPU milliseconds are medians of ``--repeats`` runs of this one process
(``time.process_time``), so other processes on a shared machine do not inflate them.

    python -m bench.score_bounds              # 1 MB replies, median of 5
    python -m bench.score_bounds --quick      # smoke test: 20 kB replies, 1 run
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from bench.common import add_overwrite, check_outputs, emit, measure
from bench.score import WORST_CASE_CHARS, WORST_CASES, worst_case_reply
from drugprot.core.extraction import MAX_RELATIONS_CHARS, ExtractionGold
from drugprot.core.scoring import score_extraction, score_reply

BOUND_MS = 50
THINK = "<think>The abstract says how each chemical acts on each gene.</think>\n"
GOLD = ExtractionGold(
    chemicals=frozenset(f"T{i}" for i in range(1, 41)),
    genes=frozenset(f"T{i}" for i in range(41, 81)),
    relations=frozenset((f"T{i}", f"T{i + 40}", "INHIBITOR") for i in range(1, 21)),
)


def _lines(make: Callable[[int], str], chars: int) -> str:
    """Whole lines ``make(0)``, ``make(1)``, ... up to ``chars`` characters in all."""
    out, size, i = [], 0, 0
    while size + len(line := make(i) + "\n") <= chars:
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out)


def _block(body: str) -> str:
    return f"{THINK}<relations>\n{body}</relations>"


LINE_SHAPES: dict[str, Callable[[int], str]] = {
    "repeated valid lines": lambda i: "T1 | T41 | E",
    "distinct valid lines": lambda i: f"T{1 + i % 40} | T{41 + (i // 40) % 40} | {'ABCDEFGHIJKLM'[i % 13]}",
    "distinct unknown ids": lambda i: f"X{i} | Y{i} | E",
    "malformed lines": lambda i: f"T1 T41 E {i}",
    "wrong-type lines": lambda i: "T1 | T2 | E",  # two chemicals (a gene-first line is the same relation)
    "lines of separators": lambda i: "|" * 60,
}


def extraction_replies(chars: int) -> dict[str, str]:
    """The extraction worst cases at ``chars`` characters (the capped variants at just under the cap)."""
    capped = MAX_RELATIONS_CHARS - 2
    replies: dict[str, str] = {}
    for name, make in LINE_SHAPES.items():
        replies[f"{name}, block at the cap"] = _block(_lines(make, min(capped, chars)))
        replies[f"{name}, block of the whole reply"] = _block(_lines(make, chars))
    replies["many small blocks"] = THINK + _lines(lambda i: "<relations>T1 | T41 | E</relations>", chars)
    replies["unclosed block"] = THINK + "<relations>\n" + _lines(LINE_SHAPES["distinct valid lines"], chars)
    replies["reasoning of the whole reply + block at the cap"] = (
        "<think>" + "The chemical inhibits the enzyme. " * (chars // 34) + "</think>"
        f"<relations>\n{_lines(LINE_SHAPES['distinct valid lines'], min(capped, chars))}</relations>"
    )
    return replies


def timed(score: Callable[[str], Any], replies: dict[str, str], repeats: int) -> dict[str, Any]:
    shapes = {}
    for name, reply in replies.items():
        result = score(reply)
        timing = measure(lambda r=reply: score(r), repeats, warmup=1)
        shapes[name] = {
            "chars": len(reply),
            "cpu_ms": round(timing["cpu_s"] * 1000, 2),
            "outcome": [getattr(result, "letter", None) or round(result.accuracy, 3), result.format_reason],
        }
    worst = max(shapes, key=lambda n: shapes[n]["cpu_ms"])
    return {"max_cpu_ms": shapes[worst]["cpu_ms"], "worst_shape": worst, "shapes": shapes}


def run(args: argparse.Namespace) -> dict[str, Any]:
    pair = {shape: worst_case_reply(shape, args.chars) for shape in WORST_CASES}
    result = {
        "bound_ms": BOUND_MS,
        "chars": args.chars,
        "repeats": args.repeats,
        "max_relations_chars": MAX_RELATIONS_CHARS,
        "pair": timed(lambda r: score_reply(r, None, ("INHIBITOR",)), pair, args.repeats),
        "extraction": timed(lambda r: score_extraction(r, None, GOLD), extraction_replies(args.chars), args.repeats),
    }
    result["within_bound"] = all(result[m]["max_cpu_ms"] <= BOUND_MS for m in ("pair", "extraction"))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.score_bounds", description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=WORST_CASE_CHARS, help="size of a worst-case reply")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per shape (median)")
    parser.add_argument("--quick", action="store_true", help="20 kB replies, 1 run (a smoke test)")
    parser.add_argument("--json", metavar="PATH", help="also write the result here")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    check_outputs(parser.prog, [("--json", args.json)], overwrite=args.overwrite)
    if args.quick:
        args.chars, args.repeats = 20_000, 1
    emit(run(args), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
