"""The install advice for an optional extra fits how drugprot was installed (``drugprot.core.extras``)."""

from __future__ import annotations

import json

from drugprot.core.extras import editable_folder, extra_requirements, install_hint, install_hint_for

REQUIRES = [
    "verifiers<0.5,>=0.3.1",
    "matplotlib>=3.7; extra == 'report'",
    'torch>=2.4; extra == "adapters"',
    "peft>=0.19; extra == \"adapters\" and python_version >= '3.11'",
]
EDITABLE = json.dumps({"url": "file:///home/me/src/drug%20prot/environments/drugprot", "dir_info": {"editable": True}})
WHEEL = json.dumps({"url": "file:///tmp/drugprot-0.4.0-py3-none-any.whl", "archive_info": {}})


def test_an_editable_install_is_told_to_install_the_extra_from_its_own_checkout() -> None:
    assert editable_folder(EDITABLE) == "/home/me/src/drug prot/environments/drugprot"
    assert install_hint_for(EDITABLE, REQUIRES, "report") == (
        "uv pip install -e '/home/me/src/drug prot/environments/drugprot[report]' (or pip install -e)"
    )


def test_any_other_install_is_told_the_extra_s_own_requirements() -> None:
    assert extra_requirements(REQUIRES, "adapters") == ["torch>=2.4", "peft>=0.19"]
    for direct_url in (WHEEL, None, "", "not json", json.dumps(["a list"])):
        assert editable_folder(direct_url) is None
        assert install_hint_for(direct_url, REQUIRES, "report") == "pip install 'matplotlib>=3.7'"
        assert install_hint_for(direct_url, REQUIRES, "adapters") == "pip install 'torch>=2.4' 'peft>=0.19'"
    assert install_hint_for(None, [], "report") == "pip install 'drugprot[report]'"


def test_this_checkout_s_install_is_editable() -> None:
    """The test venvs install drugprot from this checkout (uv workspace member, or pip install -e)."""
    hint = install_hint("report")
    assert hint.startswith("uv pip install -e '")
    assert hint.endswith("environments/drugprot[report]' (or pip install -e)")
