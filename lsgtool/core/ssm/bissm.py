"""Bidirectional SSM convolution (LOCOST eq. 3) through the FFT, with O(L²) and recurrent references.

y_j = Σ_{l≤j} κ←_{j-l} u_l + Σ_{l≥j} κ→_{l-j} u_l + D u_j. Both kernels go into one circular kernel
[κ← | 0 | reversed κ→], so a single FFT computes both halves (App. A). Its size n only has to keep the two
halves from wrapping onto each other: n ≥ L + K - 1 where K is the kernel's length before it has decayed to
zero (``S4DKernel.reach``), so n can be far below the paper's 2L on inputs longer than the kernel's reach, and
it is rounded up to a 2·3·5-smooth size (an FFT of a length with a large prime factor is several times slower:
2·1,076,905 is 2·5·215,381).
Legend: B batch, H channels, L length, K kernel length, n FFT size.
"""

from __future__ import annotations

import torch
from torch import Tensor


def fft_size(n: int) -> int:
    """The smallest 2^a·3^b·5^c ≥ n (sizes the FFT factors into small radices)."""
    best = 1 << max(0, n - 1).bit_length()
    five = 1
    while five < best:
        three = five
        while three < best:
            size = three
            while size < n:
                size *= 2
            best, three = min(best, size), three * 3
        five *= 5
    return best


def kernel_length(kernel: Tensor) -> int:
    """K: one past the last position where any channel's kernel is non-zero (at least 1)."""
    nonzero = (kernel != 0).flatten(0, -2).any(0).nonzero()
    return int(nonzero[-1]) + 1 if len(nonzero) else 1


def circular_kernel(kernel: Tensor, n: int) -> Tensor:
    """(c H K) kernels -> (H n), n ≥ 2K - 1: causal part at [0, K), anti-causal reversed at (n - K, n), both
    sharing position 0."""
    c, H, K = kernel.shape
    out = kernel.new_zeros(H, n)
    out[:, :K] = kernel[0]
    if c == 2:
        out[:, 0] += kernel[1, :, 0]
        if K > 1:
            out[:, n - K + 1 :] = kernel[1, :, 1:].flip(-1)
    return out


def bissm_fft(u: Tensor, kernel: Tensor, D: Tensor, length: int | None = None) -> Tensor:
    """FFT convolution: u (B H L), kernel (c H ≤L: zero past its last position) with c = 2 (bidirectional) or 1
    (causal), D (H); ``length``:
    the kernel's K when the caller knows it (else found by scanning the kernel for its last non-zero). At
    inference the result is a view into the FFT's buffer (n ≥ L positions per row)."""
    L = u.shape[-1]
    work = u.float() if u.dtype in (torch.bfloat16, torch.float16) else u  # FFTs run in fp32 at least
    K = max(1, min(L, kernel_length(kernel) if length is None else length))
    n = fft_size(L + K - 1)
    k_f = torch.fft.rfft(circular_kernel(kernel[..., :K].to(work.dtype), n), n=n)
    D = D.to(work.dtype)[:, None]
    if torch.is_grad_enabled() and any(t.requires_grad for t in (work, k_f, D)):
        y = torch.fft.irfft(torch.fft.rfft(work.contiguous(), n=n) * k_f, n=n)[..., :L]  # MKL needs contiguous rows
        return (y + work * D).to(u.dtype)
    # inference: the padded input is the output's buffer too, and the product and the D term are done in place
    # (4 large temporaries instead of 9: each is fresh memory, paid for in page faults)
    x = work.new_zeros(*work.shape[:-1], n)
    x[..., :L] = work
    torch.fft.irfft(torch.fft.rfft(x).mul_(k_f), n=n, out=x)
    return x[..., :L].addcmul_(work, D).to(u.dtype)


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
