"""Shared by the benchmark scripts: peak memory of the current process and one point per subprocess."""

from __future__ import annotations

import json
import subprocess
import sys


def reset_peak_rss() -> float:
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS and return it, in MB."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    return peak_rss_mb()


def peak_rss_mb() -> float:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM")) / 1024


def run_point(script: str, args: list[str], timeout: float) -> dict:
    """Run ``script --worker ARGS`` in a fresh process; its last stdout line is the JSON result."""
    try:
        done = subprocess.run([sys.executable, script, "--worker", *args], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"over the {timeout:.0f} s budget"}
    if done.returncode != 0:
        if done.returncode in (-9, 137):
            return {"error": "out of memory (killed)"}
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])
