"""Attention benchmark: LSG vs full SDPA vs Longformer vs BigBird self-attention, same width.

Batch 1, 12 heads x 64 dims (hidden 768), float32, CPU by default. Every layer includes its Q/K/V
projections (Longformer and BigBird layers have them built in). Each (variant, length) point runs in its
own subprocess, so peak memory is that point's alone: peak RSS growth over the state just before the first
forward (CPU) or peak allocated memory (CUDA). Warm-up once, then the median of --repeats timed forwards.

    python benchmarks/attention.py                       # 4K, 16K, 64K
    python benchmarks/attention.py --lengths 4096,16384 --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _harness import peak_rss_mb, reset_peak_rss  # noqa: E402

VARIANTS = ("lsg", "full", "longformer", "bigbird")
HIDDEN, HEADS = 768, 12


def build(variant: str, length: int, device: str):
    """A callable running one forward of the variant on a (1, length, 768) input."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    x = torch.randn(1, length, HIDDEN, device=device)
    if variant in ("lsg", "full"):
        from lsgtool import LSGConfig, lsg_attention

        qkv = torch.nn.Linear(HIDDEN, 3 * HIDDEN).to(device)
        config = LSGConfig(block_size=128, sparse_block_size=128, sparsity_factor=4, sparsity_type="norm", num_global_tokens=1)

        def run():
            q, k, v = qkv(x).view(1, length, 3, HEADS, 64).permute(2, 0, 3, 1, 4)
            if variant == "full":
                return F.scaled_dot_product_attention(q, k, v)
            return lsg_attention(q, k, v, config=config)

        return run
    if variant in ("longformer", "bigbird"):  # the same peers `lsgtool profile` measures
        from lsgtool.core.profile.variants import Setup, mixer

        layer = mixer(variant, Setup(hidden=HIDDEN, heads=HEADS)).to(device).eval()
        return lambda: layer(x)
    raise ValueError(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")


def worker(variant: str, length: int, repeats: int, device: str) -> dict:
    import torch

    torch.set_grad_enabled(False)
    run = build(variant, length, device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = reset_peak_rss()
    run()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - start)
    if device == "cuda":
        peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    else:
        peak = peak_rss_mb() - base
    return {"variant": variant, "length": length, "time_s": statistics.median(times), "peak_mb": peak,
            "threads": torch.get_num_threads(), "device": device}


def measure(variant: str, length: int, repeats: int, device: str, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--worker", variant, str(length), "--repeats", str(repeats), "--device", device]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"variant": variant, "length": length, "error": f"over {timeout:.0f}s budget"}
    if done.returncode != 0:
        reason = "out of memory (killed)" if done.returncode in (-9, 137) else done.stderr.strip().splitlines()[-1:]
        return {"variant": variant, "length": length, "error": str(reason)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="4096,16384,65536")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per point before it is abandoned")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--worker", nargs=2, metavar=("VARIANT", "LENGTH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]), args.repeats, args.device)))
        return
    results, failed = [], set()
    for length in map(int, args.lengths.split(",")):
        for variant in args.variants.split(","):
            if variant in failed:
                results.append({"variant": variant, "length": length, "error": "skipped: failed at a shorter length"})
            else:
                repeats = args.repeats if length <= 16384 else 1
                results.append(measure(variant, length, repeats, args.device, args.budget))
                failed |= {variant} if "error" in results[-1] else set()
            print(json.dumps(results[-1]), flush=True)
    print()
    print(f"{'length':>7} {'variant':>11} {'time s':>8} {'peak MB':>9} {'LSG faster by':>14} {'LSG memory ratio':>17}")
    for row in results:
        lsg = next((r for r in results if r["variant"] == "lsg" and r["length"] == row["length"] and "error" not in r), None)
        if "error" in row:
            print(f"{row['length']:>7} {row['variant']:>11} {row['error']}")
            continue
        speed = f"{row['time_s'] / lsg['time_s']:.2f}x" if lsg else "-"
        memory = f"{lsg['peak_mb'] / row['peak_mb']:.2f}" if lsg and row["peak_mb"] > 0 else "-"
        print(f"{row['length']:>7} {row['variant']:>11} {row['time_s']:>8.3f} {row['peak_mb']:>9.0f} {speed:>14} {memory:>17}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
