"""Weights into a model with every problem reported: missing, unexpected and mismatched keys, never hidden.

transformers' ``from_pretrained`` reports what it could not place with a log record; lsgtool places some
weights itself afterwards (the LSG global-token table, which transformers' base classes do not know), so
for the one call it holds that record back and reports the keys itself, once the picture is complete:
as a warning on the ``lsgtool.load`` logger naming the keys, and in the ``LoadInfo`` it returns.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsgtool.core.errors import LsgtoolError, UsageError

log = logging.getLogger("lsgtool.load")
SHOWN = 8  # keys named in a warning; the LoadInfo keeps them all


@dataclass
class LoadInfo:
    """Where a model came from and which checkpoint keys did not fit it."""

    source: str
    path: str
    kind: str
    layout: str
    weights: str = "checkpoint"  # or "random"
    missing_keys: list[str] = field(default_factory=list)
    unexpected_keys: list[str] = field(default_factory=list)
    mismatched_keys: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def take(self, info: dict[str, Any]) -> "LoadInfo":
        """Add transformers' ``output_loading_info`` dict."""
        self.missing_keys += sorted(info.get("missing_keys", ()))
        self.unexpected_keys += sorted(info.get("unexpected_keys", ()))
        self.mismatched_keys += [{"key": k, "checkpoint": list(a), "model": list(b)}
                                 for k, a, b in sorted(info.get("mismatched_keys", ()))]
        return self


def _named(keys: list[str]) -> str:
    more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
    return ", ".join(keys[:SHOWN]) + more


def report(info: LoadInfo) -> None:
    """One warning per kind of problem, naming the keys."""
    where = f"'{info.source}'" + (f" ({info.path})" if info.path != info.source else "")
    if info.missing_keys:
        log.warning("%s: %d weights missing from the checkpoint were initialised at random: %s", where,
                    len(info.missing_keys), _named(info.missing_keys))
    if info.unexpected_keys:
        log.warning("%s: %d checkpoint weights the model has no place for were not used: %s", where,
                    len(info.unexpected_keys), _named(info.unexpected_keys))
    if info.mismatched_keys:
        shapes = [f"{m['key']} {tuple(m['checkpoint'])} -> {tuple(m['model'])}" for m in info.mismatched_keys]
        log.warning("%s: %d weights have another shape in the checkpoint and were initialised at random: %s", where,
                    len(shapes), _named(shapes))


class _HoldReport(logging.Filter):
    """Keeps transformers' load report of one call (lsgtool reports the same keys itself)."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "LOAD REPORT" in message:
            self.held.append(re.sub(r"\x1b\[[0-9;]*m", "", message))
            return False
        return True


def safetensors_damage(path: Path) -> str | None:
    """Why a ``.safetensors`` file is damaged (cut short, or not one at all), or None when its header holds and
    the file covers every tensor the header lists."""
    import json
    import struct

    size = path.stat().st_size
    try:
        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > size - 8:
                return f"its header says {length:,} bytes and the file has {size:,}"
            header = json.loads(handle.read(length))
    except (OSError, struct.error, ValueError) as exc:
        return f"its header cannot be read ({type(exc).__name__})"
    ends = [entry["data_offsets"][1] for key, entry in header.items()
            if key != "__metadata__" and isinstance(entry, dict) and "data_offsets" in entry]
    needed = 8 + length + max(ends, default=0)
    return f"it has {size:,} bytes of the {needed:,} its tensors need (cut short)" if size < needed else None


def damaged_weights(folder: Path) -> tuple[Path, str] | None:
    """The first damaged weights file in a model folder, and why."""
    for path in sorted(Path(folder).glob("*.safetensors")):
        why = safetensors_damage(path)
        if why:
            return path, why
    return None


def from_pretrained(cls, folder, **kwargs):
    """``cls.from_pretrained(folder, **kwargs)`` returning (model, transformers' loading-info dict); a damaged
    weights file is a usage error naming it."""
    logger = logging.getLogger("transformers.modeling_utils")
    hold = _HoldReport()
    logger.addFilter(hold)
    try:
        return cls.from_pretrained(folder, output_loading_info=True, **kwargs)
    except Exception as exc:
        damaged = damaged_weights(Path(folder)) if Path(folder).is_dir() else None
        if damaged is not None:
            raise UsageError(f"'{damaged[0]}' is damaged: {damaged[1]}.",
                             "copy or download the model again (an interrupted copy or download leaves such a file), "
                             "or save it anew with save_pretrained.") from None
        if not isinstance(exc, RuntimeError):
            raise
        details = ("\n" + hold.held[-1]) if hold.held else ""
        raise LsgtoolError(f"cannot load the weights of '{folder}' into {cls.__name__}: {str(exc).splitlines()[0]}{details}",
                           "pass ignore_mismatched_sizes=True to start the mismatched weights afresh, or load the "
                           "checkpoint with the class it was saved from.") from None
    finally:
        logger.removeFilter(hold)


def load_state(model, state: dict, ignore: tuple[str, ...] = (), tied: tuple[str, ...] = ()) -> dict[str, Any]:
    """Copy ``state`` into ``model`` by name: keys of another shape are left out and reported, not fatal.

    ``ignore``: checkpoint keys known to be unused; ``tied``: model keys that need no checkpoint entry.
    """
    own = model.state_dict()
    mismatched = {(k, tuple(v.shape), tuple(own[k].shape)) for k, v in state.items() if k in own and own[k].shape != v.shape}
    fitting = {k: v for k, v in state.items() if k not in {m[0] for m in mismatched}}
    missing, unexpected = model.load_state_dict(fitting, strict=False)
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    return {"missing_keys": {k for k in missing if k not in tied} - {m[0] for m in mismatched},
            "unexpected_keys": {k for k in unexpected if k not in ignore}, "mismatched_keys": mismatched}
