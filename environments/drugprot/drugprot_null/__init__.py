"""The ``drugprot-null`` harness id: verifiers imports a harness id's package and takes the ``Harness`` it exports.

The harness is ``drugprot.envs.null_program.DrugprotNullHarness``: verifiers' ``null`` chat program with every
dependency pinned exactly (``--env.agent.harness.id drugprot-null``; drugprot's own env turns ``null`` into it).
"""

from drugprot.envs.null_program import DrugprotNullHarness

__all__ = ["DrugprotNullHarness"]
