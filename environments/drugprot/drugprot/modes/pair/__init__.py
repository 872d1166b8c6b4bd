"""Pair mode: one task per chemical-gene mention pair, answered with one letter (a relation type, or NO-RELATION).

The whole mode lives here. ``task.py``: what the environment asks (``PairTasks``: the candidate pairs, the prompts,
the score of a reply, the v1 task data / v0 row fields), in the core layer. ``mode.py``: ``PAIR``, the mode object
(``PairTasks`` with the report side, ``drugprot.modes.base.Mode``). The report side: ``decode`` (a rollout read from
a run file), ``summary`` (every number of its report: majority vote, official metric pooled and by majority,
NO-RELATION scores, setting), ``render`` (the text report, the confusion matrix, several runs side by side),
``compare`` (two runs paired task by task), ``export`` (the official scorer's rows), ``comparability`` (when its
micro-F1 is BioCreative VII's), ``baseline`` (a model-free baseline's run and its one-letter reply), built on what
both modes share (``drugprot.evaluation.summary``, ``drugprot.evaluation.render``). The domain it builds on:
``drugprot.core.tasks`` (candidate pairs), ``drugprot.core.prompts``, ``drugprot.core.parsing`` (the reply rules).
This package imports nothing: the core imports ``task.py`` without the report.
"""
