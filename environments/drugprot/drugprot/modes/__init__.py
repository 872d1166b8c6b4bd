"""Task modes: what one task is, and everything that depends on it, in one folder per mode.

- ``task.py``: ``TaskMode``, what the environment asks of a mode (the knobs it refuses, building and prompting its
  tasks, scoring a reply); ``base.py``: ``Mode``, a ``TaskMode`` with the report side of its runs.
- ``registry.py``: the one registry (``register_mode``); ``builtin.py`` registers pair and extraction, and
  ``drugprot/__init__.py`` imports it, so every import of the package sees them.
- ``pair/``: pair mode (one task per chemical-gene pair); ``extraction/``: extraction mode (one task per abstract).
  Each holds ``task.py`` (its ``TaskMode``, in the core layer), ``mode.py`` (the mode object, ``PAIR`` /
  ``EXTRACTION``) and the modules of its report side.

Nothing outside this folder branches on the mode: the loader (``core.questions``), the knob check
(``core.options``), both verifiers adapters (``envs.taskset``, ``envs.legacy``) and the report (``evaluation``) ask
the task's or the run's mode. The ``task.py`` modules and ``registry.py`` sit in the core layer, the rest in the
evaluation layer (``tests/test_layers.py``). This package imports nothing: a core module can import its core parts.
"""
