"""bfloat16 and int8 against float32 on a trained LOCOST summariser (issue 32, item 3): next-token top-1 agreement
under teacher forcing, the share of identical greedy summaries, and ROUGE of each on the held-apart RFCs.

Random weights cannot show agreement (their logits are flat and flip on noise), so a small LOCOST (d_model
256, 4 + 4 layers, state 64, the packaged MiniLM's WordPiece) is first trained with `lsgtool finetune --task
seq2seq` on the tuning part of `../shared/quality/rust-rfcs` (RFC text -> its authors' summary). Then each
held-apart RFC is summarised through `summarize`'s own loading and pipeline (`load_abstractive`, `summarize_text`)
in float32 and in each of ``--dtypes``: bfloat16 (weights, matmuls and the encoder output X; the SSM kernels'
parameters and the FFTs stay float32), int8 (the encoder's linear layers, torchao), with and without the
cross-attention cache (without it, each step reads X directly: in bfloat16, X is read in bfloat16), and in
float32 without the cache on each of the step's library paths (MKL, oneDNN: the same summaries?). Needs the RFC
pairs written by `benchmarks/quality.py --pairs`.

    python benchmarks/quality.py --pairs tuned.jsonl --sets rfcs --parts tuned
    python benchmarks/quality.py --pairs held.jsonl --sets rfcs --parts held-apart
    python benchmarks/precision.py --train tuned.jsonl --held held.jsonl --work /tmp/precision --steps 300 \\
        --dtypes bfloat16,int8
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import small_locost  # noqa: E402

MAX_INPUT = 4096  # tokens of an RFC the model reads in training and under teacher forcing
NEW_TOKENS = 64


def train(pairs: Path, work: Path, steps: int, batch_size: int) -> Path:
    out = work / "run"
    if (out / "config.json").exists():
        print(f"trained model found in {out}: not trained again", file=sys.stderr)
        return out
    small_locost(work / "locost-small")
    command = [sys.executable, "-m", "lsgtool", "finetune", "--task", "seq2seq", "--model", str(work / "locost-small"),
               "--data", str(pairs), "--text-column", "text", "--summary-column", "summary", "--out", str(out),
               "--overwrite", "--max-length", str(MAX_INPUT), "--max-steps", str(steps), "--batch-size", str(batch_size),
               "--lr", "1e-3", "--set", "train.schedule=inverse_sqrt", "--set", f"train.warmup={max(1, steps // 10)}",
               "--set", "train.logging_steps=10", "--set", f"train.eval_steps={steps}", "--set", "data.target_length=128",
               "--set", "train.generate_length=64"]
    began = time.time()
    subprocess.run(command, check=True)
    print(f"trained in {time.time() - began:.0f} s", file=sys.stderr)
    return out


def teacher_forced(model, tokenizer, text: str, summary: str):
    import torch

    ids = tokenizer(text, truncation=True, max_length=MAX_INPUT, return_tensors="pt").input_ids
    labels = tokenizer(summary, truncation=True, max_length=128, return_tensors="pt").input_ids
    with torch.no_grad():
        return model(input_ids=ids, labels=labels).logits[0].float()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True, help="jsonl of the tuning RFCs (text, summary)")
    parser.add_argument("--held", type=Path, required=True, help="jsonl of the held-apart RFCs")
    parser.add_argument("--work", type=Path, required=True, help="where the model is trained (reused when there)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--limit", type=int, help="only the first N held-apart RFCs")
    parser.add_argument("--dtypes", default="bfloat16", help="compared with float32, comma-separated (bfloat16, "
                                                             "int8: needs torchao)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch

    from lsgtool.core.precision import cpu_accelerated
    from lsgtool.core.ssm import products
    from lsgtool.summarize.abstractive import load_abstractive
    from lsgtool.summarize.pipeline import summarize_text
    from lsgtool.summarize.scoring import make_scorer, rouge

    folder = train(args.train, args.work, args.steps, args.batch_size)
    rows = [json.loads(line) for line in args.held.read_text().splitlines()][:args.limit]
    flags = {"max_new_tokens": NEW_TOKENS, "min_new_tokens": 8, "num_beams": 1}
    others = [d for d in args.dtypes.split(",") if d and d != "float32"]
    summarizers = {dtype: load_abstractive(str(folder), flags, dtype=dtype) for dtype in ("float32", *others)}
    scorer = make_scorer(True)
    agree = dict.fromkeys(others, 0)
    total = paths_same = 0
    same = {(d, cached): 0 for d in others for cached in (True, False)}
    scores = {(dtype, cached): [] for dtype in summarizers for cached in (True, False)}
    seconds = {key: 0.0 for key in scores}
    for n, row in enumerate(rows, 1):
        logits = {d: teacher_forced(s.model, s.tokenizer, row["text"], row["summary"]) for d, s in summarizers.items()}
        top = {d: l.argmax(-1) for d, l in logits.items()}
        for d in others:
            agree[d] += int((top["float32"] == top[d]).sum())
        total += top["float32"].numel()
        text = row["text"]
        for cached in (True, False):
            written = {}
            for dtype, summarizer in summarizers.items():
                summarizer.model.set_cross_attention_cache(cached)
                started = time.perf_counter()
                written[dtype] = summarize_text(text, summarizer, "truncate").text
                seconds[(dtype, cached)] += time.perf_counter() - started
                scores[(dtype, cached)].append(rouge(written[dtype], row["summary"], scorer=scorer))
            for d in others:
                same[(d, cached)] += written["float32"] == written[d]
        summarizer = summarizers["float32"]  # the uncached step's two library paths, float32: the same words?
        summarizer.model.set_cross_attention_cache(False)
        with products.forced("matmul"):
            by_matmul = summarize_text(text, summarizer, "truncate").text
        with products.forced("onednn"):
            paths_same += by_matmul == summarize_text(text, summarizer, "truncate").text
        print(f"{n}/{len(rows)}: top-1 agreement so far " + ", ".join(f"{d} {agree[d] / total:.4f}" for d in others),
              file=sys.stderr, flush=True)

    def mean(key, measure):
        return round(100 * sum(s[measure]["f1"] for s in scores[key]) / len(scores[key]), 2)

    result = {"documents": len(rows), "cpu_accelerates": sorted(cpu_accelerated()), "threads": torch.get_num_threads(),
              "teacher_forced_top1_agreement": {d: round(agree[d] / total, 4) for d in others},
              "target_tokens": total,
              "identical_greedy_summaries": {f"{d} {'cached' if c else 'uncached'}": round(k / len(rows), 3)
                                             for (d, c), k in same.items()},
              "identical_float32_summaries_onednn_vs_mkl": round(paths_same / len(rows), 3),
              "rouge": {f"{d} {'cached' if c else 'uncached'}": {m: mean((d, c), m) for m in scores[(d, c)][0]}
                        for d, c in scores},
              "seconds": {f"{d} {'cached' if c else 'uncached'}": round(t, 1) for (d, c), t in seconds.items()}}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
