"""How close a converted encoder runs to its matmul limit (issue 23, item 3).

A bert-base-sized BERT (12 layers, hidden 768, 12 heads, feed-forward 3072; random weights: time does not depend
on them) converted to LSG (block 128, sparsity factor 4, ``norm``, 1 global token) encodes one input of
--length tokens. Measured in the same run, alternating, best of --repeats:

- the whole forward;
- its six dense projections per layer alone (Q, K, V, attention output, feed-forward in and out: the same
  ``nn.Linear`` modules on inputs of the same shapes): the encoder's floor;
- one LSG attention layer (``lsg_attention`` on 12 x 64 heads) against its own arithmetic: the products of its
  queries with the keys they see (globals, 2 x sparse block reduced tokens, 3 local blocks) and of the weights
  with the values, run as one batched matmul of those shapes;
- a ``torch.profiler`` breakdown of one forward by operator (what is left above the floor).

    python benchmarks/lsg_limit.py                    # 16K tokens
    python benchmarks/lsg_limit.py --length 4096
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from _harness import best  # noqa: E402


def converted(length: int):
    from transformers import BertConfig, BertModel

    from lsgtool.core.convert import convert

    torch.manual_seed(0)
    model = BertModel(BertConfig(max_position_embeddings=512))
    model, _ = convert(model, max_length=length, block_size=128, sparsity_factor=4, sparsity_type="norm",
                       num_global_tokens=1, tokenizer=False)
    return model.eval()


def dense_projections(model, length: int):
    """Every layer's six projections on inputs of the shapes the forward gives them."""
    hidden = torch.randn(1, length, model.config.hidden_size)
    wide = torch.randn(1, length, model.config.intermediate_size)

    def run():
        for layer in model.encoder.layer:
            attention = layer.attention
            for linear in (attention.self.query, attention.self.key, attention.self.value, attention.output.dense,
                           layer.intermediate.dense):
                linear(hidden)
            layer.output.dense(wide)
    return run


def attention_and_arithmetic(model, length: int):
    from lsgtool.core.lsg.attention import lsg_attention

    config = model.config
    lsg = model.base_model.lsg_config
    H, D = config.num_attention_heads, config.hidden_size // config.num_attention_heads
    L = length + lsg.num_global_tokens
    q, k, v = (torch.randn(1, H, L, D) for _ in range(3))
    keys = lsg.num_global_tokens + 2 * lsg.sparse_block_size + 3 * lsg.block_size
    blocks = length // lsg.block_size
    qb, kb, vb = torch.randn(blocks * H, lsg.block_size, D), torch.randn(blocks * H, D, keys), torch.randn(blocks * H, keys, D)
    flop = 2 * 2 * blocks * H * lsg.block_size * keys * D
    return (lambda: lsg_attention(q, k, v, config=lsg)), (lambda: torch.bmm(torch.bmm(qb, kb), vb)), flop


def breakdown(model, ids, top: int = 10) -> list[dict]:
    from torch.profiler import profile

    with profile() as prof:
        model(input_ids=ids)
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    return [{"op": e.key, "share": round(e.self_cpu_time_total / total, 3), "calls": e.count} for e in rows[:top]]


@torch.no_grad()
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=16384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    model = converted(args.length)
    ids = torch.randint(1000, 20000, (1, args.length))
    forward = best(lambda: model(input_ids=ids), args.repeats)
    floor = best(dense_projections(model, args.length), args.repeats)
    attention, arithmetic, flop = attention_and_arithmetic(model, args.length)
    layer = best(attention, args.repeats)
    limit = best(arithmetic, args.repeats)

    figures = {"length": args.length, "threads": torch.get_num_threads(), "forward_s": round(forward, 2),
               "dense_projections_s": round(floor, 2), "forward_vs_projections": round(forward / floor, 2),
               "attention_layer_s": round(layer, 3), "attention_arithmetic_s": round(limit, 3),
               "attention_gflop": round(flop / 1e9, 1), "attention_vs_arithmetic": round(layer / limit, 2),

               "breakdown": breakdown(model, ids)}
    print(f"{args.length:,} tokens, {figures['threads']} threads: forward {forward:.2f} s, its six dense projections "
          f"per layer {floor:.2f} s -> {forward / floor:.2f}x (target 1.3x)")
    print(f"one LSG attention layer {layer * 1000:.0f} ms, its arithmetic ({flop / 1e9:.1f} GFLOP as one batched "
          f"matmul) {limit * 1000:.0f} ms -> {layer / limit:.2f}x (target 2x)")
    both = floor + len(model.encoder.layer) * limit
    figures["forward_vs_projections_and_attention_arithmetic"] = round(forward / both, 2)
    print(f"projections and every layer's attention arithmetic together {both:.2f} s -> the forward is {forward / both:.2f}x")
    for row in figures["breakdown"]:
        print(f"  {row['share']:6.1%}  {row['op']} ({row['calls']} calls)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
