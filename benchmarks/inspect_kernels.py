"""`lsgtool inspect-kernels` at work: how long a connectivity map takes per selector and length (the selector
traced on one-hot values, block columns past 2K tokens), how long the SSM statistics of LOCOST-base take, and
the operator breakdown of one forward of full attention, LSG and LOCOST layers as the length grows.

    python benchmarks/inspect_kernels.py
    python benchmarks/inspect_kernels.py --lengths 4k,16k --skip-ops --json inspect.json
"""

from __future__ import annotations

import argparse
import json
import time


def maps(lengths: list[int], selectors: list[str]) -> list[dict]:
    from lsgtool.core.inspect.connectivity import connectivity
    from lsgtool.core.lsg.config import LSGConfig

    rows = []
    for selector in selectors:
        config = LSGConfig(block_size=128, sparse_block_size=128, sparsity_factor=4, sparsity_type=selector)
        for n in lengths:
            start = time.perf_counter()
            summary = connectivity(config, n, heads=12, head_dim=64).summary()
            rows.append({"selector": selector, "length": n, "seconds": round(time.perf_counter() - start, 3),
                         "keys_per_query": summary["keys_per_query"]["interior_max"],
                         "reach": summary["reach"]["interior_max"]})
            print(f"map {selector:>12} @ {n:>6}: {rows[-1]['seconds']:7.2f} s, {rows[-1]['keys_per_query']} keys per "
                  f"query, reach {rows[-1]['reach']}", flush=True)
    return rows


def kernels(length: int) -> dict:
    import torch

    from lsgtool.core.inspect.ssm import kernel_stats, ssm_layers
    from lsgtool.core.ssm.locost import LocostConfig, LocostEncoderModel

    torch.manual_seed(0)
    model = LocostEncoderModel(LocostConfig(d_state=512))  # the released size, random weights (offline)
    start = time.perf_counter()
    rows = [kernel_stats(f"layer {i}", m, length).summary() for i, (_, m) in enumerate(ssm_layers(model))]
    seconds = time.perf_counter() - start
    print(f"LOCOST-base kernels, 12 layers x 768 channels x 2 directions at {length}: {seconds:.1f} s; "
          f"layer 0 causal reach median {rows[0]['causal_reach_median']}, p90 {rows[0]['causal_reach_p90']}", flush=True)
    return {"length": length, "seconds": round(seconds, 2), "layers": rows}


def ops(lengths: list[int]) -> list[dict]:
    from lsgtool.inspection.ops import breakdown, synthetic_setup

    points = breakdown(["full", "lsg-norm", "locost-s4d_lin"], lengths, setup=synthetic_setup())
    rows = []
    for p in points:
        share = {k: round(100 * v) for k, v in p.share().items()}
        rows.append({"variant": p.variant, "length": p.length, "ms": p.total_ms, "share_percent": share})
        print(f"ops {p.variant:>15} @ {p.length:>6}: {p.total_ms:9.1f} ms  " +
              "  ".join(f"{k} {v}%" for k, v in share.items() if v), flush=True)
    return rows


def main() -> None:
    from lsgtool.profiling import parse_lengths

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="1k,4k,16k,64k", help="map lengths")
    parser.add_argument("--selectors", default="stride,norm,pooling,lsh")
    parser.add_argument("--kernel-length", type=int, default=16384)
    parser.add_argument("--ops-lengths", default="1k,4k,16k")
    parser.add_argument("--skip-ops", action="store_true")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args()
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)
    results = {"maps": maps(parse_lengths(args.lengths), args.selectors.split(",")), "kernels": kernels(args.kernel_length)}
    if not args.skip_ops:
        results["ops"] = ops(parse_lengths(args.ops_lengths))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
