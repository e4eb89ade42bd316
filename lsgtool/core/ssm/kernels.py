"""Diagonal state-space kernels (S4D family) in LOCOST's parametrisation (LOCOST App. E).

λ_{h,n} = exp(Δ_h (λ^Re_{h,n} + i λ^Im_{h,n})), with λ^Re = -exp(inv_A_real) < 0 so every mode decays.
The length-L kernel of channel h is K[l] = 2 Re Σ_n C'_{h,n} λ_{h,n}^l (N/2 conjugate pairs, zero-order
hold: C' = C·B·(exp(ΔA) - 1)/A). Parameter names follow the LOCOST authors' ``SSKernelDiag`` so their
checkpoints load as they are. "Make the kernel" lives here; "apply the kernel" is ``bissm``.
Legend: c kernel channels (2 when bidirectional: causal, anti-causal), H kernel width, N state size, L length.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

import torch
from torch import Tensor, nn

REDUCED = (torch.bfloat16, torch.float16)
KERNEL_CHUNK_BYTES = 32 * 2**20  # temporaries of one group of channels: small enough to stay in cache
NEGLIGIBLE = 1e-20  # |λ|^l below this: the kernel has decayed to nothing a float32 sum can see


class _KernelCache:
    """Kernels generated inside one ``kernel_cache`` block, least recently used dropped past ``max_bytes``."""

    def __init__(self, max_bytes: int):
        self.max_bytes, self.used = max_bytes, 0
        self.entries: OrderedDict[tuple, Tensor] = OrderedDict()

    def get(self, key: tuple) -> Tensor | None:
        if key in self.entries:
            self.entries.move_to_end(key)
        return self.entries.get(key)

    def put(self, key: tuple, kernel: Tensor) -> None:
        size = kernel.numel() * kernel.element_size()
        if size > self.max_bytes:
            return
        self.entries[key] = kernel
        self.used += size
        while self.used > self.max_bytes:
            _, old = self.entries.popitem(last=False)
            self.used -= old.numel() * old.element_size()


_CACHE: ContextVar[_KernelCache | None] = ContextVar("lsgtool_kernel_cache", default=None)


@contextmanager
def kernel_cache(max_bytes: int = 2**30) -> Iterator[None]:
    """Inside this block each SSM kernel (per module, length, channels, device, dtype) is generated once.

    For repeated inference at equal lengths (hierarchical summaries, benchmarks of the convolution alone)
    with parameters that do not change inside the block; kernels that need gradients are never cached. The
    cache holds at most ``max_bytes`` (least recently used dropped) and is released when the block ends.
    Outside such a block nothing is kept: every call generates its kernel, as a single pass does.
    """
    token = _CACHE.set(_KernelCache(max_bytes))
    try:
        yield
    finally:
        _CACHE.reset(token)


def float32_kept(fn):
    """``fn`` (what ``module.to(...)``, ``.half()``, ``.bfloat16()`` apply to each tensor) with float32 tensors kept
    float32 where ``fn`` would make them bfloat16 or float16 (moved to its device all the same). A kernel's
    parameters are exponentiated over every position (λ^l = exp(l·ΔA)): bfloat16's 8-bit mantissa in Δ or A
    shifts the decay of every mode, and a bfloat16 LOCOST's encoder output was 50% off float32's (relative error,
    4-layer model, 4K tokens; 1.8% with the kernels' parameters kept float32). They are a few thousand values per
    layer, so keeping them costs nothing; the kernels they generate are float32 either way."""

    def kept(t: Tensor) -> Tensor:
        out = fn(t)
        return t.to(out.device) if t.dtype == torch.float32 and out.dtype in REDUCED else out

    return kept


def lin_imag(N2: int) -> Tensor:
    """S4D-Lin: λ^Im_n = π n."""
    return math.pi * torch.arange(N2, dtype=torch.float)


def inv_imag(N2: int) -> Tensor:
    """S4D-Inv: λ^Im_n = N/π (N/(2n+1) - 1)."""
    N = 2 * N2
    return N / math.pi * (N / (1 + 2 * torch.arange(N2, dtype=torch.float)) - 1)


def exp_powers(x: Tensor, count: int) -> Tensor:
    """exp(x·k) for k = 0..count-1, by doubling: log2(count) exponentials, error ~log2(count)·eps."""
    out = torch.ones(*x.shape, 1, dtype=x.dtype, device=x.device)
    step = 1
    while out.shape[-1] < count:
        out = torch.cat([out, out * (x * step).exp()[..., None]], dim=-1)
        step *= 2
    return out[..., :count]


def split(L: int) -> tuple[int, int]:
    """(A, T): positions l = aT + b, a < A, b < T; T ≈ 2√L balances the two power tables against the matmul."""
    T = 2 << max(4, math.ceil(math.log2(max(1.0, math.sqrt(L)))))
    return math.ceil(L / T), T


def vandermonde(dtA: Tensor, C: Tensor, L: int) -> Tensor:
    """K[c, h, l] = 2 Re Σ_n C[c,h,n] exp(dtA[h,n] l) for l < L, as one batched real matmul.

    Positions split as l = aT + b: exp(dtA l) = exp(dtA aT) · exp(dtA b), so K[c, h, aT + b] =
    2 Re Σ_n (C exp(dtA aT))[c,h,a,n] · exp(dtA b)[h,n,b], a (cA × N/2) @ (N/2 × T) product per channel with
    only O(H·N·√L) exponentials. Only the real part is needed: Re(XY) = [Re X, -Im X] @ [Re Y; Im Y], half
    the multiplications of a complex matmul.
    """
    c, h, N2 = C.shape
    A, T = split(L)
    powers = exp_powers(dtA, T)  # (h N/2 T)
    coef = C.transpose(0, 1)[:, :, None, :] * exp_powers(dtA * T, A).transpose(-1, -2)[:, None]  # (h c A N/2)
    left = torch.cat([coef.real, -coef.imag], dim=-1).view(h, c * A, 2 * N2)
    right = torch.cat([powers.real, powers.imag], dim=-2)  # (h N T)
    # Factors below √(smallest normal) are zeroed: their products would be subnormal floats, which x86 multiplies
    # ~10x slower (decayed modes are full of them; locost-base's kernels at 131K tokens: 0.83 -> 0.25 s per 64
    # channels), and such a term (< 1e-19 in float32) changes no kernel value the dtype can hold.
    tiny = torch.finfo(left.dtype).tiny ** 0.5
    left, right = left.masked_fill(left.abs() < tiny, 0), right.masked_fill(right.abs() < tiny, 0)
    K = torch.bmm(left, right)  # (h cA T)
    return 2 * K.view(h, c, A * T).transpose(0, 1)[:, :, :L]


class S4DKernel(nn.Module):
    """Generates the (c, H, L) convolution kernels of H diagonal SSMs with N/2 complex modes each."""

    def __init__(self, H: int, N: int, channels: int = 2, imag_init: str = "lin", real: bool = False,
                 dt_min: float = 1e-3, dt_max: float = 1e-1):
        super().__init__()
        N2 = N // 2
        self.H, self.N, self.channels, self.real = H, N, channels, real
        imag = {"lin": lin_imag, "inv": inv_imag}[imag_init](N2)
        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        self.log_dt = nn.Parameter(log_dt)
        self.inv_A_real = nn.Parameter(torch.full((H, N2), math.log(0.5)))  # λ^Re = -1/2
        self.A_imag = nn.Parameter(torch.zeros(H, N2) if real else imag.expand(H, N2).clone())
        self.B = nn.Parameter(torch.view_as_real(torch.ones(H, N2, dtype=torch.cfloat)))
        self.C = nn.Parameter(torch.view_as_real(torch.randn(channels, H, N2, dtype=torch.cfloat)))

    def modes(self, channels: slice = slice(None)) -> tuple[Tensor, Tensor]:
        """(ΔA (H N/2), C' (c H N/2)) for a slice of channels: everything the kernel needs (fp32 at least)."""
        full = lambda t: t.float() if t.dtype in REDUCED else t  # noqa: E731 (a kernel loaded in bfloat16 as it is)
        dt = full(self.log_dt[channels]).exp()
        A_imag = torch.zeros_like(full(self.A_imag[channels])) if self.real else full(self.A_imag[channels])
        A = torch.complex(-full(self.inv_A_real[channels]).exp(), A_imag)
        dtA = A * dt[:, None]
        C = torch.view_as_complex(full(self.C[:, channels]).contiguous()) * torch.view_as_complex(full(self.B[channels]).contiguous())
        return dtA, C * (dtA.exp() - 1.0) / A

    def reach(self, channels: slice = slice(None)) -> int:
        """Length after which every mode has decayed below NEGLIGIBLE (the kernel is zero from there on)."""
        with torch.no_grad():
            dtA, _ = self.modes(channels)
            slowest = dtA.real.max().item()
        return int(math.log(NEGLIGIBLE) / slowest) + 1 if slowest < 0 else 2**62

    def forward(self, L: int, channels: slice = slice(None)) -> Tensor:
        """The (c, h, L) kernels (reused inside a ``kernel_cache`` block)."""
        cache = _CACHE.get()
        if cache is not None and not (torch.is_grad_enabled() and self.log_dt.requires_grad):
            key = (self, L, channels.start, channels.stop, self.log_dt.device, self.log_dt.dtype)
            kernel = cache.get(key)
            if kernel is None:
                kernel = self.generate(L, channels)
                cache.put(key, kernel)
            return kernel
        return self.generate(L, channels)

    def generate(self, L: int, channels: slice = slice(None)) -> Tensor:
        """Compute the (c, h, L) kernels, in groups of channels, zero where every mode has decayed."""
        dtA, C = self.modes(channels)
        out = dtA.real.new_zeros(self.channels, dtA.shape[0], L)
        length = min(L, self.reach(channels))
        A, T = split(max(length, 1))
        per_channel = 32 * (dtA.shape[1] * (self.channels * A + T)) + 4 * self.channels * A * T
        group = max(1, KERNEL_CHUNK_BYTES // per_channel)
        for h in range(0, dtA.shape[0], group):
            out[:, h : h + group, :length] = vandermonde(dtA[h : h + group], C[:, h : h + group], length)
        return out


def zero_from(module: nn.Module, channels: slice = slice(None)) -> int | None:
    """The length past which ``module``'s kernels are zero when it is known without looking at them: an
    ``S4DKernel`` generating and returning them as built in (``reach``); None for any other module, subclasses
    that change ``generate`` or ``forward`` included (their kernels are scanned)."""
    if isinstance(module, S4DKernel) and (type(module).generate, type(module).forward) == (S4DKernel.generate,
                                                                                           S4DKernel.forward):
        return module.reach(channels)
    return None


def s4d_lin(H: int, N: int, channels: int = 2, **options) -> S4DKernel:
    return S4DKernel(H, N, channels, imag_init="lin", **options)


def s4d_inv(H: int, N: int, channels: int = 2, **options) -> S4DKernel:
    return S4DKernel(H, N, channels, imag_init="inv", **options)


def s4d_real(H: int, N: int, channels: int = 2, **options) -> S4DKernel:
    """Real diagonal modes (a multi-head EMA): no oscillation, only decay."""
    return S4DKernel(H, N, channels, real=True, **options)


def check_variant(variant) -> str | None:
    """The SSM-variant hook's contract, checked on a tiny instance; None when it holds, else what breaks it.

    ``variant(H, N, channels=2, dt_min=, dt_max=)`` builds an ``nn.Module`` whose ``forward(L, channels=slice)``
    returns the real (channels, len(range(H)[channels]), L) kernels.
    """
    H, N, L = 4, 4, 8
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)  # the check may run inside a model's construction (meta device, bf16)
    try:  # on its own random stream: a seeded model built first in a process gets the weights it gets later
        with torch.device("cpu"), torch.random.fork_rng(devices=[]):
            return _check_instance(variant, H, N, L)
    finally:
        torch.set_default_dtype(previous)


def _check_instance(variant, H: int, N: int, L: int) -> str | None:
    try:
        module = variant(H, N, channels=2, dt_min=1e-3, dt_max=1e-1)
    except Exception as exc:
        return f"variant(H, N, channels=2, dt_min=, dt_max=) raised {type(exc).__name__}: {exc}"
    if not isinstance(module, nn.Module):
        return f"variant(...) returned {type(module).__name__}, not an nn.Module"
    with torch.no_grad():
        for channels, width in ((slice(None), H), (slice(1, 3), 2)):
            try:
                kernel = module(L, channels=channels)
            except Exception as exc:
                return f"its forward(L, channels=...) raised {type(exc).__name__}: {exc}"
            shape = tuple(kernel.shape) if isinstance(kernel, Tensor) else type(kernel).__name__
            if shape != (2, width, L):
                return f"forward({L}, channels={channels}) returned {shape}, expected a tensor of shape {(2, width, L)}"
    return None


BUILTIN_VARIANTS = {"s4d_lin": s4d_lin, "s4d_inv": s4d_inv, "s4d_real": s4d_real}
