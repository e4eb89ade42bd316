"""Run a profile: every (variant, length) point in its own process, skipping what cannot fit or finish."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Callable

from lsgtool.core.profile.analysis import crossover, scaling_exponent
from lsgtool.core.profile.memory import available_mb
from lsgtool.core.profile.variants import Setup


@dataclass
class Point:
    variant: str
    length: int
    time_s: float | None = None
    tokens_per_s: float | None = None
    peak_mb: float | None = None
    threads: int | None = None
    error: str | None = None


@dataclass
class Plan:
    lengths: list[int]
    variants: list[str]
    setup: Setup
    mode: str = "inference"
    device: str = "cpu"
    dtype: str = "float32"
    repeats: int = 3
    budget_s: float = 120.0
    memory_limit_mb: float | None = None


def run_point(plan: Plan, variant: str, length: int) -> Point:
    spec = {"variant": variant, "length": length, "setup": asdict(plan.setup), "mode": plan.mode,
            "device": plan.device, "dtype": plan.dtype, "repeats": plan.repeats}
    try:
        done = subprocess.run([sys.executable, "-m", "lsgtool.core.profile.worker", json.dumps(spec)],
                              capture_output=True, text=True, timeout=plan.budget_s, check=False)
    except subprocess.TimeoutExpired:
        return Point(variant, length, error=f"over the {plan.budget_s:g} s budget")
    if done.returncode != 0:
        oom = done.returncode in (-9, 137) or "out of memory" in done.stderr.lower()
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return Point(variant, length, error="out of memory" if oom else last[:200])
    return Point(variant, length, **json.loads(done.stdout.strip().splitlines()[-1]))


def estimate_mb(done: list[Point], length: int) -> float | None:
    """Peak memory expected at ``length`` from the variant's measured points (quadratic until two are known)."""
    good = [p for p in done if p.peak_mb and p.peak_mb > 0]
    if not good:
        return None
    exponent = scaling_exponent([p.length for p in good], [p.peak_mb for p in good]) if len(good) > 1 else 2.0
    last = good[-1]
    return last.peak_mb * (length / last.length) ** max(1.0, exponent or 2.0)


def run(plan: Plan, on_point: Callable[[Point], None] = lambda point: None) -> list[Point]:
    """All points, in order of length; a variant that fails at one length is not tried at longer ones."""
    limit = plan.memory_limit_mb or available_mb(plan.device)
    points: list[Point] = []
    stopped: dict[str, str] = {}
    for length in plan.lengths:
        for variant in plan.variants:
            mine = [p for p in points if p.variant == variant]
            expected = estimate_mb(mine, length)
            if variant in stopped:
                point = Point(variant, length, error=stopped[variant])
            elif expected is not None and expected > limit:
                point = Point(variant, length, error=f"estimated {expected:.0f} MB > {limit:.0f} MB available")
            else:
                point = run_point(plan, variant, length)
            if point.error and variant not in stopped:
                stopped[variant] = f"skipped: {point.error} at {length}"
            points.append(point)
            on_point(point)
    return points


def summarise(points: list[Point], baseline: str) -> dict[str, dict]:
    """Per variant: time and memory scaling exponents, and the crossover length against the baseline."""
    lengths = sorted({p.length for p in points})
    by = {(p.variant, p.length): p for p in points}
    base_times = [getattr(by.get((baseline, n)), "time_s", None) for n in lengths]
    out = {}
    for variant in dict.fromkeys(p.variant for p in points):
        mine = [by[(variant, n)] for n in lengths]
        ok = [p for p in mine if p.time_s]
        out[variant] = {
            "time_exponent": scaling_exponent([p.length for p in ok], [p.time_s for p in ok]),
            "memory_exponent": scaling_exponent([p.length for p in ok], [max(p.peak_mb, 1e-3) for p in ok]),
            "crossover": None if variant == baseline else crossover(lengths, [p.time_s for p in mine], base_times),
        }
    return out

