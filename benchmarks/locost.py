"""LOCOST encoder vs LongT5 (transient-global) encoder: time and peak memory of one forward, CPU float32.

``locost-base`` sizes (12 layers, d_model 768, d_ff 2048, state 256; random weights: speed and memory do not
depend on their values) against ``LongT5EncoderModel`` of the same width and depth (12 heads, local radius 127,
global block 16). Batch 1, inference. Each point in its own subprocess; peak memory = growth of the peak-RSS
mark over the state after building the model.

    python benchmarks/locost.py                                   # 4K..512K for LOCOST, LongT5 to 16K
    python benchmarks/locost.py --lengths 4096,16384 --longt5-max 16384
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _harness import peak_rss_mb, reset_peak_rss, run_point  # noqa: E402


def build(variant: str, length: int):
    import torch

    torch.manual_seed(0)
    if variant == "locost":
        from lsgtool import LocostConfig, LocostEncoderModel

        model = LocostEncoderModel(LocostConfig()).eval()
    else:
        from transformers import LongT5Config, LongT5EncoderModel

        config = LongT5Config(d_model=768, d_kv=64, d_ff=2048, num_layers=12, num_heads=12, local_radius=127,
                              global_block_size=16, encoder_attention_type="transient-global",
                              feed_forward_proj="gated-gelu", vocab_size=32128)
        model = LongT5EncoderModel(config).eval()
    ids = torch.randint(100, 30000, (1, length))
    return lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state


def worker(variant: str, length: int, repeats: int) -> dict:
    import torch

    torch.set_grad_enabled(False)
    run = build(variant, length)
    base = reset_peak_rss()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    assert torch.isfinite(out).all()
    return {"variant": variant, "length": length, "time_s": min(times), "tokens_per_s": length / min(times),
            "peak_mb": peak_rss_mb() - base, "threads": torch.get_num_threads()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="4096,16384,65536,131072,524288")
    parser.add_argument("--longt5-max", type=int, default=16384, help="longest length tried for LongT5")
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds per point")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))))
        return
    rows = []
    for length in map(int, args.lengths.split(",")):
        for variant in ("locost", "longt5"):
            if variant == "longt5" and length > args.longt5_max:
                continue
            repeats = "2" if length <= 16384 else "1"
            row = {"variant": variant, "length": length, **run_point(__file__, [variant, str(length), repeats], args.budget)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{'length':>7} {'variant':>7} {'time s':>9} {'tokens/s':>9} {'peak MB':>9} {'LOCOST mem / LongT5':>20} {'speedup':>8}")
    for row in rows:
        if "error" in row:
            print(f"{row['length']:>7} {row['variant']:>7} {row['error']}")
            continue
        peer = next((r for r in rows if r["variant"] == "longt5" and r["length"] == row["length"] and "error" not in r), None)
        ratio = f"{row['peak_mb'] / peer['peak_mb']:.2f}" if peer and row["variant"] == "locost" else "-"
        speed = f"{peer['time_s'] / row['time_s']:.2f}x" if peer and row["variant"] == "locost" else "-"
        print(f"{row['length']:>7} {row['variant']:>7} {row['time_s']:>9.2f} {row['tokens_per_s']:>9.0f} "
              f"{row['peak_mb']:>9.0f} {ratio:>20} {speed:>8}")


if __name__ == "__main__":
    main()
