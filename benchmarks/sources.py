"""What summary sources (`summarize --sources`) cost: time and peak memory of one summary with and without them.

With sources the document's text is cut into sentences (``Segments.original``: syntok), the tokenizer gives each
token's place in the text (offsets), each token gets its sentence (``bins``), and the abstractive pass records
the decoder's cross-attention per input sentence (forward hooks, the decoder's attention run eagerly:
``attribution``); the summary's sentences then get their sources (``generated_sentences``). Without them none
of this runs. Each variant is one process (`summarize_text` as the run layer calls it, ``track_offsets`` set with
sources as ``run._ask`` sets it), so its peak RSS (VmHWM) is its own:

- LOCOST with random weights at `locost-base` sizes (12+12 layers, d_model 768, d_ff 2048, state 512; `--size
  small`: 256, 4+4) at each of --lengths tokens of the King James Bible (`bible -f`, Debian's bible-kjv; else
  the licenses in /usr/share/common-licenses, repeated), greedy, exactly --new-tokens tokens, with the
  cross-attention key/value cache (the default) and without it (``set_cross_attention_cache(False)``, what
  `summarize` picks when the cache would not fit), each without and with sources;
- the extractive route (the packaged `minilm` encoder, converted to LSG for 4,096-token windows) at
  --extractive-lengths, without and with sources (there only the segmentation and the picks' spans are added).

A byte-level BPE of 32,000 tokens trained on the text's first part stands in for the T5 vocabulary (offline).
Times per stage as the pipeline reports them (tokenize, encode, generate; extractive: its own), plus the parts
of the sources' work timed where they run: ``segment_s`` (sentence segmentation), ``bins_s`` (each token's
sentence, from the kept offsets; inside the tokenize stage, which with sources also asks for the offsets) and
``compose_s`` (summary sentences and their sources; inside the generate stage, which also holds the recording).

    python benchmarks/sources.py --json sources.json # base, 16,384 and 131,072 tokens, 32 new tokens (~15 min)
    python benchmarks/sources.py --lengths 16384 --no-extractive --caches cache   # one corner
    python benchmarks/sources.py --quick             # small model, 2,048 tokens, 8 new tokens: that it runs

The default run: 10 processes, ~15 minutes on this project's 2-core CPU machine, the largest peak ~13 GB (131K
tokens with the cache: 12 layers of keys and values, 9.7 GB). Run it beside nothing else: two torch processes on
two cores slow each other down tens of times, not twice.

Prints one JSON line per measurement as it ends, then a table with the ratios with / without sources (same
length, same route and cache).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import SIZES, Stages, build, train_tokenizer  # noqa: E402

from lsgtool.profiling.memory import peak_rss_mb, reset_peak_rss, rss_mb  # noqa: E402

LICENSES = Path("/usr/share/common-licenses")
VOCAB = 32000
CHARS_PER_TOKEN = 6  # more text than the longest length needs (the KJV: ~4.1 characters per token)


class Timed(Stages):
    """The pipeline's stages (time, peak above the stage's start) and the process's absolute peak RSS."""

    def __init__(self):
        super().__init__()
        self.peak = 0.0

    def close(self):
        if self.current is not None:
            self.peak = max(self.peak, peak_rss_mb())
        super().close()

    def note(self, message):
        pass


def corpus(chars: int) -> tuple[str, str]:
    """(name, at least ``chars`` characters of text): the KJV when `bible` is there, else Debian's licenses."""
    if shutil.which("bible"):
        text = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], capture_output=True, text=True, check=True).stdout
        name = "kjv"
    else:
        if not LICENSES.is_dir():
            sys.exit("neither the `bible` program (apt-get install bible-kjv) nor /usr/share/common-licenses is here")
        text = "\n\n".join(p.read_text(errors="replace") for p in sorted(LICENSES.iterdir())
                           if p.is_file() and not p.is_symlink())
        name = "licenses"
    while len(text) < chars:
        text += "\n\n" + text
    return name, text[:chars]


def cut(text: str, tokenizer, tokens: int) -> str:
    """The first ``tokens`` tokens of ``text`` (as the tokenizer reads it), cut where the last one ends."""
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    if len(offsets) < tokens:
        sys.exit(f"the text has {len(offsets):,} tokens, fewer than {tokens:,}")
    return text[:offsets[tokens - 1][1]]


def patch_timers(times: dict) -> None:
    """Time the pipeline's sources-only helpers where they run (``bins_s``, ``compose_s``)."""
    from lsgtool.summarize import pipeline

    def timed(name, function):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                times[name] = times.get(name, 0.0) + time.perf_counter() - start
        return call

    pipeline._bins = timed("bins_s", pipeline._bins)
    pipeline.generated_sentences = timed("compose_s", pipeline.generated_sentences)
    pipeline.picked_sentences = timed("compose_s", pipeline.picked_sentences)


def child(spec: dict) -> dict:
    """One measurement in this process: load, then one summary with or without sources, timed and measured."""
    import torch

    from lsgtool.summarize.pipeline import Passage, summarize_text
    from lsgtool.summarize.sources import Segments

    times: dict[str, float] = {}
    patch_timers(times)
    text = Path(spec["text"]).read_text()
    start = time.perf_counter()
    if spec["route"] == "extractive":
        from lsgtool.summarize.extractive import load_extractive

        summarizer = load_extractive("minilm")
    else:
        from lsgtool.summarize.abstractive import load_abstractive

        n = spec["new_tokens"]
        summarizer = load_abstractive(spec["model"], {"max_new_tokens": n, "min_new_tokens": n, "num_beams": 1},
                                      tokenizer=spec["tokenizer"])
        summarizer.track_offsets = spec["sources"]  # as run._ask sets it
        summarizer.model.set_cross_attention_cache(spec["cache"])
    with torch.no_grad():  # the weights read once (a safetensors file is mapped lazily): not counted in the summary
        sum(float(p.sum()) for p in summarizer.model.parameters())
    load_s = time.perf_counter() - start
    gc.collect()
    stages = Timed()
    before = reset_peak_rss()
    start = time.perf_counter()
    segments = None
    if spec["sources"]:
        stages.stage("segment")
        segments = Segments.original(text)
        times["segment_s"] = time.perf_counter() - start
    summary = summarize_text(Passage(text, segments=segments), summarizer, "auto", stages)
    total = time.perf_counter() - start
    stages.close()
    stages.peak = max(stages.peak, peak_rss_mb())  # since the last stage began (or the start: no stage reported)
    by_stage: dict[str, float] = {}
    for row in stages.rows:
        name = row["stage"].split()[0]
        by_stage[f"{name}_s"] = round(by_stage.get(f"{name}_s", 0.0) + row["seconds"], 3)
    traced = summary.sentences or []
    return {"route": spec["route"], "size": spec.get("size"), "length": spec["length"], "sources": spec["sources"],
            "cache": spec.get("cache"), "variant": spec["variant"], "text": spec["corpus"],
            "input_tokens": summary.input_tokens, "new_tokens": summary.new_tokens, "summary_chars": len(summary.text),
            "threads": torch.get_num_threads(),
            "total_s": round(total, 3), **by_stage, **{k: round(v, 3) for k, v in times.items()},
            "input_sentences": len(segments.spans) if segments is not None else None,
            "summary_sentences": len(traced) if summary.sentences is not None else None,
            "sourced_sentences": sum(1 for s in traced if s.origins) if summary.sentences is not None else None,
            "load_s": round(load_s, 2), "rss_before_mb": round(before), "peak_rss_mb": round(stages.peak),
            "peak_above_start_mb": round(stages.peak - before),
            "stages": stages.rows}


def spawn(spec: dict) -> dict:
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        if done.returncode in (-9, 137):
            last = "out of memory (killed by the system)"
        named = ("route", "size", "length", "sources", "cache", "variant")
        return {**{k: spec.get(k) for k in named}, "error": last[:300]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: list[dict]) -> None:
    """Every measurement, and with sources: its ratio to the same route, length and cache without them."""
    keys = ("total_s", "segment_s", "tokenize_s", "bins_s", "encode_s", "generate_s", "compose_s")
    print(f"\n{'route':>11} {'length':>7} {'variant':>16} " + " ".join(f"{k[:-2]:>9}" for k in keys)
          + f" {'peak MB':>8} {'above MB':>8} {'time x':>7} {'gen x':>6} {'peak x':>6} {'above x':>7}")
    for r in results:
        head = f"{r['route']:>11} {r['length']:>7} {r['variant']:>16} "
        if r.get("error"):
            print(head + r["error"])
            continue
        cells = " ".join(f"{r[k]:>9.2f}" if r.get(k) is not None else f"{'-':>9}" for k in keys)
        ref = next((o for o in results if not o.get("error") and not o["sources"] and o["route"] == r["route"]
                    and o["length"] == r["length"] and o.get("cache") == r.get("cache")), None)
        ratios = ["-"] * 4
        if r["sources"] and ref:
            def x(a, b):
                return f"{a / b:.2f}" if a is not None and b else "-"
            ratios = [x(r["total_s"], ref["total_s"]), x(r.get("generate_s"), ref.get("generate_s")),
                      x(r["peak_rss_mb"], ref["peak_rss_mb"]), x(r["peak_above_start_mb"], ref["peak_above_start_mb"])]
        print(head + cells + f" {r['peak_rss_mb']:>8} {r['peak_above_start_mb']:>8} {ratios[0]:>7} {ratios[1]:>6} "
              f"{ratios[2]:>6} {ratios[3]:>7}")
    print("time x, gen x, peak x, above x: with sources / without (same route, length, cache); peak: the process's "
          "VmHWM (model loaded); above: above the RSS before the summary")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", help="LOCOST input tokens (16384 131072; quick: 2048)")
    parser.add_argument("--new-tokens", type=int, help="generated tokens, greedy, exactly this many (32; quick: 8)")
    parser.add_argument("--size", choices=SIZES, help="model size (base; quick: small)")
    parser.add_argument("--caches", nargs="+", choices=["cache", "no-cache"], default=["cache", "no-cache"],
                        help="LOCOST's cross-attention with its key/value cache, without it, or both")
    parser.add_argument("--extractive-lengths", type=int, nargs="*", help="minilm input tokens (16384; quick: 2048)")
    parser.add_argument("--no-extractive", action="store_true")
    parser.add_argument("--quick", action="store_true", help="small model, 2,048 tokens, 8 new tokens (a smoke run)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))), flush=True)
        return
    defaults = dict(size="small", lengths=[2048], new_tokens=8, extractive_lengths=[2048]) if args.quick else \
        dict(size="base", lengths=[16384, 131072], new_tokens=32, extractive_lengths=[16384])
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    extractive = [] if args.no_extractive else args.extractive_lengths
    results = []
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        name, text = corpus(max(args.lengths + extractive) * CHARS_PER_TOKEN)
        with open(os.path.join(folder, "corpus.txt"), "w") as handle:
            handle.write(text)
        tokenizer = train_tokenizer(os.path.join(folder, "corpus.txt"), os.path.join(folder, "tokenizer"))
        model = build("locost", SIZES[args.size], len(tokenizer), folder)
        gc.collect()
        texts = {}
        for n in sorted(set(args.lengths + extractive)):
            texts[n] = os.path.join(folder, f"text-{n}.txt")
            Path(texts[n]).write_text(cut(text, tokenizer, n))
        print(f"{name} text, tokenizer and {args.size} model ready in {time.perf_counter() - start:.1f} s "
              f"(rss {rss_mb():,.0f} MB)", file=sys.stderr)
        common = {"size": args.size, "new_tokens": args.new_tokens, "model": model,
                  "tokenizer": os.path.join(folder, "tokenizer"), "corpus": name}
        plan = [{**common, "route": "abstractive", "length": n, "cache": cache == "cache", "sources": sources,
                 "text": texts[n], "variant": f"{cache}{'+sources' if sources else ''}"}
                for n in args.lengths for cache in args.caches for sources in (False, True)]
        plan += [{**common, "route": "extractive", "length": n, "sources": sources, "text": texts[n],
                  "variant": "minilm+sources" if sources else "minilm"}
                 for n in extractive for sources in (False, True)]
        for spec in plan:
            result = spawn(spec)
            results.append(result)
            print(json.dumps({k: v for k, v in result.items() if k != "stages"}), flush=True)
    table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
