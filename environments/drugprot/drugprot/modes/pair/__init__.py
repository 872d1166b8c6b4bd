"""Pair mode: one task per chemical-gene mention pair, answered with one letter (a relation type, or NO-RELATION).

Its report side lives here: ``decode`` (a rollout read from a run file), ``compare`` (two runs paired task by
task), ``export`` (the official scorer's rows), ``comparability`` (when its micro-F1 is BioCreative VII's), ``baseline``
(a model-free baseline's run and its one-letter reply); the
summary and the text report are ``drugprot.evaluation.summary`` and ``drugprot.evaluation.render`` /
``render_comparison`` (they also hold what extraction mode reuses). ``PAIR`` is the mode object
(``drugprot.modes.base.Mode``).
"""
