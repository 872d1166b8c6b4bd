"""Extraction mode: one task per abstract; the model lists every (chemical, gene, type) relation it states.

Its whole report side lives here: ``decode`` (a rollout read from a run file), ``summary`` (the official metric
over triples, answer quality, intervals resampling abstracts), ``render`` (the text report), ``compare`` (two runs
paired abstract by abstract), ``export`` (the official scorer's rows), ``comparability`` (when its micro-F1 is
BioCreative VII's), ``baseline`` (a model-free baseline's run and its ``<relations>`` reply). ``EXTRACTION`` is
the mode object (``drugprot.modes.base.Mode``).
"""
