"""Profile outputs: JSON, CSV and PNG plots (time and memory vs length, log-log, failures marked)."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path

from lsgtool.core.profile.engine import Point


def write(points: list[Point], summary: dict, meta: dict, out: Path) -> list[Path]:
    """Write results.json, results.csv, time.png and memory.png into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "results.json", out / "results.csv", out / "time.png", out / "memory.png"]
    files[0].write_text(json.dumps({"meta": meta, "points": [asdict(p) for p in points], "summary": summary}, indent=2))
    with files[1].open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(asdict(points[0])))
        writer.writeheader()
        writer.writerows(asdict(p) for p in points)
    _plot(points, "time_s", "time per step (s)", files[2], meta)
    _plot(points, "peak_mb", "peak memory (MB)", files[3], meta)
    return files


def _plot(points: list[Point], field: str, label: str, path: Path, meta: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    ax.set_title(f"{meta.get('level')} level, {meta.get('mode')}, {meta.get('device')} {meta.get('dtype')}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
