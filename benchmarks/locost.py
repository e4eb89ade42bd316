"""LOCOST vs LongT5 (transient-global), whole seq2seq models: time and peak memory of encoding a long input.

Runs through `lsgtool profile --model`'s engine: `locost-base` (12+12 layers, d_model 768, d_ff 2048, state
512 as the released checkpoint; `--d-state 256` for the paper's App. B) against `LongT5ForConditionalGeneration`
of the same width and depth (12 heads, local radius 127, global block 16), random weights (time and memory do
not depend on them), batch 1, CPU float32. Inference measures the encoder (the part that grows with the
input); peak memory includes all the weights. Every timed pass generates its SSM kernels, as a user's does.

    python benchmarks/locost.py                                   # 4K..512K for LOCOST, LongT5 to 16K
    python benchmarks/locost.py --lengths 4k,16k --longt5-max 16k --mode train
    python benchmarks/locost.py --lengths 16k --d-state 256 --chunk-size 16384   # one configuration
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from _harness import dump, measure, ratio_table  # noqa: E402

from lsgtool.profiling import parse_lengths  # noqa: E402
from lsgtool.profiling.engine import Plan  # noqa: E402
from lsgtool.profiling.models import resolve_model  # noqa: E402
from lsgtool.profiling.spec import parse_size  # noqa: E402


def longt5_folder(where: str) -> str:
    import torch
    from transformers import LongT5Config, LongT5ForConditionalGeneration

    torch.manual_seed(0)
    config = LongT5Config(d_model=768, d_kv=64, d_ff=2048, num_layers=12, num_decoder_layers=12, num_heads=12,
                          local_radius=127, global_block_size=16, encoder_attention_type="transient-global",
                          feed_forward_proj="gated-gelu", vocab_size=32128, decoder_start_token_id=0)
    LongT5ForConditionalGeneration(config).save_pretrained(where)
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="4k,16k,64k,128k,512k")
    parser.add_argument("--longt5-max", default="16k", help="longest length tried for LongT5")
    parser.add_argument("--mode", default="inference", choices=("inference", "train"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds per point")
    parser.add_argument("--d-state", type=int, default=None, help="SSM state size (default: the preset's, 512)")
    parser.add_argument("--chunk-size", type=int, default=None, help="LOCOST inference chunk (default: per device)")
    parser.add_argument("--json", help="also write the points here")
    args = parser.parse_args()
    lengths = parse_lengths(args.lengths)
    target = vars(resolve_model("locost-base"))
    changes = {k: v for k, v in (("d_state", args.d_state), ("chunk_size", args.chunk_size)) if v is not None}
    target["preset_config"] = {**target["preset_config"], **changes}
    plan = Plan(lengths, ["model"], mode=args.mode, repeats=args.repeats, budget_s=args.budget, model=target)
    points = measure(plan, "locost")
    with tempfile.TemporaryDirectory() as folder:
        plan.lengths = [n for n in lengths if n <= parse_size(args.longt5_max)]
        plan.model = vars(resolve_model(longt5_folder(folder)))
        points += measure(plan, "longt5")
    ratio_table(points, "locost", "LOCOST")
    dump(points, args.json)


if __name__ == "__main__":
    main()
