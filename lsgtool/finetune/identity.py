"""What a resumed run must be given again, by what it is rather than by how it was typed: local data by the
digest of its content (``./cls.jsonl``, its absolute path and a copy elsewhere are the same data; the same
file edited since the run started is not), a local model by its resolved path. The run folder's marker keeps
the data's record (``{"path": ..., "sha256": ...}``) from the run's start."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError


def data_record(name: str) -> dict[str, str] | None:
    """Where local data ``name`` lives and one SHA-256 of the files it is read from (their names inside it and
    their contents, a large file's hash cached as the model fingerprint's are); None for data that is not local
    (a Hub dataset)."""
    from lsgtool.core.load.fingerprint import content_hash
    from lsgtool.finetune.data import local_files

    path = Path(name).expanduser()
    if not path.exists():
        return None
    path = path.resolve()
    files = [[file.relative_to(path).as_posix() if file != path else "", content_hash(file)]
             for file in local_files(path)]
    return {"path": str(path), "sha256": hashlib.sha256(json.dumps(files).encode()).hexdigest()}


def same_place(now: Any, before: Any) -> bool:
    """Whether two names of a model or data are one local file or folder (a relative and an absolute path)."""
    if not isinstance(now, str) or not isinstance(before, str):
        return False
    a, b = Path(now).expanduser(), Path(before).expanduser()
    return a.exists() and b.exists() and a.resolve() == b.resolve()


def same_data(name: str, record: dict[str, Any] | None) -> bool | None:
    """Whether ``--data name`` holds the data the run started with (``record``, from its marker): True for the
    same content wherever it lies now, None when there is nothing to compare (Hub data, a run without a record).
    The run's own file edited since is refused: the checkpoint was trained on what it held then."""
    if not record or not record.get("sha256"):
        return None
    now = data_record(name)
    if now is None:
        return None
    if now["sha256"] == record["sha256"]:
        return True
    if now["path"] == record.get("path"):
        raise UsageError(f"--data {name} changed since the run started: its content differs from the data the "
                         "checkpoint was trained on.",
                         "resume with the data as it was, or train on the new data in a new run (another --out, "
                         "or --overwrite to replace this one).")
    return False
