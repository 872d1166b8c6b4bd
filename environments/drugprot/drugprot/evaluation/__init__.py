"""Evaluating runs: reading ``vf-eval`` outputs (``records``, ``decode``, ``runs``), the official metric and intervals
(``summary``, ``stats``, ``compare``), output (``render``, ``plots``, ``export``), the ``drugprot report`` CLI
(``report``), model-free baselines (``baselines``) and prime-rl training curves (``curves``). What depends on the
task mode (pair, extraction) is the mode's: ``drugprot.modes`` (one folder per mode); these modules ask it."""
