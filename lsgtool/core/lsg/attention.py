"""LSG attention, functional (LSG paper §3, §5): local + sparse + global block attention in O(n).

Legend: B batch, H heads, L length (global tokens included), D head dim, G global tokens, S block size,
n non-global length padded to a multiple of S, r = n / f reduced (sparse) tokens, K keys per query block.

Each query block i attends to: the G global tokens, ``sparse_block_size`` reduced tokens on each side just
outside its local window, and the local blocks i-1, i, i+1 (causal: globals, left sparse, blocks i-1 and i
with a triangular mask). Keys of every block are overlapping window views of the (padded) tokens and reduced tokens, copied
once per chunk of blocks into a reused buffer (no n×n tensor is ever built), so peak memory stays flat in
the sequence length.
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


def _windows(t: Tensor, width: int, step: int, left: int, right: int, count: int) -> Tensor:
    """Overlapping windows along dim 2, as a view of the padded input: (B H N [D]) -> (B H count width [D])."""
    t = F.pad(t, [0, 0] * (t.dim() - 3) + [left, right])
    return t.unfold(2, width, step)[:, :, :count].movedim(-1, 3)


def _key_windows(framed: Tensor, reduced: Tensor | None, S: int, sparse_block: int, f: int, is_causal: bool) -> list[Tensor]:
    """Per query block: left reduced, right reduced (bidirectional) and local keys, as window views.

    ``framed`` holds the n tokens with S zero (or False) positions on each side, so local windows are
    plain views of it.
    Block i takes reduced tokens [(i-1)s - sb, (i-1)s) and [(i+2)s, (i+2)s + sb) with s = S/f, then tokens
    [(i-1)S, (i+2)S) (causal: [(i-1)S, (i+1)S)); out-of-range positions come from zero (or False) padding.
    """
    nb = framed.shape[2] // S - 2
    parts = []
    if reduced is not None:
        s, sb = S // f, sparse_block
        parts.append(_windows(reduced, sb, s, sb + s, 0, nb))
        if not is_causal:
            parts.append(_windows(reduced[:, :, 2 * s :], sb, s, 0, sb + s, nb))
    parts.append(framed.unfold(2, (2 if is_causal else 3) * S, S)[:, :, :nb].movedim(-1, 3))
    return parts


@lru_cache(maxsize=16)
def _causal_block_pattern(S: int, K: int) -> Tensor:
    """(S, K) bool: the last 2S keys are blocks i-1 and i; query t of block i sees local key u iff u <= S + t."""
    allowed = torch.ones(S, K, dtype=torch.bool)
    u = torch.arange(2 * S)
    allowed[:, K - 2 * S :] = u[None, :] <= S + torch.arange(S)[:, None]
    return allowed


def _select(q, k, v, keep, first_query, config: LSGConfig, scale) -> SparseTokens | None:
    selector = config.selector
    if selector is None:
        return None
    generator = None if config.lsh_seed is None else torch.Generator().manual_seed(config.lsh_seed)
    return selector(SparseInputs(q, k, v, keep, first_query, config, scale, generator))


def _cat(parts: list[Tensor], buffer: Tensor | None) -> Tensor:
    """Concatenate along the key axis, into a reused buffer when gradients are not needed."""
    if buffer is None:
        return torch.cat(parts, dim=3)
    shape = (*parts[-1].shape[:3], sum(p.shape[3] for p in parts), *parts[-1].shape[4:])
    return torch.cat(parts, dim=3, out=buffer[: math.prod(shape)].view(shape))


def _blocked_attention(q, k, v, keep, sparse, kg, vg, keep_g, config, is_causal, dropout_p, scale) -> Tensor:
    """Attention of the n non-global queries, block by block, in chunks of blocks.

    ``k``, ``v`` (B H n+2S D) and ``keep`` (B n+2S) are framed: S padding positions on each side.
    """
    B, H, n, D = q.shape
    S, G, nb = config.block_size, kg.shape[2], n // config.block_size
    args = (S, config.sparse_block_size, config.sparsity_factor, is_causal)
    heads = 1 if sparse is None or sparse.mask.dim() < 3 else sparse.mask.shape[1]
    keys = _key_windows(k, None if sparse is None else sparse.key, *args)
    values = _key_windows(v, None if sparse is None else sparse.value, *args)
    sparse_mask = None if sparse is None else sparse.mask.expand(B, heads, -1) if sparse.mask.dim() == 3 else sparse.mask[:, None]
    masks = _key_windows(keep[:, None].expand(B, heads, -1), sparse_mask, *args)
    K = G + sum(part.shape[3] for part in keys)
    causal = _causal_block_pattern(S, K).to(q.device) if is_causal else None
    # per block: gathered keys and values, plus (causal) a query-by-key mask per mask head
    per_block = B * K * (2 * H * D + (heads * S if is_causal else 0)) * q.element_size()
    chunk = max(1, min(nb, CHUNK_BYTES // per_block))
    reuse = not (torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v, kg, vg)))
    k_buf, v_buf = (q.new_empty(B * H * chunk * K * D) for _ in range(2)) if reuse else (None, None)
    out = q.new_empty(B, H, n, D) if reuse else None
    outputs = []
    for start in range(0, nb, chunk):
        c = min(chunk, nb - start)
        blocks = slice(start, start + c)
        # blocks become the batch and heads stay heads, so a mask shared by all heads broadcasts
        kc = _cat([kg[:, None].expand(B, c, H, G, D)] + [w[:, :, blocks].transpose(1, 2) for w in keys], k_buf)
        vc = _cat([vg[:, None].expand(B, c, H, G, D)] + [w[:, :, blocks].transpose(1, 2) for w in values], v_buf)
        allowed = torch.cat([keep_g[:, None, None].expand(B, c, heads, G)] + [w[:, :, blocks].transpose(1, 2) for w in masks], dim=3)
        allowed = allowed.unsqueeze(3) if causal is None else allowed.unsqueeze(3) & causal  # (B c h 1|S K)
        mask = _additive(allowed, q.dtype).reshape(B * c, heads, -1, K)
        qc = q[:, :, start * S : (start + c) * S].reshape(B, H, c, S, D).transpose(1, 2).reshape(B * c, H, S, D)
        o = F.scaled_dot_product_attention(qc, kc.view(B * c, H, K, D), vc.view(B * c, H, K, D), mask, dropout_p,
                                           scale=scale)
        o = o.reshape(B, c, H, S, D).transpose(1, 2).reshape(B, H, c * S, D)
        if out is not None:
            out[:, :, start * S : (start + c) * S] = o
        else:
            outputs.append(o)
    return out if out is not None else torch.cat(outputs, dim=2)


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
    q = F.pad(query[:, :, G:], (0, 0, 0, pad)) if pad else query[:, :, G:]
    # keys, values and mask framed by S padding positions on each side: local windows become views
    k, v = (F.pad(t[:, :, G:], (0, 0, S, S + pad)) for t in (key, value))
    keep_framed = F.pad(keep[:, G:], (S, S + pad), value=False)
    inner = slice(S, S + n + pad)
    sparse = _select(q, k[:, :, inner], v[:, :, inner], keep_framed[:, inner], query[:, :, :1], config, scale)
    local = _blocked_attention(
        q, k, v, keep_framed, sparse, key[:, :, :G], value[:, :, :G], keep[:, :G], config, is_causal, dropout_p, scale
    )
    if G == 0:
        return local[:, :, :n]
    glob = _global_attention(query[:, :, :G], key, value, keep, G, is_causal, dropout_p, scale)
    return torch.cat([glob, local[:, :, :n]], dim=2)
