"""The verifiers adapters, thin and without domain logic: ``taskset`` (v1: ``DrugprotTaskset``, ``DrugprotEnv``),
``harness`` (v1: ``DrugprotHarness``, id ``drugprot``) and ``legacy`` (v0: ``load_environment``). Each builds its task
data from ``drugprot.core.question.Question`` and the task's mode (``drugprot.modes.task.TaskMode.task_fields``) and
scores through the mode (``score_task``); neither branches on the mode."""
