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
from lsgtool.profiling.run import DEFAULT_VARIANTS, ProfileProgress, precision_lines
from lsgtool.progress import Progress as BaseProgress


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
        show_default=f"{DEFAULT_VARIANTS}; --quick: full,lsg-norm,locost; --model: model,full")] = None,
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
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for results.json, results.csv and the PNG plots (replaced on the "
                                           "next run; a folder profile did not write is refused).")] = Path("profile-out"),
    plots: Annotated[bool, typer.Option(help="Draw time.png and memory.png (needs matplotlib: pip install 'lsgtool\\[plot]').")] = True,
    quick: Annotated[bool, typer.Option(help="A small, fast run (under a minute): full, lsg-norm and locost at 512 "
                                             "and 2k tokens, width 64; options given on the command line still win.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Measure time and peak memory across lengths, one fresh process per point; table, JSON, CSV and plots."""
    from lsgtool.profiling import ProfileOptions, run

    require_device(device)
    options = ProfileOptions(
        lengths=lengths, variants=variants, level=level.value, mode=mode.value, hidden=hidden, heads=heads,
        layers=layers, block_size=block_size, sparsity_factor=sparsity_factor, model=model, batch=batch,
        device=device.value, dtype=dtype.value, threads=threads, repeats=repeats, budget=budget,
        memory_limit=memory_limit, find_max=find_max, baseline=baseline, out=out, plots=plots, quick=quick)
    console = stderr()
    view = BaseProgress() if as_json else _LiveView(live=True) if console.is_terminal else _LiveView(echo=console)
    with flag_names({"block_size": "--block-size", "sparsity_factor": "--sparsity-factor"}):
        result = run(options, view)
    emit(result.data, as_json, _render_longest if find_max else _render)
    result.raise_if_incomplete()


class _LiveView(ProfileProgress):
    """What a person watches while points are measured: on a terminal (``live``) the rows so far, the point
    running, a progress bar; in a file or a pipe a plain line per point (``echo``), so a long run in a log shows
    progress."""

    def __init__(self, title: str = "", total: int | None = None, echo=None, live: bool = False):
        self.title, self.rows, self.echo = title, [], echo  # echo: a console that gets a line per point
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.task = self.progress.add_task("starting", total=total)
        self.live = Live(self, console=stderr(), transient=True, refresh_per_second=4, redirect_stdout=False,
                         redirect_stderr=False) if live else None

    def __enter__(self):
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        if self.live is not None:
            self.live.__exit__(*exc)
        return False

    def stage(self, name: str, total: int | None = None, detail: str = "") -> None:
        self.title = detail
        self.progress.update(self.task, total=total)

    def advance(self, n: int = 1, detail: str | None = None) -> None:
        self.progress.update(self.task, advance=n)

    def note(self, message: str) -> None:
        stderr().print(message, markup=False, highlight=False)

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
    for line in precision_lines(meta):
        console.print(line, markup=False)
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
    for line in precision_lines(meta):
        console.print(line, markup=False)
    console.print(f"written: {', '.join(data['files'])}", markup=False)
