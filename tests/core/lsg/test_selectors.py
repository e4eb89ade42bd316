"""Each built-in selector against its loop-based reference, on odd sizes, with padding."""

import pytest
import torch

from lsgtool import LSGConfig
from lsgtool.core.lsg.reference import reference_selector
from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS, SparseInputs


def _inputs(config, B=2, H=3, blocks=5, D=6, pad=9):
    S = config.block_size
    n = S * blocks
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(B, H, n, D, generator=g, dtype=torch.float64) for _ in range(3))
    mask = torch.ones(B, n, dtype=torch.bool)
    mask[1, n - pad :] = False
    first = torch.randn(B, H, 1, D, generator=g, dtype=torch.float64)
    gen = torch.Generator().manual_seed(config.lsh_seed)
    return SparseInputs(q, k, v, mask, first, config, D**-0.5, gen)


def _sort_rows(t):
    """Sort the rows (last dim = one token) of each (..., width, D) group lexicographically, whole rows kept."""
    for column in reversed(range(t.shape[-1])):  # stable sorts from the last key to the first
        order = t[..., column].argsort(dim=-1, stable=True)
        t = t.gather(-2, order[..., None].expand_as(t))
    return t


def test_sort_rows_keeps_rows_whole():
    rows = torch.tensor([[[3.0, 1.0], [1.0, 9.0], [1.0, 2.0]]])
    assert _sort_rows(rows).tolist() == [[[1.0, 2.0], [1.0, 9.0], [3.0, 1.0]]]


@pytest.mark.parametrize("name", [n for n in BUILTIN_SELECTORS if n != "none"])
@pytest.mark.parametrize("S, sparse_block, f, pre", [(8, 8, 4, 1), (12, 12, 3, 0), (8, 4, 2, 2), (6, 6, 6, 1)])
def test_fast_selector_equals_reference(name, S, sparse_block, f, pre):
    config = LSGConfig(block_size=S, sparse_block_size=sparse_block, sparsity_factor=f, sparsity_type=name,
                       lsh_num_pre_rounds=pre)
    fast = BUILTIN_SELECTORS[name](_inputs(config))
    ref = reference_selector(name, _inputs(config))
    B, H, r, D = ref.key.shape
    assert fast.key.shape == (B, H, r, D) and fast.value.shape == (B, H, r, D)
    mask = fast.mask.expand(B, H, r)
    # Within a selection block the order of reduced tokens is free: compare the blocks' rows sorted as whole rows.
    width = config.selection_block // f if name in ("norm", "lsh") else r
    for got, want in ((fast.key, ref.key), (fast.value, ref.value)):
        got = torch.where(mask[..., None], got, 0).view(B, H, -1, width, D)
        want = torch.where(ref.mask[..., None], want, 0).view(B, H, -1, width, D)
        if name == "norm":
            got, want = _sort_rows(got), _sort_rows(want)
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
    if name != "norm":
        assert torch.equal(mask, ref.mask)
    else:
        assert torch.equal(mask.view(B, H, -1, width).sum(-1), ref.mask.view(B, H, -1, width).sum(-1))


def test_none_selects_nothing():
    assert BUILTIN_SELECTORS["none"](_inputs(LSGConfig(block_size=4, sparsity_factor=2))) is None


def test_stride_heads_take_different_offsets():
    config = LSGConfig(block_size=8, sparsity_factor=4, sparsity_type="stride")
    x = _inputs(config, H=4)
    x.key = torch.arange(x.key.shape[2], dtype=torch.float64).view(1, 1, -1, 1).expand(2, 4, -1, 6)
    picked = BUILTIN_SELECTORS["stride"](x).key[0, :, :3, 0]
    assert picked.tolist() == [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]
