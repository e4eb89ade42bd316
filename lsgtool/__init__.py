"""lsgtool: long-context transformers (LSG attention, LOCOST state-space encoders), with a CLI and plugins.

The public Python API; heavy modules (torch) load on first attribute access so ``lsgtool --help`` is fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "LSGConfig": "lsgtool.core.lsg.config",
    "LSGSelfAttention": "lsgtool.core.lsg.module",
    "lsg_attention": "lsgtool.core.lsg.attention",
    "SparseInputs": "lsgtool.core.lsg.selectors",
    "SparseTokens": "lsgtool.core.lsg.selectors",
    "ModelPreset": "lsgtool.core.presets",
    "convert": "lsgtool.core.convert.api",
    "save": "lsgtool.core.convert.api",
    "load": "lsgtool.core.load",
    "load_tokenizer": "lsgtool.core.load",
    "LoadInfo": "lsgtool.core.load",
    "ArchitectureAdapter": "lsgtool.core.lsg.adapters",
    "LocostConfig": "lsgtool.core.ssm.locost",
    "LocostModel": "lsgtool.core.ssm.locost",
    "LocostForConditionalGeneration": "lsgtool.core.ssm.locost",
    "LocostEncoderModel": "lsgtool.core.ssm.locost",
    "BiSSM": "lsgtool.core.ssm",
    "S4DKernel": "lsgtool.core.ssm.kernels",
    "load_locost": "lsgtool.core.load.locost",
    "LsgtoolError": "lsgtool.core.errors",
    "UsageError": "lsgtool.core.errors",
    "ConfigError": "lsgtool.core.errors",
    "PluginError": "lsgtool.core.errors",
    "make_plugin_manager": "lsgtool.plugins.manager",
    "get_registry": "lsgtool.core.registry",
}

__all__ = ["__version__", *_LAZY]

from lsgtool import _autoregister  # noqa: E402  (converted folders load through transformers' Auto classes)
from lsgtool.core import registry as _registry  # noqa: E402


def _install_plugins():
    """Fill core's registries on first use: built-ins and installed plugins, through the plugin layer."""
    from lsgtool.plugins.manager import install_default

    return install_default()


_autoregister.install()
_registry.set_installer(_install_plugins)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lsgtool' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
