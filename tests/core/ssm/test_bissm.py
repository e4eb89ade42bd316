"""SSM kernels and BiSSM: FFT vs direct eq. (3), causal half vs recurrence, chunked vs whole."""

import pytest
import torch

import lsgtool.core.ssm.bissm as bissm
import lsgtool.core.ssm.kernels as kernels
from lsgtool.core.ssm.bissm import bissm_direct, bissm_fft, causal_recurrence, copy_rows, fft_size, kernel_length
from lsgtool.plugins.manager import make_plugin_manager

VARIANTS = sorted(make_plugin_manager().registry("ssm_variants"))


def _kernel(name, H=5, N=8, channels=2, seed=0):
    torch.manual_seed(seed)
    return make_plugin_manager().registry("ssm_variants")[name](H, N, channels=channels).double()


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("L", [3, 17, 64, 489, 1047])
def test_fft_equals_direct_convolution_of_eq3(name, L):
    kernel = _kernel(name)
    u = torch.randn(2, 5, L, dtype=torch.float64)
    D = torch.randn(5, dtype=torch.float64)
    K = kernel(L)
    torch.testing.assert_close(bissm_fft(u, K, D), bissm_direct(u, K, D), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(bissm_fft(u, K[:1], D), bissm_direct(u, K[:1], D), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("L", [3, 17, 100])
def test_causal_half_equals_the_recurrence(name, L):
    kernel = _kernel(name)
    u = torch.randn(2, 5, L, dtype=torch.float64)
    dtA, C = kernel.modes()
    zero = torch.zeros(5, dtype=torch.float64)
    torch.testing.assert_close(causal_recurrence(u, dtA, C[0]), bissm_fft(u, kernel(L)[:1], zero), rtol=1e-9, atol=1e-9)


def test_kernel_matches_the_closed_form_and_chunks_agree(monkeypatch):
    kernel = _kernel("s4d_lin", H=3, N=16)
    L = 1000
    dtA, C = kernel.modes()
    closed = 2 * (C[:, :, :, None] * (dtA[:, :, None] * torch.arange(L)).exp()).sum(2).real
    whole = kernel(L)
    torch.testing.assert_close(whole, closed, rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(kernels, "KERNEL_CHUNK_BYTES", 1)  # one channel at a time
    torch.testing.assert_close(kernel(L), closed, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(kernel(L, slice(1, 3)), closed[:, 1:3], rtol=1e-9, atol=1e-12)


def test_lin_initialisation_follows_the_paper():
    kernel = _kernel("s4d_lin", H=4, N=8)
    dtA, _ = kernel.modes()
    dt = kernel.log_dt.exp()[:, None]
    torch.testing.assert_close(dtA.real / dt, torch.full((4, 4), -0.5, dtype=torch.float64))  # λ_re = -1/2
    torch.testing.assert_close(dtA.imag / dt, (torch.pi * torch.arange(4.0)).double().expand(4, 4))  # λ_im = πn
    assert torch.view_as_complex(kernel.C).dtype == torch.complex128  # complex B and C


def test_kernels_are_reused_only_inside_a_kernel_cache_block_and_within_its_budget():
    kernel = _kernel("s4d_lin")
    with torch.no_grad():
        assert kernel(64) is not kernel(64)  # nothing is kept outside a block: every pass generates its kernel
        with kernels.kernel_cache():
            first = kernel(64)
            assert kernel(64) is first and kernel(32) is not first
            assert kernel(64, slice(0, 2)) is not first  # another channel slice is another kernel
        assert kernel(64) is not first  # the block released it
        size = first.numel() * first.element_size()
        with kernels.kernel_cache(max_bytes=size):
            a = kernel(64)
            kernel(48)  # does not fit beside a: a goes
            assert kernel(64) is not a
    with kernels.kernel_cache():
        assert kernel(64) is not kernel(64)  # kernels that need gradients are never cached


def test_reach_truncates_only_what_has_decayed():
    kernel = _kernel("s4d_lin", H=2, N=4)
    reach = kernel.reach()
    assert 0 < reach < 10**7
    long = kernel(reach + 50)
    assert long[..., reach:].abs().max() == 0 and long[..., reach - 50 : reach].abs().max() < 1e-15


def test_fft_size_is_the_smallest_even_smooth_length_without_long_runs_of_twos_when_large():
    def allowed(m):
        return m % 2 == 0 and _only_2_3_5(m) and (m <= bissm.LARGE_FFT or _twos(m) <= bissm.MAX_TWOS_LARGE)

    for n in [1, 2, 3, 7, 97, 1000, 1047, 2049, 32767, 1_166_735]:
        size = fft_size(n)
        assert size >= n and allowed(size)
        assert not any(allowed(m) for m in range(n, size))
    assert fft_size(32767) == 32768  # small powers of two stay
    assert fft_size(1_166_735) == 1_180_980  # the KJV's L + K - 1: not 1,171,875 (odd) nor 1,179,648 (2^17·9)
    big = fft_size(2 * 1_076_905)  # the KJV's 2L = 2·5·215,381, a prime factor: the slow FFT the paper's 2L gave
    assert allowed(big) and not any(allowed(m) for m in range(2 * 1_076_905, big))


def _twos(n):
    return (n & -n).bit_length() - 1


def _only_2_3_5(n):
    for p in (2, 3, 5):
        while n % p == 0:
            n //= p
    return n == 1


@pytest.mark.parametrize("L", [5, 257, 1031])
@pytest.mark.parametrize("reach", [1, 2, 40])
def test_a_kernel_shorter_than_the_input_convolves_as_the_direct_sum(L, reach):
    """The FFT shrinks to L + K - 1 (not 2L) when the kernel is zero past K: both halves must still not wrap."""
    torch.manual_seed(L + reach)
    u, D = torch.randn(2, 3, L, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    K = torch.randn(2, 3, L, dtype=torch.float64)
    K[..., reach:] = 0
    assert kernel_length(K) == min(reach, L)
    torch.testing.assert_close(bissm_fft(u, K, D), bissm_direct(u, K, D), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(bissm_fft(u, K[:1], D), bissm_direct(u, K[:1], D), rtol=1e-9, atol=1e-9)


def test_float32_kernels_of_fast_decaying_modes_equal_the_closed_form():
    """Decayed modes give subnormal products, which the kernel's matmul skips: the kernel must not change."""
    torch.manual_seed(0)
    kernel = make_plugin_manager().registry("ssm_variants")["s4d_lin"](6, 64, channels=2, dt_min=0.01, dt_max=0.1)
    L = 8000  # the fastest modes (exp(-0.05 l)) pass 1e-38 near l = 1,750: the tables hold subnormal products
    dtA, C = (t.to(torch.complex128) for t in kernel.modes())
    closed = 2 * (C[:, :, :, None] * (dtA[:, :, None] * torch.arange(L)).exp()).sum(2).real
    with torch.no_grad():
        torch.testing.assert_close(kernel(L).double(), closed, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("H", [6, 3])  # one kernel per channel; kernels shared by two SSM heads
def test_the_mixer_convolves_with_a_kernel_shorter_than_the_input_as_the_direct_sum(H):
    """The mixer tells the FFT where S4D kernels have decayed (``reach``) instead of scanning them: the
    convolution must still be eq. (3) over the whole kernel."""
    from lsgtool.core.ssm.kernels import zero_from
    from lsgtool.core.ssm.mixer import S4D, SSMShape

    torch.manual_seed(0)
    mixer = S4D(SSMShape(d_model=6, d_state=8, num_ssm_heads=6 // H, dt_min=0.3, dt_max=0.5)).double()
    L = 700
    assert zero_from(mixer.kernel) < L  # the kernel is zero well before the input ends
    v = torch.randn(2, L, 6, dtype=torch.float64)
    with torch.no_grad():
        kernel = mixer.kernel(L).repeat(1, 6 // H, 1)
        expected = bissm_direct(v.transpose(1, 2), kernel, mixer.D.repeat(6 // H)).transpose(1, 2)
        torch.testing.assert_close(mixer.mix(v), expected, rtol=1e-9, atol=1e-9)
        if H == 6:  # a chunk of channels, as the chunked encoder mixes them
            torch.testing.assert_close(mixer.mix(v[:, :, 2:5], slice(2, 5)), expected[:, :, 2:5], rtol=1e-9, atol=1e-9)


def test_a_variant_without_the_built_in_generation_is_scanned_not_trusted():
    """A subclass whose kernels do not stop at ``reach`` (here: ones everywhere) must convolve over all of them."""
    from lsgtool.core.ssm.kernels import S4DKernel, zero_from
    from lsgtool.core.ssm.mixer import S4D, SSMShape

    class Longer(S4DKernel):
        def generate(self, L, channels=slice(None)):
            return torch.ones(self.channels, len(range(self.H)[channels]), L, dtype=torch.float64)

    class Scaled(S4DKernel):
        def forward(self, L, channels=slice(None)):
            return super().forward(L, channels) + 1

    torch.manual_seed(0)
    assert zero_from(S4DKernel(3, 4, dt_min=0.3, dt_max=0.5)) is not None
    mixer = S4D(SSMShape(d_model=3, d_state=4, dt_min=0.3, dt_max=0.5)).double()
    v = torch.randn(1, 200, 3, dtype=torch.float64)
    for variant in (Longer, Scaled):
        mixer.kernel = variant(3, 4, dt_min=0.3, dt_max=0.5).double()
        assert zero_from(mixer.kernel) is None
        with torch.no_grad():
            expected = bissm_direct(v.transpose(1, 2), mixer.kernel(200), mixer.D).transpose(1, 2)
            torch.testing.assert_close(mixer.mix(v), expected, rtol=1e-9, atol=1e-9)


def test_copy_rows_copies_channels_of_a_sequence_block_by_block():
    v = torch.randn(2, 50, 9)
    dst = torch.empty(2, 4, 60)
    copy_rows(dst[..., :50], v[:, :, 3:7].transpose(1, 2), block=7)  # strided source, 8 blocks (the last short)
    assert torch.equal(dst[..., :50], v[:, :, 3:7].transpose(1, 2))
    assert torch.equal(copy_rows(torch.empty(3, 5), torch.arange(15.0).view(3, 5)), torch.arange(15.0).view(3, 5))
