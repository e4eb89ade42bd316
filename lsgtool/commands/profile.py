"""``lsgtool profile``: time and peak memory of attention / SSM variants and whole models across lengths."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lsgtool.commands._common import DType, Device, JsonOption, emit, flag_names, positive, require_device, stderr
from lsgtool.core.errors import Interrupted

DEFAULT_VARIANTS = "full,lsg-norm,locost,longformer,bigbird,longt5,led"
DEFAULTS = {"lengths": "1k..16k", "hidden": 768, "heads": 12, "block": 128}
QUICK = {"lengths": "512,2k", "hidden": 64, "heads": 4, "block": 32}
FIND_MAX_LENGTHS = "1k..1m"


class Level(str, Enum):
    attention = "attention"
    layer = "layer"
    encoder = "encoder"


class Mode(str, Enum):
    inference = "inference"
    train = "train"


def profile_command(
    lengths: Annotated[Optional[str], typer.Option(
        help="Lengths: 1k..16k (doubling), 1k..64k:x4, 1k,4k or 4096; with --find-max, the range searched.",
        show_default="1k..16k; --quick: 512,2k; --find-max: 1k..1m")] = None,
    variants: Annotated[Optional[str], typer.Option(
        help="Comma list. `lsgtool plugins` lists selectors and SSM variants.",
        show_default=f"{DEFAULT_VARIANTS}; --model: model,full")] = None,
    level: Annotated[Level, typer.Option(help="attention (token mixing only), layer (one block with FFN) or encoder "
                                              "(--layers blocks).")] = Level.attention,
    mode: Annotated[Mode, typer.Option(help="inference, or train (forward + backward + AdamW step).")] = Mode.inference,
    hidden: Annotated[Optional[int], typer.Option(help="Model width.", min=1, show_default="768; --quick: 64")] = None,
    heads: Annotated[Optional[int], typer.Option(help="Attention heads.", min=1, show_default="12; --quick: 4")] = None,
    layers: Annotated[int, typer.Option(help="Blocks at encoder level.", min=1)] = 4,
    block_size: Annotated[Optional[int], typer.Option(
        help="LSG block size of lsg-* variants (synthetic, or a model converted for the profile).", min=1,
        show_default="128; --quick: 32")] = None,
    sparsity_factor: Annotated[int, typer.Option(help="LSG sparsity factor of lsg-* variants.", min=1)] = 4,
    model: Annotated[Optional[str], typer.Option(
        "--model", help="Profile a whole model instead: a converted folder, a model to convert, a LOCOST folder, "
                        "or a preset (`lsgtool plugins` lists them).")] = None,
    batch: Annotated[int, typer.Option(help="Batch size.", min=1)] = 1,
    device: Annotated[Device, typer.Option(help="cpu or cuda.")] = Device.cpu,
    dtype: Annotated[DType, typer.Option(help="float32, bfloat16 or float16.")] = DType.float32,
    threads: Annotated[Optional[int], typer.Option(
        help="CPU threads per point.", min=1, show_default="torch's, all cores")] = None,
    repeats: Annotated[int, typer.Option(help="Timed runs per point after a warm-up (median reported).", min=1)] = 3,
    budget: Annotated[float, typer.Option(help="Seconds one point may take before it is abandoned.",
                                          callback=positive)] = 120.0,
    memory_limit: Annotated[Optional[float], typer.Option(
        help="MB a point may use; passing it ends the point.", callback=positive,
        show_default="the memory available at the start")] = None,
    find_max: Annotated[bool, typer.Option(
        "--find-max", help="For each variant, bisect for the longest length that fits in the memory limit "
                            "(one timed run per probe).")] = False,
    baseline: Annotated[Optional[str], typer.Option(
        help="Variant the ratios and crossovers compare with.", show_default="full")] = None,
    out: Annotated[Path, typer.Option(help="Folder for results.json, results.csv and the PNG plots.")] = Path("profile-out"),
    plots: Annotated[bool, typer.Option(help="Draw time.png and memory.png (needs matplotlib: lsgtool[plot]).")] = True,
    quick: Annotated[bool, typer.Option(help="A small, fast run (under a minute): 512 and 2k tokens, width 64; "
                                             "options given on the command line still win.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Measure time and peak memory across lengths, one fresh process per point; table, JSON, CSV and plots."""
    from lsgtool.core.errors import UsageError
    from lsgtool.core.lsg.config import LSGConfig
    from lsgtool.profiling import parse_lengths
    from lsgtool.profiling.engine import Plan
    from lsgtool.profiling.variants import Setup, check_variants

    preset = QUICK if quick else DEFAULTS
    lengths = lengths or (FIND_MAX_LENGTHS if find_max and not quick else preset["lengths"])
    hidden, heads, block = hidden or preset["hidden"], heads or preset["heads"], block_size or preset["block"]
    if hidden % heads:
        raise UsageError(f"--hidden {hidden} must be divisible by --heads {heads}.", "e.g. --hidden 768 --heads 12.")
    if plots:
        from lsgtool.plots import require_plotting

        require_plotting()
    require_device(device)
    target = None
    if variants is not None and not variants.strip(", "):
        raise UsageError("--variants is empty.", "name at least one variant, e.g. --variants full,lsg-norm.")
    if model is not None:
        from lsgtool.core.registry import get_registry
        from lsgtool.profiling.models import check_model_variants, resolve_model

        target = resolve_model(model)
        names = [v.strip() for v in variants.split(",") if v.strip()] if variants else target.default_variants
        names = check_model_variants(target, names, list(get_registry("sparse_selectors")))
    else:
        names = check_variants([v.strip() for v in (variants or DEFAULT_VARIANTS).split(",") if v.strip()])
    if any(name.startswith("lsg-") for name in names):  # the block and factor must make an LSG layout
        with flag_names({"block_size": "--block-size", "sparsity_factor": "--sparsity-factor"}):
            LSGConfig(block_size=block, sparse_block_size=block, sparsity_factor=sparsity_factor, sparsity_type=None)
    baseline = baseline or ("full" if "full" in names else names[0])
    if baseline not in names:
        raise UsageError(f"--baseline {baseline!r} is not among the profiled variants.", f"variants: {', '.join(names)}.")
    level, mode, device, dtype = level.value, mode.value, device.value, dtype.value
    plan = Plan(parse_lengths(lengths), names, Setup(hidden, heads, layers, level, batch, block, sparsity_factor), mode,
                device, dtype, repeats, budget, memory_limit, threads, None if target is None else vars(target))
    shape = {"hidden": hidden, "heads": heads, "layers": layers if level == "encoder" else 1} if target is None else {}
    meta = {"level": "model" if target else level, "model": model, "mode": mode, "device": device, "dtype": dtype,
            **shape, "batch": batch, "block_size": block, "sparsity_factor": sparsity_factor, "baseline": baseline,
            "repeats": 0 if find_max else repeats, "budget_s": budget, "memory_limit_mb": plan.limit_mb()}
    if find_max:
        _find_max(plan, meta, out, as_json, plots)
    else:
        _profile(plan, meta, out, as_json, plots)


class _LiveView:
    """What a person watches while points are measured: the rows so far, the point running, a progress bar."""

    def __init__(self, title: str, total: int, echo=None):
        self.title, self.rows, self.echo = title, [], echo  # echo: a console that gets a line per point (no tty)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.task = self.progress.add_task("starting", total=total)

    def start(self, point) -> None:
        self.progress.update(self.task, description=f"measuring {point.variant} @ {point.length}")

    def done(self, point, advance: int = 1) -> None:
        self.rows.append(point)
        self.progress.update(self.task, advance=advance)
        if self.echo is not None:
            result = point.error or f"{point.time_s:.4f} s, {point.peak_mb:.0f} MB"
            self.echo.print(f"{point.variant} @ {point.length}: {result}", markup=False, highlight=False)

    def __rich__(self):
        table = Table(title=self.title, title_justify="left")
        for column in ("variant", "length", "time s", "tokens/s", "peak MB"):
            table.add_column(column, justify="right")
        for p in self.rows[-12:]:
            if p.error:
                table.add_row(p.variant, str(p.length), f"[dim]{p.error}[/dim]", "", "")
            else:
                table.add_row(p.variant, str(p.length), f"{p.time_s:.4f}", f"{p.tokens_per_s:.0f}", f"{p.peak_mb:.0f}")
        return Group(table, self.progress)


def _live(total: int, title: str, as_json: bool):
    """On a terminal a live table; written to a file or a pipe, a plain line per point on stderr (so a long run
    in a log shows progress); with --json, nothing but the JSON."""
    console = stderr()
    live_ok = not as_json and console.is_terminal
    view = _LiveView(title, total, echo=console if not as_json and not live_ok else None)
    live = Live(view, console=console, transient=True, refresh_per_second=4,
                redirect_stdout=False, redirect_stderr=False) if live_ok else None
    return view, live


def _measure(live, work):
    if live is None:
        return work()
    with live:
        return work()


def _title(plan, meta) -> str:
    return (f"lsgtool profile — {meta['model'] or meta['level']}, {plan.mode}, {plan.device} {plan.dtype}, "
            + _threads(plan.threads))


def _profile(plan, meta: dict, out: Path, as_json: bool, plots: bool) -> None:
    from lsgtool.profiling.engine import run, summarise
    from lsgtool.profiling.report import write

    total = len(plan.lengths) * len(plan.variants)
    view, live = _live(total, _title(plan, meta), as_json)
    try:
        points = _measure(live, lambda: run(plan, view.done, view.start))
    except KeyboardInterrupt:  # keep what finished: table and files of the measured points, marked incomplete
        points = list(view.rows)
        meta["incomplete"] = f"interrupted after {len(points)} of {total} points"
    if not points:
        raise Interrupted("interrupted before the first point finished: nothing was written.",
                          "run the same command again.")
    summary = summarise(points, meta["baseline"])
    meta["threads"] = next((p.threads for p in points if p.threads), None)
    files = write(points, summary, meta, out, plots)
    emit({"meta": meta, "points": [vars(p) for p in points], "summary": summary, "files": [str(f) for f in files]},
         as_json, _render)
    _raise_if_interrupted(meta, out)


def _raise_if_interrupted(meta: dict, out: Path) -> None:
    if meta.get("incomplete"):
        raise Interrupted(f"{meta['incomplete']}: the table above and the files in {out} hold what finished "
                          "(marked incomplete).", "run the same command again for the whole profile.")


def _find_max(plan, meta: dict, out: Path, as_json: bool, plots: bool) -> None:
    from lsgtool.profiling.engine import find_max
    from lsgtool.profiling.report import write_longest

    # a bisection's probe count is not known in advance: the bar counts variants
    view, live = _live(len(plan.variants), _title(plan, meta) + f"; longest within {meta['memory_limit_mb']:.0f} MB",
                       as_json)

    found = []

    def search():
        for variant in plan.variants:
            found.append(find_max(plan, variant, lambda point: view.done(point, advance=0), view.start))
            view.progress.update(view.task, advance=1)

    try:
        _measure(live, search)
    except KeyboardInterrupt:
        meta["incomplete"] = f"interrupted after {len(found)} of {len(plan.variants)} variants"
    if not found:
        raise Interrupted("interrupted before the first variant's search finished: nothing was written.",
                          "run the same command again.")
    meta["threads"] = next((p.threads for f in found for p in f.probes if p.threads), None)
    files = write_longest(found, meta, out, plots)
    longest = [{**f.row(), "probes": [vars(p) for p in f.probes]} for f in found]
    emit({"meta": meta, "longest": longest, "files": [str(f) for f in files]}, as_json, _render_longest)
    _raise_if_interrupted(meta, out)


def _threads(count: int | None) -> str:
    return f"{count} threads" if count else "torch's default threads"


def _incomplete(meta: dict) -> str:
    return f" — INCOMPLETE: {meta['incomplete']}" if meta.get("incomplete") else ""


def _fmt(value, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def _render(console: Console, data: dict[str, Any]) -> None:
    meta, summary = data["meta"], data["summary"]
    table = Table(title=f"lsgtool profile — {meta['model'] or meta['level']}, {meta['mode']}, {meta['device']} "
                        f"{meta['dtype']}, {_threads(meta['threads'])}; ratios vs {meta['baseline']}{_incomplete(meta)}")
    for column in ("variant", "length", "time s", "tokens/s", "peak MB", "speed vs base", "memory vs base"):
        table.add_column(column, justify="right")
    base = {p["length"]: p for p in data["points"] if p["variant"] == meta["baseline"]}
    for p in data["points"]:
        if p["error"]:
            table.add_row(p["variant"], str(p["length"]), f"[dim]{p['error']}[/dim]", "", "", "", "")
            continue
        b = base.get(p["length"]) or {}
        speed = f"{b['time_s'] / p['time_s']:.2f}x" if b.get("time_s") else "-"
        memory = f"{p['peak_mb'] / b['peak_mb']:.2f}" if b.get("peak_mb") else "-"
        table.add_row(p["variant"], str(p["length"]), f"{p['time_s']:.4f}", f"{p['tokens_per_s']:.0f}",
                      f"{p['peak_mb']:.0f}", speed, memory)
    console.print(table)
    scaling = Table(title="scaling (log-log slope: ~1 linear, ~2 quadratic) and crossover vs baseline")
    for column in ("variant", "time exponent", "memory exponent", "faster than baseline from"):
        scaling.add_column(column, justify="right")
    for variant, s in summary.items():
        scaling.add_row(variant, _fmt(s["time_exponent"]), _fmt(s["memory_exponent"]), str(s["crossover"] or "-"))
    console.print(scaling)
    console.print(f"written: {', '.join(data['files'])}", markup=False)


def _render_longest(console: Console, data: dict[str, Any]) -> None:
    meta = data["meta"]
    table = Table(title=f"longest input within {meta['memory_limit_mb']:.0f} MB — {meta['model'] or meta['level']}, "
                        f"{meta['mode']}, {meta['device']} {meta['dtype']}, {_threads(meta['threads'])}{_incomplete(meta)}")
    for column in ("variant", "longest length", "peak MB", "time s", "stopped by", "probes"):
        table.add_column(column, justify="right")
    for row in data["longest"]:
        table.add_row(row["variant"], _fmt(row["length"], "d"), _fmt(row["peak_mb"], ".0f"), _fmt(row["time_s"], ".3f"),
                      row["limited_by"], str(len(row["probes"])))
    console.print(table)
    console.print(f"written: {', '.join(data['files'])}", markup=False)
