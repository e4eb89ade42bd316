"""LOCOST-base on a GPU in bfloat16 (issue 32): the encoder at long inputs, and one greedy decoding step with
and without the cross-attention cache, each beside float32.

Random weights (time does not depend on them), batch 1, the sizes of `locost-base` (12+12 layers, d_model 768,
d_ff 2048, state 512). The encoder runs as a summary's does (chunked above 16K tokens); a step is the mean of
``--steps`` greedy steps after a first, from the encoder output already formed; without the cache each step
reads X twice per decoder layer (``lsgtool.core.ssm.decoding``), with it T5's cached keys and values are
read (2·layers·L·E values: 38.7 GB in bfloat16 at 2^20 tokens). Peak memory: torch.cuda.max_memory_allocated
above the model's weights.

    python benchmarks/locost_gpu.py                              # 262K and 1M, bfloat16 and float32
    python benchmarks/locost_gpu.py --lengths 4096 --device cpu  # a smoke run of the script itself
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from lsgtool import LocostConfig, LocostForConditionalGeneration


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _timed(step, device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    step()
    _sync(device)
    return time.perf_counter() - start


def _peak_mb(device: str, base: int) -> float | None:
    return round((torch.cuda.max_memory_allocated() - base) / 2**20) if device == "cuda" else None


def _cache_name(model) -> str:
    """The decoding cache's keyword (past_key_values, cache in later transformers 5.x)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


@torch.no_grad()
def measure(length: int, dtype: torch.dtype, device: str, steps: int) -> dict:
    torch.manual_seed(0)
    config = LocostConfig(vocab_size=32128, d_model=768, d_kv=64, d_ff=2048, num_layers=12, num_decoder_layers=12,
                          num_heads=12, d_state=512, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    model = LocostForConditionalGeneration(config).eval().to(device=device, dtype=dtype)
    ids = torch.randint(2, 32128, (1, length), device=device)
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if device == "cuda" else 0
    row = {"length": length, "dtype": str(dtype).removeprefix("torch."), "device": device}
    encode = lambda: model.get_encoder()(input_ids=ids).last_hidden_state  # noqa: E731
    encode()  # warm-up: kernels and the allocator
    row["encode_s"] = round(_timed(encode, device), 3)
    row["encode_peak_mb"] = _peak_mb(device, base)
    states = encode()
    for cached in (False, True):
        model.set_cross_attention_cache(cached)
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        try:
            out = model(encoder_outputs=(states,), decoder_input_ids=torch.zeros(1, 1, dtype=torch.long, device=device),
                        use_cache=True)
            name = _cache_name(model)
            past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)

            def step():
                nonlocal past, token
                out = model(encoder_outputs=(states,), decoder_input_ids=token, use_cache=True, **{name: past})
                past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)

            step()
            row[f"step_{'cached' if cached else 'uncached'}_ms"] = round(
                1000 * sum(_timed(step, device) for _ in range(steps)) / steps, 2)
            row[f"step_{'cached' if cached else 'uncached'}_peak_mb"] = _peak_mb(device, base)
        except torch.OutOfMemoryError:
            row[f"step_{'cached' if cached else 'uncached'}_ms"] = "out of memory"
        past = None
        if device == "cuda":
            torch.cuda.empty_cache()
    x_bytes = length * 768 * states.element_size()
    row["step_read_floor_ms"] = None  # filled by main from the measured bandwidth
    row["x_gb"] = round(x_bytes / 1e9, 2)
    del model, states
    return row


def bandwidth_gbs(device: str) -> float:
    """GB/s of a sum over 4 GiB (1 GiB on the CPU)."""
    big = torch.ones(2**30 if device == "cuda" else 2**28, device=device)
    big.sum()
    return round(big.numel() * 4 / min(_timed(lambda: big.sum(), device) for _ in range(5)) / 1e9, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="262144,1048576")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    gbs = bandwidth_gbs(args.device)
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    print(f"{name}, torch {torch.__version__}; a sum reads {gbs} GB/s", flush=True)
    rows = []
    for length in map(int, args.lengths.split(",")):
        for dtype in args.dtypes.split(","):
            row = measure(length, getattr(torch, dtype), args.device, args.steps)
            row["step_read_floor_ms"] = round(1000 * 2 * 12 * row["x_gb"] / gbs, 2)  # X read twice per layer
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"device": name, "torch": torch.__version__, "bandwidth_gbs": gbs, "rows": rows}, handle, indent=2)


if __name__ == "__main__":
    main()
