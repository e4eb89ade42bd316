"""What decides a model's outputs, as one digest: the content of its weights, configuration and tokenizer files.

Files count by their bytes (SHA-256), never by their names' times: two same-shaped models whose files carry one
modification time (``touch -d``, ``tar --mtime``, Nix or reproducible images; copied with ``cp -rp``) differ,
and a copy of a folder is the same model. A tokenizer given as a Hub id counts by the files of its snapshot.

Hashing costs about 1-2 s per GB (benchmarks/RESULTS.md), so the hash of a file of ``CACHED_BYTES`` or more is
kept in lsgtool's cache (``$XDG_CACHE_HOME/lsgtool/hashes``, else ``~/.cache/lsgtool/hashes``), one entry per
device and inode, valid while the file's size, modification time and change time are those it was hashed at
(the change time is set by the system on every write, even one that puts the old modification time back).
A cache that cannot be read or written costs the hash again, nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from lsgtool.core.load.source import HUB_ID, TOKENIZER_EXTRAS, TOKENIZER_FILES, WEIGHT_PATTERNS, Source, snapshot
from lsgtool.core.writing import cache_home

__all__ = ["cache_dir", "content_hash", "fingerprint"]

CONFIG_FILES = ("config.json", "generation_config.json")
CACHED_BYTES = 2**20  # smaller files are hashed each time: reading them costs less than the cache
SETTLED_NS = 2 * 10**9  # a file changed this recently is not cached: file times are coarser than a write


def cache_dir() -> Path:
    """Where lsgtool keeps the hashes of large files."""
    return cache_home() / "hashes"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(2**22), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(stat: os.stat_result) -> dict[str, int]:
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns}


def _cached(entry: Path, stamp: dict[str, int]) -> str | None:
    try:
        found = json.loads(entry.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or {k: found.get(k) for k in stamp} != stamp:
        return None
    return found.get("sha256") if isinstance(found.get("sha256"), str) else None


def _keep(entry: Path, stamp: dict[str, int], digest: str) -> None:
    from lsgtool.core.writing import write_file

    if time.time_ns() - max(stamp["mtime_ns"], stamp["ctime_ns"]) < SETTLED_NS:
        return  # a write in the same clock tick would leave the same times: hash it again next time
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_file(entry, json.dumps({**stamp, "sha256": digest}))
    except OSError:
        pass  # no cache: the next run hashes the file again


def content_hash(path: Path) -> str:
    """SHA-256 of a file's content; a large file's from the cache while the file is as it was when hashed."""
    stat = path.stat()
    if stat.st_size < CACHED_BYTES:
        return _sha256(path)
    stamp = _stamp(stat)
    entry = cache_dir() / f"{stat.st_dev}-{stat.st_ino}.json"
    digest = _cached(entry, stamp)
    if digest is None:
        digest = _sha256(path)
        if _stamp(path.stat()) == stamp:  # not changed while it was read
            _keep(entry, stamp, digest)
    return digest


def _files(folder: Path, names: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"name": name, "sha256": content_hash(folder / name)} for name in names if (folder / name).is_file()]


def _weights(source: Source) -> list[dict[str, str]]:
    if source.layout == "preset":  # a preset without weights: its configuration is all there is
        return []
    if source.path.is_file():
        return [{"name": source.path.name, "sha256": content_hash(source.path)}]
    found = sorted({p.name for pattern in WEIGHT_PATTERNS for p in source.folder.glob(pattern) if p.is_file()})
    return _files(source.folder, tuple(found))


def _tokenizer(where: str | None) -> Any:
    """The tokenizer's files (a folder, or a Hub id's snapshot, as ``load_tokenizer`` finds it)."""
    if where is None:
        return None
    folder = Path(where)
    if not folder.is_dir():
        if folder.exists() or not HUB_ID.match(str(where)):
            return str(where)  # no tokenizer: loading it says so
        folder = snapshot(str(where))
    return _files(folder, TOKENIZER_FILES + TOKENIZER_EXTRAS)


def fingerprint(source: Source, tokenizer: str | None = None, **settings: Any) -> str:
    """A digest of ``source``'s weights, configuration and tokenizer (``tokenizer``: the folder or Hub id used
    instead of the model's own), and of ``settings`` (dtype, device, ...). Equal digests: equal outputs.
    Nothing is loaded: the files are read (large ones once, see ``content_hash``)."""
    data = {"weights": _weights(source), "config": source.config, "overrides": source.overrides,
            "config_files": [] if source.layout == "preset" else _files(source.folder, CONFIG_FILES),
            "tokenizer": _tokenizer(tokenizer or source.tokenizer), "settings": settings}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:24]
