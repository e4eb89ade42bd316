"""GSG pre-training of a small LOCOST on offline text (`lsgtool finetune --task gsg`): throughput, peak memory,
the loss curve, the held-out GSG loss, and ROUGE of the generated pseudo-summaries against the held-out targets
beside the lead-k and random-k sentence baselines.

Corpus: the King James Bible (Debian `bible-kjv`: `bible -f Gen1:1-Rev22:21`), the Debian handbook (en-US HTML
of `debian-handbook`) and /usr/share/common-licenses, cut into documents of about 40 sentences; 64 held out.
Model: LOCOST with d_model 256, 4 encoder + 4 decoder layers, state 64, bert-base-uncased WordPiece (the
tokenizer of the packaged all-MiniLM-L6-v2; its [MASK] is the sentinel). Inputs up to 1,024 tokens, targets 64.

    python benchmarks/gsg.py --steps 600
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import small_locost  # noqa: E402

SENTENCES_PER_DOCUMENT = 40
HELD_OUT = 64


def corpus() -> list[str]:
    from lsgtool.documents.sentences import sentences

    texts = []
    bible = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], capture_output=True, text=True, check=True).stdout
    chapters: dict[str, list[str]] = {}
    for line in bible.splitlines():
        match = re.match(r"^(\S+?)(\d+):\d+ (.*)$", line)
        if match:
            chapters.setdefault(match.group(1) + match.group(2), []).append(match.group(3))
    texts += [" ".join(verses) for verses in chapters.values()]
    for page in sorted(Path("/usr/share/doc/debian-handbook/html/en-US").glob("*.html")):
        body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", page.read_text(errors="replace"), flags=re.S)
        texts.append(html.unescape(re.sub(r"<[^>]+>", " ", body)))
    for licence in sorted(Path("/usr/share/common-licenses").iterdir()):
        if licence.is_file():
            texts.append(licence.read_text(errors="replace"))
    documents = []
    for text in texts:
        found = sentences(text)
        for start in range(0, len(found), SENTENCES_PER_DOCUMENT):
            part = found[start : start + SENTENCES_PER_DOCUMENT]
            if len(part) >= 4:
                documents.append(" ".join(part))
    return documents


def baselines(documents: list[str], seed: int) -> dict:
    """ROUGE of lead-k and random-k sentences of each held-out input (the unmasked ones) against its GSG target."""
    from rouge_score import rouge_scorer

    from lsgtool.finetune.gsg import GSGOptions, make_pair, split

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    totals = {name: {"rouge1": 0.0, "rouge2": 0.0, "rougeLsum": 0.0} for name in ("lead", "random")}
    rng = random.Random(seed)
    count = 0
    for index, document in enumerate(documents):
        pair = make_pair(document, GSGOptions("ind", 0.3, seed=seed), "[MASK]", index)
        if pair is None:
            continue
        count += 1
        kept = [s for i, s in enumerate(split(document)) if i not in set(pair.selected)]
        k = len(pair.selected)
        for name, chosen in (("lead", kept[:k]), ("random", rng.sample(kept, min(k, len(kept))))):
            for key, score in scorer.score("\n".join(split(pair.target)), "\n".join(chosen)).items():
                totals[name][key] += score.fmeasure
    return {name: {k: round(100 * v / count, 2) for k, v in scores.items()} for name, scores in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--work", default=None, help="folder for the corpus, the model and the run")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import datasets

    from lsgtool.core.load import load_tokenizer

    work = Path(args.work or tempfile.mkdtemp(prefix="gsg-bench-"))
    start = time.time()
    documents = corpus()
    random.Random(0).shuffle(documents)
    held, train = documents[:HELD_OUT], documents[HELD_OUT:]
    datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": train}),
                          "validation": datasets.Dataset.from_dict({"text": held})}).save_to_disk(str(work / "corpus"))
    print(f"corpus: {len(documents)} documents of up to {SENTENCES_PER_DOCUMENT} sentences "
          f"({time.time() - start:.0f} s to build)", flush=True)
    tokenizer = load_tokenizer("minilm")
    params = small_locost(work / "locost-small")
    print(f"model: {params / 1e6:.1f} M parameters", flush=True)
    out = work / "run"
    command = [sys.executable, "-m", "lsgtool", "finetune", "--task", "gsg", "--model", str(work / "locost-small"),
               "--data", str(work / "corpus"), "--out", str(out), "--overwrite", "--max-length", "1024",
               "--max-steps", str(args.steps), "--batch-size", str(args.batch_size), "--lr", "1e-3",
               "--set", "train.schedule=inverse_sqrt", "--set", f"train.warmup={max(1, args.steps // 10)}",
               "--set", "train.logging_steps=10", "--set", f"train.eval_steps={args.steps}",
               "--set", "data.target_length=64", "--set", "train.generate_length=64", "--set", "train.sampling=random"]
    began = time.time()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.time() - began
    if run.returncode:
        print(run.stderr[-4000:])
        raise SystemExit(run.returncode)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    metrics = json.loads((out / "metrics.json").read_text())
    from datasets import load_from_disk

    tokens = sum(min(1024, len(ids)) for ids in tokenizer(list(load_from_disk(str(work / "corpus"))["train"]["text"]),
                                                          verbose=False)["input_ids"])
    per_step = tokens / len(train) * args.batch_size
    runtime = metrics["train_metrics"]["train_runtime"]
    result = {
        "documents": len(documents), "held_out": HELD_OUT, "parameters": params, "steps": metrics["steps"],
        "batch_size": args.batch_size, "train_seconds": round(runtime, 1), "command_seconds": round(wall, 1),
        "document_tokens_per_second": round(per_step * metrics["steps"] / runtime, 1), "peak_rss_mb": round(peak_mb),
        "first_loss": metrics["first_loss"], "last_loss": metrics["last_loss"],
        "held_out_eval": {k.removeprefix("eval_"): round(v, 3) for k, v in (metrics.get("final_eval") or {}).items()},
        "baselines": baselines(held, seed=42), "skipped_documents": metrics.get("gsg_skipped_documents"),
        "loss_curve": [(h["step"], round(h["loss"], 3)) for h in metrics["log_history"] if "loss" in h],
        "curves_png": str(out / "curves.png"),
    }
    print(json.dumps({k: v for k, v in result.items() if k != "loss_curve"}, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
