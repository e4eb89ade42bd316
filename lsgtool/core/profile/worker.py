"""One profile point in a fresh process: ``python -m lsgtool.core.profile.worker '<json>'`` prints a JSON result."""

from __future__ import annotations

import json
import statistics
import sys
import time


def measure(spec: dict) -> dict:
    import torch

    from lsgtool.core.profile.memory import peak_rss_mb, reset_peak_rss
    from lsgtool.core.profile.variants import Setup, step_function

    torch.set_num_threads(spec.get("threads") or torch.get_num_threads())
    device, dtype = spec["device"], getattr(torch, spec["dtype"])
    step = step_function(spec["variant"], Setup(**spec["setup"]), spec["length"], spec["mode"], device, dtype)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated() / 2**20
    else:
        base = reset_peak_rss()
    step()  # warm-up (also the first optimizer step's state in train mode)
    sync()
    times = []
    for _ in range(spec["repeats"]):
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    peak = (torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else peak_rss_mb()) - base
    seconds = statistics.median(times)
    tokens = spec["length"] * spec["setup"].get("batch", 1)
    return {"time_s": seconds, "tokens_per_s": tokens / seconds, "peak_mb": peak, "threads": torch.get_num_threads()}


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))
