"""Task modes: what one task is, and everything of a run that depends on it, in one folder per mode.

``base.py`` is the interface (``Mode``) and the registry (``register_mode``, ``get_mode``, ``mode_of_task``);
``pair/`` is pair mode (one task per chemical-gene pair), ``extraction/`` extraction mode (one task per abstract).
The report side asks the run's mode and holds no branch on it: reading a rollout (``evaluation.decode``), a run's
rollouts (``evaluation.runs``), the summary and the text report (``evaluation.report``), the paired comparison
(``evaluation.compare``), the official scorer's files (``evaluation.export``), what makes a run comparable with
BioCreative VII (``evaluation.comparability``) and a model-free baseline's run (``evaluation.baselines``). A mode
sits in the evaluation layer (``tests/test_layers.py``). Not yet the mode's: building and prompting tasks, the
scorer the environment calls and the knob checks (``core.options``, ``core.questions``, ``core.scoring``,
``envs.taskset``, ``envs.legacy`` still branch on the mode).

Importing this package registers pair and extraction (pair first: it is the fallback of ``mode_of_task``).
"""

from __future__ import annotations

from drugprot.modes.base import (
    Mode,
    get_mode,
    mode_of_rollout,
    mode_of_task,
    register_mode,
    registered_modes,
    unregister_mode,
)
from drugprot.modes.extraction import EXTRACTION
from drugprot.modes.pair import PAIR

register_mode(PAIR)
register_mode(EXTRACTION)

__all__ = [
    "EXTRACTION",
    "PAIR",
    "Mode",
    "get_mode",
    "mode_of_rollout",
    "mode_of_task",
    "register_mode",
    "registered_modes",
    "unregister_mode",
]
