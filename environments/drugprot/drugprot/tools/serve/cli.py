"""The standalone server's command line: ``python -m drugprot.tools.serve --port 8000 --reply '\\boxed{A}'``."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import EXIT_INTERRUPTED
from drugprot.tools.serve.app import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_BODY_BYTES
from drugprot.tools.serve.replies import Reply, Responder, fixed_responder, scripted_responder
from drugprot.tools.serve.server import LIMIT_CONCURRENCY, OpenAIServer, ServerSettingError, check_settings

_REPLY_FIELDS = ("content", "reasoning_content", "finish_reason")


class ScriptError(DrugprotError, ValueError):
    """A ``--script`` file that is not a JSON object of replies; the message names the file and the key."""


def load_script(path: Path) -> dict[str, Reply]:
    """A JSON object mapping key → content string, or key → ``{"content", "reasoning_content", "finish_reason"}``.

    Raises:
        ScriptError: not JSON, not an object, or a reply object without a string ``content`` or with other fields.
        OSError: the file cannot be read.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ScriptError(f"{path}: not a UTF-8 JSON file ({exc}); write a JSON object mapping key -> reply") from None
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: expected a JSON object mapping key -> reply, got {type(data).__name__}")
    return {key: _script_reply(path, key, value) for key, value in data.items()}


def _script_reply(path: Path, key: str, value: object) -> Reply:
    if not isinstance(value, dict):
        return Reply(content=str(value))
    unknown = sorted(set(value) - set(_REPLY_FIELDS))
    if unknown or not isinstance(value.get("content"), str):
        raise ScriptError(
            f"{path}: the reply of key {key!r} must be a string or an object with a string 'content' and "
            f"optionally 'reasoning_content' and 'finish_reason'" + (f"; unknown fields {unknown}" if unknown else "")
        )
    return Reply(**value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options (``python -m drugprot.tools.serve`` and ``drugprot serve``)."""
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0 = any free port)")
    parser.add_argument("--reply", default=None, help="content of every reply (with --script: of unmatched ones)")
    parser.add_argument("--reasoning", default=None, help="reasoning_content sent before --reply")
    parser.add_argument("--finish-reason", default="stop", help="finish_reason of --reply")
    parser.add_argument(
        "--script",
        type=Path,
        help='JSON {"key": "reply" | {"content": ..., "reasoning_content": ...}}: the reply whose key occurs '
        "in the last user message (HTTP 500 when none does and --reply is not given)",
    )
    parser.add_argument("--model", action="append", help="model id listed by /v1/models (repeatable)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each reply")
    parser.add_argument("--chunk-size", type=int, default=16, help="characters per streamed delta (0 = whole)")
    parser.add_argument("--api-key", default=None, help="require this bearer token")
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=MAX_BODY_BYTES,
        help="largest request body accepted (413 above, before the body is read; a chunked body as it arrives)",
    )
    parser.add_argument(
        "--body-timeout", type=float, default=BODY_TIMEOUT, help="seconds to receive a request body (408 after)"
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=HEADER_TIMEOUT,
        help="seconds a connection has to deliver a request's line and headers whole, from when the server awaits "
        "it (a new connection, or the next request on a kept-alive one; uvicorn's timeout_keep_alive, as one "
        "deadline); then it is closed",
    )
    parser.add_argument(
        "--limit-concurrency",
        type=int,
        default=LIMIT_CONCURRENCY,
        help="open connections (or requests in flight) beyond which a request gets 503 (uvicorn's limit_concurrency)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request to stderr")


def settings_of(args: argparse.Namespace) -> dict[str, object]:
    """The :class:`OpenAIServer` settings the options give (``--chunk-size 0``: None, the whole text)."""
    return {
        "port": args.port,
        "delay": args.delay,
        "chunk_size": args.chunk_size or None,
        "max_body_bytes": args.max_body_bytes,
        "body_timeout": args.body_timeout,
        "header_timeout": args.header_timeout,
        "limit_concurrency": args.limit_concurrency,
    }


def flag_error(exc: ServerSettingError) -> str:
    """A refused setting as its command-line flag: ``--body-timeout must be ..., got inf``."""
    return f"--{exc.setting.replace('_', '-')} {exc.problem}"


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse the settings the server would refuse (``check_settings``, its own rules), before any work
    (``parser.error``: usage, one line, exit 2)."""
    try:
        check_settings(**settings_of(args))
    except ServerSettingError as exc:
        parser.error(flag_error(exc))


def server_from_args(args: argparse.Namespace, responder: Responder | None = None) -> OpenAIServer:
    """The (not yet started) server ``args`` describe; ``responder`` (e.g. a baseline) replaces --reply/--script."""
    if responder is None:
        default = None if args.reply is None else Reply(args.reply, args.reasoning, args.finish_reason)
        if args.script:
            responder = scripted_responder(load_script(args.script), default)
        else:
            responder = fixed_responder(default or Reply("", args.reasoning, args.finish_reason))
    return OpenAIServer(
        responder,
        models=tuple(args.model or ("trinity-mini",)),
        api_key=args.api_key,
        record=False,
        verbose=args.verbose,
        **settings_of(args),  # type: ignore[arg-type]
    )


def build_server(argv: Sequence[str] | None = None) -> OpenAIServer:
    """The (not yet started) server that ``main(argv)`` would run."""
    parser = argparse.ArgumentParser(
        prog="python -m drugprot.tools.serve",
        description="Serve a fake OpenAI-compatible chat-completions API on 127.0.0.1 until Ctrl-C.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    return server_from_args(args)


def serve_until_interrupted(server: OpenAIServer) -> None:
    """Start ``server``, print ``serving <base_url> (Ctrl-C to stop)`` to stderr, and serve until SIGINT; the server
    is stopped (its port closed) before the ``KeyboardInterrupt`` goes on to the caller (exit 130, as every command).

    Raises:
        OSError: the port cannot be bound.
        KeyboardInterrupt: Ctrl-C (SIGINT), the server stopped.
    """
    # A parent that ignores SIGINT (a shell's background job, a test runner) passes that on to us, and Python then
    # installs no KeyboardInterrupt handler: Ctrl-C / kill -INT would never stop the server.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    with server:
        print(f"serving {server.base_url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        threading.Event().wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Run :func:`build_server`'s server until Ctrl-C; prints ``serving <base_url>`` to stderr when up.

    Returns 130 (``EXIT_INTERRUPTED``, printing ``stopped``) on Ctrl-C, 1 (with ``error: ...`` on stderr) for a bad
    ``--script`` or a port it cannot bind; a bad setting exits 2 with the usage (``check_arguments``).
    """
    try:
        serve_until_interrupted(build_server(argv))
    except (DrugprotError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0
