"""The DrugProt domain, framework-free: labels, data sources, tasks, prompts, the reply parser, the reward, the
official metric. Imports no framework (verifiers, openai, matplotlib, torch) and nothing else of drugprot but the
task modes' core parts (``drugprot.modes.registry``, ``drugprot.modes.task``, each mode's ``task.py``: the loader
asks the mode to build the tasks, the knob check asks it what it refuses); the adapters in ``drugprot.envs`` and
everything above read it."""
