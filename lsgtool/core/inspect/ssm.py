"""LOCOST's SSM kernels seen from outside (LOCOST §4.1, Fig. 3, App. C): per layer and channel, the causal and
anti-causal kernels, their spectral radius and their effective reach.

Kernels come from the module's own ``forward(L)`` (the SSM-variant contract), so every registered variant,
plugins included, is inspected the same way. The spectral radius max_n |λ_n| is exact for variants that expose
``modes()`` (the S4D family) and otherwise estimated from the kernel's decay.
Legend: c directions (causal, anti-causal), H channels, L length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

REACH_FRACTION = 0.01  # the effective reach ends where |K| stays below 1% of its maximum
DIRECTIONS = ("causal", "anti-causal")


def ssm_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """(name, mixer) of every SSM token mixer in forward order: modules holding a ``kernel`` submodule whose
    forward makes (c, H, L) kernels (LOCOST's ``S4D``, or a plugin's mixer built the same way)."""
    from lsgtool.core.ssm.mixer import S4D

    return [(name, m) for name, m in model.named_modules() if isinstance(m, S4D)]


def effective_reach(kernel: Tensor, fraction: float = REACH_FRACTION) -> Tensor:
    """(..., L) kernels -> (...) the distance past which |K| stays below ``fraction`` of its maximum: 1 + the
    last lag l with |K[l]| >= fraction * max |K| (L when the kernel has not decayed within L)."""
    magnitude = kernel.abs()
    above = magnitude >= fraction * magnitude.amax(-1, keepdim=True)
    lags = torch.arange(kernel.shape[-1], device=kernel.device)
    return torch.where(above, lags, -1).amax(-1) + 1


def spectral_radius(module: nn.Module, kernel: Tensor) -> tuple[Tensor, str]:
    """(H,) max_n |λ_n| per channel and how it was obtained ("modes", or "decay" fitted on the kernel)."""
    if hasattr(module, "modes"):
        with torch.no_grad():
            dtA, _ = module.modes()
        return dtA.real.exp().amax(-1).float().cpu(), "modes"
    return _decay_rate(kernel), "decay"


def _decay_rate(kernel: Tensor) -> Tensor:
    """Geometric decay per lag of the envelope of |K| (both directions): exp of the slope of log max|K| over
    windows, from its peak to where it falls under 1e-6 of it; 1.0 where it does not decay."""
    c, H, L = kernel.shape
    window = max(1, L // 64)
    usable = (L // window) * window
    envelope = kernel[..., :usable].abs().amax(0).view(H, -1, window).amax(-1).double()  # (H w)
    rates = torch.ones(H)
    centres = torch.arange(envelope.shape[1], dtype=torch.float64) * window + window / 2
    for h in range(H):
        e = envelope[h]
        if e.max() <= 0:
            continue
        start = int(e.argmax())
        keep = e[start:] > e.max() * 1e-6
        stop = start + (int(keep.float().argmin()) if not keep.all() else len(keep))
        if stop - start < 2:
            continue
        x, y = centres[start:stop], e[start:stop].log()
        slope = ((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()
        rates[h] = float(min(1.0, math.exp(slope)))
    return rates


def distance_bins(L: int, count: int = 48) -> Tensor:
    """Bin edges over lags 0..L-1, log-spaced after lag 0 (Fig. 3 style): a bin per lag where lags are few."""
    edges = torch.unique(torch.logspace(0, math.log10(max(L, 2)), count).long())
    return torch.cat([torch.zeros(1, dtype=torch.long), edges.clamp(max=L)]).unique()


def binned(kernel: Tensor, edges: Tensor) -> Tensor:
    """(..., L) -> (..., bins): mean |K| over each [edges[i], edges[i+1])."""
    magnitude = kernel.abs()
    sums = torch.cat([magnitude.new_zeros(*magnitude.shape[:-1], 1), magnitude.cumsum(-1)], dim=-1)
    widths = (edges[1:] - edges[:-1]).clamp(min=1).to(magnitude.dtype)
    return (sums[..., edges[1:]] - sums[..., edges[:-1]]) / widths


@dataclass
class KernelStats:
    """One layer's kernels at one length: ``reach`` (c, H) lags, ``radius`` (H,), ``profile`` (c, H, bins)
    mean |K| per distance bin with ``edges``; ``kernel`` (c, H, L) kept only when asked for."""

    name: str
    length: int
    reach: Tensor
    radius: Tensor
    radius_from: str
    edges: Tensor
    profile: Tensor
    kernel: Tensor | None = None

    def summary(self) -> dict:
        row = {"layer": self.name, "length": self.length, "radius_from": self.radius_from,
               "radius_median": round(float(self.radius.median()), 6), "radius_max": round(float(self.radius.max()), 6)}
        for d, direction in enumerate(DIRECTIONS[: self.reach.shape[0]]):
            reach = self.reach[d].float()
            row[f"{direction}_reach_median"] = int(reach.median())
            row[f"{direction}_reach_p90"] = int(torch.quantile(reach, 0.9))
            row[f"{direction}_reach_max"] = int(reach.max())
            row[f"{direction}_channels_at_length"] = int((self.reach[d] >= self.length).sum())
        return row


def kernel_stats(name: str, mixer: nn.Module, length: int, keep_kernel: bool = False, bins: int = 48) -> KernelStats:
    """Kernels of ``mixer`` (an ``S4D``) at ``length``, their reach, spectral radius and binned profile."""
    module = mixer.kernel
    with torch.no_grad():
        kernel = module(length).float().cpu()  # (c H L)
    edges = distance_bins(length, bins)
    radius, how = spectral_radius(module, kernel)
    return KernelStats(name, length, effective_reach(kernel), radius, how, edges, binned(kernel, edges),
                       kernel if keep_kernel else None)
