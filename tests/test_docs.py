"""The documentation as a reader meets it: README.md (at most 150 lines, the keyless demo on its first screen), the
package README (the Environments Hub page, at most 200 lines) and the MkDocs site under ``docs/`` (at most 400 lines
a page, every page in the navigation, built in strict mode).

Checked here: the line limits; that every page is in ``mkdocs.yml``'s nav and every nav entry is a page; that every
relative link of every Markdown file of the repository resolves, anchors included; that the site builds with
``mkdocs build --strict`` (into a temporary directory, never into the repository); and that every command a doc shows
in a shell block is checked: a ``drugprot`` command by the real ``drugprot`` parser, a verifiers 0.4 ``vf-eval``
command by ``vf-eval --dry-run``, a verifiers 0.3 one by the legacy CLI's own config resolution, and every other one
by the test ``COMMAND_CHECKS`` names for it (shell set-up steps and commands that need a GPU, prime-rl or a network
are named there with what checks them instead). The command transcripts the pages show are generated and checked by
``scripts/transcripts.py`` (``tests/test_transcripts.py``); the suite figures by ``scripts/suite_figures.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURE_JSONL

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
HUB_PAGE = ROOT / "environments" / "drugprot" / "README.md"

LIMITS: dict[Path, int] = {README: 150, HUB_PAGE: 200, **{page: 400 for page in sorted(DOCS.rglob("*.md"))}}
"""Each reader-facing file and the most lines it may have."""

MARKDOWN = sorted(
    {
        *ROOT.glob("*.md"),
        *DOCS.rglob("*.md"),
        *(ROOT / "configs").glob("*.md"),
        *(ROOT / "bench").glob("*.md"),
        *(ROOT / "evidence").glob("*.md"),
        *(ROOT / "environments" / "drugprot").rglob("*.md"),
    }
)
"""Every Markdown file of the repository (no venv, no outputs)."""

HAS_MKDOCS = importlib.util.find_spec("mkdocs") is not None
HAS_LEGACY = importlib.util.find_spec("verifiers.legacy") is not None  # verifiers 0.3.x


# ------------------------------------------------------------------------------------------------ line limits


@pytest.mark.parametrize("path", list(LIMITS), ids=[str(p.relative_to(ROOT)) for p in LIMITS])
def test_each_page_stays_within_its_line_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMITS[path], f"{path.relative_to(ROOT)}: {lines} lines, limit {LIMITS[path]}"


def test_the_readme_runs_the_keyless_demo_on_its_first_screen() -> None:
    first_screen = README.read_text(encoding="utf-8").splitlines()[:25]
    assert "uv run drugprot demo" in first_screen
    assert any(line.startswith("uv run vf-eval drugprot -m ") for line in first_screen)
    assert "scripts/test.sh" in first_screen


# ------------------------------------------------------------------------------------------------ navigation


def nav_pages(nav: Any) -> Iterator[str]:
    """Every page path of an ``mkdocs.yml`` nav (nested sections included)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)


def mkdocs_config() -> dict[str, Any]:
    import yaml

    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_is_in_the_nav_once_and_every_nav_entry_is_a_page() -> None:
    config = mkdocs_config()
    assert (config["docs_dir"], config["theme"]["name"], config["strict"]) == ("docs", "mkdocs", True)
    listed = list(nav_pages(config["nav"]))
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages  # no orphan page, no entry without its page
    assert len(set(listed)) == len(listed)
    assert listed[0] == "index.md"  # the site opens on Getting started


# ------------------------------------------------------------------------------------------------------ links

_FENCE = re.compile(r"^ *```.*?^ *```[ \t]*$", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def prose(text: str) -> str:
    """``text`` without fenced blocks and code spans (a link there is code, not a link)."""
    return _CODE.sub("", _FENCE.sub("", text))


def slugs(heading: str) -> set[str]:
    """The anchors a heading gets: GitHub's (lower case, punctuation dropped, each space a hyphen) and MkDocs'
    (Python-Markdown's ``toc`` slugify: ASCII, runs of spaces and hyphens one hyphen)."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    github = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    mkdocs = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip())
    return {github, mkdocs}


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file's headings (a repeated heading's ``-1``, ``-2`` ... included)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        for slug in slugs(heading):
            n = seen.get(slug, 0)
            found.add(slug if n == 0 else f"{slug}-{n}")
            seen[slug] = n + 1
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``path`` whose file is missing (or outside ``root``) or whose anchor is no heading."""
    broken = []
    for target in _LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.is_relative_to(root.resolve()) or not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            broken.append(f"{target} (no such anchor)")
    return broken


@pytest.mark.parametrize("path", MARKDOWN, ids=[str(p.relative_to(ROOT)) for p in MARKDOWN])
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## The reward: `utility` + format\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#the-reward-utility--format) [ok](other.md#the-reward-utility-format) [ok](#page)\n"
        "[gone](missing.md) [no anchor](other.md#rewards) [out](../../etc/passwd) `[code](missing.md)`\n"
        "```\n[fenced](missing.md)\n```\n[web](https://example.org/x)\n",
        encoding="utf-8",
    )
    assert broken_links(page, root=tmp_path) == [
        "missing.md (no such file)",
        "other.md#rewards (no such anchor)",
        "../../etc/passwd (no such file)",
    ]


# ------------------------------------------------------------------------------------------- the strict build


def build_site(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


NO_MKDOCS = "mkdocs is in the workspace's dev group (uv.lock), which only the verifiers 0.4.0 stage installs"


@pytest.mark.skipif(not HAS_MKDOCS, reason=NO_MKDOCS)
def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link or anchor, a page missing from the nav or a nav entry without its
    page fails the build. It writes into a temporary directory only."""
    done = build_site(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    built = sorted(str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("index.html"))
    expected = sorted(
        "index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html"
        for page in nav_pages(mkdocs_config()["nav"])
    )
    assert [p for p in built if p != "404.html"] == expected


@pytest.mark.skipif(not HAS_MKDOCS, reason=NO_MKDOCS)
@pytest.mark.parametrize(
    ("change", "warning"),
    [
        ("[x](reward.md#no-such-heading)", "does not contain an anchor"),
        ("[x](no-such-page.md)", "is not found among documentation files"),
        (None, 'not included in the "nav"'),
    ],
    ids=["anchor", "page", "orphan"],
)
def test_the_strict_build_fails_on_a_broken_link_or_an_orphan_page(
    tmp_path: Path, change: str | None, warning: str
) -> None:
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    if change is None:
        (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    else:
        index = tmp_path / "docs" / "index.md"
        index.write_text(index.read_text(encoding="utf-8") + f"\n{change}\n", encoding="utf-8")
    done = build_site(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and warning in done.stderr, done.stderr[-3000:]


# ---------------------------------------------------------------------------------------------------- commands

_TRANSCRIPT = re.compile(r"<!-- transcript: [\w-]+ -->\n.*?<!-- /transcript -->", re.S)
_BLOCK = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\n(?P<body>.*?)^(?P=indent)```", re.S | re.M)
_COMMAND = re.compile(r"^(uv run|uv pip|python|drugprot|vf-\w+|scripts/\S+|bash|vllm|prime|hf|git|export) ")
"""How a command starts in a block without a language (one that also shows output or a file listing)."""


@dataclass(frozen=True)
class Shown:
    """One command a doc shows in a shell block, comments dropped and continuation lines joined."""

    file: str
    command: str

    def argv(self) -> list[str]:
        """The words, ``uv run [--no-sync]`` dropped, placeholders (``<run dir>``, ``FILE``) one word each and
        optional parts (``[--json]``) left out."""
        text = re.sub(r"\[[^\]]*\]", " ", self.command)
        text = re.sub(r"<[^>]*>", "PLACEHOLDER", text).replace("…", " ")
        try:
            words = shlex.split(text)
        except ValueError:  # the last line of a quoted `bash -c '...'` script
            words = text.replace("'", " ").split()
        while words[:2] == ["uv", "run"] or words[:1] == ["--no-sync"]:
            words = words[2:] if words[:2] == ["uv", "run"] else words[1:]
        return words


def shown_commands() -> list[Shown]:
    """Every command of every shell block of ``MARKDOWN``, and every line of a block without a language that starts
    like a command (transcripts aside: scripts/transcripts.py runs those)."""
    found = []
    for path in MARKDOWN:
        text = _TRANSCRIPT.sub("", path.read_text(encoding="utf-8"))
        for block in _BLOCK.finditer(text):
            if block["lang"] not in ("bash", "sh", "shell", ""):
                continue
            body = re.sub(r"\\\n\s*", " ", block["body"])
            for line in body.splitlines():
                command = "" if line.strip().startswith("#") else re.split(r"\s+#\s", line.strip())[0].strip()
                if command and (block["lang"] or _COMMAND.match(command)):
                    found.append(Shown(str(path.relative_to(ROOT)), command))
    return found


SHOWN = shown_commands()

COMMAND_CHECKS: tuple[tuple[str, str], ...] = (
    # (a regex the command matches from its start, what checks it: a test as FILE::NAME, or why it is set-up only)
    (r"(uv run )?drugprot ", "tests/test_docs.py::test_every_drugprot_command_shown_parses"),
    (r"(uv run )?vf-eval (drugprot|@)", "tests/test_docs.py::test_every_vf_eval_command_shown_resolves"),
    (r"(uv run )?vf-validate drugprot ", "tests/envs/test_validate.py::test_validate_passes_on_the_fixture_without_a_prime_login"),  # noqa: E501
    (r"vf-replay ", "tests/test_transcripts.py::test_the_shown_transcripts_are_what_the_commands_print_now"),
    (r"vf-gepa ", "tests/test_transcripts.py::test_the_shown_transcripts_are_what_the_commands_print_now"),
    (r"uv run pytest ", "tests/test_suite_figures.py::test_the_fast_loop_shown_is_the_one_measured"),
    (r"scripts/test\.sh$", "tests/test_suite_figures.py::test_the_readme_counts_the_tests_collected_now"),
    (r"uv run mkdocs ", "tests/test_docs.py::test_the_site_builds_in_strict_mode"),
    (r"uv run --no-sync rl @ configs/", "tests/test_configs.py::test_both_readmes_launch_rl_the_same_way"),
    (r"(uv run (--no-sync )?)?vllm serve ", "tests/tools/adapters/test_docs.py::test_the_lora_server_command_follows_vllms_flag_rules_and_the_training_rank"),  # noqa: E501
    (r"uv run python scripts/eval_size\.py ", "tests/test_eval_size.py"),
    (r"uv run (--with mistral-common )?python scripts/prompt_lengths\.py ", "tests/test_configs.py::test_readme_quotes_the_measured_numbers"),  # noqa: E501
    (r"uv run (--with mistral-common )?python -m evidence\.", "tests/test_evidence.py"),
    (r"uv run python -m bench\.", "tests/test_bench_smoke.py"),
    (r"(python -m bench\.trainer_step |B=\"python -m bench\.trainer_step |\$B --seq-len )", "tests/test_bench_trainer_step.py"),  # noqa: E501
    (r"python -m bench\.trainer_settings ", "tests/test_bench_trainer_settings.py"),
    (r"(COMPILE=1 )?bench/trainer_grid\.sh ", "tests/test_bench_trainer_settings.py::test_the_grid_script_runs_each_setting_at_each_depth"),  # noqa: E501
    (r"(PRIME_RL_SRC=\S+ )?.*bash scripts/prime_rl_check\.sh", "tests/test_prime_rl_check.py"),
    (r"python scripts/lock\.py( |$)", "tests/test_locks.py::test_the_lock_commands_shown_parse"),
    (r"uv run --no-project --python 3\.11 .*python src/main\.py", "tests/test_official_scorer.py::test_the_recipe_installs_what_the_scorer_imports_on_python_3_11"),  # noqa: E501
    (r"(uv pip install|prime env (install|push)|cd environments/drugprot && prime env push)", "tests/test_packaging.py"),  # noqa: E501
    # set-up steps of a shell (no program of this project runs): shown, not checked
    (r"(export|source|cd|mkdir|ln|git|uv venv|uv sync|\(cd \.\./prime-rl|[A-Z_]+=\S+$|hf download)\b", "set-up"),
)  # fmt: skip
"""What checks each kind of command the docs show. ``set-up`` steps (environment variables, directories, clones,
installs of other projects, a model download) run no program of this project: they need a network, prime-rl or a
GPU, and what they prepare is checked where it is used."""


def check_of(command: str) -> str | None:
    return next((check for pattern, check in COMMAND_CHECKS if re.match(pattern, command)), None)


def test_every_command_shown_has_its_check() -> None:
    """A command of a new kind shown in a doc fails here until something checks it (``COMMAND_CHECKS``)."""
    unchecked = [f"{s.file}: {s.command}" for s in SHOWN if check_of(s.command) is None]
    assert unchecked == []
    assert len(SHOWN) > 80  # every page's blocks were read


@pytest.mark.parametrize(("pattern", "check"), COMMAND_CHECKS, ids=[c[0] for c in COMMAND_CHECKS])
def test_each_check_named_exists(pattern: str, check: str) -> None:
    if check == "set-up":
        return
    file, _, name = check.partition("::")
    text = (ROOT / file).read_text(encoding="utf-8")
    assert not name or re.search(rf"^(async )?def {re.escape(name)}\(", text, re.M), check


DRUGPROT_SHOWN = [s for s in SHOWN if s.argv()[:1] == ["drugprot"]]


@pytest.mark.parametrize("shown", DRUGPROT_SHOWN, ids=[s.command[:60] for s in DRUGPROT_SHOWN])
def test_every_drugprot_command_shown_parses(shown: Shown) -> None:
    """The real ``drugprot`` parser accepts the command as shown (placeholders as one word each): every subcommand
    and option it names exists and takes the values shown."""
    from drugprot.tools.cli import parse

    parse(shown.argv()[1:])


RESOLVED_ELSEWHERE: dict[str, str] = {
    "vf-eval drugprot -m arcee/trinity-mini -n 100": "tests/test_configs.py::test_readme_v1_command_dry_run",
    "vf-eval drugprot -m trinity-mini -n 100 -r 1 -s": (
        "tests/test_configs.py::test_readme_legacy_command_resolves_the_alias_from_the_repository_root"
    ),
    "vf-eval @ configs/eval/trinity-mini.toml": "tests/test_configs.py::test_eval_config_dry_run",
    "vf-eval @ configs/eval/official.toml": "tests/test_configs.py::test_official_eval_toml_dry_run",
    "vf-eval @ configs/eval/official.toml --run.name base": (
        "tests/test_configs.py::test_readme_final_eval_commands_dry_run_as_written"
    ),
    "vf-eval @ configs/eval/official.toml -m drugprot --run.name step100": (
        "tests/test_configs.py::test_readme_final_eval_commands_dry_run_as_written"
    ),
}
"""Shown ``vf-eval`` commands another test resolves exactly as written (docs/adapters.md's three are resolved by
tests/tools/adapters/test_docs.py::test_each_vf_eval_command_resolves_in_the_installed_verifiers)."""


def vf_eval_commands() -> dict[str, Shown]:
    """Each distinct ``vf-eval`` command shown (``uv run`` dropped), with the first doc that shows it, less
    ``RESOLVED_ELSEWHERE``'s and docs/adapters.md's."""
    found: dict[str, Shown] = {}
    for shown in SHOWN:
        command = shlex.join(shown.argv()) if shown.argv()[:1] == ["vf-eval"] else None
        if command and shown.file != "docs/adapters.md":
            found.setdefault(shown.command.removeprefix("uv run "), shown)
    return {command: shown for command, shown in found.items() if command not in RESOLVED_ELSEWHERE}


def test_the_vf_eval_commands_resolved_elsewhere_are_shown_and_their_tests_exist() -> None:
    shown = {s.command.removeprefix("uv run ") for s in SHOWN}
    assert set(RESOLVED_ELSEWHERE) <= shown
    for check in {*RESOLVED_ELSEWHERE.values(), ADAPTERS_VF_EVAL}:
        file, _, name = check.partition("::")
        assert re.search(rf"^def {name}\(", (ROOT / file).read_text(encoding="utf-8"), re.M), check


ADAPTERS_VF_EVAL = "tests/tools/adapters/test_docs.py::test_each_vf_eval_command_resolves_in_the_installed_verifiers"
VF_EVAL_SHOWN = list(vf_eval_commands().values())
LEGACY_FLAGS = {"-s", "-a", "-t", "-T", "-b", "-k"}  # the 0.3.x legacy CLI's (0.4's -s takes a value)


@pytest.mark.slow
@pytest.mark.parametrize("shown", VF_EVAL_SHOWN, ids=[f"{s.file}:{s.command[:70]}" for s in VF_EVAL_SHOWN])
def test_every_vf_eval_command_shown_resolves(shown: Shown, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A v1 command (verifiers 0.4.x) resolves with ``vf-eval --dry-run`` from a directory that sees the
    repository's ``configs/`` (no request, no key needed); a legacy one (0.3.x: ``-s``, ``-a``, ``-r``) is resolved
    by the legacy CLI's own ``main`` from the repository root, with only its final ``run_evaluations`` recorded."""
    argv = shown.argv()
    legacy = bool(LEGACY_FLAGS & set(argv))
    if legacy != HAS_LEGACY:
        pytest.skip(f"a verifiers {'0.3.x' if legacy else '0.4.x'} command; that stage resolves it")
    argv = [a.replace("PLACEHOLDER", str(tmp_path / "placeholder")) for a in argv]
    if legacy:
        import verifiers.legacy.scripts.eval as legacy_eval

        recorded: list[Any] = []

        async def record(run_config: Any, **_: Any) -> None:
            recorded.append(run_config)

        monkeypatch.chdir(ROOT)
        monkeypatch.setattr(legacy_eval, "run_evaluations", record)
        legacy_eval.main([*argv[1:], "--disable-tui"])
        (run_config,) = recorded
        assert [config.env_id for config in run_config.evals] == ["drugprot"]
        return
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    (tmp_path / "outputs").mkdir()
    prompt = tmp_path / "outputs" / "gepa" / "run" / "best_system_prompt.txt"  # vf-gepa's output, shown as a glob
    prompt.parent.mkdir(parents=True)
    prompt.write_text("Name the relation.", encoding="utf-8")
    argv = [a.replace("outputs/gepa/*/", "outputs/gepa/run/") for a in argv]
    if "--env.taskset.data-path" in argv:  # the reader's data file: the fixture stands in (the config reads it)
        argv[argv.index("--env.taskset.data-path") + 1] = str(FIXTURE_JSONL)
    script = Path(sys.executable).with_name("vf-eval")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [str(script), *argv[1:], "--dry-run", "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (resolved,) = (tmp_path / "out").glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text(encoding="utf-8"))
    assert config["env"]["taskset"]["id"] == "drugprot"
