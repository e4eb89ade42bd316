"""Run a profile: every (variant, length) point in its own process, skipping what cannot fit or finish.

``run`` measures a grid of lengths; ``find_max`` bisects, per variant, for the longest length that fits in
the memory limit (and the time budget).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Callable

from lsgtool.profiling.analysis import crossover, scaling_exponent
from lsgtool.profiling.memory import available_mb
from lsgtool.profiling.variants import Setup
from lsgtool.profiling.worker import OVER_LIMIT


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
    setup: Setup = field(default_factory=Setup)
    mode: str = "inference"
    device: str = "cpu"
    dtype: str = "float32"
    repeats: int = 3
    budget_s: float = 120.0
    memory_limit_mb: float | None = None
    threads: int | None = None
    model: dict | None = None  # a ModelTarget's fields: whole checkpoints instead of synthetic layers

    def limit_mb(self) -> float:
        return self.memory_limit_mb or available_mb(self.device)


def _worker_env() -> dict[str, str]:
    """The worker sees the packages (and plugins) this process sees."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def run_point(plan: Plan, variant: str, length: int, repeats: int | None = None, limit_mb: float | None = None) -> Point:
    spec = {"variant": variant, "length": length, "setup": asdict(plan.setup), "mode": plan.mode, "device": plan.device,
            "dtype": plan.dtype, "repeats": plan.repeats if repeats is None else repeats, "threads": plan.threads,
            "limit_mb": limit_mb, "model": plan.model}
    try:
        done = subprocess.run([sys.executable, "-m", "lsgtool.profiling.worker", json.dumps(spec)], env=_worker_env(),
                              capture_output=True, text=True, timeout=plan.budget_s, check=False)
    except subprocess.TimeoutExpired:
        return Point(variant, length, error=f"over the {plan.budget_s:g} s budget")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"failed (exit status {done.returncode})"])[-1]
        if done.returncode in (-9, 137):
            last = "out of memory (killed by the system)"
        elif done.returncode != OVER_LIMIT and "out of memory" in done.stderr.lower():
            last = "out of memory"
        return Point(variant, length, error=last[:200])
    return Point(variant, length, **json.loads(done.stdout.strip().splitlines()[-1]))


def estimate_mb(done: list[Point], length: int) -> float | None:
    """Peak memory expected at ``length`` from the variant's measured points: their log-log slope, at least
    linear. From a single point, linear growth: the guard refuses only what cannot fit, and the watchdog ends
    a point that grows faster (BigBird measured 1.5 GB at 4K: quadratic foresaw 24 GB at 16K, it took 14.6)."""
    good = [p for p in done if p.peak_mb and p.peak_mb > 0]
    if not good:
        return None
    exponent = scaling_exponent([p.length for p in good], [p.peak_mb for p in good]) if len(good) > 1 else 1.0
    last = good[-1]
    return last.peak_mb * (length / last.length) ** max(1.0, exponent or 1.0)


Callback = Callable[[Point], None]


def _quiet(point: Point) -> None:
    pass


def run(plan: Plan, on_point: Callback = _quiet, on_start: Callback = _quiet) -> list[Point]:
    """All points, in order of length; a variant that fails at one length is not tried at longer ones."""
    limit = plan.limit_mb()
    points: list[Point] = []
    stopped: dict[str, str] = {}
    for length in plan.lengths:
        for variant in plan.variants:
            expected = estimate_mb([p for p in points if p.variant == variant], length)
            if variant in stopped:
                point = Point(variant, length, error=stopped[variant])
            elif expected is not None and expected > limit:
                point = Point(variant, length, error=f"estimated {expected:.0f} MB > {limit:.0f} MB available")
            else:
                on_start(Point(variant, length))
                point = run_point(plan, variant, length, limit_mb=limit)  # the watchdog ends it past the limit
            if point.error and variant not in stopped:
                stopped[variant] = f"skipped: {point.error} at {length}"
            points.append(point)
            on_point(point)
    return points


@dataclass
class Longest:
    """``find_max``'s answer for one variant: the longest length that ran, its point, and what stopped it."""

    variant: str
    length: int | None
    point: Point | None
    limited_by: str
    probes: list[Point]

    def row(self) -> dict:
        """The answer as one flat record (JSON, CSV, the final table)."""
        return {"variant": self.variant, "length": self.length, "peak_mb": self.point.peak_mb if self.point else None,
                "time_s": self.point.time_s if self.point else None, "limited_by": self.limited_by}


def find_max(plan: Plan, variant: str, on_point: Callback = _quiet, on_start: Callback = _quiet,
             resolution: float = 1 / 16) -> Longest:
    """Double from the shortest length of the plan until a point fails (memory limit, out of memory, budget)
    or the longest is reached, then bisect between the last success and the first failure, on multiples of
    the shortest length, until the gap is under ``resolution`` of the length found."""
    limit, grid, top = plan.limit_mb(), plan.lengths[0], plan.lengths[-1]
    probes: list[Point] = []

    def probe(length: int) -> Point:
        expected = estimate_mb([p for p in probes if not p.error], length)
        if expected is not None and expected > 1.5 * limit:  # clearly too big: do not start it
            point = Point(variant, length, error=f"estimated {expected:.0f} MB > {limit:.0f} MB limit")
        else:
            on_start(Point(variant, length))
            point = run_point(plan, variant, length, repeats=0, limit_mb=limit)
        probes.append(point)
        on_point(point)
        return point

    good, bad = None, None
    length = grid
    while True:
        point = probe(length)
        if point.error:
            bad = point
            break
        good = point
        if length >= top:
            break
        length = min(2 * length, top)
    if good is None:
        return Longest(variant, None, None, bad.error if bad else "nothing to try", probes)
    if bad is None:
        return Longest(variant, good.length, good, f"the top of the range ({top})", probes)
    while bad.length - good.length > max(grid, resolution * good.length):
        middle = (good.length + bad.length) // 2 // grid * grid
        if middle <= good.length:
            break
        point = probe(middle)
        good, bad = (good, point) if point.error else (point, bad)
    return Longest(variant, good.length, good, bad.error, probes)


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
