"""drugprot.core.sources.hub: the hub dataset offline, unreachable, pinned, behind a proxy."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from drugprot.core.errors import DrugprotHubError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions, validate_source
from tests.core.sources.util import HUB_HELP_VALIDATION


def test_hub_offline_fails_fast_naming_the_local_option(monkeypatch: pytest.MonkeyPatch) -> None:
    # An endpoint on a closed local port stands in for an unreachable hub (no traffic leaves the machine).
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    start = time.monotonic()
    with pytest.raises(DrugprotHubError) as err:
        load_questions(TaskOptions(), path_hint="--env.taskset.data-path {path}")
    assert time.monotonic() - start < 10
    assert str(err.value) == (
        f"cannot load 'OpenMed/drugprot-parquet' (validation): the Hugging Face hub at http://127.0.0.1:{port} is "
        f"unreachable. {HUB_HELP_VALIDATION}"
    )


def test_hub_offline_without_cache_fails_without_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from drugprot.core.sources import check_hub_offline

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DrugprotHubError) as err:
        check_hub_offline("validation", "--env.taskset.data-path {path}")
    assert str(err.value) == (
        "cannot load 'OpenMed/drugprot-parquet' (validation): HF_HUB_OFFLINE is set and no copy is cached "
        f"({tmp_path}/hf/hub/datasets--OpenMed--drugprot-parquet or "
        f"{tmp_path}/hf/datasets/OpenMed___drugprot-parquet). {HUB_HELP_VALIDATION}"
    )
    with pytest.raises(DrugprotHubError, match="HF_HUB_OFFLINE is set"):
        load_questions(TaskOptions())  # the loader runs the same check before it imports datasets
    # vf-eval validates a default config (no data_path) before it applies the user's flags: that must pass offline
    assert validate_source(TaskOptions()) is None
    snapshot = tmp_path / "hf" / "hub" / "datasets--OpenMed--drugprot-parquet" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    check_hub_offline("validation")  # a cached copy: datasets can load it offline


def test_pinned_revision_is_in_the_offline_error_and_the_download_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    options = TaskOptions(split="train", revision="3f2a9c1")
    assert options.source == "hub:OpenMed/drugprot-parquet@3f2a9c1[train]"
    with pytest.raises(DrugprotHubError) as err:
        load_questions(options, path_hint="--env.taskset.data-path {path}")
    assert str(err.value) == (
        "cannot load 'OpenMed/drugprot-parquet' (train, revision 3f2a9c1): HF_HUB_OFFLINE is set and no copy is "
        f"cached ({tmp_path}/hf/hub/datasets--OpenMed--drugprot-parquet or "
        f"{tmp_path}/hf/datasets/OpenMed___drugprot-parquet). Download the split once with `hf download "
        "OpenMed/drugprot-parquet data/train.parquet --repo-type dataset --revision 3f2a9c1 --local-dir "
        "drugprot-parquet` (the hf command of huggingface_hub) and pass the file: --env.taskset.data-path "
        "drugprot-parquet/data/train.parquet (a directory of the official BioCreative VII TSV files works the "
        "same way)."
    )


def test_unreachable_hub_names_the_pinned_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a closed local port stands in for an unreachable hub
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    with pytest.raises(DrugprotHubError) as err:
        load_questions(TaskOptions(revision="3f2a9c1"), path_hint="--env.taskset.data-path {path}")
    assert str(err.value) == (
        f"cannot load 'OpenMed/drugprot-parquet' (validation, revision 3f2a9c1): the Hugging Face hub at "
        f"http://127.0.0.1:{port} is unreachable. "
        + HUB_HELP_VALIDATION.replace("--repo-type dataset ", "--repo-type dataset --revision 3f2a9c1 ")
    )


def test_revision_reaches_the_hub_request(tmp_path: Path) -> None:
    """``revision`` goes to ``datasets.load_dataset``: a stand-in hub on 127.0.0.1 (404 for everything) sees
    the pinned revision in the path of the first file request, and the loader's error names it."""
    import http.server
    import os
    import subprocess
    import sys
    import threading

    requested: list[str] = []

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": "Repository not found"}')

        do_HEAD = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    env |= {"HF_ENDPOINT": f"http://127.0.0.1:{server.server_port}", "HF_HOME": str(tmp_path / "hf")}
    env |= {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    code = (
        "from drugprot.core.errors import DrugprotHubError\n"
        "from drugprot.core.options import TaskOptions\nfrom drugprot.core.questions import load_questions\n"
        "try:\n"
        "    load_questions(TaskOptions(revision='0123abcd'))\n"
        "except DrugprotHubError as exc:\n"
        "    print(exc)\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(
        "cannot load 'OpenMed/drugprot-parquet' (validation, revision 0123abcd) from the Hugging Face hub ("
    )
    assert "--repo-type dataset --revision 0123abcd --local-dir drugprot-parquet" in out.stdout
    files = [path for path in requested if path.startswith("/datasets/OpenMed/drugprot-parquet/resolve/")]
    assert files and all(path.startswith("/datasets/OpenMed/drugprot-parquet/resolve/0123abcd/") for path in files)


def test_hub_probe_goes_through_the_configured_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    from drugprot.core.sources.hub import _probe_target

    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert _probe_target("https://huggingface.co") == ("huggingface.co", 443)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert _probe_target("https://huggingface.co") == ("proxy.example", 3128)
    assert _probe_target("http://127.0.0.1:8080") == ("127.0.0.1", 8080)  # HTTPS_PROXY is for https only
    monkeypatch.setenv("NO_PROXY", "huggingface.co")
    assert _probe_target("https://huggingface.co") == ("huggingface.co", 443)
