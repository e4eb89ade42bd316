"""LSGSelfAttention: a drop-in multi-head self-attention layer running LSG attention (the paper's LSG layer)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from lsgtool.core.lsg.attention import lsg_attention
from lsgtool.core.lsg.config import LSGConfig


class LSGSelfAttention(nn.Module):
    """Multi-head self-attention with LSG attention, bidirectional or causal.

    With ``add_global_tokens=True`` (default) the layer owns ``num_global_tokens`` learned embeddings,
    prepends them to its input and drops them from its output, so it maps (B, L, E) to (B, L, E) like any
    self-attention. With ``False`` the input must already start with the global tokens (as in converted
    models, whose embeddings prepend them once for all layers).
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        config: LSGConfig | None = None,
        *,
        is_causal: bool = False,
        bias: bool = True,
        dropout: float = 0.0,
        add_global_tokens: bool = True,
    ):
        super().__init__()
        if hidden_size % num_heads:
            raise ValueError(f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads}).")
        self.config = config or LSGConfig()
        self.num_heads, self.head_dim = num_heads, hidden_size // num_heads
        self.is_causal, self.dropout = is_causal, dropout
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size, bias=bias)
        self.out = nn.Linear(hidden_size, hidden_size, bias=bias)
        G = self.config.num_global_tokens
        self.global_embeddings = nn.Parameter(torch.randn(G, hidden_size) * 0.02) if add_global_tokens and G else None

    def forward(self, hidden_states: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        B, L, E = hidden_states.shape
        x, mask = hidden_states, attention_mask
        if self.global_embeddings is not None:
            G = self.global_embeddings.shape[0]
            x = torch.cat([self.global_embeddings.to(x.dtype).expand(B, -1, -1), x], dim=1)
            if mask is not None:
                mask = torch.cat([mask.new_ones(B, G), mask], dim=1)
        q, k, v = self.qkv(x).view(B, x.shape[1], 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)  # (B H L D)
        out = lsg_attention(
            q, k, v, mask, config=self.config, is_causal=self.is_causal, dropout_p=self.dropout if self.training else 0.0
        )
        out = self.out(out.transpose(1, 2).reshape(B, x.shape[1], E))  # (B L E)
        return out[:, x.shape[1] - L :]
