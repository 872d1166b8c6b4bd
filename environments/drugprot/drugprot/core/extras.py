"""How to install one of drugprot's optional extras (``report``: matplotlib; ``adapters``: torch, transformers, peft,
safetensors), said the way this drugprot was installed.

From a checkout (an editable install) the extra is installed from that checkout's folder; otherwise (a wheel, a
hub install with ``prime env install``) drugprot itself is not on PyPI, so the advice names the extra's own
requirements, read from the installed package's metadata.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import PackageNotFoundError, distribution
from urllib.parse import unquote, urlparse

DISTRIBUTION = "drugprot"


def editable_folder(direct_url: str | None) -> str | None:
    """The folder of an editable install, from its ``direct_url.json`` text (PEP 610); None for any other install."""
    if not direct_url:
        return None
    try:
        info = json.loads(direct_url)
    except ValueError:
        return None
    if not isinstance(info, dict) or not (info.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(info.get("url", "")))
    return unquote(url.path) if url.scheme == "file" and url.path else None


def extra_requirements(requires: list[str], extra: str) -> list[str]:
    """The requirements of ``extra`` among a distribution's ``Requires-Dist`` lines, markers dropped."""
    marker = re.compile(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""")
    return [line.split(";", 1)[0].strip() for line in requires if ";" in line and marker.search(line.split(";", 1)[1])]


def install_hint_for(direct_url: str | None, requires: list[str], extra: str) -> str:
    """The install command for ``extra``: from the checkout of an editable install, else the extra's requirements."""
    folder = editable_folder(direct_url)
    if folder is not None:
        return f"uv pip install -e '{folder}[{extra}]' (or pip install -e)"
    needed = extra_requirements(requires, extra)
    return "pip install " + " ".join(f"'{r}'" for r in needed) if needed else f"pip install 'drugprot[{extra}]'"


def install_hint(extra: str) -> str:
    """How to install ``extra`` for the drugprot that is running (``install_hint_for`` on its metadata)."""
    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        return f"pip install 'drugprot[{extra}]'"
    return install_hint_for(dist.read_text("direct_url.json"), list(dist.requires or []), extra)
