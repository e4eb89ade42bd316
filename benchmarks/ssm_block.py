"""One LOCOST-base encoder block on a long input, by part, beside its matmul floor (issue 23, item 2).

The block as ``forward_chunked`` runs it at inference (``lsgtool.core.ssm.locost``): projections in chunks of
2,048 tokens, the SSM convolution channel chunk by channel chunk (kernel generation, FFTs), then the gating,
output projection and feed-forward. Width 768, d_ff 2048, state 512 (the released size), random weights.
The floor: the block's dense work (2·L·(3E² + 3E·d_ff) FLOP) at the matmul speed measured in the same run at
the block's own shapes. Best of --repeats.

    python benchmarks/ssm_block.py --length 1076905        # the KJV's length (about 2 minutes per repeat)
    PYTHONPATH=/path/to/older/checkout python benchmarks/ssm_block.py --length 1076905   # another version
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from _harness import best, matmul_gflops  # noqa: E402


@torch.no_grad()
def main() -> None:
    from lsgtool import LocostConfig
    from lsgtool.core.ssm.locost import CHANNEL_CHUNK, LocostBlock

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=262144)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    torch.manual_seed(0)
    E, ff, L = 768, 2048, args.length
    block = LocostBlock(LocostConfig(d_model=E, d_ff=ff, num_layers=1, num_heads=12, d_state=512)).eval()
    ssm = block.layer[0].ssm_layer
    hidden = torch.randn(1, L, E)
    v = torch.randn(1, L, E)

    def convolution():
        for c in range(0, E, CHANNEL_CHUNK):
            channels = slice(c, min(c + CHANNEL_CHUNK, E))
            v[:, :, channels] = ssm.mix(v[:, :, channels], channels)

    def kernels():
        for c in range(0, E, CHANNEL_CHUNK):
            ssm.kernel(L, slice(c, min(c + CHANNEL_CHUNK, E)))

    gflops = matmul_gflops(E, ff)
    floor = 2 * L * (3 * E * E + 3 * E * ff) / gflops / 1e9
    whole = best(lambda: block.forward_chunked(hidden), args.repeats)
    conv = best(convolution, args.repeats)
    kernel = best(kernels, args.repeats)
    figures = {"length": L, "threads": torch.get_num_threads(), "matmul_gflops": round(gflops, 1),
               "dense_floor_s": round(floor, 2), "block_s": round(whole, 2), "block_vs_floor": round(whole / floor, 2),
               "convolution_s": round(conv, 2), "kernel_generation_s": round(kernel, 2)}
    print(f"L={L:,}, {figures['threads']} threads, matmul {gflops:.0f} GFLOP/s: block {whole:.1f} s, its dense work "
          f"{floor:.1f} s -> {whole / floor:.2f}x; SSM convolution {conv:.1f} s (kernel generation {kernel:.1f} s)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
