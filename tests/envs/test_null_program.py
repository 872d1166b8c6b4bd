"""``drugprot-null`` (``drugprot.envs.null_program``): verifiers' ``null`` chat program, every dependency pinned.

The pins come from ``locks/null-<verifiers>.txt`` through the generated ``drugprot/envs/null_pins.py``
(tests/test_locks.py checks that the module is what the locks give); the end-to-end run that builds the pinned
program's environment and reads its versions back is in tests/envs/test_e2e_v1.py.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from verifiers.v1.harnesses.null.harness import NullHarness
from verifiers.v1.utils.loaders import harness_class

from drugprot.core.errors import DrugprotError
from drugprot.envs.null_pins import NULL_PROGRAM_PINS
from drugprot.envs.null_program import (
    PINNED_NULL_HARNESS_ID,
    DrugprotNullHarness,
    UnpinnedNullProgram,
    declared_dependencies,
    null_program_source,
    pinned_program,
)

PIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*==[^ ;]+(; .+)?")
PROGRAM = '# /// script\n# requires-python = ">=3.11"\n# dependencies = ["openai", "httpx"]\n# ///\nprint("hi")\n'


def test_the_id_resolves_to_nulls_subclass_with_nulls_flags() -> None:
    assert PINNED_NULL_HARNESS_ID == "drugprot-null"
    assert harness_class(PINNED_NULL_HARNESS_ID) is DrugprotNullHarness
    assert issubclass(DrugprotNullHarness, NullHarness)
    flags = ("APPENDS_SYSTEM_PROMPT", "SUPPORTS_MCP", "EXECUTES_CODE", "NEEDS_CONTAINER")
    assert [getattr(DrugprotNullHarness, f) for f in flags] == [getattr(NullHarness, f) for f in flags]


def test_the_installed_verifiers_program_has_pins_and_only_its_header_changes() -> None:
    """The program of the verifiers running the tests (0.4.0 or 0.3.1, one per stage) is one the lock knows."""
    source = null_program_source()
    declared = declared_dependencies(source)
    assert declared in NULL_PROGRAM_PINS
    pins = NULL_PROGRAM_PINS[declared]
    assert [pin for pin in pins if not PIN.fullmatch(pin)] == []
    names = {re.split(r"[=<>; ]", d, maxsplit=1)[0] for d in declared}
    assert names <= {pin.split("==")[0] for pin in pins}  # every declared package is pinned, with its dependencies
    pinned = pinned_program(source)
    assert declared_dependencies(pinned) == pins
    assert pinned.split("# ///\n", 1)[1] == source.split("# ///\n", 1)[1]  # the program itself is unchanged
    assert hashlib.sha256(pinned.encode()).hexdigest() != hashlib.sha256(source.encode()).hexdigest()


def test_a_program_without_pins_is_refused_naming_its_dependencies() -> None:
    assert declared_dependencies(PROGRAM) == ("openai", "httpx")
    with pytest.raises(UnpinnedNullProgram) as error:
        pinned_program(PROGRAM)
    assert isinstance(error.value, DrugprotError)
    assert str(error.value) == (
        "no pins for the null chat program's dependencies ['openai', 'httpx']: add them to NULL_PROGRAMS in "
        "scripts/lock.py and run it, or use --env.agent.harness.id drugprot"
    )
    with pytest.raises(UnpinnedNullProgram, match="no '# dependencies = \\[...\\]' line"):
        declared_dependencies('# /// script\n# requires-python = ">=3.11"\n# ///\n# dependencies = ["x"]\n')


def test_pinning_replaces_the_header_line_only() -> None:
    declared = ("openai", "httpx")
    pins = ("httpx==0.28.1", "openai==3.59.0", "pywin32==311; sys_platform == 'win32'")
    NULL_PROGRAM_PINS[declared] = pins  # type: ignore[index]
    try:
        assert pinned_program(PROGRAM) == (
            '# /// script\n# requires-python = ">=3.11"\n'
            '# dependencies = ["httpx==0.28.1", "openai==3.59.0", "pywin32==311; sys_platform == \'win32\'"]\n'
            '# ///\nprint("hi")\n'
        )
    finally:
        del NULL_PROGRAM_PINS[declared]  # type: ignore[attr-defined]
