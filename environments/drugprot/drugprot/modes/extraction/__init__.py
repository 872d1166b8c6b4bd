"""Extraction mode: one task per abstract; the model lists every (chemical, gene, type) relation it states.

The whole mode lives here. ``task.py``: what the environment asks (``ExtractionTasks``: one task per abstract, the
knobs it refuses, the score of a relations block, the v1 task data / v0 row fields), in the core layer. ``mode.py``:
``EXTRACTION``, the mode object (``ExtractionTasks`` with the report side, ``drugprot.modes.base.Mode``). The report
side: ``decode`` (a rollout read from a run file), ``summary`` (the official metric over triples, answer quality,
intervals resampling abstracts), ``render`` (the text report), ``compare`` (two runs paired abstract by abstract),
``export`` (the official scorer's rows), ``comparability`` (when its micro-F1 is BioCreative VII's), ``baseline``
(a model-free baseline's run and its ``<relations>`` reply). The domain it builds on: ``drugprot.core.extraction``
(prompt, answer parser) and ``drugprot.core.scoring.score_extraction``. This package imports nothing: the core
imports ``task.py`` without the report.
"""
