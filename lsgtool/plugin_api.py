"""What a plugin may import: the hook marker, the types the hooks register, errors, and the CLI helpers.

Everything here is a stable promise; the modules behind it are not. Heavy names (torch) load on first use,
so a plugin that imports this module keeps ``lsgtool --help`` fast.

- hooks: ``hookimpl``
- sparse selectors: ``SparseInputs``, ``SparseTokens``, ``gather_tokens``
- architectures and presets: ``ArchitectureAdapter``, ``ModelPreset``
- errors: ``LsgtoolError`` (exit 1), ``UsageError`` (exit 2), ``PluginError``
- commands: ``state(ctx)`` (plugin manager, ``--debug``), ``JsonOption``, ``emit(data, as_json, render)``,
  ``stdout()``, ``stderr()``
- machine facts: ``available_mb(device)``; ``compatibility_report()`` (tested versions, transformers contracts);
  ``cpu_accelerated()`` and ``INSTRUCTIONS`` (the reduced precisions this CPU computes faster than float32),
  ``int8_missing()`` (why ``--dtype int8`` cannot run here: None where it can)
"""

from __future__ import annotations

import importlib
from typing import Any

from lsgtool.plugins.hookspecs import hookimpl

_LAZY = {
    "SparseInputs": "lsgtool.core.lsg.selectors",
    "SparseTokens": "lsgtool.core.lsg.selectors",
    "gather_tokens": "lsgtool.core.lsg.selectors",
    "ArchitectureAdapter": "lsgtool.core.lsg.adapters",
    "ModelPreset": "lsgtool.core.presets",
    "LsgtoolError": "lsgtool.core.errors",
    "UsageError": "lsgtool.core.errors",
    "PluginError": "lsgtool.core.errors",
    "AppState": "lsgtool.commands._common",
    "state": "lsgtool.commands._common",
    "JsonOption": "lsgtool.commands._common",
    "emit": "lsgtool.commands._common",
    "stdout": "lsgtool.commands._common",
    "stderr": "lsgtool.commands._common",
    "available_mb": "lsgtool.profiling.memory",
    "compatibility_report": "lsgtool.core.compat",
    "cpu_accelerated": "lsgtool.core.precision",
    "INSTRUCTIONS": "lsgtool.core.precision",
    "int8_missing": "lsgtool.core.precision",
}

__all__ = ["hookimpl", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lsgtool.plugin_api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
