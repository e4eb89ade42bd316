"""Readable O(L²) references for LSG attention and the built-in selectors, for tests and debugging.

The dense reference builds, from the paper's definitions, an explicit boolean matrix saying which keys
every query sees (tokens and reduced tokens alike) and runs a plain float64 softmax over it. The
selector references loop over blocks and heads. Neither shares code with the fast path.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lsgtool.core.lsg.selectors import SparseTokens, lsh_projections, lsh_rounds


def allowed_keys(n: int, r: int, G: int, config, is_causal: bool) -> Tensor:
    """(G+n, G+n+r) bool: may query row see key column? Columns: globals, tokens, reduced tokens."""
    S, f, sb = config.block_size, config.sparsity_factor, config.sparse_block_size
    L = G + n
    allowed = torch.zeros(L, L + r, dtype=torch.bool)
    for g in range(G):
        allowed[g, : g + 1 if is_causal else L] = True
    if n <= 2 * S:
        for p in range(n):
            allowed[G + p, : G + p + 1 if is_causal else L] = True
        return allowed
    step = S // f
    for p in range(n):
        i = p // S
        row = allowed[G + p]
        row[:G] = True
        last = p if is_causal else min(n, (i + 2) * S) - 1
        row[G + max(0, (i - 1) * S) : G + last + 1] = True
        if r:
            ranges = [((i - 1) * step - sb, (i - 1) * step)]
            if not is_causal:
                ranges.append(((i + 2) * step, (i + 2) * step + sb))
            for lo, hi in ranges:
                for j in range(max(0, lo), min(r, hi)):
                    row[L + j] = True
    return allowed


def dense_lsg_attention(query, key, value, attention_mask=None, *, config, is_causal=False, scale=None, sparse=None):
    """Softmax over the explicit key set of every query, in float64. ``sparse``: reduced tokens to use."""
    B, H, L, D = query.shape
    G = config.num_global_tokens
    n = L - G
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    keep = torch.ones(B, L, dtype=torch.bool) if attention_mask is None else attention_mask.bool().cpu()
    if config.mask_first_token and L > G:
        keep = keep.clone()
        keep[:, G] = False
    q, k, v = (t.detach().cpu().double() for t in (query, key, value))
    r = 0 if sparse is None or n <= 2 * config.block_size else sparse.key.shape[2]
    key_mask = keep[:, None, :].expand(B, H, L)
    if r:
        k = torch.cat([k, sparse.key.detach().cpu().double()], dim=2)
        v = torch.cat([v, sparse.value.detach().cpu().double()], dim=2)
        key_mask = torch.cat([key_mask, sparse.mask.cpu().expand(B, H, r)], dim=2)
    allowed = allowed_keys(n, r, G, config, is_causal)[None, None] & key_mask[:, :, None, :]
    scores = (q @ k.transpose(-1, -2) * scale).masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return weights @ v



def reference_selector(name: str, x) -> SparseTokens | None:
    """Loop-based version of a built-in selector, from the paper's wording."""
    return {
        "none": lambda x: None,
        "stride": _ref_stride,
        "block_stride": _ref_block_stride,
        "norm": _ref_norm,
        "pooling": _ref_pooling,
        "bos_pooling": _ref_bos_pooling,
        "lsh": _ref_lsh,
    }[name](x)


def _pick(x, choose) -> SparseTokens:
    """Index-based selectors: choose(b, h) -> list of original positions."""
    B, H, n, D = x.key.shape
    keys, values, masks = [], [], []
    for b in range(B):
        for h in range(H):
            idx = torch.tensor(choose(b, h))
            keys.append(x.key[b, h, idx])
            values.append(x.value[b, h, idx])
            masks.append(x.mask[b, idx])
    r = len(idx)
    return SparseTokens(
        torch.stack(keys).view(B, H, r, D), torch.stack(values).view(B, H, r, D), torch.stack(masks).view(B, H, r)
    )


def _ref_stride(x):
    n, f = x.key.shape[2], x.config.sparsity_factor
    return _pick(x, lambda b, h: [j * f + h % f for j in range(n // f)])


def _ref_block_stride(x):
    n, S, f = x.key.shape[2], x.config.block_size, x.config.sparsity_factor
    w = S // f
    return _pick(x, lambda b, h: [blk + (h * w + j) % S for blk in range(0, n, S) for j in range(w)])


def _ref_norm(x):
    n, s = x.key.shape[2], x.config.selection_block
    k = s // x.config.sparsity_factor

    def choose(b, h):
        chosen = []
        for start in range(0, n, s):
            block = [(float(x.key[b, h, p].norm()) if x.mask[b, p] else -1.0, p) for p in range(start, start + s)]
            chosen += sorted(p for _, p in sorted(block, reverse=True)[:k])
        return chosen

    return _pick(x, choose)


def _pool(x, weight_fn) -> SparseTokens:
    B, H, n, D = x.key.shape
    f = x.config.sparsity_factor
    keys = torch.zeros(B, H, n // f, D, dtype=x.key.dtype)
    values = torch.zeros_like(keys)
    mask = torch.zeros(B, H, n // f, dtype=torch.bool)
    for b in range(B):
        for h in range(H):
            for j in range(n // f):
                group = range(j * f, (j + 1) * f)
                w = weight_fn(b, h, group)
                if w is None:
                    continue
                keys[b, h, j] = sum(w_i * x.key[b, h, p] for w_i, p in zip(w, group))
                values[b, h, j] = sum(w_i * x.value[b, h, p] for w_i, p in zip(w, group))
                mask[b, h, j] = True
    return SparseTokens(keys, values, mask)


def _ref_pooling(x):
    def weights(b, h, group):
        real = [bool(x.mask[b, p]) for p in group]
        return None if not any(real) else [float(m) / sum(real) for m in real]

    return _pool(x, weights)


def _ref_bos_pooling(x):
    """Weights: softmax of the first (non-global) query's scores over the real tokens of the group, uniform
    over a group of padding only; every reduced token usable (the authors' code never masks them)."""
    if x.config.sparsity_factor == 1:
        return _pick(x, lambda b, h: list(range(x.key.shape[2])))

    def weights(b, h, group):
        if not any(bool(x.mask[b, p]) for p in group):
            return [1.0 / len(group)] * len(group)
        scores = torch.tensor(
            [float(x.query[b, h, 0] @ x.key[b, h, p]) * x.scale if x.mask[b, p] else -math.inf for p in group],
            dtype=torch.float64,
        )
        return scores.softmax(0).tolist()

    return _pool(x, weights)


def _ref_lsh(x):
    """Per block and head: hash every member by argmax([uR; -uR]) of its unit direction, sum, repeat, average.
    (f = 1: every token as it is; f = sparse_block_size: bos_pooling, as the authors' code.)"""
    if x.config.sparsity_factor == 1:
        return _pick(x, lambda b, h: list(range(x.key.shape[2])))
    if x.config.sparsity_factor == x.config.sparse_block_size:
        return _ref_bos_pooling(x)
    B, H, n, D = x.key.shape
    s, f = x.config.selection_block, x.config.sparsity_factor
    sizes = lsh_rounds(x.config)
    rotations = lsh_projections(H, D, sizes, x.generator)
    keys = torch.zeros(B, H, n // f, D, dtype=x.key.dtype)
    values = torch.zeros_like(keys)
    mask = torch.zeros(B, H, n // f, dtype=torch.bool)
    for b in range(B):
        for h in range(H):
            for blk in range(n // s):
                members = [(x.key[b, h, p], x.value[b, h, p], 1.0) for p in range(blk * s, (blk + 1) * s) if x.mask[b, p]]
                for clusters, rotation in zip(sizes, rotations):
                    merged = [[torch.zeros(D, dtype=x.key.dtype), torch.zeros(D, dtype=x.key.dtype), 0.0] for _ in range(clusters)]
                    for kv, vv, count in members:
                        if clusters < 2:
                            c = 0
                        else:
                            u = kv / kv.norm().clamp(min=1e-12) @ rotation[h].to(kv.dtype)
                            c = int(torch.cat([u, -u]).argmax())
                        merged[c][0] = merged[c][0] + kv
                        merged[c][1] = merged[c][1] + vv
                        merged[c][2] += count
                    members = [tuple(m) for m in merged]
                for c, (kv, vv, count) in enumerate(members):
                    j = blk * (s // f) + c
                    if count > 0:
                        keys[b, h, j], values[b, h, j], mask[b, h, j] = kv / count, vv / count, True
    return SparseTokens(keys, values, mask)
