"""One profile point in a fresh process: ``python -m lsgtool.profiling.worker '<json>'`` prints a JSON result.

Peak memory counts the weights and everything one step allocates: activations and, in train mode, gradients
and optimizer state; not the interpreter, the libraries or the loading. On CPU it is the rise of the kernel's
peak-RSS mark over the state after building, plus the weights; on CUDA the allocator's peak. With
``limit_mb`` set, a watchdog thread ends the process as soon as the point's memory passes the limit (CPU),
or the CUDA allocator is capped there.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time

OVER_LIMIT = 75  # exit status: the point passed its memory limit


def _watch(base_mb: float, limit_mb: float) -> None:
    from lsgtool.profiling.memory import rss_mb

    while True:
        used = rss_mb() - base_mb
        if used > limit_mb:
            sys.stderr.write(f"over the {limit_mb:g} MB memory limit ({used:.0f} MB and growing)\n")
            sys.stderr.flush()
            os._exit(OVER_LIMIT)
        time.sleep(0.01)


def measure(spec: dict) -> dict:
    import torch

    from lsgtool.profiling.memory import peak_rss_mb, reset_peak_rss
    from lsgtool.profiling.variants import Setup, step_function

    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])
    device, dtype, limit = spec["device"], getattr(torch, spec["dtype"]), spec.get("limit_mb")
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.init()
        if limit:
            total = torch.cuda.get_device_properties(device).total_memory / 2**20
            torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total), device)
    if spec.get("model"):
        from lsgtool.profiling.models import model_step

        step, model = model_step(spec["model"], spec["variant"], spec["length"], Setup(**spec["setup"]),
                                 spec["mode"], device, dtype)
    else:
        step, model = step_function(spec["variant"], Setup(**spec["setup"]), spec["length"], spec["mode"], device, dtype)
    # on CPU the peak-RSS mark is reset after building, so library imports and loading do not count; the
    # weights, which were allocated before the reset, are added back exactly
    weights = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers())) / 2**20
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        base = 0.0
    else:
        base = reset_peak_rss() - weights
        if limit:
            threading.Thread(target=_watch, args=(base, limit), daemon=True).start()
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    times = []
    for attempt in range(spec["repeats"] + 1):  # the first run warms up, unless it is the only one
        start = time.perf_counter()
        step()
        sync()
        if attempt or not spec["repeats"]:
            times.append(time.perf_counter() - start)
    peak = (torch.cuda.max_memory_allocated() / 2**20 if cuda else peak_rss_mb()) - base
    if limit and peak > limit:
        sys.stderr.write(f"over the {limit:g} MB memory limit (peak {peak:.0f} MB)\n")
        sys.exit(OVER_LIMIT)
    seconds = statistics.median(times)
    tokens = spec["length"] * spec["setup"].get("batch", 1)
    return {"time_s": seconds, "tokens_per_s": tokens / seconds, "peak_mb": peak, "threads": torch.get_num_threads()}


def main(argv: list[str]) -> int:
    try:
        result = measure(json.loads(argv[0]))
    except MemoryError:
        sys.stderr.write("out of memory\n")
        return 3
    except Exception as exc:  # reported to the parent as this point's reason
        if type(exc).__name__ == "OutOfMemoryError":
            sys.stderr.write("out of memory\n")
            return 3
        if os.environ.get("LSGTOOL_DEBUG"):
            raise
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        sys.stderr.write(message.strip().splitlines()[0] + "\n")
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
