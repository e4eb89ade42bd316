"""The LOCOST token mixer on its own (no transformers needed): gated bidirectional SSM over a sequence.

``S4D`` reads its sizes from any object with the ``SSMShape`` fields; ``LocostConfig`` is one.
Legend: B batch, L length, E model width, H SSM channels.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from lsgtool.core.ssm.bissm import bissm_fft
from lsgtool.core.ssm.kernels import float32_kept, zero_from


@dataclass(frozen=True)
class SSMShape:
    """The fields of ``LocostConfig`` that the mixer uses (same defaults)."""

    d_model: int = 768
    d_state: int = 256
    num_ssm_heads: int = 1
    bidirectional: bool = True
    gating: bool = True
    ssm_variant: str = "s4d_lin"
    dt_min: float = 1e-3
    dt_max: float = 1e-1


class S4D(nn.Module):
    """Gated bidirectional SSM token mixing: W_o((BiSSM(V) + D V) ⊙ Q), as the authors' ``S4D``."""

    def __init__(self, config: SSMShape):
        super().__init__()
        from lsgtool.core.registry import get_registry

        E = config.d_model
        self.H = E // config.num_ssm_heads
        self.gating = config.gating
        if config.gating:
            self.q_proj = nn.Linear(E, E)
        self.k_proj = nn.Linear(E, E)
        variant = get_registry("ssm_variants").require(config.ssm_variant)
        self.kernel = variant(self.H, config.d_state, channels=2 if config.bidirectional else 1,
                              dt_min=config.dt_min, dt_max=config.dt_max)
        self.D = nn.Parameter(torch.randn(self.H))
        self.output_linear = nn.Linear(E, E)

    def _apply(self, fn, recurse=True):
        """``.to(dtype)``, ``.half()``, ...: as for any module, except that the kernel's parameters stay float32
        (``kernels.float32_kept``; ``from_pretrained(dtype=...)`` keeps them by the models'
        ``_keep_in_fp32_modules_strict``)."""
        if recurse:
            for child in self.children():
                child._apply(float32_kept(fn) if child is self.kernel else fn)
        return super()._apply(fn, recurse=False)

    def mix(self, v: Tensor, channels: slice = slice(None)) -> Tensor:
        """BiSSM of v (B L e) over model channels ``channels`` -> (B L e)."""
        E, L = self.k_proj.out_features, v.shape[1]
        shared = self.H != E  # kernels shared across SSM heads: model channel c uses kernel c mod H
        length = zero_from(self.kernel, slice(None) if shared else channels)
        n = L if length is None else max(1, min(L, length))  # past ``length`` the kernel is zero: not generated
        if not shared:
            kernel, D = self.kernel(n, channels), self.D[channels]
        else:
            repeat = E // self.H
            kernel, D = self.kernel(n).repeat(1, repeat, 1)[:, channels], self.D.repeat(repeat)[channels]
        return bissm_fft(v.transpose(1, 2), kernel, D, None if length is None else n).transpose(1, 2)

    def forward(self, u: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        v = self.k_proj(u)
        if attention_mask is not None:  # padding must not leak into real positions (k_proj has a bias)
            v = v * attention_mask[..., None].to(v.dtype)
        y = self.mix(v)
        if self.gating:
            y = y * self.q_proj(u)
        return self.output_linear(y)
