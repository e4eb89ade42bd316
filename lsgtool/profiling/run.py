"""A ``profile`` run, the one call the command (and a notebook) makes: check the request before any work, resolve
the model once, measure every point (or search each variant's longest length), write the output folder.

    from lsgtool.profiling import ProfileOptions, run
    result = run(ProfileOptions(lengths="1k..8k", variants="full,lsg-norm", out=Path("prof")))
    print(result.data["summary"])

The output folder is staged beside ``out`` and published with one rename (``lsgtool.core.writing``), marked as
profile's: the next run replaces it. A folder profile did not write is refused untouched, unless it is empty.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lsgtool.core.errors import Interrupted, UsageError
from lsgtool.progress import Progress

__all__ = ["DEFAULT_VARIANTS", "ProfileOptions", "ProfileProgress", "ProfileResult", "precision_lines", "run"]

COMMAND = "profile"
DEFAULT_VARIANTS = "full,lsg-norm,locost,longformer,bigbird,longt5,led"
DEFAULTS = {"lengths": "1k..16k", "hidden": 768, "heads": 12, "block": 128, "variants": DEFAULT_VARIANTS}
# no peers in --quick: each of their point processes imports most of transformers, three quarters of the run's time
QUICK = {"lengths": "512,2k", "hidden": 64, "heads": 4, "block": 32, "variants": "full,lsg-norm,locost"}
FIND_MAX_LENGTHS = "1k..1m"


@dataclass
class ProfileOptions:
    """What to measure and where to write it; the CLI's flags, one field each (None: the default, or --quick's)."""

    lengths: str | None = None  # 1k..16k (doubling), 1k..64k:x4, 1k,4k; with find_max, the range searched
    variants: str | None = None  # comma list
    level: str = "attention"  # attention, layer, encoder
    mode: str = "inference"  # inference, train
    hidden: int | None = None
    heads: int | None = None
    layers: int = 4
    block_size: int | None = None
    sparsity_factor: int = 4
    model: str | None = None  # a whole model instead of synthetic layers
    batch: int = 1
    device: str = "cpu"
    dtype: str = "float32"
    threads: int | None = None
    repeats: int = 3
    budget: float = 120.0  # seconds per point
    memory_limit: float | None = None  # MB; None: the memory available at the start
    find_max: bool = False
    baseline: str | None = None
    out: Path = Path("profile-out")
    plots: bool = True
    quick: bool = False


@dataclass
class ProfileResult:
    """``data``: meta, points and summary (or longest), and the files written -- what ``--json`` prints."""

    data: dict[str, Any]
    out: Path
    kept_previous: bool = False  # interrupted: the previous profile at ``out`` was left as it was

    def raise_if_incomplete(self) -> None:
        """Interrupted (exit 130) when Ctrl-C ended the run early, saying where what finished is."""
        meta = self.data["meta"]
        if not meta.get("incomplete"):
            return
        where = (f"the table above holds what finished; {self.out} still holds the previous profile, as it was."
                 if self.kept_previous else
                 f"the table above and the files in {self.out} hold what finished (marked incomplete).")
        raise Interrupted(f"{meta['incomplete']}: {where}", "run the same command again for the whole profile.")


class ProfileProgress(Progress):
    """The progress protocol, plus the points themselves: ``start`` and ``done`` get each ``Point``. Here a point
    is an ``advance`` whose detail is its line, so any ``Progress`` shows it; a live table overrides them."""

    def __init__(self, inner: Progress | None = None):
        self.inner = inner or Progress()

    def __enter__(self):
        self.inner.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        return self.inner.__exit__(*exc)

    def stage(self, name: str, total: int | None = None, detail: str = "") -> None:
        self.inner.stage(name, total, detail)

    def advance(self, n: int = 1, detail: str | None = None) -> None:
        self.inner.advance(n, detail)

    def note(self, message: str) -> None:
        self.inner.note(message)

    def start(self, point) -> None:
        self.advance(0, f"measuring {point.variant} @ {point.length}")

    def done(self, point, advance: int = 1) -> None:
        self.advance(advance, f"{point.variant} @ {point.length}: "
                              + (point.error or f"{point.time_s:.4f} s, {point.peak_mb:.0f} MB"))


def run(options: ProfileOptions, progress: Progress | None = None) -> ProfileResult:
    """Measure and write ``options.out``. Ctrl-C keeps what finished: ``data["meta"]["incomplete"]`` says so
    (``raise_if_incomplete``); it does not replace a previous profile."""
    from lsgtool.core.writing import check_own_target, clean_stale, read_marker

    plan, meta, title = _prepare(options)
    out = check_own_target(options.out, COMMAND)
    previous = read_marker(out) is not None
    view = progress if isinstance(progress, ProfileProgress) else ProfileProgress(progress)
    for stale in clean_stale(out):
        view.note(f"Removed {stale}: the staging folder of an earlier run that was killed.")
    with view:
        data, write = (_search if options.find_max else _measure)(plan, meta, title, view)
    keep = previous and bool(meta.get("incomplete"))
    data["files"] = [] if keep else [str(f) for f in _write(out, write, options.plots)]
    return ProfileResult(data, out, keep)


def _lengths(spec: str) -> list[int]:
    """The lengths of ``--lengths``; a bad spec is a usage error naming the flag."""
    from lsgtool.profiling.spec import parse_lengths

    try:
        return parse_lengths(spec)
    except UsageError as exc:
        raise UsageError(f"--lengths {spec!r}: {exc.message}", exc.hint) from None


def precision_lines(meta: dict[str, Any]) -> list[str]:
    """Which precisions this CPU accelerates, and a note where the profiled one is not (for the rendered report)."""
    lines = []
    if "cpu_accelerates" in meta:
        found = ", ".join(meta["cpu_accelerates"]) or "none (no AVX512-BF16, AVX512-FP16, AMX or VNNI)"
        lines.append(f"this CPU computes faster than float32 in: {found}")
    if meta.get("dtype_accelerated") is False:
        lines.append(f"note: {meta['device']} does not accelerate {meta['dtype']}: its timings here are slower than "
                     "float32's, not what a CPU with the instructions gives.")
    return lines


def _prepare(options: ProfileOptions):
    """The request checked and made a Plan, the meta the outputs carry, and the live view's title."""
    from lsgtool.core.lsg.config import LSGConfig
    from lsgtool.profiling.engine import Plan
    from lsgtool.profiling.variants import Setup, check_variants

    o = options
    preset = QUICK if o.quick else DEFAULTS
    lengths = o.lengths or (FIND_MAX_LENGTHS if o.find_max and not o.quick else preset["lengths"])
    hidden, heads, block = o.hidden or preset["hidden"], o.heads or preset["heads"], o.block_size or preset["block"]
    if hidden % heads:
        raise UsageError(f"--hidden {hidden} must be divisible by --heads {heads}.", "e.g. --hidden 768 --heads 12.")
    if o.plots:
        from lsgtool.plots import require_plotting

        require_plotting()
    if o.variants is not None and not o.variants.strip(", "):
        raise UsageError("--variants is empty.", "name at least one variant, e.g. --variants full,lsg-norm.")
    given = [v.strip() for v in (o.variants or "").split(",") if v.strip()]
    target = None
    if o.model is not None:
        from lsgtool.core.registry import get_registry
        from lsgtool.profiling.models import check_model_variants, resolve_model

        target = resolve_model(o.model)  # resolved once: every point process loads this Source
        names = check_model_variants(target, given or target.default_variants, list(get_registry("sparse_selectors")))
    else:
        names = check_variants(given or preset["variants"].split(","))
    if any(name.startswith("lsg-") for name in names):  # the block and factor must make an LSG layout
        LSGConfig(block_size=block, sparse_block_size=block, sparsity_factor=o.sparsity_factor, sparsity_type=None)
    baseline = o.baseline or ("full" if "full" in names else names[0])
    if baseline not in names:
        raise UsageError(f"--baseline {baseline!r} is not among the profiled variants.", f"variants: {', '.join(names)}.")
    plan = Plan(_lengths(lengths), names, Setup(hidden, heads, o.layers, o.level, o.batch, block, o.sparsity_factor),
                o.mode, o.device, o.dtype, o.repeats, o.budget, o.memory_limit, o.threads,
                None if target is None else vars(target))
    shape = {"hidden": hidden, "heads": heads, "layers": o.layers if o.level == "encoder" else 1} if target is None else {}
    meta = {"level": "model" if target else o.level, "model": o.model, "mode": o.mode, "device": o.device,
            "dtype": o.dtype, **shape, "batch": o.batch, "block_size": block, "sparsity_factor": o.sparsity_factor,
            "baseline": baseline, "repeats": 0 if o.find_max else o.repeats, "budget_s": o.budget,
            "memory_limit_mb": plan.limit_mb()}
    from lsgtool.core.precision import accelerated, cpu_accelerated  # torch: loaded when a profile runs, not for --help

    meta["dtype_accelerated"] = accelerated(o.dtype, o.device)
    if o.device == "cpu":
        meta["cpu_accelerates"] = sorted(cpu_accelerated())  # what --dtype is worth asking for on this CPU
    title = (f"lsgtool profile — {o.model or o.level}, {o.mode}, {o.device} {o.dtype}, "
             + (f"{o.threads} threads" if o.threads else "torch's default threads"))
    return plan, meta, title


def _measure(plan, meta: dict, title: str, view: ProfileProgress):
    """Every point; Ctrl-C keeps the points that finished. Returns the data and how to write it into a folder."""
    from lsgtool.profiling.engine import run as run_points, summarise
    from lsgtool.profiling.report import write

    total = len(plan.lengths) * len(plan.variants)
    view.stage("measuring", total, title)
    points = []

    def done(point) -> None:
        points.append(point)
        view.done(point)

    try:
        run_points(plan, done, view.start)
    except KeyboardInterrupt:  # keep what finished: table and files of the measured points, marked incomplete
        meta["incomplete"] = f"interrupted after {len(points)} of {total} points"
    if not points:
        raise Interrupted("interrupted before the first point finished: nothing was written.",
                          "run the same command again.")
    summary = summarise(points, meta["baseline"])
    meta["threads"] = next((p.threads for p in points if p.threads), None)
    data = {"meta": meta, "points": [vars(p) for p in points], "summary": summary}
    return data, lambda folder, plots: write(points, summary, meta, folder, plots)


def _search(plan, meta: dict, title: str, view: ProfileProgress):
    """Each variant's longest length within the memory limit; Ctrl-C keeps the variants searched."""
    from lsgtool.profiling.engine import find_max
    from lsgtool.profiling.report import write_longest

    # a bisection's probe count is not known in advance: the bar counts variants
    view.stage("searching", len(plan.variants), title + f"; longest within {meta['memory_limit_mb']:.0f} MB")
    found = []
    try:
        for variant in plan.variants:
            found.append(find_max(plan, variant, lambda point: view.done(point, advance=0), view.start))
            view.advance(1)
    except KeyboardInterrupt:
        meta["incomplete"] = f"interrupted after {len(found)} of {len(plan.variants)} variants"
    if not found:
        raise Interrupted("interrupted before the first variant's search finished: nothing was written.",
                          "run the same command again.")
    meta["threads"] = next((p.threads for f in found for p in f.probes if p.threads), None)
    data = {"meta": meta, "longest": [{**f.row(), "probes": [vars(p) for p in f.probes]} for f in found]}
    return data, lambda folder, plots: write_longest(found, meta, folder, plots)


def _write(out: Path, write: Callable[[Path, bool], list[Path]], plots: bool) -> list[Path]:
    """Stage, write, mark, publish with one rename; Ctrl-C or an error leaves ``out`` as it was, and no staging."""
    from lsgtool.core.writing import publish, stage, write_marker

    tmp = stage(out)
    try:
        files = write(tmp, plots)
        write_marker(tmp, command=COMMAND)
        publish(tmp, out, overwrite=True)
    except KeyboardInterrupt:
        shutil.rmtree(tmp, ignore_errors=True)
        raise Interrupted(f"interrupted while writing: nothing was written, {out} is as it was.",
                          "run the same command again.") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / f.name for f in files]
