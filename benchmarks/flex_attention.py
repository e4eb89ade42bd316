"""Should LSG offer a flex_attention backend on this device? ``torch.compile``d ``flex_attention`` with a block mask
of 5 key blocks of 128 per query block (640 keys per query, as many as LSG 128/4's 641: globals, 2 x 128 reduced
tokens, 3 local blocks) against ``lsg_attention`` (norm, 128/4, 1 global) at 16K tokens, 12 heads x 64, in one
run; the first compiled call (compile time) reported apart. Uncompiled, flex_attention builds the n x n scores.

    python benchmarks/flex_attention.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from _harness import best  # noqa: E402


@torch.no_grad()
def main() -> None:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    from lsgtool.core.lsg.attention import lsg_attention
    from lsgtool.core.lsg.config import LSGConfig

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=16384)
    args = parser.parse_args()
    torch.manual_seed(0)
    H, D, L, S = 12, 64, args.length, 128
    q, k, v = (torch.randn(1, H, L, D) for _ in range(3))
    block = create_block_mask(lambda b, h, qi, ki: ((qi // S) - (ki // S)).abs() <= 2, 1, 1, L, L, device="cpu",
                              BLOCK_SIZE=S)
    compiled = torch.compile(flex_attention)
    start = time.perf_counter()
    compiled(q, k, v, block_mask=block)
    first = time.perf_counter() - start
    flex = best(lambda: compiled(q, k, v, block_mask=block))
    config = LSGConfig(block_size=S, sparse_block_size=S, sparsity_factor=4, sparsity_type="norm", num_global_tokens=1)
    q1, k1, v1 = (torch.randn(1, H, L + 1, D) for _ in range(3))
    lsg = best(lambda: lsg_attention(q1, k1, v1, config=config))
    print(f"{L:,} tokens: flex_attention compiled: first call {first:.1f} s (compiling), then {flex:.3f} s; "
          f"lsg_attention {lsg:.3f} s; flex / lsg {flex / lsg:.2f}")


if __name__ == "__main__":
    main()
