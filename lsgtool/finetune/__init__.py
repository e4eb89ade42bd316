"""Fine-tuning below ``lsgtool finetune``, usable from Python::

    from lsgtool.finetune import finetune, resolve
    settings = resolve(None, None, {"model": {"name": "./bert-lsg"}, "data": {"name": "reviews.jsonl"}}, [])
    metrics = finetune(settings, "run", progress=my_progress)

Modules by job: ``config`` (the typed settings, TOML in and out), ``data`` and ``gsg`` (examples, labels,
gap-sentence pairs, tokens), ``model`` (load, convert or extend, freeze), ``collators``, ``prepare`` (all of it
before training), ``arguments``, ``metrics``, ``train`` (the Trainer and its callbacks), ``curves``, and ``run``
(the run folder: checks, interruption, resume, the final model and metrics).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"finetune": ("lsgtool.finetune.run", "run"), "Settings": ("lsgtool.finetune.config", "Settings"),
         "resolve": ("lsgtool.finetune.config", "resolve")}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
