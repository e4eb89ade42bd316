"""The two products of an uncached decoding step, scores = X·qᵀ and read = w·X, by the library path that streams
the encoder output X fastest on the CPU at hand.

Both products have few rows (heads × beams × queries, 12 for a greedy LOCOST-base step) against a long X, so they
should run at the speed X can be read. Which path does differs from CPU to CPU: on a 2-core AMD EPYC, MKL's
GEMM took 4.2x (scores) and 3.3x (read) the time of a ``sum`` of X with 12 rows, oneDNN's 1.7x and 2.0x; on the
Intel CPU RESULTS.md was first measured on, MKL's took about 2x (``benchmarks/decoding.py --gemm``). So each
product's path is timed once per CPU, torch version, threads, dtype, rows and length class, on the real X in the
process that uses it (a slice of X can mislead, see RESULTS.md, issue 32), and kept in lsgtool's cache
(``$XDG_CACHE_HOME/lsgtool/decoding-paths.json``, else ``~/.cache/...``); later steps and runs reuse it.
Processes measuring at once may each write the file: the last write wins, the others measure again next time.
Both paths compute in the tensors' own dtype: float32 stays float32 (results differ by summation order only).

- ``matmul``: ``torch.bmm`` (MKL for float32 on x86; oneDNN for bfloat16), the path everywhere else: on GPUs,
  under autograd, for short inputs (below ``TUNE_LENGTH`` a step is cheap and a timing is mostly noise).
- ``onednn``: oneDNN's linear, the kernel torch's compiler uses on CPUs (``torch.ops.mkldnn._linear_pointwise``);
  X is its input for the scores and its weight, read transposed in place, for the read (no copy of X).
- ``packed``: the same linear with X as its weight, reordered once into oneDNN's blocked layout
  (``torch.ops.mkldnn._reorder_linear_weight``, as torch's compiler prepacks a model's weights): every layer of
  every step then streams the packed copy instead of X's plain rows, which oneDNN would otherwise reorder on every
  call (at 262K tokens on the AMD EPYC, MKL / oneDNN / packed: bfloat16 scores 35.9 / 36.9 / 20.9 ms, read 53.2 /
  82.7 / 17.5 ms; float32 read 97.2 / 55.5 / 39.0 ms; RESULTS.md, issue 32). A packed copy is made per product
  and encoder output, only where ``packed`` is the path chosen, and freed when ``generate`` returns (``release``)
  or X is freed: up to two copies of X (``COPIES``, which the memory estimate counts; per row when a batch has
  one encoder output per row). Packing costs a few steps' time, once per document (float32 2.4 s, bfloat16 0.8 s
  at 262K), which the choice does not weigh: a summary of a few tokens may pay more than it saves. A packing that
  fails (memory) falls back to ``onednn`` for that call. X changed in place is packed again (its version counter;
  writes through ``.data`` bypass it, and an inference-mode X has none: it is taken as unchanged).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import time
import weakref
from pathlib import Path

import torch
from torch import Tensor

__all__ = ["COPIES", "PATHS", "TUNE_LENGTH", "chosen", "copies", "forced", "read", "release", "scores", "tuned"]

PATHS = ("matmul", "onednn", "packed")
COPIES = 2  # packed copies of X the products may hold (one per product), beside X
TUNE_LENGTH = 32768
SLOWER = 2.0  # a path whose first run takes this many times the best so far is not run again
_chosen: dict[str, str] = {}  # this process's choices, by key (the file holds every process's)
_forced: str | None = None
_packs: dict[tuple[str, int], tuple[weakref.ref, int, list[Tensor]]] = {}  # (product, id of X): X, its version, packed


def _onednn_linear(x: Tensor, weight: Tensor) -> Tensor:
    return torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [None], "")


def _packed(product: str, states: Tensor, rows: int) -> list[Tensor]:
    """X packed as the weight of ``product``'s linear, one per encoder output: made on first use, then reused while
    this X lives unchanged (a step's layers and the following steps all read the same X); freed with X."""
    key, version = (product, id(states)), -1 if states.is_inference() else states._version
    found = _packs.get(key)
    if found is not None and found[0]() is states and found[1] == version:
        return found[2]
    packed = [torch.ops.mkldnn._reorder_linear_weight(x if product == "scores" else x.T, rows) for x in states]
    _packs[key] = (weakref.ref(states, lambda _, key=key: _packs.pop(key, None)), version, packed)
    return packed


def _packed_or_none(product: str, states: Tensor, rows: int) -> list[Tensor] | None:
    """``_packed``, or None where the copy cannot be made (no memory for it): the caller reads X as it is."""
    try:
        return _packed(product, states, rows)
    except RuntimeError:
        return None


def _unpack(product: str, states: Tensor) -> None:
    """Free ``product``'s packed copy of X (its path was not chosen)."""
    _packs.pop((product, id(states)), None)


def release() -> None:
    """Free every packed copy (a generation has ended; its encoder output may live on with the caller)."""
    _packs.clear()


def tuned(states_device: str, length: int) -> bool:
    """Whether the products over an encoder output of ``length`` tokens on ``states_device`` run on the path
    measured fastest on this machine (a CPU with oneDNN, from ``TUNE_LENGTH`` tokens)."""
    return states_device == "cpu" and length >= TUNE_LENGTH and _onednn()


def copies(states_device: str, length: int) -> int:
    """How many packed copies of an encoder output of ``length`` tokens the products may hold beside it."""
    return COPIES if tuned(states_device, length) else 0


def _onednn() -> bool:
    return torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled


def _scores(path: str, states: Tensor, rows: Tensor) -> Tensor:
    """(S L E), (S R E) -> (S R L)."""
    if path == "packed":
        packed = _packed_or_none("scores", states, rows.shape[1])
        if packed is not None:
            return torch.stack([_onednn_linear(q, x) for x, q in zip(packed, rows)])
        path = "onednn"
    if path == "onednn":
        return torch.stack([_onednn_linear(x, q).T for x, q in zip(states, rows)])
    # X (L E) times the few rows, then turned: X is read row by row, twice as fast on the Intel CPU as q Xᵀ
    return torch.bmm(states, rows.transpose(1, 2)).transpose(1, 2)


def _read(path: str, weights: Tensor, states: Tensor) -> Tensor:
    """(S R L), (S L E) -> (S R E)."""
    if path == "packed":
        packed = _packed_or_none("read", states, weights.shape[1])
        if packed is not None:
            return torch.stack([_onednn_linear(w, x) for w, x in zip(weights, packed)])
        path = "onednn"
    if path == "onednn":
        return torch.stack([_onednn_linear(w, x.T) for w, x in zip(weights, states)])
    return torch.bmm(weights, states)


def scores(states: Tensor, rows: Tensor) -> Tensor:
    """X·qᵀ for each encoder output: ``states`` (S L E), ``rows`` (S R E) -> (S R L)."""
    return _scores(_path("scores", states, rows.shape[1]), states, rows)


def read(weights: Tensor, states: Tensor) -> Tensor:
    """w·X for each encoder output: ``weights`` (S R L), ``states`` (S L E) -> (S R E)."""
    return _read(_path("read", states, weights.shape[1]), weights, states)


@contextlib.contextmanager
def forced(path: str | None):
    """Use ``path`` for both products inside the block (benchmarks and tests compare the paths); None: choose."""
    global _forced
    if path is not None and path not in PATHS:
        raise ValueError(f"unknown product path {path!r}: one of {', '.join(PATHS)}")
    before, _forced = _forced, path
    try:
        yield
    finally:
        _forced = before


def chosen() -> dict[str, str]:
    """The choices this process made or read, by key (CPU, torch, threads, dtype, product, rows, length class)."""
    return dict(_chosen)


def _tunable(states: Tensor) -> bool:
    return tuned(states.device.type, states.shape[1]) and not torch.is_grad_enabled()


@functools.cache
def _cpu() -> str:
    from lsgtool.core.precision import cpuinfo

    name = cpuinfo("model name") or platform.processor() or platform.machine()
    return f"{name} ({torch.backends.cpu.get_cpu_capability()}, {os.cpu_count()} cpus)"


def _key(product: str, states: Tensor, rows: int) -> str:
    length_class = 1 << (states.shape[1].bit_length() - 1)  # 2^k <= L
    return (f"{_cpu()} | torch {torch.__version__} | {torch.get_num_threads()} threads | "
            f"{str(states.dtype).removeprefix('torch.')} | {product} | {rows} rows | L >= {length_class}")


def _store() -> Path:
    from lsgtool.core.writing import cache_home

    return cache_home() / "decoding-paths.json"


def _kept() -> dict:
    try:
        found = json.loads(_store().read_text())
    except (OSError, ValueError, RuntimeError):  # RuntimeError: no home to keep a cache in
        return {}
    return found if isinstance(found, dict) else {}


def _keep(key: str, path: str, timings: dict[str, float]) -> None:
    from lsgtool.core.writing import write_json

    kept = _kept()
    kept[key] = {"path": path, "ms": timings}
    with contextlib.suppress(OSError, RuntimeError):  # no writable home: measured again next run, nothing else
        _store().parent.mkdir(parents=True, exist_ok=True)
        write_json(_store(), kept)


def _path(product: str, states: Tensor, rows: int) -> str:
    if _forced is not None:
        return _forced
    if not _tunable(states):
        return "matmul"
    key = _key(product, states, rows)
    if key not in _chosen:
        found = _kept().get(key)
        # an entry kept by a version with other paths is measured again (a new path may be faster)
        timed = found.get("ms") if isinstance(found, dict) else None
        if isinstance(timed, dict) and set(timed) == set(PATHS) and found.get("path") in PATHS:
            _chosen[key] = found["path"]
        else:
            timings = _measure(product, states, rows)
            _chosen[key] = min(timings, key=timings.get) if timings else "matmul"
            if len(timings) == len(PATHS):  # a path that failed once (memory, say) is not ruled out for good
                _keep(key, _chosen[key], timings)
            if _chosen[key] != "packed":
                _unpack(product, states)  # made while measuring, not used
    return _chosen[key]


def _measure(product: str, states: Tensor, rows: int) -> dict[str, float]:
    """Each path's best of up to three runs on this X, in ms (one run where it is already ``SLOWER`` than the
    best so far: at 1M tokens a slow path's run costs seconds); a path that fails is left out. The packed path's
    copy is made before its runs (once per document, not per step: not in its time) and kept for the steps."""
    S, L, E = states.shape
    operand = (torch.randn(S, rows, E, dtype=states.dtype) if product == "scores"
               else torch.rand(S, rows, L, dtype=states.dtype))
    run, arguments = (_scores, (states, operand)) if product == "scores" else (_read, (operand, states))
    timings: dict[str, float] = {}
    for path in PATHS:
        seconds = []
        try:
            if path == "packed":
                _packed(product, states, rows)
            for _ in range(3):
                start = time.perf_counter()
                run(path, *arguments)
                seconds.append(time.perf_counter() - start)
                if timings and 1000 * seconds[-1] > SLOWER * min(timings.values()):
                    break
        except (RuntimeError, AttributeError, NotImplementedError):  # an op this torch or CPU lacks
            continue
        timings[path] = round(1000 * min(seconds[1:] or seconds), 2)  # the first run warms up, when there are more
    return timings
