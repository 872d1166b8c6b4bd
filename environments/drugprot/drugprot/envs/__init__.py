"""The verifiers adapters, thin and without domain logic: ``taskset`` (v1: ``DrugprotTaskset``, ``DrugprotEnv``),
``harness`` (v1: ``DrugprotHarness``, id ``drugprot``) and ``legacy`` (v0: ``load_environment``). Each builds its task
data from ``drugprot.core.questions.Question`` and scores with ``drugprot.core.scoring``."""
