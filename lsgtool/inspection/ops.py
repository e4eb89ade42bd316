"""What one forward pass spends its time on: torch.profiler's operators grouped into the kinds that trade
places as inputs grow (matmul, FFT, softmax/SDPA, gather/copy, norm, elementwise), per variant and length.

Variants are the ones ``lsgtool profile`` builds (synthetic layers, or a whole model's variants), warmed up
once, then profiled for one forward without gradients. Operator self times are summed, so nothing is counted
twice; a Chrome trace of each profiled pass is written for a closer look (chrome://tracing, Perfetto).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

KINDS = ("matmul", "fft", "softmax/sdpa", "gather/copy", "norm", "elementwise", "other")
_KIND_OF = (  # first match wins: substrings of aten operator names
    ("softmax/sdpa", ("softmax", "scaled_dot_product", "flash_attention", "efficient_attention")),
    ("fft", ("fft",)),
    ("matmul", ("::mm", "bmm", "addmm", "matmul", "linear", "baddbmm", "::dot", "einsum", "mv")),
    ("norm", ("layer_norm", "rms_norm", "group_norm", "batch_norm", "::norm", "rsqrt")),
    ("gather/copy", ("copy", "cat", "gather", "index", "unfold", "clone", "pad", "scatter", "stack", "contiguous",
                     "repeat", "roll", "flip", "masked_fill", "where", "fill_", "zero_", "slice_scatter", "select_scatter")),
    ("elementwise", ("add", "mul", "div", "sub", "exp", "gelu", "relu", "silu", "tanh", "sigmoid", "pow", "mean",
                     "sum", "neg", "sqrt", "clamp", "abs", "real", "imag", "view_as", "complex", "polar", "cos", "sin",
                     "dropout", "max", "min", "topk", "sort", "argmax", "eq", "lt", "gt", "ge", "le", "ne", "bitwise")),
)


def kind_of(operator: str) -> str:
    """The kind an aten operator's time counts as."""
    name = operator.lower()
    for kind, needles in _KIND_OF:
        if any(needle in name for needle in needles):
            return kind
    return "other"


@dataclass
class Breakdown:
    variant: str
    length: int
    total_ms: float
    by_kind: dict[str, float]
    top: list[dict] = field(default_factory=list)
    trace: str | None = None
    error: str | None = None

    def share(self) -> dict[str, float]:
        return {k: (v / self.total_ms if self.total_ms else 0.0) for k, v in self.by_kind.items()}


@contextmanager
def _native_stderr_quiet():
    """The profiler's native library prints a line on stderr at every start and stop (no switch turns it off
    once torch is loaded): stderr's file descriptor points at /dev/null meanwhile."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def profile_step(step: Callable[[], None], device: str = "cpu", trace: Path | None = None, top: int = 8) -> tuple[float, dict, list]:
    """Warm ``step`` up once, profile one call: (total self ms, ms per kind, the ``top`` operators)."""
    from torch.profiler import ProfilerActivity, profile

    step()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with _native_stderr_quiet(), profile(activities=activities) as prof:
        step()
        if device == "cuda":
            torch.cuda.synchronize()
    if trace is not None:
        prof.export_chrome_trace(str(trace))
    attribute = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
    by_kind = dict.fromkeys(KINDS, 0.0)
    rows = []
    for event in prof.key_averages():
        ms = getattr(event, attribute, 0.0) / 1000.0
        if ms <= 0 or not event.key.startswith("aten::"):
            continue
        by_kind[kind_of(event.key)] += ms
        rows.append({"operator": event.key, "kind": kind_of(event.key), "ms": round(ms, 3), "calls": event.count})
    rows.sort(key=lambda r: -r["ms"])
    total = sum(by_kind.values())
    return total, {k: round(v, 3) for k, v in by_kind.items()}, rows[:top]


def breakdown(variants: list[str], lengths: list[int], *, setup, target: dict | None = None, device: str = "cpu",
              dtype: torch.dtype = torch.float32, traces: Path | None = None,
              on_point: Callable[[str, int], None] | None = None) -> list[Breakdown]:
    """Profile one forward of each variant at each length (``target``: a whole model, as ``profile --model``).
    A point that fails (too long for the model, out of memory) carries its error instead of numbers."""
    from lsgtool.core.errors import UsageError
    from lsgtool.profiling.models import model_step
    from lsgtool.profiling.variants import step_function

    results = []
    for length in lengths:
        for variant in variants:
            if on_point is not None:
                on_point(variant, length)
            trace = None if traces is None else traces / f"trace-{variant}-{length}.json"
            try:
                if target is None:
                    step, _ = step_function(variant, setup, length, "inference", device, dtype)
                else:
                    step, _ = model_step(target, variant, length, setup, "inference", device, dtype)
                total, by_kind, top = profile_step(step, device, trace)
            except (UsageError, RuntimeError, MemoryError) as exc:
                message = exc.message if isinstance(exc, UsageError) else f"{type(exc).__name__}: {str(exc)[:120]}"
                results.append(Breakdown(variant, length, 0.0, dict.fromkeys(KINDS, 0.0), error=message))
                continue
            results.append(Breakdown(variant, length, round(total, 3), by_kind, top, None if trace is None else trace.name))
    return results
