"""Batch throughput of `lsgtool summarize`: documents per hour on many short documents, one by one against
`--batch-size N` grouped by length and `--batch-size N` in input order, with the padding each batching leaves.

The documents are cut from the licenses Debian ships (/usr/share/common-licenses: consecutive paragraphs from a
random place, cut at a word to a length drawn uniformly from --min-tokens to --max-tokens, 50-600 by default),
written as .txt files in a folder, in the random order they were drawn, so input-order batches mix lengths.
The summariser is built from a configuration with random weights (time does not depend on the weights): BART,
BART converted to LSG, or LOCOST at `small` (d_model 256, 4+4 layers) or `base` (768, 6+6) sizes, with a
byte-level BPE trained on the same licenses. Every summary is exactly --new-tokens long (greedy, min = max
new tokens), so the runs decode the same number of tokens and differ only by how they batch. Each run is the
whole `lsgtool.summarize.run` on the folder (read, tokenise, generate, write the outputs and records); its time
starts once the model is loaded, so documents per hour are the summarising alone, and four documents are
summarised before the timed runs (one by one and in a batch) so that none pays the first calls' costs.

    python benchmarks/batch.py                                  # 200 documents, BART small, batches of 8
    python benchmarks/batch.py --models bart,locost --batch-sizes 8,32 --device cuda
    python benchmarks/batch.py --docs 12 --new-tokens 4         # a quick check that it runs

Prints one JSON line per run, then a table: seconds, documents/hour, the ratio to one by one, and the padding
of the input (encoder) side, with the padding the same inputs would have had in input order.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from lsgtool.progress import Progress  # noqa: E402

LICENSES = Path("/usr/share/common-licenses")
SIZES = {"small": dict(d_model=256, layers=4, heads=4, d_ff=1024, d_state=256),
         "base": dict(d_model=768, layers=6, heads=12, d_ff=3072, d_state=256)}


def paragraphs() -> list[str]:
    if not LICENSES.is_dir():
        sys.exit(f"{LICENSES} is missing (Debian's base-files package ships it)")
    found = []
    for path in sorted(p for p in LICENSES.iterdir() if p.is_file() and not p.is_symlink()):
        found += [" ".join(part.split()) for part in path.read_text(errors="replace").split("\n\n") if part.strip()]
    return [p for p in found if len(p.split()) >= 5]


def train_tokenizer(texts: list[str], folder: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=8000, special_tokens=["<pad>", "</s>", "<unk>", "<s>", "<mask>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", mask_token="<mask>", model_max_length=10**30)
    fast.save_pretrained(folder)
    return fast


def documents(parts: list[str], tokenizer, count: int, low: int, high: int, folder: Path, seed: int) -> list[int]:
    """``count`` documents of ``low``-``high`` tokens written to ``folder``; their token counts."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    lengths = []
    for i in range(count):
        wanted, start = rng.randint(low, high), rng.randrange(len(parts))
        text, tokens = "", 0
        while tokens < wanted:  # consecutive paragraphs, wrapping around the corpus
            text = (text + "\n\n" if text else "") + parts[start % len(parts)]
            start, tokens = start + 1, len(tokenizer(text)["input_ids"])
        words = text.split(" ")
        keep = max(1, len(words) * wanted // tokens)
        text = " ".join(words[:keep])
        (folder / f"doc{i:04d}.txt").write_text(text + "\n")
        lengths.append(len(tokenizer(text)["input_ids"]))
    return lengths


def build(kind: str, size: dict, vocab: int, tokenizer_folder: Path, folder: Path) -> str:
    import torch
    import transformers as T

    import lsgtool

    torch.manual_seed(0)
    d, n, h, ff = size["d_model"], size["layers"], size["heads"], size["d_ff"]
    common = dict(vocab_size=vocab, pad_token_id=0, eos_token_id=1, bos_token_id=3, decoder_start_token_id=0)
    path = folder / kind
    tokenizer = T.AutoTokenizer.from_pretrained(tokenizer_folder)
    if kind == "locost":
        config = lsgtool.LocostConfig(d_model=d, d_kv=d // h, d_ff=ff, num_layers=n, num_decoder_layers=n, num_heads=h,
                                      d_state=size["d_state"], **common)
        lsgtool.LocostForConditionalGeneration(config).save_pretrained(path)
        tokenizer.save_pretrained(path)
        return str(path)
    config = T.BartConfig(d_model=d, encoder_layers=n, decoder_layers=n, encoder_attention_heads=h,
                          decoder_attention_heads=h, encoder_ffn_dim=ff, decoder_ffn_dim=ff,
                          max_position_embeddings=1024, forced_eos_token_id=None, **common)
    T.BartForConditionalGeneration(config).save_pretrained(folder / "bart-1024")
    tokenizer.save_pretrained(folder / "bart-1024")
    if kind == "bart":
        return str(folder / "bart-1024")
    model, tok = lsgtool.convert(str(folder / "bart-1024"), max_length=4096, block_size=64, sparsity_factor=2)
    lsgtool.save(model, tok, path)
    return str(path)


class Clock(Progress):
    """When summarising starts: the run calls ``inputs`` once the model is loaded."""

    started = None

    def inputs(self, total: int) -> None:
        self.started = time.perf_counter()


def measure(model: str, docs: Path, out: Path, batch_size: int, by_length: bool, new_tokens: int,
            device: str) -> dict:
    from lsgtool.summarize import SummarizeOptions, run

    options = SummarizeOptions(inputs=[str(docs)], model=model, out=out, fmt="jsonl", batch_size=batch_size,
                               by_length=by_length, device=device,
                               generation={"max_new_tokens": new_tokens, "min_new_tokens": new_tokens, "num_beams": 1})
    clock = Clock()
    result = run(options, clock)
    seconds = time.perf_counter() - clock.started
    report = result.report()
    if report["failed"]:
        sys.exit(f"{len(report['failed'])} documents failed: {report['failed'][0]}")
    batches = report["batches"] or {}
    return {"batch_size": batch_size, "order": "by length" if by_length and batch_size > 1 else "input",
            "documents": report["done"], "seconds": round(seconds, 2),
            "documents_per_hour": round(report["done"] * 3600 / seconds),
            "padding": batches.get("padding") or 0.0, "padding_in_input_order": batches.get("padding_in_input_order"),
            "summary_padding": batches.get("summary_padding") or 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--min-tokens", type=int, default=50)
    parser.add_argument("--max-tokens", type=int, default=600)
    parser.add_argument("--models", default="bart", help="comma-separated: bart, lsg-bart, locost")
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--batch-sizes", default="8", help="comma-separated N, each run sorted and in input order")
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens of every summary")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    sizes = [int(n) for n in args.batch_sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        parts = paragraphs()
        tokenizer = train_tokenizer(parts, folder / "tokenizer")
        lengths = documents(parts, tokenizer, args.docs, args.min_tokens, args.max_tokens, folder / "docs", args.seed)
        ordered = sorted(lengths)
        print(f"{len(lengths)} documents of {ordered[0]}-{ordered[-1]} tokens (median {ordered[len(ordered) // 2]}, "
              f"{sum(lengths):,} in all) from {LICENSES}", file=sys.stderr)
        warm = folder / "warm"  # the first documents, summarised once before the timed runs (first-call costs)
        warm.mkdir()
        for path in sorted((folder / "docs").iterdir())[:4]:
            (warm / path.name).write_text(path.read_text())
        for kind in args.models.split(","):
            model = build(kind, SIZES[args.size], len(tokenizer), folder / "tokenizer", folder / "models")
            for batch_size in (1, 2):
                measure(model, warm, folder / f"warm-{kind}-{batch_size}", batch_size, True, args.new_tokens,
                        args.device)
            plan = [(1, False)] + [(n, by_length) for n in sizes for by_length in (True, False)]
            for i, (batch_size, by_length) in enumerate(plan):
                row = {"model": kind, "size": args.size, "device": args.device, "new_tokens": args.new_tokens,
                       **measure(model, folder / "docs", folder / f"out-{kind}-{i}", batch_size, by_length,
                                 args.new_tokens, args.device)}
                row["vs_one_by_one"] = round(row["documents_per_hour"] / rows[-i]["documents_per_hour"], 2) \
                    if i else 1.0
                rows.append(row)
                print(json.dumps(row), flush=True)
    table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


def table(rows: list[dict]) -> None:
    print(f"\n{'model':>8} {'batch':>6} {'order':>10} {'seconds':>9} {'docs/hour':>10} {'vs 1':>6} "
          f"{'padding':>8} {'in input order':>15} {'summary padding':>16}")
    for r in rows:
        input_order = f"{100 * r['padding_in_input_order']:.1f}%" if r["padding_in_input_order"] is not None else "-"
        print(f"{r['model']:>8} {r['batch_size']:>6} {r['order']:>10} {r['seconds']:>9.1f} "
              f"{r['documents_per_hour']:>10,} {r['vs_one_by_one']:>5.2f}x {100 * r['padding']:>7.1f}% "
              f"{input_order:>15} {100 * r['summary_padding']:>15.1f}%")


if __name__ == "__main__":
    main()
