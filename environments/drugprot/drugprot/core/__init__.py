"""The DrugProt domain, framework-free: labels, data sources, tasks, prompts, the reply parser, the reward, the
official metric. Imports nothing else of drugprot and no framework (verifiers, openai, matplotlib, torch); the
adapters in ``drugprot.envs`` and everything above read it."""
