"""SSM kernel inspection: reach and spectral radius against the closed form of a kernel with known λ; every
registered variant (plugins included) is read through its own forward."""

import math

import pytest
import torch
from torch import nn

from lsgtool.core.inspect.ssm import (_decay_rate, binned, distance_bins, effective_reach, kernel_stats,
                                      spectral_radius, ssm_layers)
from lsgtool.core.ssm.kernels import s4d_real


def one_mode(lam: float, channels: int = 2):
    """A real S4D kernel with a single mode λ (N = 2: one conjugate pair): K[l] = 2 C' λ^l."""
    kernel = s4d_real(1, 2, channels=channels)
    with torch.no_grad():
        kernel.log_dt.fill_(0.0)  # Δ = 1
        kernel.inv_A_real.fill_(math.log(-math.log(lam)))  # A = -exp(inv) = log λ, so exp(ΔA) = λ
    return kernel


@pytest.mark.parametrize("lam", [0.9, 0.99, 0.999])
def test_reach_and_radius_match_the_closed_form(lam):
    kernel = one_mode(lam)
    L = 8192
    with torch.no_grad():
        K = kernel(L)
    closed = math.floor(math.log(0.01) / math.log(lam)) + 1  # last l with λ^l >= 0.01, plus one
    assert effective_reach(K).tolist() == [[closed], [closed]]
    radius, how = spectral_radius(kernel, K)
    assert how == "modes" and radius.item() == pytest.approx(lam, rel=1e-6)


def test_a_variant_without_modes_gets_its_radius_from_the_decay():
    class Plain(nn.Module):  # a plugin variant: only the forward(L, channels) contract
        def __init__(self):
            super().__init__()
            self.inner = one_mode(0.995)

        def forward(self, L, channels=slice(None)):
            return self.inner(L, channels)

    plain = Plain()
    with torch.no_grad():
        K = plain(4096)
    radius, how = spectral_radius(plain, K)
    assert how == "decay" and radius.item() == pytest.approx(0.995, abs=2e-4)
    assert _decay_rate(torch.ones(2, 3, 256)).tolist() == [1.0, 1.0, 1.0]  # no decay: radius 1


def test_a_kernel_that_has_not_decayed_reaches_the_whole_length():
    assert effective_reach(torch.ones(1, 2, 100)).tolist() == [[100, 100]]
    assert effective_reach(torch.tensor([[[1.0, 0.5, 0.0, 0.02, 0.001]]])).tolist() == [[4]]


def test_binned_profile_is_the_mean_magnitude_per_bin():
    edges = distance_bins(1000, 20)
    assert edges[0] == 0 and edges[-1] == 1000 and (edges[1:] > edges[:-1]).all()
    K = -torch.arange(1000, dtype=torch.float)[None]
    profile = binned(K, edges)
    for b in range(len(edges) - 1):
        lo, hi = int(edges[b]), int(edges[b + 1])
        assert profile[0, b].item() == pytest.approx(sum(range(lo, hi)) / (hi - lo))


def test_layers_and_stats_of_a_locost_model_for_every_registered_variant():
    from lsgtool.core.registry import get_registry
    from lsgtool.core.ssm.locost import LocostConfig, LocostEncoderModel

    for variant in get_registry("ssm_variants"):
        config = LocostConfig(vocab_size=50, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4, d_state=4,
                              ssm_variant=variant)
        layers = ssm_layers(LocostEncoderModel(config))
        assert len(layers) == 2
        stats = kernel_stats("layer 0", layers[0][1], 512)
        assert stats.reach.shape == (2, 16) and stats.radius.shape == (16,)
        assert ((stats.reach >= 1) & (stats.reach <= 512)).all() and (stats.radius <= 1).all()
        row = stats.summary()
        assert row["causal_reach_median"] <= row["causal_reach_p90"] <= row["causal_reach_max"] <= 512
