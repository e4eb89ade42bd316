"""What decides a model's outputs, as one digest: the weights, the configuration and the tokenizer files.

Each file counts by its name, size and modification time, and a safetensors file also by its header (every
tensor's name, dtype, shape and offsets): overwriting ``model.safetensors`` in place (the model retrained)
changes the digest; so does copying the folder (new times), which only costs a redo. Reading the header is
a fraction of a millisecond where hashing the content costs about 1-2 s per GB on a 2-core machine
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

from lsgtool.core.load.source import WEIGHT_PATTERNS, Source

__all__ = ["fingerprint"]

CONFIG_FILES = ("config.json", "generation_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
HEADER_LIMIT = 100 * 2**20  # safetensors caps its JSON header at 100 MB


def _safetensors_header(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            (size,) = struct.unpack("<Q", handle.read(8))
            if size > HEADER_LIMIT:
                return None
            return hashlib.sha256(handle.read(size)).hexdigest()
    except (OSError, struct.error):
        return None


def _file(path: Path) -> dict[str, Any]:
    stat = path.stat()
    entry: dict[str, Any] = {"name": path.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    if path.suffix == ".safetensors":
        entry["header"] = _safetensors_header(path)
    return entry


def _files(folder: Path, names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [_file(folder / name) for name in names if (folder / name).is_file()]


def fingerprint(source: Source, tokenizer: str | None = None, **settings: Any) -> str:
    """A digest of ``source``'s weights, configuration and tokenizer (``tokenizer``: the folder or Hub id used
    instead of the model's own), and of ``settings`` (dtype, device, ...). Equal digests: equal outputs."""
    if source.path.is_file():
        weights = [_file(source.path)]
    else:
        weights = [_file(p) for p in sorted({p for pattern in WEIGHT_PATTERNS for p in source.folder.glob(pattern)})]
    where = tokenizer or source.tokenizer
    tokenizer_part: Any = where
    if where is not None and Path(where).is_dir():
        tokenizer_part = _files(Path(where), TOKENIZER_FILES)
    data = {"weights": weights, "config": source.config, "overrides": source.overrides,
            "config_files": [] if source.layout == "preset" else _files(source.folder, CONFIG_FILES),
            "tokenizer": tokenizer_part, "settings": settings}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:24]
