"""Tests of drugprot.core.sources: loading and validating DrugProt from the hub, a file or the official TSVs."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drugprot.core.errors import DrugprotConfigError, DrugprotDataError, DrugprotHubError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions, validate_source
from drugprot.core.sources import LoadStats, load_documents
from drugprot.core.tasks import build_tasks
from tests.fixtures import FIXTURES

HUB_HELP_VALIDATION = (
    "Download the split once with `hf download OpenMed/drugprot-parquet data/validation.parquet --repo-type dataset "
    "--local-dir drugprot-parquet` (the hf command of huggingface_hub) and pass the file: --env.taskset.data-path "
    "drugprot-parquet/data/validation.parquet (a directory of the official BioCreative VII TSV files works the same "
    "way)."
)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data), encoding="utf-8")
    return path


def copy_tsv(fixture_tsv: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tsv"
    shutil.copytree(fixture_tsv, target)
    return target


# -------------------------------------------------------------------------- the three formats load the same documents


def test_fixture_counts(fixture_jsonl: Path) -> None:
    stats = LoadStats()
    docs = load_documents("train", fixture_jsonl, stats=stats)
    assert (stats.documents, stats.entities, stats.relations, stats.duplicate_relations) == (9, 65, 28, 0)
    tasks = build_tasks(docs)
    assert len(tasks) == 27  # 28 relations, one pair carries two types
    multi = [t for t in tasks if len(t.labels) > 1]
    assert [(t.key, t.labels) for t in multi] == [("90000001:T1:T2", ("INHIBITOR", "SUBSTRATE"))]
    assert [t.key for t in tasks if t.pmid == "90000004"] == []  # the abstract with no relation
    assert tasks[0].key == "90000001:T1:T2" and tasks[-1].key == "90000009:T4:T5"


def test_jsonl_and_tsv_build_identical_tasks(fixture_jsonl: Path, fixture_tsv: Path) -> None:
    from_jsonl = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl)))
    from_tsv = load_questions(TaskOptions(split="train", data_path=str(fixture_tsv)))
    assert len(from_jsonl) == 27
    assert from_jsonl == from_tsv


def test_parquet_loads_the_same(fixture_jsonl: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows(fixture_jsonl)), path)
    assert load_documents("train", path) == load_documents("train", fixture_jsonl)


def test_tsv_split_subfolders(fixture_tsv: Path, tmp_path: Path) -> None:
    root = tmp_path / "drugprot-gs-training-development"
    shutil.copytree(fixture_tsv, root / "training")
    dev = root / "development"
    dev.mkdir()
    for src in fixture_tsv.iterdir():
        lines = [ln for ln in src.read_text(encoding="utf-8").splitlines(keepends=True) if ln.startswith("90000002")]
        (dev / src.name.replace("training", "development")).write_text("".join(lines), encoding="utf-8")
    assert len(load_documents("train", root)) == 9
    assert [d.pmid for d in load_documents("validation", root)] == ["90000002"]


def test_generator_reproduces_committed_fixture(tmp_path: Path) -> None:
    from tests.fixtures import build_fixture

    build_fixture.write(tmp_path)
    for rel in (
        "drugprot_fixture.jsonl",
        "tsv/drugprot_training_abstracs.tsv",
        "tsv/drugprot_training_entities.tsv",
        "tsv/drugprot_training_relations.tsv",
    ):
        assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel


def test_non_ascii_offsets(fixture_jsonl: Path) -> None:
    doc = {d.pmid: d for d in load_documents("train", fixture_jsonl)}["90000003"]
    assert [e.text for e in doc.entities if e.id in ("T1", "T5", "T7")] == [
        "β2-agonists",
        "Ca²⁺",
        "nifédipine",
    ]


# --------------------------------------------------------------------- validation: bad rows name file, pmid and field


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (
            lambda r: r["relations"].append({"type": "INHIBITS", "arg1": "T1", "arg2": "T2"}),
            "relations[4].type",
            "unknown relation type 'INHIBITS'",
        ),
        (
            lambda r: r["relations"].append({"type": "INHIBITOR", "arg1": "T99", "arg2": "T2"}),
            "relations[4].arg1",
            "'T99', which does not exist",
        ),
        (
            lambda r: r["relations"].append({"type": "INHIBITOR", "arg1": "T2", "arg2": "T1"}),
            "relations[4].arg1",
            "arg1 must be a chemical mention",
        ),
        (lambda r: r["entities"][0].update(end=10_000), "entities[0].start", "lie outside the text"),
        (
            lambda r: r["entities"][0].update(text="Lovastatin"),
            "entities[0].text",
            "but entity T1 says 'Lovastatin'",
        ),
        (lambda r: r["entities"][0].update(type="DRUG"), "entities[0].type", "unknown entity type 'DRUG'"),
        (lambda r: r["entities"][1].pop("start"), "entities[1].start", "missing field"),
        (lambda r: r["entities"][1].update(start="58"), "entities[1].start", "expected int, got str"),
    ],
)
def test_bad_rows_name_file_pmid_field(fixture_jsonl: Path, tmp_path: Path, mutate, field, message) -> None:
    data = rows(fixture_jsonl)
    mutate(data[0])
    path = write_rows(tmp_path / "bad.jsonl", data)
    with pytest.raises(DrugprotDataError) as err:
        load_documents("train", path)
    assert err.value.pmid == "90000001" and err.value.field == field
    assert str(path) in err.value.source and "#row0" in err.value.source
    assert message in str(err.value) and "pmid 90000001" in str(err.value) and f"field {field}" in str(err.value)


def test_duplicate_relation_is_dropped_and_counted(fixture_jsonl: Path, tmp_path: Path) -> None:
    data = rows(fixture_jsonl)
    data[1]["relations"].append(dict(data[1]["relations"][0]))
    stats = LoadStats()
    docs = load_documents("train", write_rows(tmp_path / "dup.jsonl", data), stats=stats)
    assert (stats.relations, stats.duplicate_relations, stats.duplicates) == (
        28,
        1,
        ["90000002:ANTAGONIST:T3:T4"],
    )
    assert len(build_tasks(docs)) == 27


def test_bad_tsv_line_names_file_and_line(fixture_tsv: Path, tmp_path: Path) -> None:
    bad = tmp_path / "tsv"
    shutil.copytree(fixture_tsv, bad)
    rel = bad / "drugprot_training_relations.tsv"
    rel.write_text(rel.read_text(encoding="utf-8") + "90000002\tINHIBITOR\tT7\tArg2:T8\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=r"drugprot_training_relations.tsv:29.*pmid 90000002.*field arg1"):
        load_documents("train", bad)


def test_bad_split_and_paths(tmp_path: Path) -> None:
    with pytest.raises(DrugprotConfigError, match="unknown split 'test'") as err:
        load_documents("test", tmp_path)
    assert err.value.knob == "split" and isinstance(err.value, ValueError)
    with pytest.raises(DrugprotDataError, match="no such file or directory"):
        load_documents("train", tmp_path / "missing.jsonl")
    with pytest.raises(DrugprotDataError, match="no \\*_abstracs.tsv file"):
        load_documents("train", tmp_path)
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DrugprotDataError, match="unsupported file type '.csv'"):
        load_documents("train", tmp_path / "x.csv")


# ----------------------------------------------------------------------------------------------- the hub: unreachable


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


# ------------------------------------------------------------------------------------- reading: encodings and formats


def test_utf8_bom_is_accepted_in_every_format(fixture_jsonl: Path, fixture_tsv: Path, tmp_path: Path) -> None:
    expected = load_documents("train", fixture_jsonl)
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + fixture_jsonl.read_bytes())
    as_json = tmp_path / "bom.json"
    as_json.write_bytes(b"\xef\xbb\xbf" + json.dumps(rows(fixture_jsonl)).encode())
    tsv = copy_tsv(fixture_tsv, tmp_path)
    for path in tsv.iterdir():  # Excel and Windows tools write a BOM at the start of every file
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_documents("train", jsonl) == load_documents("train", as_json) == expected
    assert load_documents("train", tsv) == load_documents("train", fixture_tsv)


def test_non_utf8_byte_names_file_and_line(fixture_jsonl: Path, fixture_tsv: Path, tmp_path: Path) -> None:
    lines = fixture_jsonl.read_bytes().split(b"\n")
    lines[2] = (
        lines[2].replace(b"Lorvastatin", b"Lorvastatin\xe9", 1)
        if b"Lorvastatin" in lines[2]
        else (lines[2][:40] + b"\xe9" + lines[2][40:])
    )
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b"\n".join(lines))
    with pytest.raises(DrugprotDataError) as err:
        load_documents("train", bad)
    assert err.value.source == f"{bad}:3"
    assert str(err.value).startswith("byte 0xe9 at byte 41 of the line is not UTF-8")
    tsv = copy_tsv(fixture_tsv, tmp_path)
    entities = tsv / "drugprot_training_entities.tsv"
    text = entities.read_text(encoding="utf-8").splitlines(keepends=True)
    text[4] = text[4].replace(text[4].split("\t")[-1], "caf\u00e9\n")
    entities.write_bytes("".join(text).encode("latin-1", errors="replace"))
    with pytest.raises(DrugprotDataError, match=r"byte 0xe9 .* is not UTF-8.*convert it to UTF-8") as err:
        load_documents("train", tsv)
    assert err.value.source == f"{entities}:5"


def test_tsv_field_above_the_csv_limit_loads(fixture_tsv: Path, tmp_path: Path) -> None:
    tsv = copy_tsv(fixture_tsv, tmp_path)
    abstracts = tsv / "drugprot_training_abstracs.tsv"
    lines = abstracts.read_text(encoding="utf-8").split("\n")
    pmid, title, abstract = lines[0].split("\t")
    long_abstract = abstract + " More text." * 20_000  # 220k characters; csv's default field limit is 131,072
    lines[0] = "\t".join((pmid, title, long_abstract))
    abstracts.write_text("\n".join(lines), encoding="utf-8")
    doc = {d.pmid: d for d in load_documents("train", tsv)}[pmid]
    assert doc.abstract == long_abstract and len(doc.text) == len(title) + 1 + len(long_abstract)


def test_crlf_tsv_loads_the_same(fixture_tsv: Path, tmp_path: Path) -> None:
    tsv = copy_tsv(fixture_tsv, tmp_path)
    for path in tsv.iterdir():
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert load_documents("train", tsv) == load_documents("train", fixture_tsv)


def test_corrupt_parquet(fixture_jsonl: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = tmp_path / "good.parquet"
    pq.write_table(pa.Table.from_pylist(rows(fixture_jsonl)), good)
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DrugprotDataError, match=r"^not a readable parquet file \(.*\); re-download or re-export it"):
        load_documents("train", truncated)
    not_parquet = tmp_path / "text.parquet"
    not_parquet.write_text("pmid,text\n1,x\n", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="not a readable parquet file") as err:
        load_documents("train", not_parquet)
    assert err.value.source == str(not_parquet)


def test_truncated_and_malformed_json(fixture_jsonl: Path, tmp_path: Path) -> None:
    text = json.dumps(rows(fixture_jsonl))
    truncated = tmp_path / "truncated.json"
    truncated.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=r"^invalid JSON at line 1 column \d+: .*; the text ends early") as err:
        load_documents("train", truncated)
    assert err.value.source == f"{truncated}:1"
    not_a_list = tmp_path / "object.json"
    not_a_list.write_text('{"pmid": "1"}', encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="a .json file must hold a list of rows, got dict"):
        load_documents("train", not_a_list)
    lines = fixture_jsonl.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:3] + [lines[3][:100]]), encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=r"^invalid JSON at column \d+: .*; the text ends early") as err:
        load_documents("train", cut)
    assert err.value.source == f"{cut}:4"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_pathological_json(tmp_path: Path, suffix: str) -> None:
    deep = tmp_path / f"deep{suffix}"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="JSON nested too deeply"):
        load_documents("train", deep)
    big_int = tmp_path / f"int{suffix}"
    big_int.write_text('[{"pmid": ' + "9" * 5000 + "}]", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="^invalid JSON: Exceeds the limit"):
        load_documents("train", big_int)


def test_unreadable_file_is_a_data_error(tmp_path: Path) -> None:
    mem = Path("/proc/self/mem")  # a regular file whose first read fails with EIO, even for root
    if not mem.is_file():
        pytest.skip("needs Linux /proc")
    link = tmp_path / "unreadable.jsonl"
    link.symlink_to(mem)
    with pytest.raises(DrugprotDataError, match=r"^cannot read the file: Input/output error") as err:
        load_documents("train", link)
    assert (err.value.source, err.value.field) == (str(link), "data_path")


def test_empty_sources_say_so(fixture_tsv: Path, tmp_path: Path) -> None:
    for name, content in (("empty.jsonl", "\n\n"), ("empty.json", "[]"), ("zero.jsonl", "")):
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        with pytest.raises(DrugprotDataError, match="^no abstract: the source is empty") as err:
            load_documents("train", path)
        assert err.value.source == str(path)
    tsv = copy_tsv(fixture_tsv, tmp_path)
    (tsv / "drugprot_training_abstracs.tsv").write_text("", encoding="utf-8")
    with pytest.raises(DrugprotDataError, match="^no abstract: the abstracts file is empty"):
        load_documents("train", tsv)


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda r: r.update(pmid=""), "pmid", "empty pmid"),
        (lambda r: r.update(pmid="  "), "pmid", "empty pmid"),
        (lambda r: r["entities"][2].update(id=""), "entities[2].id", "empty entity id"),
    ],
)
def test_empty_identifiers_are_rejected(fixture_jsonl: Path, tmp_path: Path, mutate, field, message) -> None:
    data = rows(fixture_jsonl)
    mutate(data[1])
    path = write_rows(tmp_path / "ids.jsonl", data)
    with pytest.raises(DrugprotDataError, match=f"^{message}") as err:
        load_documents("train", path)
    assert (err.value.source, err.value.field) == (f"{path}#row1", field)


@pytest.mark.parametrize(
    ("file", "column", "message", "field"),
    [
        ("abstracs", 0, "empty pmid in the first column", "pmid"),
        ("entities", 0, "empty pmid in the first column", "pmid"),
        ("entities", 1, "empty entity id in the second column", "id"),
        ("relations", 3, "expected Arg2:T<n>, got 'Arg2:'", "arg2"),
    ],
)
def test_empty_tsv_identifiers_name_file_and_line(fixture_tsv: Path, tmp_path: Path, file, column, message, field):
    tsv = copy_tsv(fixture_tsv, tmp_path)
    path = tsv / f"drugprot_training_{file}.tsv"
    lines = path.read_text(encoding="utf-8").split("\n")
    cells = lines[1].split("\t")
    cells[column] = "Arg2:" if file == "relations" else ""
    lines[1] = "\t".join(cells)
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DrugprotDataError, match=f"^{message}") as err:
        load_documents("train", tsv)
    assert (err.value.source, err.value.field) == (f"{path}:2", field)


# ------------------------------------------------------------------------ the hub: offline, pinned revisions, proxies


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


# ---------------------------------------------------------------------------------------- property: random corruption


CORRUPTIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "delete", "insert", "truncate", "duplicate"]),
        st.integers(min_value=0, max_value=2**31),
        st.binary(min_size=1, max_size=12),
    ),
    min_size=1,
    max_size=4,
)


def corrupt(data: bytes, operations: list[tuple[str, int, bytes]]) -> bytes:
    """Apply byte-level damage: flip a byte, delete or insert a run, cut the file, or repeat a stretch."""
    for kind, position, payload in operations:
        i = position % (len(data) + 1)
        if kind == "flip" and i < len(data):
            data = data[:i] + bytes([data[i] ^ (payload[0] | 1)]) + data[i + 1 :]
        elif kind == "delete":
            data = data[:i] + data[i + len(payload) :]
        elif kind == "insert":
            data = data[:i] + payload + data[i:]
        elif kind == "truncate":
            data = data[:i]
        elif kind == "duplicate":
            data = data[:i] + data[i : i + 40 * len(payload)] + data[i:]
    return data


def loads_or_data_error(split: str, path: Path) -> None:
    """The property: the loader (and the task builder, negatives included) succeeds or raises DrugprotDataError."""
    try:
        questions = load_questions(TaskOptions(split=split, data_path=str(path), negatives="all"))
    except DrugprotDataError as exc:
        assert str(exc)  # a message for the user, never empty
    else:
        assert questions and all(q.prompt and q.labels for q in questions)


PROPERTY = settings(
    max_examples=75, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
def test_random_corruption_of_a_file_loads_or_is_a_data_error(fixture_jsonl: Path, tmp_path: Path, suffix: str) -> None:
    clean = tmp_path / f"clean{suffix}"
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        pq.write_table(pa.Table.from_pylist(rows(fixture_jsonl)), clean)
    elif suffix == ".json":
        clean.write_text(json.dumps(rows(fixture_jsonl), ensure_ascii=False, indent=1), encoding="utf-8")
    else:
        shutil.copyfile(fixture_jsonl, clean)
    data = clean.read_bytes()

    @PROPERTY
    @given(operations=CORRUPTIONS)
    def check(operations: list[tuple[str, int, bytes]]) -> None:
        path = clean.with_name(f"corrupt{suffix}")
        path.write_bytes(corrupt(data, operations))
        loads_or_data_error("train", path)

    check()


def test_random_corruption_of_a_tsv_file_loads_or_is_a_data_error(fixture_tsv: Path, tmp_path: Path) -> None:
    root = tmp_path / "tsv"
    names = sorted(p.name for p in fixture_tsv.iterdir())
    originals = {name: (fixture_tsv / name).read_bytes() for name in names}

    @PROPERTY
    @given(which=st.sampled_from(names), operations=CORRUPTIONS)
    def check(which: str, operations: list[tuple[str, int, bytes]]) -> None:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for name, content in originals.items():
            (root / name).write_bytes(corrupt(content, operations) if name == which else content)
        loads_or_data_error("train", root)

    check()
