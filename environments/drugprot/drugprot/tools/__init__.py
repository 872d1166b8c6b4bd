"""Tools around the environment: the ``drugprot`` CLI (``cli``), the offline demo (``demo``), the local
OpenAI-compatible test server (``serve``), the bundled synthetic sample (``sample``) and the LoRA adapter tooling
(``adapters``)."""
