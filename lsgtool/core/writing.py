"""Writing output folders safely: lsgtool replaces only folders it wrote, stages every write in a marked
hidden folder next to the target, publishes it with one rename, and removes the stale staging folders of runs
that were killed.

A folder lsgtool wrote carries ``.lsgtool.json`` (what wrote it, whether it was verified); a model folder
(a ``config.json`` with a ``model_type`` or ``architectures``) also counts as replaceable, since that is what
``--overwrite`` is for. Anything else -- a file, a folder of other files, the working directory or one of its
parents -- is refused and left untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

__all__ = ["MARKER", "check_own_target", "check_target", "clean_stale", "clean_stale_files", "pid_alive", "probe_writable", "publish",
           "read_marker", "stage", "write_file", "write_json", "write_marker"]

MARKER = ".lsgtool.json"
STAGING = ".lsgtool-staging.json"
TMP = ".lsgtool-tmp"  # suffix of a file being written: .<name>.<pid>.lsgtool-tmp beside its target


def _staging_prefix(out: Path) -> str:
    return f".{out.name}.lsgtool-tmp."


def read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lsgtool_version() -> str:
    """The installed lsgtool's version, from package metadata (core imports nothing above it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lsgtool")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def write_marker(folder: Path, **fields: Any) -> None:
    write_json(Path(folder) / MARKER, {"written_by": "lsgtool", "version": lsgtool_version(), **fields})


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Replace the file ``path`` in one step: written beside it under a temporary name carrying this process's
    id, then renamed over it, with the permissions a new file gets. A killed writer leaves only the temporary
    file, which ``clean_stale_files`` removes."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TMP}")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def write_json(path: str | Path, data: Any) -> Path:
    """``write_file`` of ``data`` as indented JSON (values JSON does not know written as strings)."""
    return write_file(path, json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


def clean_stale_files(folder: str | Path, recursive: bool = False) -> list[str]:
    """Remove the temporary files of ``write_file`` calls whose process died (pid in the name, no such process)."""
    folder = Path(folder)
    removed = []
    for tmp in (folder.rglob if recursive else folder.glob)(f".*{TMP}"):
        pid = tmp.name[: -len(TMP)].rsplit(".", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            tmp.unlink(missing_ok=True)
            removed.append(tmp.name)
    return removed


def _is_model_folder(folder: Path) -> bool:
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and ("model_type" in config or "architectures" in config)


def check_target(out: str | Path, overwrite: bool, flag: str = "--out", probe: bool = True) -> Path:
    """Refuse (UsageError) a target that must not be written, before any long work; returns the path.
    ``probe``: also make and remove a folder where ``out`` will go, to prove it writable."""
    out = Path(out)
    resolved = out.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise UsageError(f"{flag} {out} is the current folder or one of its parents: lsgtool will not replace it.",
                         f"name a new folder, e.g. {flag} ./converted-model.")
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"{flag} {out} is a file, not a folder lsgtool wrote: it is left untouched.",
                         f"choose another {flag}, or move the file away yourself.")
    if out.exists():
        if not overwrite:
            raise UsageError(f"output folder '{out}' already exists.",
                             f"pass --overwrite to replace it, or choose another {flag}.")
        if read_marker(out) is None and not _is_model_folder(out) and any(out.iterdir()):  # empty: nothing to lose
            some = ", ".join(sorted(p.name for p in out.iterdir())[:3]) or "nothing"
            raise UsageError(f"{flag} {out} holds files lsgtool did not write ({some}): --overwrite replaces only "
                             "model folders and folders lsgtool wrote, so it is left untouched.",
                             f"choose another {flag}, or empty or remove that folder yourself.")
    if probe:
        probe_writable(out, flag, start=resolved.parent)  # published by a rename in the parent
    return out


def check_own_target(out: str | Path, command: str, flag: str = "--out") -> Path:
    """Before any work, for a command whose output folder is replaced on its next run (``profile``,
    ``inspect-kernels``): ``out`` must be new, empty, or a folder ``command`` wrote (its marker says so); anything
    else is refused untouched. Returns the path."""
    out = Path(out)
    here = Path.cwd().resolve()
    if out.is_dir() and not out.is_symlink() and out.resolve() not in (here, *here.parents) and any(out.iterdir()) \
            and (read_marker(out) or {}).get("command") != command:
        raise UsageError(f"{flag} {out} exists and was not written by lsgtool {command}: it is left untouched.",
                         f"choose another {flag}, or remove that folder yourself ({command} replaces only its own "
                         "output folders).")
    return check_target(out, overwrite=True, flag=flag)


def probe_writable(out: str | Path, flag: str = "--out", start: Path | None = None) -> None:
    """Refuse (UsageError naming ``flag``) an ``out`` that cannot be written, before any long work: a probe folder
    is made and removed in the nearest existing folder at or above ``start`` (default: ``out`` itself)."""
    out = Path(out)
    existing = (start or out).resolve()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{flag} {out}: '{existing}' is a file, so no folder can be made under it.",
                         f"choose another {flag}.")
    try:
        Path(tempfile.mkdtemp(prefix=".lsgtool-probe.", dir=existing)).rmdir()
    except OSError as exc:
        raise UsageError(f"{flag} {out}: cannot write in '{existing}' ({exc.strerror or exc}).",
                         f"choose a folder you can write to for {flag}.") from None


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(out: str | Path) -> list[Path]:
    """Remove staging folders of killed runs that targeted ``out`` (marked by lsgtool, their process gone)."""
    out = Path(out)
    parent = out.resolve().parent
    removed = []
    if not parent.is_dir():
        return removed
    for candidate in parent.glob(_staging_prefix(out) + "*"):
        try:
            info = json.loads((candidate / STAGING).read_text())
        except (OSError, ValueError):
            continue  # not ours, or not ours to judge
        if info.get("host") != socket.gethostname() or pid_alive(int(info.get("pid", 0))):
            continue
        shutil.rmtree(candidate, ignore_errors=True)
        removed.append(candidate)
    return removed


def stage(out: str | Path) -> Path:
    """A new marked staging folder next to ``out``, with the permissions a normal folder gets."""
    out = Path(out)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), dir=parent))
    (tmp / STAGING).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                           "started": time.time(), "target": str(out)}))
    return tmp


def normal_permissions(folder: Path) -> None:
    """``folder`` and everything in it with the permissions the umask gives new files and folders (staging
    folders and the temporary files libraries write and rename are 0700 / 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(folder, 0o777 & ~umask)
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o777 & ~umask)
        for name in files:
            os.chmod(os.path.join(root, name), 0o666 & ~umask)


def publish(tmp: Path, out: str | Path, overwrite: bool) -> Path:
    """Make the staged folder ``out`` with one rename; an existing ``out`` (checked by ``check_target``) is
    moved aside first and then removed."""
    out = Path(out)
    check_target(out, overwrite, probe=False)  # what is at ``out`` may have changed during the work
    (tmp / STAGING).unlink(missing_ok=True)
    normal_permissions(tmp)
    if out.exists():
        trash = stage(Path(out.parent, f"{out.name}-old"))
        out.rename(trash / out.name)
        tmp.rename(out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        tmp.rename(out)
    return out
