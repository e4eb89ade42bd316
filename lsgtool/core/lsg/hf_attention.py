"""LSG as a transformers attention backend: one attention function and one mask function named "lsg".

Modules flagged with an ``lsg_config`` attribute (encoder self-attention of a converted model) run
``lsg_attention``; every other module of the model (decoder self-attention, cross-attention) runs dense
SDPA. Cross-attention flagged with ``lsg_key_prefix`` G > 0 reads encoder outputs that start with G global
tokens its padding mask does not know: they are kept. The mask function hands the 2-D padding mask
through unchanged, so no L×L mask is ever built.
Legend: B batch, H heads, Q query length, K key length, D head dim.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lsgtool.core.lsg.attention import lsg_attention

NAME = "lsg"


def _keep_mask(attention_mask, device) -> torch.Tensor | None:
    """The (B, K) keep-mask from whatever the model passed (2-D mask, 4-D additive or boolean mask)."""
    if attention_mask is None:
        return None
    if attention_mask.dim() == 4:  # (B 1 Q K): a key is kept if any query may see it
        keep = attention_mask if attention_mask.dtype == torch.bool else attention_mask > torch.finfo(attention_mask.dtype).min / 2
        return keep.any(dim=2)[:, 0]
    return attention_mask.to(device=device, dtype=torch.bool)


def lsg_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers attention-interface function: returns ((B, Q, H, D) output, None)."""
    B, H, Q, D = query.shape
    K = key.shape[2]
    keep = _keep_mask(attention_mask, query.device)
    config = getattr(module, "lsg_config", None)
    if config is not None and Q == K:
        G = config.num_global_tokens
        if keep is not None and keep.shape[1] == K - G:  # the model's mask does not know the global tokens
            keep = F.pad(keep, (G, 0), value=True)
        out = lsg_attention(query, key, value, keep, config=config, dropout_p=dropout, scale=scaling)
        return out.transpose(1, 2).contiguous(), None
    prefix = getattr(module, "lsg_key_prefix", 0)
    if prefix and keep is not None and keep.shape[1] == K - prefix:
        keep = F.pad(keep, (prefix, 0), value=True)
    allowed = torch.ones(1, 1, Q, K, dtype=torch.bool, device=query.device)
    if keep is not None:
        allowed = allowed & keep[:, None, None, -K:]
    if getattr(module, "is_causal", False) and Q > 1:
        allowed = allowed & torch.ones(Q, K, dtype=torch.bool, device=query.device).tril(K - Q)
    if key.shape[1] != H:  # grouped-query attention
        key, value = (t.repeat_interleave(H // t.shape[1], dim=1) for t in (key, value))
    mask = torch.where(allowed, 0.0, torch.finfo(query.dtype).min).to(query.dtype)
    out = F.scaled_dot_product_attention(query, key, value, mask, dropout, scale=scaling)
    return out.transpose(1, 2).contiguous(), None


def lsg_mask(*args, attention_mask=None, **kwargs):
    """transformers mask-interface function: keep the 2-D padding mask as it is (None when absent). Only
    ``attention_mask`` is read, by name: the sizes are passed under names that changed in transformers 5.x
    (cache_position in 5.0, q_length later)."""
    return attention_mask


def install() -> None:
    """Register the "lsg" attention and mask functions with transformers (idempotent)."""
    from lsgtool.core import compat

    compat.require("attention_backend")
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(NAME, lsg_attention_forward)
    AttentionMaskInterface.register(NAME, lsg_mask)
