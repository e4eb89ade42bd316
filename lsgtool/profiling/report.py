"""Profile outputs: JSON, CSV and PNG plots (time and memory vs length, log-log, failures marked; the longest
length per variant for ``--find-max``)."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path

from lsgtool.plots import pyplot, save
from lsgtool.profiling.engine import Longest, Point


def _title(meta: dict) -> str:
    title = f"{meta.get('model') or meta.get('level')} level, {meta.get('mode')}, {meta.get('device')} {meta.get('dtype')}"
    return title + (f"\nINCOMPLETE: {meta['incomplete']}" if meta.get("incomplete") else "")


def write(points: list[Point], summary: dict, meta: dict, out: Path, plots: bool = True) -> list[Path]:
    """Write results.json, results.csv and (``plots``) time.png and memory.png into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "results.json", out / "results.csv", *([out / "time.png", out / "memory.png"] if plots else [])]
    files[0].write_text(json.dumps({"meta": meta, "points": [asdict(p) for p in points], "summary": summary}, indent=2))
    with files[1].open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(asdict(points[0])))
        writer.writeheader()
        writer.writerows(asdict(p) for p in points)
    if plots:
        _plot(points, "time_s", "time per step (s)", files[2], meta)
        _plot(points, "peak_mb", "peak memory (MB)", files[3], meta)
    return files


def write_longest(found: list[Longest], meta: dict, out: Path, plots: bool = True) -> list[Path]:
    """``--find-max`` results: longest.json (with every probe), longest.csv and (``plots``) longest.png."""
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "longest.json", out / "longest.csv", *([out / "longest.png"] if plots else [])]
    rows = [f.row() for f in found]
    files[0].write_text(json.dumps({"meta": meta, "longest": rows,
                                    "probes": [asdict(p) for f in found for p in f.probes]}, indent=2))
    with files[1].open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if plots:
        _plot_longest(rows, meta, files[2])
    return files


def _plot_longest(rows: list[dict], meta: dict, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.5))
    lengths = [r["length"] or 0 for r in rows]
    bars = ax.barh([r["variant"] for r in rows], lengths, color="tab:blue")
    for bar, row in zip(bars, rows):
        label = f"{row['length']:,} tokens, {row['peak_mb']:.0f} MB" if row["length"] else "none fits"
        if row["limited_by"] and "memory" not in row["limited_by"]:
            label += f" ({row['limited_by']})"  # stopped by time or a position limit, not by memory
        ax.annotate(label, (bar.get_width(), bar.get_y() + bar.get_height() / 2), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)
    if any(lengths):
        ax.set_xscale("log", base=2)
        ax.set_xlim(right=max(lengths) * 8)
    ax.invert_yaxis()
    ax.set_xlabel(f"longest input within {meta['memory_limit_mb']:.0f} MB (tokens)")
    ax.set_title(_title(meta))
    save(fig, path)


def _plot(points: list[Point], field: str, label: str, path: Path, meta: dict) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for variant in dict.fromkeys(p.variant for p in points):
        mine = [p for p in points if p.variant == variant]
        ok = [p for p in mine if getattr(p, field)]
        line = ax.plot([p.length for p in ok], [getattr(p, field) for p in ok], marker="o", label=variant)[0]
        failed = next((p for p in mine if p.error and not p.error.startswith("skipped")), None)
        if failed and ok:
            ax.plot([failed.length], [getattr(ok[-1], field)], marker="x", markersize=10, color=line.get_color())
            ax.annotate(failed.error[:24], (failed.length, getattr(ok[-1], field)), fontsize=7)
    ax.set_xscale("log", base=2)
    if any(getattr(p, field) for p in points):  # log axes need at least one measured point
        ax.set_yscale("log")
    ax.set_xlabel("sequence length (tokens)")
    ax.set_ylabel(label)
    ax.set_title(_title(meta))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, path)
