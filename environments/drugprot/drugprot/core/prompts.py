"""The words the model sees: a system prompt and one user prompt per task, both built from ``labels``.

The system prompt states the protocol (reason inside ``<think></think>``, answer one letter in
``\\boxed{}``) and defines every option; the user prompt gives the title + abstract with the chemical
and gene *mentions* of the pair marked in place, the two names, and the same lettered options.
"""

from __future__ import annotations

from functools import cache

from drugprot.core.labels import options
from drugprot.core.tasks import PairTask

PROMPT_VERSION = "1"
"""Version of the words the model sees, recorded in every rollout (``drugprot.core.versions``) and printed by
``drugprot report``. Bump it (a new integer) whenever a change here, or in the option letters, names or
descriptions of ``drugprot.core.labels``, changes a rendered system or user prompt, so runs made with different
prompts are never compared unawares. ``tests/core/test_versions.py`` pins a digest of the rendered prompts per
version and fails until the bump is made."""

CHEMICAL_TAGS = ("<chemical>", "</chemical>")
GENE_TAGS = ("<gene>", "</gene>")


@cache
def system_prompt(with_no_relation: bool = False) -> str:
    """The system prompt, with the option definitions of the chosen option set."""
    defs = "\n".join(f"{o.letter}. {o.name}: {o.description}" for o in options(with_no_relation))
    last = options(with_no_relation)[-1].letter
    return (
        "You are an expert biomedical curator annotating drug-protein relations in PubMed abstracts "
        "(the BioCreative VII DrugProt guidelines).\n"
        "You are given an abstract in which one chemical mention and one gene/protein mention are marked, "
        "and you must decide which relation the text states between that chemical and that gene/protein.\n\n"
        f"The options:\n{defs}\n\n"
        "First reason step by step inside <think> </think> tags. After </think>, give your final answer "
        f"as exactly one letter (A-{last}) inside \\boxed{{}}, for example \\boxed{{E}}."
    )


@cache
def options_block(with_no_relation: bool = False) -> str:
    """The lettered option list as the user prompt shows it (``A. INDIRECT-DOWNREGULATOR`` ...)."""
    return "\n".join(f"{o.letter}. {o.name}" for o in options(with_no_relation))


def marked_text(task: PairTask) -> str:
    """The task's title + abstract with its chemical and gene mentions wrapped in tags.

    Mentions may nest (a chemical inside a gene name); tags are inserted by offset, closing tags before
    opening tags at the same position, so nested mentions stay well nested.
    """
    text = task.document.text
    chem, gene = task.chemical, task.gene
    # Sort by position; at one position close (0) before open (1); of two opens, the longer mention first;
    # remaining ties keep this listing order (the 4th item). Plain tuples sort without a key function.
    inserts = sorted(
        (
            (chem.start, 1, chem.start - chem.end, 0, CHEMICAL_TAGS[0]),
            (chem.end, 0, 0, 1, CHEMICAL_TAGS[1]),
            (gene.start, 1, gene.start - gene.end, 2, GENE_TAGS[0]),
            (gene.end, 0, 0, 3, GENE_TAGS[1]),
        )
    )
    parts, last = [], 0
    for pos, _, _, _, tag in inserts:
        parts.append(text[last:pos])
        parts.append(tag)
        last = pos
    parts.append(text[last:])
    return "".join(parts)


def user_prompt(task: PairTask, *, mark_entities: bool = True, with_no_relation: bool = False) -> str:
    """The user turn of one task.

    Args:
        task: the pair to ask about.
        mark_entities: wrap the two mentions in ``<chemical>``/``<gene>`` tags (the pair is mention-level:
            names can repeat); off gives the bare text and the names only.
        with_no_relation: offer ``N. NO-RELATION`` too.
    """
    chem, gene = task.chemical.text, task.gene.text
    if mark_entities:
        text = marked_text(task)
        where = (
            f'Chemical: "{chem}" (the mention marked {CHEMICAL_TAGS[0]}...{CHEMICAL_TAGS[1]})\n'
            f'Gene/protein: "{gene}" (the mention marked {GENE_TAGS[0]}...{GENE_TAGS[1]})'
        )
        question = "What is the relation between the marked chemical and the marked gene/protein?"
    else:
        text = task.document.text
        where = f'Chemical: "{chem}"\nGene/protein: "{gene}"'
        question = f'What is the relation between "{chem}" and "{gene}"?'
    return (
        f"Abstract (PMID {task.pmid}):\n{text}\n\n{where}\n\n{question}\n\n"
        f"Options:\n{options_block(with_no_relation)}\n\n"
        "Answer with the letter of one option in \\boxed{}."
    )
