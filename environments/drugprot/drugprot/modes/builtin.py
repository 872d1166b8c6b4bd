"""Registers the built-in task modes, pair first (the fallback of ``registry.claiming``), then extraction.

``drugprot/__init__.py`` imports this module, so the registry holds both before any other module of the package
runs: the ``mode`` knob's check (``drugprot.core.options``) and every look-up see them.
"""

from __future__ import annotations

from drugprot.modes.extraction.mode import EXTRACTION
from drugprot.modes.pair.mode import PAIR
from drugprot.modes.registry import register_mode

register_mode(PAIR)
register_mode(EXTRACTION)

__all__ = ["EXTRACTION", "PAIR"]
