"""What one forward pass spends its time on: torch.profiler's operators grouped into the kinds that trade
places as inputs grow (matmul, FFT, softmax/SDPA, gather/copy, norm, elementwise), per variant and length.

Variants are the ones ``lsgtool profile`` builds (synthetic layers, or a whole model's variants), warmed up
once, then profiled for one forward without gradients. Operator self times are summed, so nothing is counted
twice; a Chrome trace of each profiled pass is written for a closer look (chrome://tracing, Perfetto).
``prepare`` and ``OpsView`` are the ops view of ``inspect-kernels`` (``inspection.run``).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from lsgtool.inspection.options import InspectOptions
from lsgtool.progress import Progress

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
              progress: Progress | None = None) -> list[Breakdown]:
    """Profile one forward of each variant at each length (``target``: a whole model, as ``profile --model``).
    A point that fails (too long for the model, out of memory) carries its error instead of numbers."""
    from lsgtool.core.errors import UsageError
    from lsgtool.profiling.models import model_step
    from lsgtool.profiling.variants import step_function

    progress = progress or Progress()
    progress.stage("profiling", total=len(lengths) * len(variants))
    results = []
    for length in lengths:
        for variant in variants:
            progress.advance(0, f"profiling {variant} @ {length}")
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
            else:
                results.append(Breakdown(variant, length, round(total, 3), by_kind, top,
                                         None if trace is None else trace.name))
            progress.advance(1)
    return results


# ---------------------------------------------------------------- the ops view of inspect-kernels

DEFAULT_LENGTHS = "1k,4k"
SYNTHETIC_VARIANTS = ["full", "lsg-norm", "locost"]


def synthetic_setup():
    """The synthetic layers profiled without a model: one pre-norm block with FFN, BERT-base's width."""
    from lsgtool.profiling.variants import Setup

    return Setup(hidden=768, heads=12, layers=1, level="layer", batch=1, block=128, factor=4)


@dataclass
class OpsView:
    """``report``: what the CLI prints and --json gives (``points`` once written); the profiling runs in
    ``write``, whose folder takes a Chrome trace of every point."""

    report: dict[str, Any]
    setup: Any  # profiling.variants.Setup
    target: dict | None  # a whole model (profiling.models.ModelTarget's fields), or None: synthetic layers
    points: list[Breakdown] = field(default_factory=list)

    def write(self, folder: Path, plots: bool, progress: Progress) -> list[Path]:
        self.points = breakdown(self.report["variants"], self.report["lengths"], setup=self.setup, target=self.target,
                                device=self.report["device"], dtype=torch.float32, traces=folder, progress=progress)
        self.report["points"] = [{**vars(p), "share": {k: round(v, 4) for k, v in p.share().items()}}
                                 for p in self.points]
        traces = [folder / p.trace for p in self.points if p.trace]
        if not plots:
            return traces
        from lsgtool.inspection import plots as draw

        title = f"operators of one forward — {self.report['model'] or 'synthetic layers, width 768'}, {self.report['device']}"
        return [draw.ops(self.points, folder / "ops.png", title), *traces]


def prepare(options: InspectOptions, sources: list, progress: Progress) -> OpsView:
    """The variants and lengths to profile: a model's own variants (``sources[0]``), or synthetic layers."""
    from lsgtool.inspection.options import lengths
    from lsgtool.profiling.models import model_target
    from lsgtool.profiling.variants import check_variants

    setup, target = synthetic_setup(), None
    if sources:
        target = model_target(sources[0])
        variants = target.default_variants
        target = vars(target)
    else:
        variants = check_variants(SYNTHETIC_VARIANTS)
    report = {"what": "ops", "model": options.models[0] if options.models else None, "device": options.device,
              "lengths": lengths(options.length or DEFAULT_LENGTHS), "variants": variants,
              "threads": torch.get_num_threads(),
              "setup": None if sources else {"level": "layer (pre-norm block with FFN)", "hidden": setup.hidden,
                                             "heads": setup.heads, "block": setup.block, "factor": setup.factor}}
    return OpsView(report, setup, target)
