"""Profiled variants: token-mixing layers (and small encoders of them) built from the registries and peers.

``full`` (SDPA), ``lsg-<selector>`` for every registered sparse selector, ``locost-<variant>`` for every
registered SSM variant, and peers from transformers at the same width: ``longformer``, ``bigbird``.
Legend: B batch, L length, E width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from lsgtool.core.errors import UsageError

PEERS = ("longformer", "bigbird")


@dataclass(frozen=True)
class Setup:
    """One measurement's shape: level (attention: mixing only; encoder: pre-norm blocks with FFN)."""

    hidden: int = 768
    heads: int = 12
    layers: int = 1
    level: str = "attention"
    batch: int = 1
    block: int = 128
    factor: int = 4


def available_variants(pm=None) -> list[str]:
    from lsgtool.plugins.manager import get_registry

    selectors = [f"lsg-{name}" for name in get_registry("sparse_selectors", pm)]
    ssms = [f"locost-{name}" for name in get_registry("ssm_variants", pm)]
    return ["full", *selectors, *ssms, *PEERS]


def check_variants(names: list[str], pm=None) -> list[str]:
    known = available_variants(pm)
    for name in names:
        if name not in known:
            raise UsageError(f"unknown variant {name!r}.", f"available: {', '.join(known)}.")
    return names


class _SDPA(nn.Module):
    def __init__(self, setup: Setup):
        super().__init__()
        self.qkv, self.heads = nn.Linear(setup.hidden, 3 * setup.hidden), setup.heads

    def forward(self, x):
        B, L, E = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.heads, E // self.heads).permute(2, 0, 3, 1, 4)  # (B H L D)
        return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, L, E)


class _Peer(nn.Module):
    """Longformer / BigBird self-attention of transformers, called the way their models call them."""

    def __init__(self, name: str, setup: Setup):
        super().__init__()
        self.name = name
        if name == "longformer":
            from transformers import LongformerConfig
            from transformers.models.longformer.modeling_longformer import LongformerSelfAttention

            config = LongformerConfig(hidden_size=setup.hidden, num_attention_heads=setup.heads,
                                      attention_window=[512], attention_probs_dropout_prob=0.0)
            self.layer = LongformerSelfAttention(config, layer_id=0)
        else:
            from transformers import BigBirdConfig
            from transformers.models.big_bird.modeling_big_bird import BigBirdBlockSparseAttention

            config = BigBirdConfig(hidden_size=setup.hidden, num_attention_heads=setup.heads, block_size=64,
                                   num_random_blocks=3, attention_type="block_sparse")
            self.layer = BigBirdBlockSparseAttention(config, seed=0)

    def forward(self, x):
        if self.name == "longformer":
            mask = torch.zeros(x.shape[:2], device=x.device)
            mask[:, 0] = 1  # one global token
            return self.layer(x, attention_mask=mask, is_index_masked=mask < 0, is_index_global_attn=mask > 0,
                              is_global_attn=True)[0]
        from transformers import BigBirdModel

        blocked, band, from_mask, to_mask = BigBirdModel.create_masks_for_block_sparse_attn(
            torch.ones(x.shape[:2], device=x.device), 64)
        return self.layer(x, band_mask=band, from_mask=from_mask, to_mask=to_mask, from_blocked_mask=blocked,
                          to_blocked_mask=blocked)[0]


def mixer(name: str, setup: Setup) -> nn.Module:
    """The token-mixing module of a variant (the part the variants differ in)."""
    if name == "full":
        return _SDPA(setup)
    if name.startswith("lsg-"):
        from lsgtool.core.lsg import LSGConfig, LSGSelfAttention

        config = LSGConfig(block_size=setup.block, sparse_block_size=setup.block, sparsity_factor=setup.factor,
                           sparsity_type=name.removeprefix("lsg-"))
        return LSGSelfAttention(setup.hidden, setup.heads, config)
    if name.startswith("locost-"):
        from lsgtool.core.ssm.locost import S4D, LocostConfig

        return S4D(LocostConfig(d_model=setup.hidden, ssm_variant=name.removeprefix("locost-")))
    if name in PEERS:
        return _Peer(name, setup)
    raise UsageError(f"unknown variant {name!r}.")


class _Block(nn.Module):
    """Pre-norm residual block: x + mix(LN(x)), then x + FFN(LN(x)) (encoder level)."""

    def __init__(self, name: str, setup: Setup):
        super().__init__()
        self.mix, self.norm1, self.norm2 = mixer(name, setup), nn.LayerNorm(setup.hidden), nn.LayerNorm(setup.hidden)
        self.ffn = nn.Sequential(nn.Linear(setup.hidden, 4 * setup.hidden), nn.GELU(), nn.Linear(4 * setup.hidden, setup.hidden))

    def forward(self, x):
        x = x + self.mix(self.norm1(x))
        return x + self.ffn(self.norm2(x))


def build(name: str, setup: Setup) -> nn.Module:
    if setup.level == "attention":
        return mixer(name, setup)
    if setup.level == "encoder":
        return nn.Sequential(*[_Block(name, setup) for _ in range(setup.layers)])
    raise UsageError(f"unknown level {setup.level!r}.", "levels: attention, encoder.")


def step_function(name: str, setup: Setup, length: int, mode: str, device: str, dtype: torch.dtype) -> Callable[[], None]:
    """A callable running one measured step: a forward (inference) or forward + backward + AdamW step (train)."""
    torch.manual_seed(0)
    model = build(name, setup).to(device=device, dtype=dtype)
    x = torch.randn(setup.batch, length, setup.hidden, device=device, dtype=dtype)
    if mode == "inference":
        model.eval()

        def infer():
            with torch.no_grad():
                model(x)

        return infer
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()

    def train():
        model(x).float().square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return train
