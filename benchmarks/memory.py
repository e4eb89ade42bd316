"""How close `summarize`'s memory estimate (lsgtool.summarize.memory) comes to the measured peak of one pass.

Each point runs in its own process: a model with random weights (LOCOST, or BART converted to LSG; width E,
2 encoder and 2 decoder layers: the estimate's terms are per layer or per decoder layer, and a peak is reached
inside one layer), L random token ids, then the peak-RSS mark is reset and one pass runs exactly as summarize
runs it (``Abstractive.generate``: encode, then generate 8 tokens), with or without the cross-attention
key/value cache, greedy or with 4 beams. The peak RSS above the state before the pass stands next to
``estimate(summarizer, L, cache)``; the ratio estimate / measured is what the calibration holds to 1 ± 15%.

    python benchmarks/memory.py                       # E 256 and 768, 4K to 64K, cache / no cache, beams 1 and 4
    python benchmarks/memory.py --lengths 4096 --widths 256 --kinds locost   # one corner
    python benchmarks/memory.py --check rows.json     # today's estimate against peaks measured before (no model runs)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NEW_TOKENS = 8
LAYERS = 2


def _tokenizer(folder: str):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(["a storm came over the hills and the river rose"] * 10,
                            trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "</s>", "<unk>", "<s>"]))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 3), ("</s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", model_max_length=10**30)
    fast.save_pretrained(folder)
    return fast


def _model(kind: str, width: int, length: int, folder: str):
    import torch
    import transformers as T

    import lsgtool

    torch.manual_seed(0)
    heads = width // 64
    common = dict(vocab_size=300, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    if kind == "locost":
        config = lsgtool.LocostConfig(d_model=width, d_kv=64, d_ff=4 * width, num_layers=LAYERS,
                                      num_decoder_layers=LAYERS, num_heads=heads, d_state=256, **common)
        return lsgtool.LocostForConditionalGeneration(config).eval()
    bart = T.BartConfig(d_model=width, encoder_layers=LAYERS, decoder_layers=LAYERS, encoder_attention_heads=heads,
                        decoder_attention_heads=heads, encoder_ffn_dim=4 * width, decoder_ffn_dim=4 * width,
                        max_position_embeddings=1024, bos_token_id=3, forced_eos_token_id=None, **common)
    T.BartForConditionalGeneration(bart).save_pretrained(os.path.join(folder, "bart"))
    model, _ = lsgtool.convert(os.path.join(folder, "bart"), max_length=length, block_size=128, sparsity_factor=4,
                               sparsity_type="norm", num_global_tokens=1, tokenizer=False)
    return model.eval()


def point(kind: str, width: int, length: int, cache: bool, beams: int) -> dict:
    """One pass in this process: measured peak above the state before it, and the estimate."""
    import torch

    from lsgtool.profiling.memory import peak_rss_mb, reset_peak_rss
    from lsgtool.summarize.abstractive import Abstractive
    from lsgtool.summarize.generation import resolve
    from lsgtool.summarize.memory import estimate

    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as folder:
        tokenizer = _tokenizer(folder)
        model = _model(kind, width, length, folder)
    if hasattr(model, "set_cross_attention_cache"):
        model.set_cross_attention_cache(cache)
    generation = resolve({"max_new_tokens": NEW_TOKENS, "min_new_tokens": NEW_TOKENS, "num_beams": beams}, None,
                         "locost" if kind == "locost" else "lsg")
    summarizer = Abstractive(model, tokenizer, kind, generation, limit=None)
    ids = [3] + torch.randint(4, 300, (length - 2,)).tolist() + [1]
    guess = estimate(summarizer, length, cache)
    base = reset_peak_rss()
    summarizer.generate(ids)
    measured = peak_rss_mb() - base
    return {"kind": kind, "width": width, "length": length, "cache": cache, "beams": beams,
            "measured_mb": round(measured, 1), **{k: v for k, v in guess.to_dict().items() if k != "tokens"},
            "estimate_mb": round(guess.total_mb, 1), "ratio": round(guess.total_mb / measured, 3)}


def _shape(row: dict):
    """A stand-in of the summariser a row measured: what ``estimate`` reads (config, dtype, kind, beams)."""
    from types import SimpleNamespace

    import torch

    E = row["width"]
    config = SimpleNamespace(d_model=E, d_ff=4 * E, num_layers=LAYERS, num_decoder_layers=LAYERS,
                             decoder_layers=LAYERS, num_heads=E // 64, encoder_attention_heads=E // 64,
                             chunk_size=None)
    model = SimpleNamespace(config=config, parameters=lambda: iter([torch.zeros(1)]),
                            cross_attention_cached=row["cache"])
    generation = SimpleNamespace(values={"num_beams": row["beams"]})
    return SimpleNamespace(model=model, method="abstractive", kind=row["kind"], generation=generation)


def check(path: str) -> list[dict]:
    """Today's estimate for each measured row of ``path`` (rows written by ``--json``)."""
    from lsgtool.summarize.memory import estimate

    with open(path) as handle:
        rows = json.load(handle)
    for row in rows:
        guess = estimate(_shape(row), row["length"], row["cache"])
        row.update(estimate_mb=round(guess.total_mb, 1), ratio=round(guess.total_mb / row["measured_mb"], 3))
    return rows


def _line(row: dict) -> str:
    return (f"{row['kind']:7} {row['width']:>4} {row['length']:>6} {row['cache']!s:>5} {row['beams']:>5} "
            f"{row['measured_mb']:>11.1f} {row['estimate_mb']:>11.1f} {row['ratio']:>6.2f}")


def _spread(rows: list[dict]) -> None:
    for name, chosen in (("all", rows), ("16K and longer", [r for r in rows if r["length"] >= 16384])):
        ratios = [r["ratio"] for r in chosen]
        if ratios:
            print(f"estimate / measured, {name} ({len(ratios)} points): {min(ratios):.2f} .. {max(ratios):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="locost,lsg")
    parser.add_argument("--widths", default="256,768")
    parser.add_argument("--lengths", default="4096,16384,65536")
    parser.add_argument("--beams", default="1,4")
    parser.add_argument("--point", help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None, help="write the rows here too")
    parser.add_argument("--check", default=None, help="rows measured before (--json): today's estimate beside them")
    args = parser.parse_args()
    if args.point:
        print(json.dumps(point(**json.loads(args.point))), flush=True)
        return
    print(f"{'kind':7} {'E':>4} {'L':>6} {'cache':>5} {'beams':>5} {'measured MB':>11} {'estimate MB':>11} {'ratio':>6}")
    if args.check:
        rows = check(args.check)
        for row in rows:
            print(_line(row))
        _spread(rows)
        return
    rows = []
    for kind in args.kinds.split(","):
        for width in map(int, args.widths.split(",")):
            for length in map(int, args.lengths.split(",")):
                for cache in ([True, False] if kind == "locost" else [True]):
                    for beams in map(int, args.beams.split(",")):
                        spec = dict(kind=kind, width=width, length=length, cache=cache, beams=beams)
                        done = subprocess.run([sys.executable, __file__, "--point", json.dumps(spec)],
                                              capture_output=True, text=True)
                        if done.returncode != 0:
                            print(f"{kind:7} {width:>4} {length:>6} {cache!s:>5} {beams:>5} failed: "
                                  f"{done.stderr.strip().splitlines()[-1:]}", flush=True)
                            continue
                        row = json.loads(done.stdout.strip().splitlines()[-1])
                        rows.append(row)
                        print(_line(row), flush=True)
    _spread(rows)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
