"""Evaluating runs: reading ``vf-eval`` outputs (``records``, ``decode``, ``runs``), the official metric and intervals
(``summary``, ``stats``, ``compare``), output (``render``, ``plots``, ``export``), the ``drugprot report`` CLI
(``report``), model-free baselines (``baselines``) and prime-rl training curves (``curves``)."""
