"""LSG attention against the dense float64 reference, SDPA, gradients, dtypes and memory."""


import pytest
import torch
import torch.nn.functional as F

from lsgtool import LSGConfig, LSGSelfAttention, lsg_attention
from lsgtool.core.lsg.reference import dense_lsg_attention, reference_selector
from lsgtool.core.lsg.selectors import SparseInputs
from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS
from lsgtool.plugins.manager import make_plugin_manager

# Every registered selector, installed plugins included: each must match the dense reference.
PM = make_plugin_manager()
SELECTORS = sorted(PM.registry("sparse_selectors"))


@pytest.fixture(autouse=True)
def _with_installed_selectors():
    PM.activate()


def _inputs(B, H, L, D, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, L, D, generator=g, dtype=dtype) for _ in range(3)]


def _padded_mask(B, L, pad):
    mask = torch.ones(B, L, dtype=torch.bool)
    if B > 1:
        mask[1, L - pad :] = False
    return mask


def _reference(q, k, v, mask, config, is_causal, selector):
    """Dense reference with reduced tokens from the loop-based selector (or the plugin's own)."""
    G, S = config.num_global_tokens, config.block_size
    n = q.shape[2] - G
    pad = -n % S
    qp, kp, vp = (F.pad(t[:, :, G:], (0, 0, 0, pad)) for t in (q, k, v))
    keep = mask.clone()
    if config.mask_first_token:
        keep[:, G] = False
    keep = F.pad(keep[:, G:], (0, pad), value=False)
    gen = None if config.lsh_seed is None else torch.Generator().manual_seed(config.lsh_seed)
    x = SparseInputs(qp, kp, vp, keep, q[:, :, :1], config, q.shape[-1] ** -0.5, gen)
    if selector in BUILTIN_SELECTORS:
        sparse = reference_selector(selector, x)
    else:  # a plugin's selector: its own reduced tokens, the reference's windows and softmax
        sparse = PM.registry("sparse_selectors")[selector](x)
    return dense_lsg_attention(q, k, v, mask, config=config, is_causal=is_causal, sparse=sparse)


def _assert_close_on_real(out, ref, mask, tol=1e-6):
    real = mask[:, None, :, None].expand_as(out)
    error = (out.double() - ref).abs()[real].max().item()
    assert error <= tol, f"max abs error {error:.3g} > {tol:.3g}"


@pytest.mark.parametrize("is_causal", [False, True], ids=["bidirectional", "causal"])
@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize(
    "S, sparse_block, f, G, L",
    [(8, 8, 4, 2, 2 + 4 * 8 + 3), (4, 4, 2, 1, 1 + 13 * 4 + 3), (8, 4, 2, 0, 7 * 8 + 5), (4, 8, 4, 3, 3 + 16 * 4)],
)
def test_selector_matches_dense_reference(name, is_causal, S, sparse_block, f, G, L):
    config = LSGConfig(block_size=S, sparse_block_size=sparse_block, sparsity_factor=f, sparsity_type=name, num_global_tokens=G)
    q, k, v = _inputs(2, 3, L, 8)
    mask = _padded_mask(2, L, 7)
    out = lsg_attention(q, k, v, mask, config=config, is_causal=is_causal)
    _assert_close_on_real(out, _reference(q, k, v, mask, config, is_causal, name), mask)


@pytest.mark.parametrize("is_causal", [False, True])
def test_mask_first_token_hides_it_as_a_key(is_causal):
    config = LSGConfig(block_size=4, sparse_block_size=4, sparsity_factor=2, sparsity_type="stride", mask_first_token=True)
    q, k, v = _inputs(2, 2, 1 + 9 * 4 + 1, 4)
    mask = _padded_mask(2, q.shape[2], 3)
    out = lsg_attention(q, k, v, mask, config=config, is_causal=is_causal)
    _assert_close_on_real(out, _reference(q, k, v, mask, config, is_causal, "stride"), mask)


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("L", [7, 13, 64])
def test_blocks_covering_everything_equal_sdpa(L, is_causal):
    config = LSGConfig(block_size=64, sparsity_type="none", num_global_tokens=0)
    q, k, v = _inputs(2, 3, L, 16, dtype=torch.float32)
    out = lsg_attention(q, k, v, config=config, is_causal=is_causal)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)


def test_local_only_long_sequence_equals_banded_dense_attention():
    """Independent of the reference module: block-banded boolean mask through plain SDPA."""
    S, L = 8, 8 * 9 + 5
    config = LSGConfig(block_size=S, sparsity_type="none", num_global_tokens=0)
    q, k, v = _inputs(1, 2, L, 8)
    block = torch.arange(L) // S
    allowed = (block[:, None] - block[None, :]).abs() <= 1
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    torch.testing.assert_close(lsg_attention(q, k, v, config=config), expected)


@pytest.mark.parametrize("is_causal", [False, True])
def test_only_causal_attention_is_blind_to_the_future(is_causal):
    config = LSGConfig(block_size=4, sparse_block_size=4, sparsity_factor=2, sparsity_type="pooling", num_global_tokens=1)
    q, k, v = _inputs(1, 2, 1 + 10 * 4, 4)
    out = lsg_attention(q, k, v, config=config, is_causal=is_causal)
    t = 20
    k2, v2 = k.clone(), v.clone()
    k2[:, :, t + 1 :] += 5.0
    v2[:, :, t + 1 :] -= 3.0
    out2 = lsg_attention(q, k2, v2, config=config, is_causal=is_causal)
    past_unchanged = torch.allclose(out[:, :, : t + 1], out2[:, :, : t + 1])
    assert past_unchanged == is_causal  # bidirectional queries up to t see keys after t (local and right sparse)
    assert not torch.allclose(out[:, :, t + 1 :], out2[:, :, t + 1 :])


def test_padding_keys_get_no_weight():
    config = LSGConfig(block_size=4, sparse_block_size=4, sparsity_factor=2, sparsity_type="norm")
    q, k, v = _inputs(1, 2, 1 + 10 * 4, 4)
    mask = torch.ones(1, q.shape[2], dtype=torch.bool)
    mask[:, 30:] = False
    out = lsg_attention(q, k, v, mask, config=config)
    v2 = v.clone()
    v2[:, :, 30:] = 1e6
    k2 = k.clone()
    k2[:, :, 30:] = torch.randn_like(k2[:, :, 30:])
    torch.testing.assert_close(lsg_attention(q, k2, v2, mask, config=config)[:, :, :30], out[:, :, :30])


@pytest.mark.parametrize("name", ["norm", "pooling", "bos_pooling", "lsh", "stride"])
@pytest.mark.parametrize("is_causal", [False, True])
def test_gradcheck(name, is_causal):
    config = LSGConfig(block_size=2, sparse_block_size=2, sparsity_factor=2, sparsity_type=name)
    q, k, v = (t.requires_grad_() for t in _inputs(1, 2, 1 + 7 * 2 + 1, 3))
    mask = torch.ones(1, q.shape[2], dtype=torch.bool)
    mask[:, -1] = False

    def f(q, k, v):
        return lsg_attention(q, k, v, mask, config=config, is_causal=is_causal)[:, :, :-1]

    assert torch.autograd.gradcheck(f, (q, k, v))


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.bfloat16, 3e-2)])
def test_low_precision_runs_close_to_float64(dtype, tol):
    # pooling: no discrete choice, so rounding cannot flip which keys are selected (norm's top-k can)
    config = LSGConfig(block_size=16, sparsity_factor=4, sparsity_type="pooling")
    q, k, v = _inputs(2, 4, 1 + 16 * 6 + 9, 16, dtype=dtype)
    mask = _padded_mask(2, q.shape[2], 11)
    out = lsg_attention(q, k, v, mask, config=config)
    assert out.dtype == dtype
    ref = lsg_attention(*(t.double() for t in (q, k, v)), mask, config=config)
    _assert_close_on_real(out, ref, mask, tol=tol)


@pytest.mark.parametrize("name", SELECTORS)
def test_bfloat16_every_selector_runs_and_trains(name):
    config = LSGConfig(block_size=16, sparsity_factor=4, sparsity_type=name)
    q, k, v = (t.requires_grad_() for t in _inputs(2, 4, 1 + 16 * 6 + 9, 16, dtype=torch.bfloat16))
    out = lsg_attention(q, k, v, _padded_mask(2, q.shape[2], 11), config=config)
    out.float().square().sum().backward()
    assert out.dtype == torch.bfloat16 and torch.isfinite(out).all() and torch.isfinite(k.grad).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_matches_cpu(name, dtype):
    config = LSGConfig(block_size=16, sparse_block_size=16, sparsity_factor=4, sparsity_type=name)
    q, k, v = _inputs(2, 4, 1 + 16 * 6 + 9, 16, dtype=dtype)
    mask = _padded_mask(2, q.shape[2], 11)
    # the CPU result in float64 from the same (rounded) inputs; selection is discrete, so a low-precision
    # norm or hash can legitimately pick other tokens: those selectors are compared in float32 only
    expected = lsg_attention(*(t.double() for t in (q, k, v)), mask, config=config)
    out = lsg_attention(*(t.cuda() for t in (q, k, v)), mask.cuda(), config=config)
    assert out.dtype == dtype and torch.isfinite(out).all()
    if dtype == torch.float32 or name not in ("norm", "lsh"):
        _assert_close_on_real(out.double().cpu(), expected, mask, tol=1e-3 if dtype == torch.float32 else 5e-2)


class _LargestAllocation(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the largest tensor any aten op produces."""

    largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


@pytest.mark.parametrize("is_causal", [False, True])
def test_no_sequence_by_sequence_tensor(is_causal, monkeypatch):
    """Every intermediate stays linear in L: far below L², and the same per token at two lengths."""
    import lsgtool.core.lsg.attention as attention

    monkeypatch.setattr(attention, "CHUNK_BYTES", 2**20)
    config = LSGConfig(block_size=32, sparsity_factor=4, sparsity_type="norm")
    sizes = {}
    for L in (1 + 32 * 64, 1 + 32 * 256):
        q, k, v = _inputs(1, 2, L, 8, dtype=torch.float32)
        with _LargestAllocation() as mode:
            lsg_attention(q, k, v, config=config, is_causal=is_causal)
        sizes[L] = mode.largest
        assert mode.largest < L * L / 8
    small, large = sizes.values()
    assert large <= 4 * small * 1.05  # 4x the length, at most 4x the largest buffer


def test_config_rules_name_what_is_wrong():
    from lsgtool.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"block_size \(130\) must be divisible by sparsity_factor \(4\)"):
        LSGConfig(block_size=130, sparsity_factor=4)
    with pytest.raises(ConfigError, match="unknown sparse selector 'topk'") as info:
        LSGConfig(sparsity_type="topk")
    assert "norm" in info.value.hint
    with pytest.raises(ConfigError, match="sparse_block_size"):
        LSGConfig(block_size=128, sparse_block_size=48)
    with pytest.raises(ConfigError, match="block_size must be a positive integer"):
        LSGConfig(block_size=0)
    assert LSGConfig(sparsity_type="none").has_sparse is False


def test_config_from_official_checkpoint_keys():
    official = {"block_size": 32, "sparse_block_size": 32, "sparsity_factor": 4, "sparsity_type": "lsh",
                "num_global_tokens": 7, "mask_first_token": True, "pool_with_global": True,
                "lsh_num_pre_rounds": 1, "adaptive": True, "pass_global_tokens_to_decoder": True,
                "hidden_size": 768, "model_type": "bert"}
    config = LSGConfig.from_dict(official)
    assert config.to_dict() == {**{k: v for k, v in official.items() if k not in ("hidden_size", "model_type")}, "lsh_seed": 0}


def test_lsh_is_deterministic_for_a_seed_and_varies_across_seeds():
    q, k, v = _inputs(1, 2, 1 + 8 * 8, 8)
    out = [lsg_attention(q, k, v, config=LSGConfig(block_size=8, sparsity_factor=4, sparsity_type="lsh", lsh_seed=s))
           for s in (1, 1, 2)]
    torch.testing.assert_close(out[0], out[1], rtol=0, atol=0)
    assert not torch.allclose(out[0], out[2])


@pytest.mark.parametrize("is_causal", [False, True])
def test_module_is_a_drop_in_self_attention(is_causal):
    torch.manual_seed(0)
    layer = LSGSelfAttention(32, 4, LSGConfig(block_size=8, sparsity_factor=2), is_causal=is_causal).eval()
    x = torch.randn(2, 8 * 5 + 3, 32)
    mask = torch.ones(2, x.shape[1], dtype=torch.long)
    mask[1, -5:] = 0
    y = layer(x, mask)
    assert y.shape == x.shape
    y.sum().backward()
    assert layer.global_embeddings.grad is not None
    # Same computation spelled out: prepend globals, project, LSG, project back, drop globals.
    with torch.no_grad():
        h = torch.cat([layer.global_embeddings.expand(2, -1, -1), x], dim=1)
        q, k, v = layer.qkv(h).view(2, h.shape[1], 3, 4, 8).permute(2, 0, 3, 1, 4)
        m = torch.cat([torch.ones(2, 1, dtype=torch.long), mask], dim=1)
        o = lsg_attention(q, k, v, m, config=layer.config, is_causal=is_causal)
        expected = layer.out(o.transpose(1, 2).reshape(2, h.shape[1], 32))[:, 1:]
    torch.testing.assert_close(y.detach(), expected)


def test_module_without_own_global_tokens_keeps_length():
    layer = LSGSelfAttention(16, 2, LSGConfig(block_size=4, num_global_tokens=2), add_global_tokens=False)
    x = torch.randn(1, 2 + 4 * 6, 16)
    assert layer(x).shape == x.shape and layer.global_embeddings is None
