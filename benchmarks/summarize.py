"""A whole book through `lsgtool summarize`'s pipeline: the King James Bible (~1M tokens) in one LOCOST pass.

Stages timed and measured (peak RSS above the state before the stage, on Linux): extract (Debian's `bible`
program prints the text), read (the document reader), tokenize, encode, generate. Models have random weights
(time and memory do not depend on them): LOCOST at `locost-base` sizes (12+12 layers, d_model 768, state
512) or small (d_model 256, 4+4 layers), against LongT5 (transient-global) and LED of the same sizes at their
input limits (16,384 tokens), which must cut the book into windows (`--overflow chunk`: the windows'
summaries joined). A byte-level BPE of 32,000 tokens trained on the book stands in for the T5 vocabulary,
which is not available offline. Needs `apt-get install bible-kjv`.

    python benchmarks/summarize.py --size small                       # quick: small models, the whole book
    python benchmarks/summarize.py --size base --models locost --new-tokens 64   # the paper's setting, one pass

Beside the stages the run measures the machine (`limits`): matmul GFLOP/s at the encoder's own shapes and memory
bandwidth (a `torch.sum` over 1 GiB), and from them the two floors a one-pass LOCOST run is held to: the
encoder's dense work (its projections and feed-forward: 2·L·layers·(3E² + 3E·d_ff) FLOP at that speed) and,
per generated token without the cross-attention cache, reading the encoder output X twice per decoder layer.
    python benchmarks/summarize.py --size base --models longt5 --windows 2   # peers: N windows, extrapolated

Precision and the decoding step's library path (issue 32), one run each, in one process:
    python benchmarks/summarize.py --size base --models locost --dtype float32,bfloat16 --products matmul,chosen
``--words N`` takes only the book's first N words (a quicker run at a chosen length).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # as the lsgtool command sets it (lsgtool.cli.HUGE_PAGES)

from lsgtool.profiling.memory import peak_rss_mb, reset_peak_rss  # noqa: E402
from lsgtool.progress import Progress  # noqa: E402

SIZES = {"base": dict(d_model=768, layers=12, heads=12, d_ff=2048, d_state=512),
         "small": dict(d_model=256, layers=4, heads=4, d_ff=1024, d_state=512)}
LIMIT = 16384  # LongT5 and LED at their released input lengths


class Stages(Progress):
    """Time and peak memory of each stage the pipeline reports."""

    def __init__(self):
        self.rows, self.current, self.start, self.base = [], None, 0.0, 0.0

    def stage(self, name, total=None, detail=""):
        self.close()
        self.current, self.start, self.base = f"{name} {detail}".strip(), time.perf_counter(), reset_peak_rss()

    def close(self):
        if self.current is not None:
            self.rows.append({"stage": self.current, "seconds": round(time.perf_counter() - self.start, 2),
                              "peak_mb_above_start": round(peak_rss_mb() - self.base)})
            self.current = None

    def note(self, message):
        print("  " + message, file=sys.stderr)


def extract(folder: str) -> str:
    if shutil.which("bible") is None:
        sys.exit("the `bible` program is missing: apt-get install bible-kjv")
    path = os.path.join(folder, "kjv.txt")
    with open(path, "w") as handle:
        subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], stdout=handle, check=True)
    return path


def train_tokenizer(text_path: str, folder: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=32000, special_tokens=["<pad>", "</s>", "<unk>", "<s>", "<mask>"])
    tok.train([text_path], trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", mask_token="<mask>", model_max_length=10**30)
    fast.save_pretrained(folder)
    return fast


def build(kind: str, size: dict, vocab: int, folder: str) -> str:
    import torch
    import transformers as T

    import lsgtool

    torch.manual_seed(0)
    d, n, h, ff = size["d_model"], size["layers"], size["heads"], size["d_ff"]
    common = dict(vocab_size=vocab, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    if kind == "locost":
        config = lsgtool.LocostConfig(d_model=d, d_kv=d // h, d_ff=ff, num_layers=n, num_decoder_layers=n, num_heads=h,
                                      d_state=size["d_state"], **common)
        model = lsgtool.LocostForConditionalGeneration(config)
    elif kind == "longt5":
        config = T.LongT5Config(d_model=d, d_kv=d // h, d_ff=ff, num_layers=n, num_decoder_layers=n, num_heads=h,
                                local_radius=127, global_block_size=16, encoder_attention_type="transient-global",
                                feed_forward_proj="gated-gelu", **common)
        model = T.LongT5ForConditionalGeneration(config)
    else:
        config = T.LEDConfig(d_model=d, encoder_layers=n, decoder_layers=n, encoder_attention_heads=h,
                             decoder_attention_heads=h, encoder_ffn_dim=ff, decoder_ffn_dim=ff, attention_window=[1024] * n,
                             max_encoder_position_embeddings=LIMIT, max_decoder_position_embeddings=1024, **common)
        model = T.LEDForConditionalGeneration(config)
    path = os.path.join(folder, kind)
    model.save_pretrained(path)
    return path


def machine(size: dict) -> dict:
    """Matmul GFLOP/s at the encoder's shapes (a 2,048-token chunk through E x E and E x d_ff) and GB/s of a
    1 GiB sum, measured now with the threads the run uses."""
    import torch

    from _harness import best, matmul_gflops

    big = torch.randn(2**28)
    gbs = big.numel() * 4 / best(lambda: big.sum(), 5) / 1e9
    return {"threads": torch.get_num_threads(), "matmul_gflops": round(matmul_gflops(size["d_model"], size["d_ff"]), 1),
            "bandwidth_gbs": round(gbs, 1)}


def floors(size: dict, tokens: int, measured: dict) -> dict:
    """What the hardware allows: the encoder's dense work, and one decoding step's two reads of X per layer."""
    E, ff, layers = size["d_model"], size["d_ff"], size["layers"]
    dense = 2 * tokens * layers * (3 * E * E + 3 * E * ff)
    x_bytes = tokens * E * 4
    return {"encoder_dense_gflop": round(dense / 1e9), "encoder_floor_s": round(dense / 1e9 / measured["matmul_gflops"], 1),
            "x_gb": round(x_bytes / 1e9, 2),
            "step_floor_s": round(2 * layers * x_bytes / 1e9 / measured["bandwidth_gbs"], 2)}


def run(kind: str, size_name: str, book: str, tokenizer_folder: str, folder: str, new_tokens: int, windows: int | None,
        dtype: str = "float32", words: int | None = None, path: str | None = None):
    from lsgtool.core.ssm import products
    from lsgtool.documents import read
    from lsgtool.summarize.abstractive import load_abstractive
    from lsgtool.summarize.pipeline import PassLimit, summarize_text

    stages = Stages()
    stages.stage("read", detail="the document reader")
    document = read(book)
    stages.stage("load", detail=kind)
    model = build(kind, SIZES[size_name], 32000, folder)
    summarizer = load_abstractive(model, {"max_new_tokens": new_tokens, "min_new_tokens": new_tokens, "num_beams": 1},
                                  tokenizer=tokenizer_folder, dtype=dtype, limit=None if kind == "locost" else LIMIT)
    text = document.text
    if words is not None:  # cut after the N-th word, the text's own spacing kept
        ends = [m.end() for m in re.finditer(r"\S+", text)]
        text = text[:ends[min(words, len(ends)) - 1]] if ends else text
    if windows is not None:  # peers: only the first N windows, the rest extrapolated
        from lsgtool.summarize.windows import windows as cut

        text = "\n\n".join(cut(text, summarizer.count, summarizer.pass_tokens)[:windows])
    budget = PassLimit(summarizer, float(os.environ.get("MEMORY_LIMIT_MB", "20000")), stages)
    started = time.perf_counter()
    with products.forced(path):  # None: the path lsgtool chooses on this CPU
        summary = summarize_text(text, summarizer, "chunk", stages, budget=budget)
    total = time.perf_counter() - started
    stages.close()
    totals: dict[str, dict] = {}
    for row in stages.rows:  # per kind of stage: time summed over windows, the highest peak
        name = row["stage"].split()[0]
        entry = totals.setdefault(name, {"seconds": 0.0, "peak_mb_above_start": 0, "times": 0})
        entry["seconds"] = round(entry["seconds"] + row["seconds"], 2)
        entry["peak_mb_above_start"] = max(entry["peak_mb_above_start"], row["peak_mb_above_start"])
        entry["times"] += 1
    chosen = {k: v for k, v in products.chosen().items() if f"| {dtype} |" in k}
    result = {"model": kind, "size": size_name, "dtype": dtype, "products": path or f"chosen {chosen}",
              "words": document.words if words is None else min(words, document.words), "input_tokens": summary.input_tokens,
            "route": summary.route, "windows": summary.windows, "seconds": round(total, 1),
            "tokens_per_s": round(summary.input_tokens / total), "new_tokens": summary.new_tokens,
            "cross_attention_cache": getattr(summarizer.model, "cross_attention_cached", True),
            "stage_totals": totals, "measured_windows": windows, "stages": stages.rows,
            "peak_mb_above_start": max(row["peak_mb_above_start"] for row in stages.rows)}
    if kind == "locost" and windows is None:
        measured = machine(SIZES[size_name])
        limits = floors(SIZES[size_name], summary.input_tokens, measured)
        encode, generate = totals.get("encode", {}).get("seconds"), totals.get("generate", {}).get("seconds")
        steps = max(new_tokens, summary.new_tokens)
        result["limits"] = {**measured, **limits}
        if encode:
            result["limits"]["encoder_vs_floor"] = round(encode / limits["encoder_floor_s"], 2)
        if generate:
            result["limits"]["step_s"] = round(generate / steps, 2)
            result["limits"]["step_vs_floor"] = round(generate / steps / limits["step_floor_s"], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--models", default="locost,longt5,led")
    parser.add_argument("--new-tokens", type=int, default=64, help="generated tokens per pass (greedy)")
    parser.add_argument("--windows", type=int, help="peers: measure only the first N windows")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--dtype", default="float32", help="comma-separated: float32, bfloat16, int8 (one run each)")
    parser.add_argument("--words", type=int, help="only the book's first N words")
    parser.add_argument("--products", default="chosen",
                        help="comma-separated paths of the decoding step's products: chosen, matmul, onednn, packed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        book = extract(folder)
        extract_s = time.perf_counter() - start
        tokenizer_folder = os.path.join(folder, "tokenizer")
        start = time.perf_counter()
        train_tokenizer(book, tokenizer_folder)
        print(f"extract {extract_s:.1f} s; tokenizer trained on the book in {time.perf_counter() - start:.1f} s",
              file=sys.stderr)
        results = []
        for kind in args.models.split(","):
            for dtype in args.dtype.split(","):
                for path in args.products.split(",") if kind == "locost" else ["chosen"]:
                    result = run(kind, args.size, book, tokenizer_folder, folder, args.new_tokens,
                                 None if kind == "locost" else args.windows, dtype, args.words,
                                 None if path == "chosen" else path)
                    results.append(result)
                    print(json.dumps({k: v for k, v in result.items() if k != "stages"}), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
