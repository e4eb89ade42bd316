"""Writing output folders safely: lsgtool replaces only folders it wrote, stages every write in a marked
hidden folder next to the target, publishes it with one rename, and removes the stale staging folders of runs
that were killed.

A folder lsgtool wrote carries ``.lsgtool.json`` (what wrote it, whether it was verified); a model folder
(a ``config.json`` with a ``model_type`` or ``architectures``) also counts as replaceable, since that is what
``--overwrite`` is for. Anything else -- a file, a folder of other files, the working directory or one of its
parents -- is refused and left untouched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

__all__ = ["MARKER", "cache_home", "check_own_target", "check_target", "clean_stale", "clean_stale_files", "pid_alive", "probe_writable", "publish",
           "read_marker", "release_lock", "short_name", "stage", "take_lock", "uninterrupted", "write_file",
           "write_json", "write_marker"]

MARKER = ".lsgtool.json"
STAGING = ".lsgtool-staging.json"
TMP = ".lsgtool-tmp"  # suffix of a file being written: .<name>.<pid>.lsgtool-tmp beside its target
SHORT_BYTES = 100  # names lsgtool derives from a longer one (temporary files, records) stay this short, or shorter
LOCK_GRACE_S = 10  # a lock file still empty after this long was left by a process killed while taking it


def cache_home() -> Path:
    """lsgtool's cache folder: ``$XDG_CACHE_HOME/lsgtool``, else ``~/.cache/lsgtool`` (a relative
    XDG_CACHE_HOME is ignored, as the XDG specification asks). RuntimeError where there is no home either."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return Path(base if os.path.isabs(base) else Path.home() / ".cache") / "lsgtool"


def short_name(name: str) -> str:
    """``name`` as it is when it is at most ``SHORT_BYTES`` bytes long, else its beginning and a hash of the whole
    (``<first 80 bytes>~<12 hex digits>``): names made from a file's name (``.<name>.<pid>.lsgtool-tmp``, a record's
    ``<stem>.<key>.json``) then fit wherever the file itself fits (255 bytes on most file systems)."""
    encoded = name.encode("utf-8", "surrogateescape")
    if len(encoded) <= SHORT_BYTES:
        return name
    head = encoded[:80].decode("utf-8", "ignore")  # a character cut in two is left out
    return f"{head}~{hashlib.sha256(encoded).hexdigest()[:12]}"


def _staging_prefix(out: Path) -> str:
    return f".{short_name(out.name)}.lsgtool-tmp."


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


@contextlib.contextmanager
def uninterrupted():
    """Ctrl-C (SIGINT) waits for the block to end: writes that belong together (a record, then the file it
    describes, then the record marked final) all happen or, when the process is killed, leave their marked
    partial state. Outside the main thread (where no handler can be set) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def wait(signum, frame):
        caught.append(signum)
        if len(caught) > 1:  # a second Ctrl-C: the writes are stuck, stop now (what they left is marked partial)
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, wait)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)  # None: set outside Python
        if len(caught) == 1:
            signal.raise_signal(signal.SIGINT)  # now, to the handler that was there


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Replace the file ``path`` in one step: written beside it under a temporary name carrying this process's
    id, then renamed over it, with the permissions a new file gets. A killed writer leaves only the temporary
    file, which ``clean_stale_files`` removes."""
    path = Path(path)
    tmp = path.with_name(f".{short_name(path.name)}.{os.getpid()}{TMP}")
    try:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
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


def check_target(out: str | Path, overwrite: bool, flag: str = "--out", probe: bool = True,
                 example: str = "./converted-model") -> Path:
    """Refuse (UsageError) a target that must not be written, before any long work; returns the path.
    ``probe``: also make and remove a folder where ``out`` will go, to prove it writable; ``example``: a new
    folder the hint proposes."""
    out = Path(out)
    resolved = out.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise UsageError(f"{flag} {out} is the current folder or one of its parents: lsgtool will not replace it.",
                         f"name a new folder, e.g. {flag} {example}.")
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
    return check_target(out, overwrite=True, flag=flag, example=f"./{command}-out")


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


def _holder(lock: Path) -> dict[str, Any] | None:
    """What a lock file says of its holder (pid, host, started); {} while it is being written; None if it is gone."""
    try:
        data = json.loads(lock.read_text() or "{}")
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stale(holder: dict[str, Any], lock: Path) -> bool:
    """Whether a lock's holder is gone: a process of this machine that no longer runs, or a lock left empty."""
    if not holder:
        try:
            return time.time() - lock.stat().st_mtime > LOCK_GRACE_S
        except OSError:
            return False
    pid = holder.get("pid")
    return holder.get("host") == socket.gethostname() and isinstance(pid, int) and not pid_alive(pid)


def _take_over(lock: Path, holder: dict[str, Any]) -> None:
    """Move a stale lock away; if another process took it over meanwhile (the lock moved is not the one judged
    stale), put that one back."""
    moved = lock.with_name(f".{lock.name}.{os.getpid()}{TMP}")  # removed by clean_stale_files if we die
    try:
        os.rename(lock, moved)
    except FileNotFoundError:
        return
    if _holder(moved) != holder:
        with contextlib.suppress(OSError):
            os.link(moved, lock)
    moved.unlink(missing_ok=True)


def take_lock(lock: str | Path, flag: str, target: str | Path) -> None:
    """Hold ``lock`` for this process (a file naming its pid, host and start time), or refuse (UsageError naming
    ``flag`` and ``target``) while another process holds it; a lock whose process is gone from this machine is
    taken over. ``release_lock`` ends the hold."""
    lock = Path(lock)
    mine = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
    for _ in range(5):
        try:
            handle = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = _holder(lock)
            if holder is not None and not _stale(holder, lock):
                raise _held(holder, lock, flag, target) from None
            if holder is not None:
                _take_over(lock, holder)
            continue
        with os.fdopen(handle, "w") as file:
            json.dump(mine, file)
        return
    raise _held(_holder(lock) or {}, lock, flag, target)


def _held(holder: dict[str, Any], lock: Path, flag: str, target: str | Path) -> UsageError:
    started = holder.get("started")
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(started, (int, float)) else "now"
    return UsageError(f"{flag} {target}: another lsgtool run (pid {holder.get('pid', '?')} on "
                      f"{holder.get('host', 'this machine')}, since {since}) is writing there.",
                      f"wait for it to end, or choose another {flag}; if no such run is going on, remove {lock}.")


def release_lock(lock: str | Path) -> None:
    """End this process's hold on ``lock`` (a lock another process holds is left alone)."""
    lock = Path(lock)
    holder = _holder(lock)
    if holder and holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
        lock.unlink(missing_ok=True)


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
