"""``lsgtool profile``: time and peak memory of attention / SSM variants across lengths, beside the peers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lsgtool.commands._common import JsonOption, emit, state, stderr

DEFAULT_VARIANTS = "full,lsg-norm,locost-s4d_lin,longformer,bigbird"


def profile_command(
    ctx: typer.Context,
    lengths: Annotated[str, typer.Option(help="Lengths: 1k..16k (doubling), 1k..64k:x4, 1k,4k or 4096.")] = "1k..16k",
    variants: Annotated[str, typer.Option(help="Comma list; `lsgtool plugins` lists selectors/SSM variants.")] = DEFAULT_VARIANTS,
    level: Annotated[str, typer.Option(help="attention (token mixing only) or encoder (blocks with FFN).")] = "attention",
    mode: Annotated[str, typer.Option(help="inference, or train (forward + backward + AdamW step).")] = "inference",
    hidden: Annotated[int, typer.Option(help="Model width.")] = 768,
    heads: Annotated[int, typer.Option(help="Attention heads.")] = 12,
    layers: Annotated[int, typer.Option(help="Blocks at encoder level.")] = 1,
    batch: Annotated[int, typer.Option(help="Batch size.")] = 1,
    device: Annotated[str, typer.Option(help="cpu or cuda.")] = "cpu",
    dtype: Annotated[str, typer.Option(help="float32, bfloat16 or float16.")] = "float32",
    repeats: Annotated[int, typer.Option(help="Timed runs per point after a warm-up (median reported).")] = 3,
    budget: Annotated[float, typer.Option(help="Seconds one point may take before it is abandoned.")] = 120.0,
    memory_limit: Annotated[Optional[float], typer.Option(help="MB a point may use (default: available).")] = None,
    baseline: Annotated[str, typer.Option(help="Variant the ratios and crossovers compare with.")] = "full",
    out: Annotated[Path, typer.Option(help="Folder for results.json, results.csv, time.png, memory.png.")] = Path("profile-out"),
    quick: Annotated[bool, typer.Option(help="A small, fast run (under a minute): 512..2k, width 64.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Measure time and peak memory across lengths, one fresh process per point; table, JSON, CSV and plots."""
    from lsgtool.core.errors import UsageError
    from lsgtool.core.profile import parse_lengths
    from lsgtool.core.profile.engine import Plan, run, summarise
    from lsgtool.core.profile.report import write
    from lsgtool.core.profile.variants import Setup, check_variants

    if quick:
        lengths, hidden, heads, repeats = "512..2k", 64, 4, 3
    for name, value, allowed in (("level", level, ("attention", "encoder")), ("mode", mode, ("inference", "train")),
                                 ("device", device, ("cpu", "cuda")), ("dtype", dtype, ("float32", "bfloat16", "float16"))):
        if value not in allowed:
            raise UsageError(f"--{name} {value!r} is not one of: {', '.join(allowed)}.")
    if hidden % heads:
        raise UsageError(f"--hidden {hidden} must be divisible by --heads {heads}.")
    names = check_variants([v.strip() for v in variants.split(",") if v.strip()], state(ctx).pm)
    if baseline not in names:
        raise UsageError(f"--baseline {baseline!r} is not among the profiled variants.", f"variants: {', '.join(names)}.")
    plan = Plan(parse_lengths(lengths), names, Setup(hidden, heads, layers, level, batch, block=128 if not quick else 32),
                mode, device, dtype, repeats, budget, memory_limit)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr(), transient=True, disable=as_json) as progress:
        task = progress.add_task("profiling", total=len(plan.lengths) * len(names))
        points = run(plan, lambda p: progress.update(task, advance=1, description=f"{p.variant} @ {p.length}"))
    summary = summarise(points, baseline)
    meta = {"level": level, "mode": mode, "device": device, "dtype": dtype, "hidden": hidden, "heads": heads,
            "layers": layers, "batch": batch, "baseline": baseline, "threads": next((p.threads for p in points if p.threads), None)}
    files = write(points, summary, meta, out)
    emit({"meta": meta, "points": [vars(p) for p in points], "summary": summary, "files": [str(f) for f in files]},
         as_json, _render)


def _render(console: Console, data: dict[str, Any]) -> None:
    meta, summary = data["meta"], data["summary"]
    table = Table(title=f"lsgtool profile — {meta['level']}, {meta['mode']}, {meta['device']} {meta['dtype']}, "
                        f"{meta['threads']} threads; ratios vs {meta['baseline']}")
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
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        scaling.add_row(variant, fmt(s["time_exponent"]), fmt(s["memory_exponent"]), str(s["crossover"] or "-"))
    console.print(scaling)
    console.print(f"written: {', '.join(data['files'])}", markup=False)
