"""Shared by the benchmark scripts: run a plan through `lsgtool profile`'s engine and print the ratios."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from lsgtool.profiling.engine import Plan, Point, run  # noqa: E402


def measure(plan: Plan, label: str | None = None) -> list[Point]:
    """Every point of the plan, each in its own process (the engine's rules), printed as a JSON line when done;
    ``label`` renames the variant (e.g. a whole model's ``model`` variant)."""

    def show(point: Point) -> None:
        point.variant = label or point.variant
        print(json.dumps(asdict(point)), flush=True)

    return run(plan, on_point=show)


def ratio_table(points: list[Point], reference: str, label: str | None = None) -> None:
    """A table of every point with how much faster, and how much less memory, ``reference`` is at that length."""
    label = label or reference
    print(f"\n{'length':>7} {'variant':>16} {'time s':>9} {'tokens/s':>9} {'peak MB':>9} "
          f"{label + ' faster by':>20} {label + ' memory / theirs':>24}")
    for p in points:
        if p.error:
            print(f"{p.length:>7} {p.variant:>16} {p.error}")
            continue
        ref = next((r for r in points if r.variant == reference and r.length == p.length and not r.error), None)
        speed = f"{p.time_s / ref.time_s:.2f}x" if ref else "-"
        memory = f"{ref.peak_mb / p.peak_mb:.2f}" if ref and p.peak_mb > 0 else "-"
        print(f"{p.length:>7} {p.variant:>16} {p.time_s:>9.3f} {p.tokens_per_s:>9.0f} {p.peak_mb:>9.0f} "
              f"{speed:>20} {memory:>24}")


def dump(points: list[Point], path: str | None) -> None:
    if path:
        with open(path, "w") as handle:
            json.dump([asdict(p) for p in points], handle, indent=2)
    sys.stdout.flush()


def best(step, repeats: int = 3) -> float:
    """Seconds of the fastest of ``repeats`` calls of ``step``, after one untimed call (warm-up)."""
    step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times)


def matmul_gflops(width: int, wide: int, chunk: int = 2048) -> float:
    """Matmul GFLOP/s now, at an encoder's shapes: a chunk of tokens through width x width and width x wide."""
    import torch

    x, square, widening = torch.randn(chunk, width), torch.randn(width, width), torch.randn(width, wide)
    return 2 * chunk * (width * width + width * wide) / best(lambda: (x @ square, x @ widening), 5) / 1e9


def small_locost(folder, d_state: int = 64):
    """A small LOCOST (d_model 256, 4 + 4 layers) with random weights and the packaged all-MiniLM-L6-v2's
    bert-base-uncased WordPiece, saved in ``folder`` for `lsgtool finetune`: what the training benchmarks start
    from (no pretrained summariser installs offline). Returns the number of parameters."""
    import torch

    from lsgtool.core.load import load_tokenizer
    from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration

    tokenizer = load_tokenizer("minilm")
    torch.manual_seed(0)
    config = LocostConfig(vocab_size=len(tokenizer), d_model=256, d_kv=64, d_ff=1024, num_layers=4, num_decoder_layers=4,
                          num_heads=4, d_state=d_state, pad_token_id=tokenizer.pad_token_id,
                          eos_token_id=tokenizer.sep_token_id, decoder_start_token_id=tokenizer.pad_token_id,
                          dropout_rate=0.0)
    model = LocostForConditionalGeneration(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())
