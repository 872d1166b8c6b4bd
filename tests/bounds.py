"""The suite's wall-time bounds: each is generous, so a test fails on a hang, never on a slow or loaded machine.

A subprocess or a wait in a test gets :data:`HANG_S` (or more) unless it tests a timeout itself. On the 2-core CI
machine, running the three stages of scripts/test.sh side by side, a step that takes 20 s alone took over 120 s
(issue 48: the tiny CPU trainer step hit a fixed 120 s bound); none of the suite's steps comes near 900 s alone.
"""

from __future__ import annotations

from typing import Final

HANG_S: Final = 900.0
"""Seconds after which a subprocess or a wait counts as hung."""
