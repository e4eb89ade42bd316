"""LOCOST-only shortcuts of ``lsgtool.load``: the authors' Lightning checkpoints, and LOCOST models by name."""

from __future__ import annotations

from pathlib import Path

from lsgtool.core.errors import UsageError
from lsgtool.core.load import load, resolve

__all__ = ["load_authors_checkpoint", "load_locost"]


def load_authors_checkpoint(path: str | Path, config=None, trusted: bool = False):
    """Build LOCOST from the authors' checkpoint; returns (model, {"missing": [...], "unexpected": [...]})."""
    model, info = load(path, config=config, trust_checkpoint=trusted, output_loading_info=True)
    return model, {"missing": info.missing_keys, "unexpected": info.unexpected_keys}


def load_locost(name_or_path: str, random_init: bool = False, **kwargs):
    """A LOCOST model from a preset name, a local folder or file, or a Hub id (``lsgtool.load`` options apply)."""
    hub = {k: kwargs[k] for k in ("revision", "token", "cache_dir", "local_files_only") if k in kwargs}
    source = resolve(name_or_path, weights_needed=not random_init, config=kwargs.pop("config", None), **hub)
    if source.kind != "locost":
        raise UsageError(f"{name_or_path!r} is not a LOCOST model ({source.layout}).", "use lsgtool.load for other models.")
    return load(source, random_init=random_init, **kwargs)
