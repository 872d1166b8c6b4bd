"""Using a prime-rl LoRA adapter of Trinity-Mini (AFMoE) outside prime-rl.

prime-rl writes its adapter in a form PEFT cannot load as is (``experts`` in ``target_modules``, per-expert
keys, no ``base_model.model.`` prefix). This package offers two ways to use it:

- ``merge.merge_adapter``: fold ``W += (alpha/r) B A`` into the base checkpoint, shard by shard. The result
  is a plain checkpoint any runtime serves (``drugprot adapter merge``).
- ``peft_loading.load_model_with_adapter``: rewrite the adapter for the installed transformers/PEFT, load
  it with PEFT, and check every LoRA module really took effect.

Without torch: ``safetensors_files`` reads JSON and safetensors headers, ``adapter_config`` the LoRA
settings, ``layout`` pairs an adapter's keys into modules, ``base_checkpoint`` maps them onto a base.
``cli`` and ``predict`` are the ``drugprot adapter`` and ``drugprot predict`` commands.
Importing this package does not import torch.
"""

from __future__ import annotations

import importlib.util

from drugprot.core.errors import DrugprotError

ADAPTERS_EXTRA = ("torch", "transformers", "peft", "safetensors")
"""What ``drugprot[adapters]`` installs, by import name."""
INSTALL_ADAPTERS_EXTRA = "uv pip install -e 'environments/drugprot[adapters]'"
"""The install command that works: drugprot is not on PyPI (run it from the repository root)."""


class AdapterError(DrugprotError, ValueError):
    """An adapter or base checkpoint that cannot be used as asked: the message names the key or file."""


class AdapterNotAppliedError(AdapterError):
    """PEFT loaded the adapter but (some of) it has no effect on the model: it would have failed silently."""


class MissingExtraError(AdapterError):
    """A command needs the ``adapters`` extra and some of its packages are not installed."""


def require_adapters_extra(command: str, modules: tuple[str, ...] = ADAPTERS_EXTRA) -> None:
    """Check ``modules`` can be imported, without importing them.

    Raises:
        MissingExtraError: one line naming ``command``, the missing packages and the install command.
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"{command} needs the adapters extra ({', '.join(missing)} not installed); from the drugprot "
            f"repository root run: {INSTALL_ADAPTERS_EXTRA}"
        )


__all__ = [
    "ADAPTERS_EXTRA",
    "INSTALL_ADAPTERS_EXTRA",
    "AdapterError",
    "AdapterNotAppliedError",
    "MissingExtraError",
    "require_adapters_extra",
]
