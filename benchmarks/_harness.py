"""Shared by the benchmark scripts: peak memory of the current process and one point per subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from lsgtool.core.profile.memory import peak_rss_mb, reset_peak_rss  # noqa: F401  (re-exported for the scripts)


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
