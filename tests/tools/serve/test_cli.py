"""The standalone server's command line (``python -m drugprot.tools.serve`` and ``serve/__main__.py``)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from drugprot.core.errors import DrugprotError
from drugprot.tools import serve
from drugprot.tools.serve import Reply, ResponderError, build_server, main
from drugprot.tools.serve.cli import ScriptError, load_script
from tests.tools.serve.wire import MESSAGES

SCRIPT_FILE = Path(serve.__file__).with_name("__main__.py")


def test_build_server_from_arguments(tmp_path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"PMID 1": "\\boxed{A}", "PMID 2": {"content": "B", "reasoning_content": "r"}}))
    srv = build_server(["--port", "0", "--script", str(script), "--model", "a", "--model", "b", "--chunk-size", "0"])

    assert (srv.port, tuple(srv.models), srv.chunk_size, srv.api_key) == (0, ("a", "b"), None, None)
    assert (srv.max_body_bytes, srv.body_timeout, srv.record) == (serve.MAX_BODY_BYTES, serve.BODY_TIMEOUT, False)
    assert srv.responder({"messages": [{"role": "user", "content": "PMID 2"}]}) == Reply("B", "r")
    with pytest.raises(ResponderError):
        srv.responder({"messages": [{"role": "user", "content": "PMID 3"}]})


def test_build_server_limits() -> None:
    srv = build_server(["--max-body-bytes", "1000", "--body-timeout", "2.5"])
    assert (srv.max_body_bytes, srv.body_timeout) == (1000, 2.5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-body-bytes", "-1"], "--max-body-bytes must be >= 0, got -1"),
        (["--body-timeout", "0"], "--body-timeout must be above 0 and at most 86400 seconds, got 0.0"),
        (["--port", "99999"], "--port must be a whole number from 0 (any free port) to 65535, got 99999"),
        (
            ["--chunk-size", "-1"],
            "--chunk-size must be at least 1 character, or 0 / None for the whole text in one delta, got -1",
        ),
        (["--delay", "nan"], "--delay must be from 0 to 86400 seconds, got nan"),
    ],
)
def test_build_server_refuses_bad_limits(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        build_server(argv)
    assert excinfo.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"python -m drugprot.tools.serve: error: {message}"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# "inherited-ignored": started as a shell's background job is (SIGINT ignored), which Python would pass on.
@pytest.mark.parametrize("sigint", ["default", "inherited-ignored"])
def test_standalone_script_serves_until_interrupted(sigint: str) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(Path(serve.__file__).with_name("__main__.py")),
            "--port",
            "0",
            "--reply",
            "\\boxed{A}",
            "--reasoning",
            "r",
        ],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint if sigint == "inherited-ignored" else None,
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("serving http://127.0.0.1:")
        base_url = line.split()[1]
        client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        message = client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message
        assert (message.content, message.model_extra) == ("\\boxed{A}", {"reasoning_content": "r"})
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=300) == 130  # as every command; the timeout is a bound against a hang only
        assert proc.stderr.read() == "stopped (Ctrl-C)\n"
        proc.stderr.close()


def test_the_module_runs_with_dash_m(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "drugprot.tools.serve", "--help"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m drugprot.tools.serve ")


def test_a_script_reply_keeps_its_fields(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"a": 1, "b": {"content": "B", "finish_reason": "length"}}), encoding="utf-8")
    assert load_script(script) == {"a": Reply("1"), "b": Reply("B", finish_reason="length")}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "{path}: expected a JSON object mapping key -> reply, got list"),
        (
            '{"k": {"content": "x", "logprobs": 1}}',
            "{path}: the reply of key 'k' must be a string or an object with a string 'content' and optionally "
            "'reasoning_content' and 'finish_reason'; unknown fields ['logprobs']",
        ),
        (
            '{"k": {"reasoning_content": "r"}}',
            "{path}: the reply of key 'k' must be a string or an object with a string 'content' and optionally "
            "'reasoning_content' and 'finish_reason'",
        ),
    ],
)
def test_a_bad_script_is_a_script_error_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    script = tmp_path / "script.json"
    script.write_text(text, encoding="utf-8")
    with pytest.raises(ScriptError) as excinfo:
        load_script(script)
    assert str(excinfo.value) == message.format(path=script)
    assert isinstance(excinfo.value, DrugprotError)


def test_a_script_that_is_not_json_is_a_script_error(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text("{nope", encoding="utf-8")
    with pytest.raises(ScriptError) as excinfo:
        load_script(script)
    assert str(excinfo.value) == (
        f"{script}: not a UTF-8 JSON file (Expecting property name enclosed in double quotes: line 1 column 2 "
        "(char 1)); write a JSON object mapping key -> reply"
    )


def test_main_exits_1_on_a_bad_or_missing_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    script.write_text("[]", encoding="utf-8")
    assert main(["--port", "0", "--script", str(script)]) == 1
    assert capsys.readouterr().err == f"error: {script}: expected a JSON object mapping key -> reply, got list\n"
    missing = tmp_path / "missing.json"
    assert main(["--port", "0", "--script", str(missing)]) == 1
    assert capsys.readouterr().err == f"error: [Errno 2] No such file or directory: '{missing}'\n"


def test_verbose_logs_each_request_to_stderr_after_the_serving_line() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "drugprot.tools.serve", "--port", "0", "--reply", "x", "-v"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("serving http://127.0.0.1:")
        openai.OpenAI(base_url=line.split()[1], api_key="k", max_retries=0).models.list()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)  # a bound against a hang only
    assert (proc.returncode, out) == (130, "")
    logged, stopped = err.splitlines()
    assert logged.startswith("INFO:     127.0.0.1:") and logged.endswith(' - "GET /v1/models HTTP/1.1" 200 OK')
    assert stopped == "stopped (Ctrl-C)"
