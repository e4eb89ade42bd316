"""One job in several processes, on one machine or several (``torchrun``, ``accelerate launch``): which process
writes and reports, the process group started before any check, and checks that every process hears.

A process that stops before the others reach a collective leaves them waiting for it (30 minutes by default, and
across machines no launcher ends them sooner): so a run starts the group first, and a refusal on any process
(an output folder the first process refuses, data or a model one machine lacks) stops every process with it.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

from lsgtool.core.errors import LsgtoolError, UsageError

Result = TypeVar("Result")


def launched() -> bool:
    """Whether a distributed launcher started this process as one of several (``WORLD_SIZE`` above 1)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def is_main() -> bool:
    """Whether this is the first (or only) process of the job: the one that writes shared files and reports."""
    return os.environ.get("RANK", "0") == "0"


def start(cpu: bool):
    """accelerate's ``PartialState`` with the process group up (gloo between CPUs), or None outside a
    distributed launch. Later ``PartialState()`` calls (the Trainer's, a batch's) use this group."""
    if not launched():
        return None
    try:
        from accelerate import PartialState
    except ImportError:
        raise UsageError("this run was started by a distributed launcher, and sharing the work needs accelerate.",
                         "pip install accelerate.") from None
    return PartialState(cpu=cpu)


def together(work: Callable[[], Result], state) -> Result:
    """``work()`` on this process; if it failed on any process, every process raises: the one that failed its own
    error, the others an error of the same exit code naming that process and its message. Without ``state``
    (a single process), ``work()``."""
    if state is None:
        return work()
    from accelerate.utils import gather_object

    own = None
    try:
        result = work()
    except Exception as exc:  # whatever it is, the other processes must hear of it before they wait on this one
        own = exc
    failures = [f for f in gather_object([_described(own, state.process_index)]) if f is not None]
    if own is not None:
        raise own
    if failures:
        rank, host, code, message, hint = failures[0]
        error = LsgtoolError(f"process {rank} (on {host}) stopped: {message}", hint or "see that process's output.")
        error.exit_code = code
        raise error
    return result


def _described(exc: BaseException | None, rank: int) -> tuple[int, str, int, str, str | None] | None:
    if exc is None:
        return None
    if isinstance(exc, LsgtoolError):
        return rank, socket.gethostname(), exc.exit_code, exc.message, exc.hint
    return rank, socket.gethostname(), 1, f"{type(exc).__name__}: {exc}".splitlines()[0], None


def shared(folder: Path, state, flag: str = "--out") -> None:
    """Refuse (every process) a ``folder`` the processes do not share: the first process makes a file in it, which
    every other must see. A machine with its own disk at that path would write its share where the first process
    never looks, and resume from nothing."""
    if state is None:
        return
    from accelerate.utils import gather_object

    probe = together(lambda: _probe(folder) if state.is_main_process else None, state)
    try:
        name = gather_object([probe.name if probe else None])[0]

        def check() -> None:
            if not (Path(folder) / name).exists():
                raise UsageError(f"{flag} {folder} on {socket.gethostname()} is not the folder the first process "
                                 "writes: the file it made there is not here.",
                                 f"put {flag} on storage every machine mounts at the same path (NFS, a cluster file "
                                 "system).")

        together(check, state)
    finally:
        if probe is not None:
            probe.unlink(missing_ok=True)


def _probe(folder: Path) -> Path:
    handle, path = tempfile.mkstemp(prefix=".lsgtool-probe.", dir=folder)
    os.close(handle)
    return Path(path)
