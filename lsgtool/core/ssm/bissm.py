"""Bidirectional SSM convolution (LOCOST eq. 3) through the FFT, with O(L²) and recurrent references.

y_j = Σ_{l≤j} κ←_{j-l} u_l + Σ_{l≥j} κ→_{l-j} u_l + D u_j. Both kernels go into one length-2L circular
kernel [κ← | 0 | reversed κ→], so a single FFT of size 2L (App. A) computes both halves.
Legend: B batch, H channels, L length.
"""

from __future__ import annotations

import torch
from torch import Tensor


def circular_kernel(kernel: Tensor) -> Tensor:
    """(c H L) kernels -> (H 2L): causal part at [0, L), anti-causal reversed at (L, 2L) and added at 0."""
    c, H, L = kernel.shape
    out = kernel.new_zeros(H, 2 * L)
    out[:, :L] = kernel[0]
    if c == 2:
        out[:, 0] += kernel[1, :, 0]
        out[:, L + 1 :] = kernel[1, :, 1:].flip(-1)
    return out


def bissm_fft(u: Tensor, kernel: Tensor, D: Tensor) -> Tensor:
    """FFT convolution: u (B H L), kernel (c H L) with c = 2 (bidirectional) or 1 (causal), D (H)."""
    L = u.shape[-1]
    work = u.float() if u.dtype in (torch.bfloat16, torch.float16) else u  # FFTs run in fp32 at least
    k_f = torch.fft.rfft(circular_kernel(kernel.to(work.dtype)), n=2 * L)
    y = torch.fft.irfft(torch.fft.rfft(work.contiguous(), n=2 * L) * k_f, n=2 * L)[..., :L]  # MKL needs contiguous rows
    return (y + work * D.to(work.dtype)[:, None]).to(u.dtype)


def bissm_direct(u: Tensor, kernel: Tensor, D: Tensor) -> Tensor:
    """Eq. (3) written out as an O(L²) sum (reference for tests)."""
    B, H, L = u.shape
    j = torch.arange(L)
    lag = j[:, None] - j[None, :]  # (L L): j - l
    past = torch.where(lag >= 0, kernel[0][:, lag.clamp(min=0)], 0)  # (H L L)
    matrix = past
    if kernel.shape[0] == 2:
        matrix = matrix + torch.where(lag <= 0, kernel[1][:, (-lag).clamp(min=0)], 0)
    return torch.einsum("hjl,bhl->bhj", matrix, u) + u * D[:, None]


def causal_recurrence(u: Tensor, dtA: Tensor, C: Tensor) -> Tensor:
    """x_k = λ x_{k-1} + u_k (per mode), y_k = 2 Re(C' x_k): the causal half as a recurrence (reference)."""
    B, H, L = u.shape
    lam = dtA.exp()  # (H N/2)
    x = torch.zeros(B, *lam.shape, dtype=lam.dtype)
    ys = []
    for k in range(L):
        x = lam * x + u[:, :, k, None]
        ys.append(2 * (C * x).sum(-1).real)
    return torch.stack(ys, dim=-1)
