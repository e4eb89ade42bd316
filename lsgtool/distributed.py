"""One job in several processes, on one machine or several (``torchrun``, ``accelerate launch``): which process
writes and reports, the process group started before any check, and checks that every process hears.

A process that stops before the others reach a collective leaves them waiting for it (30 minutes by default, and
across machines no launcher ends them sooner), or failing on a closed connection that says nothing of why: so a
run starts the group first, and ``together`` is the one place processes agree. Each stage that can refuse on one
process runs in it (argument and data checks, the folder the first process writes, a batch's share of the inputs,
the first process's writing and report): a refusal on any process (an output folder the first process refuses,
data or a model one machine lacks, a dataset row without text) stops every process with it, each saying which
process stopped and why, with that error's exit code.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn, TypeVar

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
    state = PartialState(cpu=cpu)
    atexit.unregister(_leave)  # registered once, however many runs a process starts
    atexit.register(_leave)
    return state


def _leave() -> None:
    """Close the process group while Python is still whole. Left to the interpreter's teardown, gloo's worker
    threads can abort a process whose run succeeded (SIGABRT, "terminate called without an active exception"),
    and the launcher then reports the whole job failed. Every collective is over by then (a run ends in
    ``together``), and closing is local to this process."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def leave(code: Any) -> NoReturn:
    """End this process of a started group with exit ``code`` (``SystemExit``'s: None 0, a message 1): the exit
    functions run as at any exit (``_leave`` closes the group), the streams are flushed, and the process ends
    without the interpreter's teardown. Closing the group was not always enough: a 2-node run that had said its
    error still aborted in the teardown (SIGABRT, "terminate called without an active exception", gloo's threads
    meeting C++'s static destructors), and its launcher reported a crash instead of the exit code (CI, stop 42)."""
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # as the interpreter would
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def running() -> bool:
    """Whether this process is one of a started group of several (``start`` under a distributed launcher)."""
    if not launched():
        return False
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def together(work: Callable[[], Result], undo: Callable[[Result], None] | None = None) -> Result:
    """``work()`` on this process; if it failed on any process, every process raises: the one that failed its own
    error, the others an error of the same exit code naming that process and its message, once ``undo`` has taken
    back what their ``work()`` did (a lock it took). Outside a started group (one process), ``work()``.

    Every process must call it at the same point. It wraps a stage that can refuse on some processes only and does
    no collective itself, before the next collective or the end of the run: a stage with collectives inside (the
    Trainer's) cannot be wrapped, since a process failing in it would wait here while the others wait there."""
    if not running():
        return work()
    own = None
    try:
        result = work()
    except Exception as exc:  # whatever it is, the other processes must hear of it before they wait on this one
        own = exc
    try:
        words = everyone(_described(own))
    except LsgtoolError:
        if own is not None:
            raise own from None
        raise
    failures = [word for word in words if word is not None]
    if own is not None:
        raise own
    if failures:
        rank, host, code, message, hint = failures[0]
        error = LsgtoolError(f"process {rank} (on {host}) stopped: {message}", hint or "see that process's output.")
        error.exit_code = code
        if undo is not None:
            undo(result)
        raise error
    return result


def everyone(value: Any) -> list[Any]:
    """``value`` of every process, in rank order: a collective, which every process of the group must reach."""
    import torch.distributed as dist

    found: list[Any] = [None] * dist.get_world_size()
    try:
        dist.all_gather_object(found, value)
    except RuntimeError:  # gloo's "Connection closed by peer" (NCCL's own): a process left without a word
        raise LsgtoolError("another process of this job stopped without saying why (killed, or failed where the "
                           "processes could not hear it).", "see that process's output: each machine's launcher "
                           "prints its own.") from None
    return found


def _described(exc: BaseException | None) -> tuple[int, str, int, str, str | None] | None:
    if exc is None:
        return None
    import torch.distributed as dist

    rank = dist.get_rank()
    if isinstance(exc, LsgtoolError):
        return rank, socket.gethostname(), exc.exit_code, exc.message, exc.hint
    return rank, socket.gethostname(), 1, f"{type(exc).__name__}: {exc}".splitlines()[0], None


def shared(folder: Path, flag: str = "--out") -> None:
    """Refuse (every process) a ``folder`` the processes do not share: the first process makes a file in it, which
    every other must see. A machine with its own disk at that path would write its share where the first process
    never looks, and resume from nothing."""
    if not running():
        return
    probe = together(lambda: _probe(folder) if is_main() else None)
    try:
        name = everyone(probe.name if probe else None)[0]

        def check() -> None:
            if not (Path(folder) / name).exists():
                raise UsageError(f"{flag} {folder} on {socket.gethostname()} is not the folder the first process "
                                 "writes: the file it made there is not here.",
                                 f"put {flag} on storage every machine mounts at the same path (NFS, a cluster file "
                                 "system).")

        together(check)
    finally:
        if probe is not None:
            probe.unlink(missing_ok=True)


def _probe(folder: Path) -> Path:
    handle, path = tempfile.mkstemp(prefix=".lsgtool-probe.", dir=folder)
    os.close(handle)
    return Path(path)
