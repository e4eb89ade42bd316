"""Decoding over book-length encoder outputs: cross-attention without the key/value cache.

A T5 decoder caches, per layer, the keys and values of every encoder position: 2·layers·L·E values, 74 GB
for LOCOST-base on a 1M-token book in float32 (the encoder output itself is 3 GB). Without that cache, keys
and values are never formed: per head h, q_h·(X W_k,h)ᵀ = (q_h W_k,h) Xᵀ and p_h (X W_v,h) = (p_h X) W_v,hᵀ, so a
decoding step reads the encoder output X directly (2·H·L·E multiply-adds per layer instead of 2·L·E, no
memory beyond the scores), with the heads and beams folded into the rows of two matmuls per layer so that X is
read twice per layer, as a cache would be; each product runs on the library path that reads X fastest on the CPU
at hand (``products``; on a CPU that may be a copy of X packed once for the library).
``LocostForConditionalGeneration.set_cross_attention_cache(False)`` switches to it; the encoder output is then
shared by all beams of a single input instead of being copied per beam.
Legend: B batch (or beams), H heads, Q query positions, L encoder positions, E model width, D head width.
"""

from __future__ import annotations

import torch
from torch import Tensor
from transformers.models.t5.modeling_t5 import T5Attention

from lsgtool.core.ssm import products

# Attention weights below √(smallest normal float32) are zeroed on CPUs before the read: over a book most of the
# softmax is far below 1e-38, and x86 multiplies such subnormal floats ~4x slower (one read at 64K tokens with
# peaked scores: 267 -> 74 ms); all of them together are < 1e-13 of the mass.
NEGLIGIBLE_WEIGHT = torch.finfo(torch.float32).tiny ** 0.5


def faster_without_cache(device: str, length: int) -> bool:
    """Whether decoding over an encoder output of ``length`` tokens on ``device`` is faster reading it at each step
    than through the key/value cache: where the step's products run on the path measured fastest here
    (``products.tuned``: a CPU with oneDNN, from 32K tokens). Measured, LOCOST-base, 32 greedy tokens on a 2-core
    AMD EPYC (generate with the cache, its building included, against without): float32 16K 7.0 / 7.5 s (below
    the tuning length, even), 32K 11.2 / 5.9 s, 78K 31.6 / 11.2 s; bfloat16 16K 7.8 / 3.8 s, 32K 13.7 / 3.8 s,
    78K 34.8 / 7.2 s. The cache is also 2·layers times the encoder output in memory."""
    return products.tuned(device, length)


class LocostCrossAttention(T5Attention):
    """T5 cross-attention that can read the encoder output directly instead of caching its keys and values."""

    cache_keys_values = True

    def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None, **kwargs):
        # T5's callers pass everything by name, and the cache's own name changed (past_key_values -> cache in
        # transformers 5.x): pass it on by name, whatever it is called (contract in lsgtool.core.compat)
        if key_value_states is None or self.cache_keys_values:
            return super().forward(hidden_states, mask=mask, key_value_states=key_value_states,
                                   position_bias=position_bias, **kwargs)
        out, weights = self.without_cache(hidden_states, key_value_states, mask, with_weights=True)
        return out, None, weights

    def without_cache(self, hidden: Tensor, states: Tensor, mask: Tensor | None, with_weights: bool = False):
        """Every head (and every beam sharing ``states``) folded into the rows of one matmul for the scores and
        one for the read: X is read twice per layer, not twice per head and beam (a broadcast 4-D matmul runs
        one product per head against the same X). ``with_weights``: also give the attention weights (B H Q L), formed
        here anyway, as T5's own attention gives them (where summaries look up their sources)."""
        B, Q, E = hidden.shape
        H, D = self.n_heads, self.key_value_proj_dim
        S, L = states.shape[0], states.shape[1]  # S: encoder outputs (1 shared by all beams, or one per row)
        G = B // S  # rows of the decoder reading each encoder output
        q = self.q(hidden).view(B, Q, H, D)  # (B Q H D)
        w_k = self.k.weight.view(H, D, -1)  # (H D E)
        w_v = self.v.weight.view(H, D, -1)
        qk = torch.einsum("bqhd,hde->bhqe", q, w_k).reshape(S, G * H * Q, E)  # (S G·H·Q E)
        scores = products.scores(states, qk).reshape(B, H, Q, L)  # T5 does not scale
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min) if mask.dtype == torch.bool else scores + mask
        weights = scores.float().softmax(-1)
        if weights.device.type == "cpu":  # in place only where no backward needs the softmax's output
            fill = weights.masked_fill if torch.is_grad_enabled() else weights.masked_fill_
            weights = fill(weights < NEGLIGIBLE_WEIGHT, 0)
        attention = weights.to(states.dtype)
        read = products.read(attention.view(S, G * H * Q, L), states).view(B, H, Q, E)  # (B H Q E)
        out = self.o(torch.einsum("bhqe,hde->bqhd", read, w_v).reshape(B, Q, H * D))  # (B Q H·D)
        return (out, attention) if with_weights else out

    def without_cache_per_head(self, hidden: Tensor, states: Tensor, mask: Tensor | None) -> Tensor:
        """The same, one product per head against X (broadcast): the readable reference the tests hold the
        folded path to."""
        B, Q, E = hidden.shape
        H, D = self.n_heads, self.key_value_proj_dim
        q = self.q(hidden).view(B, Q, H, D)  # (B Q H D)
        w_k = self.k.weight.view(H, D, -1)  # (H D E)
        w_v = self.v.weight.view(H, D, -1)
        qk = torch.einsum("bqhd,hde->bhqe", q, w_k)  # (B H Q E)
        scores = qk @ states.transpose(1, 2).unsqueeze(1)  # (B H Q L)
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min) if mask.dtype == torch.bool else scores + mask
        weights = scores.float().softmax(-1).to(states.dtype)
        read = weights @ states.unsqueeze(1)  # (B H Q E)
        out = torch.einsum("bhqe,hde->bqhd", read, w_v).reshape(B, Q, H * D)  # (B Q H·D)
        return self.o(out)


def install(decoder) -> list[LocostCrossAttention]:
    """Make every cross-attention of a T5 decoder stack a ``LocostCrossAttention``, in place.

    The subclass adds methods and a switch, no state, so the existing modules change class: their parameters,
    names and initialisation stay exactly those of T5 (a new module would miss the stack's initialisation).
    """
    found = []
    for block in decoder.block:
        module = block.layer[1].EncDecAttention
        module.__class__ = LocostCrossAttention
        found.append(module)
    return found
