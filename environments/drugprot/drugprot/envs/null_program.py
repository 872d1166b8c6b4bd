"""``drugprot-null``: verifiers' ``null`` harness, its chat program pinned by content to exact versions.

verifiers' ``null`` harness runs a PEP 723 chat program whose header declares open dependencies (``openai``,
``httpx``, ``mcp``, ``tenacity``, ...). The runtime writes it to ``<scripts dir>/<sha256 of its text>.py`` and runs
``uv sync --script`` on it, so uv keeps one environment per program text, resolved the first time any run on the
machine prepares it. A date cutoff cannot hold that environment: an unpinned run creates it first (httpx 0.29 with
openai 3.60+, which breaks the program's client), and a later ``uv sync --script`` with an older cutoff does not
downgrade it (issue 48).

This harness runs the same program with only its header changed: every package of its environment at the exact version
``scripts/lock.py`` resolved (:data:`drugprot.envs.null_pins.NULL_PROGRAM_PINS`, markers kept). Its text is its own,
so its environment is its own, and it holds exactly those versions whichever day it is made and whatever else ran
before. Everything else (requests, traces, retries, MCP) is verifiers' ``null`` unchanged.

Selected by ``--env.agent.harness.id null`` on drugprot's env (``drugprot.envs.harness.choose_null_program``) or
``--env.agent.harness.id drugprot-null`` on any env (the id is the package ``drugprot_null``, which exports it).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from verifiers.v1.harnesses.null.harness import NullHarness

from drugprot.core.errors import DrugprotError
from drugprot.envs.null_pins import NULL_PROGRAM_PINS

PINNED_NULL_HARNESS_ID: Final = "drugprot-null"
"""The id that selects this harness (its package is ``drugprot_null``: verifiers imports an id's package)."""
DEPENDENCIES_LINE = re.compile(r"^# dependencies = (\[.*\])$", re.M)


class UnpinnedNullProgram(DrugprotError):
    """The installed verifiers' ``null`` chat program declares dependencies ``scripts/lock.py`` has no pins for."""


def declared_dependencies(program: str) -> tuple[str, ...]:
    """The dependencies a PEP 723 program's header declares, in their order."""
    header = program.split("# ///\n", 1)[0]  # "# /// script" opens the header, a bare "# ///" closes it
    match = DEPENDENCIES_LINE.search(header)
    if match is None:
        raise UnpinnedNullProgram("the null chat program has no '# dependencies = [...]' line in its PEP 723 header")
    return tuple(json.loads(match.group(1)))


def null_program_source() -> str:
    """The text of the installed verifiers' ``null`` chat program (its bundled source on 0.4, ``program.py`` on 0.3)."""
    try:
        from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
    except ImportError:  # verifiers 0.3.x
        from verifiers.v1.harnesses.null.harness import PROGRAM_SOURCE

        return PROGRAM_SOURCE
    return CHAT_PROGRAM_SOURCE


def pinned_program(program: str) -> str:
    """``program`` with its header's dependency list replaced by the locked pins of that list.

    Raises :class:`UnpinnedNullProgram` naming the list when it has no pins (another verifiers than the locked ones:
    add it to ``NULL_PROGRAMS`` in scripts/lock.py and regenerate)."""
    declared = declared_dependencies(program)
    pins = NULL_PROGRAM_PINS.get(declared)
    if pins is None:
        raise UnpinnedNullProgram(
            f"no pins for the null chat program's dependencies {list(declared)}: add them to NULL_PROGRAMS in "
            "scripts/lock.py and run it, or use --env.agent.harness.id drugprot"
        )
    line = f"# dependencies = {json.dumps(list(pins))}"
    return DEPENDENCIES_LINE.sub(lambda _: line, program, count=1)


class _PinnedRuntime:
    """The runtime as the ``null`` harness sees it: each program it prepares is the pinned one."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(self, script: str | bytes, *args: Any, **kwargs: Any) -> list[str]:
        text = script.decode() if isinstance(script, bytes) else script
        return await self._runtime.prepare_uv_script(pinned_program(text), *args, **kwargs)

    async def run_uv_script(self, script: str | bytes, *args: Any, **kwargs: Any) -> Any:
        text = script.decode() if isinstance(script, bytes) else script
        return await self._runtime.run_uv_script(pinned_program(text), *args, **kwargs)


class DrugprotNullHarness(NullHarness):
    """verifiers' ``null`` harness whose chat program's environment is pinned exactly (see the module docstring)."""

    async def setup(self, runtime: Any) -> None:
        await super().setup(_PinnedRuntime(runtime))

    async def launch(self, ctx: Any, trace: Any, runtime: Any, *args: Any, **kwargs: Any) -> Any:
        return await super().launch(ctx, trace, _PinnedRuntime(runtime), *args, **kwargs)
