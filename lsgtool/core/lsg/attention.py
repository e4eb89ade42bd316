"""LSG attention, functional (LSG paper §3, §5): local + sparse + global block attention in O(n).

Legend: B batch, H heads, L length (global tokens included), D head dim, G global tokens, S block size,
n non-global length padded to a multiple of S, r = n / f reduced (sparse) tokens, K keys per query block.

Each query block i attends to: the G global tokens, ``sparse_block_size`` reduced tokens on each side just
outside its local window, and the local blocks i-1, i, i+1 (causal: globals, left sparse, blocks i-1 and i
with a triangular mask). Keys of every block are gathered through one cached index map from
[tokens | reduced tokens | global tokens | a zero slot], so no n×n tensor is ever built; blocks are
processed in chunks so peak memory stays flat in the sequence length.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import Tensor

from lsgtool.core.lsg.config import LSGConfig
from lsgtool.core.lsg.selectors import SparseInputs, SparseTokens

CHUNK_BYTES = 64 * 2**20


def _additive(keep: Tensor, dtype: torch.dtype) -> Tensor:
    """Boolean keep-mask to an additive mask (finite minimum, so fully masked rows never give NaN)."""
    zero = torch.zeros((), dtype=dtype, device=keep.device)
    return torch.where(keep, zero, torch.finfo(dtype).min)


def _full_attention(q, k, v, keep, is_causal, dropout_p, scale) -> Tensor:
    B, H, L, D = q.shape
    allowed = keep[:, None, None, :]  # (B 1 1 L)
    if is_causal:
        allowed = allowed & torch.ones(L, L, dtype=torch.bool, device=q.device).tril()
    return F.scaled_dot_product_attention(q, k, v, _additive(allowed, q.dtype), dropout_p, scale=scale)


def _global_attention(q, k, v, keep, G, is_causal, dropout_p, scale) -> Tensor:
    """Global queries see every key (causal: only the global tokens before them)."""
    if is_causal:
        return _full_attention(q, k[:, :, :G], v[:, :, :G], keep[:, :G], True, dropout_p, scale)
    return F.scaled_dot_product_attention(q, k, v, _additive(keep[:, None, None, :], q.dtype), dropout_p, scale=scale)


@lru_cache(maxsize=64)
def block_index_map(n: int, S: int, r: int, sparse_block: int, f: int, G: int, is_causal: bool) -> Tensor:
    """Positions in [tokens (n) | reduced (r) | globals (G) | zero slot] of every block's keys: (n/S, K)."""
    zero = n + r + G
    blocks = torch.arange(n // S)[:, None]
    parts = [(n + r + torch.arange(G)).expand(n // S, G)]
    if r:
        step = S // f
        sides = [(blocks - 1) * step - sparse_block] + ([] if is_causal else [(blocks + 2) * step])
        for start in sides:
            j = start + torch.arange(sparse_block)
            parts.append(torch.where((j >= 0) & (j < r), n + j, zero))
    p = (blocks - 1) * S + torch.arange((2 if is_causal else 3) * S)
    parts.append(torch.where((p >= 0) & (p < n), p, zero))
    return torch.cat(parts, dim=1)


@lru_cache(maxsize=16)
def _causal_block_pattern(S: int, K: int) -> Tensor:
    """(S, K) bool: the last 2S keys are blocks i-1 and i; query t of block i sees local key u iff u <= S + t."""
    allowed = torch.ones(S, K, dtype=torch.bool)
    u = torch.arange(2 * S)
    allowed[:, K - 2 * S :] = u[None, :] <= S + torch.arange(S)[:, None]
    return allowed


def _select(q, k, v, keep, first_query, config: LSGConfig, scale) -> SparseTokens | None:
    if not config.has_sparse:
        return None
    from lsgtool.plugins.manager import get_registry

    selector = get_registry("sparse_selectors").require(config.sparsity_type)
    generator = None if config.lsh_seed is None else torch.Generator().manual_seed(config.lsh_seed)
    return selector(SparseInputs(q, k, v, keep, first_query, config, scale, generator))


def _blocked_attention(q, k, v, keep, sparse, kg, vg, keep_g, config, is_causal, dropout_p, scale) -> Tensor:
    """Attention of the n non-global queries, block by block, in chunks of blocks."""
    B, H, n, D = q.shape
    S, G = config.block_size, kg.shape[2]
    pad = q.new_zeros(B, H, 1, D)
    if sparse is None:
        r, parts_k, parts_v, parts_m = 0, [k], [v], [keep[:, None]]
    else:
        r = sparse.key.shape[2]
        parts_k, parts_v = [k, sparse.key], [v, sparse.value]
        sparse_mask = sparse.mask.expand(B, -1, r) if sparse.mask.dim() == 3 else sparse.mask[:, None].expand(B, 1, r)
        heads = sparse_mask.shape[1]
        parts_m = [keep[:, None].expand(B, heads, n), sparse_mask]
    k_ext = torch.cat(parts_k + [kg, pad], dim=2)  # (B H n+r+G+1 D)
    v_ext = torch.cat(parts_v + [vg, pad], dim=2)
    heads = parts_m[0].shape[1]
    keep_ext = torch.cat(parts_m + [keep_g[:, None].expand(B, heads, G), keep.new_zeros(B, heads, 1)], dim=2)
    index = block_index_map(n, S, r, config.sparse_block_size, config.sparsity_factor, G, is_causal).to(q.device)
    nb, K = index.shape
    causal = _causal_block_pattern(S, K).to(q.device) if is_causal else None
    per_block = B * H * K * D * q.element_size() * 2
    chunk = max(1, min(nb, CHUNK_BYTES // per_block))
    outputs = []
    for start in range(0, nb, chunk):
        idx = index[start : start + chunk]
        c = idx.shape[0]
        flat = idx.reshape(-1)
        kc = k_ext.index_select(2, flat).view(B, H * c, K, D)
        vc = v_ext.index_select(2, flat).view(B, H * c, K, D)
        allowed = keep_ext.index_select(2, flat).view(B, heads, c, 1, K)
        if causal is not None:
            allowed = allowed & causal
        mask = _additive(allowed, q.dtype).expand(B, H, c, -1, K).reshape(B, H * c, -1, K)
        qc = q[:, :, start * S : (start + c) * S].reshape(B, H * c, S, D)
        out = F.scaled_dot_product_attention(qc, kc, vc, mask, dropout_p, scale=scale)
        outputs.append(out.view(B, H, c * S, D))
    return torch.cat(outputs, dim=2)


def lsg_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None = None,
    *,
    config: LSGConfig,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> Tensor:
    """LSG attention of (B, H, L, D) inputs whose first ``config.num_global_tokens`` positions are global.

    ``attention_mask`` is (B, L), 1/True = keep. Returns (B, H, L, D). Sequences whose non-global part fits
    in two blocks use full attention (the local window covers everything).
    """
    B, H, L, D = query.shape
    G, S = config.num_global_tokens, config.block_size
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    keep = torch.ones(B, L, dtype=torch.bool, device=query.device) if attention_mask is None else attention_mask.bool()
    if config.mask_first_token and L > G:
        keep = keep.clone()
        keep[:, G] = False
    n = L - G
    if n <= 2 * S:
        return _full_attention(query, key, value, keep, is_causal, dropout_p, scale)
    pad = -n % S
    q, k, v = (F.pad(t[:, :, G:], (0, 0, 0, pad)) for t in (query, key, value))
    keep_local = F.pad(keep[:, G:], (0, pad), value=False)
    sparse = _select(q, k, v, keep_local, query[:, :, :1], config, scale)
    local = _blocked_attention(
        q, k, v, keep_local, sparse, key[:, :, :G], value[:, :, :G], keep[:, :G], config, is_causal, dropout_p, scale
    )
    if G == 0:
        return local[:, :, :n]
    glob = _global_attention(query[:, :, :G], key, value, keep, G, is_causal, dropout_p, scale)
    return torch.cat([glob, local[:, :, :n]], dim=2)
