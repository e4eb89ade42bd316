"""Attention benchmark: LSG vs full SDPA and the peers' self-attention (Longformer, BigBird, LongT5, LED).

Runs through `lsgtool profile`'s engine (attention level): batch 1, hidden 768 = 12 heads x 64, float32,
CPU by default, Q/K/V projections in every variant; one subprocess per point, warm-up then the median of
--repeats timed forwards; peak memory = weights + everything one forward allocates.

    python benchmarks/attention.py                       # 4K, 16K, 64K
    python benchmarks/attention.py --lengths 4k,16k --variants lsg-norm,longformer --json results.json
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _harness import dump, measure, ratio_table  # noqa: E402

from lsgtool.profiling import parse_lengths  # noqa: E402
from lsgtool.profiling.engine import Plan  # noqa: E402
from lsgtool.profiling.variants import Setup  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="4k,16k,64k")
    parser.add_argument("--variants", default="lsg-norm,full,longformer,bigbird,longt5,led")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", default="inference", choices=("inference", "train"))
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per point before it is abandoned")
    parser.add_argument("--json", help="also write the points here")
    args = parser.parse_args()
    variants = args.variants.split(",")
    plan = Plan(parse_lengths(args.lengths), variants, Setup(hidden=768, heads=12), args.mode, args.device,
                repeats=args.repeats, budget_s=args.budget)
    points = measure(plan)
    ratio_table(points, variants[0])
    dump(points, args.json)


if __name__ == "__main__":
    main()
