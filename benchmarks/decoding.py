"""One decoding step's cross-attention over a long encoder output: LOCOST without the key/value cache, one
product per head (as shipped before issue 23) vs heads and beams folded into the rows of two matmuls, beside
reading an already formed cache (the peer the fold must approach), and reading X twice at the bandwidth a
``torch.sum`` of X reaches in the same run (the fold's floor). Width 768, 12 heads, 1 and 2 threads.
``--peaked`` multiplies the decoder state by 30 (and the cached read's query by 4): scores spread over hundreds,
so most softmax weights over a long input fall below 1e-38 (subnormal floats, which the folded read zeroes on
CPUs and the cached read multiplies as they are, as T5's cached attention would).

    python benchmarks/decoding.py                     # 64K tokens, beams 1 and 4, 1 and 2 threads
    python benchmarks/decoding.py --length 16384 --beams 1,2,4 --threads 2 --peaked
    python benchmarks/decoding.py --gemm --length 262144 --threads 2   # the two products alone, by query rows

``--gemm``: the scores product X·qᵀ and the read w·X alone for 1-32 query rows (heads × beams), on each library
path (``lsgtool.core.ssm.products``: MKL's GEMM through torch.bmm, oneDNN's linear on X as it is and on X packed
once for it; the packing's own time is printed, paid once per document), beside a ``sum`` of X: how
close each comes to streaming X at memory speed as the rows grow. The folded step is timed on each path and on the
one lsgtool chooses (measured once per machine). ``--dtype bfloat16``: X and the rows in bfloat16 (the floor
stays the float32 sum of X, the issue's target for a bfloat16 step).

    python benchmarks/decoding.py --length 262144 --beams 1 --threads 2 --dtype bfloat16
    python benchmarks/decoding.py --length 1048576 --beams 1 --threads 2 --dtype bfloat16 --no-per-head
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from _harness import best  # noqa: E402


def _best(step, repeats: int) -> float:
    return 1000 * best(step, repeats)  # ms


def products(args) -> None:
    from lsgtool.core.ssm import products

    E, L, dtype = 768, args.length, getattr(torch, args.dtype)
    X = torch.randn(1, L, E)
    for threads in map(int, args.threads.split(",")):
        torch.set_num_threads(threads)
        read = _best(lambda: X.sum(), args.repeats)
        X = X.to(dtype)
        print(f"{threads} thread(s), L={L:,}, {args.dtype}: a float32 sum of X {read:,.1f} ms")
        for rows in (1, 4, 8, 12, 16, 24, 32):
            q, w = torch.randn(1, rows, E, dtype=dtype), torch.randn(1, rows, L).softmax(-1).to(dtype)
            cells = []
            for path in products.PATHS:
                with products.forced(path):
                    scores = _best(lambda: products.scores(X, q), args.repeats)
                    weighted = _best(lambda: products.read(w, X), args.repeats)
                cells.append(f"{path}: X·qᵀ {scores:,.1f} ms ({scores / read:.2f}x the sum), w·X {weighted:,.1f} ms "
                             f"({weighted / read:.2f}x)")
            print(f"  {rows:>2} rows: " + "; ".join(cells))
        X = X.float()


def _packing(states) -> float:
    """ms to pack X once for each product (the ``packed`` path's cost per document, not per step)."""
    import time

    from lsgtool.core.ssm import products

    products.release()  # the copies the timed paths made: packed anew here
    start = time.perf_counter()
    for product in ("scores", "read"):
        products._packed(product, states, 12)
    seconds = time.perf_counter() - start
    products.release()
    return 1000 * seconds


@torch.no_grad()
def main() -> None:
    from lsgtool import LocostConfig, LocostForConditionalGeneration

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=65536)
    parser.add_argument("--beams", default="1,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--peaked", action="store_true", help="decoder states x30 (most weights subnormal)")
    parser.add_argument("--gemm", action="store_true", help="only the two products, for 1-32 query rows")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--no-per-head", action="store_true",
                        help="skip the per-head product (minutes at 1M tokens in bfloat16)")
    args = parser.parse_args()
    if args.gemm:
        return products(args)
    torch.manual_seed(0)
    E, H, L = 768, 12, args.length
    config = LocostConfig(vocab_size=100, d_model=E, d_kv=E // H, d_ff=64, num_layers=1, num_decoder_layers=1,
                          num_heads=H, d_state=8, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    from lsgtool.core.ssm import products

    dtype = getattr(torch, args.dtype)
    attention = LocostForConditionalGeneration(config).eval().to(dtype).decoder.block[0].layer[1].EncDecAttention
    states, mask = torch.randn(1, L, E), torch.zeros(1, 1, 1, L, dtype=dtype)
    print(f"cross-attention of one decoding step, L={L:,}, E={E}, {H} heads, {args.dtype} (best of {args.repeats})"
          f"{', peaked scores' if args.peaked else ''}")
    for threads in map(int, args.threads.split(",")):
        torch.set_num_threads(threads)
        states = states.float()
        floor = 2 * _best(lambda: states.sum(), args.repeats)
        states = states.to(dtype)
        print(f"{threads} thread(s): reading float32 X twice at the bandwidth of its sum: {floor:,.1f} ms "
              f"({2 * states.numel() * 4 / floor / 1e6:,.1f} GB/s)")
        for beams in map(int, args.beams.split(",")):
            hidden = torch.randn(beams, 1, E, dtype=dtype) * (30 if args.peaked else 1)
            keys, values, query = (torch.randn(beams, H, L, E // H, dtype=dtype),
                                   torch.randn(beams, H, L, E // H, dtype=dtype),
                                   torch.randn(beams, H, 1, E // H, dtype=dtype) * (4 if args.peaked else 1))
            per_head = (float("nan") if args.no_per_head
                        else _best(lambda: attention.without_cache_per_head(hidden, states, mask), args.repeats))
            folded = {}
            for path in (*products.PATHS, None):
                with products.forced(path):
                    folded[path or "chosen"] = _best(lambda: attention.without_cache(hidden, states, mask), args.repeats)
            cached = _best(lambda: (query @ keys.transpose(-1, -2)).softmax(-1) @ values, args.repeats)
            paths = ", ".join(f"{p} {t:,.1f} ms ({t / floor:.2f}x reading X twice)" for p, t in folded.items())
            packing = _packing(states)
            print(f"  beams {beams}: per head {per_head:,.1f} ms; folded on {paths}; cached read {cached:,.1f} ms; "
                  f"chosen: {', '.join(v for k, v in products.chosen().items() if args.dtype in k)}; "
                  f"chosen is {per_head / folded['chosen']:.1f}x faster than per head, "
                  f"{folded['chosen'] / cached:.2f}x a cached read; packing X for both products, once: "
                  f"{packing:,.1f} ms")


if __name__ == "__main__":
    main()
