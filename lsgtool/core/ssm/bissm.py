"""Bidirectional SSM convolution (LOCOST eq. 3) through the FFT, with O(L²) and recurrent references.

y_j = Σ_{l≤j} κ←_{j-l} u_l + Σ_{l≥j} κ→_{l-j} u_l + D u_j. Both kernels go into one circular kernel
[κ← | 0 | reversed κ→], so a single FFT computes both halves (App. A). Its size n only has to keep the two
halves from wrapping onto each other: n ≥ L + K - 1 where K is the kernel's length before it has decayed to
zero (``S4DKernel.reach``), so n can be far below the paper's 2L on inputs longer than the kernel's reach, and
it is rounded up to a fast size (``fft_size``). The D term is the kernel's value at lag 0 plus D, so it costs
nothing beside the convolution.
Legend: B batch, H channels, L length, K kernel length, n FFT size.
"""

from __future__ import annotations

import torch
from torch import Tensor


# Past this size a real FFT whose length has many factors of 2 ran ~1.5x slower on the project's CPU (MKL;
# 1,179,648 = 2^17·9: 6.5 ns per point forward + inverse, 1,180,980 = 2^2·3^10·5: 4.0; power-of-two strides
# collide in the caches), and odd lengths ~2x slower at every size (no half-length complex transform).
LARGE_FFT = 1 << 19
MAX_TWOS_LARGE = 7


def fft_size(n: int) -> int:
    """The smallest even 2^a·3^b·5^c ≥ n (the FFT factors into small radices; a real FFT of an even length is a
    complex one of half the length), with a ≤ ``MAX_TWOS_LARGE`` past ``LARGE_FFT``. A length with a large prime
    factor is several times slower: the KJV's 2L = 2·1,076,905 is 2·5·215,381."""
    n, sizes = max(n, 2), []
    five = 1
    while five < 2 * n:
        odd = five  # 3^b·5^c; some 3^b in [n/2, 3n/2) makes 2·3^b a size that is always allowed
        while odd < 2 * n:
            twos = 2
            while odd * twos < n:
                twos *= 2
            if odd * twos <= LARGE_FFT or twos <= 1 << MAX_TWOS_LARGE:
                sizes.append(odd * twos)
            odd *= 3
        five *= 5
    return min(sizes)


def kernel_length(kernel: Tensor) -> int:
    """K: one past the last position where any channel's kernel is non-zero (at least 1)."""
    nonzero = (kernel != 0).flatten(0, -2).any(0).nonzero()
    return int(nonzero[-1]) + 1 if len(nonzero) else 1


def circular_kernel(kernel: Tensor, n: int, D: Tensor | None = None) -> Tensor:
    """(c H K) kernels -> (H n), n ≥ 2K - 1: causal part at [0, K), anti-causal reversed at (n - K, n), both
    sharing position 0, where D (H) is added (u * D is the convolution with D at lag 0)."""
    c, H, K = kernel.shape
    out = kernel.new_empty(H, n)
    out[:, :K] = kernel[0]
    out[:, K : n - K + 1] = 0
    if c == 2:
        out[:, 0] += kernel[1, :, 0]
        if K > 1:
            out[:, n - K + 1 :] = kernel[1, :, 1:].flip(-1)
    else:
        out[:, max(K, n - K + 1) :] = 0
    if D is not None:
        out[:, 0] += D
    return out


def copy_rows(dst: Tensor, src: Tensor, block: int = 1024) -> Tensor:
    """dst[...] = src for (... H L) tensors whose rows are contiguous in ``dst`` but strided in ``src`` (channels of
    a (B L E) tensor): in blocks of positions, which a single strided copy runs ~5x slower than (it walks
    ``dst``'s rows across the whole length for every few source bytes)."""
    if src.stride(-1) == 1:
        return dst.copy_(src)
    for s in range(0, src.shape[-1], block):
        dst[..., s : s + block].copy_(src[..., s : s + block])
    return dst


def bissm_fft(u: Tensor, kernel: Tensor, D: Tensor, length: int | None = None) -> Tensor:
    """FFT convolution: u (B H L), kernel (c H ≤L: zero past its last position) with c = 2 (bidirectional) or 1
    (causal), D (H); ``length``:
    the kernel's K when the caller knows it (else found by scanning the kernel for its last non-zero). At
    inference the result is a view into the FFT's buffer (n ≥ L positions per row)."""
    L = u.shape[-1]
    work = u.float() if u.dtype in (torch.bfloat16, torch.float16) else u  # FFTs run in fp32 at least
    K = max(1, min(L, kernel_length(kernel) if length is None else length))
    n = fft_size(L + K - 1)
    k_f = torch.fft.rfft(circular_kernel(kernel[..., :K].to(work.dtype), n, D.to(work.dtype)), n=n)
    if torch.is_grad_enabled() and any(t.requires_grad for t in (work, k_f)):
        return torch.fft.irfft(torch.fft.rfft(work.contiguous(), n=n) * k_f, n=n)[..., :L].to(u.dtype)
    # inference: the padded input is the output's buffer too, and the product is done in place (each large
    # temporary is fresh memory, paid for in page faults)
    x = work.new_empty(*work.shape[:-1], n)
    copy_rows(x[..., :L], work)
    x[..., L:] = 0
    torch.fft.irfft(torch.fft.rfft(x).mul_(k_f), n=n, out=x)
    return x[..., :L].to(u.dtype)


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
