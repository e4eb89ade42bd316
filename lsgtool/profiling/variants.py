"""Profiled variants: token-mixing layers (and blocks or small encoders of them) from the registries and peers.

``full`` (SDPA), ``lsg-<selector>`` for every registered sparse selector, ``locost-<variant>`` for every
registered SSM variant (``locost`` alone: the default one), and peers from transformers at the same width,
at the settings of their released long-input models: ``longformer`` (window 512), ``bigbird`` (block 64,
3 random blocks), ``longt5`` (transient-global, radius 127, global block 16), ``led`` (window 1024).
Legend: B batch, L length, E width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from lsgtool.core.errors import UsageError

PEERS = ("longformer", "bigbird", "longt5", "led")
LEVELS = ("attention", "layer", "encoder")


@dataclass(frozen=True)
class Setup:
    """One measurement's shape. level: attention (mixing only), layer (one pre-norm block with FFN),
    encoder (``layers`` blocks)."""

    hidden: int = 768
    heads: int = 12
    layers: int = 1
    level: str = "attention"
    batch: int = 1
    block: int = 128
    factor: int = 4


def available_variants() -> list[str]:
    from lsgtool.core.registry import get_registry

    selectors = [f"lsg-{name}" for name in get_registry("sparse_selectors")]
    ssms = [f"locost-{name}" for name in get_registry("ssm_variants")]
    return ["full", *selectors, *ssms, *PEERS]


def check_variants(names: list[str]) -> list[str]:
    """The names with ``locost`` spelled out as the default SSM variant; an unknown name is a usage error."""
    from lsgtool.core.ssm.mixer import SSMShape

    known = available_variants()
    names = [f"locost-{SSMShape().ssm_variant}" if name == "locost" else name for name in names]
    for name in names:
        if name not in known:
            raise UsageError(f"unknown variant {name!r}.", f"available: {', '.join(known)}.")
    if len(set(names)) < len(names):
        raise UsageError(f"variants repeat: {', '.join(names)}.", "name each variant once.")
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
    """A peer's self-attention from transformers, called the way its model calls it.

    Inputs are padded to the multiple the layer needs (the peers' models pad the same way) and the output
    is cut back to the input's length.
    """

    def __init__(self, name: str, setup: Setup):
        super().__init__()
        self.name, self.multiple = name, 1
        if name in ("longformer", "led"):
            window = 512 if name == "longformer" else 1024
            if name == "longformer":
                from transformers import LongformerConfig
                from transformers.models.longformer.modeling_longformer import LongformerSelfAttention as Layer

                config = LongformerConfig(hidden_size=setup.hidden, num_attention_heads=setup.heads,
                                          attention_window=[window], attention_probs_dropout_prob=0.0)
            else:
                from transformers import LEDConfig
                from transformers.models.led.modeling_led import LEDEncoderSelfAttention as Layer

                config = LEDConfig(d_model=setup.hidden, encoder_attention_heads=setup.heads,
                                   attention_window=[window], attention_dropout=0.0)
            self.layer, self.multiple = Layer(config, layer_id=0), window
        elif name == "bigbird":
            from transformers import BigBirdConfig
            from transformers.models.big_bird.modeling_big_bird import BigBirdBlockSparseAttention

            from transformers import BigBirdModel

            config = BigBirdConfig(hidden_size=setup.hidden, num_attention_heads=setup.heads, block_size=64,
                                   num_random_blocks=3, attention_type="block_sparse")
            self.layer, self.multiple = BigBirdBlockSparseAttention(config, seed=0), 64
            self.masks = BigBirdModel.create_masks_for_block_sparse_attn
            self.dense_up_to = (5 + 2 * config.num_random_blocks) * config.block_size  # as BigBirdModel switches
        elif name == "longt5":
            from transformers import LongT5Config
            from transformers.models.longt5.modeling_longt5 import LongT5TransientGlobalAttention

            config = LongT5Config(d_model=setup.hidden, d_kv=setup.hidden // setup.heads, num_heads=setup.heads,
                                  local_radius=127, global_block_size=16, dropout_rate=0.0,
                                  encoder_attention_type="transient-global")
            self.layer = LongT5TransientGlobalAttention(config, has_relative_attention_bias=True)
        else:
            raise UsageError(f"unknown peer {name!r}.", f"peers: {', '.join(PEERS)}.")

    def forward(self, x):
        length = x.shape[1]
        padded = -(-length // self.multiple) * self.multiple
        if padded != length:
            x = F.pad(x, (0, 0, 0, padded - length))
        valid = torch.zeros(x.shape[:2], device=x.device)
        valid[:, :length] = 1
        if self.name in ("longformer", "led"):
            mask = (valid - 1) * 10000.0  # 0 attended, -10000 padding
            mask[:, 0] = 1  # one global token
            out = self.layer(x, attention_mask=mask, is_index_masked=mask < 0, is_index_global_attn=mask > 0,
                             is_global_attn=True)[0]
        elif self.name == "bigbird" and padded <= self.dense_up_to:  # too short for block-sparse: full attention
            B, L, E = x.shape
            q, k, v = (proj(x).view(B, L, self.layer.num_attention_heads, -1).transpose(1, 2)
                       for proj in (self.layer.query, self.layer.key, self.layer.value))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=valid[:, None, None, :] > 0)
            out = out.transpose(1, 2).reshape(B, L, E)
        elif self.name == "bigbird":
            blocked, band, from_mask, to_mask = self.masks(valid, 64)
            out = self.layer(x, band_mask=band, from_mask=from_mask, to_mask=to_mask, from_blocked_mask=blocked,
                             to_blocked_mask=blocked)[0]
        else:
            out = self.layer(x, mask=valid)[0]
        return out[:, :length]


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
        from lsgtool.core.ssm.mixer import S4D, SSMShape

        return S4D(SSMShape(d_model=setup.hidden, ssm_variant=name.removeprefix("locost-")))
    if name in PEERS:
        return _Peer(name, setup)
    raise UsageError(f"unknown variant {name!r}.", "`lsgtool profile --help` lists the variants.")


class _Block(nn.Module):
    """Pre-norm residual block: x + mix(LN(x)), then x + FFN(LN(x))."""

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
    if setup.level in ("layer", "encoder"):
        return nn.Sequential(*[_Block(name, setup) for _ in range(1 if setup.level == "layer" else setup.layers)])
    raise UsageError(f"unknown level {setup.level!r}.", f"levels: {', '.join(LEVELS)}.")


Step = Callable[[], None]


def trainer(model: nn.Module, forward: Callable[[], torch.Tensor], mode: str) -> Step:
    """One measured step: a forward without gradients (inference), or forward + backward + AdamW step (train)."""
    if mode == "inference":
        model.eval()

        def infer():
            with torch.no_grad():
                forward()

        return infer
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()

    def train():
        forward().float().square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return train


def step_function(name: str, setup: Setup, length: int, mode: str, device: str, dtype: torch.dtype) -> tuple[Step, nn.Module]:
    """One measured step of a synthetic variant on a (batch, length, hidden) input, and the module it runs."""
    torch.manual_seed(0)
    model = build(name, setup).to(device=device, dtype=dtype)
    x = torch.randn(setup.batch, length, setup.hidden, device=device, dtype=dtype)
    return trainer(model, lambda: model(x), mode), model
