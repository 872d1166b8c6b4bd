"""``python -m drugprot.tools.serve`` (or this file as a script): the standalone server until Ctrl-C."""

from drugprot.tools.serve.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
