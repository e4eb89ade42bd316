"""Built-in LSG sparse selectors (LSG paper §3.2 and the authors' ``bos_pooling``).

Each selector maps the padded non-global sequence (n tokens, a multiple of the block size S) to
n // f reduced tokens per head, laid out block by block (S // f reduced tokens per block).
Legend: B batch, H heads, n padded length, D head dim, f sparsity factor, S block size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor


@dataclass
class SparseInputs:
    """What every selector, built-in or third-party, receives (see the hookspec for the contract)."""

    query: Tensor
    key: Tensor
    value: Tensor
    mask: Tensor
    first_query: Tensor
    config: Any
    scale: float
    generator: torch.Generator | None = None


@dataclass
class SparseTokens:
    """Reduced keys/values (B, H, n // f, D) and their mask broadcastable to (B, H, n // f), True = usable."""

    key: Tensor
    value: Tensor
    mask: Tensor


def none_selector(x: SparseInputs) -> None:
    """No sparse tokens: local and global attention only."""
    return None


def gather_tokens(x: SparseInputs, idx: Tensor) -> SparseTokens:
    """Reduced tokens picked by position: ``idx`` is (B or 1, H, r) indices into the padded sequence.

    The building block of index-based selectors (stride, block_stride, norm, plugins' own).
    """
    B, H, n, D = x.key.shape
    idx = idx.expand(B, H, -1)
    gather_idx = idx.unsqueeze(-1).expand(-1, -1, -1, D)
    mask = x.mask.unsqueeze(1).expand(B, H, n).gather(2, idx)
    return SparseTokens(x.key.gather(2, gather_idx), x.value.gather(2, gather_idx), mask)


def stride_selector(x: SparseInputs) -> SparseTokens:
    """Head-wise strided: head h takes tokens h mod f, h mod f + f, ... (Hepos-style)."""
    B, H, n, D = x.key.shape
    f = x.config.sparsity_factor
    idx = torch.arange(0, n, f, device=x.key.device) + (torch.arange(H, device=x.key.device) % f)[:, None]
    return gather_tokens(x, idx.unsqueeze(0))


def block_stride_selector(x: SparseInputs) -> SparseTokens:
    """Head-wise block strided: in each block, head h takes S/f consecutive tokens starting at h·S/f mod S."""
    B, H, n, D = x.key.shape
    S, f = x.config.block_size, x.config.sparsity_factor
    device = x.key.device
    width = S // f
    offsets = (torch.arange(H, device=device)[:, None] * width + torch.arange(width, device=device)) % S
    starts = torch.arange(0, n, S, device=device)
    idx = (starts[None, :, None] + offsets[:, None, :]).reshape(H, -1)  # (H n/f)
    return gather_tokens(x, idx.unsqueeze(0))


def norm_selector(x: SparseInputs) -> SparseTokens:
    """Max norm: in each selection block, the S/f keys of highest norm, per head."""
    B, H, n, D = x.key.shape
    s = x.config.selection_block
    k = s // x.config.sparsity_factor
    with torch.no_grad():
        norms = x.key.detach().norm(dim=-1).masked_fill(~x.mask.unsqueeze(1), -1.0)
        idx = norms.view(B, H, n // s, s).topk(k, dim=-1, sorted=False).indices  # (B H n/s k)
        idx = (idx + torch.arange(0, n, s, device=x.key.device)[:, None]).reshape(B, H, -1)
    return gather_tokens(x, idx)


def _group_mean(t: Tensor, weights: Tensor, f: int) -> Tensor:
    """Weighted sum over consecutive groups of f tokens: (B H n D), (B H n) -> (B H n/f D)."""
    B, H, n, D = t.shape
    return (t.view(B, H, n // f, f, D) * weights.view(*weights.shape[:2], n // f, f, 1)).sum(-2)


def pooling_selector(x: SparseInputs) -> SparseTokens:
    """Average pooling of f consecutive real tokens (window f, stride f)."""
    B, H, n, D = x.key.shape
    f = x.config.sparsity_factor
    real = x.mask.unsqueeze(1).to(x.key.dtype)  # (B 1 n)
    count = real.view(B, 1, n // f, f).sum(-1)
    weights = real / count.clamp(min=1).repeat_interleave(f, dim=-1)
    return SparseTokens(_group_mean(x.key, weights, f), _group_mean(x.value, weights, f), count > 0)


def bos_pooling_selector(x: SparseInputs) -> SparseTokens:
    """Pool f consecutive tokens weighted by the softmax of the first token's scores (the authors' variant).

    As the authors' code computes it: the scores are those of the first non-global query (BOS / [CLS]), and
    every reduced token stays visible, padding-only groups included (their test of the pooled additive mask
    against its minimum never holds once the mean overflows to -inf), such groups averaging their padding.
    With f = 1 the tokens are kept as they are, mask included.
    """
    B, H, n, D = x.key.shape
    f = x.config.sparsity_factor
    if f == 1:
        return SparseTokens(x.key, x.value, x.mask[:, None])
    scores = (x.query[:, :, :1] @ x.key.transpose(-1, -2)).squeeze(-2) * x.scale  # (B H n)
    scores = scores.masked_fill(~x.mask.unsqueeze(1), torch.finfo(scores.dtype).min)
    weights = scores.view(B, H, n // f, f).softmax(-1).view(B, H, n)
    visible = torch.ones(1, 1, n // f, dtype=torch.bool, device=x.key.device)
    return SparseTokens(_group_mean(x.key, weights, f), _group_mean(x.value, weights, f), visible)


def lsh_projections(
    heads: int, dim: int, sizes: list[int], generator: torch.Generator | None, dtype=torch.float32
) -> list[Tensor]:
    """Random rotations for each LSH round: (H, D, c // 2) for c clusters, drawn in order on the CPU."""
    return [torch.randn(heads, dim, c // 2, generator=generator, dtype=dtype) for c in sizes]


def lsh_rounds(config: Any) -> list[int]:
    """Cluster counts per round: ``lsh_num_pre_rounds`` rounds of S clusters, then S / f."""
    s = config.selection_block
    return [s] * config.lsh_num_pre_rounds + [s // config.sparsity_factor]


def lsh_buckets(keys: Tensor, rotation: Tensor, clusters: int) -> Tensor:
    """Angular LSH h(x) = argmax([xR; -xR]) per token: (B H m s D) -> (B H m s)."""
    if clusters < 2:
        return torch.zeros(keys.shape[:-1], dtype=torch.long, device=keys.device)
    projected = torch.einsum("bhmsd,hdc->bhmsc", F.normalize(keys, dim=-1), rotation)
    return torch.cat([projected, -projected], dim=-1).argmax(-1)


def lsh_selector(x: SparseInputs) -> SparseTokens:
    """LSH clustering: per selection block and head, hash keys into S/f clusters and average each cluster.

    As the authors' code: with f = 1 the tokens are kept as they are, and with f equal to
    ``sparse_block_size`` (one cluster per block) it pools as ``bos_pooling`` does.
    """
    B, H, n, D = x.key.shape
    if x.config.sparsity_factor == 1:
        return SparseTokens(x.key, x.value, x.mask[:, None])
    if x.config.sparsity_factor == x.config.sparse_block_size:
        return bos_pooling_selector(x)
    s = x.config.selection_block
    counts = x.mask.view(B, 1, n // s, s).to(x.key.dtype).expand(B, H, -1, -1)
    keys = x.key.view(B, H, n // s, s, D) * counts.unsqueeze(-1)
    values = x.value.view(B, H, n // s, s, D) * counts.unsqueeze(-1)
    sizes = lsh_rounds(x.config)
    for clusters, rotation in zip(sizes, lsh_projections(H, D, sizes, x.generator)):
        with torch.no_grad():
            bucket = lsh_buckets(keys.detach(), rotation.to(keys), clusters)  # (B H m s')
        shape = (B, H, n // s, clusters)
        index = bucket.unsqueeze(-1).expand(-1, -1, -1, -1, D)
        keys = keys.new_zeros(*shape, D).scatter_add(3, index, keys)
        values = values.new_zeros(*shape, D).scatter_add(3, index, values)
        counts = counts.new_zeros(shape).scatter_add(3, bucket, counts)
    mean = 1.0 / counts.clamp(min=1).unsqueeze(-1)
    r = n // x.config.sparsity_factor
    return SparseTokens((keys * mean).reshape(B, H, r, D), (values * mean).reshape(B, H, r, D), counts.reshape(B, H, r) > 0)


BUILTIN_SELECTORS = {
    "none": none_selector,
    "stride": stride_selector,
    "block_stride": block_stride_selector,
    "norm": norm_selector,
    "pooling": pooling_selector,
    "bos_pooling": bos_pooling_selector,
    "lsh": lsh_selector,
}
