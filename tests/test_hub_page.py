"""The package README is the Environments Hub page, and the README of an installed package: read there, a relative
link resolves to nothing. Every link on it is absolute (or an anchor of the page itself); a link into the repository
is the repository's address from ``environments/drugprot/pyproject.toml`` ``[project.urls]`` + ``/blob/main/PATH``,
and PATH (with its anchor) exists here. The one ``prime env install`` line the pages show is the Hub id the package
gets once published (``[tool.drugprot] hub-owner`` / ``[project] name``)."""

from __future__ import annotations

import importlib.metadata
import re
import tempfile
import tomllib
from pathlib import Path

import pytest

from tests.test_docs import _LINK, anchors, prose

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "environments" / "drugprot"
HUB_PAGE = PACKAGE / "README.md"
PYPROJECT = tomllib.loads((PACKAGE / "pyproject.toml").read_text(encoding="utf-8"))
REPOSITORY = PYPROJECT["project"]["urls"]["Repository"]
HUB_ID = f"{PYPROJECT['tool']['drugprot']['hub-owner']}/{PYPROJECT['project']['name']}"
OTHER_REPOSITORIES = ("https://github.com/PrimeIntellect-ai/verifiers", "https://github.com/PrimeIntellect-ai/prime-rl")
"""The GitHub repositories other than this one that the page may name (verifiers, prime-rl)."""


def link_problems(text: str, repository: str = REPOSITORY, root: Path = ROOT) -> list[str]:
    """What is wrong with each link of a Hub page's ``text``: relative, an anchor the page lacks, a repository path
    or anchor that does not exist under ``root``, or a GitHub repository that is neither this one nor a named other."""
    problems = []
    blob = f"{repository}/blob/main/"
    page_anchors = anchors_of(text)
    for target in _LINK.findall(prose(text)):
        if target.startswith("#"):
            if target[1:] not in page_anchors:
                problems.append(f"{target}: no such heading on the page")
        elif not re.match(r"^https?://", target):
            problems.append(f"{target}: relative (it resolves nowhere on the Hub or in an installed package)")
        elif target.startswith(blob):
            path, _, anchor = target.removeprefix(blob).partition("#")
            file = root / path
            if not file.is_file():
                problems.append(f"{target}: no file {path} in the repository")
            elif anchor and anchor not in anchors(file):
                problems.append(f"{target}: no heading #{anchor} in {path}")
        elif target.startswith("https://github.com/") and not any(
            target == known or target.startswith(f"{known}/") for known in (repository, *OTHER_REPOSITORIES)
        ):
            problems.append(f"{target}: a GitHub repository other than {repository}")
    return problems


def anchors_of(text: str) -> set[str]:
    """The anchors of a page's headings, read from its text."""
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.md"
        page.write_text(text, encoding="utf-8")
        return anchors(page)


def test_every_link_on_the_hub_page_works_where_the_page_is_read() -> None:
    text = HUB_PAGE.read_text(encoding="utf-8")
    assert link_problems(text) == []
    targets = _LINK.findall(prose(text))
    assert f"{REPOSITORY}/blob/main/docs/index.md" in targets
    assert len([t for t in targets if t.startswith(f"{REPOSITORY}/blob/main/docs/")]) >= 9


def test_a_relative_a_missing_or_a_foreign_link_is_found() -> None:
    blob = f"{REPOSITORY}/blob/main/"
    text = (
        "# Page\n\n## Links\n\n[a](../../docs/index.md) [b](#links) [c](#nowhere) [d]("
        f"{blob}docs/absent.md) [e]({blob}docs/index.md#no-such-heading) [f]({blob}docs/index.md#install) "
        "[g](https://github.com/someone/drugprot) [h](https://doi.org/10.5281/zenodo.4955410) `[i](x.md)`\n"
    )
    assert link_problems(text) == [
        "../../docs/index.md: relative (it resolves nowhere on the Hub or in an installed package)",
        "#nowhere: no such heading on the page",
        f"{blob}docs/absent.md: no file docs/absent.md in the repository",
        f"{blob}docs/index.md#no-such-heading: no heading #no-such-heading in docs/index.md",
        f"https://github.com/someone/drugprot: a GitHub repository other than {REPOSITORY}",
    ]


def test_the_eval_configs_the_page_names_are_linked_in_the_repository() -> None:
    """A Hub install has no ``configs/``: each eval config the page names is a link to the file itself."""
    targets = _LINK.findall(prose(HUB_PAGE.read_text(encoding="utf-8")))
    configs = sorted((ROOT / "configs" / "eval").glob("*.toml"))
    assert configs
    for config in configs:
        assert f"{REPOSITORY}/blob/main/configs/eval/{config.name}" in targets, config.name
    assert f"{REPOSITORY}/blob/main/configs/drugprot.toml" in targets


def test_the_installed_metadata_names_the_project_urls() -> None:
    """``Project-URL`` of the installed package (the workspace's editable install) is ``[project.urls]``."""
    urls = importlib.metadata.metadata("drugprot").get_all("Project-URL") or []
    assert urls == [f"{label}, {url}" for label, url in PYPROJECT["project"]["urls"].items()]
    assert PYPROJECT["project"]["urls"]["Homepage"] == REPOSITORY
    assert PYPROJECT["project"]["urls"]["Documentation"] == f"{REPOSITORY}/blob/main/docs/index.md"


@pytest.mark.parametrize("page", ["environments/drugprot/README.md", "README.md", "docs/index.md"])
def test_each_install_line_names_the_hub_id(page: str) -> None:
    """The one install line a reader runs, with the id the package has once published; no placeholder owner."""
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"prime env install {HUB_ID}" in text
    assert re.findall(r"prime env install ([^\s`]+)", text) == [HUB_ID] * text.count("prime env install ")
    assert "publish it under your own" not in text.lower()


def test_the_publish_command_pushes_to_the_hub_owner() -> None:
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    owner = PYPROJECT["tool"]["drugprot"]["hub-owner"]
    assert f"cd environments/drugprot && prime env push --owner {owner} --visibility PUBLIC\n" in text
